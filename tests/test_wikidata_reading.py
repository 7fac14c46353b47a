"""Reading an entity claim: the entity, the relation (its Wikidata properties) and the claimed value."""

import pytest

from factcheck.wikidata.reading import Reading, read_claim
from factcheck.wikidata.values import ClaimedQuantity, Time


def _one(text: str) -> Reading:
    readings = read_claim(text)
    assert len(readings) == 1, readings
    return readings[0]


def _properties(reading: Reading) -> set[str]:
    return {relation.property for relation in reading.relations}


@pytest.mark.parametrize(
    ("claim", "subject", "prop", "value"),
    [
        ("The Eiffel Tower is located in Paris.", "Eiffel Tower", "P131", "Paris"),
        ("The Eiffel Tower is in Berlin.", "Eiffel Tower", "P131", "Berlin"),
        ("Paris is the capital of France.", "France", "P36", "Paris"),
        ("The capital of France is Paris.", "France", "P36", "Paris"),
        (
            "J. K. Rowling wrote Harry Potter and the Philosopher's Stone.",
            "Harry Potter and the Philosopher's Stone",
            "P50",
            "J. K. Rowling",
        ),
        (
            "Harry Potter and the Philosopher's Stone was written by J. K. Rowling.",
            "Harry Potter and the Philosopher's Stone",
            "P50",
            "J. K. Rowling",
        ),
        ("Microsoft was founded by Bill Gates.", "Microsoft", "P112", "Bill Gates"),
        ("Germany is a member of the European Union.", "Germany", "P463", "European Union"),
        ("Marie Curie was a citizen of Poland.", "Marie Curie", "P27", "Poland"),
        ("Paris, Texas is in the United States.", "Paris, Texas", "P131", "United States"),
    ],
)
def test_item_claims_read_as_the_entity_the_property_and_the_named_value(
    claim: str, subject: str, prop: str, value: str
) -> None:
    reading = _one(claim)
    assert (reading.subject, reading.kind, reading.value) == (subject, "item", value)
    assert prop in _properties(reading)


def test_a_date_and_a_place_in_one_claim_are_two_readings() -> None:
    readings = {r.kind: r for r in read_claim("Albert Einstein was born on 14 March 1879 in Ulm.")}
    assert set(readings) == {"item", "time"}
    assert _properties(readings["item"]) == {"P19"} and readings["item"].value == "Ulm"
    born = readings["time"].value
    assert isinstance(born, Time) and (born.year, born.month, born.day, born.precision) == (1879, 3, 14, 11)
    assert _properties(readings["time"]) == {"P569"}


def test_a_year_is_the_value_of_a_time_relation() -> None:
    reading = _one("The Eiffel Tower opened in 1889.")
    assert reading.kind == "time" and _properties(reading) == {"P1619"}
    assert isinstance(reading.value, Time) and (reading.value.year, reading.value.precision) == (1889, 9)
    assert reading.when is None


@pytest.mark.parametrize(
    ("claim", "subject", "props", "amount"),
    [
        ("Mount Everest is 8,849 metres high.", "Mount Everest", {"P2048", "P2044"}, 8849),
        ("The height of Mount Everest is 8,849 m.", "Mount Everest", {"P2048"}, 8849),
        ("The Nile is 6,650 km long.", "Nile", {"P2043"}, 6650),
        ("Tokyo has a population of about 14 million.", "Tokyo", {"P1082"}, 14_000_000),
    ],
)
def test_figures_read_as_quantities_of_the_named_property(
    claim: str, subject: str, props: set[str], amount: float
) -> None:
    reading = _one(claim)
    assert (reading.subject, reading.kind) == (subject, "quantity")
    assert props <= _properties(reading)
    assert isinstance(reading.value, ClaimedQuantity) and reading.value.amount == amount


def test_a_time_that_is_not_the_value_is_when_the_claim_speaks_of() -> None:
    reading = _one("Bonn was the capital of West Germany in 1980.")
    assert (reading.subject, reading.value) == ("West Germany", "Bonn") and _properties(reading) == {"P36"}
    assert reading.when is not None and reading.when.year == 1980


def test_a_denial_is_read_as_negated() -> None:
    reading = _one("Berlin is not the capital of France.")
    assert reading.negated and (reading.subject, reading.value) == ("France", "Berlin")


@pytest.mark.parametrize(
    "claim",
    ["Statins lower LDL cholesterol.", "Vitamin C cures the common cold.", "Smoking causes lung cancer."],
)
def test_a_claim_about_no_entity_has_no_reading(claim: str) -> None:
    assert read_claim(claim) == ()
