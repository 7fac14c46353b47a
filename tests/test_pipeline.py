"""The Checker: concurrency, abstentions, time-outs and usage."""

import asyncio
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from factcheck import Agent, Assessment, Checker, Claim, ConfigError, Evidence, InputError, Label, check
from factcheck.build import build_checker
from factcheck.testing import ScriptedVerifier, StaticSource


@dataclass(frozen=True)
class Lines:
    """Extractor stand-in: one claim per line (keeps these tests independent of spaCy)."""

    name = "lines"

    def extract(self, text: str) -> list[Claim]:
        claims, offset = [], 0
        for line in text.splitlines(keepends=True):
            if line.strip():
                claims.append(Claim(f"c{len(claims) + 1}", line.strip(), (offset, offset + len(line.strip()))))
            offset += len(line)
        return claims


def checker(*agents: Agent, **kwargs: object) -> Checker:
    from factcheck.plugin import ClaimExtractor

    lines = type("LinesExtractor", (Lines, ClaimExtractor), {})()
    return build_checker(agents=agents, extractor=lines, **kwargs)  # type: ignore[arg-type]


def test_every_agent_judges_every_claim_and_the_scorer_combines_them() -> None:
    verdict = checker(
        Agent("a", StaticSource(), ScriptedVerifier(rules={"sky": (True, 1.0), "grass": (False, 1.0)})),
        Agent("b", StaticSource(), ScriptedVerifier(rules={"sky": (True, 1.0), "grass": (False, 1.0)})),
    ).check("The sky is blue.\nThe grass is red.")
    assert [c.label for c in verdict.claims] == [Label.TRUE, Label.FALSE]
    assert [c.score for c in verdict.claims] == [pytest.approx(1.0), pytest.approx(0.0)]
    assert verdict.score == pytest.approx(0.5) and verdict.label is Label.PARTLY_TRUE
    assert [j.agent for j in verdict.claims[0].judgments] == ["a", "b"]
    assert verdict.claims[0].judgments[0].evidence[0].url == "https://example.org/static"


def test_a_failing_source_abstains_with_its_error_and_the_check_completes() -> None:
    verdict = checker(
        Agent("good", StaticSource(), ScriptedVerifier()),
        Agent("bad", StaticSource(name="flaky", fail="HTTP 500 from upstream"), ScriptedVerifier()),
    ).check("A claim to check.")
    good, bad = verdict.claims[0].judgments
    assert good.factuality is True
    assert bad.factuality is None and bad.confidence == 0.0
    assert bad.error == "retrieve failed in flaky: SourceError: HTTP 500 from upstream"
    assert verdict.usage.errors == {"source:flaky": 1}
    assert verdict.claims[0].score == pytest.approx(0.9)  # only the good agent counts


def test_a_failing_verifier_abstains() -> None:
    @dataclass(frozen=True)
    class Broken(ScriptedVerifier):
        name: str = "broken"

        async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
            raise ValueError("malformed JSON from the model")

    verdict = checker(Agent("x", StaticSource(), Broken())).check("A claim to check.")
    (judgment,) = verdict.claims[0].judgments
    assert judgment.error == "judge failed in broken: ValueError: malformed JSON from the model"
    assert judgment.evidence  # what was retrieved is kept
    assert verdict.claims[0].label is Label.UNVERIFIED
    assert verdict.label is Label.UNVERIFIED and verdict.score is None


def test_a_slow_agent_times_out_and_abstains() -> None:
    start = time.perf_counter()
    verdict = checker(
        Agent("slow", StaticSource(delay_s=5), ScriptedVerifier()),
        Agent("fast", StaticSource(), ScriptedVerifier()),
        agent_timeout_s=0.2,
    ).check("A claim to check.")
    assert time.perf_counter() - start < 3
    slow, fast = verdict.claims[0].judgments
    assert slow.error == "timed out after 0.2s during retrieve"
    assert fast.factuality is True


def test_agents_and_claims_run_concurrently_under_the_limit() -> None:
    text = "\n".join(f"Claim number {i}." for i in range(6))
    agents = [Agent(f"a{i}", StaticSource(delay_s=0.2), ScriptedVerifier()) for i in range(2)]
    start = time.perf_counter()
    verdict = checker(*agents, max_concurrency=12).check(text)
    concurrent = time.perf_counter() - start
    start = time.perf_counter()
    checker(*agents, max_concurrency=1).check(text)
    serial = time.perf_counter() - start
    assert len(verdict.claims) == 6
    assert concurrent < 1.0 < serial  # 12 calls of 0.2 s: ~0.2 s at once, ~2.4 s one at a time


