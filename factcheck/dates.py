"""Dates that sources give their evidence, read into one form.

Search APIs date a result the way Google shows it: ``"Mar 3, 2021"``,
``"3 days ago"``, ``"2 hours ago"``; MediaWiki gives revision timestamps
(``"2009-12-30T12:00:00Z"``); a corpus document may carry any of these.
:func:`evidence_date` turns them into an ISO 8601 date (``"2021-03-03"``), a
year-month (``"2021-03"``) or a year (``"2021"``) as precise as the source was,
resolving relative ones against the time the evidence was retrieved. Anything
it cannot read gives ``None``: the date is unknown, never guessed.

Absolute dates are read by python-dateutil; a day-month order it cannot tell
("03/04/2021") is read month first, as Google's US results write it.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

_RELATIVE = re.compile(
    r"^(?:(an?|\d{1,4})\s+(second|minute|hour|day|week|month|year)s?\s+ago|(yesterday|today|just now))$",
    re.IGNORECASE,
)
_YEAR = re.compile(r"^(1[5-9]\d\d|2\d\d\d)$")
_YEAR_MONTH = re.compile(r"^(1[5-9]\d\d|2\d\d\d)-(0[1-9]|1[0-2])$")
_UNITS = {
    "second": timedelta(seconds=1),
    "minute": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
    "week": timedelta(weeks=1),
    "month": timedelta(days=30.44),
    "year": timedelta(days=365.25),
}
_FAR_FUTURE = timedelta(days=2)  # a date this far after retrieval is a misreading, not a date
_MAX_CHARS = 64  # a date is short; a longer field is some other text


def evidence_date(raw: object, retrieved_at: str | None = None) -> str | None:
    """``raw`` as ``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY`` (as precise as it was), or ``None``.

    Relative dates ("3 days ago") count back from ``retrieved_at`` (ISO 8601; now when absent). A date
    more than two days after retrieval, or before 1500, is taken for a misreading and dropped.
    """
    if not isinstance(raw, str):
        return None
    text = " ".join(raw.split()).strip(" -\u2013\u2014\u00b7|,")  # Google writes "Feb 14, 2019 — "
    if not text or len(text) > _MAX_CHARS:
        return None
    now = _instant(retrieved_at) or datetime.now(UTC)
    if _YEAR.match(text) or _YEAR_MONTH.match(text):
        return text if text[:4] <= str(now.year) else None
    relative = _RELATIVE.match(text)
    if relative:
        return _relative(relative, now)
    return _absolute(text, now.date())


def _relative(match: re.Match[str], now: datetime) -> str:
    word = (match.group(3) or "").lower()
    if word in {"today", "just now"}:
        return now.date().isoformat()
    if word == "yesterday":
        return (now.date() - timedelta(days=1)).isoformat()
    count = 1 if match.group(1).lower() in {"a", "an"} else int(match.group(1))
    return (now - count * _UNITS[match.group(2).lower()]).date().isoformat()


def _absolute(text: str, today: date) -> str | None:
    from dateutil import parser

    try:
        # Two different defaults: a field the text lacks (the day of "March 2021") shows as a difference.
        first = parser.parse(text, default=datetime(2000, 1, 1))
        second = parser.parse(text, default=datetime(2001, 2, 2))
    except (ValueError, OverflowError):
        return None
    if first.year != second.year or first.year < 1500 or first.date() > today + _FAR_FUTURE:
        return None  # no year ("Mar 3" is not a date of anything), or a misreading
    if first.month != second.month:
        return f"{first.year:04d}"
    if first.day != second.day:
        return f"{first.year:04d}-{first.month:02d}"
    return first.date().isoformat()


def _instant(value: str | None) -> datetime | None:
    """An ISO 8601 time as an aware datetime (UTC when it names no zone), or ``None``."""
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def moment(value: str) -> datetime:
    """A date or time given by a user (``2019-06-01``, ``2019-06-01T12:00:00Z``) as an aware UTC-based time: a
    bare date means the end of that day. ValueError for anything else."""
    try:
        day = date.fromisoformat(value)
    except ValueError:
        when = _instant(value)
        if when is None:
            raise ValueError(f"not an ISO 8601 date or time: {value!r}") from None
        return when
    return datetime(day.year, day.month, day.day, 23, 59, 59, tzinfo=UTC)


def timestamp(value: str) -> str:
    """:func:`moment` as the UTC timestamp MediaWiki takes (``2019-06-01T23:59:59Z`` for a bare date)."""
    return moment(value).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
