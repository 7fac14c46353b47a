"""Wikidata's typed values, read from the API's JSON and compared with what a claim states.

Pure functions, no I/O. Each comparison ends in an :class:`Outcome`: the statement confirms the claim
(``MATCH``), contradicts it (``CLASH``), or cannot say (``UNKNOWN``). The rules, numbered as the docs
(docs/wikidata-values.md) and the tests name them:

1. Times are compared at the coarser of the two precisions, by the days each covers: the statement within
   the claim is a match, the two apart a clash, a statement coarser than the claim unknown
   (:func:`compare_time`).
2. A Julian-calendar statement at day precision is read both as written and converted to the Gregorian
   calendar: a claim that matches either reading matches (:func:`compare_time`).
3. Quantities are converted to one unit per dimension (:data:`UNITS`) and compared within a tolerance made
   of the statement's size, the claim's own precision and the statement's bounds (:func:`compare_quantity`).
4. An item matches when the claim's words name it or a place it lies within, clashes when they name
   another item exactly, and is unknown otherwise (:func:`compare_item`).
5. A statement holds at a time when its start and end qualifiers surely enclose some of it
   (:func:`holds_at`); the statements that count are the best ones at that time (:func:`best`).
"""

from __future__ import annotations

import datetime
import enum
import math
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

_ENTITY = "http://www.wikidata.org/entity/"
_JULIAN = _ENTITY + "Q1985786"


class Outcome(enum.Enum):
    """What a statement says of a claim's value."""

    MATCH = "match"
    CLASH = "clash"
    UNKNOWN = "unknown"


# ---------------------------------------------------------------------------------------------------------
# Times

MILLENNIUM, CENTURY, DECADE, YEAR, MONTH, DAY = 6, 7, 8, 9, 10, 11
_MONTHS = "January February March April May June July August September October November December".split()
_TIME = re.compile(r"^([+-])(\d{1,16})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z$")


@dataclass(frozen=True)
class Time:
    """A point in time as precise as Wikidata holds it.

    Precisions are Wikidata's: 6 millennium, 7 century, 8 decade, 9 year, 10 month, 11 day. ``year`` is
    negative before the common era (-44 is 44 BC; there is no year 0). A decade is the ten years from a year
    ending in 0 (the 1880s: 1880-1889), a century and a millennium count from year 1 (the 19th century:
    1801-1900), as Wikidata formats them. ``calendar`` is "gregorian" or "julian"; the fields are the date as
    written in that calendar.
    """

    year: int
    month: int = 0
    day: int = 0
    precision: int = DAY
    calendar: str = "gregorian"

    def __post_init__(self) -> None:
        if self.year == 0 or not MILLENNIUM <= self.precision <= DAY:
            raise ValueError(f"no such time: year {self.year} at precision {self.precision}")
        if self.calendar not in ("gregorian", "julian"):
            raise ValueError(f"unknown calendar {self.calendar!r} (gregorian or julian)")
        if self.precision >= MONTH and not 1 <= self.month <= 12:
            raise ValueError(f"no such month: {self.month}")
        if self.precision == DAY and not 1 <= self.day <= _days_in_month(self.year, self.month, self.julian):
            raise ValueError(f"no such day: {self.year}-{self.month:02}-{self.day:02}")

    @property
    def julian(self) -> bool:
        """Whether the fields are written in the Julian calendar."""
        return self.calendar == "julian"

    @classmethod
    def from_datavalue(cls, value: Mapping[str, Any]) -> Time | None:
        """The ``value`` of a time datavalue, e.g. ``{"time": "+1889-03-31T00:00:00Z", "precision": 11,
        "calendarmodel": "http://www.wikidata.org/entity/Q1985727"}``; ``None`` when malformed or coarser
        than a millennium (precision < 6). Hours, minutes and seconds (precision 12-14) are read as the day."""
        if not isinstance(value, Mapping):
            return None
        raw, precision = value.get("time"), value.get("precision")
        if not isinstance(raw, str) or not isinstance(precision, int) or isinstance(precision, bool):
            return None
        found = _TIME.match(raw)
        if found is None or precision < MILLENNIUM:
            return None
        precision = min(precision, DAY)
        year = int(found.group(2)) * (-1 if found.group(1) == "-" else 1)
        month, day = int(found.group(3)), int(found.group(4))
        calendar = "julian" if value.get("calendarmodel") == _JULIAN else "gregorian"
        try:
            return cls(
                year,
                month if precision >= MONTH else 0,
                day if precision == DAY else 0,
                precision,
                calendar,
            )
        except ValueError:
            return None

    def text(self) -> str:
        """For a reader: "31 March 1889", "March 1889", "1889", "the 1880s", "the 19th century", "the 2nd
        millennium", "44 BC"; a Julian date at month or day precision says so ("23 April 1616 (Julian)")."""
        era = " BC" if self.year < 0 else ""
        years = abs(self.year)
        if self.precision == MILLENNIUM:
            return f"the {_ordinal((years - 1) // 1000 + 1)} millennium{era}"
        if self.precision == CENTURY:
            return f"the {_ordinal((years - 1) // 100 + 1)} century{era}"
        if self.precision == DECADE:
            return f"the {years // 10 * 10}s{era}"
        written = f"{years}{era}"
        if self.precision >= MONTH:
            written = f"{_MONTHS[self.month - 1]} {written}"
        if self.precision == DAY:
            written = f"{self.day} {written}"
        return written + (" (Julian)" if self.julian and self.precision >= MONTH else "")

    def span(self) -> tuple[datetime.date, datetime.date]:
        """The first and last day it covers, in the Gregorian calendar (a Julian date converted).

        ``datetime.date`` holds only the years 1 to 9999: a day before 1 January 1 is clamped to that day
        (``date.min``), a day after 31 December 9999 to that one (``date.max``), so any time before the
        common era spans ``(date.min, date.min)``. The comparisons here use day numbers that are never
        clamped.
        """
        first, last = self._days(converted=True)
        return _date(first), _date(last)

    def _days(self, converted: bool = False) -> tuple[int, int]:
        """First and last day as day numbers (Julian Day Numbers). As written (the default), the fields are
        read as Gregorian whatever the calendar, so two times are compared by the dates they write;
        ``converted`` reads a Julian time in its own calendar."""
        julian = converted and self.julian
        if self.precision == DAY:
            day = _day_number(self.year, self.month, self.day, julian)
            return day, day
        if self.precision == MONTH:
            after = (self.year, self.month + 1) if self.month < 12 else (_next_year(self.year), 1)
            return _day_number(self.year, self.month, 1, julian), _day_number(*after, 1, julian) - 1
        first, last = _years(self.year, self.precision)
        return _day_number(first, 1, 1, julian), _day_number(_next_year(last), 1, 1, julian) - 1


