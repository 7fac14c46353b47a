"""The deliberation stage: its state, the built-in policies' decisions, and the floor that carries them out."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest

from factcheck.agent import Agent
from factcheck.deliberation.builtins import Off
from factcheck.deliberation.floor import Floor
from factcheck.deliberation.queries import contrast, key_terms, turned
from factcheck.deliberation.roles import VerifierRoles
from factcheck.deliberation.state import state_of
from factcheck.errors import ConfigError, SourceError
from factcheck.extractors.sentence import SentenceExtractor
from factcheck.pipeline import Checker
from factcheck.plugin import Action, DeliberationState, Source, Verifier
from factcheck.report import deliberation_block
from factcheck.scoring.labels import ThresholdRule
from factcheck.scoring.mafc import MAFCScorer
from factcheck.types import Assessment, Claim, ClaimVerdict, DeliberationStep, Evidence, Judgment, Label
from factcheck.usage import UsageRecorder
from tests.paper_gates import ECMR, LASE


def ev(text: str, url: str | None = None, title: str = "") -> Evidence:
    return Evidence(source="s", text=text, title=title, url=url)


def judged(agent: str, factuality: bool | None, confidence: float, *evidence: Evidence, **signals: float) -> Judgment:
    return Judgment(agent, factuality, confidence, evidence=evidence, signals=tuple(signals.items()))


# --- the state ---


def test_agreement_on_one_page_counts_once_and_is_not_independent() -> None:
    page = ev("Vitamin C does not prevent colds in the general population.", url="https://a.org/x")
    state = state_of([judged("a", True, 0.9, page), judged("b", True, 0.8, page)], ["a", "b"])
    assert state.concentration == 1.0 and state.independent_supporters == 1
    assert state.independence == 0.0  # one shared URL: no independence at all
    assert state.support_entropy == 0.0


def test_independent_agreement_has_independence_and_two_supporters() -> None:
    one = ev("Smoking is a leading cause of lung cancer in adults.", url="https://a.org/1")
    two = ev("Tobacco use was linked to respiratory tumours in a cohort study.", url="https://b.org/2")
    state = state_of([judged("a", True, 0.9, one), judged("b", True, 0.7, two)], ["a", "b"])
    assert state.independent_supporters == 2
    assert state.independence is not None and state.independence > 0.9
    assert state.support_entropy == pytest.approx(1.0)


def test_contradiction_and_concentration_are_trust_weighted() -> None:
    votes = [judged("a", True, 0.9), judged("b", False, 0.6)]
    state = state_of(votes, ["a", "b"], {"a": 1.0, "b": 3.0})
    assert state.leading is False  # 3 * 0.6 outweighs 1 * 0.9
    assert state.concentration == pytest.approx(1.8 / 2.7)
    assert state.contradiction == pytest.approx(0.6)
    assert state.leader == "b"


def test_no_evidence_means_independence_unknown() -> None:
    state = state_of([judged("a", True, 0.9), judged("b", True, 0.9)], ["a", "b"])
    assert state.independence is None


def test_leader_signals_reach_the_state() -> None:
    state = state_of([judged("a", True, 0.9, lp_min=-0.5, h_max=0.7)], ["a", "b"], leader="a")
    assert state.leader_probability == pytest.approx(0.6065, abs=1e-3)
    assert state.h_max == 0.7 and state.asked == 1 and state.agents == 2


def test_state_round_trips() -> None:
    state = state_of([judged("a", True, 0.9)], ["a"])
    assert DeliberationState.from_dict(state.to_dict()) == state


# --- the policies (pure) ---


def make_state(**fields: object) -> DeliberationState:
    base: dict[str, object] = dict(
        agents=2,
        asked=2,
        votes=2,
        leading=True,
        concentration=1.0,
        independent_concentration=1.0,
        independent_supporters=2,
        support_entropy=1.0,
        independence=0.9,
        contradiction=0.0,
        leader="a",
        leader_confidence=0.9,
        steps_left=6,
        calls_left=8,
    )
    base.update(fields)
    return DeliberationState(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "sends"),
    [
        ({}, False),  # sure, independent agreement
        ({"leader_confidence": 0.4}, True),  # unsure verbal confidence
        ({"lp_min": -0.05}, False),  # p = 0.95
        ({"lp_min": -0.5}, True),  # p = 0.61 < 0.8
        ({"h_max": 0.9}, True),
        ({"votes": 0, "leading": None}, True),
    ],
)
def test_lase_gate(fields: dict[str, object], sends: bool) -> None:
    assert (LASE().gate(make_state(**fields)) is not None) is sends


@pytest.mark.parametrize(
    ("fields", "sends"),
    [
        ({}, False),
        ({"concentration": 0.6, "contradiction": 0.6}, True),  # disagreement
        ({"independence": 0.1}, True),  # agreement on shared evidence: false consensus suspected
        ({"independence": None}, False),  # unknown independence never triggers
        ({"leader_confidence": 0.3}, True),
    ],
)
def test_ecmr_gate(fields: dict[str, object], sends: bool) -> None:
    assert (ECMR().gate(make_state(**fields)) is not None) is sends


def step(action: str, role: str = "") -> DeliberationStep:
    return DeliberationStep(0, action, role, "x")


def test_lase_follows_the_papers_order_and_stops_when_sure() -> None:
    policy, unsure = LASE(), make_state(leader_confidence=0.4)
    assert policy.next_action(unsure, []).kind == "challenge"
    assert policy.next_action(unsure, [step("challenge")]).kind == "revise"
    after = [step("challenge"), step("revise")]
    assert (policy.next_action(unsure, after).kind, policy.next_action(unsure, after).role) == (
        "support",
        "collaborator",
    )
    assert policy.next_action(make_state(), after).kind == "stop"  # sure after revising
    every = [step("challenge"), step("revise"), step("support"), step("revise"), step("support"), step("revise")]
    assert policy.next_action(unsure, every).kind == "stop"


def test_lase_asks_another_agent_when_the_leader_found_nothing() -> None:
    nothing = make_state(votes=0, leading=None, asked=1, leader_confidence=0.0)
    assert LASE().next_action(nothing, []).kind == "verify"
    assert LASE().next_action(nothing, [step("verify")]).kind == "stop"


def test_ecmr_verifies_shared_evidence_then_challenges_a_split_then_arbitrates() -> None:
    policy = ECMR()
    shared = make_state(independence=0.1)
    assert policy.next_action(shared, []).kind == "verify"
    split = make_state(concentration=0.6, contradiction=0.6)
    assert policy.next_action(split, []).kind == "challenge"
    assert policy.next_action(split, [step("challenge")]).kind == "arbitrate"
    assert policy.next_action(split, [step("challenge"), step("arbitrate")]).kind == "stop"
    assert policy.next_action(make_state(), [step("verify")]).kind == "stop"  # settled by verifying


def test_lase_round0_is_the_leader_alone() -> None:
    assert LASE().round0_agents(["a", "b", "c"], {"a": 1.0, "b": 2.0, "c": 1.0}) == ["b"]
    assert LASE(round0="all").round0_agents(["a", "b"], {}) == ["a", "b"]
    assert LASE(leader="c").round0_agents(["a", "b", "c"], {}) == ["c"]


def test_contrast_queries_turn_the_direction_around() -> None:
    assert turned("Statins reduce cardiovascular events.") == "Statins increase cardiovascular events."
    assert turned("Statins are used widely.") is None
    assert contrast("Statins reduce cardiovascular events.", True)[0] == "Statins increase cardiovascular events."
    assert contrast("Aspirin lowers the risk of cancer.", False) == ("Aspirin lowers the risk of cancer",)
    assert key_terms("The effect of aspirin on the risk of cancer") == "effect aspirin risk cancer"


# --- the floor, in a check ---


@dataclass(frozen=True)
class QuerySource(Source):
    """Passages by the words of the query: the claim's own words find ``agree``, a contrast query (any of
    ``contrast_words``) finds ``against``; every retrieval is counted in ``seen`` (a test's list)."""

    name: str = "query"
    agree: tuple[str, ...] = ("Drug X lowers blood pressure in adults.",)
    against: tuple[str, ...] = ()
    contrast_words: tuple[str, ...] = ("raises", "increases", "no effect")
    fail_contrast: str | None = None
    top_k: int = 3

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        queries = " ".join(claim.search_queries()).lower()
        if any(word in queries for word in self.contrast_words):
            if self.fail_contrast:
                raise SourceError(self.fail_contrast)
            texts = self.against
        else:
            texts = self.agree
        return [
            Evidence(self.name, t, title=f"doc {i}", url=f"https://{self.name}.org/{abs(hash(t))}")
            for i, t in enumerate(texts)
        ]


@dataclass(frozen=True)
class WordVerifier(Verifier):
    """Reads the evidence: a passage saying "not" or "no" refutes, else supports; ``confidence`` for one
    passage, higher with more passages that agree (so re-reading more evidence can change its mind)."""

    name: str = "words"
    confidence: float = 0.5

    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        if not evidence:
            return Assessment(None, 0.0, "no evidence")
        refuting = [e for e in evidence if {"not", "no"} & set(e.text.lower().split())]
        supporting = [e for e in evidence if e not in refuting]
        verdict = len(supporting) > len(refuting)
        side = supporting if verdict else refuting
        confidence = min(0.95, self.confidence + 0.1 * (len(side) - 1))
        return Assessment(
            verdict, confidence, f"{len(side)} passages {'support' if verdict else 'refute'}", tuple(side)
        )


CLAIM = "Drug X lowers blood pressure."


def checker(*agents: Agent, policy: object = None) -> Checker:
    return Checker(
        agents,
        extractor=SentenceExtractor(),
        scorer=MAFCScorer(),
        labels=ThresholdRule(),
        deliberation=policy,  # type: ignore[arg-type]
    )


def check(c: Checker) -> ClaimVerdict:
    return c.check(CLAIM, claims=[Claim("c0", CLAIM)]).claims[0]


def test_off_changes_nothing_and_records_nothing() -> None:
    agent = Agent("a", QuerySource(), WordVerifier())
    verdict = check(checker(agent, policy=Off()))
    assert verdict.deliberation is None and "deliberation" not in verdict.to_dict()


def test_lase_challenge_finds_counter_evidence_and_the_leader_revises() -> None:
    # The first round reads one supporting passage (confidence 0.5: unsure). The devil's advocate's contrast
    # query finds two refutations; the leader's re-read of the pooled evidence then says FALSE.
    source = QuerySource(against=("Drug X does not lower blood pressure.", "Trials found no benefit of drug X."))
    verdict = check(checker(Agent("a", source, WordVerifier())))  # off: TRUE, weakly
    assert verdict.label is Label.TRUE
    verdict = check(checker(Agent("a", source, WordVerifier()), policy=LASE()))
    record = verdict.deliberation
    assert record is not None and record.gated is not None and "unsure" in record.gated
    actions = [s.action for s in record.steps]
    assert actions[:2] == ["challenge", "revise"]
    challenge = record.steps[0]
    assert challenge.judgment is None and challenge.critique is not None  # the advocate gives no verdict
    assert challenge.critique.counter and "not" in challenge.critique.counter[0].text
    assert verdict.label is Label.FALSE
    assert [j.agent for j in verdict.judgments] == ["a"]
    assert record.replaced and record.replaced[0].factuality is True  # the first round is kept in the record
    assert all(s.cost.calls >= 1 for s in record.steps)


def test_a_sure_leader_is_not_deliberated_and_costs_one_agent() -> None:
    sure = WordVerifier(confidence=0.95)
    c = checker(Agent("a", QuerySource(), sure), Agent("b", QuerySource(name="other"), sure), policy=LASE())
    verdict = c.check(CLAIM, claims=[Claim("c0", CLAIM)])
    claim = verdict.claims[0]
    assert claim.deliberation is not None and claim.deliberation.gated is None and not claim.deliberation.steps
    assert [j.agent for j in claim.judgments] == ["a"]  # round 0 asked the leader alone
    assert not any(k.startswith("deliberation:") for k in verdict.usage.calls)
    assert verdict.usage.calls.get("source:other", 0) == 0


def test_a_failing_step_keeps_the_first_round_verdict_with_a_note() -> None:
    source = QuerySource(fail_contrast="search service down")
    verdict = check(checker(Agent("a", source, WordVerifier()), policy=LASE()))
    record = verdict.deliberation
    assert record is not None and record.steps[0].error is not None and "search service down" in record.steps[0].error
    assert record.stopped.startswith("error:")
    assert verdict.label is Label.TRUE and verdict.judgments[0].confidence == 0.5


def test_call_cap_stops_deliberation() -> None:
    source = QuerySource(against=("Drug X does not lower blood pressure.",))
    verdict = check(checker(Agent("a", source, WordVerifier()), policy=LASE(max_calls=1)))
    record = verdict.deliberation
    assert record is not None and "max_calls = 1" in record.stopped
    assert sum(s.cost.calls for s in record.steps) <= 1


def test_step_cap_stops_deliberation() -> None:
    source = QuerySource(against=("Drug X does not lower blood pressure.",))
    verdict = check(checker(Agent("a", source, WordVerifier()), policy=LASE(max_steps=1)))
    record = verdict.deliberation
    assert record is not None and len(record.steps) == 1 and "max_steps = 1" in record.stopped


def test_ecmr_arbitrates_a_split_and_the_ruling_replaces_the_votes() -> None:
    yes = Agent("yes", QuerySource(name="yes", agree=("Drug X lowers blood pressure.",)), WordVerifier(confidence=0.7))
    no = Agent(
        "no",
        QuerySource(name="no", agree=("Drug X does not lower blood pressure.", "No effect of X was seen.")),
        WordVerifier(confidence=0.7),
    )
    verdict = check(checker(yes, no, policy=ECMR()))
    record = verdict.deliberation
    assert record is not None and record.gated is not None and "disagree" in record.gated
    assert [s.action for s in record.steps][-1] == "arbitrate"
    assert [j.agent for j in verdict.judgments] == ["arbiter"]
    ruling = record.steps[-1]
    assert "judgment:yes" in ruling.inputs and "judgment:no" in ruling.inputs and ruling.relied_on
    assert verdict.label is Label.FALSE  # two refuting passages outweigh one


def test_deadline_cuts_deliberation_not_the_answer() -> None:
    slow = QuerySource(against=("Drug X does not lower blood pressure.",))

    @dataclass(frozen=True)
    class SlowContrast(QuerySource):
        async def retrieve(self, claim: Claim) -> list[Evidence]:
            if any(w in " ".join(claim.search_queries()) for w in self.contrast_words):
                await asyncio.sleep(5)
            return await super().retrieve(claim)

    c = checker(Agent("a", SlowContrast(against=slow.against), WordVerifier()), policy=LASE())

    async def run() -> ClaimVerdict:
        from factcheck.events import TextChecked

        async for event in c.stream(CLAIM, claims=[Claim("c0", CLAIM)], deadline_s=1.0):
            if isinstance(event, TextChecked):
                return event.verdict.claims[0]
        raise AssertionError

    verdict = asyncio.run(run())
    assert verdict.label is Label.TRUE  # the first round's answer stands
    assert verdict.deliberation is not None and verdict.deliberation.stopped.startswith("deadline")


def test_the_record_round_trips_through_json() -> None:
    source = QuerySource(against=("Drug X does not lower blood pressure.", "Trials found no benefit of drug X."))
    verdict = check(checker(Agent("a", source, WordVerifier()), policy=LASE()))
    assert ClaimVerdict.from_dict(verdict.to_dict()) == verdict


def test_an_agent_named_arbiter_or_a_leader_that_is_no_agent_is_refused() -> None:
    with pytest.raises(ConfigError, match="arbiter"):
        checker(Agent("arbiter", QuerySource(), WordVerifier()), policy=ECMR())
    with pytest.raises(ConfigError, match="leader 'web' is not an agent"):
        checker(Agent("a", QuerySource(), WordVerifier()), policy=LASE(leader="web"))


@dataclass(frozen=True)
class DoubtingVerifier(WordVerifier):
    """Sure of one passage, unsure of several: a ruling over pooled evidence is less sure than the first round."""

    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        found = await super().judge(claim, evidence)
        return replace(found, confidence=0.9 if len(evidence) == 1 else 0.3)


def test_a_less_sure_ruling_is_recorded_but_does_not_overturn_the_first_round() -> None:
    yes = Agent("yes", QuerySource(name="yes", agree=("Drug X lowers blood pressure.",)), DoubtingVerifier())
    no = Agent("no", QuerySource(name="no", agree=("Drug X does not lower blood pressure.",)), WordVerifier())
    verdict = check(checker(yes, no, policy=ECMR()))
    record = verdict.deliberation
    assert record is not None and record.steps[-1].action == "arbitrate"
    ruling = record.steps[-1]
    assert ruling.judgment is not None and ruling.judgment.factuality is False and not ruling.applied
    assert [j.agent for j in verdict.judgments] == ["yes", "no"] and verdict.label is Label.TRUE
    assert verdict.deliberation is not None
    assert "not applied" in deliberation_block(verdict.deliberation).plain
    overturned = check(checker(yes, no, policy=ECMR(overturn="always")))
    assert [j.agent for j in overturned.judgments] == ["arbiter"] and overturned.label is Label.FALSE


@dataclass(frozen=True)
class Raising(LASE):
    """A third-party policy whose ``next_action`` raises after its first step."""

    name: str = "raising"

    def next_action(self, state: DeliberationState, steps: Sequence[DeliberationStep]) -> Action:
        if steps:
            raise RuntimeError("policy bug")
        return super().next_action(state, steps)


def test_a_policy_that_raises_ends_deliberation_and_the_claim_keeps_its_judgments() -> None:
    source = QuerySource(against=("Drug X does not lower blood pressure.", "Trials found no benefit of drug X."))
    verdict = check(checker(Agent("a", source, WordVerifier()), policy=Raising()))
    record = verdict.deliberation
    assert record is not None and len(record.steps) == 1
    assert record.stopped == "error: the policy's next_action failed: RuntimeError: policy bug"
    assert verdict.label is Label.TRUE  # the challenge gave no verdict: the first round's stands


class NoneRoles(VerifierRoles):
    async def challenge(self, floor: Floor, action: Action) -> DeliberationStep:
        return None  # type: ignore[return-value]


def test_a_role_that_returns_garbage_is_a_failed_step() -> None:
    agent = Agent("a", QuerySource(), WordVerifier())
    floor = Floor(
        Claim("c0", CLAIM),
        [agent],
        [Judgment("a", True, 0.5, evidence=(ev("Drug X lowers blood pressure in adults."),))],
        policy=LASE(),
        roles=NoneRoles(),
        alpha={},
        ask=lambda agent, recorder: asyncio.sleep(0, Judgment(agent.name, None)),
        mark=lambda judgment: judgment,
        recorder=UsageRecorder(),
    )
    judgments, record = asyncio.run(floor.run())
    assert record.steps[0].error is not None and "not a DeliberationStep" in record.steps[0].error
    assert record.stopped.startswith("error:") and judgments[0].confidence == 0.5


def test_the_call_cap_is_a_stop_not_an_error() -> None:
    source = QuerySource(against=("Drug X does not lower blood pressure.",))
    record = check(checker(Agent("a", source, WordVerifier()), policy=LASE(max_calls=1))).deliberation
    assert record is not None and record.stopped.startswith("call cap reached")


def test_a_failing_source_among_several_is_passed_over_by_the_devil_s_advocate() -> None:
    down = Agent("down", QuerySource(name="down", fail_contrast="search service down"), WordVerifier(confidence=0.7))
    up = Agent(
        "up", QuerySource(name="up", against=("Drug X does not lower blood pressure.",)), WordVerifier(confidence=0.7)
    )
    no = Agent("no", QuerySource(name="no", agree=("Drug X does not lower blood pressure.",)), WordVerifier())
    verdict = check(checker(down, up, no, policy=ECMR(min_independence=0)))
    record = verdict.deliberation
    assert record is not None and record.steps[0].action == "challenge" and record.steps[0].error is None
    assert record.steps[0].evidence  # the source that works was searched


def test_a_leader_out_of_the_check_leaves_verify_to_the_others() -> None:
    lead = Agent("lead", QuerySource(name="lead", agree=()), WordVerifier())
    other = Agent("other", QuerySource(name="other"), WordVerifier(confidence=0.9))
    verdict = check(checker(lead, other, policy=LASE(leader="lead")))
    record = verdict.deliberation
    assert record is not None and record.steps[0].action == "verify" and record.steps[0].actor == "other"
    assert verdict.label is Label.TRUE


# --- issue 39: deliberation must not amplify a misreading ---


@dataclass(frozen=True)
class FickleVerifier(Verifier):
    """Answers TRUE, unsure, on its first reading and FALSE, sure, on every reading after it, whatever it reads:
    the same reader changing its mind on the same passages. ``calls`` is a test's list."""

    name: str = "fickle"
    calls: list[int] | None = None

    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        assert self.calls is not None
        self.calls.append(1)
        if len(self.calls) == 1:
            return Assessment(True, 0.5, "first reading", tuple(evidence))
        return Assessment(False, 0.9, "second thoughts", tuple(evidence))


def test_offline_roles_rereading_the_first_rounds_passages_cannot_flip_the_verdict() -> None:
    calls: list[int] = []
    source = QuerySource(against=())  # the contrast search finds nothing new
    verdict = check(checker(Agent("a", source, FickleVerifier(calls=calls)), policy=LASE()))
    record = verdict.deliberation
    assert record is not None and record.gated is not None
    revisions = [s for s in record.steps if s.action == "revise"]
    assert revisions and revisions[0].judgment is not None and revisions[0].judgment.factuality is False
    assert not any(s.applied for s in revisions)  # recorded, not applied: it rests on a passage already read
    assert verdict.label is Label.TRUE and [j.factuality for j in verdict.judgments] == [True]


def test_a_ruling_on_a_passage_the_first_round_did_not_read_may_flip_it() -> None:
    calls: list[int] = []
    source = QuerySource(against=("Drug X does not lower blood pressure.",))
    verdict = check(checker(Agent("a", source, FickleVerifier(calls=calls)), policy=LASE()))
    record = verdict.deliberation
    assert record is not None
    revision = next(s for s in record.steps if s.action == "revise")
    # The pooled evidence puts the leader's passage first: re-read, the fickle reader still decides on it.
    assert revision.applied is False
    # A verifier that decides on the new counter-passage (WordVerifier) is applied: new evidence may flip.
    verdict = check(checker(Agent("a", source, WordVerifier()), policy=LASE()))
    assert verdict.label is Label.FALSE


def test_a_deliberation_stops_rather_than_repeat_a_step_word_for_word() -> None:
    calls: list[int] = []
    verdict = check(checker(Agent("a", QuerySource(against=()), FickleVerifier(calls=calls)), policy=LASE()))
    record = verdict.deliberation
    assert record is not None
    said = [(s.action, s.actor, s.query, s.judgment, s.critique, s.inputs) for s in record.steps]
    assert len(said) == len(set(map(repr, said)))  # no step recorded twice
    assert record.stopped.startswith("nothing new")


@dataclass(frozen=True)
class ShallowSource(QuerySource):
    """Finds its passages only when asked for more than the first round's three (a deeper reading)."""

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        return await super().retrieve(claim) if self.top_k > 3 else []


def test_the_leaders_source_read_deeper_rules_but_gives_no_verdict_where_the_first_round_had_none() -> None:
    # Issue 39: reading three times deeper, the offline roles' new verdicts were wrong more often than right.
    verdict = check(checker(Agent("a", ShallowSource(), WordVerifier()), policy=ECMR()))
    record = verdict.deliberation
    assert record is not None
    deeper = [s for s in record.steps if s.action == "verify"]
    assert deeper and deeper[0].actor == "a" and deeper[0].judgment is not None
    assert deeper[0].judgment.factuality is True and deeper[0].applied is False  # recorded, not applied
    assert verdict.label is Label.UNVERIFIED and all(j.abstained for j in verdict.judgments)
