"""`factcheck eval` end to end: the paper's rows replayed, and the offline default checked."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from factcheck.cli import cli


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def rows(out: Path) -> dict[tuple[str, str], dict]:
    report = json.loads((out / "report.json").read_text())
    return {(r["scorer"], r["labels"]): r for r in report["rows"]}


@pytest.fixture
def authors(shared_data: Path, tmp_path: Path) -> Path:
    run("import-mafc", str(tmp_path / "authors"), "--data-dir", str(shared_data))
    return tmp_path / "authors"


def test_authors_binary_judgments_replay_the_paper_rows(shared_data: Path, authors: Path, tmp_path: Path) -> None:
    out = tmp_path / "binary"
    printed = run(
        "eval",
        "scifact-binary",
        "--judgments",
        str(authors / "scifact-binary.jsonl"),
        "--data-dir",
        str(shared_data),
        "--out",
        str(out),
    )
    assert "0.750" in printed and "0.739" in printed and "0.638" in printed
    r = rows(out)
    assert round(r[("mafc", "threshold")]["accuracy"], 3) == 0.750
    assert round(r[("mafc:bounds=reference", "threshold")]["accuracy"], 3) == 0.750
    assert round(r[("majority", "threshold")]["accuracy"], 3) == 0.739
    assert round(r[("average:remap=false", "threshold")]["accuracy"], 3) == 0.638
    low, high = r[("mafc", "threshold")]["accuracy_ci"]
    assert low < 0.750 < high
    report = (out / "report.md").read_text()
    assert "| mafc:bounds=reference | threshold | 0.750" in report and "0.790 |" in report  # paper beside ours
    assert {p.name for p in out.glob("*.png")} == {"confusion.png", "reliability.png", "histograms.png"}


def test_authors_mixed_judgments_give_0_970(shared_data: Path, authors: Path, tmp_path: Path) -> None:
    out = tmp_path / "mixed"
    run(
        "eval",
        "scifact-mixed",
        "--judgments",
        str(authors / "scifact-mixed.jsonl"),
        "--data-dir",
        str(shared_data),
        "--out",
        str(out),
        "--labels",
        "threshold,compose",
    )
    r = rows(out)
    assert round(r[("mafc:bounds=reference", "threshold")]["accuracy"], 3) == 0.970
    assert r[("mafc", "compose")]["confusion"]["rows"] == ["TRUE", "PARTLY TRUE", "FALSE"]
    assert r[("mafc", "threshold")]["ece"] is not None  # claim-level gold from the components


def offline(data: Path, out: Path, *args: str) -> list[str]:
    """``factcheck eval scifact-binary`` on the offline default, into ``out``."""
    return ["eval", "scifact-binary", "--data-dir", str(data), "--out", str(out), *args]


def test_offline_default_runs_end_to_end_and_resumes(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "offline"
    run(*offline(shared_data, out, "--limit", "12", "--scorers", "mafc"))
    judgments = out / "judgments.jsonl"
    assert len(judgments.read_text().splitlines()) == 12
    report = json.loads((out / "report.json").read_text())
    assert report["texts"] == 12 and report["cost_per_claim"]["source_calls"] == 1.0
    assert report["rows"][0]["n"] == 12
    recorded = json.loads((out / "run.json").read_text())  # what a resume must match
    assert recorded["agents"][0]["verifier"] == "nli"
    assert recorded["agents"][0]["verifier_options"]["min_relevance"] == 0.2
    assert set(recorded["llm"]) == {"base_url", "model"}
    first = judgments.read_text()
    run(*offline(shared_data, out, "--limit", "20", "--scorers", "mafc"))
    lines = judgments.read_text().splitlines()
    assert len(lines) == 20 and judgments.read_text().startswith(first)  # only the 8 new texts were checked
    assert len({json.loads(line)["id"] for line in lines}) == 20


def test_resuming_with_other_settings_is_refused(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run(*offline(shared_data, out, "--limit", "2"))
    result = CliRunner().invoke(cli, offline(shared_data, out, "--limit", "2", "--mode", "given"))
    assert result.exit_code == 1 and "recorded with other settings" in result.output


def test_unknown_dataset_is_one_error_line() -> None:
    result = CliRunner().invoke(cli, ["eval", "nope"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: unknown dataset 'nope' (available: averitec, fever-binary")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--limit", "0"], "0 is not in the range x>=1"),
        (["--concurrency", "0"], "0 is not in the range x>=1"),
        (["--scorers", ","], "give at least one scorer"),
    ],
)
def test_bad_eval_arguments_are_refused(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["eval", "scifact-binary", *args])
    assert result.exit_code != 0 and message in result.output


def test_judgments_from_another_dataset_are_refused(shared_data: Path, authors: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            "scifact-binary",
            "--judgments",
            str(authors / "scifact-mixed.jsonl"),
            "--data-dir",
            str(shared_data),
            "--out",
            str(tmp_path / "x"),
        ],
    )
    assert result.exit_code == 1 and "are these judgments from another dataset?" in result.output