def _years(year: int, precision: int) -> tuple[int, int]:
    """The first and last year a year covers at a precision of a year or coarser (historical numbering)."""
    size = {YEAR: 1, DECADE: 10, CENTURY: 100, MILLENNIUM: 1000}[precision]
    if size == 1:
        return year, year
    if size == 10:
        start = abs(year) // 10 * 10  # the 1880s: 1880-1889; the 40s BC: 49-40 BC
        return (max(start, 1), start + 9) if year > 0 else (-(start + 9), -max(start, 1))
    number = (abs(year) - 1) // size + 1  # the 19th century: 1801-1900
    if year > 0:
        return size * (number - 1) + 1, size * number
    return -size * number, -(size * (number - 1) + 1)


def _next_year(year: int) -> int:
    return 1 if year == -1 else year + 1


def _astronomical(year: int) -> int:
    return year if year > 0 else year + 1  # 1 BC is year 0


def _day_number(year: int, month: int, day: int, julian: bool = False) -> int:
    """The Julian Day Number of a date (year in historical numbering), in the Gregorian calendar
    (proleptic) or the Julian one; Python's floor division keeps it right before the common era."""
    a = (14 - month) // 12
    y = _astronomical(year) + 4800 - a
    m = month + 12 * a - 3
    days = day + (153 * m + 2) // 5 + 365 * y + y // 4
    return days - 32083 if julian else days - y // 100 + y // 400 - 32045


_ORDINAL_OF_DATE_MIN = datetime.date.min.toordinal()
_DAY_NUMBER_OF_DATE_MIN = _day_number(1, 1, 1)


def _date(day_number: int) -> datetime.date:
    ordinal = day_number - _DAY_NUMBER_OF_DATE_MIN + _ORDINAL_OF_DATE_MIN
    ordinal = min(max(ordinal, _ORDINAL_OF_DATE_MIN), datetime.date.max.toordinal())
    return datetime.date.fromordinal(ordinal)


