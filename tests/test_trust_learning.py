"""Trust that learns from mistakes: eq. 15 only where the team was wrong (PAMAS Algorithm 1), the online
update from one correction, and a trust file written atomically that keeps its other objects."""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from factcheck import ConfigError, InputError, Judgment
from factcheck.trust import (
    AgentTrust,
    Trust,
    claim_cases,
    epoch_order,
    fit_trust,
    learn_trust,
    recommended_agents,
    update_trust_file,
)


def record(gold: str, *votes: tuple[str, bool | None, float]) -> dict[str, Any]:
    judgments = [{"agent": a, "factuality": f, "confidence": c} for a, f, c in votes]
    return {"gold": gold, "text": "t", "claims": [{"id": "c1", "text": "t", "judgments": judgments}]}


# a is always right; b and c are right together except on the two claims where both are wrong, and
# there, at equal weights, they outvote a: the team is wrong on exactly those two.
MISTAKES = [
    record("TRUE", ("a", True, 0.9), ("b", True, 0.9), ("c", True, 0.9)),
    record("FALSE", ("a", False, 0.9), ("b", False, 0.9), ("c", False, 0.9)),
    record("TRUE", ("a", True, 0.9), ("b", False, 0.9), ("c", False, 0.9)),
    record("FALSE", ("a", False, 0.9), ("b", True, 0.9), ("c", True, 0.9), ("d", None, 0.0)),
    record("TRUE", ("a", True, 0.9), ("b", True, 0.9), ("c", True, 0.9)),
]


def old_learn_trust(records: list[dict[str, Any]], *, rate: float = 0.1) -> Trust:
    """``learn_trust`` as it was before errors-only learning: its figures must not change."""
    counts: dict[str, list[int]] = {}
    alpha: dict[str, float] = {}
    labelled = [(j.agent, j.factuality, truth) for _, judgments, truth in claim_cases(records) for j in judgments]
    for agent, factuality, truth in labelled:
        judged, correct, abstained = counts.setdefault(agent, [0, 0, 0])
        if factuality is None:
            counts[agent][2] += 1
            continue
        right = factuality == truth
        counts[agent] = [judged + 1, correct + right, abstained]
        accuracy_so_far = (correct + right + 1) / (judged + 3)
        alpha[agent] = (1 - rate) * alpha.get(agent, 1.0) + rate * (float(right) + accuracy_so_far)
    return Trust({a: AgentTrust(c[0], c[1], c[2], alpha.get(a, 1.0)) for a, c in counts.items()})


def test_the_default_fit_is_the_one_pass_fit_it_always_was() -> None:
    for rate in (0.1, 0.3):
        assert learn_trust(MISTAKES, rate=rate) == old_learn_trust(MISTAKES, rate=rate)
        assert learn_trust(MISTAKES, rate=rate, epochs=1, update="all", seed=7) == old_learn_trust(MISTAKES, rate=rate)


def test_errors_only_updates_nothing_when_the_team_is_always_right() -> None:
    right = [r for i, r in enumerate(MISTAKES) if i not in (2, 3)]
    fit = fit_trust(right, update="errors", epochs=3)
    assert fit.errors == (0, 0, 0) and fit.updates == (0, 0, 0)
    assert {a: t.pamas for a, t in fit.trust.agents.items()} == {"a": 1.0, "b": 1.0, "c": 1.0}
    assert fit.trust.agents["a"].judged == 3  # the data is still counted once, whatever the passes
    # every sample moves the weights under update="all"
    assert fit_trust(right, update="all", epochs=3).updates == (9, 9, 9)


def test_errors_only_moves_only_the_agents_of_a_team_error_by_eq_15() -> None:
    one = [MISTAKES[2]]  # TRUE; a right, b and c wrong and outvoting it
    fit = fit_trust(one, update="errors", rate=0.1)
    assert fit.errors == (1,)
    alpha = {name: t.pamas for name, t in fit.trust.agents.items()}
    # alpha <- 0.9 alpha + 0.1 (r + (correct + 1) / (judged + 2)), from alpha = 1
    assert alpha["a"] == pytest.approx(0.9 + 0.1 * (1 + 2 / 3))
    assert alpha["b"] == alpha["c"] == pytest.approx(0.9 + 0.1 * (0 + 1 / 3))


def test_errors_only_lowers_the_agents_wrong_on_team_errors() -> None:
    fit = fit_trust(MISTAKES, update="errors", epochs=4)
    alpha = {name: t.pamas for name, t in fit.trust.agents.items()}
    assert fit.errors[0] == 2  # the two claims b and c got wrong
    assert alpha["b"] < 1.0 < alpha["a"] and alpha["b"] == alpha["c"]
    assert alpha["d"] == 1.0 and fit.trust.agents["d"].abstained == 1  # an abstainer is never blamed
    one_pass = learn_trust(MISTAKES)
    assert one_pass.agents["b"].pamas > alpha["b"]  # one pass also rewards b for the claims the team got right


def test_epochs_are_deterministic_and_seeded() -> None:
    assert epoch_order(5, 0, seed=3) == [0, 1, 2, 3, 4]  # the first pass reads the file's order
    later = epoch_order(30, 1, seed=0)
    assert sorted(later) == list(range(30)) and later != list(range(30))
    assert later == epoch_order(30, 1, seed=0) and later != epoch_order(30, 1, seed=1)
    assert epoch_order(30, 2, seed=0) != later
    many = MISTAKES * 6
    first = fit_trust(many, update="errors", epochs=5, seed=0)
    assert fit_trust(many, update="errors", epochs=5, seed=0) == first


