"""Record once, score many: checking into judgments.jsonl, resuming, gold labels, scorer specs."""

import asyncio
import json
from pathlib import Path

import pytest

from factcheck import Agent, Checker, ConfigError, Evidence, InputError, Label
from factcheck.build import build_checker
from factcheck.eval.datasets import Dataset, EvalItem, GoldClaim
from factcheck.eval.evaluate import (
    ScorerSpec,
    attach_gold,
    check_items,
    given_evidence_checker,
    parse_specs,
    score_rows,
)
from factcheck.resume import read_done
from factcheck.testing import ScriptedVerifier, StaticSource

T, F, P = Label.TRUE, Label.FALSE, Label.PARTLY_TRUE


def dataset() -> Dataset:
    items = (
        EvalItem(
            "a",
            "Cats purr. Dogs bark.",
            P,
            (
                GoldClaim("Cats purr.", T, (Evidence("gold", "Cats purr when content."),)),
                GoldClaim("Dogs bark.", F, (Evidence("gold", "Dogs are quiet."),)),
            ),
        ),
        EvalItem("b", "Fish swim.", T, (GoldClaim("Fish swim.", T, (Evidence("gold", "Fish swim in water."),)),)),
    )
    return Dataset("toy", 3, items, True, "a toy dataset")


def scripted_checker() -> Checker:
    verifier = ScriptedVerifier(rules={"Dogs": (False, 0.9)}, default=(True, 0.9))
    return build_checker(agents=[Agent("a", StaticSource(), verifier), Agent("b", StaticSource(name="s2"), verifier)])


def test_checking_writes_one_record_per_text_with_gold_labels(tmp_path: Path) -> None:
    out = tmp_path / "judgments.jsonl"
    asyncio.run(check_items(dataset().items, scripted_checker(), out))
    records = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(records) == {"a", "b"}
    a = records["a"]
    assert a["gold"] == "PARTLY TRUE" and a["schema"] == "factcheck/1"
    assert [c["text"] for c in a["claims"]] == ["Cats purr.", "Dogs bark."]  # the dataset's claims, not re-split
    assert [c["gold"] for c in a["claims"]] == ["TRUE", "FALSE"]
    assert a["claims"][1]["span"] == [11, 21]
    assert [c["label"] for c in a["claims"]] == ["TRUE", "FALSE"]


def test_a_killed_run_resumes_without_redoing_or_duplicating(tmp_path: Path) -> None:
    out = tmp_path / "judgments.jsonl"
    items = dataset().items
    asyncio.run(check_items(items[:1], scripted_checker(), out))
    with out.open("a") as handle:
        handle.write('{"id": "b", "text": "Fish sw')  # killed mid-line
    done = read_done(out)
    assert done == {"a"}
    asyncio.run(check_items([i for i in items if i.id not in done], scripted_checker(), out))
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert sorted(ids) == ["a", "b"]


def test_given_mode_judges_gold_evidence_with_the_profiles_verifiers(tmp_path: Path) -> None:
    checker = given_evidence_checker(dataset(), scripted_checker())
    assert [a.name for a in checker.agents] == ["given+scripted"]
    out = tmp_path / "judgments.jsonl"
    asyncio.run(check_items(dataset().items, checker, out))
    record = json.loads(out.read_text().splitlines()[0])
    assert record["claims"][0]["judgments"][0]["evidence"][0]["text"] in {
        "Cats purr when content.",
        "Fish swim in water.",
    }
    no_evidence = Dataset("x", 2, (), False, "")
    with pytest.raises(ConfigError, match="no gold evidence"):
        given_evidence_checker(no_evidence, scripted_checker())


def test_gold_comes_from_the_line_then_the_dataset_by_id_then_by_text() -> None:
    lines = [
        {"id": "zzz", "text": "Fish swim.", "claims": []},
        {"id": "a", "text": "?", "claims": []},
        {"gold": "FALSE", "text": "other", "claims": []},
    ]
    assert {r["text"]: r["gold"] for r in attach_gold(lines, dataset())} == {
        "Fish swim.": "TRUE",
        "?": "PARTLY TRUE",
        "other": "FALSE",
    }
    keyed = Dataset("k", 2, (EvalItem("scifact-dev-3", "x", T, (), {"scifact_dev_id": 3}),), False, "")
    assert attach_gold([{"id": 3, "text": "?", "claims": []}], keyed)[0]["gold"] == "TRUE"  # the dataset's own key
    with pytest.raises(InputError, match="line 1: no 'gold' field"):
        attach_gold([{"id": "nope", "text": "nope", "claims": []}], dataset())