def _days_in_month(year: int, month: int, julian: bool) -> int:
    if month == 2:
        y = _astronomical(year)
        leap = y % 4 == 0 and (julian or y % 100 != 0 or y % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def compare_time(stated: Time, claimed: Time) -> Outcome:
    """Whether a statement's time confirms the time a claim states (rules 1 and 2).

    Rule 1: each time covers the days of its precision (a day, a month, a year, a decade, a century, a
    millennium). The statement's days all within the claim's: MATCH ("1889", "March 1889" and "the 1880s"
    against a statement of 31 March 1889). None in common: CLASH ("1885", "April 1889"). Some in common but
    not all, i.e. the statement coarser than the claim: UNKNOWN (a statement of 1889 cannot confirm "31 March
    1889", nor a statement of the 1880s "1889").

    Rule 2: two times in different calendars at day precision are compared twice, as written and with the
    Julian one converted to the Gregorian calendar; a match in either is a match (Shakespeare died on 23 April
    1616 in the Julian calendar: "23 April 1616" and "3 May 1616" both match). Coarser Julian times are
    compared as written (a month's name does not change with the calendar).
    """
    if stated.calendar == claimed.calendar:
        return _within(stated._days(), claimed._days())
    outcomes = {_within(stated._days(converted), claimed._days(converted)) for converted in (False, True)}
    if Outcome.MATCH in outcomes:
        return Outcome.MATCH
    return Outcome.CLASH if outcomes == {Outcome.CLASH} else Outcome.UNKNOWN


def _within(stated: tuple[int, int], claimed: tuple[int, int]) -> Outcome:
    if stated[1] < claimed[0] or claimed[1] < stated[0]:
        return Outcome.CLASH
    if claimed[0] <= stated[0] and stated[1] <= claimed[1]:
        return Outcome.MATCH
    return Outcome.UNKNOWN


# Reading the times a claim states. Month names are written capitalised ("may 300" is no date).
_MONTH_NUMBERS = {name.lower(): number for number, name in enumerate(_MONTHS, 1)}
_MONTH_NUMBERS.update({name[:3].lower(): number for number, name in enumerate(_MONTHS, 1)})
_MONTH_NUMBERS["sept"] = 9
_MONTH = r"(?-i:(?P<month>" + "|".join([*_MONTHS, "Sept", *(m[:3] for m in _MONTHS if len(m) > 3)]) + r")(?!\w)\.?)"
_ERA = r"(?:\s?(?-i:(?P<era>B\.C\.E\.|B\.C\.|BCE|BC|A\.D\.|AD|C\.E\.|CE)))"
_OLD_STYLE = r"(?P<old>[\s,]*\(?(?:O\.\s?S\.|Old Style)\)?)"
_ORDINAL_SUFFIX = r"(?:st|nd|rd|th)"
_ORDINAL_WORDS = {
    word: n
    for n, word in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
        "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split(),
        1,
    )
}
_ORDINAL_WORDS["twenty-first"] = 21
_ORDINAL_ALTERNATIVES = "|".join(sorted(_ORDINAL_WORDS, key=len, reverse=True))
_TIME_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        ("iso", r"(?<![\w./-])(?P<year>\d{4})-(?P<month>\d\d)-(?P<day>\d\d)(?![\w/-])"),
        (
            "day month year",
            rf"(?<![\w./-])(?P<day>\d{{1,2}}){_ORDINAL_SUFFIX}?\s+(?:of\s+)?{_MONTH},?\s+(?P<year>\d{{1,4}})(?![\d,.]\d|\w)"
            rf"{_ERA}?(?!\w){_OLD_STYLE}?",
        ),
        (
            "month day year",
            rf"{_MONTH}\s+(?P<day>\d{{1,2}}){_ORDINAL_SUFFIX}?,?\s+(?P<year>\d{{1,4}})(?![\d,.]\d|\w)"
            rf"{_ERA}?(?!\w){_OLD_STYLE}?",
        ),
        ("month year", rf"{_MONTH},?\s+(?:of\s+)?(?P<year>\d{{1,4}})(?![\d,.]\d|\w){_ERA}?(?!\w){_OLD_STYLE}?"),
        (
            "century",
            rf"\b(?:(?P<number>\d{{1,2}}){_ORDINAL_SUFFIX}|(?P<word>{_ORDINAL_ALTERNATIVES}))"
            rf"[\s-]+(?P<unit>century|millennium)(?!\w){_ERA}?(?!\w)",
        ),
        ("decade", rf"(?<![\w.,'/-])(?P<decade>\d{{2,3}}0)'?s(?!\w){_ERA}?(?!\w)"),
        ("era year", rf"(?<![\w.,/-])(?P<year>\d{{1,4}}){_ERA}(?!\w)"),
        ("year era", r"(?<![\w.,/-])(?-i:(?P<era>A\.D\.|AD))\s?(?P<year>\d{1,4})(?![\w.,]\w)"),
    )
)
# A bare number reads as a year after one of these words (or an opening bracket) ...
_YEAR_CONTEXT = re.compile(
    r"(?:\b(?:in|since|from|between|until|till|before|after|during|circa|ca\.|c\.|born|died|year|summer of|winter of|"
    r"spring of|autumn of|fall of)|\()\s*$",
    re.IGNORECASE,
)
# ... or after a year it continues ("from 1949 to 1990", "1949-1990", "in 1889 and 1890").
_YEAR_CHAIN = re.compile(r"\s*(?:-|\u2013|\u2014|to|and|or|until|till|through|,)\s*$", re.IGNORECASE)
_BARE_YEAR = re.compile(r"(?<![\w.,/])(?<![A-Za-z]-)(?P<year>[12]?\d{3})(?![\w%]|[.,/]\d)")
# What a year is never followed by: a unit, a multiplier, a count ("1889 metres", "in 1500 homes").
_QUANTITY_WORD = (
    r"metres?|meters?|m|km|kilomet(?:re|er)s?|cm|centimet(?:re|er)s?|mm|millimet(?:re|er)s?|ft|foot|feet|inch(?:es)?|"
    r"yards?|yds?|miles?|mi|nmi|nautical|square|sq|m2|km2|m²|km²|ha|hectares?|acres?|kg|kilogram(?:me)?s?|tonnes?|"
    r"tons?|thousand|million|billion|trillion|bn|percent|per\s+cent|people|persons|inhabitants|residents|times|"
    r"years?|months?|weeks?|days?|hours?|minutes?|seconds?"
)
_NOT_YEAR_AFTER = re.compile(rf"^\s*(?:%|(?:{_QUANTITY_WORD})(?!\w))", re.IGNORECASE)
_PLURAL_AFTER = re.compile(r"^\s+(?-i:([a-z]+s))\b")
_NOT_PLURAL = frozenset(
    "as is was has its his this thus plus us does goes sees marks brings becomes remains always perhaps whereas "
    "besides towards afterwards nevertheless".split()
)
# Three-digit years need a preposition and to close a phrase ("in 476.", "in 476 the ..."): "in 300 cities" is no year.
_SHORT_YEAR_AFTER = re.compile(r"^(?:\s*$|\s*[.,;:!?)\]\u2013-]|\s+(?:the|a|an|and|when|while|AD|CE|BC)\b|\s+[A-Z])")
_START = re.compile(r"^[\s\"'\u201c\u2018(\[]*$")


