"""The state a deliberation policy reads (:class:`factcheck.plugin.DeliberationState`): computed from one
claim's judgments and their evidence.

Definitions (docs/deliberation.md; ECMR Table 4, LASE eq. 5-7): V are the judgments that did not abstain,
alpha_j their agents' trust weights (1 without a trust file), c_j their confidences.

- ``concentration``: the leading answer's share of trust-weighted confidence, sum over agreeing alpha_j c_j
  over sum alpha_j c_j (ECMR's answer concentration g_t). 1 when every vote agrees.
- ``independent_concentration`` / ``independent_supporters``: the same after agreeing agents whose evidence
  is near-duplicate are merged (:mod:`factcheck.independence`): agreement resting on one page counts once.
- ``support_entropy``: the normalised entropy of the leading answer's support over its independent
  clusters (ECMR's support diversity); 0 with fewer than two supporters.
- ``independence``: the mean pairwise dissimilarity of the supporters' evidence (0 for a shared URL), or
  ``None`` when fewer than two supporters cite evidence: unknown, never taken for independent.
- ``contradiction``: confident support on both sides, min(max c over TRUE, max c over FALSE).
- ``leader`` and its certainty: the most trusted agent that gave a verdict (then the configured order); its
  confidence and, where its verifier measured them, ``lp_min`` (least token or class log-probability) and
  ``h_max`` (largest entropy, nats).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations

from factcheck.independence import DEFAULT_THRESHOLD, dependent_groups, evidence_overlap, normalise_url
from factcheck.plugin import DeliberationState
from factcheck.types import Judgment


def _weighted(votes: Sequence[Judgment], alpha: Mapping[str, float]) -> dict[bool, float]:
    mass = {True: 0.0, False: 0.0}
    for j in votes:
        assert j.factuality is not None
        mass[j.factuality] += alpha.get(j.agent, 1.0) * j.confidence
    if not any(mass.values()):  # every confidence 0 (a CSV's -0.0 rows): the weights alone
        for j in votes:
            assert j.factuality is not None
            mass[j.factuality] += alpha.get(j.agent, 1.0)
    return mass


def concentration(votes: Sequence[Judgment], alpha: Mapping[str, float]) -> tuple[bool | None, float]:
    """The leading answer and its share of trust-weighted confidence (support wins a tie)."""
    if not votes:
        return None, 0.0
    mass = _weighted(votes, alpha)
    total = mass[True] + mass[False]
    if total <= 0:
        return None, 0.0
    leading = mass[True] >= mass[False]
    return leading, mass[leading] / total


def independent_votes(votes: Sequence[Judgment], threshold: float = DEFAULT_THRESHOLD) -> list[list[Judgment]]:
    """The votes grouped into independent clusters: agreeing agents with near-duplicate evidence together."""
    grouped = dependent_groups(votes, threshold)
    member = {i for group in grouped for i in group}
    clusters = [[votes[i] for i in group] for group in grouped]
    clusters += [[votes[i]] for i in range(len(votes)) if i not in member]
    return clusters


def support_entropy(clusters: Sequence[Sequence[Judgment]], alpha: Mapping[str, float]) -> float:
    """Normalised entropy of the support over independent clusters: 0 when one cluster holds it all."""
    supporters = sum(len(c) for c in clusters)
    if supporters < 2 or len(clusters) < 2:
        return 0.0
    weights = [sum(alpha.get(j.agent, 1.0) for j in c) for c in clusters]
    total = sum(weights)
    if total <= 0:
        return 0.0
    h = -sum(w / total * math.log(w / total) for w in weights if w > 0)
    return h / math.log(supporters)


def evidence_independence(supporters: Sequence[Judgment]) -> float | None:
    """The mean pairwise dissimilarity of the supporters' evidence (0 for a pair citing one URL), or
    ``None`` when fewer than two supporters cite any."""
    cited = [j for j in supporters if j.evidence]
    if len(cited) < 2:
        return None
    gaps = []
    for a, b in combinations(cited, 2):
        overlap = evidence_overlap(a.evidence, b.evidence)
        gaps.append(0.0 if overlap.shared_url is not None else 1.0 - overlap.similarity)
    return sum(gaps) / len(gaps)


def contradiction(votes: Sequence[Judgment]) -> float:
    """Confident support on both sides: the smaller of the two sides' highest confidences."""
    best = {True: 0.0, False: 0.0}
    for j in votes:
        assert j.factuality is not None
        best[j.factuality] = max(best[j.factuality], j.confidence)
    return min(best.values())


def leader_of(votes: Sequence[Judgment], alpha: Mapping[str, float], order: Sequence[str]) -> Judgment | None:
    """The most trusted vote (ties: the configured order)."""
    if not votes:
        return None
    rank = {name: i for i, name in enumerate(order)}
    return min(votes, key=lambda j: (-alpha.get(j.agent, 1.0), rank.get(j.agent, len(rank))))


def state_of(
    judgments: Sequence[Judgment],
    agents: Sequence[str],
    alpha: Mapping[str, float] | None = None,
    *,
    leader: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    steps_left: int = 0,
    calls_left: int = 0,
) -> DeliberationState:
    """The state of a claim judged by ``judgments`` (``agents``: every configured agent, in order).

    ``leader`` names the agent whose judgment the state reads as the leader's (LASE's fixed leader); by
    default the most trusted that gave a verdict."""
    alpha = alpha or {}
    votes = [j for j in judgments if not j.abstained]
    leading, g = concentration(votes, alpha)
    supporters = [j for j in votes if j.factuality == leading]
    clusters = independent_votes(supporters, threshold) if supporters else []
    merged = [max(c, key=lambda j: j.confidence) for c in clusters]
    _, g_ind = concentration(merged + [j for j in votes if j.factuality != leading], alpha)
    held = {j.agent: j for j in judgments}
    head = held.get(leader) if leader is not None else leader_of(votes, alpha, agents)
    head_confidence = head.confidence if head is not None and not head.abstained else 0.0
    return DeliberationState(
        agents=len(agents),
        asked=len(judgments),
        votes=len(votes),
        leading=leading,
        concentration=g,
        independent_concentration=g_ind,
        independent_supporters=len(clusters),
        support_entropy=support_entropy(clusters, alpha),
        independence=evidence_independence(supporters),
        contradiction=contradiction(votes),
        leader=head.agent if head is not None else None,
        leader_confidence=head_confidence,
        lp_min=head.signal("lp_min") if head is not None else None,
        h_max=head.signal("h_max") if head is not None else None,
        counter=head.signal("counter") if head is not None else None,
        steps_left=steps_left,
        calls_left=calls_left,
    )


def seen_key(url: str | None, text: str) -> tuple[str, str]:
    """What makes two passages the same passage, for excluding what a deliberation has already read: the
    page and the text, spacing and case folded (two passages of one page are two passages)."""
    return normalise_url(url) or "", " ".join(text.split()).casefold()
