# ruff: noqa: RUF001  (Wikidata writes year ranges in descriptions with an en dash)
"""Writes entities.json (Wikidata's statements, in wbgetentities' shape) from the declarations below.

Run ``python bench/probes/wikidata/build.py`` after changing a declaration; the output is
deterministic (statement GUIDs and snak hashes are derived from the statement itself), so an
unchanged declaration rewrites the same file. The claims are in claims.jsonl, written by hand.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ENTITY = "http://www.wikidata.org/entity/"
GREGORIAN = ENTITY + "Q1985727"
JULIAN = ENTITY + "Q1985786"
UNITS = {"m": "Q11573", "km": "Q828224", "ft": "Q3710", "mi": "Q253276", "km2": "Q712226"}
NAMESPACE = uuid.UUID("6f1d2c4e-44a0-4b8e-9a7c-0e1f2d3c4b5a")  # GUIDs made up in the real format, stable per statement

# --- values -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    id: str


@dataclass(frozen=True)
class Time:
    text: str  # "1889-03-31", "1889-03", "1889", "1880s", "-0753"
    calendar: str | None = None


@dataclass(frozen=True)
class Quantity:
    amount: str
    unit: str = "1"
    lower: str | None = None
    upper: str | None = None


@dataclass(frozen=True)
class Special:
    snaktype: str  # somevalue | novalue


SOME = Special("somevalue")
NONE = Special("novalue")
Value = Item | Time | Quantity | Special | str


def signed(number: str) -> str:
    return number if number.startswith(("+", "-")) else "+" + number


def time_value(value: Time) -> dict[str, Any]:
    text = value.text
    sign = "-" if text.startswith("-") else "+"
    text = text.lstrip("+-")
    if text.endswith("s"):  # a decade
        year, month, day, precision = text[:-1], "00", "00", 8
    else:
        parts = text.split("-")
        year = parts[0]
        month = parts[1] if len(parts) > 1 else "00"
        day = parts[2] if len(parts) > 2 else "00"
        precision = 9 + (len(parts) > 1) + (len(parts) > 2)
    calendar = value.calendar or (JULIAN if sign == "-" or int(year) < 1583 else GREGORIAN)
    return {
        "time": f"{sign}{int(year):04d}-{month}-{day}T00:00:00Z",
        "timezone": 0,
        "before": 0,
        "after": 0,
        "precision": precision,
        "calendarmodel": calendar,
    }


def datavalue(value: Value) -> dict[str, Any]:
    if isinstance(value, Item):
        kind = "property" if value.id.startswith("P") else "item"
        return {
            "value": {"entity-type": kind, "numeric-id": int(value.id[1:]), "id": value.id},
            "type": "wikibase-entityid",
        }
    if isinstance(value, Time):
        return {"value": time_value(value), "type": "time"}
    if isinstance(value, Quantity):
        unit = value.unit if value.unit == "1" else ENTITY + UNITS.get(value.unit, value.unit)
        amount: dict[str, Any] = {"amount": signed(value.amount), "unit": unit}
        if value.upper is not None and value.lower is not None:
            amount["upperBound"] = signed(value.upper)
            amount["lowerBound"] = signed(value.lower)
        return {"value": amount, "type": "quantity"}
    if isinstance(value, str):
        return {"value": value, "type": "string"}
    raise TypeError(value)


def digest(data: Any) -> str:
    return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()


# --- declarations -----------------------------------------------------------------------

PROPERTIES: dict[str, dict[str, Any]] = {}
ITEMS: dict[str, dict[str, Any]] = {}


@dataclass
class Statement:
    subject: str
    property: str
    value: Value
    rank: str = "normal"
    qualifiers: list[tuple[str, Value]] = field(default_factory=list)
    references: list[list[tuple[str, Value]]] = field(default_factory=list)


STATEMENTS: list[Statement] = []


def prop(pid: str, label: str, description: str, datatype: str, *aliases: str) -> None:
    PROPERTIES[pid] = {"label": label, "description": description, "datatype": datatype, "aliases": aliases}


def item(qid: str, label: str, description: str, *aliases: str, popularity: int | None = None) -> None:
    assert qid not in ITEMS, qid
    ITEMS[qid] = {"label": label, "description": description, "aliases": aliases, "popularity": popularity}


def st(
    subject: str, pid: str, value: Value | str, rank: str = "normal", *, refs: bool = False, **qualifiers: Value | str
) -> None:
    """A statement; a bare "Q.." string is an item value, qualifiers are keyword P-ids."""
    STATEMENTS.append(
        Statement(
            subject,
            pid,
            as_value(value),
            rank,
            [(key, as_value(v)) for key, v in qualifiers.items()],
            [[("P143", Item("Q328"))]] if refs else [],
        )
    )


def as_value(value: Value | str) -> Value:
    if isinstance(value, str) and value[:1] in "QP" and value[1:].isdigit():
        return Item(value)
    return value


def T(text: str, calendar: str | None = None) -> Time:
    return Time(text, calendar)


def N(amount: str, unit: str = "1", lower: str | None = None, upper: str | None = None) -> Quantity:
    return Quantity(amount, unit, lower, upper)


# Properties: real ids, labels, a few of their real aliases, datatypes.
prop(
    "P31",
    "instance of",
    "type to which this subject corresponds/belongs",
    "wikibase-item",
    "is a",
    "is an",
    "type",
    "rdf:type",
)
prop("P17", "country", "sovereign state that this item is in", "wikibase-item", "sovereign state", "land", "state")
prop(
    "P131",
    "located in the administrative territorial entity",
    "the item is located on the territory of the following administrative entity",
    "wikibase-item",
    "is located in",
    "located in",
    "in",
    "city",
    "region",
    "state",
    "municipality",
)
prop(
    "P276",
    "location",
    "location of the object, structure or event",
    "wikibase-item",
    "located",
    "place",
    "venue",
    "is in",
    "moveable object location",
)
prop(
    "P36",
    "capital",
    "seat of government of a country, province, state or other type of administrative territorial entity",
    "wikibase-item",
    "capital city",
    "has capital",
    "seat",
)
prop(
    "P1376",
    "capital of",
    "country, state, department, canton or other administrative division of which the municipality is the "
    "governmental seat",
    "wikibase-item",
    "is capital of",
    "capital city of",
)
prop(
    "P19",
    "place of birth",
    "most specific known birth location of a person, animal or fictional character",
    "wikibase-item",
    "birthplace",
    "born in",
    "POB",
    "birth place",
)
prop(
    "P20",
    "place of death",
    "most specific known place of death",
    "wikibase-item",
    "deathplace",
    "died in",
    "POD",
    "death place",
)
prop("P50", "author", "main creator(s) of a written work", "wikibase-item", "writer", "written by", "by", "creator")
prop(
    "P112",
    "founded by",
    "founder or co-founder of this organization, religion, place or entity",
    "wikibase-item",
    "founder",
    "co-founder",
    "established by",
    "started by",
)
prop(
    "P57",
    "director",
    "director(s) of film, TV-series, stageplay, video game or similar",
    "wikibase-item",
    "directed by",
    "film director",
    "movie director",
)
prop(
    "P463",
    "member of",
    "organization, club or musical group to which the subject belongs",
    "wikibase-item",
    "is member of",
    "belongs to",
    "membership",
)
prop(
    "P27",
    "country of citizenship",
    "the object is a country that recognizes the subject as its citizen",
    "wikibase-item",
    "citizenship",
    "citizen of",
    "nationality",
    "subject of",
)
prop(
    "P69",
    "educated at",
    "educational institution attended by subject",
    "wikibase-item",
    "alma mater",
    "education",
    "studied at",
    "school",
    "university",
)
prop("P106", "occupation", "occupation of a person", "wikibase-item", "profession", "job", "work", "career")
prop(
    "P30",
    "continent",
    "continent of which the subject is a part",
    "wikibase-item",
    "located on continent",
    "on continent",
)
prop(
    "P35",
    "head of state",
    "official with the highest formal authority in a country/state",
    "wikibase-item",
    "president",
    "monarch",
    "king",
    "queen",
    "chief of state",
)
prop(
    "P170",
    "creator",
    "maker of this creative work or other object",
    "wikibase-item",
    "artist",
    "made by",
    "painter",
    "sculptor",
    "author",
)
prop(
    "P26",
    "spouse",
    "the subject has the object as their spouse",
    "wikibase-item",
    "husband",
    "wife",
    "married to",
    "partner",
)
prop(
    "P84",
    "architect",
    "person or architectural firm responsible for designing this building",
    "wikibase-item",
    "architecture firm",
    "designed by",
    "architects",
)
prop(
    "P397",
    "parent astronomical body",
    "major astronomical body the item belongs to",
    "wikibase-item",
    "orbits",
    "primary",
    "parent body",
    "star",
)
prop(
    "P2241",
    "reason for deprecated rank",
    "qualifier to indicate why a particular statement should have deprecated rank",
    "wikibase-item",
    "deprecation reason",
    "reason for deprecation",
    "why deprecated",
)
prop(
    "P143",
    "imported from Wikimedia project",
    "source of this claim's value; used in references section by bots or humans importing data from Wikimedia projects",
    "wikibase-item",
    "imported from",
    "Wikimedia import URL",
)
prop("P569", "date of birth", "date on which the subject was born", "time", "birth date", "born on", "DOB", "birthdate")
prop("P570", "date of death", "date on which the subject died", "time", "death date", "died on", "DOD", "deathdate")
prop(
    "P571",
    "inception",
    "time when an entity begins to exist",
    "time",
    "founded",
    "established",
    "date of foundation",
    "founding date",
    "created",
    "built",
)
prop(
    "P1619",
    "date of official opening",
    "date or point in time an event, museum, theater etc. officially opened",
    "time",
    "opening date",
    "opened",
    "inauguration",
    "dedicated",
)
prop(
    "P577",
    "publication date",
    "date or point in time when a work was first published or released",
    "time",
    "release date",
    "published",
    "date of publication",
    "first published",
    "released",
)
prop(
    "P585",
    "point in time",
    "date something took place, existed or a statement was true",
    "time",
    "date",
    "as of",
    "at time",
    "year",
)
prop(
    "P580",
    "start time",
    "time an entity begins to exist or a statement starts being valid",
    "time",
    "from",
    "since",
    "starting",
    "began",
)
prop(
    "P582",
    "end time",
    "moment when an entity ceases to exist or a statement stops being valid",
    "time",
    "until",
    "till",
    "ended",
    "to",
)
prop("P2048", "height", "vertical length of an entity", "quantity", "tallness", "tall", "high", "overall height")
prop(
    "P2044",
    "elevation above sea level",
    "height of the item (geographical object) as measured relative to sea level",
    "quantity",
    "altitude",
    "elevation",
    "height above sea level",
    "above sea level",
)
prop("P2043", "length", "measured dimension of an object", "quantity", "long", "extent", "total length")
prop("P2046", "area", "area occupied by an object", "quantity", "surface area", "size", "total area", "land area")
prop(
    "P1082",
    "population",
    "number of people inhabiting the place; number of people of subject",
    "quantity",
    "inhabitants",
    "number of inhabitants",
    "resident population",
    "human population",
)
prop("P1086", "atomic number", "number of protons found in the nucleus of the atom", "quantity", "Z", "proton number")
prop(
    "P2120",
    "radius",
    "distance between the center and the surface of a circle or sphere",
    "quantity",
    "radius of the object",
    "r",
)

# Classes, units and reasons (values of P31, units of quantities, P2241, P143).
item(
    "Q5",
    "human",
    "any member of Homo sapiens, unique extant species of the genus Homo",
    "person",
    "people",
    "human being",
)
item("Q6256", "country", "distinct territorial body or political entity", "nation", "land")
item(
    "Q3624078",
    "sovereign state",
    "state that has the highest authority over a territory",
    "sovereign country",
    "independent state",
)
item("Q515", "city", "large human settlement", "town", "metropolis")
item(
    "Q35657",
    "state of the United States",
    "constituent political entity of the United States of America",
    "U.S. state",
    "US state",
)
item(
    "Q56061",
    "administrative territorial entity",
    "territorial entity for administration purposes",
    "administrative division",
    "administrative unit",
)
item("Q11424", "film", "sequence of images that give the impression of movement", "movie", "motion picture")
item("Q7725634", "literary work", "written work of literature", "work of literature")
item("Q8502", "mountain", "large natural elevation of the Earth's surface", "mount", "peak")
item("Q4022", "river", "natural watercourse", "stream")
item("Q3305213", "painting", "artwork produced with paint on a surface", "picture")
item(
    "Q4830453",
    "business",
    "organization undertaking commercial, industrial, or professional activity",
    "company",
    "enterprise",
    "firm",
)
item("Q43229", "organization", "social entity with a collective goal", "organisation")
item(
    "Q12280",
    "bridge",
    "structure that spans and provides a passage over a road, railway, river, or some other obstacle",
)
item(
    "Q41176",
    "building",
    "structure, typically with a roof and walls, standing more or less permanently in one place",
    "edifice",
)
item("Q11303", "skyscraper", "tall building", "high-rise")
item("Q12518", "tower", "tall structure, taller than it is wide")
item(
    "Q33506",
    "museum",
    "institution that holds artifacts and other objects of scientific, artistic, cultural, or historical importance",
)
item("Q4989906", "monument", "type of structure created to commemorate a person or event", "memorial")
item("Q634", "planet", "celestial body directly orbiting a star or stellar remnant")
item("Q11344", "chemical element", "species of atoms having the same number of protons", "element")
item(
    "Q36180",
    "writer",
    "person who uses written words to communicate ideas and to produce works of literature",
    "author",
)
item("Q169470", "physicist", "scientist who does research in physics")
item("Q593644", "chemist", "scientist trained in the study of chemistry")
item("Q36834", "composer", "person who creates music")
item("Q1028181", "painter", "person who creates paintings", "artist")
item("Q82955", "politician", "person involved in politics")
item("Q2526255", "film director", "person who directs a film", "director", "movie director")
item("Q11573", "metre", "SI unit of length", "m", "meter", "meters", "metres")
item("Q828224", "kilometre", "unit of length equal to 1,000 metres", "km", "kilometer", "kilometers", "kilometres")
item("Q3710", "foot", "unit of length", "ft", "feet")
item("Q253276", "mile", "imperial and US customary unit of distance", "mi", "miles", "statute mile")
item("Q712226", "square kilometre", "unit of area", "km²", "km2", "square kilometer", "sq km")
item(
    "Q1985727",
    "proleptic Gregorian calendar",
    "extension of the Gregorian calendar to dates before its 1582 introduction",
    "Gregorian calendar",
)
item(
    "Q1985786",
    "proleptic Julian calendar",
    "extension of the Julian calendar to dates before its 45 BC introduction",
    "Julian calendar",
)
item("Q41755623", "incorrect value", "reason for deprecation: the value is wrong", "wrong value", "erroneous value")
item(
    "Q42727519",
    "item/value with less precision and/or accuracy",
    "reason for deprecated rank: another statement gives the value more precisely",
)
item("Q328", "English Wikipedia", "English-language edition of Wikipedia", "enwiki", "en.wikipedia.org")
item("Q525", "Sun", "star at the centre of the Solar System", "Sol", "the Sun")

# Continents.
item("Q46", "Europe", "continent", "European continent")
item("Q48", "Asia", "continent", "Asian continent")
item("Q15", "Africa", "continent", "African continent")
item("Q49", "North America", "continent on the Earth's northwestern quadrant", "N. America")
item("Q18", "South America", "continent", "S. America")

# Countries.
item("Q142", "France", "country in Western Europe", "French Republic", "FR", "République française", popularity=980)
item(
    "Q183",
    "Germany",
    "country in Central Europe",
    "Federal Republic of Germany",
    "FRG",
    "DE",
    "Deutschland",
    popularity=975,
)
item(
    "Q30",
    "United States",
    "country located primarily in North America",
    "USA",
    "U.S.",
    "US",
    "United States of America",
    "America",
    "U.S.A.",
    popularity=1000,
)
item(
    "Q145",
    "United Kingdom",
    "country in north-west Europe",
    "UK",
    "U.K.",
    "Britain",
    "Great Britain",
    "United Kingdom of Great Britain and Northern Ireland",
    popularity=970,
)
item("Q17", "Japan", "island country in East Asia", "Nippon", "JP", popularity=960)
item("Q38", "Italy", "country in Southern Europe", "Italian Republic", "IT", popularity=950)
item("Q29", "Spain", "country in southwestern Europe", "Kingdom of Spain", "ES", popularity=945)
item("Q155", "Brazil", "country in South America", "Federative Republic of Brazil", "Brasil", popularity=940)
item("Q16", "Canada", "country in North America", "CA", popularity=935)
item("Q408", "Australia", "country in Oceania", "Commonwealth of Australia", "AU", popularity=930)
item("Q668", "India", "country in South Asia", "Republic of India", "Bharat", popularity=925)
item("Q148", "People's Republic of China", "country in East Asia", "China", "PRC", popularity=920)
item(
    "Q43",
    "Turkey",
    "country straddling Western Asia and Southeast Europe",
    "Türkiye",
    "Republic of Türkiye",
    popularity=900,
)
item("Q1033", "Nigeria", "country in West Africa", "Federal Republic of Nigeria", popularity=880)
item("Q232", "Kazakhstan", "country in Central Asia and Eastern Europe", "Republic of Kazakhstan", popularity=860)
item("Q836", "Myanmar", "country in Southeast Asia", "Burma", "Republic of the Union of Myanmar", popularity=850)
item("Q843", "Pakistan", "country in South Asia", "Islamic Republic of Pakistan", popularity=870)
item("Q39", "Switzerland", "country in Central Europe", "Swiss Confederation", "CH", popularity=890)
item("Q20", "Norway", "country in Northern Europe", "Kingdom of Norway", "NO", popularity=885)
item("Q34", "Sweden", "country in Northern Europe", "Kingdom of Sweden", "SE", popularity=884)
item("Q40", "Austria", "country in Central Europe", "Republic of Austria", "AT", popularity=870)
item("Q36", "Poland", "country in Central Europe", "Republic of Poland", "PL", popularity=865)
item("Q114", "Kenya", "country in East Africa", "Republic of Kenya", popularity=820)
item("Q924", "Tanzania", "country in East Africa", "United Republic of Tanzania", popularity=800)
item("Q837", "Nepal", "country in South Asia", "Federal Democratic Republic of Nepal", popularity=790)
item("Q878", "United Arab Emirates", "country in Western Asia", "UAE", "U.A.E.", "Emirates", popularity=830)
item("Q230", "Georgia", "country in the Caucasus", "Sakartvelo", popularity=700)
item("Q21", "England", "country within the United Kingdom", popularity=900)
item("Q22", "Scotland", "country within the United Kingdom", popularity=880)

# Sub-national entities and cities.
item("Q90", "Paris", "capital city of France", "City of Light", "Paris, France", popularity=990)
item(
    "Q830149",
    "Paris",
    "city in and county seat of Lamar County, Texas, United States",
    "Paris, Texas",
    "Paris, TX",
    popularity=120,
)
item(
    "Q259463",
    "7th arrondissement of Paris",
    "municipal arrondissement of Paris, France",
    "Paris 7e",
    "7e arrondissement",
    "Palais-Bourbon",
)
item(
    "Q161741",
    "1st arrondissement of Paris",
    "municipal arrondissement of Paris, France",
    "Paris 1er",
    "1er arrondissement",
    "Louvre arrondissement",
)
item("Q13917", "Île-de-France", "region of France", "Ile-de-France", "Paris Region", "IDF", popularity=600)
item("Q456", "Lyon", "city in France", "Lyons", popularity=700)
item("Q64", "Berlin", "capital and largest city of Germany", "Berlin, Germany", popularity=985)
item("Q586", "Bonn", "federal city in North Rhine-Westphalia, Germany", "Federal City of Bonn", popularity=650)
item("Q1726", "Munich", "capital and most populous city of Bavaria, Germany", "München", "Muenchen", popularity=800)
item("Q980", "Bavaria", "state of Germany", "Free State of Bavaria", "Bayern", popularity=700)
item("Q3012", "Ulm", "city in Baden-Württemberg, Germany", popularity=400)
item("Q985", "Baden-Württemberg", "state of Germany", "Baden-Wurttemberg", "BW", popularity=600)
item("Q2079", "Leipzig", "city in Saxony, Germany", popularity=600)
item("Q84", "London", "capital and largest city of the United Kingdom", "London, UK", popularity=995)
item("Q23306", "Greater London", "ceremonial county in England", popularity=500)
item("Q179351", "City of Westminster", "borough of London, England", "Westminster", popularity=450)
item("Q1490", "Tokyo", "capital and largest city of Japan", "Tokyo Metropolis", "Tōkyō", "Edo", popularity=970)
item("Q34600", "Kyoto", "city in Kyoto Prefecture, Japan", "Kyōto", "Heian-kyō", popularity=650)
item("Q220", "Rome", "capital and largest city of Italy", "Roma", "Eternal City", popularity=975)
item("Q1282", "Lazio", "region of Italy", "Latium", popularity=500)
item("Q13375", "Pisa", "city in Tuscany, Italy", popularity=450)
item("Q2044", "Florence", "city in Tuscany, Italy", "Firenze", popularity=700)
item("Q1273", "Tuscany", "region of Italy", "Toscana", popularity=600)
item("Q1492", "Barcelona", "city in Catalonia, Spain", "Barna", "BCN", popularity=850)
item("Q5705", "Catalonia", "autonomous community of Spain", "Catalunya", "Cataluña", popularity=650)
item("Q2807", "Madrid", "capital and largest city of Spain", popularity=900)
item(
    "Q60",
    "New York City",
    "most populous city in the United States",
    "NYC",
    "New York",
    "the Big Apple",
    "City of New York",
    popularity=995,
)
item("Q11299", "Manhattan", "borough of New York City, New York, United States", "New York County", popularity=800)
item(
    "Q1384",
    "New York",
    "state of the United States of America",
    "New York State",
    "NY",
    "State of New York",
    popularity=850,
)
item("Q1408", "New Jersey", "state of the United States of America", "NJ", "State of New Jersey", popularity=700)
item(
    "Q62",
    "San Francisco",
    "consolidated city-county in California, United States",
    "SF",
    "San Francisco, California",
    "Frisco",
    popularity=880,
)
item("Q65", "Los Angeles", "city in California, United States", "LA", "L.A.", "City of Angels", popularity=900)
item(
    "Q99", "California", "state of the United States of America", "CA", "Calif.", "State of California", popularity=900
)
item(
    "Q61",
    "Washington, D.C.",
    "capital city of the United States of America",
    "Washington",
    "DC",
    "D.C.",
    "District of Columbia",
    popularity=940,
)
item("Q1345", "Philadelphia", "largest city in Pennsylvania, United States", "Philly", popularity=800)
item("Q1297", "Chicago", "city in Illinois, United States", "Chicago, Illinois", "Windy City", popularity=880)
item("Q18094", "Honolulu", "capital city of Hawaii, United States", "Honolulu, Hawaii", popularity=600)
item("Q782", "Hawaii", "state of the United States of America", "HI", "Hawai'i", "State of Hawaii", popularity=650)
item(
    "Q138518",
    "Princeton",
    "municipality in Mercer County, New Jersey, United States",
    "Princeton, New Jersey",
    popularity=400,
)
item(
    "Q1428",
    "Georgia",
    "state of the United States of America",
    "GA",
    "State of Georgia",
    "Georgia (U.S. state)",
    popularity=690,
)
item(
    "Q23556",
    "Atlanta",
    "capital and most populous city of Georgia, United States",
    "Atlanta, Georgia",
    "ATL",
    popularity=750,
)
item("Q83813", "Savannah", "city in Georgia, United States", "Savannah, Georgia", popularity=450)
item("Q994", "Tbilisi", "capital city of Georgia", "Tiflis", popularity=500)
item("Q797", "Alaska", "state of the United States of America", "AK", "State of Alaska", popularity=650)
item("Q3130", "Sydney", "capital city of New South Wales, Australia", "Sydney, Australia", popularity=900)
item("Q3224", "New South Wales", "state of Australia", "NSW", popularity=600)
item("Q36687", "Victoria", "state of Australia", "Victoria, Australia", "VIC", popularity=580)
item("Q3114", "Canberra", "capital city of Australia", popularity=700)
item("Q3141", "Melbourne", "capital city of Victoria, Australia", popularity=850)
item("Q8678", "Rio de Janeiro", "city in the state of Rio de Janeiro, Brazil", "Rio", popularity=880)
item("Q41428", "Rio de Janeiro", "state of Brazil", "Rio de Janeiro State", "RJ", popularity=500)
item("Q174", "São Paulo", "city in São Paulo State, Brazil", "Sao Paulo", "Sampa", popularity=870)
item("Q2844", "Brasília", "federal capital of Brazil", "Brasilia", popularity=700)
item("Q1930", "Ottawa", "capital city of Canada", "Ottawa, Ontario", popularity=750)
item("Q172", "Toronto", "city in Ontario, Canada", "Toronto, Ontario", popularity=850)
item("Q3640", "Ankara", "capital of Turkey", "Angora", popularity=700)
item("Q406", "Istanbul", "largest city in Turkey", "Constantinople", "Byzantium", popularity=880)
item("Q3787", "Abuja", "capital city of Nigeria", popularity=550)
item("Q8673", "Lagos", "largest city in Nigeria", popularity=650)
item("Q1520", "Astana", "capital city of Kazakhstan", "Nur-Sultan", "Akmola", "Tselinograd", popularity=550)
item("Q35493", "Almaty", "largest city in Kazakhstan", "Alma-Ata", "Verny", popularity=560)
item("Q37400", "Naypyidaw", "capital city of Myanmar", "Nay Pyi Taw", "Naypyitaw", popularity=450)
item("Q37995", "Yangon", "largest city in Myanmar", "Rangoon", popularity=550)
item("Q1362", "Islamabad", "capital city of Pakistan", popularity=600)
item("Q8660", "Karachi", "largest city in Pakistan", popularity=650)
item("Q270", "Warsaw", "capital and largest city of Poland", "Warszawa", popularity=800)
item("Q1741", "Vienna", "capital and largest city of Austria", "Wien", popularity=900)
item("Q34713", "Salzburg", "city in Austria", "Salzburg city", popularity=500)
item("Q70", "Bern", "de facto capital city of Switzerland", "Berne", popularity=600)
item("Q612", "Dubai", "city in the United Arab Emirates", "Dubayy", popularity=800)
item("Q42941", "Agra", "city in Uttar Pradesh, India", popularity=500)
item("Q1498", "Uttar Pradesh", "state of India", "UP", popularity=550)
item(
    "Q1353",
    "Delhi",
    "megacity and union territory of India",
    "National Capital Territory of Delhi",
    "NCT",
    popularity=800,
)
item("Q987", "New Delhi", "capital city of India", popularity=700)

# Landmarks, mountains, rivers.
item(
    "Q243",
    "Eiffel Tower",
    "tower located on the Champ de Mars in Paris, France",
    "Tour Eiffel",
    "Eiffel tower",
    "La Dame de fer",
    "Iron Lady",
    popularity=900,
)
item(
    "Q19675", "Louvre", "art museum in Paris, France", "Louvre Museum", "Musée du Louvre", "The Louvre", popularity=880
)
item(
    "Q44440",
    "Golden Gate Bridge",
    "suspension bridge in San Francisco, California, United States",
    "GGB",
    popularity=820,
)
item("Q42182", "Buckingham Palace", "official London residence of the British monarch", popularity=780)
item("Q45178", "Sydney Opera House", "performing arts centre in Sydney, Australia", "Opera House", popularity=800)
item("Q9188", "Empire State Building", "skyscraper in Manhattan, New York City, United States", "ESB", popularity=820)
item(
    "Q9202",
    "Statue of Liberty",
    "colossal sculpture on Liberty Island, New York Harbor, United States",
    "Liberty Enlightening the World",
    "Lady Liberty",
    popularity=850,
)
item(
    "Q10285", "Colosseum", "amphitheatre in Rome, Italy", "Flavian Amphitheatre", "Coliseum", "Colosseo", popularity=860
)
item(
    "Q39054",
    "Leaning Tower of Pisa",
    "freestanding bell tower of Pisa Cathedral, Italy",
    "Tower of Pisa",
    "Torre di Pisa",
    popularity=780,
)
item(
    "Q48435",
    "Sagrada Família",
    "basilica in Barcelona, Catalonia, Spain",
    "Sagrada Familia",
    "Basílica de la Sagrada Família",
    popularity=790,
)
item("Q9141", "Taj Mahal", "mausoleum in Agra, India", "Taj", popularity=870)
item("Q79961", "Christ the Redeemer", "statue of Jesus in Rio de Janeiro, Brazil", "Cristo Redentor", popularity=760)
item(
    "Q12495", "Burj Khalifa", "skyscraper in Dubai, United Arab Emirates", "Burj Dubai", "Khalifa Tower", popularity=810
)
item(
    "Q82425",
    "Brandenburg Gate",
    "18th-century neoclassical monument in Berlin, Germany",
    "Brandenburger Tor",
    popularity=760,
)
item(
    "Q513",
    "Mount Everest",
    "Earth's highest mountain above sea level",
    "Everest",
    "Chomolungma",
    "Sagarmatha",
    "Qomolangma",
    popularity=900,
)
item("Q43512", "K2", "second-highest mountain on Earth", "Mount Godwin-Austen", "Chhogori", popularity=700)
item("Q583", "Mont Blanc", "highest mountain in the Alps", "Monte Bianco", "Mont-Blanc", popularity=650)
item("Q39231", "Mount Fuji", "highest mountain in Japan", "Fuji", "Fujisan", "Fuji-san", "Fujiyama", popularity=750)
item("Q130018", "Denali", "highest mountain in North America", "Mount McKinley", "McKinley", popularity=640)
item(
    "Q7296",
    "Mount Kilimanjaro",
    "dormant volcano in Tanzania, the highest mountain in Africa",
    "Kilimanjaro",
    "Kibo",
    popularity=700,
)
item("Q3392", "Nile", "major river in northeastern Africa", "Nile River", "River Nile", popularity=800)
item("Q3783", "Amazon River", "river in South America", "Amazon", "Rio Amazonas", popularity=790)
item(
    "Q1497",
    "Mississippi River",
    "largest river system in North America",
    "Mississippi",
    "Mighty Mississippi",
    popularity=700,
)
item("Q584", "Rhine", "river in Western Europe", "Rhine River", "Rhein", "Rhin", popularity=690)
item("Q1653", "Danube", "river in Central and Eastern Europe", "Danube River", "Donau", popularity=680)
item("Q308", "Mercury", "planet closest to the Sun", "Mercury (planet)", "planet Mercury", popularity=800)
item(
    "Q925",
    "mercury",
    "chemical element with symbol Hg and atomic number 80",
    "Hg",
    "quicksilver",
    "element 80",
    popularity=600,
)

# Works.
item(
    "Q12418",
    "Mona Lisa",
    "painting by Leonardo da Vinci",
    "La Gioconda",
    "La Joconde",
    "Portrait of Lisa Gherardini",
    popularity=900,
)
item("Q45585", "The Starry Night", "painting by Vincent van Gogh", "Starry Night", "De sterrennacht", popularity=800)
item("Q51252", "Uffizi Gallery", "art museum in Florence, Italy", "Uffizi", "Galleria degli Uffizi", popularity=600)
item("Q188740", "Museum of Modern Art", "art museum in New York City, United States", "MoMA", "MOMA", popularity=700)
item("Q208460", "Nineteen Eighty-Four", "1949 novel by George Orwell", "1984", "Nineteen Eighty Four", popularity=850)
item("Q170583", "Pride and Prejudice", "1813 novel by Jane Austen", popularity=800)
item(
    "Q74287",
    "The Hobbit",
    "1937 fantasy novel by J. R. R. Tolkien",
    "The Hobbit, or There and Back Again",
    "Hobbit",
    popularity=800,
)
item(
    "Q174596",
    "Moby-Dick",
    "1851 novel by Herman Melville",
    "Moby Dick",
    "The Whale",
    "Moby-Dick; or, The Whale",
    popularity=780,
)
item("Q161531", "War and Peace", "novel by Leo Tolstoy", "Voyna i mir", popularity=760)
item("Q150827", "Frankenstein", "1818 novel by Mary Shelley", "Frankenstein; or, The Modern Prometheus", popularity=770)
item(
    "Q20124",
    "On the Origin of Species",
    "1859 book by Charles Darwin",
    "The Origin of Species",
    "Origin of Species",
    popularity=750,
)
item(
    "Q480",
    "Don Quixote",
    "novel by Miguel de Cervantes",
    "Don Quijote",
    "The Ingenious Gentleman Don Quixote of La Mancha",
    popularity=780,
)
item("Q214371", "The Great Gatsby", "1925 novel by F. Scott Fitzgerald", "Great Gatsby", popularity=760)
item(
    "Q43361",
    "Harry Potter and the Philosopher's Stone",
    "1997 fantasy novel by J. K. Rowling",
    "Harry Potter and the Sorcerer's Stone",
    "Philosopher's Stone",
    popularity=800,
)
item("Q44578", "Titanic", "1997 film directed by James Cameron", "Titanic (1997 film)", popularity=820)
item("Q189505", "Jaws", "1975 film directed by Steven Spielberg", "Jaws (film)", popularity=740)
item(
    "Q47703",
    "The Godfather",
    "1972 film directed by Francis Ford Coppola",
    "Godfather",
    "Mario Puzo's The Godfather",
    popularity=820,
)
item("Q104123", "Pulp Fiction", "1994 film directed by Quentin Tarantino", popularity=780)
item("Q163038", "Psycho", "1960 film directed by Alfred Hitchcock", "Psycho (1960 film)", popularity=700)
item(
    "Q103474",
    "2001: A Space Odyssey",
    "1968 film directed by Stanley Kubrick",
    "2001",
    "2001 A Space Odyssey",
    popularity=750,
)
item(
    "Q17738",
    "Star Wars",
    "1977 film directed by George Lucas",
    "Star Wars: Episode IV – A New Hope",
    "A New Hope",
    "Star Wars Episode IV",
    popularity=830,
)
item("Q25188", "Inception", "2010 film directed by Christopher Nolan", popularity=760)
item("Q24871", "Avatar", "2009 film directed by James Cameron", "Avatar (2009 film)", popularity=770)
item("Q24815", "Citizen Kane", "1941 film directed by Orson Welles", popularity=700)

# Organizations.
item("Q1065", "United Nations", "intergovernmental organization", "UN", "U.N.", "the UN", popularity=950)
item("Q458", "European Union", "political and economic union of 27 European states", "EU", "E.U.", popularity=940)
item(
    "Q7184",
    "NATO",
    "intergovernmental military alliance",
    "North Atlantic Treaty Organization",
    "OTAN",
    "the Alliance",
    popularity=930,
)
item(
    "Q2283",
    "Microsoft",
    "American multinational technology corporation",
    "Microsoft Corporation",
    "MS",
    "MSFT",
    popularity=900,
)
item(
    "Q312",
    "Apple",
    "American multinational technology company",
    "Apple Inc.",
    "Apple Computer",
    "Apple Computer, Inc.",
    popularity=910,
)
item("Q95", "Google", "American multinational technology company", "Google LLC", "Google Inc.", popularity=920)
item("Q3884", "Amazon", "American multinational technology company", "Amazon.com", "Amazon.com, Inc.", popularity=890)
item("Q52", "Wikipedia", "free online multilingual encyclopedia", "WP", "The Free Encyclopedia", popularity=930)
item(
    "Q193701",
    "SpaceX",
    "American aerospace manufacturer and space transport company",
    "Space Exploration Technologies Corp.",
    "Space Exploration Technologies",
    popularity=820,
)
item(
    "Q44294",
    "Ford Motor Company",
    "American multinational automobile manufacturer",
    "Ford",
    "Ford Motor Co.",
    popularity=800,
)
item(
    "Q11942",
    "ETH Zurich",
    "public research university in Zürich, Switzerland",
    "Swiss Federal Institute of Technology in Zurich",
    "ETH",
    "ETHZ",
    popularity=600,
)
item(
    "Q35794",
    "University of Cambridge",
    "collegiate public research university in Cambridge, England",
    "Cambridge University",
    "Cambridge",
    popularity=850,
)
item(
    "Q21578",
    "Princeton University",
    "private research university in Princeton, New Jersey, United States",
    "Princeton",
    popularity=800,
)

# People.
item(
    "Q937",
    "Albert Einstein",
    "German-born theoretical physicist (1879–1955)",
    "Einstein",
    "A. Einstein",
    popularity=990,
)
item(
    "Q7186",
    "Marie Curie",
    "Polish-French physicist and chemist (1867–1934)",
    "Maria Skłodowska-Curie",
    "Marie Skłodowska Curie",
    "Madame Curie",
    popularity=950,
)
item("Q254", "Wolfgang Amadeus Mozart", "Austrian composer (1756–1791)", "Mozart", "W. A. Mozart", popularity=960)
item("Q255", "Ludwig van Beethoven", "German composer (1770–1827)", "Beethoven", popularity=950)
item("Q1339", "Johann Sebastian Bach", "German composer (1685–1750)", "J. S. Bach", "Bach", popularity=940)
item(
    "Q1035",
    "Charles Darwin",
    "English naturalist and biologist (1809–1882)",
    "Darwin",
    "Charles Robert Darwin",
    popularity=940,
)
item(
    "Q91",
    "Abraham Lincoln",
    "president of the United States from 1861 to 1865",
    "Lincoln",
    "Honest Abe",
    "Abe Lincoln",
    popularity=950,
)
item(
    "Q935",
    "Isaac Newton",
    "English physicist and mathematician (1642–1727)",
    "Sir Isaac Newton",
    "Newton",
    popularity=960,
)
item(
    "Q692",
    "William Shakespeare",
    "English playwright and poet (1564–1616)",
    "Shakespeare",
    "The Bard",
    "Bard of Avon",
    popularity=970,
)
item("Q307", "Galileo Galilei", "Italian astronomer, physicist and engineer (1564–1642)", "Galileo", popularity=930)
item(
    "Q76",
    "Barack Obama",
    "president of the United States from 2009 to 2017",
    "Obama",
    "Barack Hussein Obama II",
    "Barack H. Obama",
    popularity=980,
)
item("Q7251", "Alan Turing", "English computer scientist (1912–1954)", "Alan Mathison Turing", "Turing", popularity=900)
item(
    "Q892",
    "J. R. R. Tolkien",
    "British writer and philologist (1892–1973)",
    "Tolkien",
    "John Ronald Reuel Tolkien",
    "J.R.R. Tolkien",
    popularity=900,
)
item(
    "Q3335", "George Orwell", "English writer and journalist (1903–1950)", "Eric Arthur Blair", "Orwell", popularity=900
)
item("Q81447", "Aldous Huxley", "English writer and philosopher (1894–1963)", "Huxley", popularity=780)
item("Q36322", "Jane Austen", "English novelist (1775–1817)", "Austen", popularity=880)
item("Q5686", "Charles Dickens", "English novelist (1812–1870)", "Dickens", popularity=900)
item("Q4985", "Herman Melville", "American novelist (1819–1891)", "Melville", popularity=760)
item(
    "Q7245",
    "Mark Twain",
    "American author and humorist (1835–1910)",
    "Samuel Langhorne Clemens",
    "Samuel Clemens",
    "Twain",
    popularity=880,
)
item(
    "Q7243",
    "Leo Tolstoy",
    "Russian writer (1828–1910)",
    "Lev Tolstoy",
    "Tolstoy",
    "Lev Nikolayevich Tolstoy",
    popularity=880,
)
item(
    "Q991",
    "Fyodor Dostoevsky",
    "Russian novelist (1821–1881)",
    "Dostoevsky",
    "Dostoyevsky",
    "Fyodor Mikhailovich Dostoevsky",
    popularity=870,
)
item(
    "Q47152",
    "Mary Shelley",
    "English novelist (1797–1851)",
    "Mary Wollstonecraft Shelley",
    "Mary Wollstonecraft Godwin",
    popularity=800,
)
item("Q93343", "Percy Bysshe Shelley", "English Romantic poet (1792–1822)", "Percy Shelley", "Shelley", popularity=760)
item("Q160627", "Alfred Russel Wallace", "British naturalist (1823–1913)", "Wallace", popularity=650)
item(
    "Q5682",
    "Miguel de Cervantes",
    "Spanish novelist, poet and playwright (1547–1616)",
    "Cervantes",
    "Miguel de Cervantes Saavedra",
    popularity=860,
)
item(
    "Q93354",
    "F. Scott Fitzgerald",
    "American novelist (1896–1940)",
    "Francis Scott Fitzgerald",
    "Scott Fitzgerald",
    popularity=780,
)
item(
    "Q23434",
    "Ernest Hemingway",
    "American novelist and journalist (1899–1961)",
    "Hemingway",
    "Papa Hemingway",
    popularity=850,
)
item(
    "Q34660",
    "J. K. Rowling",
    "British author (born 1965)",
    "Joanne Rowling",
    "J.K. Rowling",
    "Robert Galbraith",
    popularity=900,
)
item(
    "Q5284", "Bill Gates", "American businessman and philanthropist", "William Henry Gates III", "Gates", popularity=940
)
item(
    "Q312674",
    "Paul Allen",
    "American businessman, co-founder of Microsoft (1953–2018)",
    "Paul Gardner Allen",
    popularity=700,
)
item(
    "Q19837",
    "Steve Jobs",
    "American businessman, co-founder of Apple (1955–2011)",
    "Steven Paul Jobs",
    "Jobs",
    popularity=930,
)
item(
    "Q483382",
    "Steve Wozniak",
    "American computer engineer, co-founder of Apple",
    "Woz",
    "Stephen Gary Wozniak",
    popularity=750,
)
item("Q4934", "Larry Page", "American computer scientist, co-founder of Google", "Lawrence Edward Page", popularity=800)
item(
    "Q4938",
    "Sergey Brin",
    "American computer scientist, co-founder of Google",
    "Sergey Mikhailovich Brin",
    popularity=790,
)
item(
    "Q312556", "Jeff Bezos", "American businessman, founder of Amazon", "Jeffrey Preston Bezos", "Bezos", popularity=880
)
item(
    "Q181",
    "Jimmy Wales",
    "American-British Internet entrepreneur, co-founder of Wikipedia",
    "Jimbo Wales",
    "Jimmy Donal Wales",
    popularity=720,
)
item(
    "Q185",
    "Larry Sanger",
    "American Internet project developer, co-founder of Wikipedia",
    "Lawrence Mark Sanger",
    popularity=600,
)
item("Q317521", "Elon Musk", "businessman and entrepreneur (born 1971)", "Elon Reeve Musk", "Musk", popularity=950)
item("Q8768", "Henry Ford", "American industrialist (1863–1947)", "Ford", popularity=800)
item("Q42574", "James Cameron", "Canadian filmmaker (born 1954)", "James Francis Cameron", "Cameron", popularity=850)
item(
    "Q8877", "Steven Spielberg", "American filmmaker (born 1946)", "Spielberg", "Steven Allan Spielberg", popularity=900
)
item("Q56094", "Francis Ford Coppola", "American filmmaker (born 1939)", "Coppola", popularity=800)
item("Q41148", "Martin Scorsese", "American filmmaker (born 1942)", "Scorsese", popularity=840)
item("Q3772", "Quentin Tarantino", "American filmmaker (born 1963)", "Tarantino", "QT", popularity=860)
item("Q7374", "Alfred Hitchcock", "English filmmaker (1899–1980)", "Hitchcock", "Hitch", popularity=870)
item("Q2001", "Stanley Kubrick", "American filmmaker (1928–1999)", "Kubrick", popularity=860)
item("Q38222", "George Lucas", "American filmmaker (born 1944)", "George Walton Lucas Jr.", "Lucas", popularity=840)
item(
    "Q25191",
    "Christopher Nolan",
    "British-American filmmaker (born 1970)",
    "Nolan",
    "Christopher Edward Nolan",
    popularity=850,
)
item("Q56005", "Ridley Scott", "English filmmaker (born 1937)", "Sir Ridley Scott", popularity=820)
item(
    "Q24829",
    "Orson Welles",
    "American filmmaker and actor (1915–1985)",
    "George Orson Welles",
    "Welles",
    popularity=800,
)
item("Q762", "Leonardo da Vinci", "Italian Renaissance polymath (1452–1519)", "Leonardo", "da Vinci", popularity=960)
item("Q5582", "Vincent van Gogh", "Dutch painter (1853–1890)", "Van Gogh", "Vincent Willem van Gogh", popularity=930)
item(
    "Q22686",
    "Donald Trump",
    "president of the United States (2017–2021, since 2025)",
    "Trump",
    "Donald J. Trump",
    "Donald John Trump",
    popularity=980,
)
item(
    "Q6279",
    "Joe Biden",
    "president of the United States from 2021 to 2025",
    "Biden",
    "Joseph Robinette Biden Jr.",
    "Joseph Biden",
    popularity=960,
)
item(
    "Q207",
    "George W. Bush",
    "president of the United States from 2001 to 2009",
    "George Walker Bush",
    "Bush",
    "Dubya",
    "W.",
    popularity=940,
)
item(
    "Q1124",
    "Bill Clinton",
    "president of the United States from 1993 to 2001",
    "William Jefferson Clinton",
    "Clinton",
    popularity=940,
)

# --- statements -------------------------------------------------------------------------

# P31 instance of.
for q in (
    "Q142",
    "Q183",
    "Q30",
    "Q145",
    "Q17",
    "Q38",
    "Q29",
    "Q155",
    "Q16",
    "Q408",
    "Q668",
    "Q148",
    "Q43",
    "Q1033",
    "Q232",
    "Q836",
    "Q843",
    "Q39",
    "Q20",
    "Q34",
    "Q40",
    "Q36",
    "Q114",
    "Q924",
    "Q837",
    "Q878",
    "Q230",
):
    st(q, "P31", "Q3624078")
    st(q, "P31", "Q6256")
for q in ("Q21", "Q22"):
    st(q, "P31", "Q6256")
for q in (
    "Q90",
    "Q830149",
    "Q456",
    "Q64",
    "Q586",
    "Q1726",
    "Q3012",
    "Q2079",
    "Q84",
    "Q1490",
    "Q34600",
    "Q220",
    "Q13375",
    "Q2044",
    "Q1492",
    "Q2807",
    "Q60",
    "Q62",
    "Q65",
    "Q61",
    "Q1345",
    "Q1297",
    "Q18094",
    "Q23556",
    "Q83813",
    "Q994",
    "Q3130",
    "Q3114",
    "Q3141",
    "Q8678",
    "Q174",
    "Q2844",
    "Q1930",
    "Q172",
    "Q3640",
    "Q406",
    "Q3787",
    "Q8673",
    "Q1520",
    "Q35493",
    "Q37400",
    "Q37995",
    "Q1362",
    "Q8660",
    "Q270",
    "Q1741",
    "Q34713",
    "Q70",
    "Q612",
    "Q42941",
    "Q1353",
    "Q987",
    "Q138518",
):
    st(q, "P31", "Q515")
for q in ("Q1384", "Q1408", "Q99", "Q782", "Q1428", "Q797"):
    st(q, "P31", "Q35657")
for q in (
    "Q259463",
    "Q161741",
    "Q13917",
    "Q980",
    "Q985",
    "Q23306",
    "Q179351",
    "Q1282",
    "Q1273",
    "Q5705",
    "Q11299",
    "Q3224",
    "Q36687",
    "Q41428",
    "Q1498",
):
    st(q, "P31", "Q56061")
for q in (
    "Q937",
    "Q7186",
    "Q254",
    "Q255",
    "Q1339",
    "Q1035",
    "Q91",
    "Q935",
    "Q692",
    "Q307",
    "Q76",
    "Q7251",
    "Q892",
    "Q3335",
    "Q81447",
    "Q36322",
    "Q5686",
    "Q4985",
    "Q7245",
    "Q7243",
    "Q991",
    "Q47152",
    "Q93343",
    "Q160627",
    "Q5682",
    "Q93354",
    "Q23434",
    "Q34660",
    "Q5284",
    "Q312674",
    "Q19837",
    "Q483382",
    "Q4934",
    "Q4938",
    "Q312556",
    "Q181",
    "Q185",
    "Q317521",
    "Q8768",
    "Q42574",
    "Q8877",
    "Q56094",
    "Q41148",
    "Q3772",
    "Q7374",
    "Q2001",
    "Q38222",
    "Q25191",
    "Q56005",
    "Q24829",
    "Q762",
    "Q5582",
    "Q22686",
    "Q6279",
    "Q207",
    "Q1124",
):
    st(q, "P31", "Q5")
for q in ("Q208460", "Q170583", "Q74287", "Q174596", "Q161531", "Q150827", "Q20124", "Q480", "Q214371", "Q43361"):
    st(q, "P31", "Q7725634")
for q in ("Q44578", "Q189505", "Q47703", "Q104123", "Q163038", "Q103474", "Q17738", "Q25188", "Q24871", "Q24815"):
    st(q, "P31", "Q11424")
for q in ("Q513", "Q43512", "Q583", "Q39231", "Q130018", "Q7296"):
    st(q, "P31", "Q8502")
for q in ("Q3392", "Q3783", "Q1497", "Q584", "Q1653"):
    st(q, "P31", "Q4022")
for q in ("Q2283", "Q312", "Q95", "Q3884", "Q193701", "Q44294"):
    st(q, "P31", "Q4830453")
for q in ("Q1065", "Q458", "Q7184", "Q52", "Q11942", "Q35794", "Q21578"):
    st(q, "P31", "Q43229")
for q in ("Q19675", "Q51252", "Q188740"):
    st(q, "P31", "Q33506")
st("Q12418", "P31", "Q3305213")
st("Q45585", "P31", "Q3305213")
st("Q243", "P31", "Q12518")
st("Q39054", "P31", "Q12518")
st("Q44440", "P31", "Q12280")
st("Q9188", "P31", "Q11303")
st("Q12495", "P31", "Q11303")
for q in ("Q42182", "Q45178", "Q10285", "Q48435", "Q9141"):
    st(q, "P31", "Q41176")
for q in ("Q9202", "Q79961", "Q82425"):
    st(q, "P31", "Q4989906")
st("Q308", "P31", "Q634")
st("Q925", "P31", "Q11344")

# Continents (P30) of the countries.
for q, c in (
    ("Q142", "Q46"),
    ("Q183", "Q46"),
    ("Q145", "Q46"),
    ("Q38", "Q46"),
    ("Q29", "Q46"),
    ("Q39", "Q46"),
    ("Q20", "Q46"),
    ("Q34", "Q46"),
    ("Q40", "Q46"),
    ("Q36", "Q46"),
    ("Q17", "Q48"),
    ("Q668", "Q48"),
    ("Q148", "Q48"),
    ("Q836", "Q48"),
    ("Q843", "Q48"),
    ("Q837", "Q48"),
    ("Q878", "Q48"),
    ("Q232", "Q48"),
    ("Q232", "Q46"),
    ("Q43", "Q48"),
    ("Q43", "Q46"),
    ("Q230", "Q48"),
    ("Q230", "Q46"),
    ("Q30", "Q49"),
    ("Q16", "Q49"),
    ("Q155", "Q18"),
    ("Q1033", "Q15"),
    ("Q114", "Q15"),
    ("Q924", "Q15"),
):
    st(q, "P30", c)

# Location chains: P131 (located in the administrative territorial entity), with P17 (country) on each level.
CHAINS = [
    ("Q243", "Q259463"),
    ("Q259463", "Q90"),
    ("Q19675", "Q161741"),
    ("Q161741", "Q90"),
    ("Q90", "Q13917"),
    ("Q13917", "Q142"),
    ("Q456", "Q142"),
    ("Q82425", "Q64"),
    ("Q64", "Q183"),
    ("Q586", "Q183"),
    ("Q1726", "Q980"),
    ("Q980", "Q183"),
    ("Q3012", "Q985"),
    ("Q985", "Q183"),
    ("Q2079", "Q183"),
    ("Q42182", "Q179351"),
    ("Q179351", "Q23306"),
    ("Q23306", "Q21"),
    ("Q84", "Q23306"),
    ("Q21", "Q145"),
    ("Q22", "Q145"),
    ("Q10285", "Q220"),
    ("Q220", "Q1282"),
    ("Q1282", "Q38"),
    ("Q39054", "Q13375"),
    ("Q13375", "Q1273"),
    ("Q2044", "Q1273"),
    ("Q1273", "Q38"),
    ("Q48435", "Q1492"),
    ("Q1492", "Q5705"),
    ("Q5705", "Q29"),
    ("Q9188", "Q11299"),
    ("Q9202", "Q11299"),
    ("Q188740", "Q11299"),
    ("Q11299", "Q60"),
    ("Q60", "Q1384"),
    ("Q1384", "Q30"),
    ("Q1408", "Q30"),
    ("Q138518", "Q1408"),
    ("Q44440", "Q62"),
    ("Q62", "Q99"),
    ("Q65", "Q99"),
    ("Q99", "Q30"),
    ("Q1297", "Q30"),
    ("Q1345", "Q30"),
    ("Q18094", "Q782"),
    ("Q782", "Q30"),
    ("Q23556", "Q1428"),
    ("Q83813", "Q1428"),
    ("Q1428", "Q30"),
    ("Q797", "Q30"),
    ("Q130018", "Q797"),
    ("Q830149", "Q30"),
    ("Q45178", "Q3130"),
    ("Q3130", "Q3224"),
    ("Q3224", "Q408"),
    ("Q3141", "Q36687"),
    ("Q36687", "Q408"),
    ("Q9141", "Q42941"),
    ("Q42941", "Q1498"),
    ("Q1498", "Q668"),
    ("Q1353", "Q668"),
    ("Q987", "Q1353"),
    ("Q79961", "Q8678"),
    ("Q8678", "Q41428"),
    ("Q41428", "Q155"),
    ("Q12495", "Q612"),
    ("Q612", "Q878"),
    ("Q34713", "Q40"),
    ("Q1741", "Q40"),
    ("Q270", "Q36"),
    ("Q51252", "Q2044"),
]
COUNTRY = {
    "Q243": "Q142",
    "Q259463": "Q142",
    "Q19675": "Q142",
    "Q161741": "Q142",
    "Q90": "Q142",
    "Q13917": "Q142",
    "Q456": "Q142",
    "Q82425": "Q183",
    "Q64": "Q183",
    "Q586": "Q183",
    "Q1726": "Q183",
    "Q980": "Q183",
    "Q3012": "Q183",
    "Q985": "Q183",
    "Q2079": "Q183",
    "Q42182": "Q145",
    "Q179351": "Q145",
    "Q23306": "Q145",
    "Q84": "Q145",
    "Q21": "Q145",
    "Q22": "Q145",
    "Q10285": "Q38",
    "Q220": "Q38",
    "Q1282": "Q38",
    "Q39054": "Q38",
    "Q13375": "Q38",
    "Q2044": "Q38",
    "Q1273": "Q38",
    "Q51252": "Q38",
    "Q48435": "Q29",
    "Q1492": "Q29",
    "Q5705": "Q29",
    "Q2807": "Q29",
    "Q9188": "Q30",
    "Q9202": "Q30",
    "Q188740": "Q30",
    "Q11299": "Q30",
    "Q60": "Q30",
    "Q1384": "Q30",
    "Q1408": "Q30",
    "Q138518": "Q30",
    "Q44440": "Q30",
    "Q62": "Q30",
    "Q65": "Q30",
    "Q99": "Q30",
    "Q1297": "Q30",
    "Q1345": "Q30",
    "Q18094": "Q30",
    "Q782": "Q30",
    "Q23556": "Q30",
    "Q83813": "Q30",
    "Q1428": "Q30",
    "Q797": "Q30",
    "Q130018": "Q30",
    "Q830149": "Q30",
    "Q61": "Q30",
    "Q45178": "Q408",
    "Q3130": "Q408",
    "Q3224": "Q408",
    "Q3141": "Q408",
    "Q36687": "Q408",
    "Q3114": "Q408",
    "Q9141": "Q668",
    "Q42941": "Q668",
    "Q1498": "Q668",
    "Q1353": "Q668",
    "Q987": "Q668",
    "Q79961": "Q155",
    "Q8678": "Q155",
    "Q41428": "Q155",
    "Q174": "Q155",
    "Q2844": "Q155",
    "Q12495": "Q878",
    "Q612": "Q878",
    "Q34713": "Q40",
    "Q1741": "Q40",
    "Q270": "Q36",
    "Q70": "Q39",
    "Q1490": "Q17",
    "Q34600": "Q17",
    "Q39231": "Q17",
    "Q1930": "Q16",
    "Q172": "Q16",
    "Q3640": "Q43",
    "Q406": "Q43",
    "Q3787": "Q1033",
    "Q8673": "Q1033",
    "Q1520": "Q232",
    "Q35493": "Q232",
    "Q37400": "Q836",
    "Q37995": "Q836",
    "Q1362": "Q843",
    "Q8660": "Q843",
    "Q994": "Q230",
    "Q7296": "Q924",
    "Q583": "Q142",
}
for subject, parent in CHAINS:
    st(subject, "P131", parent, refs=subject in ("Q243", "Q19675", "Q9188"))
for subject, country in COUNTRY.items():
    st(subject, "P17", country)
st("Q513", "P17", "Q837")
st("Q513", "P17", "Q148")
st("Q43512", "P17", "Q843")
st("Q43512", "P17", "Q148")
st("Q583", "P17", "Q38")  # Mont Blanc lies on the French-Italian border
st("Q12418", "P276", "Q19675", refs=True)
st("Q45585", "P276", "Q188740", refs=True)

# Capitals (P36), with start and end times for the former ones; P1376 on the capitals.
st("Q142", "P36", "Q90", refs=True)
st("Q183", "P36", "Q64", "preferred", P580=T("1990-10-03"))
st("Q183", "P36", "Q586", P580=T("1949-05-23"), P582=T("1990-10-03"))
st("Q145", "P36", "Q84")
st("Q17", "P36", "Q1490", "preferred", P580=T("1868"))
st("Q17", "P36", "Q34600", P580=T("794"), P582=T("1868"))
st("Q38", "P36", "Q220")
st("Q29", "P36", "Q2807")
st("Q155", "P36", "Q2844", "preferred", P580=T("1960-04-21"))
st("Q155", "P36", "Q8678", P580=T("1763"), P582=T("1960-04-21"))
st("Q16", "P36", "Q1930")
st("Q408", "P36", "Q3114", "preferred", P580=T("1927-05-09"))
st("Q408", "P36", "Q3141", P580=T("1901-01-01"), P582=T("1927-05-09"))
st("Q668", "P36", "Q987")
st("Q43", "P36", "Q3640", P580=T("1923-10-13"))
st("Q1033", "P36", "Q3787", "preferred", P580=T("1991-12-12"))
st("Q1033", "P36", "Q8673", P580=T("1914"), P582=T("1991-12-12"))
st("Q232", "P36", "Q1520", "preferred", P580=T("1997-12-10"))
st("Q232", "P36", "Q35493", P580=T("1991-12-16"), P582=T("1997-12-10"))
st("Q836", "P36", "Q37400", "preferred", P580=T("2005-11-06"))
st("Q836", "P36", "Q37995", P580=T("1948-01-04"), P582=T("2005-11-06"))
st("Q843", "P36", "Q1362", "preferred", P580=T("1967"))
st("Q843", "P36", "Q8660", P580=T("1947-08-14"), P582=T("1959"))
st("Q39", "P36", "Q70")
st("Q40", "P36", "Q1741")
st("Q36", "P36", "Q270")
st("Q230", "P36", "Q994")
st("Q1428", "P36", "Q23556", P580=T("1868"))
st("Q30", "P36", "Q61", "preferred", P580=T("1800-11-17"))
st("Q30", "P36", "Q1345", P580=T("1790-12-06"), P582=T("1800-05-14"))
st("Q30", "P36", "Q60", P580=T("1785-01-11"), P582=T("1790-08-12"))
st("Q13917", "P36", "Q90")
st("Q980", "P36", "Q1726")
st("Q3224", "P36", "Q3130")
st("Q36687", "P36", "Q3141")
st("Q782", "P36", "Q18094")
for capital, of in (
    ("Q90", "Q142"),
    ("Q90", "Q13917"),
    ("Q64", "Q183"),
    ("Q84", "Q145"),
    ("Q1490", "Q17"),
    ("Q220", "Q38"),
    ("Q2807", "Q29"),
    ("Q2844", "Q155"),
    ("Q1930", "Q16"),
    ("Q3114", "Q408"),
    ("Q987", "Q668"),
    ("Q3640", "Q43"),
    ("Q3787", "Q1033"),
    ("Q1520", "Q232"),
    ("Q37400", "Q836"),
    ("Q1362", "Q843"),
    ("Q70", "Q39"),
    ("Q1741", "Q40"),
    ("Q270", "Q36"),
    ("Q994", "Q230"),
    ("Q23556", "Q1428"),
    ("Q61", "Q30"),
    ("Q1726", "Q980"),
    ("Q3130", "Q3224"),
    ("Q3141", "Q36687"),
    ("Q18094", "Q782"),
):
    st(capital, "P1376", of)
st("Q586", "P1376", "Q183", P580=T("1949-05-23"), P582=T("1990-10-03"))
st("Q8678", "P1376", "Q155", P580=T("1763"), P582=T("1960-04-21"))
st("Q3141", "P1376", "Q408", P580=T("1901-01-01"), P582=T("1927-05-09"))
st("Q34600", "P1376", "Q17", P580=T("794"), P582=T("1868"))
st("Q8673", "P1376", "Q1033", P580=T("1914"), P582=T("1991-12-12"))
st("Q35493", "P1376", "Q232", P580=T("1991-12-16"), P582=T("1997-12-10"))
st("Q37995", "P1376", "Q836", P580=T("1948-01-04"), P582=T("2005-11-06"))
st("Q8660", "P1376", "Q843", P580=T("1947-08-14"), P582=T("1959"))
st("Q1345", "P1376", "Q30", P580=T("1790-12-06"), P582=T("1800-05-14"))

# Heads of state of the United States (P35).
st("Q30", "P35", "Q22686", "preferred", P580=T("2025-01-20"))
st("Q30", "P35", "Q6279", P580=T("2021-01-20"), P582=T("2025-01-20"))
st("Q30", "P35", "Q22686", P580=T("2017-01-20"), P582=T("2021-01-20"))
st("Q30", "P35", "Q76", P580=T("2009-01-20"), P582=T("2017-01-20"))
st("Q30", "P35", "Q207", P580=T("2001-01-20"), P582=T("2009-01-20"))
st("Q30", "P35", "Q1124", P580=T("1993-01-20"), P582=T("2001-01-20"))

# Memberships (P463), with the dates of joining and leaving where the probe asks about them.
for q in ("Q142", "Q183", "Q38", "Q29", "Q40", "Q36", "Q34"):
    st(q, "P463", "Q458")
for q in ("Q142", "Q183", "Q30", "Q145", "Q38", "Q29", "Q16", "Q20", "Q43", "Q36"):
    st(q, "P463", "Q7184")
st("Q34", "P463", "Q7184", P580=T("2024-03-07"))
st("Q145", "P463", "Q458", P580=T("1973-01-01"), P582=T("2020-01-31"))
for q in (
    "Q142",
    "Q183",
    "Q30",
    "Q145",
    "Q17",
    "Q38",
    "Q29",
    "Q155",
    "Q16",
    "Q408",
    "Q668",
    "Q148",
    "Q43",
    "Q1033",
    "Q232",
    "Q836",
    "Q843",
    "Q39",
    "Q20",
    "Q34",
    "Q40",
    "Q36",
    "Q114",
    "Q924",
    "Q837",
    "Q878",
    "Q230",
):
    st(q, "P463", "Q1065")

# People: birth and death (P569, P570, P19, P20), citizenship, education, occupation.
st("Q937", "P569", T("1879-03-14"), refs=True)
st("Q937", "P569", T("1879"), "deprecated", P2241="Q42727519")
st("Q937", "P570", T("1955-04-18"))
st("Q937", "P19", "Q3012")
st("Q937", "P20", "Q138518")
st("Q937", "P27", "Q39", P580=T("1901"))
st("Q937", "P27", "Q30", P580=T("1940"))
st("Q937", "P69", "Q11942")
st("Q937", "P106", "Q169470")
st("Q7186", "P569", T("1867-11-07"))
st("Q7186", "P570", T("1934-07-04"))
st("Q7186", "P19", "Q270")
st("Q7186", "P27", "Q142")
st("Q7186", "P27", "Q36")
st("Q7186", "P106", "Q169470")
st("Q7186", "P106", "Q593644")
st("Q254", "P569", T("1756-01-27"))
st("Q254", "P570", T("1791-12-05"))
st("Q254", "P19", "Q34713")
st("Q254", "P20", "Q1741")
st("Q254", "P106", "Q36834")
st("Q255", "P569", T("1770-12-16"))
st("Q255", "P570", T("1827-03-26"))
st("Q255", "P19", "Q586")
st("Q255", "P20", "Q1741")
st("Q255", "P106", "Q36834")
st("Q1339", "P569", T("1685-03-31"))
st("Q1339", "P570", T("1750-07-28"))
st("Q1339", "P20", "Q2079")
st("Q1339", "P106", "Q36834")
st("Q1035", "P569", T("1809-02-12"))
st("Q1035", "P570", T("1882-04-19"))
st("Q1035", "P69", "Q35794")
st("Q91", "P569", T("1809-02-12"))
st("Q91", "P570", T("1865-04-15"))
st("Q91", "P106", "Q82955")
st("Q935", "P569", T("1643-01-04"))
st("Q935", "P569", T("1642-12-25", JULIAN))
st("Q935", "P570", T("1727-03-31"))
st("Q935", "P69", "Q35794")
st("Q935", "P106", "Q169470")
st("Q935", "P26", NONE)
st("Q692", "P569", T("1564-04-23"))
st("Q692", "P570", T("1616-04-23", JULIAN))  # England kept the Julian calendar until 1752
st("Q692", "P106", "Q36180")
st("Q307", "P569", T("1564-02-15"))
st("Q307", "P570", T("1642-01-08", GREGORIAN))
st("Q307", "P19", "Q13375")
st("Q307", "P106", "Q169470")
st("Q76", "P569", T("1961-08-04"), refs=True)
st("Q76", "P19", "Q18094")
st("Q76", "P27", "Q30")
st("Q76", "P106", "Q82955")
st("Q7251", "P569", T("1912-06-23"))
st("Q7251", "P570", T("1954-06-07"))
st("Q7251", "P27", "Q145")
st("Q7251", "P69", "Q35794")
st("Q7251", "P69", "Q21578")
st("Q892", "P569", T("1892-01-03"))
st("Q892", "P570", T("1973-09-02"))
st("Q892", "P27", "Q145")
st("Q892", "P106", "Q36180")
st("Q3335", "P569", T("1903-06-25"))
st("Q3335", "P570", T("1950-01-21"))
st("Q3335", "P20", "Q84")
st("Q3335", "P106", "Q36180")
st("Q36322", "P569", T("1775-12-16"))
st("Q36322", "P570", T("1817-07-18"))
st("Q36322", "P106", "Q36180")
st("Q5582", "P569", T("1853-03-30"))
st("Q5582", "P570", T("1890-07-29"))
st("Q5582", "P106", "Q1028181")
st("Q5582", "P26", NONE)
st("Q762", "P569", T("1452-04-15"))
st("Q762", "P570", T("1519-05-02"))
st("Q762", "P106", "Q1028181")
for person in (
    "Q81447",
    "Q5686",
    "Q4985",
    "Q7245",
    "Q7243",
    "Q991",
    "Q47152",
    "Q93343",
    "Q5682",
    "Q93354",
    "Q23434",
    "Q34660",
):
    st(person, "P106", "Q36180")
for person in (
    "Q42574",
    "Q8877",
    "Q56094",
    "Q41148",
    "Q3772",
    "Q7374",
    "Q2001",
    "Q38222",
    "Q25191",
    "Q56005",
    "Q24829",
):
    st(person, "P106", "Q2526255")
for person in ("Q22686", "Q6279", "Q207", "Q1124"):
    st(person, "P27", "Q30")
    st(person, "P106", "Q82955")
st("Q160627", "P106", "Q36180")

# Works: authors, directors, creators, locations, dates.
for work, author in (
    ("Q208460", "Q3335"),
    ("Q170583", "Q36322"),
    ("Q74287", "Q892"),
    ("Q174596", "Q4985"),
    ("Q161531", "Q7243"),
    ("Q150827", "Q47152"),
    ("Q20124", "Q1035"),
    ("Q480", "Q5682"),
    ("Q214371", "Q93354"),
    ("Q43361", "Q34660"),
):
    st(work, "P50", author, refs=True)
st("Q208460", "P577", T("1949-06-08"))
st("Q170583", "P577", T("1813-01-28"))
st("Q74287", "P577", T("1937-09-21"))
st("Q174596", "P577", T("1851-10-18"))
st("Q161531", "P577", T("1869"))
st("Q150827", "P577", T("1818-01-01"))
st("Q20124", "P577", T("1859-11-24"))
st("Q480", "P577", T("1605"))
st("Q214371", "P577", T("1925-04-10"))
st("Q43361", "P577", T("1997-06-26"))
for film, director, released in (
    ("Q44578", "Q42574", "1997-12-19"),
    ("Q189505", "Q8877", "1975-06-20"),
    ("Q47703", "Q56094", "1972-03-24"),
    ("Q104123", "Q3772", "1994-10-14"),
    ("Q163038", "Q7374", "1960-06-16"),
    ("Q103474", "Q2001", "1968-04-02"),
    ("Q17738", "Q38222", "1977-05-25"),
    ("Q25188", "Q25191", "2010-07-16"),
    ("Q24871", "Q42574", "2009-12-18"),
    ("Q24815", "Q24829", "1941-05-01"),
):
    st(film, "P57", director, refs=True)
    st(film, "P577", T(released))
st("Q44578", "P577", T("1997-11-01"))  # the Tokyo premiere
st("Q12418", "P170", "Q762")
st("Q12418", "P571", T("1500s"))
st("Q45585", "P170", "Q5582")
st("Q45585", "P571", T("1889-06"))

# Organizations: founders and inception.
st("Q1065", "P571", T("1945-10-24"))
st("Q458", "P571", T("1993-11-01"))
st("Q7184", "P571", T("1949-04-04"))
for org, founders, founded in (
    ("Q2283", ("Q5284", "Q312674"), "1975-04-04"),
    ("Q312", ("Q19837", "Q483382"), "1976-04-01"),
    ("Q95", ("Q4934", "Q4938"), "1998-09-04"),
    ("Q3884", ("Q312556",), "1994-07-05"),
    ("Q52", ("Q181", "Q185"), "2001-01-15"),
    ("Q193701", ("Q317521",), "2002"),
    ("Q44294", ("Q8768",), "1903-06-16"),
):
    for founder in founders:
        st(org, "P112", founder, refs=True)
    st(org, "P571", T(founded))

# Landmarks: inception, official opening, heights; mountains and rivers: elevation, length.
st("Q243", "P571", T("1887-01-28"))
st("Q243", "P1619", T("1889-03-31"), refs=True)
st("Q243", "P84", SOME)
st("Q243", "P2048", N("330", "m"), "preferred", P585=T("2022"))
st("Q243", "P2048", N("324", "m"), P585=T("2000"))
st("Q44440", "P571", T("1933-01-05"))
st("Q44440", "P1619", T("1937-05-27"))
st("Q44440", "P1619", T("1933-01-05"), "deprecated", P2241="Q41755623")
st("Q44440", "P2043", N("2737", "m"))
st("Q9188", "P571", T("1930-03-17"))
st("Q9188", "P1619", T("1931-05-01"))
st("Q9188", "P2048", N("1454", "ft"))
st("Q45178", "P1619", T("1973-10-20"))
st("Q9202", "P1619", T("1886-10-28"))
st("Q10285", "P571", T("70s"))
st("Q10285", "P1619", T("80"))
st("Q10285", "P84", SOME)
st("Q39054", "P571", T("1173"))
st("Q48435", "P571", T("1882-03-19"))
st("Q9141", "P571", T("1630s"))
st("Q79961", "P1619", T("1931-10-12"))
st("Q12495", "P571", T("2004-01"))  # construction began in January 2004
st("Q12495", "P1619", T("2010-01-04"))
st("Q12495", "P2048", N("828", "m"))
st("Q82425", "P1619", T("1791-08-06"))
st("Q42182", "P571", T("1703"))
st("Q220", "P571", T("-0753"))
st("Q220", "P112", SOME)
st("Q2844", "P571", T("1960-04-21"))
st("Q3114", "P571", T("1913-03-12"))
st("Q64", "P571", T("1237"))
st("Q513", "P2044", N("8848.86", "m"), "preferred", P585=T("2020-12-08"))
st("Q513", "P2044", N("8848", "m"), P585=T("1955"))
st("Q43512", "P2044", N("8611", "m"))
st("Q583", "P2044", N("4805.59", "m", "4805.54", "4805.64"), "preferred", P585=T("2021"))
st("Q583", "P2044", N("4808.72", "m"), P585=T("2007"))
st("Q39231", "P2044", N("3776.24", "m"))
st("Q130018", "P2044", N("20310", "ft"))
st("Q7296", "P2044", N("5895", "m"))
st("Q3392", "P2043", N("6650", "km"), refs=True)
st("Q3783", "P2043", N("6400", "km"))
st("Q1497", "P2043", N("2340", "mi"))
st("Q584", "P2043", N("1233", "km"), "preferred")
st("Q584", "P2043", N("1320", "km"), "deprecated", P2241="Q41755623")
st("Q1653", "P2043", N("2850", "km"))
st("Q308", "P2120", N("2439.7", "km", "2439.6", "2439.8"))
st("Q308", "P397", "Q525")
st("Q925", "P1086", N("80"))

# Areas (P2046) and populations (P1082, each with its P585 point in time; the latest preferred).
st("Q183", "P2046", N("357588", "km2"))
st("Q64", "P2046", N("891.12", "km2"))
st("Q17", "P2046", N("377975", "km2"))
st("Q39", "P2046", N("41285", "km2"))
st("Q230", "P2046", N("69700", "km2"))
st("Q1428", "P2046", N("153909", "km2"))
st("Q90", "P2046", N("105.4", "km2"))
for place, series in (
    (
        "Q90",
        (("2010-01-01", "2243833"), ("2015-01-01", "2206488"), ("2020-01-01", "2145906"), ("2023-01-01", "2102650")),
    ),
    ("Q64", (("2010-12-31", "3460725"), ("2018-12-31", "3644826"), ("2022-12-31", "3755251"))),
    ("Q1490", (("2010-10-01", "13159388"), ("2015-10-01", "13515271"), ("2020-10-01", "14047594"))),
    ("Q830149", (("2010-04-01", "25171"), ("2020-04-01", "24476"))),
):
    for i, (when, count) in enumerate(series):
        st(place, "P1082", N(count), "preferred" if i == len(series) - 1 else "normal", P585=T(when))

# Bloemfontein: Tolkien's birthplace.
item("Q37701", "Bloemfontein", "judicial capital of South Africa", "Mangaung", popularity=450)
item("Q258", "South Africa", "country at the southern tip of Africa", "Republic of South Africa", "RSA", popularity=880)
st("Q37701", "P31", "Q515")
st("Q37701", "P17", "Q258")
st("Q258", "P31", "Q3624078")
st("Q258", "P30", "Q15")
st("Q258", "P463", "Q1065")
st("Q892", "P19", "Q37701")


# --- output -----------------------------------------------------------------------------


def snak(pid: str, value: Value) -> dict[str, Any]:
    datatype = PROPERTIES[pid]["datatype"]
    if isinstance(value, Special):
        body: dict[str, Any] = {"snaktype": value.snaktype, "property": pid}
    else:
        body = {"snaktype": "value", "property": pid, "datavalue": datavalue(value)}
    body = {**body, "datatype": datatype}
    return {
        "snaktype": body["snaktype"],
        "property": pid,
        "hash": digest(body),
        **{k: v for k, v in body.items() if k not in ("snaktype", "property")},
    }


def statement(s: Statement, index: int) -> dict[str, Any]:
    guid = str(uuid.uuid5(NAMESPACE, f"{s.subject}|{s.property}|{index}")).upper()
    out: dict[str, Any] = {"mainsnak": snak(s.property, s.value), "type": "statement"}
    if s.qualifiers:
        qualifiers: dict[str, list[dict[str, Any]]] = {}
        for pid, value in s.qualifiers:
            qualifiers.setdefault(pid, []).append(snak(pid, value))
        out["qualifiers"] = qualifiers
        out["qualifiers-order"] = list(qualifiers)
    out["id"] = f"{s.subject}${guid}"
    out["rank"] = s.rank
    if s.references:
        references = []
        for ref in s.references:
            snaks: dict[str, list[dict[str, Any]]] = {}
            for pid, value in ref:
                snaks.setdefault(pid, []).append(snak(pid, value))
            references.append({"hash": digest(snaks), "snaks": snaks, "snaks-order": list(snaks)})
        out["references"] = references
    return out


def terms(entity_id: str, label: str, description: str, aliases: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"labels": {"en": {"language": "en", "value": label}}}
    out["descriptions"] = {"en": {"language": "en", "value": description}}
    out["aliases"] = {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {}
    return out


def build() -> dict[str, dict[str, Any]]:
    entities: dict[str, dict[str, Any]] = {}
    for pid, p in PROPERTIES.items():
        entities[pid] = {
            "type": "property",
            "datatype": p["datatype"],
            "id": pid,
            **terms(pid, p["label"], p["description"], p["aliases"]),
            "claims": {},
        }
    for qid, i in ITEMS.items():
        entity: dict[str, Any] = {
            "type": "item",
            "id": qid,
            **terms(qid, i["label"], i["description"], i["aliases"]),
            "claims": {},
        }
        if i["popularity"] is not None:
            entity["popularity"] = i["popularity"]
        entities[qid] = entity
    counts: dict[tuple[str, str], int] = {}
    for s in STATEMENTS:
        key = (s.subject, s.property)
        counts[key] = counts.get(key, 0) + 1
        entities[s.subject]["claims"].setdefault(s.property, []).append(statement(s, counts[key]))
    return entities


def main() -> None:
    entities = build()
    text = json.dumps(entities, ensure_ascii=False, indent=1) + "\n"
    (HERE / "entities.json").write_text(text, encoding="utf-8")
    items = sum(1 for e in entities.values() if e["type"] == "item")
    print(f"{len(entities)} entities ({items} items, {len(entities) - items} properties), {len(STATEMENTS)} statements")


if __name__ == "__main__":
    main()