def times_in(text: str) -> list[Time]:
    """The dates a claim states, in the order it states them.

    Read: "31 March 1889", "March 31, 1889", "1889-03-31" (days); "March 1889", "in March of 1889" (months);
    "1889" where it reads as a year; "the 1880s" (a decade; "the 1800s" is the 19th century, see below);
    "the 19th century", "19th-century", "the nineteenth century" (centuries), "the 2nd millennium"; "44 BC",
    "44 BCE", "15 March 44 BC", "AD 476", "476 CE". A date followed by "(O.S.)" or "Old Style" is Julian;
    every other date is Gregorian.

    A bare number of three or four digits is a year only where it reads as one: after "in", "since", "from",
    "between", "until", "before", "after", "during", "circa", "born", "died", "the year", an opening bracket,
    at the start of the claim (four digits), or after a year it continues ("from 1949 to 1990", "1949-1990"); and never
    when a unit, a multiplier, a count or a plural noun follows it ("1889 metres", "in 1500 homes"), nor inside
    a figure ("1,889 feet", "2.1 million", "31/03/1889"). Three digits need a preposition and must close the
    phrase ("in 476.", "in 476 the empire fell"). Years run from 100 to 2999 without an era.

    Not read: day-month orders in figures ("31/03/1889", ambiguous), two-digit decades ("the 80s"), dates
    without a year. "The 1800s" (not a multiple of 1000) is read as the 19th century (1801-1900), the one
    Wikidata holds, so 1800 and 1900 fall on the wrong side of it; "the 2000s" is the decade.
    """
    return [time for time, _ in _time_matches(text)]


def time_spans(text: str) -> list[tuple[int, int]]:
    """Where in ``text`` the dates :func:`times_in` reads are written (start, end), in order."""
    return [span for _, span in _time_matches(text)]


def _time_matches(text: str) -> list[tuple[Time, tuple[int, int]]]:
    found: list[tuple[Time, tuple[int, int]]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or e <= start for _, (s, e) in found)

    for kind, pattern in _TIME_PATTERNS:
        for match in pattern.finditer(text):
            if free(*match.span()):
                time = _read_time(kind, match)
                if time is not None:
                    found.append((time, match.span()))
    for time, span in _bare_years(text, found):
        if free(*span):
            found.append((time, span))
    return sorted(found, key=lambda item: item[1])


def _read_time(kind: str, match: re.Match[str]) -> Time | None:
    groups = match.groupdict()
    sign = -1 if (groups.get("era") or "").upper().startswith("B") else 1
    calendar = "julian" if groups.get("old") else "gregorian"
    try:
        if kind == "century":
            number = int(groups["number"]) if groups["number"] else _ORDINAL_WORDS[groups["word"].lower()]
            size, precision = (100, CENTURY) if groups["unit"].lower() == "century" else (1000, MILLENNIUM)
            return Time(sign * number * size, precision=precision) if number else None
        if kind == "decade":
            decade = int(groups["decade"])
            if decade % 100 == 0 and decade % 1000 != 0 and sign > 0 and len(groups["decade"]) == 4:
                return Time(decade + 100, precision=CENTURY)  # "the 1800s": the 19th century
            return Time(sign * decade, precision=DECADE)
        year = sign * int(groups["year"])
        if kind in ("era year", "year era"):
            return Time(year, precision=YEAR)
        month = int(groups["month"]) if kind == "iso" else _MONTH_NUMBERS[groups["month"].rstrip(".").lower()]
        if kind == "month year":
            return Time(year, month, precision=MONTH, calendar=calendar)
        return Time(year, month, int(groups["day"]), precision=DAY, calendar=calendar)
    except ValueError:
        return None  # year 0, 31 February: no date


def _bare_years(text: str, found: list[tuple[Time, tuple[int, int]]]) -> Iterator[tuple[Time, tuple[int, int]]]:
    years = [span for time, span in found if time.precision >= YEAR]
    for match in _BARE_YEAR.finditer(text):
        year = int(match.group("year"))
        before, after = text[: match.start()], text[match.end() :]
        if not 100 <= year <= 2999 or _NOT_YEAR_AFTER.match(after) or _plural_follows(after):
            continue
        chained = _YEAR_CHAIN.search(before)
        continues = chained is not None and any(end == chained.start() for _, end in years)
        if year < 1000:
            context = (_YEAR_CONTEXT.search(before) is not None or continues) and bool(_SHORT_YEAR_AFTER.match(after))
        else:
            context = _YEAR_CONTEXT.search(before) is not None or continues or _START.match(before) is not None
        if context:
            years.append(match.span())
            yield Time(year, precision=YEAR), match.span()


def _plural_follows(after: str) -> bool:
    word = _PLURAL_AFTER.match(after)
    return word is not None and word.group(1) not in _NOT_PLURAL