def test_usage_records_calls_and_stage_times() -> None:
    verdict = checker(Agent("a", StaticSource(name="s1"), ScriptedVerifier(name="v1"))).check("One.\nTwo.")
    assert verdict.usage.calls == {"extractor:lines": 1, "source:s1": 2, "verifier:v1": 2}
    assert set(verdict.usage.wall_s) == {"total", "prepare", "extract", "retrieve", "judge", "score"}
    assert verdict.usage.wall_s["total"] >= verdict.usage.wall_s["extract"]


def test_empty_text_is_an_input_error() -> None:
    with pytest.raises(InputError, match="empty text"):
        checker(Agent("a", StaticSource(), ScriptedVerifier())).check("  \n ")


def test_text_without_claims_is_unverified() -> None:
    verdict = check("Is it?", agents=[Agent("a", StaticSource(), ScriptedVerifier())])
    assert verdict.claims == () and verdict.label is Label.UNVERIFIED


def test_sync_facade_works_inside_a_running_event_loop() -> None:
    c = checker(Agent("a", StaticSource(), ScriptedVerifier()))

    async def inside() -> Label:
        return c.check("A claim.").label

    assert asyncio.run(inside()) is Label.TRUE


def test_agent_names_must_be_unique() -> None:
    agent = Agent("same", StaticSource(), ScriptedVerifier())
    with pytest.raises(ConfigError, match="unique"):
        checker(agent, agent)


def test_scoring_options_go_to_the_component_that_has_them() -> None:
    c = checker(
        Agent("a", StaticSource(), ScriptedVerifier()),
        labels="threshold",
        scoring_options={"bounds": "reference", "thresholds": "0.5"},
    )
    assert c.scorer.options() == {"bounds": "reference"}
    assert c.labels.options()["thresholds"] == (0.5,)
    assert c.check("A claim.").score == pytest.approx((0.8 + 2) / 4)  # reference bounds with n = 1: U = 2


def test_a_texts_label_is_composed_from_its_claims_by_default() -> None:
    # Three FALSE claims and five TRUE ones: the mean (0.74) thresholded said TRUE above the FALSE claims.
    verifier = ScriptedVerifier(rules={"Not": (False, 0.2)}, default=(True, 0.9))
    c = checker(Agent("a", StaticSource(), verifier))
    assert c.labels.name == "compose"
    verdict = c.check("Not one.\nNot two.\nNot three.\nFour.\nFive.\nSix.\nSeven.\nEight.")
    assert [claim.label for claim in verdict.claims].count(Label.FALSE) == 3
    assert verdict.score is not None and verdict.score > 0.67  # what threshold would call TRUE
    assert verdict.label == Label.PARTLY_TRUE and verdict.labels == "compose"


def test_components_report_llm_and_cache_usage_into_the_current_check() -> None:
    from factcheck.usage import record_cache_hit, record_llm, record_search

    @dataclass(frozen=True)
    class Metered(ScriptedVerifier):
        async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
            record_llm(prompt_tokens=120, completion_tokens=30, cost_usd=0.001)
            record_search()
            record_cache_hit("llm")
            return await super().judge(claim, evidence)

    verdict = checker(Agent("a", StaticSource(), Metered())).check("One.\nTwo.")
    usage = verdict.usage
    assert (usage.llm_calls, usage.prompt_tokens, usage.completion_tokens, usage.search_calls) == (2, 240, 60, 2)
    assert usage.cost_usd == pytest.approx(0.002)
    assert usage.cache_hits == {"llm": 2}
    record_llm(1, 1)  # outside a check: ignored, not an error


@dataclass(frozen=True)
class Returns(ScriptedVerifier):
    """A verifier that returns whatever it is given, however wrong."""

    value: object = None

    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        return self.value  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("agent", "error"),
    [
        (
            Agent("a", StaticSource(), Returns(name="nothing")),
            "judge failed in nothing: TypeError: judge() must return",
        ),
        (
            Agent("a", StaticSource(), Returns(name="words", value=("yes", 0.7))),
            "judge failed in words: TypeError: judge() must return an Assessment, got tuple",
        ),
    ],
)
def test_a_verifier_returning_garbage_abstains(agent: Agent, error: str) -> None:
    (judgment,) = checker(agent).check("A claim.").claims[0].judgments
    assert judgment.factuality is None and judgment.error is not None and judgment.error.startswith(error)


