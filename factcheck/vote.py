"""The trust-weighted, grouped vote of PAMAS (papers/000, eq. 5), as a claim score: what the ``pamas`` scorer
scores and what trust learning (:mod:`factcheck.trust`) asks of the team. Its own module so that neither of those
imports the other for it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from factcheck.errors import ConfigError
from factcheck.types import Judgment


@lru_cache(maxsize=32)
def parse_groups(text: str) -> Mapping[str, str]:
    """``"retrieval=a,b;model=c"`` -> ``{"a": "retrieval", "b": "retrieval", "c": "model"}``."""
    groups: dict[str, str] = {}  # cached: callers must not change the result
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, sep, members = part.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"pamas: groups look like name=agent,agent;name=agent, got {part!r}")
        for member in filter(None, (m.strip() for m in members.split(","))):
            groups[member] = name.strip()
    return groups


def pamas_score(
    votes: Sequence[Judgment], weights: Mapping[str, float], groups: Mapping[str, str], bare: bool
) -> float:
    """The claim score of the equations in :mod:`factcheck.scoring.pamas`: each coordinator group's
    trust-weighted mean of its members' signed scores (``bare``: their votes, +1 / -1), weighed by the group's
    mean trust, mapped to [0, 1]. Agents of weight 0 are ignored, unless all are."""
    if all(weights.get(j.agent, 1.0) <= 0 for j in votes):
        weights = {}  # nobody is trusted: fall back to equal weights rather than to no answer
    by_group: dict[str, list[tuple[float, float]]] = {}
    for judgment in votes:
        alpha = weights.get(judgment.agent, 1.0)
        if alpha <= 0:
            continue
        x = (1.0 if judgment.factuality else -1.0) if bare else judgment.signed_score
        by_group.setdefault(groups.get(judgment.agent, judgment.agent), []).append((alpha, x))
    numerator = denominator = 0.0
    for members in by_group.values():
        total = sum(alpha for alpha, _ in members)
        s_c = sum(alpha * x for alpha, x in members) / total
        beta_c = total / len(members)
        numerator += beta_c * s_c
        denominator += beta_c
    return (numerator / denominator + 1) / 2