# ---------------------------------------------------------------------------------------------------------
# Quantities

UNITS: Mapping[str, tuple[str, float]] = {
    "Q11573": ("length", 1.0),  # metre
    "Q828224": ("length", 1000.0),  # kilometre
    "Q174728": ("length", 0.01),  # centimetre
    "Q174789": ("length", 0.001),  # millimetre
    "Q3710": ("length", 0.3048),  # foot
    "Q218593": ("length", 0.0254),  # inch
    "Q482798": ("length", 0.9144),  # yard
    "Q253276": ("length", 1609.344),  # mile
    "Q93318": ("length", 1852.0),  # nautical mile
    "Q25343": ("area", 1.0),  # square metre
    "Q712226": ("area", 1e6),  # square kilometre
    "Q35852": ("area", 1e4),  # hectare
    "Q232291": ("area", 2_589_988.110336),  # square mile
    "Q81292": ("area", 4046.8564224),  # acre
    "Q11570": ("mass", 1.0),  # kilogram
    "Q191118": ("mass", 1000.0),  # tonne
    "Q11229": ("ratio", 0.01),  # percent
    "1": ("count", 1.0),  # a pure number
}
"""Each unit's item id -> (its dimension, its factor to the dimension's SI unit); "1" is a pure number."""

_UNIT_NAMES: Mapping[str, tuple[str, str]] = {
    "Q11573": ("metre", "metres"),
    "Q828224": ("kilometre", "kilometres"),
    "Q174728": ("centimetre", "centimetres"),
    "Q174789": ("millimetre", "millimetres"),
    "Q3710": ("foot", "feet"),
    "Q218593": ("inch", "inches"),
    "Q482798": ("yard", "yards"),
    "Q253276": ("mile", "miles"),
    "Q93318": ("nautical mile", "nautical miles"),
    "Q25343": ("square metre", "square metres"),
    "Q712226": ("square kilometre", "square kilometres"),
    "Q35852": ("hectare", "hectares"),
    "Q232291": ("square mile", "square miles"),
    "Q81292": ("acre", "acres"),
    "Q11570": ("kilogram", "kilograms"),
    "Q191118": ("tonne", "tonnes"),
}

RELATIVE_FLOOR = 0.005
"""The least tolerance, as a share of the stated amount: half a percent of it always matches."""
RELATIVE_CAP = 0.02
"""The most a round claim's own precision may widen the tolerance, as a share of the claimed amount."""


@dataclass(frozen=True)
class Quantity:
    """A quantity a statement holds: an amount in a unit (an item id, or "1" for a pure number), with the
    bounds Wikidata gives it, if any."""

    amount: float
    unit: str = "1"
    lower: float | None = None
    upper: float | None = None

    @classmethod
    def from_datavalue(cls, value: Mapping[str, Any]) -> Quantity | None:
        """The ``value`` of a quantity datavalue, e.g. ``{"amount": "+8848.86", "unit":
        "http://www.wikidata.org/entity/Q11573", "upperBound": "+8848.96", "lowerBound": "+8848.76"}``;
        ``None`` when malformed."""
        if not isinstance(value, Mapping):
            return None
        amount = _number(value.get("amount"))
        unit = value.get("unit", "1")
        if amount is None or not isinstance(unit, str):
            return None
        if unit != "1":
            unit = unit.removeprefix(_ENTITY)
            if not re.fullmatch(r"Q\d+", unit):
                return None
        bounds = [_number(value[key]) if key in value else None for key in ("lowerBound", "upperBound")]
        if any(key in value and bound is None for key, bound in zip(("lowerBound", "upperBound"), bounds, strict=True)):
            return None
        return cls(amount, unit, bounds[0], bounds[1])

    def text(self) -> str:
        """For a reader: "8,848.86 metres", "1 foot", "2,145,906", "12%"; an unnamed unit by its id."""
        figure = format(self.amount, ",.15g")
        if self.unit == "1":
            return figure
        if self.unit == "Q11229":
            return figure + "%"
        names = _UNIT_NAMES.get(self.unit)
        if names is None:
            return f"{figure} ({self.unit})"
        return f"{figure} {names[0] if self.amount == 1 else names[1]}"


def _number(raw: object) -> float | None:
    if not isinstance(raw, str):
        return None
    try:
        number = float(raw)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


_BOUNDS = ("about", "over", "under")


@dataclass(frozen=True)
class ClaimedQuantity:
    """A quantity a claim states.

    ``half_unit`` is the claim's own precision: half a unit of its last significant digit ("8,849" 0.5,
    "6,000" 500, "2.1 million" 50,000, "8,848.86" 0.005). ``bound`` says how the claim puts it: "about" (also
    a plain figure), "over" ("more than", "over", "above", "at least") or "under" ("less than", "under",
    "below", "at most"). ``span`` is where the claim's text says it, bound words included.
    """

    amount: float
    unit: str
    half_unit: float
    bound: str = "about"
    span: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        if self.bound not in _BOUNDS:
            raise ValueError(f"unknown bound {self.bound!r} (about, over or under)")


