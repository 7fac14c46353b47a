"""The dataset readers: sizes and label counts as the SOURCE.md files give them, gold evidence, no label leaks."""

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from factcheck.errors import ConfigError, InputError
from factcheck.eval.datasets import READERS, Dataset, load_dataset, read_anli
from factcheck.types import Label

T, P, F = Label.TRUE, Label.PARTLY_TRUE, Label.FALSE


@functools.cache
def dataset(name: str, data_dir: Path, **options: Any) -> Dataset:
    """Each dataset read once per session: the file stays well under its time budget."""
    return load_dataset(name, data_dir, **options)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def gold_counts(data: Dataset) -> dict[Label, int]:
    return dict(Counter(item.gold for item in data.items))


@pytest.mark.parametrize(
    ("name", "options", "levels", "counts"),
    [
        ("scifact-binary", {}, 2, {T: 124, F: 64}),
        ("scifact-mixed", {}, 3, {T: 33, P: 33, F: 33}),
        ("scifact-mixed-random", {}, 3, {T: 33, P: 33, F: 33}),
        ("fever-binary", {}, 2, {T: 697, F: 499}),  # 1,200 rows, 1,196 unique claims
        ("healthver", {}, 3, {T: 56, P: 60, F: 44}),  # 230 claims less 70 with Neutral pairs only
        ("wice", {}, 3, {T: 115, P: 191, F: 43}),
        ("averitec", {}, 3, {T: 122, P: 38, F: 305}),  # 500 less 35 Not Enough Evidence
        ("liar", {}, 3, {T: 169 + 251, P: 248 + 237, F: 263 + 116}),
        ("liar", {"split": "test"}, 3, {T: 211 + 249, P: 267 + 214, F: 250 + 92}),
        ("check-covid", {}, 2, {T: 69, F: 70}),  # 207 less 68 NOTENOUGHINFO
        ("check-covid", {"split": "test"}, 2, {T: 77, F: 76}),  # 180 + 49 less 76 NOTENOUGHINFO
        ("fm2", {}, 2, {T: 596, F: 573}),
        ("fm2", {"split": "test"}, 2, {T: 681, F: 699}),
        ("vitaminc", {}, 2, {T: 15896, F: 9080}),  # 31,673 real rows less 6,697 NOT ENOUGH INFO
        ("vitaminc", {"part": "synthetic"}, 2, {T: 9695, F: 9695}),
        ("anli", {}, 2, {T: 334 + 334 + 402, F: 333 + 333 + 396}),  # rounds 1-3, neutral left out
        ("anli", {"rounds": "3"}, 2, {T: 402, F: 396}),
        ("citation-integrity", {}, 2, {T: 191, F: 101}),  # 316 less 24 with no evidence
    ],
)
def test_sizes_and_label_counts(
    shared_data: Path, name: str, options: dict[str, Any], levels: int, counts: dict[Label, int]
) -> None:
    data = dataset(name, shared_data, **options)
    assert data.name == name
    assert data.levels == levels
    assert gold_counts(data) == counts
    assert len({item.id for item in data.items}) == len(data.items)
    assert data.description and "\n" not in data.description
    assert all(item.claims and item.text for item in data.items)


def test_every_reader_is_covered() -> None:
    assert set(READERS) == {
        "scifact-binary",
        "scifact-mixed",
        "scifact-mixed-random",
        "fever-binary",
        "healthver",
        "wice",
        "averitec",
        "liar",
        "check-covid",
        "fm2",
        "vitaminc",
        "anli",
        "citation-integrity",
    }


@pytest.mark.parametrize("name", ["healthver", "wice", "averitec", "liar"])
def test_three_level_single_claims_have_no_claim_label(shared_data: Path, name: str) -> None:
    data = dataset(name, shared_data)
    assert all(len(item.claims) == 1 and item.claims[0].text == item.text for item in data.items)
    assert all(item.claims[0].label is None for item in data.items)


@pytest.mark.parametrize(
    "name",
    [
        "scifact-binary",
        "fever-binary",
        "healthver",
        "wice",
        "averitec",
        "check-covid",
        "fm2",
        "vitaminc",
        "anli",
        "citation-integrity",
    ],
)
def test_gold_evidence_everywhere(shared_data: Path, name: str) -> None:
    data = dataset(name, shared_data)
    assert data.has_evidence
    for item in data.items:
        for claim in item.claims:
            assert claim.evidence, item.id
            assert all(e.source == "gold" and e.text.strip() for e in claim.evidence), item.id


def test_scifact_binary(shared_data: Path) -> None:
    data = dataset("scifact-binary", shared_data)
    first = data.items[0]
    assert first.id == "scifact-dev-3" and first.gold is T and first.meta == {"scifact_dev_id": 3}
    assert all(item.claims[0].label is item.gold for item in data.items)
    # claim 3 cites doc 14717500 (SOURCE.md's worked example)
    assert first.claims[0].evidence[0].title == "Rare Variants Create Synthetic Genome-Wide Associations"
    assert "\n" in first.claims[0].evidence[0].text


