"""The example third-party plugin under examples/: installed for real, then seen by the CLI."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "factcheck-example-plugin"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """pip-install the example into a private folder; the environment that puts it on the path."""
    target = tmp_path_factory.mktemp("site")
    source = tmp_path_factory.mktemp("src") / EXAMPLE.name
    shutil.copytree(EXAMPLE, source)  # building writes build/ and *.egg-info next to the sources
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    env = {k: v for k, v in os.environ.items() if k != "FACTCHECK_LOAD_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), env.get("PYTHONPATH")]))
    return env


def factcheck(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "factcheck", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_installed_example_plugin_is_listed(installed: dict[str, str]) -> None:
    result = factcheck(installed, "plugins")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [
        {
            "name": "example",
            "version": "0.1.0",
            "distribution": "factcheck-example-plugin",
            "builtin": False,
            "registered": {"sources": ["glossary"], "scorers": ["cautious"]},
        }
    ]


def test_example_source_is_usable_with_source_flag(installed: dict[str, str]) -> None:
    result = factcheck(
        installed,
        "check",
        "The Eiffel Tower is in Paris and was completed in 1889.",
        "--source",
        "glossary",
        "--scorer",
        "cautious",
        "--format",
        "json",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["scorer"] == "cautious"
    glossary = next(j for j in data["claims"][0]["judgments"] if j["agent"] == "glossary")
    assert glossary["factuality"] is True
    assert glossary["evidence"][0]["title"] == "Eiffel Tower"


def test_disabling_the_example_plugin(installed: dict[str, str]) -> None:
    result = factcheck({**installed, "FACTCHECK_DISABLED_PLUGINS": "example"}, "plugins")
    assert result.returncode == 0 and json.loads(result.stdout) == []
