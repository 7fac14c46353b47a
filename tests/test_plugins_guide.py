"""docs/plugins.md as a plugin author follows it: the guide's plugin and its ``pyproject.toml`` installed
with pip, then the guide's tests run by pytest with that plugin on the path (issue 40 item 18)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")


def section(heading: str) -> str:
    """The guide's text under ``## heading``, up to the next section."""
    start = GUIDE.index(f"\n## {heading}\n")
    end = GUIDE.find("\n## ", start + 1)
    return GUIDE[start : end if end != -1 else len(GUIDE)]


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def guide_plugin() -> tuple[str, str]:
    """The plugin module and the ``pyproject.toml`` of "The shortest plugin"."""
    shortest = section("The shortest plugin")
    [module] = [code for code in code_blocks(shortest, "python") if code.startswith("# factcheck_glossary.py")]
    [pyproject] = [code for code in code_blocks(shortest, "toml") if "[project.entry-points.factcheck]" in code]
    return module, pyproject


def guide_tests() -> list[str]:
    """The code blocks of "Testing your plugin", each a test file."""
    blocks = code_blocks(section("Testing your plugin"), "python")
    assert blocks and blocks[0].startswith("# test_glossary.py")
    return blocks


def install_and_test(
    tmp_path: Path, module: str, pyproject: str, strict: bool = True
) -> subprocess.CompletedProcess[str]:
    """pip-install the plugin into a folder of its own, then run the guide's tests with it on the path.
    When ``strict``, any PluginWarning (a registration refused as a duplicate) fails the run."""
    source, site, tests = tmp_path / "factcheck-glossary", tmp_path / "site", tmp_path / "tests"
    for folder in (source, tests):
        folder.mkdir()
    (source / "factcheck_glossary.py").write_text(module, encoding="utf-8")
    (source / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"]
    pip.append("--disable-pip-version-check")  # nothing reaches the internet: the plugin is built from here
    subprocess.run([*pip, "--target", str(site), str(source)], check=True, capture_output=True, timeout=300)
    for number, code in enumerate(guide_tests()):
        (tests / f"test_guide_{number}.py").write_text(code, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "FACTCHECK_LOAD_PLUGINS"}  # the author's plugins load
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    env["FACTCHECK_CACHE_DIR"] = str(tmp_path / "cache")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-W", "error::factcheck.registry.PluginWarning"] if strict else []
    return subprocess.run([*command, str(tests)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


def test_the_guides_tests_pass_on_the_guides_plugin_installed(tmp_path: Path) -> None:
    result = install_and_test(tmp_path, *guide_plugin())
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b4 passed\b", result.stdout), result.stdout
    assert "PluginWarning" not in result.stdout + result.stderr


REGISTER = "    register(GlossarySource())\n"
ENTRY_POINT = 'glossary = "factcheck_glossary"'


@pytest.mark.parametrize(
    ("what", "in_pyproject", "old", "new", "says"),
    [
        ("registers its source twice", False, REGISTER, REGISTER * 2, "already registered by glossary"),
        ("names its entry point otherwise", True, ENTRY_POINT, ENTRY_POINT.replace("glossary =", "glossy ="), "[] =="),
    ],
)
def test_the_guides_registration_test_fails_on_a_plugin_that(
    tmp_path: Path, what: str, in_pyproject: bool, old: str, new: str, says: str
) -> None:
    module, pyproject = guide_plugin()
    assert old in (pyproject if in_pyproject else module)
    if in_pyproject:
        pyproject = pyproject.replace(old, new)
    else:
        module = module.replace(old, new)
    result = install_and_test(tmp_path, module, pyproject, strict=False)  # as the author runs them: the test alone
    assert result.returncode == 1, what
    assert "1 failed, 3 passed" in result.stdout, result.stdout
    assert "FAILED tests/test_guide_0.py::test_installed_once_through_its_entry_point" in result.stdout
    assert says in result.stdout, result.stdout
