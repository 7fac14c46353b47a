"""A team that adapts: clusters, redundancy (PAMAS eq. 12), complementarity (eq. 13), the recommended
agents, and `factcheck calibrate`'s team report, errors-only rows and trust file."""

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from factcheck.cli import cli
from factcheck.eval.team import (
    TeamParams,
    TeamScorer,
    calls_per_claim,
    complementarity,
    cosine,
    prediction_vector,
    team_shape,
)
from factcheck.trust import Trust, claim_cases, learn_trust, recommended_agents

Vote = tuple[str, bool | None, float]


def record(gold: str, *votes: Vote) -> dict[str, Any]:
    judgments = [{"agent": a, "factuality": f, "confidence": c} for a, f, c in votes]
    return {"gold": gold, "text": "t", "claims": [{"id": "c1", "text": "t", "judgments": judgments}]}


def claims(rows: list[tuple[bool, dict[str, bool | None]]], confidence: dict[str, float]) -> list[dict[str, Any]]:
    """One record per row: the gold, then each agent's verdict (None: abstained)."""
    return [
        record("TRUE" if truth else "FALSE", *[(a, v, confidence.get(a, 0.9)) for a, v in verdicts.items()])
        for truth, verdicts in rows
    ]


def redundant_team() -> list[dict[str, Any]]:
    """good is right on 9 of 10; copy says what good says but for one more error; other is right on 6."""
    rows: list[tuple[bool, dict[str, bool | None]]] = []
    for i in range(10):
        truth = i % 2 == 0
        good = truth if i != 9 else not truth
        copy = good if i != 8 else not good
        other = truth if i < 6 else not truth
        rows.append((truth, {"good": good, "copy": copy, "other": other}))
    return claims(rows, {})


def complementary_team() -> list[dict[str, Any]]:
    """a and b are wrong (unsure) on claims 0-2, where c is right (sure); c is wrong (unsure) on 3-4."""
    rows: list[tuple[bool, dict[str, bool | None]]] = []
    for i in range(10):
        truth = i % 2 == 0
        ab = truth if i > 2 else not truth
        c = truth if i not in (3, 4) else not truth
        rows.append((truth, {"a": ab, "b": ab, "c": c}))
    records = claims(rows, {})
    for i, data in enumerate(records):
        for j in data["claims"][0]["judgments"]:
            j["confidence"] = {True: 0.2, False: 0.9}[i <= 2] if j["agent"] != "c" else (0.1 if i in (3, 4) else 0.9)
    return records


def test_cosine_and_prediction_vectors() -> None:
    assert cosine((1, -1, 1), (1, -1, 1)) == pytest.approx(1.0)
    assert cosine((1, -1), (-1, 1)) == pytest.approx(-1.0)
    assert cosine((0, 0), (1, 1)) == 0.0
    cases = claim_cases(claims([(True, {"x": True}), (False, {"x": None, "y": True}), (True, {"y": False})], {}))
    assert prediction_vector(cases, "x") == (1, 0, 0) and prediction_vector(cases, "y") == (0, 1, -1)
    assert calls_per_claim(cases, ["x"]) == pytest.approx(2 / 3)  # an abstention costs a call
    assert calls_per_claim(cases, ["x", "y"]) == pytest.approx(4 / 3)


def test_a_redundant_duplicate_is_a_prune_candidate_and_left_out() -> None:
    records = redundant_team()
    shape = team_shape(claim_cases(records), learn_trust(records))
    agents = {a.name: a for a in shape.agents}
    copy = agents["copy"]
    assert copy.redundant_with == "good" and copy.similarity == pytest.approx(0.8)
    assert copy.score < 0 and copy.prune_candidate and copy.decision == "prune"
    assert not agents["good"].prune_candidate and agents["good"].decision == "keep"
    assert [a.name for a in shape.prune_candidates] == ["copy", "other"]
    assert shape.recommended == ("good",)  # pruning costs nothing here: good decides every vote
    assert shape.recommended_accuracy == shape.accuracy == pytest.approx(0.9)
    assert (shape.calls, shape.recommended_calls) == (3.0, 1.0)
    assert shape.clusters[0][:2] == ("good", "copy")  # the anchor (best F1) first, its twin beside it


def test_the_tolerance_keeps_an_agent_whose_removal_costs_accuracy() -> None:
    records = complementary_team()
    cases = claim_cases(records)
    trust = learn_trust(records)
    strict = team_shape(cases, trust, TeamParams(lam=0.5, tolerance=0.0))
    assert "c" in strict.recommended and strict.recommended_accuracy == strict.accuracy == 1.0


def test_a_complementary_agent_gets_a_positive_gain() -> None:
    records = complementary_team()
    cases = claim_cases(records)
    trust = learn_trust(records)
    scorer = TeamScorer(cases, {a: trust.weight(a) for a in "abc"})
    vectors = {a: prediction_vector(cases, a) for a in "abc"}
    similarity = {a: {b: cosine(vectors[a], vectors[b]) for b in "abc" if b != a} for a in "abc"}
    assert scorer.accuracy(["a", "b"]) == pytest.approx(0.7) and scorer.accuracy(["a", "b", "c"]) == 1.0
    assert complementarity("c", ["a", "b"], scorer, similarity, 0.05) == pytest.approx(0.3)  # cos(c, a) = 0
    assert complementarity("b", ["a"], scorer, similarity, 0.05) == pytest.approx(-0.05)  # b is a's twin
    shape = team_shape(cases, trust)
    c = next(a for a in shape.agents if a.name == "c")
    assert c.rescues == 3 and c.gain > 0 and c.decision == "keep"
    assert shape.recommended[0] == "c"  # routing order: the most trusted first


