"""PAMAS-style trust-weighted aggregation (papers/000: hierarchical perspective aggregation).

Agents sit under coordinators (groups; PAMAS puts retrieval-based and
model-based agents under separate ones: ``groups=PAPER_GROUPS``; by default
each agent is its own coordinator, a flat trust-weighted vote, which measured
better). With ``alpha_j`` the trust weight of agent ``j`` (from a
trust file made by ``factcheck calibrate``; 1 without one) and ``x_j`` its
signed score (``votes=true``: its bare vote, +1 / -1, as in eq. 5)::

    coordinator c:   s_c  = sum_j alpha_j x_j / sum_j alpha_j          (eq. 5, as a score)
    decision maker:  S    = sum_c beta_c s_c / sum_c beta_c,  beta_c = mean alpha_j of c's voters
    claim score      (S + 1) / 2

The coordinator's decision ``1[sum alpha_j (2 d_j - 1) > 0]`` of eq. 5 is the
sign of ``s_c`` when ``votes=true``. Grouping stops a crowd of similar agents
(three web searches quoting one page) from outvoting another kind of evidence:
each group counts by its trust, not by its size. The optional LLM decision-maker
of eq. 6 is not implemented.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from factcheck.errors import ConfigError
from factcheck.plugin import Scorer
from factcheck.trust import WEIGHTINGS, Trust
from factcheck.types import Judgment
from factcheck.vote import pamas_score, parse_groups

# Every agent its own coordinator: a flat trust-weighted vote. Grouping retrieval against model
# agents, as PAMAS does, measured worse on the SciFact replay (docs/aggregation.md): a coordinator's
# trust is the mean of its members', so a weak member dilutes a strong one.
DEFAULT_GROUPS = ""
PAPER_GROUPS = "retrieval=Google,Wikipedia,web,wikipedia,serper,serpapi,corpus,given;model=LLM,selfcheck"


@lru_cache(maxsize=16)
def _load_trust(path: str, mtime_ns: int) -> Trust:
    return Trust.load(path)


def load_trust(path: str) -> Trust:
    """The trust file at ``path`` (re-read when it changes); no trust at all for ``""``."""
    if not path:
        return Trust()
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigError(f"pamas: trust file not found: {path}")
    return _load_trust(str(file), file.stat().st_mtime_ns)


@dataclass(frozen=True)
class PAMASScorer(Scorer):
    """Trust-weighted, grouped aggregation. Options: ``trust`` (trust file from ``factcheck calibrate``),
    ``weighting`` (log_odds | pamas), ``groups`` (``name=agent,agent;name=agent``), ``votes`` (bare votes)."""

    name = "pamas"
    trust: str = ""
    weighting: str = "log_odds"
    groups: str = DEFAULT_GROUPS
    votes: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        # By hand, not setting(choices=...): tests pin this wording, not the shared "unknown weighting".
        if self.weighting not in WEIGHTINGS:
            raise ConfigError(f"pamas: weighting must be one of {', '.join(WEIGHTINGS)}, got {self.weighting!r}")
        parse_groups(self.groups)
        load_trust(self.trust)

    def score_votes(self, votes: Sequence[Judgment]) -> float:
        trust = load_trust(self.trust)
        weights = {j.agent: trust.weight(j.agent, self.weighting) for j in votes}
        return pamas_score(votes, weights, parse_groups(self.groups), self.votes)
