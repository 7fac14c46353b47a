"""Routing policies: who is asked, in what order, when they stop; and their wiring into the Checker."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from factcheck import Agent, Claim, ConfigError, Judgment, Label
from factcheck.build import build_checker
from factcheck.cli import cli
from factcheck.config import load_settings
from factcheck.routing import (
    AllAgents,
    GatedRouting,
    RoutingPolicy,
    TrustRouting,
    build_routing,
    simulate,
)
from factcheck.testing import ScriptedVerifier, StaticSource
from factcheck.trust import AgentTrust, Trust

T, F, ABSTAIN = True, False, None


def recorded(*verdicts: tuple[str, bool | None, float]) -> dict[str, Judgment]:
    """``(agent, factuality, confidence)`` triples as recorded judgments, in the given (configured) order."""
    return {a: Judgment(a, f, c if f is not None else 0.0) for a, f, c in verdicts}


def asked(policy: RoutingPolicy, judgments: Mapping[str, Judgment]) -> list[str]:
    return [j.agent for j in simulate(policy, judgments)]


def trust_of(**correct_of_8: int) -> Trust:
    """Trust from accuracies on 8 samples: 8 -> log-odds 2.20, 6 -> 0.85, 5 -> 0.41, 4 -> 0."""
    return Trust({a: AgentTrust(8, c, 0, 1.0) for a, c in correct_of_8.items()})


# -- all ----------------------------------------------------------------------------------------


def test_all_asks_every_agent_concurrently() -> None:
    in_flight, most = 0, 0

    async def ask(agent: str) -> Judgment:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0)
        in_flight -= 1
        return Judgment(agent, True, 0.9)

    judgments = asyncio.run(AllAgents().run(["a", "b", "c"], ask))
    assert [j.agent for j in judgments] == ["a", "b", "c"] and most == 3


# -- trust (PAMAS eq. 17-20) ---------------------------------------------------------------------


def test_trust_asks_the_two_most_trusted_and_stops_when_they_agree() -> None:
    policy = TrustRouting(trust_of(a=8, b=6, c=5, d=4))
    judgments = recorded(("d", T, 0.9), ("c", T, 0.9), ("b", T, 0.9), ("a", T, 0.9))
    assert asked(policy, judgments) == ["a", "b"]
    assert policy.order(["d", "c", "b", "a"]) == ["a", "b", "c", "d"]


def test_trust_ties_keep_the_configured_order() -> None:
    assert TrustRouting().order(["x", "y", "z"]) == ["x", "y", "z"]
    assert TrustRouting(trust_of(z=8)).order(["x", "y", "z"]) == ["z", "x", "y"]  # unknown agents weigh 1


def test_trust_escalates_two_at_a_time_until_a_non_tie_majority() -> None:
    # Equal weights: 1-1, then 2-2 (a tie, keep going), then 4-2 with e and f: g is never asked.
    judgments = recorded(("a", T, 1), ("b", F, 1), ("c", T, 1), ("d", F, 1), ("e", T, 1), ("f", T, 1), ("g", F, 1))
    assert asked(TrustRouting(), judgments) == ["a", "b", "c", "d", "e", "f"]


def test_trust_weighted_margin_settles_a_split_by_trust() -> None:
    # a (2.20) against b (0.85) and c (0.41), d weighs 0: margin 0.94 != 0 after four, e not asked.
    judgments = recorded(("a", T, 1), ("b", F, 1), ("c", F, 1), ("d", T, 1), ("e", F, 1))
    assert asked(TrustRouting(trust_of(a=8, b=6, c=5, d=4, e=4)), judgments) == ["a", "b", "c", "d"]


def test_trust_runs_out_of_agents_on_a_persistent_tie() -> None:
    judgments = recorded(("a", T, 1), ("b", F, 1), ("c", T, 1))
    assert asked(TrustRouting(), judgments) == ["a", "b", "c"]


def test_trust_abstentions_are_not_votes() -> None:
    one_answer = recorded(("a", ABSTAIN, 0), ("b", T, 0.9), ("c", F, 0.9))
    assert asked(TrustRouting(), one_answer) == ["a", "b"]  # the only verdict of the pair stands
    no_answer = recorded(("a", ABSTAIN, 0), ("b", ABSTAIN, 0), ("c", F, 0.9), ("d", ABSTAIN, 0), ("e", T, 1))
    assert asked(TrustRouting(), no_answer) == ["a", "b", "c", "d"]


# -- gated (LASE) -------------------------------------------------------------------------------


COSTS = {"a": 3.0, "b": 1.0, "c": 2.0}  # asked b, c, a


def test_gated_stops_at_the_first_confident_cheap_agent() -> None:
    judgments = recorded(("a", F, 1), ("b", T, 0.9), ("c", F, 1))
    assert asked(GatedRouting(0.8, COSTS), judgments) == ["b"]


def test_gated_escalates_until_the_combined_answer_is_confident() -> None:
    judgments = recorded(("a", T, 1), ("b", T, 0.6), ("c", T, 1.0))
    assert asked(GatedRouting(0.8, COSTS), judgments) == ["b", "c"]  # mean 0.8 clears tau


def test_gated_a_confident_contradiction_keeps_escalating() -> None:
    judgments = recorded(("a", T, 1), ("b", T, 0.7), ("c", F, 0.9))
    assert asked(GatedRouting(0.8, COSTS), judgments) == ["b", "c", "a"]


def test_gated_an_abstention_escalates_and_equal_costs_keep_the_order() -> None:
    judgments = recorded(("x", ABSTAIN, 0), ("y", T, 0.9), ("z", T, 0.9))
    assert asked(GatedRouting(0.8), judgments) == ["x", "y"]


def test_gated_trust_weights_the_combined_answer() -> None:
    judgments = recorded(("a", T, 1.0), ("b", T, 0.6), ("c", T, 1.0))
    assert asked(GatedRouting(0.75, COSTS), judgments) == ["b", "c"]  # mean 0.8
    # b trusted more (2.20 against 0.85): the weighted mean 0.71 leans to b's 0.6, so a is asked too.
    assert asked(GatedRouting(0.75, COSTS, trust_of(b=8, c=6)), judgments) == ["b", "c", "a"]


def test_gated_calls_never_fall_as_tau_rises() -> None:
    rng = random.Random(0)
    for _ in range(200):
        judgments = {a: Judgment(a, rng.choice([T, F, ABSTAIN]), round(rng.random(), 2)) for a in ("p", "q", "r", "s")}
        judgments = {a: j if j.factuality is not None else Judgment(a, None) for a, j in judgments.items()}
        calls = [len(simulate(GatedRouting(tau), judgments)) for tau in (0.0, 0.3, 0.6, 0.9, 1.0, 1.1)]
        assert calls == sorted(calls) and calls[0] == 1 and calls[-1] == 4


# -- building from settings ----------------------------------------------------------------------


def test_build_routing_reads_options_and_trust_files(tmp_path: Path) -> None:
    assert isinstance(build_routing("all"), AllAgents)
    path = tmp_path / "trust.json"
    trust_of(a=8).save(path)
    policy = build_routing("gated", {"tau": "0.6", "costs": "a=2, b=0.5", "trust": str(path), "weighting": "pamas"})
    assert isinstance(policy, GatedRouting)
    assert policy.tau == 0.6 and policy.costs == {"a": 2.0, "b": 0.5} and policy.weighting == "pamas"
    assert policy.trust is not None and "a" in policy.trust.agents
    trust_policy = build_routing("trust", {"trust": path, "tau": 0.9})  # tau checked, then ignored
    assert isinstance(trust_policy, TrustRouting) and trust_policy.trust is not None


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("nope", {}, "unknown routing 'nope'"),
        ("gated", {"threshold": 1}, "unknown routing option threshold"),
        ("gated", {"tau": "high"}, "tau must be a number"),
        ("all", {"tau": "high"}, "tau must be a number"),
        ("gated", {"costs": "a:1"}, "costs must look like"),
        ("gated", {"costs": {"a": -1}}, "must be a non-negative number"),
        ("trust", {"weighting": "vibes"}, "weighting must be one of"),
        ("trust", {"trust": "/nonexistent/trust.json"}, "trust file not found"),
    ],
)
def test_bad_routing_settings_are_config_errors(name: str, options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_routing(name, options)


def test_pipeline_table_sets_routing(tmp_path: Path) -> None:
    path = tmp_path / "factcheck.toml"
    path.write_text('[pipeline]\nrouting = "gated"\ntau = 0.5\ncosts = { web = 2 }\n')
    settings = load_settings(path, env={})
    assert settings.routing == "gated" and settings.routing_options == {"tau": 0.5, "costs": {"web": 2}}
    overridden = settings.with_overrides(routing="trust", routing_options={"tau": 0.9})
    assert overridden.routing == "trust" and overridden.routing_options == {"tau": 0.9, "costs": {"web": 2}}
    assert load_settings(None, env={}).routing == "all"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[pipeline]\nrouting = "sometimes"', "unknown routing 'sometimes'"),
        ("[pipeline]\ngate = 0.5", "unknown \\[pipeline\\] setting gate"),
    ],
)
def test_bad_pipeline_routing_is_a_config_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "factcheck.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_settings(path, env={})


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--routing", "gated", "--tau", "high"], "tau must be a number"),
        (["--routing", "trust", "--trust", "/nonexistent/trust.json"], "trust file not found"),
    ],
)
def test_check_flags_reach_the_routing(flags: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["check", "A claim.", *flags])
    assert result.exit_code == 1 and message in result.output


# -- the Checker ----------------------------------------------------------------------------------


def agents(rules: Mapping[str, Sequence[tuple[bool | None, float]]]) -> list[Agent]:
    """Agents a, b, c; ``rules[claim word]`` gives each agent's verdict on claims containing that word."""
    return [
        Agent(name, StaticSource(name=f"s-{name}"), ScriptedVerifier(rules={w: v[i] for w, v in rules.items()}))
        for i, name in enumerate("abc")
    ]


