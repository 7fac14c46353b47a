"""Replaying deliberation gates over recorded first rounds (bench/deliberation.py, factcheck calibrate --gate),
and the per-claim cost figures of an eval report."""

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from factcheck.deliberation.builtins import Off
from factcheck.eval.calibrate import GateCase, first_round, gate_cases, has_evidence, replay_gate
from factcheck.eval.evaluate import cost_per_claim
from factcheck.trust import Trust
from factcheck.types import ClaimVerdict
from tests.paper_gates import ECMR, LASE

ROOT = Path(__file__).resolve().parent.parent


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_deliberation", ROOT / "bench" / "deliberation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def vote(agent: str, factuality: bool | None, confidence: float = 0.0) -> dict[str, Any]:
    return {"agent": agent, "factuality": factuality, "confidence": confidence}


def record(gold: str, *judgments: dict[str, Any], **claim: Any) -> dict[str, Any]:
    return {"gold": gold, "text": "t", "claims": [{"id": "c1", "text": "t", "judgments": list(judgments), **claim}]}


# Agents a and b, equal trust (a leads a tie: it comes first). By hand, with LASE's tau_conf 0.6 and ECMR's
# defaults (concentration 0.8, contradiction 0.4, confidence 0.55); "right" is MAFC over the first round:
RECORDS = [
    record("TRUE", vote("a", True, 0.9), vote("b", True, 0.9)),  # both stop; right
    record("FALSE", vote("a", False, 0.9), vote("b", False, 0.8)),  # both stop; right
    record("TRUE", vote("a", True, 0.5), vote("b", True, 0.9)),  # leader unsure: both send; right
    record("FALSE", vote("a", True, 0.9), vote("b", False, 0.3)),  # split (0.75): ECMR sends, LASE stops; wrong
    record("TRUE", vote("a", False, 0.7), vote("b", None)),  # one sure vote: both stop; wrong
]


def equal(case: GateCase) -> dict[str, float]:
    return {}


def test_replay_gives_the_share_and_stopped_accuracy_computed_by_hand() -> None:
    cases = gate_cases(RECORDS)
    assert [c.agents for c in cases] == [("a", "b")] * 5 and not has_evidence(cases)
    lase = replay_gate("lase", cases, LASE(round0="all"), equal)
    assert (lase.claims, lase.sent, lase.share) == (5, 1, 0.2)
    assert lase.stopped_accuracy == pytest.approx(2 / 4) and lase.sent_accuracy == 1.0
    ecmr = replay_gate("ecmr", cases, ECMR(), equal)
    assert (ecmr.sent, ecmr.share) == (2, 0.4)
    assert ecmr.stopped_accuracy == pytest.approx(2 / 3) and ecmr.sent_accuracy == pytest.approx(1 / 2)
    assert lase.accuracy == ecmr.accuracy == pytest.approx(3 / 5)  # the same first round, whatever the gate
    always = replay_gate("always", cases, LASE(always=True), equal)
    assert always.share == 1.0 and always.stopped_accuracy is None


def test_bench_replay_rows_match_by_hand() -> None:
    module = bench()
    cases = gate_cases(RECORDS)
    papers = {"off": Off(), "lase": LASE(), "ecmr": ECMR()}  # the papers' gates, swept as the bench sweeps them
    rows = {row.name: row for row in module.replay_rows(cases, [0] * 5, {0: Trust()}, policies=papers)}
    assert rows["off"].outcome.share == 0.0 and rows["off"].outcome.stopped_accuracy == pytest.approx(3 / 5)
    assert rows["lase (round0=all, tau_conf=0.6)"].outcome.share == pytest.approx(0.2)
    assert rows["ecmr (tau_confidence=0.55)"].outcome.stopped_accuracy == pytest.approx(2 / 3)
    # tau_conf 0.8 also sends claim 5 (leader confidence 0.7): two sent, claims 1, 2 and 4 stopped, 2 right
    swept = rows["lase tau_conf=0.8"].outcome
    assert (swept.sent, swept.stopped_accuracy) == (2, pytest.approx(2 / 3))
    low, high = rows["off"].ci
    assert low < 0.6 < high


