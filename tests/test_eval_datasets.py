"""The dataset readers: sizes and label counts as the SOURCE.md files give them, gold evidence, no label leaks."""

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from factcheck.errors import ConfigError, InputError
from factcheck.eval.datasets import READERS, Dataset, load_dataset
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
    }


@pytest.mark.parametrize("name", ["healthver", "wice", "averitec", "liar"])
def test_three_level_single_claims_have_no_claim_label(shared_data: Path, name: str) -> None:
    data = dataset(name, shared_data)
    assert all(len(item.claims) == 1 and item.claims[0].text == item.text for item in data.items)
    assert all(item.claims[0].label is None for item in data.items)


@pytest.mark.parametrize("name", ["scifact-binary", "fever-binary", "healthver", "wice", "averitec"])
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


def test_liar_has_no_evidence_and_no_credit_history(shared_data: Path) -> None:
    data = dataset("liar", shared_data)
    assert not data.has_evidence
    assert all(not item.claims[0].evidence for item in data.items)
    assert data.items[0].id == "liar-12134"
    assert not any(key.endswith("_counts") for item in data.items for key in item.meta)
    with pytest.raises(ConfigError, match="split"):
        load_dataset("liar", shared_data, split="dev")


def test_unknown_dataset_lists_the_names(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load_dataset("nope", tmp_path)
    assert all(name in str(error.value) for name in READERS)


@pytest.mark.parametrize("name", sorted(READERS))
def test_missing_file_names_it(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError, match="missing data file"):
        load_dataset(name, tmp_path)
