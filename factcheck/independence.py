"""Evidence independence: agents that cite the same evidence are one confirmation, not two.

ECMR (papers/001) calls a confident group answer that rests on duplicated or
copied support a *false consensus*. In this project the common case is a web
search snippet copied from the Wikipedia lead: the Google agent and the
Wikipedia agent then agree because they read the same sentence, and the MAFC
score's ``log2(n+ + 1)`` agreement bonus rewards that twice.

Two agents of one claim are *dependent* when

* some passage of one and some passage of the other are near-duplicates: the
  best-matching pair of passages has a 5-word-shingle similarity of at least
  ``threshold`` (default 0.5), or
* they cite the same URL (after light normalisation: scheme, ``www.``, case
  of the host, fragment and a trailing slash are ignored).

Similarity (``measure``):

* ``containment`` (default): ``|A & B| / min(|A|, |B|)`` over the two
  passages' shingle sets, i.e. how much of the *shorter* passage appears in the
  longer one. A Google snippet is a ~25-word window cut out of a ~150-word
  Wikipedia lead, so plain Jaccard is small for exactly the copy we want to
  catch (0.21 in the test fixture) while containment is ~1.
* ``jaccard``: ``|A & B| / |A | B|``, for passages of similar length.

Shingle sets are compared exactly: a claim has at most a few agents with a
handful of passages each, a few hundred shingles per passage, so exact set
intersection costs microseconds and MinHash's approximation buys nothing.

Merging (:func:`merge_dependent`) is done only between agents that *agree*
(same factuality), so disagreement is never hidden; abstentions are left as
they are. Of each group of agreeing, dependent agents the most confident
judgment is kept, unchanged, and the others are dropped, so a scorer counts the
group once. :class:`factcheck.types.Judgment` is not modified (its rationale is
the verifier's words, and re-running the merge must be a no-op): which agents
were merged into which is returned by :func:`merge_map`, and
:func:`apply_independence` records it in the verdict's ``usage.notes``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Literal
from urllib.parse import urlsplit

from factcheck.claimtime import time_notes
from factcheck.options import Constraint
from factcheck.types import ClaimVerdict, Evidence, Judgment, Label, TextVerdict

Measure = Literal["containment", "jaccard"]

SHINGLE_SIZE = 5
DEFAULT_THRESHOLD = 0.5
# The thresholds that mean something: above 0 (at 0 every pair would be dependent), at most 1 (a copy).
THRESHOLD_RANGE = Constraint(minimum=0, min_open=True, maximum=1)
DEFAULT_MEASURE: Measure = "containment"

_TOKEN = re.compile(r"\w+")


def shingles(text: str, k: int = SHINGLE_SIZE) -> frozenset[tuple[str, ...]]:
    """The set of ``k``-word shingles of ``text`` (lowercased, punctuation stripped).

    A text shorter than ``k`` words is one shingle (all its words), so a short
    passage can still match itself; an empty text has no shingles.
    """
    tokens = _TOKEN.findall(text.lower())
    if not tokens:
        return frozenset()
    if len(tokens) < k:
        return frozenset({tuple(tokens)})
    return frozenset(tuple(tokens[i : i + k]) for i in range(len(tokens) - k + 1))


def set_similarity(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]], measure: Measure) -> float:
    """Containment or Jaccard similarity of two shingle sets; 0 when either is empty."""
    if not a or not b:
        return 0.0
    common = len(a & b)
    if measure == "containment":
        return common / min(len(a), len(b))
    if measure == "jaccard":
        return common / len(a | b)
    raise ValueError(f"measure must be 'containment' or 'jaccard', got {measure!r}")


def passage_similarity(a: str, b: str, measure: Measure = DEFAULT_MEASURE) -> float:
    """Shingle similarity of two passages (see the module docstring for the measures)."""
    return set_similarity(shingles(a), shingles(b), measure)


def normalise_url(url: str | None) -> str | None:
    """A URL reduced to what identifies the page: host (lowercase, no ``www.``), path without a
    trailing slash, and query; scheme and fragment ignored. ``None`` for no URL."""
    if not url or not url.strip():
        return None
    parts = urlsplit(url.strip())
    host = parts.netloc.lower().removeprefix("www.")
    if not host:  # not an absolute URL: compare it as written
        return url.strip()
    path = parts.path.rstrip("/")
    return f"{host}{path}" + (f"?{parts.query}" if parts.query else "")


@dataclass(frozen=True)
class Overlap:
    """Why two agents' evidence counts as dependent: the best passage similarity and any shared URL."""

    similarity: float
    shared_url: str | None

    def dependent(self, threshold: float) -> bool:
        """True when the agents share a URL or their best passage pair reaches ``threshold``."""
        return self.shared_url is not None or self.similarity >= threshold