def test_scifact_mixed_claims_reproduce_the_gold(shared_data: Path) -> None:
    data = dataset("scifact-mixed", shared_data)
    expected = {4: T, 0: F, 2: P}
    for item in data.items:
        assert len(item.claims) == 4
        assert all(claim.evidence for claim in item.claims)
        assert expected[sum(claim.label is T for claim in item.claims)] is item.gold
    rows = {item.meta["row"]: item for item in data.items}
    # the two source labels that disagree with their components (ito_mafc/SOURCE.md)
    assert (rows[33].meta["original_label"], rows[33].gold) == ("TRUE", F)
    assert (rows[66].meta["original_label"], rows[66].gold) == ("FALSE", P)


def test_scifact_mixed_random_is_seeded_and_balanced(shared_data: Path) -> None:
    data = dataset("scifact-mixed-random", shared_data)
    assert load_dataset("scifact-mixed-random", shared_data) == data
    other = dataset("scifact-mixed-random", shared_data, seed=1)
    assert [i.text for i in other.items] != [i.text for i in data.items]
    assert other.items[0].id == "scifact-mixed-random-1-0"
    mixes = Counter(sum(claim.label is T for claim in item.claims) for item in data.items)
    assert mixes == {4: 33, 0: 33, 3: 11, 2: 11, 1: 11}
    for item in data.items:
        texts = [claim.text for claim in item.claims]
        assert len(set(texts)) == 4
        assert item.text == " ".join(texts)
        assert all(claim.evidence for claim in item.claims)


def test_scifact_mixed_random_options(shared_data: Path) -> None:
    assert len(load_dataset("scifact-mixed-random", shared_data, size="10", seed="2").items) == 10  # CLI strings
    with pytest.raises(ConfigError, match="size"):
        load_dataset("scifact-mixed-random", shared_data, size=0)
    with pytest.raises(ConfigError, match="unknown option sed"):
        load_dataset("scifact-mixed-random", shared_data, sed=1)
    with pytest.raises(ConfigError, match="integer"):
        load_dataset("scifact-mixed-random", shared_data, seed="one")


def test_fever_evidence_is_the_original_text(shared_data: Path) -> None:
    data = dataset("fever-binary", shared_data)
    assert len({item.text for item in data.items}) == len(data.items) == 1196
    evidence = [e for item in data.items for e in item.claims[0].evidence]
    assert not any("<span" in e.text or "</span>" in e.text or "[[" in e.text for e in evidence)
    first = data.items[0].claims[0].evidence
    assert first[0].title == "Unison (Celine Dion album)"
    assert first[0].url == "https://en.wikipedia.org/wiki/Unison_(Celine_Dion_album)"
    assert "by Columbia Records" in first[0].text  # the removed span is put back


def test_healthver_aggregation(shared_data: Path) -> None:
    data = dataset("healthver", shared_data)
    claims: dict[str, set[str]] = {}
    for row in read_jsonl(shared_data / "healthver/dev.jsonl"):
        claims.setdefault(row["claim"], set()).add(row["label"])
    assert len(claims) == 230
    assert sum(labels == {"Neutral"} for labels in claims.values()) == 70
    assert [item.text for item in data.items] == [c for c, labels in claims.items() if labels != {"Neutral"}]


def test_wice_passages(shared_data: Path) -> None:
    data = dataset("wice", shared_data)
    item = data.items[0]
    assert item.id == "dev02986"
    passages = item.claims[0].evidence
    assert all(len(p.text.split("\n")) <= 8 for p in passages)
    assert passages[0].title == passages[-1].title == "About Us \u2013 Media Play News"
    # 2 pages have no TITLE line and 20 an empty one
    assert sum(not item.claims[0].evidence[0].title for item in data.items) == 22


def test_averitec_never_leaks_the_verdict_article(shared_data: Path) -> None:
    data = dataset("averitec", shared_data)
    rows = {row["row"]: row for row in read_jsonl(shared_data / "averitec/dev.jsonl")}
    for item in data.items:
        article = rows[item.meta["row"]]["fact_checking_article"]
        page = article.split("/web/", 1)[-1].split("/", 1)[-1]  # the article without its archive.org prefix
        assert page.split("://", 1)[-1] not in repr(item), item.id
    assert sum(len(item.claims[0].evidence) for item in data.items) > 1200
    assert data.items[0].claims[0].evidence[0].text.startswith("Q: Where was the claim first published\nA: ")


def test_averitec_claims_are_checked_as_of_the_day_they_were_made(shared_data: Path) -> None:
    data = dataset("averitec", shared_data)
    rows = {row["row"]: row for row in read_jsonl(shared_data / "averitec/dev.jsonl")}
    for item in data.items:
        day, month, year = rows[item.meta["row"]]["claim_date"].split("-")  # "31-10-2020", "9-10-2020": day first
        assert item.as_of == f"{year}-{int(month):02d}-{int(day):02d}", item.id