def test_an_assessment_must_have_a_boolean_factuality() -> None:
    with pytest.raises(ValueError, match="factuality must be True, False or None"):
        Assessment("no", 0.7)  # type: ignore[arg-type]


def test_a_source_returning_non_evidence_abstains() -> None:
    @dataclass(frozen=True)
    class Strings(StaticSource):
        async def retrieve(self, claim: Claim) -> list[Evidence]:
            return ["just a string"]  # type: ignore[list-item]

    (judgment,) = checker(Agent("a", Strings(), ScriptedVerifier())).check("A claim.").claims[0].judgments
    assert judgment.error == "retrieve failed in static: SourceError: returned unusable evidence, dropped: 1 str"


def test_prepare_runs_once_per_check_and_its_failures_are_handled() -> None:
    calls: list[str] = []

    @dataclass(frozen=True)
    class Preparing(StaticSource):
        problem: str = ""

        async def prepare(self) -> None:
            calls.append(self.name)
            if self.problem == "config":
                raise ConfigError("corpus: no such file or folder: /nope")
            if self.problem == "network":
                raise ConnectionError("connection refused")

    ok = Agent("ok", Preparing(name="ok"), ScriptedVerifier())
    down = Agent("down", Preparing(name="down", problem="network"), ScriptedVerifier())
    verdict = checker(ok, down).check("One.\nTwo.\nThree.")
    assert sorted(calls) == ["down", "ok"]  # once per source, not per claim
    for claim in verdict.claims:
        good, bad = claim.judgments
        assert good.factuality is True
        assert bad.error == "prepare failed in down: ConnectionError: connection refused"
    assert verdict.usage.errors == {"source:down": 1}
    with pytest.raises(ConfigError, match="no such file"):
        checker(Agent("bad", Preparing(name="bad", problem="config"), ScriptedVerifier())).check("One.")


def test_given_claims_skip_extraction_and_given_source_serves_their_evidence() -> None:
    from factcheck.sources.given import GivenSource

    passages = {"Water boils at 100 C.": (Evidence("gold", "At sea level water boils at 100 C.", "Boiling"),)}
    c = checker(Agent("gold", GivenSource(evidence=passages), ScriptedVerifier()))
    claims = [Claim("c1", "Water boils at 100 C.", (0, 21)), Claim("c2", "Unknown claim.", None)]
    verdict = c.check("Water boils at 100 C. Unknown claim.", claims=claims)
    assert "extractor:lines" not in verdict.usage.calls
    known, unknown = verdict.claims
    assert known.judgments[0].evidence[0].title == "Boiling" and known.label is Label.TRUE
    assert unknown.judgments[0].factuality is None  # no evidence given: the verifier abstains


def test_with_agents_shares_everything_but_the_agents() -> None:
    checker = build_checker(
        agents=[Agent("a", StaticSource(passages=("x",)), ScriptedVerifier())], cache={"enabled": False}
    )
    other = checker.with_agents([Agent("b", StaticSource(passages=("y",)), ScriptedVerifier())])
    assert [a.name for a in other.agents] == ["b"] and [a.name for a in checker.agents] == ["a"]
    assert other.scorer is checker.scorer and other.cache is checker.cache and other.extractor is checker.extractor
    with pytest.raises(ConfigError, match="unique names"):
        checker.with_agents([checker.agents[0], checker.agents[0]])


GATE = threading.Event()  # opened by a test: SlowToPrepare's prepare() then returns
PREPARES: list[float] = []  # when each SlowToPrepare.prepare() started


@dataclass(frozen=True)
class SlowToPrepare(StaticSource):
    """A source whose prepare() does not return until GATE opens (a model download, a hung plugin)."""

    name: str = "slow-prepare"

    async def prepare(self) -> None:
        PREPARES.append(time.monotonic())
        while not GATE.is_set():
            await asyncio.sleep(0.02)


def _healthy_and_slow(**settings: object) -> Checker:
    GATE.clear()
    PREPARES.clear()
    healthy = Agent("healthy", StaticSource(name="healthy"), ScriptedVerifier())
    return checker(healthy, Agent("slow", SlowToPrepare(), ScriptedVerifier()), cache={"enabled": False}, **settings)