def test_first_round_is_rebuilt_from_a_deliberated_record() -> None:
    revised = {**vote("a", True, 0.8)}
    deliberation = {
        "policy": "ecmr",
        "gated": "the agents disagree",
        "steps": [
            {"number": 1, "action": "revise", "role": "leader", "actor": "nli", "judgment": revised, "replaces": "a"},
            {"number": 2, "action": "arbitrate", "role": "decision-maker", "judgment": vote("arbiter", True, 0.9)},
        ],
        "replaced": [vote("a", False, 0.6)],
    }
    data = record("TRUE", revised, vote("b", True, 0.7), vote("arbiter", True, 0.9), deliberation=deliberation)
    claim = ClaimVerdict.from_dict(data["claims"][0])
    first = first_round(claim)
    assert [(j.agent, j.factuality, j.confidence) for j in first] == [("a", False, 0.6), ("b", True, 0.7)]
    (case,) = gate_cases([data])
    assert case.judgments == first and case.agents == ("a", "b")


def test_cost_per_claim_counts_agent_calls_passages_and_deliberated() -> None:
    usage = {"calls": {"source:corpus": 3, "verifier:nli": 3, "nli:pairs": 12, "deliberation:challenge": 1}}
    gated = {"policy": "ecmr", "gated": "split", "options": {"roles": "verifier"}, "steps": []}
    stopped = {"policy": "ecmr", "gated": None, "steps": []}
    deliberated = {
        "text": "t",
        "usage": usage,
        "claims": [{"id": "c1", "deliberation": gated}, {"id": "c2", "deliberation": stopped}],
    }
    old = {"text": "t", "usage": {"calls": {"source:corpus": 1, "verifier:lexical": 1}}, "claims": [{"id": "c1"}]}
    cost = cost_per_claim([deliberated, old])
    assert cost["claims"] == 3.0
    assert cost["agent_calls"] == pytest.approx(8 / 3)  # retrievals and readings, deliberation's included
    assert cost["passages"] == pytest.approx(12 / 3) and cost["deliberation_steps"] == pytest.approx(1 / 3)
    assert cost["deliberated"] == pytest.approx(1 / 3)
    llm = {**gated, "options": {"roles": "llm"}, "steps": [{"cost": {"llm_calls": 2}}]}
    with_model = {"text": "t", "usage": {"calls": {}}, "claims": [{"id": "c1", "deliberation": llm}]}
    assert cost_per_claim([with_model])["agent_calls"] == 2.0  # the model's role calls count as agent calls
    legacy = cost_per_claim([old])  # a record from before deliberation
    assert (legacy["agent_calls"], legacy["passages"], legacy["deliberated"]) == (2.0, 0.0, 0.0)


def test_write_configs_round_trips_through_the_config_reader(tmp_path: Path) -> None:
    from factcheck.config import load_settings

    module = bench()
    written = {p.stem: p for p in module.write_configs(tmp_path)}
    assert set(written) == {"duo", "trio", "control"}
    agents = {
        name: {a.name: (a.source, a.verifier, dict(a.source_options)) for a in load_settings(p).resolved_agents()}
        for name, p in written.items()
    }
    assert agents["duo"] == {
        "corpus": ("corpus", "nli", {"retrieval": "hybrid"}),
        "corpus_bm25": ("corpus", "nli", {"retrieval": "bm25", "top_k": 5}),
    }
    assert agents["trio"]["lex"] == ("corpus", "lexical", {})
    assert agents["control"]["corpus"][2]["top_k"] == 6 and agents["control"]["corpus_bm25"][2]["top_k"] == 10


def test_the_authors_judgments_carry_no_evidence(shared_data: Path) -> None:
    from factcheck.eval.mafc import scifact_binary

    cases = gate_cases(scifact_binary(shared_data))
    assert len(cases) == 188 and not has_evidence(cases)
    assert json.dumps(bench().wilson(0, 0)) == "null"
