"""Trust learning, the pamas scorer and `factcheck calibrate`."""

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from factcheck import ConfigError, InputError, Judgment
from factcheck.cli import cli
from factcheck.scoring.pamas import PAPER_GROUPS, PAMASScorer, pamas_score, parse_groups
from factcheck.trust import Trust, learn_trust


def record(gold: str, *votes: tuple[str, bool | None]) -> dict:
    judgments = [{"agent": a, "factuality": f, "confidence": 0.9 if f is not None else 0.0} for a, f in votes]
    return {"gold": gold, "text": "t", "claims": [{"id": "c1", "text": "t", "judgments": judgments}]}


# good is right 4 of 4, bad right 1 of 4 and abstains once
RECORDS = [
    record("TRUE", ("good", True), ("bad", False)),
    record("FALSE", ("good", False), ("bad", True)),
    record("TRUE", ("good", True), ("bad", True)),
    record("FALSE", ("good", False), ("bad", True)),
    record("TRUE", ("good", True), ("bad", None)),
]


def test_trust_counts_accuracy_abstention_and_weights() -> None:
    trust = learn_trust(RECORDS)
    good, bad = trust.agents["good"], trust.agents["bad"]
    assert (good.judged, good.correct, bad.judged, bad.correct, bad.abstained) == (5, 5, 4, 1, 1)
    assert good.accuracy == pytest.approx(6 / 7) and bad.abstention == pytest.approx(0.2)
    assert good.log_odds == pytest.approx(math.log(6))
    assert bad.log_odds == 0.0  # worse than chance: ignored, not inverted
    assert good.pamas > 1.0 > bad.pamas  # eq. 15 rewards being right
    assert trust.weight("unknown") == 1.0
    assert Trust.from_dict(json.loads(json.dumps(trust.to_dict()))).agents == trust.agents


def test_trusted_agent_outweighs_an_untrusted_majority() -> None:
    votes = [Judgment("good", True, 0.9), Judgment("bad", False, 0.9), Judgment("bad2", False, 0.9)]
    weights = {"good": 3.0, "bad": 0.5, "bad2": 0.5}
    assert pamas_score(votes, weights, {}, False) == pytest.approx((3 * 0.9 - 0.9) / 4 / 2 + 0.5)
    assert pamas_score(votes, weights, {}, False) > 0.5
    assert pamas_score(votes, {}, {}, False) < 0.5  # equal weights: the majority wins


def test_coordinators_count_by_trust_not_size() -> None:
    votes = [
        Judgment("web1", False, 1.0),
        Judgment("web2", False, 1.0),
        Judgment("web3", False, 1.0),
        Judgment("LLM", True, 1.0),
    ]
    groups = parse_groups("retrieval=web1,web2,web3;model=LLM")
    assert pamas_score(votes, {}, groups, False) == pytest.approx(0.5)  # one group against one
    assert pamas_score(votes, {}, {}, False) == pytest.approx(0.25)  # flat: three against one
    assert parse_groups(PAPER_GROUPS)["selfcheck"] == "model"


def test_scorer_reads_a_trust_file_and_checks_options(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    learn_trust(RECORDS).save(path)
    scorer = PAMASScorer(trust=str(path))
    assert scorer.score_claim([Judgment("good", True, 0.9), Judgment("bad", False, 0.9)]) > 0.5
    with pytest.raises(ConfigError, match="trust file not found"):
        PAMASScorer(trust=str(tmp_path / "nope.json"))
    with pytest.raises(ConfigError, match="weighting must be"):
        PAMASScorer(weighting="magic")
    with pytest.raises(ConfigError, match="groups look like"):
        PAMASScorer(groups="nonsense")
    (tmp_path / "bad.json").write_text('{"schema": "x"}')
    with pytest.raises(InputError, match="not a trust file"):
        Trust.load(tmp_path / "bad.json")


def test_calibrate_command_writes_trust_and_cross_validates(tmp_path: Path) -> None:
    judgments = tmp_path / "j.jsonl"
    judgments.write_text("".join(json.dumps(r) + "\n" for r in RECORDS * 4))
    out = tmp_path / "trust.json"
    result = CliRunner().invoke(cli, ["calibrate", str(judgments), "--out", str(out), "--cv", "2"])
    assert result.exit_code == 0, result.output
    assert set(Trust.load(out).agents) == {"good", "bad"}
    assert "2-fold cross-validated accuracy, mafc" in result.output
    assert "pamas (log_odds): 1.000" in result.output


def test_calibrate_on_the_authors_judgments_beats_mafc(shared_data: Path, tmp_path: Path) -> None:
    from factcheck.eval import mafc

    mafc.write_all(shared_data, tmp_path)
    result = CliRunner().invoke(
        cli, ["calibrate", str(tmp_path / "scifact-binary.jsonl"), "--out", str(tmp_path / "t.json"), "--cv", "5"]
    )
    assert result.exit_code == 0, result.output
    assert "mafc: 0.750" in result.output and "pamas (log_odds): 0.846" in result.output
