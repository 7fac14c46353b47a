"""Measure false consensus and evidence independence on recorded checks.

Reports, for each set of recorded judgments:

* the false-consensus rate (ECMR): of the claims where >= 2 agents voted, all
  agreed and each had confidence >= ``min_confidence``, the share whose
  consensus contradicts the gold label; at several ``min_confidence`` values;
* the evidence-independence rate: share of agreeing agent pairs (both with
  evidence) whose evidence is not near-duplicate nor the same URL;
* what merging dependent agents changes (claims merged, MAFC labels flipped).

Sources:

* the MAFC authors' SciFact replay (188 claims, gpt-4o Google / Wikipedia / LLM
  agents), read directly from ``shared/data/ito_mafc``. Their CSV holds signed
  scores only, no evidence text or URLs, so independence cannot be measured
  there: only the false-consensus rate, which needs agreement, confidence and
  gold, not evidence;
* any ``judgments.jsonl`` recorded by ``factcheck eval`` (``--judgments``),
  e.g. the offline default's ``factcheck eval scifact-binary --out /tmp/fc-offline``.
  The offline default has one agent, so it has no agent pairs and no consensus.

    python scripts/measure_independence.py [--judgments /tmp/fc-offline/judgments.jsonl]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from factcheck.eval.mafc import scifact_binary
from factcheck.eval.metrics import confident_consensus, evidence_independence_rate, false_consensus_rate
from factcheck.independence import DEFAULT_THRESHOLD, merge_map
from factcheck.jsonl import read_records
from factcheck.scoring.labels import ThresholdRule
from factcheck.scoring.mafc import MAFCScorer
from factcheck.types import ClaimVerdict, Label

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
MIN_CONFIDENCES = (0.5, 0.7, 0.9)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k / n (stays inside [0, 1] for small n)."""
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def gold_claims(records: Sequence[dict[str, Any]]) -> list[tuple[ClaimVerdict, bool]]:
    """Claims with a TRUE / FALSE gold label (``gold`` inside each claim), read from recorded lines."""
    claims = []
    for data in records:
        for raw in data.get("claims", []):
            if isinstance(raw, dict) and raw.get("gold") in ("TRUE", "FALSE"):
                claims.append((ClaimVerdict.from_dict(raw), raw["gold"] == "TRUE"))
    return claims


def report(name: str, claims: Sequence[tuple[ClaimVerdict, bool]], threshold: float) -> None:
    """Print the false-consensus rate, independence rate and merge effect of one set of claims."""
    pairs = [(c.judgments, gold) for c, gold in claims]
    agents = sorted({j.agent for c, _ in claims for j in c.judgments})
    with_pairs = sum(sum(not j.abstained for j in c.judgments) >= 2 for c, _ in claims)
    with_evidence = sum(any(j.evidence for j in c.judgments) for c, _ in claims)
    print(f"\n== {name}: {len(claims)} gold claims, agents {', '.join(agents)}")
    print(f"   claims with >= 2 voting agents: {with_pairs}; with any evidence text: {with_evidence}")
    for min_confidence in MIN_CONFIDENCES:
        reached = [(c, g) for c, g in pairs if confident_consensus(c, min_confidence) is not None]
        wrong = sum(confident_consensus(c, min_confidence) != g for c, g in reached)
        low, high = wilson(wrong, len(reached))
        if not reached:
            print(f"   false-consensus rate (min_confidence {min_confidence}): undefined, no confident consensus")
            continue
        rate = false_consensus_rate(pairs, min_confidence)
        print(
            f"   false-consensus rate (min_confidence {min_confidence}): {rate:.3f} = {wrong}/{len(reached)} "
            f"confident consensuses wrong, 95% CI [{low:.3f}, {high:.3f}]"
        )
    if with_evidence == 0:
        print("   evidence independence: not measurable (the judgments carry no evidence text or URL)")
        return
    agreeing = sum(
        a.factuality == b.factuality
        for c, _ in claims
        for a, b in combinations([j for j in c.judgments if not j.abstained and j.evidence], 2)
    )
    if agreeing:
        rate = evidence_independence_rate([c for c, _ in pairs], threshold)
        print(f"   evidence-independence rate (threshold {threshold}): {rate:.3f} over {agreeing} agreeing pairs")
    else:
        print("   evidence-independence rate: undefined, no agreeing pair of agents with evidence")
    scorer, rule = MAFCScorer(), ThresholdRule(thresholds=(0.5,))
    merged_claims = flipped = 0
    for claim, _ in claims:
        merges = merge_map(claim.judgments, threshold)
        if not merges:
            continue
        merged_claims += 1
        dropped = {i for members in merges.values() for i in members}
        kept = [j for i, j in enumerate(claim.judgments) if i not in dropped]
        before = rule.claim_label(scorer.score_claim(claim.judgments))
        after = rule.claim_label(scorer.score_claim(kept))
        flipped += before != after and Label.UNVERIFIED not in (before, after)
    print(f"   claims with merged agents: {merged_claims}; MAFC claim labels flipped by merging: {flipped}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--judgments", type=Path, action="append", default=[], help="recorded judgments.jsonl")
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    args = parser.parse_args()
    report("MAFC authors' SciFact replay (gpt-4o)", gold_claims(scifact_binary(args.data_dir)), args.threshold)
    for path in args.judgments:
        report(str(path), gold_claims([record for _, record in read_records(path)]), args.threshold)


if __name__ == "__main__":
    main()
