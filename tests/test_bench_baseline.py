"""bench/baseline.py (an older commit's missing requirements, installed beside this interpreter's) and the
SciFact mode of bench/batch.py, offline: pip only ever sees a wheel made here."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def load(name: str) -> ModuleType:
    """A module of bench/ (which is no package: its scripts import each other by name)."""
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def project(folder: Path, dependencies: list[str], extras: dict[str, list[str]] | None = None) -> Path:
    """A tree whose pyproject.toml asks for ``dependencies`` (and ``extras``)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["[project]", 'name = "old"', f"dependencies = {json.dumps(dependencies)}"]
    if extras:
        lines += ["[project.optional-dependencies]", *(f"{k} = {json.dumps(v)}" for k, v in extras.items())]
    (folder / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def wheel(folder: Path, name: str, module: str, body: str) -> Path:
    """A pure-Python wheel of distribution ``name`` 1.0 holding ``module``.py: pip installs it offline."""
    dist = f"{name.replace('-', '_')}-1.0"
    files = {
        f"{module}.py": body,
        f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
        f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{dist}.dist-info/RECORD"] = "\n".join([*record, f"{dist}.dist-info/RECORD,,"]) + "\n"
    made = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(made, "w") as archive:
        for name_in, text in files.items():
            archive.writestr(name_in, text)
    return made


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pip reads no index, only the wheels in the returned folder; the overlays go under tmp_path."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    return wheels


def test_unmet_names_the_missing_the_too_old_and_skips_markers_that_do_not_apply(tmp_path: Path) -> None:
    baseline = load("baseline")
    code = project(
        tmp_path / "old",
        ["pytest>=7", "surely-absent-dist-4af1622>=2.4", "pytest>=999", 'absent-elsewhere; python_version < "3"'],
        extras={"server": ["another-absent-dist"], "eval": ["third-absent-dist"]},
    )
    wanted = baseline.requirements(code, extras=["server"])
    assert "another-absent-dist" in wanted and "third-absent-dist" not in wanted
    assert baseline.unmet(wanted) == ["surely-absent-dist-4af1622>=2.4", "pytest>=999", "another-absent-dist"]
    assert baseline.requirements(tmp_path / "no-pyproject") == []


def test_a_tree_needing_nothing_new_runs_with_this_interpreter(offline: Path, tmp_path: Path) -> None:
    baseline = load("baseline")
    assert baseline.python_for(project(tmp_path / "old", ["pytest>=7", "pluggy"])) == sys.executable
    assert not (tmp_path / "cache").exists()


def test_missing_requirements_go_into_an_overlay_that_sees_everything_installed_here(
    offline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = load("baseline")
    wheel(offline, "gone-dependency", "gone_dependency", "ANSWER = 42\n")
    code = project(tmp_path / "old", ["pytest>=7", "gone-dependency>=1"])
    python = baseline.python_for(code)
    assert python != sys.executable
    assert Path(python).parent.parent.parent == tmp_path / "cache" / "factcheck" / "bench"
    assert "installed gone-dependency>=1" in capsys.readouterr().err
    # The old code's missing package and this interpreter's own packages, in one process.
    seen = subprocess.run(
        [python, "-c", "import gone_dependency, pytest, pluggy; print(gone_dependency.ANSWER)"],
        capture_output=True,
        text=True,
    )
    assert seen.returncode == 0, seen.stderr
    assert seen.stdout.strip() == "42"
    # The next run reuses it: no pip, even with the wheel gone.
    (offline / "gone_dependency-1.0-py3-none-any.whl").unlink()
    assert baseline.python_for(code) == python
    assert "from the overlay" in capsys.readouterr().err


def test_a_requirement_pip_cannot_find_stops_with_its_name(offline: Path, tmp_path: Path) -> None:
    baseline = load("baseline")
    code = project(tmp_path / "old", ["never-published-dist-xyz>=1"])
    with pytest.raises(SystemExit) as stopped:
        baseline.python_for(code)
    assert "cannot install never-published-dist-xyz>=1 for the baseline" in str(stopped.value)


def test_scifact_input_is_one_document_per_dev_claim(tmp_path: Path) -> None:
    batch = load("batch")
    (tmp_path / "scifact").mkdir()
    claims = [{"id": n, "claim": f"Claim number {n}.", "label": "SUPPORT"} for n in (1, 3, 5)]
    (tmp_path / "scifact" / "claims_dev.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims))
    out = tmp_path / "in.jsonl"
    assert batch.scifact_input(tmp_path, 2, out) == 2
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows == [{"id": "scifact-1", "text": "Claim number 1."}, {"id": "scifact-3", "text": "Claim number 3."}]
    with pytest.raises(SystemExit, match="no SciFact dev claims"):
        batch.scifact_input(tmp_path / "elsewhere", None, out)


def test_scifact_table_sets_the_two_codes_side_by_side_and_counts_differing_labels() -> None:
    batch = load("batch")

    def run(code: str, concurrency: int, seconds: float, cpu: float, labels: dict[str, str]) -> object:
        return batch.CliRun(code, concurrency, 4, seconds, cpu, 1.0, 0.8, False, labels, 0)

    same, moved = {"a": "TRUE", "b": "FALSE", "c": "TRUE", "d": "UNVERIFIED"}, {"a": "TRUE", "b": "TRUE"}
    runs = [
        run("today", 1, 4.0, 2.0, same),
        run("4af1622", 1, 2.0, 1.0, {**same, **moved}),
        run("today", 8, 2.0, 2.0, same),
        run("4af1622", 8, 2.0, 2.0, same),
    ]
    text = batch.scifact_table({"ref": "4af1622", "runs": runs})
    assert "| 1 | 4 | 4.00 | 1.00 | 500 | 2.00 | 2.00 | 250 | 0.50 | 2.00 |" in text
    assert "| 8 | 4 | 2.00 | 2.00 | 500 | 2.00 | 2.00 | 500 | 1.00 | 1.00 |" in text
    assert "C = 1: the two codes' labels differ on 1 of 4 claims" in text
    assert "C = 8: the two codes' labels differ on 0 of 4 claims" in text


def test_ci_prints_both_short_forms_after_the_linters_and_never_fails_on_them() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    heading = 'echo "== speed, side by side with 4af1622 (printed, never asserted) =="'
    assert ci.index("\nmypy\n") < ci.index(heading)
    step = ci[ci.index(heading) :]
    docs = (ROOT / "docs" / "batch.md").read_text(encoding="utf-8")
    commands = [
        "python bench/server_load.py --clients 1,50 --short --stream 2 --stream-repeats 2 --baseline 4af1622",
        "python bench/batch.py --mode scifact --limit 12 --concurrency 1,8",
    ]
    for command in commands:
        # Run under a timeout, a failure only echoed; the same command a reader finds in docs/batch.md.
        line = next(line for line in step.splitlines() if command in line)
        following = step.splitlines()[step.splitlines().index(line) + 1]
        assert line.startswith("timeout ") and following.lstrip().startswith("|| echo ")
        assert command in docs


def test_the_profile_gives_each_sample_to_its_innermost_stage_and_drops_waiting_threads(tmp_path: Path) -> None:
    stages = load("profile_stages")
    raw = tmp_path / "raw.txt"
    lines = [
        # a sentence embedded while the verifier reads: embed, not verify
        "run (factcheck/pipeline/run.py:10);assess (factcheck/verifiers/nli.py:5);"
        "encode (factcheck/embed.py:9);Session.run (onnxruntime/capi/x.py:1) 30",
        "run (factcheck/pipeline/run.py:10);probabilities (factcheck/verifiers/nli.py:5);"
        "Session.run (onnxruntime/capi/x.py:1) 50",
        "main (x.py:1);_find_and_load (<frozen importlib._bootstrap>:1);<module> (spacy/__init__.py:1) 15",
        "Thread.run (threading.py:982);_worker (concurrent/futures/thread.py:81) 400",  # a worker waiting
        "run (factcheck/server/app.py:3);dumps (json/encoder.py:1) 5",
    ]
    raw.write_text("\n".join(lines) + "\n", encoding="utf-8")
    profile = stages.Profile.read(raw, rate=100)
    assert profile.samples == 100  # the waiting worker's 400 are not work
    assert dict(profile.stages) == {"embed": 30, "verify": 50, "start-up": 15, "serialise": 5}
    assert profile.own["Session.run (onnxruntime/capi/x.py)"] == 80
    run = stages.Run(profile, count=10, cpu_s=1.5)
    table = stages.table({"current": run, "old": stages.Run(profile, count=10, cpu_s=1.0)}, "ms/claim", 1e3, 3)
    assert "| verify | 50.0 | 50.0 |" in table and "current / old: 1.50x the measured CPU a claim" in table
