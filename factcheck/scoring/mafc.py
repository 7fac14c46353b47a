"""The MAFC credibility score (Ito et al., papers/002; recovered from the authors'
``dependencies/post_process.py`` and checked against their saved scores).

Per claim, with ``w_i`` the signed scores of the agents that did not abstain,
``n+`` / ``n-`` the numbers judging true / false and ``n = n+ + n-``::

    S+ = log2(n+ + 1) * mean(w_i | true)       (0 if n+ = 0)       paper Eq. 1
    S- = log2(n- + 1) * mean(w_i | false)      (0 if n- = 0)       paper Eq. 2
    V  = S+ + S-                                                   (Eq. 3 constrains S+, S-)
    s  = (V + U) / (2 U)                       the normalisation, recovered from the authors' code

The log damps agreement: a second agreeing agent adds less than the first.
``U`` bounds ``|V|``: ``natural`` is ``log2(n + 1)``, the largest ``|V|`` can
be, so unanimous certainty scores exactly 1 (or 0) as the paper's prose says;
``reference`` is ``log2(n + 1) * (n + 1) / n``, what the authors' code ran,
which keeps scores inside ``[1/2 - n/(2(n+1)), 1/2 + n/(2(n+1))]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Literal

from factcheck.errors import ConfigError
from factcheck.plugin import Scorer
from factcheck.types import Judgment

Bounds = Literal["natural", "reference"]


def damped_side(signed: Sequence[float]) -> float:
    """S+ (Eq. 1) or S- (Eq. 2): ``log2(k + 1) * mean(w)`` over one side's ``k`` signed scores; 0 for no votes."""
    if not signed:
        return 0.0
    return math.log2(len(signed) + 1) * fmean(signed)


def mafc_bound(n: int, bounds: Bounds = "natural") -> float:
    """``U``: ``log2(n + 1)`` (natural) or ``log2(n + 1) * (n + 1) / n`` (reference)."""
    natural = math.log2(n + 1)
    return natural if bounds == "natural" else natural * (n + 1) / n


def mafc_score(signed: Sequence[float], bounds: Bounds = "natural") -> float:
    """The MAFC claim score ``(V + U) / (2U)`` with ``V = S+ + S-``; ``-0.0`` is a false vote."""
    if not signed:
        raise ValueError("mafc_score needs at least one signed score")
    true_side = [w for w in signed if math.copysign(1.0, w) > 0]
    false_side = [w for w in signed if math.copysign(1.0, w) < 0]
    v = damped_side(true_side) + damped_side(false_side)
    u = mafc_bound(len(signed), bounds)
    return (v + u) / (2 * u)


@dataclass(frozen=True)
class MAFCScorer(Scorer):
    """Log-damped MAFC score; the text score is the mean of its claims' scores."""

    name = "mafc"
    bounds: str = "natural"

    def __post_init__(self) -> None:
        super().__post_init__()
        # By hand, not setting(choices=...): the CLI's tests pin this wording, not the shared "unknown bounds".
        if self.bounds not in ("natural", "reference"):
            raise ConfigError(f"mafc: bounds must be 'natural' or 'reference', got {self.bounds!r}")

    def score_votes(self, votes: Sequence[Judgment]) -> float:
        return mafc_score([j.signed_score for j in votes], self.bounds)  # type: ignore[arg-type]