def test_the_team_object_holds_the_measurements_and_parameters() -> None:
    records = redundant_team()
    params = TeamParams(lam=0.1, gamma=0.2, threshold=0.7, n_max=2, tolerance=0.0)
    data = team_shape(claim_cases(records), learn_trust(records), params).to_dict()
    assert data["params"]["lambda"] == 0.1 and data["params"]["gamma"] == 0.2 and data["params"]["threshold"] == 0.7
    assert data["claims"] == 10 and data["calls_per_claim"]["full"] == 3.0
    assert set(data["agents"]) == {"good", "copy", "other"} and data["similarity"]["copy"]["good"] == 0.8
    assert all(len(c) <= 2 for c in data["clusters"]) and data["groups"].startswith("c1=good,copy")
    assert json.loads(json.dumps(data)) == data


def test_an_empty_trust_still_gives_a_routing_order() -> None:
    records = redundant_team()
    shape = team_shape(claim_cases(records), Trust())  # every weight 1: the first seen leads
    assert shape.recommended[0] == "good"


def write(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "j.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_calibrate_prints_the_team_and_writes_the_team_object(tmp_path: Path) -> None:
    judgments = write(tmp_path, redundant_team() * 3)
    out = tmp_path / "trust.json"
    args = ["calibrate", str(judgments), "--out", str(out), "--cv", "3", "--update", "errors", "--epochs", "3"]
    result = CliRunner().invoke(cli, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "eq. 15 errors-only, 3 epochs: the team was wrong on" in result.output
    assert "3-fold cross-validated accuracy, pamas (log_odds): " in result.output
    assert "3-fold cross-validated accuracy, pamas (pamas, one pass): " in result.output
    assert "3-fold cross-validated accuracy, pamas (pamas, errors-only, 3 epochs): " in result.output
    # held out, good alone is right more often than the full team's vote
    assert "full team, pamas (log_odds): 0.833 [0.700, 0.967], 3.00 calls per claim" in result.output
    assert "recommended team, pamas (log_odds): 0.900 [0.800, 1.000], 1.00 calls per claim" in result.output
    assert "prune candidates (eq. 12 < 0): copy (saves 1.00 calls/claim), other" in result.output
    assert "clusters (eq. 10-11, anchor first): [good, copy, other]; as --groups: c1=good,copy,other" in result.output
    data = json.loads(out.read_text())
    assert data["team"]["recommended"] == ["good"] and data["team"]["cross_validated"]["teams"] == [["good"]] * 3
    assert recommended_agents(out) == ("good",)
    assert "gate" not in data
    fitted = learn_trust(redundant_team() * 3, update="errors", epochs=3)
    assert Trust.load(out).agents == fitted.agents  # the file holds the trust --update chose


def test_calibrate_with_a_gate_keeps_both_objects(tmp_path: Path) -> None:
    judgments = write(tmp_path, redundant_team())
    out = tmp_path / "trust.json"
    result = CliRunner().invoke(cli, ["calibrate", str(judgments), "--out", str(out), "--gate"])
    assert result.exit_code == 0, result.output
    assert {"gate", "team"} <= set(json.loads(out.read_text()))
    again = CliRunner().invoke(cli, ["calibrate", str(judgments), "--out", str(out), "--lambda", "0"])
    assert again.exit_code == 0, again.output
    data = json.loads(out.read_text())
    assert "gate" in data and data["team"]["params"]["lambda"] == 0.0  # the team is refitted, the gate kept
    assert "kept from the earlier" in again.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.jsonl", "trust.json"]


def test_cross_validation_without_learning_options_is_todays(monkeypatch: pytest.MonkeyPatch) -> None:
    from factcheck.eval import calibrate

    records = redundant_team() * 2
    calls = []

    def spy(records: list[dict[str, Any]], *, rate: float = 0.1) -> Trust:
        calls.append(rate)
        return learn_trust(records, rate=rate)

    monkeypatch.setattr(calibrate, "learn_trust", spy)
    rows = calibrate.cross_validate(records, 2, weighting="log_odds", groups="", rate=0.3)
    assert calls == [0.3, 0.3] and list(rows) == ["mafc", "pamas (log_odds)"]
    monkeypatch.undo()
    learned = calibrate.cross_validate(records, 2, weighting="pamas", groups="", epochs=2, update="errors")
    assert list(learned) == ["mafc", "pamas (pamas)", "pamas (pamas, errors-only, 2 epochs)"]


def test_calibrate_on_the_authors_judgments(shared_data: Path, tmp_path: Path) -> None:
    from factcheck.eval import mafc

    mafc.write_all(shared_data, tmp_path)
    out = tmp_path / "t.json"
    args = ["calibrate", str(tmp_path / "scifact-binary.jsonl"), "--out", str(out), "--cv", "5"]
    result = CliRunner().invoke(cli, [*args, "--update", "errors", "--epochs", "5"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "mafc: 0.750" in result.output and "pamas (log_odds): 0.846" in result.output  # today's rows
    assert "pamas (pamas, one pass): 0.755 [0.697, 0.814]" in result.output
    assert "pamas (pamas, errors-only, 5 epochs): 0.766 [0.707, 0.824]" in result.output
    assert "full team, pamas (log_odds): 0.846 [0.787, 0.899], 3.00 calls per claim" in result.output
    assert "recommended team, pamas (log_odds): 0.840 [0.782, 0.894], 1.00 calls per claim" in result.output
    assert recommended_agents(out) == ("Google",)