def test_a_component_not_ready_is_skipped_from_the_first_check_and_its_prepare_goes_on() -> None:
    c = _healthy_and_slow(agent_timeout_s=1.0, prepare_timeout_s=6)
    started = time.monotonic()
    first = c.check("Statins lower LDL.")
    assert 0.9 < time.monotonic() - started < 4  # waited the agents' time-out, not prepare_timeout_s
    healthy, slow = first.claims[0].judgments
    assert healthy.factuality is True
    assert slow.factuality is None and "slow-prepare is not ready" in (slow.error or "")
    assert "goes on in the background (checks wait 1s for it, prepare_timeout_s = 6)" in (slow.error or "")
    assert any("slow-prepare is not ready" in note for note in first.usage.notes)
    started = time.monotonic()
    second = c.check("Statins lower LDL again.")
    assert time.monotonic() - started < 0.8  # not waited for a second time
    assert second.claims[0].judgments[0].factuality is True
    assert "not ready" in (second.claims[0].judgments[1].error or "") and len(PREPARES) == 1  # not started again
    GATE.set()
    time.sleep(0.2)  # the prepare that went on in the background ends
    third = c.check("Statins lower LDL a third time.")
    assert [j.factuality for j in third.claims[0].judgments] == [True, True]


def test_a_check_cut_off_while_a_component_prepares_does_not_hold_up_the_next() -> None:
    c = _healthy_and_slow(agent_timeout_s=3, prepare_timeout_s=4)
    with pytest.raises(TimeoutError):  # a server's deadline cuts the first check short
        asyncio.run(asyncio.wait_for(c.acheck("Statins lower LDL."), 0.3))
    started = time.monotonic()
    verdict = c.check("Statins lower LDL.")
    assert time.monotonic() - started < 1.5
    assert [j.factuality for j in verdict.claims[0].judgments] == [True, None] and len(PREPARES) == 1
    GATE.set()


@dataclass(frozen=True)
class PreparingSource(StaticSource):
    """A source that counts its prepare() calls (a corpus index, a model load)."""

    name: str = "preparing"
    prepared: list[int] | None = None

    async def prepare(self) -> None:
        assert self.prepared is not None
        self.prepared.append(1)


def test_a_streamed_check_yields_the_claims_then_each_claim_then_the_verdict() -> None:
    from factcheck import ClaimChecked, ClaimsFound, TextChecked

    lines = "\n".join(f"Claim number {i} is about the sky." for i in range(5))
    prepared: list[int] = []
    one = checker(Agent("a", PreparingSource(prepared=prepared), ScriptedVerifier(rules={"sky": (True, 0.9)})))

    async def run() -> list[object]:
        return [event async for event in one.stream(lines)]

    events = asyncio.run(run())
    assert isinstance(events[0], ClaimsFound) and len(events[0].claims) == 5
    judged = events[1:-1]
    assert all(isinstance(e, ClaimChecked) for e in judged)
    assert sorted(e.index for e in judged) == list(range(5))  # type: ignore[attr-defined]
    last = events[-1]
    assert isinstance(last, TextChecked) and not last.partial and last.verdict.label is Label.TRUE
    # One check: its agents prepared once, one usage record counting every claim's calls.
    assert prepared == [1]
    assert last.verdict.usage.calls["source:preparing"] == 5
    assert last.data["partial"] is False and last.data["claims"][0]["label"] == "TRUE"


def test_a_deadline_ends_the_stream_with_the_claims_not_reached_abstaining() -> None:
    slow = checker(Agent("a", StaticSource(delay_s=5.0), ScriptedVerifier()))

    async def run() -> list[object]:
        return [event async for event in slow.stream("One claim.\nAnother claim.", deadline_s=0.3)]

    started = time.perf_counter()
    *_, last = asyncio.run(run())
    assert time.perf_counter() - started < 3.0
    verdict = last.verdict  # type: ignore[attr-defined]
    assert last.partial and verdict.label is Label.UNVERIFIED  # type: ignore[attr-defined]
    assert all("deadline of 0.3s reached before this claim" in c.judgments[0].error for c in verdict.claims)
    assert "deadline of 0.3s reached: 2 of 2 claims not checked" in verdict.usage.notes


