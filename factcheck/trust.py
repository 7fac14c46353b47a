"""How far each agent can be trusted, learned from labelled, recorded judgments.

``factcheck calibrate`` writes a trust file; the ``pamas`` scorer and trust
routing read it. Per agent it holds the accuracy of its non-abstaining
judgments, its abstention rate, and two weights:

- ``log_odds = log(acc / (1 - acc))`` (Laplace-smoothed accuracy): the optimal
  weight of an independent voter with that accuracy (Nitzan & Paroush, 1982);
  clamped at 0, so an agent worse than chance is ignored rather than inverted;
- ``pamas``: the PAMAS trust update (papers/000, eq. 15), run over the samples
  in order from alpha = 1: ``alpha <- (1 - a) alpha + a (r + acc)``, with ``r``
  1 when the agent was right on the sample and 0 when wrong (no LLM reflection),
  ``acc`` its accuracy so far, and learning rate ``a``.

An agent the file does not know gets weight 1.

``factcheck calibrate --gate`` adds an optional ``"gate"`` object: the deliberation gates' fitted
thresholds per policy (:func:`gate_thresholds`). :meth:`Trust.from_dict` reads only ``agents``, so a
reader of trust alone ignores it.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factcheck.errors import ConfigError, InputError
from factcheck.types import Judgment, TextVerdict

TRUST_SCHEMA = "factcheck-trust/1"
WEIGHTINGS = ("log_odds", "pamas")
GATE = "gate"  # the optional key of the fitted deliberation gate thresholds (factcheck calibrate --gate)


@dataclass(frozen=True)
class AgentTrust:
    """What the labelled data says about one agent."""

    judged: int
    correct: int
    abstained: int
    pamas: float

    @property
    def accuracy(self) -> float:
        """Laplace-smoothed accuracy of the agent's verdicts: (correct + 1) / (judged + 2)."""
        return (self.correct + 1) / (self.judged + 2)

    @property
    def abstention(self) -> float:
        """Share of claims on which the agent gave no verdict."""
        total = self.judged + self.abstained
        return self.abstained / total if total else 0.0

    @property
    def log_odds(self) -> float:
        """``max(0, log(acc / (1 - acc)))``."""
        return max(0.0, math.log(self.accuracy / (1 - self.accuracy)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "judged": self.judged,
            "correct": self.correct,
            "abstained": self.abstained,
            "accuracy": round(self.accuracy, 6),
            "abstention": round(self.abstention, 6),
            "log_odds": round(self.log_odds, 6),
            "pamas": self.pamas,
        }


@dataclass(frozen=True)
class Trust:
    """Trust of every agent seen in the labelled data."""

    agents: Mapping[str, AgentTrust] = field(default_factory=dict)

    def weight(self, agent: str, weighting: str = "log_odds") -> float:
        """The agent's weight under ``weighting`` (``log_odds`` or ``pamas``); 1 for an unknown agent."""
        if weighting not in WEIGHTINGS:
            raise ConfigError(f"weighting must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
        known = self.agents.get(agent)
        if known is None:
            return 1.0
        return known.log_odds if weighting == "log_odds" else known.pamas

    def to_dict(self) -> dict[str, Any]:
        return {"schema": TRUST_SCHEMA, "agents": {name: t.to_dict() for name, t in self.agents.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trust:
        if data.get("schema") != TRUST_SCHEMA:
            raise InputError(f"not a trust file (schema {data.get('schema')!r}, expected {TRUST_SCHEMA!r})")
        try:
            agents = {
                str(name): AgentTrust(int(t["judged"]), int(t["correct"]), int(t["abstained"]), float(t["pamas"]))
                for name, t in dict(data["agents"]).items()
            }
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed trust file: {exc}") from None
        return cls(agents)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Trust:
        try:
            text = Path(path).read_text(encoding="utf-8")
            if not text.strip():
                raise InputError(f"{path} is empty: write a trust file with `factcheck calibrate`")
            return cls.from_dict(json.loads(text))
        except FileNotFoundError:
            raise ConfigError(f"trust file not found: {path}") from None
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: not valid JSON ({exc.msg})") from None


def gate_thresholds(path: str | Path) -> dict[str, dict[str, float]]:
    """The deliberation gate thresholds ``factcheck calibrate --gate`` fitted, as each policy's options by
    policy name (``{"lase": {"tau_conf": 0.86}, "ecmr": {"tau_confidence": 0.71}}``), for
    ``policy.configure(**thresholds[policy.name])``; empty when the trust file has no ``"gate"`` object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"trust file not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("schema") != TRUST_SCHEMA:
        raise InputError(f"{path}: not a trust file (expected schema {TRUST_SCHEMA!r})")
    gate = data.get(GATE)
    if gate is None:
        return {}
    try:
        return {
            str(name): {str(k): float(v) for k, v in dict(fit["options"]).items()}
            for name, fit in dict(gate["policies"]).items()
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{path}: malformed gate object: {exc}") from None


def claim_cases(records: Sequence[Mapping[str, Any]]) -> list[tuple[int, tuple[Judgment, ...], bool]]:
    """``(record index, judgments, claim is TRUE)`` for every claim with a TRUE / FALSE gold label.

    A claim's gold is its own ``gold`` field, else (for a one-claim text) the text's ``gold``.
    """
    cases = []
    for index, record in enumerate(records):
        verdict = TextVerdict.from_dict(record)
        raw_claims = record.get("claims") or []
        for raw, claim in zip(raw_claims, verdict.claims, strict=True):
            gold = raw.get("gold") or (record.get("gold") if len(raw_claims) == 1 else None)
            if gold in ("TRUE", "FALSE"):
                cases.append((index, claim.judgments, gold == "TRUE"))
    return cases


def fold_of_records(n: int, folds: int, seed: int = 0) -> list[int]:
    """The cross-validation fold of each of ``n`` records: shuffled with ``seed``, then dealt round-robin."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    fold = [0] * n
    for position, record in enumerate(order):
        fold[record] = position % folds
    return fold


def learn_trust(records: Sequence[Mapping[str, Any]], *, rate: float = 0.1) -> Trust:
    """Trust learned from labelled, recorded checks (the eval harness's ``judgments.jsonl``)."""
    counts: dict[str, list[int]] = {}  # agent -> [judged, correct, abstained]
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
        # PAMAS eq. 15, with the reflection term r = 1 if right else 0.
        alpha[agent] = (1 - rate) * alpha.get(agent, 1.0) + rate * (float(right) + accuracy_so_far)
    return Trust({a: AgentTrust(c[0], c[1], c[2], alpha.get(a, 1.0)) for a, c in counts.items()})
