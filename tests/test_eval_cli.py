"""`factcheck eval` end to end: the paper's rows replayed, and the offline default checked."""

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import factcheck
from factcheck.cli import cli
from factcheck.eval.datasets import READERS, Dataset, EvalItem
from factcheck.eval.metrics import accuracy, bootstrap_ci
from factcheck.paths import shared_data_candidates, shared_data_dir
from factcheck.types import Label


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
    assert recorded["agents"][0]["verifier_options"]["min_relevance"] == 0.3
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
    assert result.output.startswith("Error: unknown dataset 'nope' (available: anli, averitec, check-covid")


@pytest.fixture
def no_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data folder named by FACTCHECK_SHARED_DATA: a user's clone with nothing beside it."""
    empty = tmp_path / "no-data"
    empty.mkdir()
    monkeypatch.setenv("FACTCHECK_SHARED_DATA", str(empty))
    return empty


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--limit", "0"], "0 is not in the range x>=1"),
        (["--concurrency", "0"], "0 is not in the range x>=1"),
        (["--scorers", ","], "give at least one scorer"),
        (["--scorers", "mafc,nope"], "unknown scorer 'nope'"),
        (["--labels", "threshold,nope"], "unknown label rule 'nope'"),
        (["--scorers", "mafc:colour=red"], "unknown option colour"),
        (["-o", "bounds=wide"], "bounds must be 'natural' or 'reference'"),
        (["-o", "out"], "'out' is not KEY=VALUE"),
        (["--dataset-option", "seed"], "must look like key=value"),
    ],
)
def test_bad_eval_arguments_are_refused_before_the_data_is_read(no_data: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["eval", "scifact-binary", *args])
    assert result.exit_code != 0 and message in result.output
    assert "missing data file" not in result.output


def test_judgments_and_replay_together_are_refused_before_the_data_is_read(no_data: Path, tmp_path: Path) -> None:
    recorded = tmp_path / "judgments.jsonl"
    recorded.write_text("")
    result = CliRunner().invoke(
        cli, ["eval", "scifact-binary", "--judgments", str(recorded), "--replay", str(recorded)]
    )
    assert result.exit_code == 1 and "give --judgments or --replay, not both" in result.output


def test_missing_data_names_the_folder_and_how_to_give_it(no_data: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", "scifact-binary"])
    assert result.exit_code == 1
    assert f"missing data file {no_data}/" in result.output  # FACTCHECK_SHARED_DATA is honoured
    assert "give it with --data-dir or FACTCHECK_SHARED_DATA" in result.output
    other = tmp_path / "other"
    other.mkdir()
    result = CliRunner().invoke(cli, ["eval", "scifact-binary", "--data-dir", str(other)])
    assert f"missing data file {other}/" in result.output  # --data-dir wins over the variable
    result = CliRunner().invoke(cli, ["import-mafc", str(tmp_path / "authors")])
    assert result.exit_code == 1 and f"missing data file {no_data}/" in result.output


def test_the_data_is_looked_for_beside_the_working_directory_then_beside_the_checkout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("FACTCHECK_SHARED_DATA", raising=False)
    checkout = Path(factcheck.__file__).resolve().parent.parent
    assert shared_data_candidates() == [Path("../shared/data"), checkout.parent / "shared" / "data"]
    monkeypatch.setenv("FACTCHECK_SHARED_DATA", str(tmp_path))
    assert shared_data_candidates() == [tmp_path] and shared_data_dir() == tmp_path


def tiny_reader(data_dir: Path) -> Dataset:
    """40 one-claim texts, gold TRUE and FALSE in turn; no data file needed."""
    items = tuple(
        EvalItem(f"t{n:02}", f"Claim number {n}.", Label.TRUE if n % 2 else Label.FALSE, ()) for n in range(40)
    )
    return Dataset("tiny", 2, items, False, "forty texts")


def tiny_judgments(seed: int) -> list[dict[str, Any]]:
    """One agent's judgment of each tiny text, right on about two in three, in a shuffled order."""
    records = [
        {
            "id": f"t{n:02}",
            "text": f"Claim number {n}.",
            "claims": [
                {
                    "id": "c1",
                    "text": f"Claim number {n}.",
                    "judgments": [{"agent": "x", "factuality": bool(n % 2) == (n % 3 > 0), "confidence": 0.9}],
                }
            ],
        }
        for n in range(40)
    ]
    random.Random(seed).shuffle(records)
    return records


def test_confidence_intervals_do_not_depend_on_the_order_judgments_finished_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(READERS, "tiny", tiny_reader)
    intervals = []
    for seed in (1, 2):
        recorded = tmp_path / f"judgments-{seed}.jsonl"
        recorded.write_text("".join(json.dumps(r) + "\n" for r in tiny_judgments(seed)))
        run("eval", "tiny", "--judgments", str(recorded), "--scorers", "mafc", "--out", str(tmp_path / f"run{seed}"))
        (row,) = rows(tmp_path / f"run{seed}").values()
        intervals.append((row["accuracy_ci"], row["macro_f1_ci"]))
    assert intervals[0] == intervals[1]
    # Resampled in each file's own order, the two would differ: the test can tell.
    as_read = []
    for seed in (1, 2):
        records = tiny_judgments(seed)
        gold = [Label.TRUE if int(r["id"][1:]) % 2 else Label.FALSE for r in records]
        predicted = [Label.TRUE if r["claims"][0]["judgments"][0]["factuality"] else Label.FALSE for r in records]
        as_read.append(bootstrap_ci(gold, predicted, accuracy))
    assert as_read[0] != as_read[1]