def test_learning_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="trust update must be one of all, errors"):
        learn_trust(MISTAKES, update="sometimes")
    with pytest.raises(ConfigError, match="epochs must be at least 1"):
        learn_trust(MISTAKES, epochs=0)


def test_save_keeps_the_files_other_objects_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    gate = {"target": 0.9, "policies": {"lase": {"options": {"tau_conf": 0.7}}}}
    path.write_text(json.dumps({**learn_trust(MISTAKES).to_dict(), "gate": gate}))
    learn_trust(MISTAKES[:2]).save(path)
    data = json.loads(path.read_text())
    assert data["gate"] == gate and data["agents"]["a"]["judged"] == 2
    learn_trust(MISTAKES).save(path, extra={"team": {"recommended": ["a"]}})
    data = json.loads(path.read_text())
    assert list(data) == ["schema", "agents", "gate", "team"]
    learn_trust(MISTAKES).save(path, extra={"gate": None})  # None removes an object
    assert "gate" not in json.loads(path.read_text()) and "team" in json.loads(path.read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trust.json"]
    with pytest.raises(ValueError, match="extra cannot set agents"):
        Trust().save(path, extra={"agents": {}})


def test_a_failed_save_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "trust.json"
    learn_trust(MISTAKES).save(path)
    before = path.read_text()
    os.chmod(path, 0o600)

    def refuse(src: str, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        Trust().save(path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["trust.json"]
    monkeypatch.undo()
    Trust().save(path)
    assert path.stat().st_mode & 0o777 == 0o600  # the replaced file keeps its mode
    assert (tmp_path / "new" / "t.json").exists() is False
    Trust().save(tmp_path / "new" / "t.json")  # a missing folder is made
    assert (tmp_path / "new" / "t.json").stat().st_mode & 0o777 == 0o644


def test_update_trust_file_creates_then_corrects_only_on_a_team_error(tmp_path: Path) -> None:
    path = tmp_path / "state" / "trust.json"
    right = [Judgment("a", True, 0.9), Judgment("b", True, 0.8), Judgment("c", None)]
    first = update_trust_file(path, right, "TRUE")
    assert first.team_right is True and first.updated == ()
    trust = Trust.load(path)
    assert (trust.agents["a"].judged, trust.agents["a"].correct, trust.agents["c"].abstained) == (1, 1, 1)
    assert trust.agents["a"].pamas == 1.0  # a claim the team already got right teaches nothing new
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "gate": {"policies": {}}, "team": {"recommended": ["a", "b"]}}))

    wrong = [Judgment("a", True, 0.9), Judgment("b", False, 0.9), Judgment("c", False, 0.9)]
    second = update_trust_file(path, wrong, True, rate=0.5)  # b and c outvote a, who was right
    assert second.team_right is False and second.updated == ("a", "b", "c")
    trust = Trust.load(path)
    # alpha <- 0.5 alpha + 0.5 (r + (correct + 1) / (judged + 2)), this claim counted
    assert trust.agents["a"].pamas == pytest.approx(0.5 + 0.5 * (1 + 3 / 4))
    assert trust.agents["b"].pamas == pytest.approx(0.5 + 0.5 * (0 + 2 / 4))
    assert trust.agents["c"].pamas == pytest.approx(0.5 + 0.5 * (0 + 1 / 3))
    assert (trust.agents["c"].judged, trust.agents["c"].abstained) == (1, 1)
    data = json.loads(path.read_text())
    assert data["gate"] == {"policies": {}} and recommended_agents(path) == ("a", "b")
    assert sorted(p.name for p in path.parent.iterdir()) == ["trust.json", "trust.json.lock"]  # no temporary file
    with pytest.raises(InputError, match="TRUE or FALSE"):
        update_trust_file(path, wrong, "PARTLY TRUE")


def test_recommended_agents_reads_the_team_object_or_says_how_to_write_it(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    with pytest.raises(ConfigError, match="trust file not found"):
        recommended_agents(path)
    learn_trust(MISTAKES).save(path)
    with pytest.raises(ConfigError, match="no recommended team: run `factcheck calibrate"):
        recommended_agents(path)
    learn_trust(MISTAKES).save(path, extra={"team": {"recommended": ["b", "a"]}})
    assert recommended_agents(path) == ("b", "a")
    learn_trust(MISTAKES).save(path, extra={"team": {"recommended": []}})
    with pytest.raises(InputError, match="malformed team object"):
        recommended_agents(path)


def test_corrections_one_at_a_time_are_one_errors_only_pass(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    records = MISTAKES * 3
    for _, judgments, truth in claim_cases(records):
        update_trust_file(path, judgments, truth, rate=0.2)
    assert Trust.load(path) == learn_trust(records, rate=0.2, update="errors", epochs=1)


def test_concurrent_online_updates_from_two_processes_lose_none(tmp_path: Path) -> None:
    import multiprocessing

    trust = tmp_path / "trust.json"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_correct_many, args=(str(trust), 200)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert all(worker.exitcode == 0 for worker in workers)
    agents = json.loads(trust.read_text())["agents"]
    assert agents["solo"]["judged"] == 400  # every one of the 400 corrections counted


def _correct_many(path: str, n: int) -> None:
    from factcheck.trust import update_trust_file
    from factcheck.types import Judgment

    for _ in range(n):
        update_trust_file(path, [Judgment("solo", True, 0.9, "")], False)
