"""`factcheck calibrate --gate`: the deliberation gates' thresholds fitted on first rounds, in the trust file."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from factcheck import InputError
from factcheck.cli import cli
from factcheck.eval.calibrate import choose, fit_gate, gate_cases
from factcheck.trust import Trust, gate_thresholds, learn_trust
from tests.test_deliberation_replay import RECORDS


def test_fit_picks_the_smallest_share_whose_stopped_claims_reach_the_target() -> None:
    # Trust from RECORDS: b is right 4 of 4 (log-odds log 5), a 3 of 5 (log 4/3), so b leads where it voted.
    # Leader confidences 0.9, 0.8, 0.9, 0.3 (b) and 0.7 (a), first round right on claims 1-3 only. A
    # threshold in (0.3, 0.7] sends claim 4 (share 0.2; stopped 3 of 4 right), one in (0.7, 0.8] claims 4 and
    # 5 (share 0.4; stopped 3 of 3): the first to reach 0.9 is 0.71.
    trust = learn_trust(RECORDS)
    cases = gate_cases(RECORDS)

    def alpha(case: object) -> dict[str, float]:
        return {a: trust.weight(a) for a in ("a", "b")}

    from factcheck.deliberation.lase import LASE

    fit = fit_gate(cases, LASE(round0="all"), "tau_conf", alpha, target=0.9, max_share=0.5)
    assert (fit.value, fit.reached, fit.outcome.share, fit.outcome.stopped_accuracy) == (0.71, True, 0.4, 1.0)
    assert [(v, o.sent) for v, o in fit.sweep] == [(0.0, 0), (0.31, 1), (0.71, 2), (0.81, 3), (0.91, 5)]
    capped = fit_gate(cases, LASE(), "tau_conf", alpha, target=0.9, max_share=0.3)
    assert (capped.value, capped.reached, capped.outcome.share) == (0.31, False, 0.2)  # the best within the cap


def test_choose_without_a_row_under_the_cap_takes_the_smallest_share() -> None:
    from factcheck.eval.calibrate import GateOutcome

    sweep = [(0.0, GateOutcome("x", 10, 5, 5, 0)), (0.5, GateOutcome("x", 10, 8, 2, 4))]
    assert choose(sweep, 0.9, 0.3) == (0.0, sweep[0][1], False)


def test_calibrate_gate_writes_a_gate_object_old_readers_ignore(tmp_path: Path) -> None:
    judgments = tmp_path / "j.jsonl"
    judgments.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    out = tmp_path / "trust.json"
    args = ["calibrate", str(judgments), "--out", str(out), "--gate", "--target", "0.9", "--max-share", "0.5"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "leader's confidence against accuracy" in result.output and "tau_conf sweep" in result.output
    assert "lase: tau_conf = 0.71" in result.output and "ecmr: tau_confidence = 0.71" in result.output
    assert "carry no evidence" in result.output
    data = json.loads(out.read_text())
    assert data["gate"]["target"] == 0.9 and data["gate"]["max_share"] == 0.5
    assert data["gate"]["policies"]["lase"] == {
        "options": {"tau_lp": 0.0, "tau_h": 10.0, "tau_conf": 0.71},  # the gate reads the one signal fitted
        "share": 0.4,
        "stopped_accuracy": 1.0,
        "reached": True,
    }
    assert set(Trust.load(out).agents) == {"a", "b"}  # a trust reader reads agents only
    assert Trust.from_dict(data).agents == learn_trust(RECORDS).agents
    assert gate_thresholds(out) == {
        "lase": {"tau_lp": 0.0, "tau_h": 10.0, "tau_conf": 0.71},
        "ecmr": {"tau_confidence": 0.71},
    }


def test_gate_thresholds_of_a_file_without_a_gate_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    learn_trust(RECORDS).save(path)
    assert gate_thresholds(path) == {}
    (tmp_path / "other.json").write_text('{"schema": "x"}')
    with pytest.raises(InputError, match="not a trust file"):
        gate_thresholds(tmp_path / "other.json")
    broken = {**json.loads(path.read_text()), "gate": {"policies": {"lase": {}}}}
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    with pytest.raises(InputError, match="malformed gate"):
        gate_thresholds(tmp_path / "broken.json")


def test_calibrate_without_gate_writes_no_gate(tmp_path: Path) -> None:
    judgments = tmp_path / "j.jsonl"
    judgments.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    out = tmp_path / "trust.json"
    result = CliRunner().invoke(cli, ["calibrate", str(judgments), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "gate" not in json.loads(out.read_text())


def test_lase_fits_tau_lp_where_the_leaders_measured_their_probability() -> None:
    import math

    from factcheck.eval.calibrate import gate_option

    measured = [
        {**r, "claims": [{**c, "judgments": [{**j, "signals": {"lp_min": math.log(0.6)}} for j in c["judgments"]]}]}
        for r in RECORDS
        for c in r["claims"]
    ]
    assert gate_option("lase", gate_cases(RECORDS)) == "tau_conf"
    assert gate_option("lase", gate_cases(measured)) == "tau_lp"
    assert gate_option("ecmr", gate_cases(measured)) == "tau_confidence"


def test_the_first_round_keeps_a_judgment_whose_revision_was_not_applied() -> None:
    from factcheck.eval.calibrate import first_round
    from factcheck.types import Claim, ClaimVerdict, Deliberation, DeliberationStep, Judgment

    first = Judgment("a", True, 0.8)
    unapplied = DeliberationStep(2, "revise", "leader", "a", judgment=Judgment("a", False, 0.4), replaces="a")
    ruled = DeliberationStep(3, "arbitrate", "decision-maker", "nli", judgment=Judgment("arbiter", False, 0.9))
    held = ClaimVerdict(
        Claim("c0", "x"),
        (first,),
        deliberation=Deliberation("lase", gated="unsure", steps=(replace(unapplied, applied=False),)),
    )
    assert first_round(held) == (first,)
    ruling = ClaimVerdict(
        Claim("c0", "x"),
        (Judgment("arbiter", False, 0.9),),
        deliberation=Deliberation("ecmr", gated="split", steps=(ruled,), replaced=(first,)),
    )
    assert first_round(ruling) == (first,)