def test_scorer_specs() -> None:
    assert parse_specs("mafc, average:remap=false,mafc:bounds=reference:thresholds=0.5") == [
        ScorerSpec("mafc"),
        ScorerSpec("average", {"remap": "false"}),
        ScorerSpec("mafc", {"bounds": "reference", "thresholds": "0.5"}),
    ]
    assert ScorerSpec.parse("mafc:thresholds=0.4;0.6").options == {"thresholds": "0.4,0.6"}
    spec = ScorerSpec.parse("mafc:bounds=reference")
    assert str(spec) == "mafc:bounds=reference"
    with pytest.raises(ConfigError, match="name:key=value"):
        ScorerSpec.parse("mafc:reference")


def test_every_scorer_and_rule_scores_the_same_judgments(tmp_path: Path) -> None:
    out = tmp_path / "judgments.jsonl"
    asyncio.run(check_items(dataset().items, scripted_checker(), out))
    records = attach_gold(map(json.loads, out.read_text().splitlines()), dataset())
    rows, claim_scores = score_rows(
        records, (T, P, F), parse_specs("mafc,majority"), ["threshold", "compose"], {"bounds": "reference"}
    )
    assert [(r.scorer, r.labels) for r in rows] == [
        ("mafc", "threshold"),
        ("mafc", "compose"),
        ("majority", "threshold"),
        ("majority", "compose"),
    ]
    compose = rows[1].metrics
    assert compose["accuracy"] == 1.0  # a: TRUE + FALSE claims -> PARTLY TRUE; b: TRUE
    assert compose["confusion"]["matrix"] == [[1, 0, 0], [0, 1, 0], [0, 0, 0]]
    assert rows[0].metrics["ece"] is not None and set(claim_scores) == {"mafc", "majority"}
    with pytest.raises(ConfigError, match="unknown option colour"):
        score_rows(records, (T, P, F), parse_specs("mafc:colour=red"), ["threshold"], {})


def test_records_come_back_in_the_datasets_order_whatever_order_they_finished_in() -> None:
    finished = [
        {"id": "own-2", "gold": "TRUE", "text": "not in the dataset", "claims": []},
        {"id": "b", "text": "Fish swim.", "claims": []},
        {"id": "own-1", "gold": "FALSE", "text": "nor this", "claims": []},
        {"id": "a", "text": "Cats purr. Dogs bark.", "claims": []},
    ]
    ordered = [r["id"] for r in attach_gold(finished, dataset())]
    assert ordered == ["a", "b", "own-1", "own-2"]  # the dataset's order, then the others by id
    assert [r["id"] for r in attach_gold(reversed(finished), dataset())] == ordered


def test_given_mode_judges_a_recurring_claim_against_each_items_own_evidence(tmp_path: Path) -> None:
    # VitaminC: one claim text, the sentence before and after a revision, opposite verdicts.
    claim = "Westlife sold over 23 million records."
    items = tuple(
        EvalItem(item_id, claim, gold, (GoldClaim(claim, gold, (Evidence("gold", sentence),)),))
        for item_id, gold, sentence in (("before", F, "Westlife sold 20 million."), ("after", T, "Westlife sold 24m."))
    )
    toy = Dataset("pairs", 2, items, True, "contrastive pairs")
    checker = given_evidence_checker(toy, build_checker(agents=[Agent("a", StaticSource(), ScriptedVerifier())]))
    out = tmp_path / "judgments.jsonl"
    asyncio.run(check_items(toy.items, checker, out))
    records = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    seen = {key: [e["text"] for e in r["claims"][0]["judgments"][0]["evidence"]] for key, r in records.items()}
    assert seen == {"before": ["Westlife sold 20 million."], "after": ["Westlife sold 24m."]}


def test_an_item_dated_by_its_dataset_is_checked_as_of_that_day(tmp_path: Path) -> None:
    dated = EvalItem("d", "Unemployment fell last year.", T, (), as_of="2014-05-10")
    out = tmp_path / "dated.jsonl"
    asyncio.run(check_items([dated, dataset().items[1]], scripted_checker(), out, extract=True))
    records = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert records["d"]["as_of"].startswith("2014-05-10")
    assert records["d"]["claims"][0]["time"]["start"] == "2013-01-01"
    assert not records["b"]["as_of"].startswith("2014")  # undated: as of the check