_UNIT_WORDS: Mapping[str, str] = {
    **dict.fromkeys(["m", "metre", "metres", "meter", "meters"], "Q11573"),
    **dict.fromkeys(["km", "kilometre", "kilometres", "kilometer", "kilometers"], "Q828224"),
    **dict.fromkeys(["cm", "centimetre", "centimetres", "centimeter", "centimeters"], "Q174728"),
    **dict.fromkeys(["mm", "millimetre", "millimetres", "millimeter", "millimeters"], "Q174789"),
    **dict.fromkeys(["ft", "foot", "feet"], "Q3710"),
    **dict.fromkeys(["inch", "inches"], "Q218593"),
    **dict.fromkeys(["yd", "yds", "yard", "yards"], "Q482798"),
    **dict.fromkeys(["mi", "mile", "miles"], "Q253276"),
    **dict.fromkeys(["nmi", "nautical mile", "nautical miles"], "Q93318"),
    **dict.fromkeys(
        ["m2", "m²", "sq m", "sq. m", "square metre", "square metres", "square meter", "square meters"], "Q25343"
    ),
    **dict.fromkeys(
        [
            "km2",
            "km²",
            "sq km",
            "sq. km",
            "square kilometre",
            "square kilometres",
            "square kilometer",
            "square kilometers",
        ],
        "Q712226",
    ),
    **dict.fromkeys(["ha", "hectare", "hectares"], "Q35852"),
    **dict.fromkeys(["sq mi", "sq. mi", "mi2", "mi²", "square mile", "square miles"], "Q232291"),
    **dict.fromkeys(["acre", "acres"], "Q81292"),
    **dict.fromkeys(["kg", "kilogram", "kilograms", "kilogramme", "kilogrammes"], "Q11570"),
    **dict.fromkeys(["tonne", "tonnes", "metric ton", "metric tons"], "Q191118"),
    **dict.fromkeys(["%", "percent", "per cent"], "Q11229"),
    **dict.fromkeys(["people", "persons", "inhabitants", "residents"], "1"),
}
_CURRENCIES = {"$": "Q4917", "€": "Q4916", "£": "Q25224"}  # read so that they are no pure numbers; not in UNITS
_MULTIPLIERS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "bn": 1e9}
_NUMBER_WORDS = {
    word: float(n)
    for n, word in [
        (1, "a"),
        (1, "an"),
        *enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1),
        *((10 * n, w) for n, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)),
    ]
}
_BOUND_WORDS = {
    **dict.fromkeys(["more than", "over", "above", "at least", "upwards of", "in excess of", "exceeding"], "over"),
    **dict.fromkeys(["less than", "fewer than", "under", "below", "at most", "no more than", "up to"], "under"),
    **dict.fromkeys(
        ["about", "around", "approximately", "roughly", "nearly", "almost", "some", "circa", "c."], "about"
    ),
}


def _alternatives(words: Sequence[str]) -> str:
    return "|".join(re.escape(word).replace(r"\ ", r"\s+") for word in sorted(words, key=len, reverse=True))


_QUANTITY = re.compile(
    rf"(?:\b(?P<bound>{_alternatives(list(_BOUND_WORDS))})\s+)?"
    rf"(?P<currency>[$€£])?"
    rf"(?:(?<![\w.,/-])(?P<number>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d/]|[.,-]\d)"
    rf"|\b(?P<word>{_alternatives(list(_NUMBER_WORDS))})(?=\s+(?:{_alternatives(list(_MULTIPLIERS))})\b))"
    rf"(?:\s*(?P<multiplier>{_alternatives(list(_MULTIPLIERS))})(?!\w))?"
    rf"(?:\s*(?P<unit>{_alternatives(list(_UNIT_WORDS))})(?![\w²]))?",
    re.IGNORECASE,
)
_ORDINAL_AFTER = re.compile(rf"^{_ORDINAL_SUFFIX}\b", re.IGNORECASE)


def quantities_in(text: str) -> list[ClaimedQuantity]:
    """The quantities a claim states, in order.

    Read: a figure ("8,849", "8849", "8,848.86") or a number word before a multiplier ("two million"), an
    optional multiplier ("thousand", "million", "billion", "trillion", "bn"), and an optional unit: "m",
    "metres"/"meters", "km"/"kilometres", "cm", "mm", "ft"/"feet", "inches", "yards", "mi"/"miles", "nautical
    miles", "m2"/"m²"/"square metres", "km2"/"km²"/"square kilometres", "ha"/"hectares", "sq mi"/"square miles",
    "acres", "kg", "tonnes", "%"/"percent", or a count ("people", "inhabitants", "residents", unit "1"). A
    figure with no unit has unit "1". A bound word before it sets ``bound`` ("more than 8,000 m": over).
    A figure after "$", "€" or "£" takes that currency's item id, which :data:`UNITS` does not convert.

    Not quantities: the years and dates :func:`times_in` reads ("in 1889", "on 31 March 1889"), ordinals
    ("the 19th"), figures inside dates or names ("31/03/1889", "COVID-19").
    """
    dates = [span for _, span in _time_matches(text)]
    found: list[ClaimedQuantity] = []
    for match in _QUANTITY.finditer(text):
        figure = "number" if match.group("number") else "word"
        start, end = match.span(figure)
        if any(start < e and s < end for s, e in dates) or _ORDINAL_AFTER.match(text[end:]):
            continue
        if match.end() < len(text) and text[match.end()].isalnum():
            continue  # "3D", "5G", "747s": a name, not a quantity
        digits = (match.group("number") or "").replace(",", "")
        base = float(digits) if digits else _NUMBER_WORDS[match.group("word").lower()]
        multiplier = _MULTIPLIERS[match.group("multiplier").lower()] if match.group("multiplier") else 1.0
        unit = _UNIT_WORDS[" ".join(match.group("unit").lower().split())] if match.group("unit") else "1"
        if match.group("currency"):
            unit = _CURRENCIES[match.group("currency")]
        bound = _BOUND_WORDS[" ".join(match.group("bound").lower().split())] if match.group("bound") else "about"
        found.append(
            ClaimedQuantity(
                base * multiplier, unit, _half_unit(digits, multiplier), bound, (match.start(), match.end())
            )
        )
    return found


