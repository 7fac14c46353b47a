"""When a claim speaks of: its dates and relative expressions, resolved against the text's time.

A text has a reference time (``as_of``: when it was written; now by default).
A claim's time is what its words say about when it holds, resolved against
that reference:

- explicit dates and years: "in 1889" is the year 1889, "on 3 March 2021" that
  day, "in March 2021" that month, "in the 1990s" the decade, "from 2019 to
  2020" both years;
- relative expressions: "last year", "two years ago", "yesterday", "this
  month" count from the reference time; a duration up to it ("for eight
  years", "the past two decades", "since 1979") runs from then to the
  reference; a bare length of time ("for 52 weeks") is how long, not when;
- the present: "currently", "now", "today", "recently", "the incumbent", "is
  the president" mean the reference time itself.

Date phrases are found by spaCy's DATE entities (the packaged English model,
nothing downloaded) and read by dateparser, which gives their precision (day,
month or year); decades, year ranges, "since 1979" and durations, which it
does not read, by patterns of their own. A claim with none of these has no time (``None``): it is taken to
hold whenever, and judged against today's sources.

What is not resolved: times of day, seasons ("last summer"), fiscal years,
holidays, and times a claim only implies through its tense ("was president"
without a date).
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from factcheck.context import current
from factcheck.dates import moment
from factcheck.types import Claim, ClaimTime, Evidence, Judgment

_DECADE = re.compile(r"\b(?:the\s+)?((?:1[5-9]|20)\d)0s\b", re.IGNORECASE)
_YEAR_RANGE = re.compile(r"\b(1[5-9]\d\d|20\d\d)\s*(?:-|\u2013|to|until|through)\s*(1[5-9]\d\d|20\d\d)\b")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_SINCE = re.compile(r"\bsince\s+(1[5-9]\d\d|20\d\d)\b", re.IGNORECASE)
# A year of any length with its era ("476 AD", "AD 476", "44 BC", "960 CE"), "the year 476", and a
# three-digit year closing a phrase of time ("in 476.", "since 800,"): never a bare number ("476 patients").
_ERA = re.compile(
    r"\b(?:(?:AD|A\.D\.|CE|C\.E\.)\s?(?P<after>\d{1,4})|(?P<year>\d{1,4})\s?(?P<era>AD|A\.D\.|CE|C\.E\.|BCE|B\.C\.E\.|BC|B\.C\.))"
    r"(?!\w)"
)
_THE_YEAR = re.compile(r"\bthe\s+year\s+(\d{1,4})\b", re.IGNORECASE)
_SHORT_YEAR = re.compile(r"\b(?:in|since)\s+(\d{3})(?=\s*(?:[.,;:!?)]|$))", re.IGNORECASE)
# Words that put a claim at the time it was made.
_PRESENT = re.compile(
    r"\b(currently|presently|at present|right now|now|today|nowadays|as of today|these days|recently|lately|"
    r"the incumbent|the current|the sitting|"
    r"(?:is|are)\s+(?:still\s+)?(?:the\s+)?(?:current\s+)?"
    r"(?:president|prime minister|chancellor|ceo|chief executive|mayor|governor|king|queen|leader|head|chair\w*))\b",
    re.IGNORECASE,
)
_PERIODS = ("day", "week", "month", "year")
# A duration up to now: "eight years", "the past 27 years", "the last two decades" (not "... ago").
_DURATION = re.compile(
    r"^(?:for\s+|in\s+|over\s+|during\s+)?(?:the\s+)?(?:past|last|previous)?\s*"
    r"(\d{1,3}|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|fifty)"
    r"\s+(year|decade)s?$",
    re.IGNORECASE,
)
# A bare length of time ("52 weeks", "3 days", "six months"): how long, not when.
_SPAN_ONLY = re.compile(
    r"^(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?:second|minute|hour|day|week|month)s?$",
    re.IGNORECASE,
)
_NUMBERS = {
    "a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "fifty": 50,
}  # fmt: skip
# Newer than this, a time is "now" to a source that can read the past: today's pages are read.
RECENT = timedelta(days=30)
# Evidence dated this far from the time a claim about the present speaks of is of another time.
DRIFT = timedelta(days=365)


def reference_time(as_of: str | None) -> datetime:
    """The reference time of a text: ``as_of`` (ISO 8601 date or time; a date means its end of day), else now."""
    if as_of is None:
        return datetime.now(UTC).replace(microsecond=0)
    try:
        return moment(as_of)
    except ValueError:
        raise ValueError(f"as_of must be an ISO 8601 date or time like 2014-05-10, got {as_of!r}") from None


def resolve(text: str, reference: datetime, dates: Sequence[str] = ()) -> ClaimTime | None:
    """The time ``text`` speaks of, given its DATE phrases (``dates``; spaCy's entities), or ``None``.

    A year range or a decade in the text wins, then the first phrase that resolves; without one, a
    present-tense marker gives the reference time.
    """
    # Ranges and decades first: the entity recogniser often takes "2019 to 2020" for two dates.
    for pattern in (_YEAR_RANGE, _DECADE):
        if (match := pattern.search(text)) is not None:
            return _phrase_time(match.group(0), reference)
    if (match := _SINCE.search(text)) is not None and int(match.group(1)) <= reference.year:
        return ClaimTime(f"{match.group(1)}-01-01", reference.date().isoformat(), match.group(0), "range")
    if (found := _year_of_any_era(text, _ERA)) is not None:  # before the date phrases: "44 BC" is no 2044
        return found
    for phrase in dates:
        found = _phrase_time(phrase, reference)
        if found is not None:
            return found
    if not dates and (match := _YEAR.search(text)) is not None:  # no entity (a blank pipeline): a bare year
        return _phrase_time(match.group(0), reference)
    # Last, as a number may be anything else: "the year 476", "fell in 476."
    if (found := _year_of_any_era(text, _THE_YEAR, _SHORT_YEAR)) is not None:
        return found
    present = _PRESENT.search(text)
    if present:
        day = reference.date().isoformat()
        return ClaimTime(day, day, present.group(0), "present")
    return None


def _year_of_any_era(text: str, *patterns: re.Pattern[str]) -> ClaimTime | None:
    """The year the first of ``patterns`` finds in ``text``: with its era (:data:`_ERA`: "476 AD", "44 BC"),
    as "the year 476", or as a three-digit year closing "in" or "since" ("in 476."); ``None`` otherwise.
    A year before Christ is written as ISO 8601 writes it, counting a year 0: 44 BC is ``-0043``."""
    match = next((m for m in (p.search(text) for p in patterns) if m is not None), None)
    if match is None:
        return None
    before_christ = False
    if match.re is _ERA:
        number = int(match.group("after") or match.group("year"))
        before_christ = (match.group("era") or "").startswith("B")
    else:
        number = int(match.group(1))
    if number == 0:
        return None  # no year is called 0
    year = 1 - number if before_christ else number
    start = f"-{-year:04d}" if year < 0 else f"{year:04d}"
    return ClaimTime(f"{start}-01-01", f"{start}-12-31", match.group(0), "year")


def time_span(time: ClaimTime) -> str:
    """A claim's time as dates: ``2024-03-12``, ``2013-01-01 to 2013-12-31``; a time before Christ by its
    years (``44 BC to 44 BC``: ISO's ``-0043`` could be read as 43)."""
    if time.start.startswith("-"):
        return f"{year_label(time.start)} to {year_label(time.end)}"
    return time.start if time.start == time.end else f"{time.start} to {time.end}"


def year_label(iso: str) -> str:
    """The year of an ISO 8601 date for readers: "1889", "476", "44 BC" (from ``-0043-01-01``); the text
    as it is when it is no such date (a hand-edited file)."""
    try:
        year = -int(iso[1:].split("-")[0]) if iso.startswith("-") else int(iso.split("-")[0])
    except ValueError:
        return iso
    return f"{1 - year} BC" if year <= 0 else str(year)


def _phrase_time(phrase: str, reference: datetime) -> ClaimTime | None:
    text = " ".join(phrase.split())
    if (match := _YEAR_RANGE.search(text)) is not None:
        first, last = sorted((int(match.group(1)), int(match.group(2))))
        return ClaimTime(f"{first:04d}-01-01", f"{last:04d}-12-31", text, "range")
    if (match := _DECADE.search(text)) is not None:
        decade = int(match.group(1)) * 10
        return ClaimTime(f"{decade:04d}-01-01", f"{decade + 9:04d}-12-31", text, "decade")
    if (match := _DURATION.match(text)) is not None:  # up to the reference time
        count = int(match.group(1)) if match.group(1).isdigit() else _NUMBERS[match.group(1).lower()]
        years = count * (10 if match.group(2).lower() == "decade" else 1)
        return ClaimTime(f"{reference.year - years:04d}-01-01", f"{reference.year:04d}-12-31", text, "range")
    if _SPAN_ONLY.match(text):
        return None  # "52 weeks" of treatment is how long, not when
    # One parser a day, not one a check: building one costs more than the parse (its regular expressions are
    # compiled anew), and a date phrase resolves to the same day from any time of that day.
    data = _parser(reference.replace(hour=0, minute=0, second=0, microsecond=0)).get_date_data(text)
    when, period = data.date_obj, data.period
    if when is None or period not in _PERIODS or not 1000 <= when.year <= reference.year + 100:
        return None  # "7489 base pairs" is no year
    day = when.date()
    if period == "year":
        start, end = date(day.year, 1, 1), date(day.year, 12, 31)
    elif period == "month":
        last = calendar.monthrange(day.year, day.month)[1]
        start, end = date(day.year, day.month, 1), date(day.year, day.month, last)
    elif period == "week":
        start = day - timedelta(days=day.weekday())
        end = start + timedelta(days=6)
    else:
        start = end = day
    kind = "instant" if start == end else period
    return ClaimTime(start.isoformat(), end.isoformat(), text, kind)


@functools.lru_cache(maxsize=8)
def _parser(reference: datetime) -> Any:
    from dateparser.date import DateDataParser

    settings = {
        "RELATIVE_BASE": reference.replace(tzinfo=None),
        "PREFER_DATES_FROM": "past",
        "RETURN_TIME_AS_PERIOD": True,
        "REQUIRE_PARTS": [],
    }
    return DateDataParser(languages=["en"], settings=settings)


def date_phrases(texts: Sequence[str]) -> list[list[str]]:
    """spaCy's DATE entities of each text (empty lists where the pipeline has no entity recogniser)."""
    from factcheck.extractors.sentence import entity_docs

    docs = entity_docs(texts)
    if docs is None:
        return [[] for _ in texts]
    return [[ent.text for ent in doc.ents if ent.label_ == "DATE"] for doc in docs]


# What a date phrase needs (a year, a day's number, a month or a time word): only claims holding one are
# parsed for entities ("Study 12 found 45 patients" is not).
_MAY_HOLD_DATE = re.compile(
    r"\b(?:1[5-9]\d\d|20\d\d)s?\b|\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}\b|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun)\w*|"
    r"\b(?:today|tonight|yesterday|tomorrow|now|ago|year|month|week|day|decade|century|season|spring|summer|"
    r"autumn|fall|winter|since|until|recent|current|present|past|last|next|previous|this|these|earlier|later|"
    r"annual|quarter|weekend|morning|evening|night)\w*",
    re.IGNORECASE,
)


def with_times(claims: Sequence[Claim], reference: datetime) -> list[Claim]:
    """``claims`` with their ``time`` resolved against ``reference`` (a claim that has one keeps it).

    Only claims holding a word a date phrase needs are parsed for entities (one spaCy pass for them all).
    """
    from dataclasses import replace

    todo = [i for i, claim in enumerate(claims) if claim.time is None]
    parse = [i for i in todo if _MAY_HOLD_DATE.search(claims[i].text)]
    found = dict(zip(parse, date_phrases([claims[i].text for i in parse]), strict=True)) if parse else {}
    resolved = list(claims)
    for i in todo:
        resolved[i] = replace(claims[i], time=resolve(claims[i].text, reference, found.get(i, [])))
    return resolved


def reading_times(claim: Claim, reference: datetime | None = None, now: datetime | None = None) -> list[str]:
    """The dates a source that can read the past (Wikipedia's old revisions) should read ``claim``'s evidence
    as of, most fitting first; empty when today's pages fit.

    First the end of the time the claim speaks of (the reference time for a present-tense claim), then the
    reference time (when the text was written: a page may not go back to 1889); each only when it lies more
    than 30 days before ``now``. ``reference`` defaults to the current check's.
    """
    reference = reference if reference is not None else current().reference
    now = now or datetime.now(UTC)
    wanted: list[date] = []
    if claim.time is not None and claim.time.kind != "present" and (end := _day(claim.time.end)) is not None:
        wanted.append(end)  # a year before Christ has no day Python can hold, nor a page revision
    if reference is not None:
        wanted.append(reference.date())
    times: list[str] = []
    for day in wanted:
        if day < (now - RECENT).date() and day.isoformat() not in times:
            times.append(day.isoformat())
    return times


def _day(value: str) -> date | None:
    """The first day of an ISO 8601 date, year-month, year or timestamp; ``None`` if it is none of these."""
    text = value[:10]
    for form, pad in ((10, ""), (7, "-01"), (4, "-01-01")):
        if len(text) >= form:
            try:
                return date.fromisoformat(text[:form] + pad)
            except ValueError:
                continue
    return None


def mismatch(time: ClaimTime, made: date, dated: str) -> str | None:
    """Why evidence dated ``dated`` is of another time than a claim made on ``made`` speaking of ``time``,
    or ``None``.

    Only two cases are marked, as publication dates allow: a claim about the present (or the period around
    when it was made) against evidence dated more than a year before or after it, and a claim about the
    future against evidence dated after it was made (hindsight its author did not have). A claim about the
    past may be told by evidence of any later date ("completed in 1889", from a page of 2024).
    """
    day, start, end = _day(dated), _day(time.start), _day(time.end)
    if day is None or start is None or end is None:
        return None
    if start > made:
        return f"dated {day}, after the claim was made ({made}) about a later time"
    if time.kind == "present" or start <= made <= end:
        if day < start - DRIFT:
            return f"dated {day}, more than a year before the time the claim speaks of ({start})"
        if day > end + DRIFT:
            return f"dated {day}, more than a year after the time the claim speaks of ({end})"
    return None


def marked(judgment: Judgment, claim: Claim, reference: datetime) -> Judgment:
    """``judgment`` with each passage dated far from ``claim``'s time marked (``Evidence.time_note``)."""
    from dataclasses import replace

    if claim.time is None or not judgment.evidence:
        return judgment
    evidence: list[Evidence] = []
    for item in judgment.evidence:
        note = mismatch(claim.time, reference.date(), item.published_at) if item.published_at else None
        evidence.append(replace(item, time_note=note) if note != item.time_note else item)
    return replace(judgment, evidence=tuple(evidence))


def time_notes(claim: Claim, judgments: Sequence[Judgment]) -> tuple[str, ...]:
    """A note when the verdict rests only on evidence of another time: every passage of every agent that
    answered is dated, and each is marked."""
    answered = [j for j in judgments if j.factuality is not None and j.evidence]
    items = [item for j in answered for item in j.evidence]
    if claim.time is None or not items or not all(item.published_at and item.time_note for item in items):
        return ()
    return (
        f"every passage behind this verdict is dated far from the time the claim speaks of "
        f"({claim.time.phrase or claim.time.start}): {items[0].time_note}",
    )


def written_before(reference: datetime | None = None, now: datetime | None = None) -> date | None:
    """The last publication date a search should accept for the current check: the day its text was written,
    when that is more than 30 days ago (what was known then); ``None`` for a text of today."""
    reference = reference if reference is not None else current().reference
    now = now or datetime.now(UTC)
    if reference is None or reference.date() >= (now - RECENT).date():
        return None
    return reference.date()
