"""The verdict: each claim's from its agents' judgments (dependent agreeing agents merged first, the
deliberation's record kept), a claim the deadline came before abstained on, and the text's from its
claims', with what the check found on the way (language, skipped sentences, time, who judged)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from factcheck.events import TextChecked
from factcheck.independence import independent_judgments
from factcheck.pipeline.components import Components
from factcheck.scoring import score_claim, text_verdict
from factcheck.types import Claim, ClaimVerdict, Deliberation, Judgment, SkippedSentence
from factcheck.usage import UsageRecorder


def claim_verdict(
    checker: Components,
    claim: Claim,
    judgments: tuple[Judgment, ...],
    deliberation: Deliberation | None,
    recorder: UsageRecorder,
) -> ClaimVerdict:
    """``claim`` scored from ``judgments``, agents citing near-duplicate evidence counted once where the
    checker's ``independence`` asks (merges noted in usage), with its ``deliberation`` record."""
    if checker.independence is not None:
        judgments, notes = independent_judgments(claim.id, judgments, checker.independence)
        recorder.notes.extend(notes)
    verdict = score_claim(claim, judgments, checker.scorer, checker.labels)
    return verdict if deliberation is None else replace(verdict, deliberation=deliberation)


def abstentions(checker: Components, reason: str) -> tuple[Judgment, ...]:
    """Every agent abstaining on a claim, saying ``reason``."""
    return tuple(Judgment(agent.name, None, error=reason) for agent in checker.agents)


def abstained_verdict(checker: Components, claim: Claim, reason: str) -> ClaimVerdict:
    """A claim the deadline came before: each agent abstains, saying ``reason``."""
    return score_claim(claim, abstentions(checker, reason), checker.scorer, checker.labels)


def text_checked(
    checker: Components,
    text: str,
    judged: Sequence[ClaimVerdict],
    recorder: UsageRecorder,
    *,
    reference: datetime,
    language: str | None,
    skipped: tuple[SkippedSentence, ...],
    partial: bool,
    not_reached: tuple[int, ...],
) -> TextChecked:
    """The last event of a check: the text scored from its claims' verdicts, with the one usage record."""
    verdict = text_verdict(text, judged, checker.scorer, checker.labels, recorder.freeze())
    return TextChecked(
        replace(
            verdict,
            language=language,
            skipped=skipped,
            as_of=reference.isoformat(),
            judged_by=checker.judged_by(),
        ),
        partial,
        not_reached,
    )