def _half_unit(digits: str, multiplier: float) -> float:
    """Half a unit of the last significant digit: trailing zeros of a whole number are not significant."""
    if not digits:
        return 0.5 * multiplier  # "two million": to the million
    if "." in digits:
        return 0.5 * 10.0 ** -len(digits.split(".")[1]) * multiplier
    significant = digits.rstrip("0")
    zeros = len(digits) - len(significant) if significant else 0
    return 0.5 * 10.0**zeros * multiplier


def compare_quantity(stated: Quantity, claimed: ClaimedQuantity) -> Outcome:
    """Whether a statement's quantity confirms the one a claim states (rule 3).

    Both are converted through :data:`UNITS`; different dimensions or a unit it does not hold: UNKNOWN. The
    tolerance is ``max(RELATIVE_FLOOR * |stated|, min(claimed.half_unit, RELATIVE_CAP * |claimed|))``: never
    less than half a percent of the statement, and as loose as the claim's own rounding, up to 2 % of the
    claim. The statement's own bounds (``lower``, ``upper``) widen it.

    "about": the claim within the tolerance of the statement's range: MATCH, else CLASH ("8,849 m" against
    8,848.86 m matches, "29,032 feet" too; "6,000 m" clashes; "9,000 m" matches, 1.7 % off a round figure).
    "over": MATCH when the statement's upper end exceeds the claim less the tolerance, else CLASH; "under" is
    the mirror.
    """
    stated_unit, claimed_unit = UNITS.get(stated.unit), UNITS.get(claimed.unit)
    if stated_unit is None or claimed_unit is None or stated_unit[0] != claimed_unit[0]:
        return Outcome.UNKNOWN
    amount = stated.amount * stated_unit[1]
    ends = [stated.amount if bound is None else bound for bound in (stated.lower, stated.upper)]
    low, high = min(amount, *(e * stated_unit[1] for e in ends)), max(amount, *(e * stated_unit[1] for e in ends))
    claim = claimed.amount * claimed_unit[1]
    tolerance = max(RELATIVE_FLOOR * abs(amount), min(claimed.half_unit * claimed_unit[1], RELATIVE_CAP * abs(claim)))
    tolerance += 1e-9 * max(abs(amount), abs(claim))  # float noise from the conversions
    if claimed.bound == "over":
        held = high > claim - tolerance
    elif claimed.bound == "under":
        held = low < claim + tolerance
    else:
        held = low - tolerance <= claim <= high + tolerance
    return Outcome.MATCH if held else Outcome.CLASH


# ---------------------------------------------------------------------------------------------------------
# Items


@dataclass(frozen=True)
class ItemRef:
    """An item as a statement or a search names it: its id, label, aliases and description."""

    id: str
    label: str
    aliases: tuple[str, ...] = ()
    description: str = ""


