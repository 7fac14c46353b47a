"""Scoring: scorers (mafc, average, normsum, majority), label rules (threshold,
compose), and the functions that turn judgments into verdicts.

The pipeline and ``factcheck score`` both go through :func:`score_text`, so a
recorded check re-scores exactly as a live one would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from factcheck.claimtime import time_notes
from factcheck.plugin import LabelRule, Scorer
from factcheck.types import Claim, ClaimVerdict, Judgment, TextVerdict, Usage


def score_claim(claim: Claim, judgments: Sequence[Judgment], scorer: Scorer, rule: LabelRule) -> ClaimVerdict:
    """Score and label one claim from its judgments."""
    score = scorer.score_claim(judgments)
    return ClaimVerdict(
        claim=claim,
        judgments=tuple(judgments),
        score=score,
        label=rule.claim_label(score),
        notes=time_notes(claim, judgments),
    )


def score_text(
    text: str,
    judged: Sequence[tuple[Claim, Sequence[Judgment]]],
    scorer: Scorer,
    rule: LabelRule,
    usage: Usage | None = None,
) -> TextVerdict:
    """Score and label a text from each claim's judgments. UNVERIFIED claims are left out of the text score."""
    claims = [score_claim(claim, judgments, scorer, rule) for claim, judgments in judged]
    return text_verdict(text, claims, scorer, rule, usage)


def text_verdict(
    text: str, claims: Sequence[ClaimVerdict], scorer: Scorer, rule: LabelRule, usage: Usage | None = None
) -> TextVerdict:
    """Score and label a text from its claims' verdicts (each scored by :func:`score_claim`), settled by the
    rule (:meth:`LabelRule.settle`: FALSE only on a strong FALSE claim, unless the rule says otherwise)."""
    score = scorer.score_text([c.score for c in claims if c.score is not None])
    return TextVerdict(
        text=text,
        claims=tuple(claims),
        score=score,
        label=rule.settle(rule.text_label(score, tuple(claims)), claims),
        scorer=scorer.name,
        scorer_options=scorer.options(),
        labels=rule.name,
        usage=usage or Usage(),
    )


REPLAYED_NOTE = "deliberation: recorded steps kept, not re-run"


def rescored_claim(recorded: ClaimVerdict, scorer: Scorer, rule: LabelRule) -> ClaimVerdict:
    """One recorded claim re-scored from its judgments. Its notes are kept (with the ones scoring adds),
    and so is its deliberation, marked replayed: its steps are not run again, and a deliberated claim's
    notes say so (:data:`REPLAYED_NOTE`, once)."""
    scored = score_claim(recorded.claim, recorded.judgments, scorer, rule)
    notes = list(dict.fromkeys((*recorded.notes, *scored.notes)))
    deliberation = recorded.deliberation
    if deliberation is not None:
        deliberation = replace(deliberation, replayed=True)
        if deliberation.deliberated and REPLAYED_NOTE not in notes:
            notes.append(REPLAYED_NOTE)
    return replace(scored, notes=tuple(notes), deliberation=deliberation)


def rescore(verdict: TextVerdict, scorer: Scorer, rule: LabelRule) -> TextVerdict:
    """Re-score a recorded check with another scorer or label rule; calls no source and deliberates no
    claim again (:func:`rescored_claim`)."""
    claims = [rescored_claim(c, scorer, rule) for c in verdict.claims]
    rescored = text_verdict(verdict.text, claims, scorer, rule, verdict.usage)
    return replace(
        rescored, language=verdict.language, skipped=verdict.skipped, as_of=verdict.as_of, judged_by=verdict.judged_by
    )


__all__ = [
    "REPLAYED_NOTE",
    "rescore",
    "rescored_claim",
    "score_claim",
    "score_text",
    "text_verdict",
]
