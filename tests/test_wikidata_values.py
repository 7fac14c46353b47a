"""factcheck.wikidata.values: Wikidata's times, quantities and items read from the API's JSON and compared
with what a claim states; which statements count at a time (rules 1-5 of the module's docstring)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from factcheck.wikidata.values import (
    RELATIVE_CAP,
    RELATIVE_FLOOR,
    UNITS,
    ClaimedQuantity,
    ItemRef,
    Outcome,
    Qualifiers,
    Quantity,
    Time,
    best,
    compare_item,
    compare_quantity,
    compare_time,
    holds_at,
    names,
    normalise_name,
    quantities_in,
    times_in,
)

MATCH, CLASH, UNKNOWN = Outcome.MATCH, Outcome.CLASH, Outcome.UNKNOWN
GREGORIAN = "http://www.wikidata.org/entity/Q1985727"
JULIAN = "http://www.wikidata.org/entity/Q1985786"
ENTITY = "http://www.wikidata.org/entity/"
METRE, FOOT, MILE, KM, KM2 = "Q11573", "Q3710", "Q253276", "Q828224", "Q712226"


def time_value(time: str, precision: int, calendar: str = GREGORIAN) -> dict[str, Any]:
    return {"time": time, "timezone": 0, "before": 0, "after": 0, "precision": precision, "calendarmodel": calendar}


def year(y: int) -> Time:
    return Time(y, precision=9)


def claimed(text: str) -> Time:
    (time,) = times_in(text)
    return time


def quantity(text: str) -> ClaimedQuantity:
    (found,) = quantities_in(text)
    return found


# --- Time: reading, text, span -----------------------------------------------------------------------------


def test_a_time_datavalue_is_read_at_its_precision_and_calendar() -> None:
    assert Time.from_datavalue(time_value("+1889-03-31T00:00:00Z", 11)) == Time(1889, 3, 31)
    assert Time.from_datavalue(time_value("+1889-00-00T00:00:00Z", 9)) == Time(1889, precision=9)
    assert Time.from_datavalue(time_value("+1889-03-31T00:00:00Z", 9)) == Time(
        1889, precision=9
    )  # finer fields dropped
    assert Time.from_datavalue(time_value("+1616-04-23T00:00:00Z", 11, JULIAN)) == Time(1616, 4, 23, calendar="julian")
    assert Time.from_datavalue(time_value("-0044-03-15T00:00:00Z", 11, JULIAN)) == Time(-44, 3, 15, calendar="julian")
    assert Time.from_datavalue(time_value("+1990-10-03T12:30:00Z", 14)) == Time(1990, 10, 3)  # seconds: read as the day


@pytest.mark.parametrize(
    "value",
    [
        time_value("+1889-03-31T00:00:00Z", 5),  # coarser than a millennium
        time_value("+1889-02-30T00:00:00Z", 11),  # no such day
        time_value("+1889-13-00T00:00:00Z", 10),
        time_value("1889-03-31", 11),
        time_value("+0000-00-00T00:00:00Z", 9),  # no year 0
        {"time": "+1889-03-31T00:00:00Z"},
        {"time": 1889, "precision": 9},
        {"time": "+1889-03-31T00:00:00Z", "precision": True},
    ],
)
def test_a_malformed_time_datavalue_is_none(value: dict[str, Any]) -> None:
    assert Time.from_datavalue(value) is None


@pytest.mark.parametrize(
    ("time", "text"),
    [
        (Time(1889, 3, 31), "31 March 1889"),
        (Time(1889, 3, precision=10), "March 1889"),
        (Time(1889, precision=9), "1889"),
        (Time(1889, precision=8), "the 1880s"),
        (Time(1889, precision=7), "the 19th century"),
        (Time(1900, precision=7), "the 19th century"),
        (Time(1901, precision=7), "the 20th century"),
        (Time(2001, precision=7), "the 21st century"),
        (Time(1999, precision=6), "the 2nd millennium"),
        (Time(-44, precision=9), "44 BC"),
        (Time(-44, 3, 15, calendar="julian"), "15 March 44 BC (Julian)"),
        (Time(-480, precision=7), "the 5th century BC"),
        (Time(-444, precision=8), "the 440s BC"),
    ],
)
def test_a_time_reads_for_a_person(time: Time, text: str) -> None:
    assert time.text() == text


def test_a_time_spans_the_days_of_its_precision() -> None:
    d = datetime.date
    assert Time(1889, 3, 31).span() == (d(1889, 3, 31), d(1889, 3, 31))
    assert Time(1889, 3, precision=10).span() == (d(1889, 3, 1), d(1889, 3, 31))
    assert Time(1900, 2, precision=10).span() == (d(1900, 2, 1), d(1900, 2, 28))  # 1900 was no leap year
    assert Time(1889, precision=9).span() == (d(1889, 1, 1), d(1889, 12, 31))
    assert Time(1885, precision=8).span() == (d(1880, 1, 1), d(1889, 12, 31))
    assert Time(1850, precision=7).span() == (d(1801, 1, 1), d(1900, 12, 31))
    assert Time(1616, 4, 23, calendar="julian").span() == (d(1616, 5, 3), d(1616, 5, 3))  # converted
    assert Time(-44, precision=9).span() == (datetime.date.min, datetime.date.min)  # before the common era: clamped


def test_a_time_that_cannot_be_is_refused() -> None:
    with pytest.raises(ValueError, match="year 0"):
        Time(0, precision=9)
    with pytest.raises(ValueError, match="no such day"):
        Time(1900, 2, 29)
    assert Time(1900, 2, 29, calendar="julian").day == 29  # the Julian calendar has it


# --- compare_time (rules 1 and 2) --------------------------------------------------------------------------

OPENED = Time(1889, 3, 31)  # the Eiffel Tower's opening, as Wikidata holds it


@pytest.mark.parametrize(
    ("claim", "outcome"),
    [
        ("The Eiffel Tower opened in 1889.", MATCH),
        ("The Eiffel Tower opened in March 1889.", MATCH),
        ("The Eiffel Tower opened on 31 March 1889.", MATCH),
        ("The Eiffel Tower opened in the 1880s.", MATCH),
        ("The Eiffel Tower opened in the 19th century.", MATCH),
        ("The Eiffel Tower opened in 1885.", CLASH),
        ("The Eiffel Tower opened in April 1889.", CLASH),
        ("The Eiffel Tower opened on 30 March 1889.", CLASH),
        ("The Eiffel Tower opened in the 1890s.", CLASH),
        ("The Eiffel Tower opened in the 20th century.", CLASH),
    ],
)
def test_a_claims_time_is_compared_at_the_coarser_precision(claim: str, outcome: Outcome) -> None:
    assert compare_time(OPENED, claimed(claim)) is outcome


def test_a_statement_coarser_than_the_claim_cannot_confirm_it_but_can_refute_it() -> None:
    assert compare_time(year(1889), Time(1889, 3, 31)) is UNKNOWN
    assert compare_time(year(1889), Time(1889, 3, precision=10)) is UNKNOWN
    assert compare_time(Time(1889, precision=8), year(1889)) is UNKNOWN
    assert compare_time(Time(1850, precision=7), Time(1880, precision=8)) is UNKNOWN
    assert compare_time(year(1889), Time(1890, 1, 1)) is CLASH
    assert compare_time(Time(1889, precision=8), year(1895)) is CLASH


def test_a_decade_across_a_century_overlaps_it_in_part() -> None:
    assert compare_time(Time(1900, precision=8), Time(1900, precision=7)) is UNKNOWN  # 1900-1909 vs 1801-1900
    assert compare_time(Time(1890, precision=8), Time(1900, precision=7)) is MATCH


def test_years_before_the_common_era_are_compared_without_a_year_zero() -> None:
    died = Time(-44, 3, 15, calendar="julian")
    assert compare_time(died, claimed("Julius Caesar died in 44 BC.")) is MATCH
    assert compare_time(died, claimed("Julius Caesar died in 44 BCE.")) is MATCH
    assert compare_time(died, claimed("Julius Caesar died on 15 March 44 BC.")) is MATCH
    assert compare_time(died, claimed("Julius Caesar died in the 1st century BC.")) is MATCH
    assert compare_time(died, claimed("Julius Caesar died in 44 AD.")) is CLASH
    assert compare_time(died, claimed("Julius Caesar died in 43 BC.")) is CLASH
    assert compare_time(year(-1), year(1)) is CLASH  # 1 BC and AD 1 are neighbours, not one year
    assert compare_time(Time(-100, precision=7), year(-100)) is UNKNOWN  # 100 BC is the 1st century BC's first year
    assert compare_time(year(-100), Time(-1, precision=7)) is MATCH
    assert compare_time(year(-101), Time(-1, precision=7)) is CLASH


def test_a_julian_day_matches_a_claim_as_written_or_converted_to_the_gregorian_calendar() -> None:
    died = Time(1616, 4, 23, calendar="julian")  # Shakespeare
    assert compare_time(died, claimed("Shakespeare died on 23 April 1616.")) is MATCH
    assert compare_time(died, claimed("Shakespeare died on 3 May 1616.")) is MATCH
    assert compare_time(died, claimed("Shakespeare died on 4 May 1616.")) is CLASH
    assert compare_time(died, claimed("Shakespeare died in May 1616.")) is MATCH  # the converted day is in May
    assert compare_time(died, claimed("Shakespeare died in 1616.")) is MATCH
    revolution = Time(1917, 10, 25, calendar="julian")
    assert compare_time(revolution, claimed("The revolution began on 7 November 1917.")) is MATCH
    assert compare_time(revolution, claimed("The revolution began on 25 October 1917 (O.S.).")) is MATCH


def test_two_julian_days_are_compared_as_written_only() -> None:
    # As written they differ; one's conversion is the other's written date: that is no match.
    assert compare_time(Time(1616, 5, 3, calendar="julian"), Time(1616, 4, 23, calendar="julian")) is CLASH
    assert compare_time(Time(1616, 4, 23, calendar="julian"), Time(1616, 4, 23, calendar="julian")) is MATCH


# --- times_in ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "texts"),
    [
        ("The Eiffel Tower opened in 1889.", ["1889"]),
        ("The Eiffel Tower opened in March 1889.", ["March 1889"]),
        ("The Eiffel Tower opened in March of 1889.", ["March 1889"]),
        ("The Eiffel Tower opened on 31 March 1889.", ["31 March 1889"]),
        ("The Eiffel Tower opened on the 31st of March 1889.", ["31 March 1889"]),
        ("The Eiffel Tower opened on March 31, 1889.", ["31 March 1889"]),
        ("The Eiffel Tower opened on Mar. 31, 1889.", ["31 March 1889"]),
        ("The Eiffel Tower opened on 1889-03-31.", ["31 March 1889"]),
        ("The tower opened in Sept. 1889.", ["September 1889"]),
        ("The Eiffel Tower (1889) is in Paris.", ["1889"]),
        ("1889 saw the opening of the Eiffel Tower.", ["1889"]),
        ('"1889 saw the tower open."', ["1889"]),
        ("Einstein, born 1879, studied in Zurich.", ["1879"]),
        ("Unemployment has fallen since 1990.", ["1990"]),
        ("The tower was built before 1900.", ["1900"]),
        ("It was the tallest building until 1930.", ["1930"]),
        ("The year 1889 saw the tower open.", ["1889"]),
        ("In 1889, the tower opened.", ["1889"]),
        ("Bonn was the capital from 1949 to 1990.", ["1949", "1990"]),
        ("Bonn was the capital (1949\u20131990).", ["1949", "1990"]),
        ("Bonn was the capital between 1949 and 1990.", ["1949", "1990"]),
        ("The tower opened in 1889 and was repainted in 1890.", ["1889", "1890"]),
        ("Rome fell in 476.", ["476"]),
        ("In 476 the Western Roman Empire fell.", ["476"]),
        ("Charlemagne was crowned in 800, in Rome.", ["800"]),
        ("The tower was built in the 1880s.", ["the 1880s"]),
        ("The tower was built in the 1880's.", ["the 1880s"]),
        ("The tower was built in the 19th century.", ["the 19th century"]),
        ("It is a 19th-century tower.", ["the 19th century"]),
        ("It was built in the nineteenth century.", ["the 19th century"]),
        ("It was built in the 1800s.", ["the 19th century"]),
        ("The song was a hit in the 2000s.", ["the 2000s"]),
        ("Caesar died in 44 BC.", ["44 BC"]),
        ("Caesar died in 44 BCE.", ["44 BC"]),
        ("Caesar died in 44 B.C.", ["44 BC"]),
        ("Caesar died on 15 March 44 BC.", ["15 March 44 BC"]),
        ("The Parthenon was built in the 5th century BC.", ["the 5th century BC"]),
        ("Athens flourished in the 440s BC.", ["the 440s BC"]),
        ("Rome fell in AD 476.", ["476"]),
        ("Rome fell in 476 CE.", ["476"]),
        ("Stonehenge dates from the 3rd millennium BC.", ["the 3rd millennium BC"]),
        ("The revolution began on 25 October 1917 (O.S.).", ["25 October 1917 (Julian)"]),
        ("The revolution began on 25 October 1917, Old Style.", ["25 October 1917 (Julian)"]),
        ("The revolution began on 7 November 1917.", ["7 November 1917"]),
    ],
)
def test_times_in_reads_the_dates_a_claim_states(claim: str, texts: list[str]) -> None:
    assert [time.text() for time in times_in(claim)] == texts


@pytest.mark.parametrize(
    "claim",
    [
        "Mount Everest is 8,849 m high.",
        "Mount Everest is 8849 m high.",
        "The tower is 1,889 feet tall.",
        "The tower is 1889 metres tall.",
        "1889 metres is its height.",
        "The city has a population of 2100.",
        "The city has 2.1 million inhabitants.",
        "The tower opened on 31/03/1889.",
        "It was built in 1500 homes.",
        "The library holds 1500 books.",
        "In 300 cities the tower is famous.",
        "The team won 2100 games.",
        "The plane flew 2100 km in 1500 minutes.",
        "COVID-1990 is no year.",
        "It may 300 people.",
        "The 80s were loud.",
    ],
)
def test_times_in_reads_no_year_in_quantities_figures_or_counts(claim: str) -> None:
    assert times_in(claim) == []


def test_times_in_gives_the_dates_in_the_order_the_claim_states_them() -> None:
    found = times_in("Berlin became the capital in 1990; Bonn had been it since 23 May 1949.")
    assert found == [year(1990), Time(1949, 5, 23)]


# --- Quantity ----------------------------------------------------------------------------------------------


def test_a_quantity_datavalue_is_read_with_its_unit_and_bounds() -> None:
    everest = {"amount": "+8848.86", "unit": ENTITY + METRE, "upperBound": "+8848.96", "lowerBound": "+8848.76"}
    assert Quantity.from_datavalue(everest) == Quantity(8848.86, METRE, 8848.76, 8848.96)
    assert Quantity.from_datavalue({"amount": "+2145906", "unit": "1"}) == Quantity(2145906.0)
    assert Quantity.from_datavalue({"amount": "-12.5", "unit": "1"}) == Quantity(-12.5)


@pytest.mark.parametrize(
    "value",
    [
        {"amount": "about 8848", "unit": "1"},
        {"amount": 8848, "unit": "1"},
        {"amount": "+8848", "unit": "metre"},
        {"amount": "+8848", "unit": "1", "upperBound": "high"},
        {"amount": "+inf", "unit": "1"},
        {"unit": "1"},
    ],
)
def test_a_malformed_quantity_datavalue_is_none(value: dict[str, Any]) -> None:
    assert Quantity.from_datavalue(value) is None


def test_a_quantity_reads_for_a_person() -> None:
    assert Quantity(8848.86, METRE).text() == "8,848.86 metres"
    assert Quantity(2145906).text() == "2,145,906"
    assert Quantity(1, FOOT).text() == "1 foot"
    assert Quantity(105.4, KM2).text() == "105.4 square kilometres"
    assert Quantity(12.5, "Q11229").text() == "12.5%"
    assert Quantity(3, "Q99999").text() == "3 (Q99999)"


@pytest.mark.parametrize(
    ("claim", "amount", "unit", "half_unit", "bound", "said"),
    [
        ("Mount Everest is 8,849 m high.", 8849, METRE, 0.5, "about", "8,849 m"),
        ("Mount Everest is 8,849 metres high.", 8849, METRE, 0.5, "about", "8,849 metres"),
        ("Mount Everest is 8,849 meters high.", 8849, METRE, 0.5, "about", "8,849 meters"),
        ("Mount Everest is 8849m high.", 8849, METRE, 0.5, "about", "8849m"),
        ("Mount Everest is 8,848.86 m high.", 8848.86, METRE, 0.005, "about", "8,848.86 m"),
        ("Mount Everest is 29,032 feet high.", 29032, FOOT, 0.5, "about", "29,032 feet"),
        ("Mount Everest is 29,032 ft high.", 29032, FOOT, 0.5, "about", "29,032 ft"),
        ("Mount Everest is 6,000 m high.", 6000, METRE, 500, "about", "6,000 m"),
        ("The Nile is 6,650 km long.", 6650, KM, 5, "about", "6,650 km"),
        ("The Nile is 6,650 kilometres long.", 6650, KM, 5, "about", "6,650 kilometres"),
        ("The Nile is 6,650 kilometers long.", 6650, KM, 5, "about", "6,650 kilometers"),
        ("The Nile is 4,130 miles long.", 4130, MILE, 5, "about", "4,130 miles"),
        ("Paris covers 105 square kilometres.", 105, KM2, 0.5, "about", "105 square kilometres"),
        ("Paris covers 105 km2.", 105, KM2, 0.5, "about", "105 km2"),
        ("Paris covers 105 km\u00b2.", 105, KM2, 0.5, "about", "105 km\u00b2"),
        ("Paris covers 10,540 hectares.", 10540, "Q35852", 5, "about", "10,540 hectares"),
        ("Paris has 2.1 million inhabitants.", 2.1e6, "1", 50_000, "about", "2.1 million inhabitants"),
        ("Paris has about 2,100,000 people.", 2.1e6, "1", 50_000, "about", "about 2,100,000 people"),
        ("France has a population of 67 million.", 67e6, "1", 500_000, "about", "67 million"),
        ("India has 1.4 billion people.", 1.4e9, "1", 5e7, "about", "1.4 billion people"),
        ("Paris has two million inhabitants.", 2e6, "1", 500_000, "about", "two million inhabitants"),
        ("The city has a population of 2100.", 2100, "1", 50, "about", "2100"),
        ("Mount Everest is more than 8,000 m high.", 8000, METRE, 500, "over", "more than 8,000 m"),
        ("Mount Everest is over 8,000 m high.", 8000, METRE, 500, "over", "over 8,000 m"),
        ("Mount Everest is at least 8,000 m high.", 8000, METRE, 500, "over", "at least 8,000 m"),
        ("Mount Everest is less than 9 km high.", 9, KM, 0.5, "under", "less than 9 km"),
        ("Mount Everest is under 9,000 m high.", 9000, METRE, 500, "under", "under 9,000 m"),
        ("Mount Everest is at most 9,000 m high.", 9000, METRE, 500, "under", "at most 9,000 m"),
        ("Mount Everest is roughly 8,850 m high.", 8850, METRE, 5, "about", "roughly 8,850 m"),
        ("The tower weighs 10,100 tonnes.", 10100, "Q191118", 50, "about", "10,100 tonnes"),
        ("Unemployment is 7.3%.", 7.3, "Q11229", 0.05, "about", "7.3%"),
    ],
)
def test_quantities_in_reads_the_figure_its_unit_precision_and_bound(
    claim: str, amount: float, unit: str, half_unit: float, bound: str, said: str
) -> None:
    found = quantity(claim)
    assert (found.amount, found.unit, found.bound) == (pytest.approx(amount), unit, bound)
    assert found.half_unit == pytest.approx(half_unit)
    assert claim[found.span[0] : found.span[1]] == said


@pytest.mark.parametrize(
    "claim",
    [
        "The Eiffel Tower opened in 1889.",
        "The Eiffel Tower opened on 31 March 1889.",
        "The Eiffel Tower opened on March 31, 1889.",
        "The Eiffel Tower opened on 31/03/1889.",
        "The Eiffel Tower (1889) is in Paris.",
        "Caesar died in 44 BC.",
        "The tower was built in the 1880s.",
        "It is the 19th century's tallest tower.",
        "It is the 3rd tallest tower.",
        "COVID-19 spread in Paris.",
        "The 3D model of the tower.",
    ],
)
def test_years_dates_ordinals_and_names_are_not_quantities(claim: str) -> None:
    assert quantities_in(claim) == []


def test_a_claim_with_a_year_and_a_height_gives_only_the_height() -> None:
    (height,) = quantities_in("Built in 1889, the tower is 330 m tall.")
    assert (height.amount, height.unit) == (330, METRE)


def test_a_figure_after_a_currency_sign_is_no_pure_number() -> None:
    (cost,) = quantities_in("The tower cost $1.5 million.")
    assert (cost.amount, cost.unit) == (1.5e6, "Q4917")
    assert compare_quantity(Quantity(1.5e6), cost) is UNKNOWN


# --- compare_quantity (rule 3) -----------------------------------------------------------------------------

EVEREST = Quantity(8848.86, METRE)


def test_the_tolerance_constants_are_the_documented_ones() -> None:
    assert (RELATIVE_FLOOR, RELATIVE_CAP) == (0.005, 0.02)


@pytest.mark.parametrize(
    ("claim", "outcome"),
    [
        ("Mount Everest is 8,849 m high.", MATCH),
        ("Mount Everest is 8,848.86 m high.", MATCH),
        ("Mount Everest is 29,032 feet high.", MATCH),
        ("Mount Everest is 29,029 ft high.", MATCH),  # the 1955 survey, 0.01 % off
        ("Mount Everest is 8.849 km high.", MATCH),
        ("Mount Everest is 5.5 miles high.", MATCH),  # 8,851 m
        ("Mount Everest is 9,000 m high.", MATCH),  # 1.7 % off a round figure
        ("Mount Everest is 6,000 m high.", CLASH),
        ("Mount Everest is 8,611 m high.", CLASH),  # K2's height, 2.7 % off
        ("Mount Everest is 8,000 m high.", CLASH),
        ("Mount Everest is 9,500 m high.", CLASH),
        ("Mount Everest is 5 miles high.", CLASH),  # 8,047 m, 9 % off
        ("Mount Everest is 8,800 m high.", MATCH),  # 49 m off: within the claim's rounding (50 m)
        ("Mount Everest is 8,900 m high.", CLASH),  # 51 m off: beyond its rounding (50 m) and the floor (44 m)
        ("Mount Everest is 8,950 m high.", CLASH),  # 1.1 %: beyond its rounding (25 m) and the floor
        ("Mount Everest is more than 8,000 m high.", MATCH),
        ("Mount Everest is over 8,849 m high.", MATCH),
        ("Mount Everest is more than 10,000 m high.", CLASH),
        ("Mount Everest is less than 10 km high.", MATCH),
        ("Mount Everest is under 8,000 m high.", CLASH),
        ("Mount Everest is at most 8,848 m high.", MATCH),  # within the floor
    ],
)
def test_a_claimed_quantity_is_compared_within_the_tolerance(claim: str, outcome: Outcome) -> None:
    assert compare_quantity(EVEREST, quantity(claim)) is outcome


def test_the_tolerance_is_the_floor_or_the_claims_rounding_capped() -> None:
    # Stated 1,000,000: the floor is 5,000.
    stated = Quantity(1_000_000)
    assert compare_quantity(stated, ClaimedQuantity(1_005_000, "1", 0.5)) is MATCH
    assert compare_quantity(stated, ClaimedQuantity(1_005_100, "1", 0.5)) is CLASH
    # "1.0 million": rounding 50,000, capped at 2 % of the claim (20,000): a claim 15,000 off matches by it ...
    assert compare_quantity(Quantity(1_015_000), ClaimedQuantity(1e6, "1", 50_000)) is MATCH
    assert compare_quantity(Quantity(1_015_000), ClaimedQuantity(1e6, "1", 0.5)) is CLASH
    # ... and no further: "1 million", rounding 500,000, is capped at 20,000 too.
    assert compare_quantity(Quantity(1_019_000), ClaimedQuantity(1e6, "1", 500_000)) is MATCH
    assert compare_quantity(Quantity(1_021_000), ClaimedQuantity(1e6, "1", 500_000)) is CLASH


def test_the_statements_bounds_widen_the_tolerance() -> None:
    claim = ClaimedQuantity(1_100, "1", 0.5)
    assert compare_quantity(Quantity(1_000), claim) is CLASH
    assert compare_quantity(Quantity(1_000, lower=900, upper=1_100), claim) is MATCH
    assert compare_quantity(Quantity(1_000, lower=900, upper=1_090), claim) is CLASH
    assert compare_quantity(Quantity(1_000, upper=1_100), ClaimedQuantity(1_090, "1", 0.5, "over")) is MATCH
    assert compare_quantity(Quantity(1_000, lower=900), ClaimedQuantity(910, "1", 0.5, "under")) is MATCH


def test_units_convert_within_a_dimension_and_not_across() -> None:
    assert compare_quantity(Quantity(105.4, KM2), quantity("Paris covers 10,540 hectares.")) is MATCH
    assert compare_quantity(Quantity(105.4, KM2), quantity("Paris covers 41 square miles.")) is MATCH
    assert compare_quantity(Quantity(105.4, KM2), quantity("Paris covers 26,000 acres.")) is MATCH
    assert compare_quantity(Quantity(6650, KM), quantity("The Nile is 4,130 miles long.")) is MATCH
    assert compare_quantity(Quantity(6650, KM), quantity("The Nile is 4,130 km long.")) is CLASH
    assert compare_quantity(Quantity(6650, KM), quantity("The Nile is 6,650 km\u00b2.")) is UNKNOWN
    assert compare_quantity(Quantity(6650, KM), quantity("The Nile is 6,650 long.")) is UNKNOWN
    assert compare_quantity(Quantity(6650, "Q99999"), quantity("The Nile is 6,650 km long.")) is UNKNOWN


def test_every_unit_has_a_dimension_and_a_positive_factor() -> None:
    assert UNITS["1"] == ("count", 1.0)
    assert UNITS[METRE] == ("length", 1.0) and UNITS[FOOT] == ("length", 0.3048)
    assert {dimension for dimension, _ in UNITS.values()} == {"length", "area", "mass", "count", "ratio"}
    assert all(factor > 0 for _, factor in UNITS.values())


def test_a_claimed_quantity_with_an_unknown_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown bound"):
        ClaimedQuantity(1, "1", 0.5, "exactly")


# --- items (rule 4) ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "normalised"),
    [
        ("The Eiffel Tower", "eiffel tower"),
        ("the  Eiffel\u00a0Tower.", "eiffel tower"),
        ("Eiffel Tower's", "eiffel tower"),
        ("Eiffel Tower\u2019s", "eiffel tower"),
        ("the Netherlands'", "netherlands"),
        ("St. Petersburg", "saint petersburg"),
        ("Ste. Foy", "sainte foy"),
        ("Baden\u2013W\u00fcrttemberg", "baden-w\u00fcrttemberg"),
        ("STRASSE", "strasse"),
        ("Stra\u00dfe", "strasse"),
        ("\uff30\uff41\uff52\uff49\uff53", "paris"),  # full-width letters
        ("Paris!", "paris"),
        ("Theatre Royal", "theatre royal"),
    ],
)
def test_names_are_normalised_before_they_are_compared(name: str, normalised: str) -> None:
    assert normalise_name(name) == normalised


PARIS = ItemRef("Q90", "Paris", ("City of Light", "Paris, France"))
ARRONDISSEMENT = ItemRef("Q259463", "7th arrondissement of Paris")
ILE_DE_FRANCE = ItemRef("Q13917", "\u00cele-de-France")
FRANCE = ItemRef("Q142", "France", ("French Republic",))
WITHIN = [PARIS, ILE_DE_FRANCE, FRANCE]
LYON = ItemRef("Q456", "Lyon", ("Lyons",))
PARIS_TEXAS = ItemRef("Q830149", "Paris", ("Paris, Texas",))


def test_an_items_names_are_its_label_and_aliases_normalised() -> None:
    assert names(PARIS) == {"paris", "city of light", "paris, france"}
    assert names(ItemRef("Q1", "", ("  ",))) == frozenset()


@pytest.mark.parametrize(
    ("mention", "candidates", "outcome"),
    [
        ("Paris", [PARIS, PARIS_TEXAS], MATCH),  # lies within it
        ("France", [FRANCE], MATCH),
        ("the French Republic", [], MATCH),  # an alias of a place it lies within
        ("the 7th arrondissement of Paris", [ARRONDISSEMENT], MATCH),  # the stated item itself
        ("Lyon", [LYON], CLASH),
        ("Lyons", [LYON, ItemRef("Q1", "Lyons, Colorado")], CLASH),
        ("Paris", [PARIS_TEXAS], MATCH),  # named by the mention, whatever the search found
        ("the French capital", [PARIS], UNKNOWN),  # names nothing found exactly
        ("Lyon", [], UNKNOWN),
        ("", [LYON], UNKNOWN),
    ],
)
def test_an_item_matches_when_the_mention_names_it_or_a_place_it_lies_within(
    mention: str, candidates: list[ItemRef], outcome: Outcome
) -> None:
    assert compare_item(ARRONDISSEMENT, WITHIN, mention, candidates) is outcome


def test_a_candidate_named_by_the_mention_with_a_stated_id_is_a_match() -> None:
    # The statement's copy of Paris lacks the alias the search found it by.
    bare_paris = ItemRef("Q90", "Paris")
    found = [ItemRef("Q90", "Paris", ("Lutetia",)), ItemRef("Q2", "Lutetia (journal)", ("Lutetia",))]
    assert compare_item(bare_paris, [FRANCE], "Lutetia", found) is MATCH
    assert compare_item(LYON, [FRANCE], "Lutetia", found) is CLASH


# --- qualifiers, holds_at and best (rule 5) ----------------------------------------------------------------


def time_snak(prop: str, time: str, precision: int) -> dict[str, Any]:
    return {
        "snaktype": "value",
        "property": prop,
        "datavalue": {"value": time_value(time, precision), "type": "time"},
        "datatype": "time",
    }


def statement(item: str, rank: str = "normal", **qualifiers: tuple[str, int]) -> dict[str, Any]:
    return {
        "mainsnak": {
            "snaktype": "value",
            "property": "P36",
            "datavalue": {"value": {"entity-type": "item", "id": item}, "type": "wikibase-entityid"},
        },
        "type": "statement",
        "rank": rank,
        "qualifiers": {prop: [time_snak(prop, *value)] for prop, value in qualifiers.items()},
    }


BONN = statement("Q586", P580=("+1949-00-00T00:00:00Z", 9), P582=("+1990-00-00T00:00:00Z", 9))
BERLIN = statement("Q64", "preferred", P580=("+1990-10-03T00:00:00Z", 11))


def main_item(s: dict[str, Any]) -> str:
    return str(s["mainsnak"]["datavalue"]["value"]["id"])


def test_qualifiers_are_read_from_a_statement_in_the_apis_json() -> None:
    assert Qualifiers.from_statement(BONN) == Qualifiers("normal", year(1949), year(1990))
    assert Qualifiers.from_statement(BERLIN) == Qualifiers("preferred", Time(1990, 10, 3))
    population = statement("Q1", P585=("+2019-01-01T00:00:00Z", 9))
    assert Qualifiers.from_statement(population) == Qualifiers(point=year(2019))
    assert Qualifiers.from_statement({"rank": "deprecated"}) == Qualifiers("deprecated")
    assert Qualifiers.from_statement({"rank": "best", "qualifiers": []}) == Qualifiers()


def test_only_value_snaks_of_time_are_read_as_qualifiers() -> None:
    unknown_end = {"P582": [{"snaktype": "somevalue", "property": "P582"}]}
    assert Qualifiers.from_statement({"rank": "normal", "qualifiers": unknown_end}).end is None
    two_starts = {"P580": [{"snaktype": "novalue"}, time_snak("P580", "+1990-00-00T00:00:00Z", 9)]}
    assert Qualifiers.from_statement({"qualifiers": two_starts}).start == year(1990)
    not_a_time = {"P580": [{"snaktype": "value", "datavalue": {"value": "1990", "type": "string"}}]}
    assert Qualifiers.from_statement({"qualifiers": not_a_time}).start is None


def test_a_statement_holds_between_its_start_and_end() -> None:
    bonn, berlin = Qualifiers.from_statement(BONN), Qualifiers.from_statement(BERLIN)
    assert holds_at(bonn, year(1980)) is True
    assert holds_at(bonn, year(2000)) is False
    assert holds_at(bonn, year(1940)) is False
    assert holds_at(bonn, year(1990)) is True  # its last year
    assert holds_at(berlin, year(2000)) is True
    assert holds_at(berlin, year(1980)) is False
    assert holds_at(berlin, year(1990)) is True  # from 3 October
    assert holds_at(berlin, Time(1990, 6, precision=10)) is False
    assert holds_at(berlin, Time(1990, 10, 3)) is True
    assert holds_at(Qualifiers(), year(1500)) is True


def test_a_time_coarser_than_the_when_is_ambiguous() -> None:
    from_1990 = Qualifiers(start=year(1990))
    assert holds_at(from_1990, Time(1990, 6, precision=10)) is None
    assert holds_at(from_1990, Time(1990, 12, 31)) is True  # begun by its last day at the latest
    assert holds_at(Qualifiers(end=year(1990)), Time(1990, 6, precision=10)) is None
    assert holds_at(Qualifiers(end=Time(1990, 6, 30)), Time(1990, precision=9)) is True
    assert holds_at(from_1990, Time(1990, precision=8)) is True  # begun within the 1990s
    assert holds_at(Qualifiers(start=Time(1990, precision=8)), year(1995)) is None


def test_a_point_in_time_says_only_when_it_held() -> None:
    census = Qualifiers(point=year(2019))
    assert holds_at(census, year(2019)) is True
    assert holds_at(census, Time(2019, 3, precision=10)) is True
    assert holds_at(census, year(2020)) is None
    assert holds_at(census, Time(2019, precision=8)) is None
    assert holds_at(census, None) is None


def test_now_a_statement_with_an_end_in_the_past_does_not_hold() -> None:
    assert holds_at(Qualifiers.from_statement(BONN), None) is False
    assert holds_at(Qualifiers.from_statement(BERLIN), None) is True
    assert holds_at(Qualifiers(end=year(9999)), None) is True
    assert holds_at(Qualifiers(start=year(9999)), None) is False
    this_year = year(datetime.date.today().year)
    assert holds_at(Qualifiers(end=this_year), None) is None


def test_a_deprecated_statement_never_counts() -> None:
    wrong = statement("Q999", "deprecated")
    assert best([wrong], Qualifiers.from_statement, None) == []
    assert best([wrong], Qualifiers.from_statement, year(2000)) == []
    assert best([wrong, BONN], Qualifiers.from_statement, year(1980)) == [BONN]


def test_now_the_preferred_statements_win_over_the_normal_ones() -> None:
    paris, lyon = statement("Q90", "preferred"), statement("Q456")
    assert [main_item(s) for s in best([lyon, paris], Qualifiers.from_statement, None)] == ["Q90"]
    assert [main_item(s) for s in best([lyon], Qualifiers.from_statement, None)] == ["Q456"]


def test_now_the_statements_that_ended_are_left_out() -> None:
    normal_berlin = statement("Q64", P580=("+1990-10-03T00:00:00Z", 11))
    assert best([BONN, normal_berlin], Qualifiers.from_statement, None) == [normal_berlin]
    ended_preferred = statement("Q586", "preferred", P582=("+1990-00-00T00:00:00Z", 9))
    assert best([ended_preferred, normal_berlin], Qualifiers.from_statement, None) == [normal_berlin]


def test_at_a_time_the_statements_that_held_count_preferred_first() -> None:
    statements = [BONN, BERLIN]
    assert best(statements, Qualifiers.from_statement, year(1980)) == [BONN]
    assert best(statements, Qualifiers.from_statement, year(2000)) == [BERLIN]
    assert best(statements, Qualifiers.from_statement, year(1990)) == [BERLIN, BONN]
    assert best(statements, Qualifiers.from_statement, year(1900)) == []


def test_populations_count_at_their_points_in_time() -> None:
    populations = [
        statement("2019", P585=("+2019-01-01T00:00:00Z", 11)),
        statement("2020", P585=("+2020-00-00T00:00:00Z", 9)),
        statement("2023", "preferred", P585=("+2023-00-00T00:00:00Z", 9)),
        statement("1990", "deprecated", P585=("+1990-00-00T00:00:00Z", 9)),
    ]
    assert [main_item(s) for s in best(populations, Qualifiers.from_statement, None)] == ["2023"]
    assert [main_item(s) for s in best(populations, Qualifiers.from_statement, year(2020))] == ["2020"]
    assert best(populations, Qualifiers.from_statement, year(2019)) == []  # a day of 2019 cannot stand for the year
    assert [main_item(s) for s in best(populations, Qualifiers.from_statement, Time(2019, 1, 1))] == ["2019"]
    assert best(populations, Qualifiers.from_statement, year(1990)) == []
