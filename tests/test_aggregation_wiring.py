"""Trust files, routing and evidence independence wired through the Checker, check and eval."""

import json
from pathlib import Path

from click.testing import CliRunner

from factcheck import Agent, Label
from factcheck.build import build_checker
from factcheck.cli import cli
from factcheck.testing import ScriptedVerifier, StaticSource
from factcheck.trust import learn_trust
from tests.test_scoring_pamas import RECORDS

COPIED = "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France."


def test_one_trust_file_serves_routing_and_the_pamas_scorer(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    learn_trust(RECORDS).save(path)
    agents = [
        Agent("good", StaticSource(), ScriptedVerifier(default=(True, 0.9))),
        Agent("bad", StaticSource(name="s2"), ScriptedVerifier(default=(False, 0.9))),
    ]
    checker = build_checker(agents=agents, scorer="pamas", routing="trust", routing_options={"trust": str(path)})
    assert checker.scorer.options()["trust"] == str(path)
    assert checker.check("The Eiffel Tower is in Paris.").claims[0].label is Label.TRUE  # the trusted agent wins


def test_independence_merges_agents_quoting_the_same_page() -> None:
    agents = [
        Agent("wikipedia", StaticSource(name="w", passages=(COPIED,)), ScriptedVerifier(default=(True, 0.9))),
        Agent("web", StaticSource(name="g", passages=(COPIED,)), ScriptedVerifier(default=(True, 0.9))),
        Agent(
            "llm", StaticSource(name="l", passages=("Unrelated words here.",)), ScriptedVerifier(default=(False, 0.9))
        ),
    ]
    plain = build_checker(agents=agents).check("The tower is in Paris.")
    merged = build_checker(agents=agents, independence=0.5).check("The tower is in Paris.")
    assert plain.claims[0].label is Label.TRUE  # two copies outvote one
    assert merged.claims[0].score == 0.5 and merged.claims[0].label is Label.FALSE  # counted once: a tie
    assert any("merged" in note for note in merged.usage.notes)


def test_eval_takes_trust_and_independence(shared_data: Path, tmp_path: Path) -> None:
    from factcheck.eval import mafc

    mafc.write_all(shared_data, tmp_path)
    runner = CliRunner()
    assert (
        runner.invoke(
            cli, ["calibrate", str(tmp_path / "scifact-binary.jsonl"), "--out", str(tmp_path / "t.json")]
        ).exit_code
        == 0
    )
    result = runner.invoke(
        cli,
        [
            "eval",
            "scifact-binary",
            "--judgments",
            str(tmp_path / "scifact-binary.jsonl"),
            "--data-dir",
            str(shared_data),
            "--scorers",
            "mafc,pamas",
            "--trust",
            str(tmp_path / "t.json"),
            "--independence",
            "merge",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert result.exit_code == 0, result.output
    rows = {r["scorer"]: r for r in json.loads((tmp_path / "r" / "report.json").read_text())["rows"]}
    assert round(rows["pamas"]["accuracy"], 3) == 0.840 and round(rows["mafc"]["accuracy"], 3) == 0.750
    assert json.loads((tmp_path / "r" / "report.json").read_text())["false_consensus_rate"] == 11 / 93


def test_a_bad_independence_threshold_fails_before_any_agent_runs() -> None:
    import pytest

    from factcheck import ConfigError

    with pytest.raises(ConfigError, match="independence threshold"):
        build_checker(agents=[Agent("a", StaticSource(), ScriptedVerifier())], independence=0.0)
    result = CliRunner().invoke(cli, ["check", "The Eiffel Tower is in Paris.", "--independence-threshold", "0"])
    assert result.exit_code == 2 and "0<x<=1" in result.output


def test_cross_validation_learns_with_the_given_rate(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from factcheck.eval import calibrate

    rates = []

    def spy(records, *, rate=0.1):  # type: ignore[no-untyped-def]
        rates.append(rate)
        return learn_trust(records, rate=rate)

    monkeypatch.setattr(calibrate, "learn_trust", spy)
    calibrate.cross_validate(RECORDS * 4, 2, weighting="pamas", groups="", rate=0.3)
    assert rates == [0.3, 0.3]