def evidence_overlap(a: Sequence[Evidence], b: Sequence[Evidence], measure: Measure = DEFAULT_MEASURE) -> Overlap:
    """The best-matching pair of passages between two agents' evidence, and a URL both cite."""
    urls_a = {u for u in (normalise_url(e.url) for e in a) if u}
    shared = sorted(urls_a & {u for u in (normalise_url(e.url) for e in b) if u})
    sets_a = [shingles(e.text) for e in a]
    sets_b = [shingles(e.text) for e in b]
    best = max((set_similarity(x, y, measure) for x in sets_a for y in sets_b), default=0.0)
    return Overlap(similarity=best, shared_url=shared[0] if shared else None)


def _check_threshold(threshold: float) -> None:
    if not (isinstance(threshold, int | float) and THRESHOLD_RANGE.allows(threshold)):
        raise ValueError(f"independence threshold must be {THRESHOLD_RANGE.bounds_text()}, got {threshold!r}")


def _union_find_groups(n: int, edges: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Connected components of ``n`` nodes with two or more members, each sorted, ordered by first member."""
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]  # path halving keeps the trees flat
            i = parent[i]
        return i

    for i, j in edges:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    members: dict[int, list[int]] = {}
    for i in range(n):
        members.setdefault(find(i), []).append(i)
    return sorted((m for m in members.values() if len(m) > 1), key=lambda m: m[0])


def _dependent_pairs(
    judgments: Sequence[Judgment], threshold: float, measure: Measure, *, agreeing_only: bool
) -> list[tuple[int, int]]:
    _check_threshold(threshold)
    pairs = []
    for i, j in combinations(range(len(judgments)), 2):
        a, b = judgments[i], judgments[j]
        if agreeing_only and (a.abstained or a.factuality != b.factuality):
            continue
        if evidence_overlap(a.evidence, b.evidence, measure).dependent(threshold):
            pairs.append((i, j))
    return pairs


def dependent_groups(
    judgments: Sequence[Judgment], threshold: float = DEFAULT_THRESHOLD, *, measure: Measure = DEFAULT_MEASURE
) -> list[list[int]]:
    """Groups (indices into ``judgments``) of agents whose evidence overlaps, whatever they concluded.

    Dependence is transitive here (union-find): if A copies B and B copies C,
    A, B and C are one group. Only groups of two or more agents are returned.
    """
    return _union_find_groups(len(judgments), _dependent_pairs(judgments, threshold, measure, agreeing_only=False))


def _keeper(judgments: Sequence[Judgment], group: Sequence[int]) -> int:
    # The most confident judgment stands for the group; ties go to the first agent, so the result is stable.
    return max(group, key=lambda i: (judgments[i].confidence, -i))


def merge_map(
    judgments: Sequence[Judgment], threshold: float = DEFAULT_THRESHOLD, *, measure: Measure = DEFAULT_MEASURE
) -> dict[int, tuple[int, ...]]:
    """Which judgments :func:`merge_dependent` drops: kept index -> indices merged into it.

    Groups are formed only over edges between agents that agree (same
    factuality, not abstaining), so a group never mixes verdicts even when a
    disagreeing agent's evidence overlaps both.
    """
    pairs = _dependent_pairs(judgments, threshold, measure, agreeing_only=True)
    merged = {}
    for group in _union_find_groups(len(judgments), pairs):
        keep = _keeper(judgments, group)
        merged[keep] = tuple(i for i in group if i != keep)
    return merged


def merge_dependent(
    judgments: Sequence[Judgment], threshold: float = DEFAULT_THRESHOLD, *, measure: Measure = DEFAULT_MEASURE
) -> tuple[Judgment, ...]:
    """The judgments with each group of agreeing, dependent agents reduced to its most confident one.

    Kept judgments are returned unchanged and in their original order;
    disagreeing agents and abstentions are never dropped. Applying it twice
    changes nothing more.
    """
    dropped = {i for members in merge_map(judgments, threshold, measure=measure).values() for i in members}
    return tuple(j for i, j in enumerate(judgments) if i not in dropped)


def independent_judgments(
    claim_id: str,
    judgments: Sequence[Judgment],
    threshold: float = DEFAULT_THRESHOLD,
    *,
    measure: Measure = DEFAULT_MEASURE,
) -> tuple[tuple[Judgment, ...], list[str]]:
    """One claim's judgments with its dependent, agreeing ones merged (:func:`merge_dependent`), and a
    note for each merge: ``"independence: claim c1: google merged into wikipedia (near-duplicate
    evidence, 0.97)"`` (or ``same URL ...``). The step a check runs before it scores a claim."""
    merges = merge_map(judgments, threshold, measure=measure)
    notes = []
    for keep, members in sorted(merges.items()):
        for i in members:
            overlap = evidence_overlap(judgments[keep].evidence, judgments[i].evidence, measure)
            why = (
                f"same URL {overlap.shared_url}"
                if overlap.shared_url is not None
                else f"near-duplicate evidence, {overlap.similarity:.2f}"
            )
            # A member joined through a third agent may have a low direct overlap; the note says so.
            if overlap.shared_url is None and overlap.similarity < threshold:
                why = "dependent through another agent of the group"
            notes.append(
                f"independence: claim {claim_id}: {judgments[i].agent} merged into {judgments[keep].agent} ({why})"
            )
    dropped = {i for members in merges.values() for i in members}
    return tuple(j for i, j in enumerate(judgments) if i not in dropped), notes