_FOLDS = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u02bc`\u00b4", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    }
)
_TRAILING = ".,;:!?"


def normalise_name(name: str) -> str:
    """A name as names are compared: NFKC, curly quotes and dashes folded to straight ones, case folded,
    whitespace folded, "st." read as "saint" ("ste." as "sainte"), a leading "the " and trailing punctuation
    and possessive ("'s", "s'") dropped. "The Eiffel Tower's" and "eiffel tower" are one name."""
    text = unicodedata.normalize("NFKC", name).translate(_FOLDS).casefold()
    text = " ".join(text.split())
    text = re.sub(r"\bst\.\s*", "saint ", text)
    text = re.sub(r"\bste\.\s*", "sainte ", text)
    previous = None
    while previous != text:
        previous = text
        text = text.rstrip(_TRAILING + " ")
        text = re.sub(r"(?<=\w)'s$", "", text)
        text = re.sub(r"(?<=s)'$", "", text)
    text = text.removeprefix("the ")
    return " ".join(text.split())


def names(item: ItemRef) -> frozenset[str]:
    """The item's label and aliases, normalised (:func:`normalise_name`); empty names left out."""
    return frozenset(name for name in map(normalise_name, (item.label, *item.aliases)) if name)


def compare_item(stated: ItemRef, within: Sequence[ItemRef], mention: str, candidates: Sequence[ItemRef]) -> Outcome:
    """Whether a statement's item confirms the one a claim mentions (rule 4).

    ``within``: the items the stated one lies within (its P131 chain and country: 7th arrondissement ->
    Paris -> Ile-de-France -> France); ``candidates``: the items a label or alias search for ``mention`` found.

    MATCH: the mention names the stated item or one it lies within, or a candidate the mention names exactly
    has the id of one of them. CLASH: the mention names at least one candidate exactly, and none of those is
    the stated item or one it lies within ("Lyon" for the Eiffel Tower). UNKNOWN: the mention names nothing
    found exactly ("the French capital").
    """
    mentioned = normalise_name(mention)
    if not mentioned:
        return Outcome.UNKNOWN
    accepted = [stated, *within]
    if any(mentioned in names(item) for item in accepted):
        return Outcome.MATCH
    named = [item for item in candidates if mentioned in names(item)]
    if {item.id for item in named} & {item.id for item in accepted}:
        return Outcome.MATCH
    return Outcome.CLASH if named else Outcome.UNKNOWN


# ---------------------------------------------------------------------------------------------------------
# Which statements count

_RANKS = ("preferred", "normal", "deprecated")


@dataclass(frozen=True)
class Qualifiers:
    """What decides whether a statement counts: its rank and its time qualifiers, start time (P580), end
    time (P582) and point in time (P585)."""

    rank: str = "normal"
    start: Time | None = None
    end: Time | None = None
    point: Time | None = None

    @classmethod
    def from_statement(cls, statement: Mapping[str, Any]) -> Qualifiers:
        """Read from a statement in the API's JSON (``wbgetentities``, ``Special:EntityData``): its ``rank``
        (an unknown one read as "normal") and the first readable value snak of P580, P582 and P585 ("no value"
        and "unknown value" snaks are left out)."""
        rank = statement.get("rank")
        qualifiers = statement.get("qualifiers")
        if not isinstance(qualifiers, Mapping):
            qualifiers = {}
        return cls(
            rank if isinstance(rank, str) and rank in _RANKS else "normal",
            _qualifier_time(qualifiers, "P580"),
            _qualifier_time(qualifiers, "P582"),
            _qualifier_time(qualifiers, "P585"),
        )


def _qualifier_time(qualifiers: Mapping[str, Any], prop: str) -> Time | None:
    snaks = qualifiers.get(prop)
    for snak in snaks if isinstance(snaks, list) else ():
        if isinstance(snak, Mapping) and snak.get("snaktype") == "value":
            datavalue = snak.get("datavalue")
            if isinstance(datavalue, Mapping) and datavalue.get("type") == "time":
                time = Time.from_datavalue(datavalue.get("value", {}))
                if time is not None:
                    return time
    return None


def holds_at(q: Qualifiers, when: Time | None) -> bool | None:
    """Whether a statement held at ``when`` (rule 5); ``None`` means now (today's date).

    With a start or an end: True when the statement surely held at some time within ``when``: its start
    surely no later than the end of ``when`` and its end surely no earlier than the start of ``when``, each
    compared by the days it covers at its precision (a missing start or end is open). False when ``when``
    lies surely outside (the start after it, or the end before it). None when the precisions overlap
    ambiguously (a start of 1990 and ``when`` June 1990). Bonn, capital 1949-1990, held in 1980 and in 1990,
    not in 2000; Berlin, from 1990, in 2000. A statement with an end in the past does not hold now.

    With only a point in time: True when ``when`` falls within the point's days (a population of 2019 held
    in 2019 and in March 2019), else None (it says nothing of 2020). With no qualifier: True.

    Dates are compared as written, whatever their calendar.
    """
    if when is None:
        today = datetime.date.today()
        now = _day_number(today.year, today.month, today.day)
        first, last = now, now
    else:
        first, last = when._days()
    if q.start is None and q.end is None:
        if q.point is None:
            return True
        point = q.point._days()
        return True if point[0] <= first and last <= point[1] else None
    sure = True
    if q.start is not None:
        start = q.start._days()
        if start[0] > last:
            return False
        sure = sure and start[1] <= last
    if q.end is not None:
        end = q.end._days()
        if end[1] < first:
            return False
        sure = sure and end[0] >= first
    return True if sure else None


def best(statements: Sequence[T], qualifiers: Callable[[T], Qualifiers], when: Time | None) -> list[T]:
    """The statements that count (rule 5): Wikidata's "best statements" rule, extended to a time.

    Deprecated ones never count. With ``when`` None: the statements that may hold now (not ended, not yet to
    start: :func:`holds_at` not False), and of those the preferred ones when there are any, else the normal
    ones. With ``when``: the non-deprecated ones that surely held at ``when`` (:func:`holds_at` True),
    preferred before normal, each in the order given.
    """
    read = [(statement, qualifiers(statement)) for statement in statements]
    read = [(statement, q) for statement, q in read if q.rank != "deprecated"]
    if when is None:
        current = [(statement, q) for statement, q in read if holds_at(q, None) is not False]
        preferred = [statement for statement, q in current if q.rank == "preferred"]
        return preferred or [statement for statement, q in current if q.rank == "normal"]
    held = [(statement, q) for statement, q in read if holds_at(q, when) is True]
    return [s for s, q in held if q.rank == "preferred"] + [s for s, q in held if q.rank == "normal"]