def test_liar_has_no_evidence_and_no_credit_history(shared_data: Path) -> None:
    data = dataset("liar", shared_data)
    assert not data.has_evidence
    assert all(not item.claims[0].evidence for item in data.items)
    assert data.items[0].id == "liar-12134"
    assert not any(key.endswith("_counts") for item in data.items for key in item.meta)
    with pytest.raises(ConfigError, match="split"):
        load_dataset("liar", shared_data, split="dev")


def test_check_covid_gives_the_cited_abstract(shared_data: Path) -> None:
    data = dataset("check-covid", shared_data)
    first = data.items[0]
    assert first.id == "check-covid-60ac5f7ff9b9e03ea4d8e68e_0" and first.gold is F  # the file's first row
    [abstract] = first.claims[0].evidence
    assert abstract.title == "Dampened STING-Dependent Interferon Activation in Bats"
    assert abstract.text.count("\n") >= 3  # the whole abstract, one sentence a line
    assert all(item.claims[0].label is item.gold for item in data.items)
    assert not any(item.meta["cord_id"] is None for item in data.items)
    with pytest.raises(ConfigError, match="split"):
        load_dataset("check-covid", shared_data, split="train")  # training data is not an evaluation split


def test_fm2_evidence_is_the_gold_wikipedia_sentences(shared_data: Path) -> None:
    data = dataset("fm2", shared_data)
    first = data.items[0]
    assert first.text == "Filming for the movie Gandhi in India was delayed due to political unrest."
    assert first.gold is T
    [sentence] = first.claims[0].evidence
    assert sentence.text.startswith("Then prime minister Indira Gandhi declared a state of emergency")
    assert (sentence.title, sentence.url) == ("Gandhi (film)", "https://en.wikipedia.org/wiki/Gandhi_(film)")
    rows = read_jsonl(shared_data / "fm2/dataset/dev.jsonl")
    assert sum(len(item.claims[0].evidence) for item in data.items) == sum(len(r["gold_evidence"]) for r in rows)


def test_vitaminc_keeps_contrastive_pairs_as_separate_items(shared_data: Path) -> None:
    data = dataset("vitaminc", shared_data)
    by_text: dict[str, set[tuple[Label, str]]] = {}
    for item in data.items:
        [evidence] = item.claims[0].evidence
        by_text.setdefault(item.text, set()).add((item.gold, evidence.text))
    flipped = [pairs for pairs in by_text.values() if len({gold for gold, _ in pairs}) == 2]
    assert len(flipped) > 8000  # one claim, two revisions of its sentence, opposite verdicts
    synthetic = dataset("vitaminc", shared_data, part="synthetic")
    titled = next(item for item in synthetic.items if item.meta["case_id"] == "5ed50881c9e77c000848e4da")
    assert titled.claims[0].evidence[0].title == "2 Hearts (Kylie Minogue song)"  # FEVER escapes undone
    with pytest.raises(ConfigError, match="part must be one of real, synthetic"):
        load_dataset("vitaminc", shared_data, part="train")


def test_anli_is_statement_against_context_without_neutral(shared_data: Path) -> None:
    data = dataset("anli", shared_data)
    first = data.items[0]
    assert first.id == "anli-r1-bf628cf5-6948-4595-a6d0-daf99beb47b9" and first.gold is F
    assert first.text == "Form and meaning are the only aspects of language linguistics is concerned with."
    assert first.claims[0].evidence[0].text.startswith("Linguistics is the scientific study of language")
    assert "non-commercial" in (read_anli.__doc__ or "") and "evaluation only" in data.description
    assert {item.meta["round"] for item in data.items} == {1, 2, 3}
    with pytest.raises(ConfigError, match="rounds"):
        load_dataset("anli", shared_data, rounds="4")


def test_citation_integrity_cuts_the_citation_markers(shared_data: Path) -> None:
    data = dataset("citation-integrity", shared_data)
    first = data.items[0]
    assert first.text == (
        "It has been proposed that COVID-19 leads to deterioration of hepatic function, "
        "leading to AD and ACLF in cirrhotic patients."
    )
    assert not any("<|" in item.text for item in data.items)
    assert first.claims[0].evidence[0].text.startswith("SARS-CoV-2 infection in patients with cirrhosis")
    assert all(len(item.claims[0].evidence) == len(item.meta["cited_doc_ids"]) for item in data.items)


def test_unknown_dataset_lists_the_names(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load_dataset("nope", tmp_path)
    assert all(name in str(error.value) for name in READERS)


@pytest.mark.parametrize("name", sorted(READERS))
def test_missing_file_names_it(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError, match="missing data file"):
        load_dataset(name, tmp_path)
