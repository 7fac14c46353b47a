"""Domain types: frozen dataclasses that serialise to the project's JSON format.

The JSON of one checked text is the stable interchange format of the project
(``"schema": "factcheck/1"``); ``factcheck score`` reads it back, the eval
harness records it, the HTTP API returns it. ``to_dict()`` / ``from_dict()``
round-trip every type exactly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from factcheck.errors import InputError
from factcheck.text import plural

SCHEMA = "factcheck/1"


class Label(StrEnum):
    """Verdict labels. Claims are TRUE / FALSE / UNVERIFIED; texts may also be PARTLY TRUE."""

    TRUE = "TRUE"
    FALSE = "FALSE"
    PARTLY_TRUE = "PARTLY TRUE"
    UNVERIFIED = "UNVERIFIED"

    @classmethod
    def parse(cls, value: object) -> Label:
        """Read a label, accepting the dataset spellings ``PARTLY`` and ``partly true``."""
        text = str(value).strip().upper().replace("_", " ")
        if text == "PARTLY":
            return cls.PARTLY_TRUE
        try:
            return cls(text)
        except ValueError:
            raise InputError(f"unknown label {value!r} (expected one of {', '.join(cls)})") from None


def _require(data: Mapping[str, Any], key: str, what: str) -> Any:
    if not isinstance(data, Mapping):
        raise InputError(f"{what} must be a JSON object, got {type(data).__name__}")
    try:
        return data[key]
    except KeyError:
        raise InputError(f"{what} is missing the field {key!r}") from None


def _list(value: Any, what: str) -> list[Any]:
    """A JSON list (null reads as empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{what} must be a list, got {type(value).__name__}")
    return value


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    """A JSON object (null reads as empty)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def _optional_str(value: Any, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InputError(f"{what} must be a string or null, got {value!r}")
    return value


def _optional_mapping(value: Any, what: str) -> Mapping[str, Any] | None:
    if value is not None and not isinstance(value, Mapping):
        raise InputError(f"{what} must be an object or null, got {type(value).__name__}")
    return value


def _optional_float(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{what} must be a number or null, got {value!r}")
    return float(value)


def _span(value: Any, what: str) -> tuple[int, int] | None:
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 2 and all(type(i) is int for i in value)):
        raise InputError(f"{what} span must be [start, end] or null, got {value!r}")
    return (value[0], value[1])


@dataclass(frozen=True)
class ClaimTime:
    """When a claim speaks of: from ``start`` to ``end`` (ISO 8601 dates, the same day for an instant),
    and the words that said so (``phrase``: "in 1889", "last year", "currently"). ``kind`` is
    ``instant``, ``week``, ``month``, ``year``, ``decade``, ``range`` or ``present`` (the time the
    text was written). See :mod:`factcheck.claimtime`."""

    start: str
    end: str
    phrase: str
    kind: str = "instant"

    def to_dict(self) -> dict[str, Any]:
        """The time's JSON fields."""
        return {"start": self.start, "end": self.end, "phrase": self.phrase, "kind": self.kind}

    @classmethod
    def from_dict(cls, data: Any) -> ClaimTime | None:
        """Read a claim time (``None`` for JSON ``null``)."""
        if data is None:
            return None
        if not isinstance(data, Mapping):
            raise InputError(f"claim time must be an object, got {type(data).__name__}")
        return cls(
            start=str(_require(data, "start", "claim time")),
            end=str(_require(data, "end", "claim time")),
            phrase=str(data.get("phrase") or ""),
            kind=str(data.get("kind") or "instant"),
        )


@dataclass(frozen=True)
class Claim:
    """One atomic, checkable statement taken from the input text.

    ``span`` is the ``(start, end)`` character range of the claim in the text
    it came from, or ``None`` when it cannot be mapped back (a rewritten claim).
    When the extractor rewrote the sentence (``edits``: ``attribution`` took
    off "X said"; ``decontextualised`` put a name for a pronoun), ``original``
    is the sentence as written and ``span`` still points at it.
    ``attributed_to`` is who the text says makes the claim ("A post",
    "Supporters"): the claim checked is what they say, not that they said it.
    ``time`` is when the claim speaks of, resolved against the text's time
    (:class:`ClaimTime`; ``None``: no date or present-tense marker).
    """

    id: str
    text: str
    span: tuple[int, int] | None = None
    queries: tuple[str, ...] = ()
    attributed_to: str | None = None
    original: str | None = None
    edits: tuple[str, ...] = ()
    time: ClaimTime | None = None

    def search_queries(self) -> tuple[str, ...]:
        """The queries sources should run: the generated ones, else the claim itself."""
        return self.queries or (self.text,)

    def to_dict(self) -> dict[str, Any]:
        """The claim's JSON fields (nested inside a claim verdict)."""
        return {
            "id": self.id,
            "text": self.text,
            "span": list(self.span) if self.span is not None else None,
            "queries": list(self.queries),
            "attributed_to": self.attributed_to,
            "original": self.original,
            "edits": list(self.edits),
            "time": self.time.to_dict() if self.time is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Claim:
        """Read a claim from its JSON fields (those added after factcheck/1 began may be missing)."""
        span = data.get("span") if isinstance(data, Mapping) else None
        return cls(
            id=str(_require(data, "id", "claim")),
            text=str(_require(data, "text", "claim")),
            span=_span(span, "claim"),
            queries=tuple(str(q) for q in _list(data.get("queries"), "claim queries")),
            attributed_to=_optional_str(data.get("attributed_to"), "claim attributed_to"),
            original=_optional_str(data.get("original"), "claim original"),
            edits=tuple(str(e) for e in _list(data.get("edits"), "claim edits")),
            time=ClaimTime.from_dict(data.get("time")),
        )


@dataclass(frozen=True)
class SkippedSentence:
    """A sentence the extractor did not send to the agents, and why.

    ``rule`` names the check-worthiness filter that skipped it (``question``,
    ``opinion``, ...; ``llm`` for the LLM extractor's own judgment); ``reason``
    says why in words.
    """

    text: str
    span: tuple[int, int] | None
    rule: str
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The skipped sentence's JSON fields."""
        return {
            "text": self.text,
            "span": list(self.span) if self.span is not None else None,
            "rule": self.rule,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SkippedSentence:
        """Read a skipped sentence from its JSON fields."""
        span = data.get("span") if isinstance(data, Mapping) else None
        return cls(
            text=str(_require(data, "text", "skipped sentence")),
            span=_span(span, "skipped sentence"),
            rule=str(_require(data, "rule", "skipped sentence")),
            reason=str(data.get("reason") or ""),
        )


@dataclass(frozen=True)
class Extraction:
    """What an extractor made of a text: the claims to check and the sentences it skipped, in reading order."""

    claims: tuple[Claim, ...]
    skipped: tuple[SkippedSentence, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The claims and skipped sentences as JSON (``factcheck extract --format json`` adds the text)."""
        return {"claims": [c.to_dict() for c in self.claims], "skipped": [s.to_dict() for s in self.skipped]}


# The source of a precedent passage: a past claim of the experience memory, titled with a reviewer's ruling
# (factcheck.precedents). Only a source that gives precedents may return passages of this source.
PRECEDENT_SOURCE = "memory"


@dataclass(frozen=True)
class Evidence:
    """A passage a source returned for a claim. Its text is untrusted input."""

    source: str
    text: str
    title: str = ""
    url: str | None = None
    retrieved_at: str | None = None
    published_at: str | None = None  # the date the passage speaks for (a result's date, a revision's time)
    time_note: str | None = None  # set by the check when that date is far from the claim's time
    # What a structured source read, as JSON (a Wikidata statement: its item, property, typed value, rank and
    # qualifiers; factcheck.wikidata): ``text`` says it as a sentence, this is what a typed verifier compares.
    data: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)

    def to_dict(self) -> dict[str, Any]:
        """The evidence's JSON fields (``time_note`` and ``data`` only when set: most sources give neither)."""
        data: dict[str, Any] = {
            "source": self.source,
            "title": self.title,
            "url": self.url,
            "text": self.text,
            "retrieved_at": self.retrieved_at,
            "published_at": self.published_at,
        }
        if self.time_note is not None:
            data["time_note"] = self.time_note
        if self.data is not None:
            data["data"] = dict(self.data)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evidence:
        """Read evidence from its JSON fields."""
        return cls(
            source=str(_require(data, "source", "evidence")),
            text=str(_require(data, "text", "evidence")),
            title=str(data.get("title") or ""),
            url=_optional_str(data.get("url"), "evidence url"),
            retrieved_at=_optional_str(data.get("retrieved_at"), "evidence retrieved_at"),
            published_at=_optional_str(data.get("published_at"), "evidence published_at"),
            time_note=_optional_str(data.get("time_note"), "evidence time_note"),
            data=_optional_mapping(data.get("data"), "evidence data"),
        )


@dataclass(frozen=True)
class Assessment:
    """What a verifier decides about a claim given evidence, before it is tied to an agent.

    ``factuality`` is ``None`` when the verifier abstains (the evidence says
    nothing about the claim). ``evidence``, when given, is the retrieved evidence
    in the order to show it (the passage that decided first); None keeps the
    retrieved order.
    """

    factuality: bool | None
    confidence: float
    rationale: str = ""
    evidence: tuple[Evidence, ...] | None = None
    signals: tuple[tuple[str, float], ...] = ()  # how sure the reading was, for a deliberation gate (Judgment)

    def __post_init__(self) -> None:
        if self.factuality is not None and not isinstance(self.factuality, bool):
            raise ValueError(f"factuality must be True, False or None, got {self.factuality!r}")
        if not (isinstance(self.confidence, int | float) and 0.0 <= self.confidence <= 1.0):
            raise ValueError(f"confidence must be in [0, 1], got {self.confidence!r}")


@dataclass(frozen=True)
class Judgment:
    """One agent's verdict on one claim.

    ``factuality`` is ``True`` / ``False``, or ``None`` when the agent abstained
    (no evidence, or its source failed: ``error`` says why). The signed score
    ``w`` of the MAFC paper is ``+confidence`` for true and ``-confidence`` for
    false; a judgment of false with confidence 0 is ``-0.0`` and still counts
    as a false vote.

    ``signals`` are what the verifier measured of its own certainty, by name: ``lp_min`` (the log-probability
    of the least likely token of the answer, or of the deciding class), ``h_max`` (the largest next-token
    entropy over the answer, in nats), ``counter`` (the opposing evidence's strength over the deciding
    evidence's). A deliberation gate reads them (:mod:`factcheck.deliberation`); most judgments have none.
    """

    agent: str
    factuality: bool | None
    confidence: float = 0.0
    rationale: str = ""
    evidence: tuple[Evidence, ...] = ()
    error: str | None = None
    signals: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        if not (isinstance(self.confidence, int | float) and 0.0 <= self.confidence <= 1.0):
            raise InputError(f"confidence of agent {self.agent!r} must be in [0, 1], got {self.confidence!r}")

    @property
    def abstained(self) -> bool:
        """True when the agent gave no verdict."""
        return self.factuality is None

    @property
    def signed_score(self) -> float:
        """``+confidence`` if judged true, ``-confidence`` if false (``-0.0`` keeps its sign)."""
        if self.factuality is None:
            raise ValueError(f"agent {self.agent!r} abstained: it has no signed score")
        return self.confidence if self.factuality else -self.confidence

    @classmethod
    def from_signed(cls, agent: str, w: float, rationale: str = "") -> Judgment:
        """Build a judgment from a signed score (``-0.0`` means false with confidence 0)."""
        if math.isnan(w) or not -1.0 <= w <= 1.0:
            raise InputError(f"signed score of agent {agent!r} must be in [-1, 1], got {w!r}")
        return cls(agent=agent, factuality=math.copysign(1.0, w) > 0, confidence=abs(w), rationale=rationale)

    def signal(self, name: str) -> float | None:
        """The signal ``name`` (:attr:`signals`), ``None`` when the verifier gave none."""
        return dict(self.signals).get(name)

    def to_dict(self) -> dict[str, Any]:
        """The judgment's JSON fields (``signals`` only when it has some)."""
        data: dict[str, Any] = {
            "agent": self.agent,
            "factuality": self.factuality,
            "confidence": self.confidence,
            "rationale": self.rationale,
            "evidence": [e.to_dict() for e in self.evidence],
            "error": self.error,
        }
        if self.signals:
            data["signals"] = dict(self.signals)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Judgment:
        """Read a judgment from its JSON fields."""
        agent = str(_require(data, "agent", "judgment"))
        factuality = data.get("factuality")
        if factuality is not None and not isinstance(factuality, bool):
            raise InputError(f"judgment factuality must be true, false or null, got {factuality!r}")
        confidence = _optional_float(data.get("confidence", 0.0), "judgment confidence")
        return cls(
            agent=agent,
            factuality=factuality,
            confidence=confidence if confidence is not None else 0.0,
            rationale=str(data.get("rationale") or ""),
            evidence=tuple(Evidence.from_dict(e) for e in _list(data.get("evidence"), "judgment evidence")),
            error=_optional_str(data.get("error"), "judgment error"),
            signals=_signals(data.get("signals")),
        )


def _signals(data: Any) -> tuple[tuple[str, float], ...]:
    if data is None:
        return ()
    if not isinstance(data, Mapping):
        raise InputError(f"judgment signals must be an object, got {type(data).__name__}")
    signals = []
    for name, value in data.items():
        number = _optional_float(value, f"judgment signal {name}")
        if number is not None:
            signals.append((str(name), number))
    return tuple(signals)


WEAK_BELOW = 0.5  # a verdict is weak when |2 * score - 1| is below this: a score between 0.25 and 0.75


def strength(score: float | None) -> str | None:
    """``"weak"`` or ``"strong"``: how far a claim's score stands from 0.5 (undecided), ``None`` without a score.

    Weak when ``|2 * score - 1| < 0.5``, a score between 0.25 and 0.75. For one calibrated agent the
    score is the chance the claim is true, so a weak verdict is one less than 75% likely to be right.
    The text report, the JSON (``"strength"``) and the browser extension all use this one rule."""
    if score is None:
        return None
    return "weak" if abs(2 * score - 1) < WEAK_BELOW else "strong"


@dataclass(frozen=True)
class ClaimVerdict:
    """A claim, every agent's judgment of it, and the scorer's score and label.

    ``score`` is ``None`` and ``label`` UNVERIFIED when every agent abstained.
    """

    claim: Claim
    judgments: tuple[Judgment, ...]
    score: float | None = None
    label: Label = Label.UNVERIFIED
    notes: tuple[str, ...] = ()  # what a reader should know about this verdict (its evidence is of another time)
    deliberation: Deliberation | None = None  # how the agents settled it, when a deliberation policy ran

    @property
    def verified(self) -> bool:
        """True when at least one agent gave a verdict."""
        return self.score is not None

    @property
    def strength(self) -> str | None:
        """``"weak"`` / ``"strong"`` (:func:`strength`), ``None`` when the claim has no score."""
        return strength(self.score)

    def to_dict(self) -> dict[str, Any]:
        """The claim verdict's JSON fields (the claim's own fields are inlined)."""
        return {
            **self.claim.to_dict(),
            "label": str(self.label),
            "score": self.score,
            "strength": self.strength,
            "judgments": [j.to_dict() for j in self.judgments],
            "notes": list(self.notes),
            **({"deliberation": self.deliberation.to_dict()} if self.deliberation is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClaimVerdict:
        """Read a claim verdict; ``score`` and ``label`` may be missing (recorded, not yet scored)."""
        judgments = _list(data.get("judgments") if isinstance(data, Mapping) else None, "claim judgments")
        label = data.get("label")
        return cls(
            claim=Claim.from_dict(data),
            judgments=tuple(Judgment.from_dict(j) for j in judgments),
            score=_optional_float(data.get("score"), "claim score"),
            label=Label.parse(label) if label is not None else Label.UNVERIFIED,
            notes=tuple(str(n) for n in _list(data.get("notes"), "claim notes")),
            deliberation=Deliberation.from_dict(data["deliberation"]) if data.get("deliberation") else None,
        )


@dataclass(frozen=True)
class Critique:
    """What a supporting role said of the leading verdict, never a verdict itself: the weak point it names,
    the counter-evidence it presents, hints (a collaborator's or an expert's) and a query to search next."""

    weak_point: str
    counter: tuple[Evidence, ...] = ()
    hints: tuple[str, ...] = ()
    query: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "weak_point": self.weak_point,
            "counter": [e.to_dict() for e in self.counter],
            "hints": list(self.hints),
            "query": self.query,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Critique:
        return cls(
            weak_point=str(data.get("weak_point") or ""),
            counter=tuple(Evidence.from_dict(e) for e in _list(data.get("counter"), "critique counter")),
            hints=tuple(str(h) for h in _list(data.get("hints"), "critique hints")),
            query=_optional_str(data.get("query"), "critique query"),
        )


@dataclass(frozen=True)
class StepCost:
    """What one deliberation step spent: agent calls (retrievals, verifier readings and model calls), passages
    read, model calls and tokens, dollars and seconds."""

    calls: int = 0
    passages: int = 0
    llm_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "passages": self.passages,
            "llm_calls": self.llm_calls,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "seconds": self.seconds,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> StepCost:
        data = data or {}
        try:
            return cls(
                calls=int(data.get("calls") or 0),
                passages=int(data.get("passages") or 0),
                llm_calls=int(data.get("llm_calls") or 0),
                tokens=int(data.get("tokens") or 0),
                cost_usd=float(data.get("cost_usd") or 0.0),
                seconds=float(data.get("seconds") or 0.0),
            )
        except (TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"deliberation step cost must hold numbers: {exc}") from None


DELIBERATION_ACTIONS = ("verify", "challenge", "support", "revise", "arbitrate", "diversify", "stop")


@dataclass(frozen=True)
class DeliberationStep:
    """One recorded step of a deliberation: the ``action``, the ``role`` that took it ("devil's advocate",
    "collaborator", "expert", "leader", "decision-maker", "verifier") and its ``actor`` (an agent's name or a
    model), and what it produced: a ``judgment`` (verify, revise, arbitrate) or a ``critique`` (challenge,
    support), the ``query`` it searched and the new ``evidence`` it found.

    ``inputs`` names what the step was shown and ``relied_on`` what its ruling says it rested on, as ids
    (``judgment:web``, ``evidence:web#2``, ``critique:1``); ``replaces`` the agent whose judgment the step's
    judgment takes the place of; ``applied`` is false for a ruling that was recorded but did not overturn the
    standing answer (it was less sure). ``error`` says why a step failed (the deliberation then stopped)."""

    number: int
    action: str
    role: str
    actor: str
    judgment: Judgment | None = None
    critique: Critique | None = None
    query: str | None = None
    evidence: tuple[Evidence, ...] = ()
    inputs: tuple[str, ...] = ()
    relied_on: tuple[str, ...] = ()
    replaces: str | None = None
    cost: StepCost = StepCost()
    error: str | None = None
    applied: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "action": self.action,
            "role": self.role,
            "actor": self.actor,
            "judgment": self.judgment.to_dict() if self.judgment is not None else None,
            "critique": self.critique.to_dict() if self.critique is not None else None,
            "query": self.query,
            "evidence": [e.to_dict() for e in self.evidence],
            "inputs": list(self.inputs),
            "relied_on": list(self.relied_on),
            "replaces": self.replaces,
            "cost": self.cost.to_dict(),
            "error": self.error,
            "applied": self.applied,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DeliberationStep:
        judgment, critique = data.get("judgment"), data.get("critique")
        return cls(
            number=_step_number(_require(data, "number", "deliberation step")),
            action=str(_require(data, "action", "deliberation step")),
            role=str(data.get("role") or ""),
            actor=str(data.get("actor") or ""),
            judgment=Judgment.from_dict(judgment) if judgment else None,
            critique=Critique.from_dict(critique) if critique else None,
            query=_optional_str(data.get("query"), "deliberation step query"),
            evidence=tuple(Evidence.from_dict(e) for e in _list(data.get("evidence"), "deliberation step evidence")),
            inputs=tuple(str(i) for i in _list(data.get("inputs"), "deliberation step inputs")),
            relied_on=tuple(str(i) for i in _list(data.get("relied_on"), "deliberation step relied_on")),
            replaces=_optional_str(data.get("replaces"), "deliberation step replaces"),
            cost=StepCost.from_dict(data.get("cost")),
            error=_optional_str(data.get("error"), "deliberation step error"),
            applied=bool(data.get("applied", True)),
        )


def _step_number(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"deliberation step number must be a whole number, got {value!r}")
    return value


@dataclass(frozen=True)
class Deliberation:
    """How the agents settled one claim (``claim.deliberation``): the ``policy`` and its options, the
    ``state`` it read after the first round, why it deliberated (``gated``; ``None``: it stopped at the first
    round), its ``steps`` and why it ``stopped``. ``replaced`` keeps the first-round judgments a step took
    the place of, so the first round can be rebuilt from any record; ``replayed`` marks a record re-scored
    from a saved check, whose steps were kept, not run again."""

    policy: str
    options: Mapping[str, Any] = field(default_factory=dict)
    state: Mapping[str, Any] = field(default_factory=dict)
    gated: str | None = None
    steps: tuple[DeliberationStep, ...] = ()
    stopped: str = ""
    replaced: tuple[Judgment, ...] = ()
    replayed: bool = False

    @property
    def deliberated(self) -> bool:
        """True when the gate sent the claim on past the first round."""
        return self.gated is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "options": dict(self.options),
            "state": dict(self.state),
            "gated": self.gated,
            "steps": [s.to_dict() for s in self.steps],
            "stopped": self.stopped,
            "replaced": [j.to_dict() for j in self.replaced],
            "replayed": self.replayed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Deliberation:
        if not isinstance(data, Mapping):
            raise InputError(f"claim deliberation must be an object, got {type(data).__name__}")
        options, state = data.get("options") or {}, data.get("state") or {}
        if not isinstance(options, Mapping) or not isinstance(state, Mapping):
            raise InputError("deliberation options and state must be objects")
        return cls(
            policy=str(_require(data, "policy", "deliberation")),
            options=dict(options),
            state=dict(state),
            gated=_optional_str(data.get("gated"), "deliberation gated"),
            steps=tuple(DeliberationStep.from_dict(s) for s in _list(data.get("steps"), "deliberation steps")),
            stopped=str(data.get("stopped") or ""),
            replaced=tuple(Judgment.from_dict(j) for j in _list(data.get("replaced"), "deliberation replaced")),
            replayed=bool(data.get("replayed", False)),
        )


@dataclass(frozen=True)
class Usage:
    """What a check cost: calls, cache hits, errors and wall time.

    ``calls``, ``cache_hits`` and ``errors`` are keyed by component
    (``"source:corpus"``, ``"verifier:lexical"``); ``wall_s`` by stage
    (``extract``, ``retrieve``, ``judge``, ``score``, ``total``). Retrieve and
    judge times are summed over calls, which run concurrently, so they can
    exceed ``total``. ``estimated_llm_calls`` of the ``llm_calls`` had their
    tokens (and so their cost) estimated, because the server reported none or
    the call was cut off. ``notes`` says what went differently than asked (a
    fallback). Treat the mappings as read-only.
    """

    calls: Mapping[str, int] = field(default_factory=dict)
    cache_hits: Mapping[str, int] = field(default_factory=dict)
    errors: Mapping[str, int] = field(default_factory=dict)
    wall_s: Mapping[str, float] = field(default_factory=dict)
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    search_calls: int = 0
    cost_usd: float = 0.0
    notes: tuple[str, ...] = ()
    estimated_llm_calls: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The usage's JSON fields."""
        return {
            "calls": dict(self.calls),
            "cache_hits": dict(self.cache_hits),
            "errors": dict(self.errors),
            "wall_s": dict(self.wall_s),
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "estimated_llm_calls": self.estimated_llm_calls,
            "search_calls": self.search_calls,
            "cost_usd": self.cost_usd,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Usage:
        """Read usage; a missing or empty object gives an empty usage."""
        data = _mapping(data, "usage")
        try:
            return cls._from_mapping(data)
        except (TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"usage has a malformed field: {exc}") from None

    @classmethod
    def _from_mapping(cls, data: Mapping[str, Any]) -> Usage:
        return cls(
            calls={str(k): int(v) for k, v in (data.get("calls") or {}).items()},
            cache_hits={str(k): int(v) for k, v in (data.get("cache_hits") or {}).items()},
            errors={str(k): int(v) for k, v in (data.get("errors") or {}).items()},
            wall_s={str(k): float(v) for k, v in (data.get("wall_s") or {}).items()},
            llm_calls=int(data.get("llm_calls", 0)),
            prompt_tokens=int(data.get("prompt_tokens", 0)),
            completion_tokens=int(data.get("completion_tokens", 0)),
            estimated_llm_calls=int(data.get("estimated_llm_calls", 0)),
            search_calls=int(data.get("search_calls", 0)),
            cost_usd=float(data.get("cost_usd", 0.0)),
            notes=tuple(str(n) for n in _list(data.get("notes"), "usage notes")),
        )


@dataclass(frozen=True)
class JudgingAgent:
    """One agent that judged a check, as a reader should know it: its ``name``, its ``source`` and
    ``verifier``, and, for an agent searching a fixed collection, that ``corpus`` (a name or a path)
    and its ``domain`` (``"biomedical"``; ``None``: unknown, a user's own corpus, or no corpus at all)."""

    name: str
    source: str
    verifier: str
    corpus: str | None = None
    domain: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The agent's JSON fields."""
        return {
            "name": self.name,
            "source": self.source,
            "verifier": self.verifier,
            "corpus": self.corpus,
            "domain": self.domain,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgingAgent:
        """Read an agent of ``judged_by``."""
        return cls(
            name=str(_require(data, "name", "judged_by agent")),
            source=str(data.get("source") or ""),
            verifier=str(data.get("verifier") or ""),
            corpus=_optional_str(data.get("corpus"), "judged_by agent corpus"),
            domain=_optional_str(data.get("domain"), "judged_by agent domain"),
        )


@dataclass(frozen=True)
class JudgedBy:
    """Who judged a check: the ``profile`` its agents came from (``None`` when they were handed in
    without one), each agent, and a ``caution`` for the reader (one sentence: the agents search only
    a collection of one domain, and what to use instead), ``None`` when there is nothing to warn about."""

    profile: str | None
    agents: tuple[JudgingAgent, ...]
    caution: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``judged_by`` JSON object."""
        return {"profile": self.profile, "agents": [a.to_dict() for a in self.agents], "caution": self.caution}

    @classmethod
    def from_dict(cls, data: Any) -> JudgedBy | None:
        """Read ``judged_by`` (``None`` for JSON ``null`` or a check recorded before it existed)."""
        if data is None:
            return None
        data = _mapping(data, "judged_by")
        return cls(
            profile=_optional_str(data.get("profile"), "judged_by profile"),
            agents=tuple(
                JudgingAgent.from_dict(_mapping(a, "judged_by agent"))
                for a in _list(data.get("agents"), "judged_by agents")
            ),
            caution=_optional_str(data.get("caution"), "judged_by caution"),
        )


TOO_LONG_RULE = "too_long"  # the rule of a claim over factcheck.pipeline.extract.MAX_CLAIM_CHARS, skipped unjudged


def decided(verified: int, claims: int, skipped: int) -> str:
    """What a text's label stands on, "2 of 7 claims verified, 1 sentence skipped": the same words in
    every output (the report's header, the batch report; the extension's popup says them in JavaScript)."""
    said = f"{verified} of {plural(claims, 'claim')} verified"
    return f"{said}, {plural(skipped, 'sentence')} skipped" if skipped else said


@dataclass(frozen=True)
class TextVerdict:
    """The result of checking one text: its claims' verdicts, the text score and label."""

    text: str
    claims: tuple[ClaimVerdict, ...]
    score: float | None = None
    label: Label = Label.UNVERIFIED
    scorer: str = ""
    scorer_options: Mapping[str, Any] = field(default_factory=dict)
    labels: str = ""
    usage: Usage = field(default_factory=Usage)
    # ISO 639-1 code of the text's language, None when undetected (too short, unsure) or recorded before
    # detection existed: an added field, so factcheck/1 readers old and new read either JSON.
    language: str | None = None
    # Sentences the extractor did not check (questions, opinions, ...) and why: an added field, empty when
    # the claims were given or the JSON was recorded before it existed.
    skipped: tuple[SkippedSentence, ...] = ()
    # When the text was written (ISO 8601; the time of the check unless given): claims' relative times are
    # resolved against it. An added field, None in JSON recorded before it existed.
    as_of: str | None = None
    # Which profile and agents judged, over which corpus, and the caution a reader needs (a corpus of one
    # domain): an added field, None when the verdict was not made by a Checker or was recorded before it existed.
    judged_by: JudgedBy | None = None

    @property
    def strength(self) -> str | None:
        """A TRUE or FALSE text is as sure as its least sure claim: ``"weak"`` when one of its scored claims is
        weak (:func:`strength`) or one of its claims could not be verified (what it says is then only partly
        known), else ``"strong"``; ``None`` for any other label."""
        if self.label not in (Label.TRUE, Label.FALSE):
            return None
        if any(c.strength == "weak" or not c.verified for c in self.claims):
            return "weak"
        return "strong"

    @property
    def claims_verified(self) -> int:
        """How many of the text's claims got a verdict (the rest are UNVERIFIED)."""
        return sum(c.verified for c in self.claims)

    @property
    def decided(self) -> str:
        """What was decided, for a reader: "2 of 7 claims verified", and ", 1 sentence skipped" when the
        extractor skipped any (an opinion, a question)."""
        return decided(self.claims_verified, len(self.claims), len(self.skipped))

    def to_dict(self) -> dict[str, Any]:
        """The project's stable JSON for a checked text (``schema: factcheck/1``)."""
        return {
            "schema": SCHEMA,
            "text": self.text,
            "label": str(self.label),
            "score": self.score,
            "strength": self.strength,
            "claims_verified": self.claims_verified,
            "claims_total": len(self.claims),
            "sentences_skipped": len(self.skipped),
            "scorer": self.scorer,
            "scorer_options": dict(self.scorer_options),
            "labels": self.labels,
            "language": self.language,
            "as_of": self.as_of,
            "judged_by": self.judged_by.to_dict() if self.judged_by is not None else None,
            "claims": [c.to_dict() for c in self.claims],
            "skipped": [s.to_dict() for s in self.skipped],
            "usage": self.usage.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TextVerdict:
        """Read a checked text. Scores and labels may be missing; fields we do not know are ignored."""
        schema = data.get("schema", SCHEMA) if isinstance(data, Mapping) else None
        if schema != SCHEMA:
            raise InputError(f"unsupported schema {schema!r} (this version reads {SCHEMA!r})")
        claims = data.get("claims")
        if not isinstance(claims, list):
            raise InputError("a checked text needs a 'claims' list")
        if not all(isinstance(c, Mapping) for c in claims):
            raise InputError("each of a checked text's 'claims' must be a JSON object")
        label = data.get("label")
        return cls(
            text=str(_require(data, "text", "checked text")),
            claims=tuple(ClaimVerdict.from_dict(c) for c in claims),
            score=_optional_float(data.get("score"), "text score"),
            label=Label.parse(label) if label is not None else Label.UNVERIFIED,
            scorer=str(data.get("scorer") or ""),
            scorer_options=dict(_mapping(data.get("scorer_options"), "scorer_options")),
            labels=str(data.get("labels") or ""),
            usage=Usage.from_dict(data.get("usage")),
            language=_optional_str(data.get("language"), "text language"),
            skipped=tuple(SkippedSentence.from_dict(x) for x in _list(data.get("skipped"), "skipped sentences")),
            as_of=_optional_str(data.get("as_of"), "text as_of"),
            judged_by=JudgedBy.from_dict(data.get("judged_by")),
        )