def test_nothing_is_judged_until_the_consumer_asks_past_the_claims() -> None:
    asked: list[str] = []

    @dataclass(frozen=True)
    class Recording(StaticSource):
        async def retrieve(self, claim: Claim) -> list[Evidence]:
            asked.append(claim.text)
            return await super().retrieve(claim)

    one = checker(Agent("a", Recording(), ScriptedVerifier()))

    async def run() -> int:
        steps = one.stream("A claim.\nA second claim.")
        first = await anext(steps)
        await asyncio.sleep(0.2)  # a server deciding whether to admit this many claims
        await steps.aclose()
        return len(first.claims)  # type: ignore[attr-defined]

    assert asyncio.run(run()) == 2 and asked == []


def test_independence_merges_before_each_claim_is_scored() -> None:
    copied = ("The Eiffel Tower is a wrought-iron lattice tower in Paris, France, completed in 1889.",)
    agents = [
        Agent("web", StaticSource(name="web", passages=copied), ScriptedVerifier()),
        Agent("wiki", StaticSource(name="wiki", passages=copied), ScriptedVerifier()),
    ]
    verdict = checker(*agents, independence=0.5).check("The tower is in Paris.")
    assert [j.agent for j in verdict.claims[0].judgments] == ["web"]
    assert any(note.startswith("independence: claim c1: wiki merged into web") for note in verdict.usage.notes)


def test_a_component_that_takes_a_context_gets_the_checks_own() -> None:
    from factcheck import CheckContext

    seen: list[CheckContext] = []

    @dataclass(frozen=True)
    class Curious(StaticSource):
        async def retrieve(self, claim: Claim, *, context: CheckContext) -> list[Evidence]:
            seen.append(context)
            return await super().retrieve(claim)

    one = checker(Agent("a", Curious(), ScriptedVerifier()), cache={"enabled": False}, llm={"model": "m-1"})
    verdict = one.check("A claim.\nAnother claim.", as_of="2012-06-30")
    assert len(seen) == 2 and seen[0] is seen[1]  # one context for the whole check
    assert seen[0].usage is not None and seen[0].llm is not None and seen[0].llm.model == "m-1"
    assert seen[0].reference is not None and seen[0].reference.isoformat() == verdict.as_of
    assert verdict.claims[0].judgments[0].factuality is True  # the plain call still works beside it


def test_a_prepare_shared_by_checks_goes_on_when_the_check_that_started_it_is_cancelled() -> None:
    @dataclass(frozen=True)
    class SlowToPrepare(StaticSource):
        name: str = "slow-to-prepare"

        def prepare(self) -> None:  # synchronous: runs in a worker thread, where an interrupt would stop it
            for _ in range(40):
                time.sleep(0.01)

    one = checker(Agent("a", SlowToPrepare(), ScriptedVerifier()), cache={"enabled": False})

    async def run() -> object:
        first = asyncio.create_task(one.acheck("A claim."))
        await asyncio.sleep(0.15)  # its prepare is under way
        first.cancel()  # a server's client going away
        await asyncio.gather(first, return_exceptions=True)
        await asyncio.sleep(0.6)  # the prepare has had the time it needs
        return await one.acheck("A claim.")  # finds the prepare done, not stopped with the first check

    verdict = asyncio.run(run())
    (judgment,) = verdict.claims[0].judgments  # type: ignore[attr-defined]
    assert judgment.error is None and judgment.factuality is True


# ---- the check readable in one screen (issue 42 item 4) ---------------------------------------------------


def test_the_checker_is_a_short_public_face_over_one_module_per_step() -> None:
    import ast
    import importlib
    import inspect

    import factcheck.pipeline
    import factcheck.pipeline.checker

    assert factcheck.pipeline.Checker is Checker  # importable from both doors
    tree = ast.parse(inspect.getsource(factcheck.pipeline.checker))
    assert [n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)] == [
        "Checker"
    ]
    (face,) = (n for n in tree.body if isinstance(n, ast.ClassDef))
    docstrings = [
        n.body[0] for n in ast.walk(face) if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    docstrings = [d for d in docstrings if isinstance(d, ast.Expr) and isinstance(d.value, ast.Constant)]
    code = face.end_lineno - face.lineno + 1 - sum(d.end_lineno - d.lineno + 1 for d in docstrings)  # type: ignore[operator]
    assert code <= 120, f"Checker has {code} lines of code"
    for step in ("run", "extract", "prepare", "ask", "deliberate", "verdict"):
        module = importlib.import_module(f"factcheck.pipeline.{step}")
        assert module.__doc__, step
        assert "factcheck.pipeline.checker" not in inspect.getsource(module)  # the steps sit below the Checker