def apply_independence(
    verdict: TextVerdict, threshold: float = DEFAULT_THRESHOLD, *, measure: Measure = DEFAULT_MEASURE
) -> TextVerdict:
    """The verdict with each claim's dependent, agreeing judgments merged (:func:`merge_dependent`).

    Scores and labels are cleared (they were computed before the merge), so the
    caller must re-score::

        from factcheck.independence import apply_independence
        from factcheck.scoring import rescore

        merged = rescore(apply_independence(verdict, threshold=0.5), scorer, rule)

    Each merge is recorded in ``usage.notes`` as
    ``"independence: claim c1: google merged into wikipedia (near-duplicate evidence, 0.97)"``
    (or ``same URL ...``), so the JSON says why an agent's judgment is missing.
    Judgments without evidence (the authors' replayed scores, an LLM without
    sources) are never merged.
    """
    notes = list(verdict.usage.notes)
    claims = []
    for claim in verdict.claims:
        kept, merged = independent_judgments(claim.claim.id, claim.judgments, threshold, measure=measure)
        notes.extend(merged)
        # The notes scoring derives from the judgments go (re-scoring derives them again from those kept);
        # the others stay, and so does the claim's deliberation.
        derived = time_notes(claim.claim, claim.judgments)
        kept_notes = tuple(n for n in claim.notes if n not in derived)
        claims.append(
            ClaimVerdict(claim=claim.claim, judgments=kept, notes=kept_notes, deliberation=claim.deliberation)
        )
    return replace(
        verdict,
        claims=tuple(claims),
        score=None,
        label=Label.UNVERIFIED,
        usage=replace(verdict.usage, notes=tuple(notes)),
    )


__all__ = [
    "DEFAULT_MEASURE",
    "DEFAULT_THRESHOLD",
    "SHINGLE_SIZE",
    "Measure",
    "Overlap",
    "apply_independence",
    "dependent_groups",
    "evidence_overlap",
    "independent_judgments",
    "merge_dependent",
    "merge_map",
    "normalise_url",
    "passage_similarity",
    "set_similarity",
    "shingles",
]