CLAIMS = [Claim("c1", "Easy claim.", (0, 11)), Claim("c2", "Hard claim.", (12, 23))]
RULES = {"Easy": [(T, 0.95), (T, 0.9), (T, 0.9)], "Hard": [(T, 0.5), (F, 0.6), (F, 0.9)]}


def test_checker_default_asks_everyone_and_avoids_nothing() -> None:
    verdict = build_checker(agents=agents(RULES)).check("Easy claim. Hard claim.", claims=CLAIMS)
    assert [len(c.judgments) for c in verdict.claims] == [3, 3]
    assert "routing:avoided" not in verdict.usage.calls


def test_checker_gated_asks_only_whom_it_needs_and_counts_what_it_saved() -> None:
    checker = build_checker(agents=agents(RULES), routing=GatedRouting(0.8, {"a": 1, "b": 2, "c": 3}))
    verdict = checker.check("Easy claim. Hard claim.", claims=CLAIMS)
    easy, hard = verdict.claims
    assert [j.agent for j in easy.judgments] == ["a"] and easy.label is Label.TRUE
    assert [j.agent for j in hard.judgments] == ["a", "b", "c"]
    assert verdict.usage.calls["routing:avoided"] == 2
    assert verdict.usage.calls["verifier:scripted"] == 4


def test_checker_builds_trust_routing_from_settings(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    trust_of(a=4, b=6, c=8).save(path)  # c, b most trusted
    checker = build_checker(agents=agents(RULES), routing="trust", routing_options={"trust": str(path)})
    assert isinstance(checker.routing, TrustRouting)
    verdict = checker.check("Easy claim. Hard claim.", claims=CLAIMS)
    assert [[j.agent for j in c.judgments] for c in verdict.claims] == [["b", "c"], ["b", "c"]]
    assert verdict.usage.calls["routing:avoided"] == 2
