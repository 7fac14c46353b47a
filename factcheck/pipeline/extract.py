"""Extract: the claims of a text, as a check reads them. A model-based extractor that fails gives way to
the fallback (the sentence extractor), with a note; the text read is cut where ``max_claims`` claims
cannot reach, run-on "claims" are skipped, and the claims are capped."""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Sequence
from dataclasses import replace

from factcheck.calls import call_plugin
from factcheck.errors import BudgetReachedError, ConfigError, InputError
from factcheck.pipeline.components import Components
from factcheck.plugin import ClaimExtractor
from factcheck.switches import raise_errors_requested
from factcheck.text import valid_unicode
from factcheck.types import TOO_LONG_RULE, Claim, Extraction, SkippedSentence
from factcheck.usage import UsageRecorder

EXTRACT_CHARS_PER_CLAIM = 500  # with max_claims = 200, claims are read from the first 100,000 characters
# A claim longer than this is a run-on text (a page without full stops), not one statement: skipped, with why.
MAX_CLAIM_CHARS = 1000


async def extract_claims(
    checker: Components, text: str, recorder: UsageRecorder, cap: tuple[int | None, str] = (None, "max_claims")
) -> Extraction:
    """The claims of ``text``. If a model-based extractor fails (no key, a time-out, an
    unusable answer), the spaCy sentence extractor takes over and a note says why."""
    extractor, max_claims = checker.extractor, checker.limits.max_claims
    recorder.count(recorder.calls, f"extractor:{extractor.name}")
    text = readable(text, recorder, max_claims)
    try:
        async with asyncio.timeout(checker.limits.agent_timeout_s):
            return capped(await _extraction(extractor, text), recorder, max_claims, cap)
    except (ConfigError, InputError):
        raise
    except Exception as exc:
        fallback = checker.fallback_extractor
        if raise_errors_requested() or fallback is None or extractor.name == fallback.name:
            raise
        reason = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
        recorder.count(recorder.errors, f"extractor:{extractor.name}")
        if isinstance(exc, BudgetReachedError):
            recorder.count(recorder.errors, "budget")
        recorder.notes.append(f"claim extractor {extractor.name} failed ({reason}); split into sentences")
        recorder.count(recorder.calls, f"extractor:{fallback.name}")
        return capped(await _extraction(fallback, text), recorder, max_claims, cap)


def readable(text: str, recorder: UsageRecorder, max_claims: int) -> str:
    """The part of ``text`` claims are read from: all of it, unless it is far longer than
    ``max_claims`` claims need (then its start, cut at a line or word break, with a note).

    Claim spans still point into the whole text: only its end is left out.
    """
    limit = EXTRACT_CHARS_PER_CLAIM * max_claims
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    if cut < limit // 2:
        cut = text.rfind(" ", 0, limit)
    cut = cut if cut > 0 else limit
    recorder.notes.append(
        f"the text has {len(text)} characters; claims were read from the first {cut} "
        f"(max_claims = {max_claims} reads at most {limit})"
    )
    return text[:cut]


def capped(
    extraction: Extraction,
    recorder: UsageRecorder,
    max_claims: int,
    cap: tuple[int | None, str] = (None, "max_claims"),
) -> Extraction:
    """The first ``max_claims`` claims (or fewer: ``cap`` is a lower limit and its name), with a note
    when there were more; their text valid Unicode (a model-based extractor may write what the text
    did not hold)."""
    limit, named = max_claims, "max_claims"
    lower, lower_named = cap
    if lower is not None and lower < limit:
        limit, named = lower, lower_named
    claims = [_valid_claim(claim) for claim in extraction.claims]
    too_long = [claim for claim in claims if _written_length(claim) > MAX_CLAIM_CHARS]
    if too_long:
        claims = [claim for claim in claims if claim not in too_long]
        skipped = (*extraction.skipped, *map(_too_long, too_long))
        extraction = replace(extraction, skipped=_in_reading_order(skipped))
    if len(claims) > limit:
        recorder.notes.append(f"{len(claims)} claims found; only the first {limit} were checked ({named} = {limit})")
        claims = claims[:limit]
    if claims != list(extraction.claims):
        return replace(extraction, claims=tuple(claims))
    return extraction


def _valid_claim(claim: Claim) -> Claim:
    """``claim`` with its text and queries made valid Unicode (the same object when they were)."""
    text, queries = valid_unicode(claim.text), tuple(valid_unicode(q) for q in claim.queries)
    if text is claim.text and all(a is b for a, b in zip(queries, claim.queries, strict=True)):
        return claim
    return replace(claim, text=text, queries=queries)


def _written_length(claim: Claim) -> int:
    """How long ``claim`` is as the text has it (its span: a rewritten claim may be short), or as given."""
    written = claim.span[1] - claim.span[0] if claim.span is not None else 0
    return max(len(claim.text), len(claim.original or ""), written)


def _too_long(claim: Claim) -> SkippedSentence:
    """A claim of more than :data:`MAX_CLAIM_CHARS` characters, as a sentence not checked."""
    reason = f"too long for a claim ({_written_length(claim):,} characters; at most {MAX_CLAIM_CHARS:,})"
    return SkippedSentence(claim.original or claim.text, claim.span, TOO_LONG_RULE, reason)


def _in_reading_order(skipped: Sequence[SkippedSentence]) -> tuple[SkippedSentence, ...]:
    """``skipped`` by where each starts in the text (those with no span last, in their order)."""
    return tuple(sorted(skipped, key=lambda s: s.span[0] if s.span is not None else math.inf))


async def _extraction(extractor: ClaimExtractor, text: str) -> Extraction:
    """What ``extractor`` makes of ``text``: its ``extraction`` (claims and skipped sentences), or, for a
    plugin that has only ``extract``, its claims.

    An extractor with a coroutine ``aextraction`` (the ``llm`` one) is awaited on its package's loop:
    a time-out then cancels its model request. Its synchronous ``extraction`` would run in a worker
    thread that no time-out stops, sending retries after the check has given up on it.
    """
    if inspect.iscoroutinefunction(getattr(extractor, "aextraction", None)):
        found = await call_plugin(extractor, "aextraction", text)
        if isinstance(found, Extraction):
            return found
        raise TypeError(f"aextraction() must return an Extraction, got {type(found).__name__}")
    if callable(getattr(extractor, "extraction", None)):
        found = await call_plugin(extractor, "extraction", text)
        if isinstance(found, Extraction):
            return found
        raise TypeError(f"extraction() must return an Extraction, got {type(found).__name__}")
    return Extraction(tuple(await call_plugin(extractor, "extract", text)))
