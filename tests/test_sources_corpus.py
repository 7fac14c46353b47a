"""The corpus source: loading, passages, BM25 retrieval and the on-disk index cache."""

import asyncio
import gzip
import json
from pathlib import Path

import pytest

from factcheck import Claim, ConfigError, InputError
from factcheck.sources import corpus as corpus_module
from factcheck.sources.corpus import CorpusSource, fingerprint, split_passages, split_sentences


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


DOCS = [
    {
        "id": "d1",
        "title": "Vitamin D",
        "text": "Vitamin D supplements reduce fractures in older adults.",
        "url": "https://example.org/d1",
    },
    {"id": "d2", "title": "Aspirin", "text": "Aspirin lowers the risk of heart attack. It thins the blood."},
    {"id": "d3", "title": "Coffee", "text": "Coffee contains caffeine."},
]


def retrieve(source: CorpusSource, text: str) -> list:
    return asyncio.run(source.retrieve(Claim("c1", text)))


def test_jsonl_corpus_returns_the_matching_passage_first(tmp_path: Path) -> None:
    source = CorpusSource(path=str(write_jsonl(tmp_path / "c.jsonl", DOCS)), top_k=2)
    evidence = retrieve(source, "Does aspirin lower heart attack risk?")
    assert evidence[0].title == "Aspirin" and evidence[0].source == "corpus"
    assert evidence[0].retrieved_at is not None
    assert len(evidence) <= 2


@pytest.mark.parametrize("retrieval", ["hybrid", "bm25", "dense"])
def test_a_query_with_no_known_words_and_no_meaning_near_finds_nothing(tmp_path: Path, retrieval: str) -> None:
    source = CorpusSource(path=str(write_jsonl(tmp_path / "c.jsonl", DOCS)), retrieval=retrieval)
    assert retrieve(source, "zzyzx qwerty") == []


def test_hybrid_retrieval_finds_a_passage_that_shares_no_word_with_the_claim(tmp_path: Path) -> None:
    # "Acetylsalicylic acid" and "myocardial infarction" are aspirin and heart attack: no word in common.
    path = str(write_jsonl(tmp_path / "c.jsonl", DOCS))
    claim = "Acetylsalicylic acid prevents myocardial infarction."
    assert retrieve(CorpusSource(path=path, retrieval="bm25", top_k=1), claim) == []
    assert [e.title for e in retrieve(CorpusSource(path=path, top_k=1), claim)] == ["Aspirin"]
    assert [e.title for e in retrieve(CorpusSource(path=path, retrieval="dense", top_k=1), claim)] == ["Aspirin"]


def test_the_fusion_ranks_an_item_both_rankings_hold_above_one_either_ranks_first() -> None:
    from factcheck.ranking import reciprocal_rank_fusion

    fused = reciprocal_rank_fusion([[(1, 9.0), (2, 5.0)], [(3, 0.9), (2, 0.8)]])
    assert [item for item, _ in fused] == [2, 1, 3]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 61)


def test_an_edited_corpus_is_embedded_afresh_and_the_embeddings_match_its_passages(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [*DOCS, {"id": "e1", "text": f"Embedding test {tmp_path}."}])
    first = corpus_module.open_index(path, 120, embedded=True)
    assert first.vectors is not None and first.vectors.shape == (len(first.passages), 384)
    write_jsonl(path, [*DOCS, {"id": "e2", "title": "Tea", "text": "Green tea contains caffeine and catechins."}])
    second = corpus_module.open_index(path, 120, embedded=True)
    assert second is not first and second.vectors is not None and len(second.passages) == len(DOCS) + 1
    tea = [p.title for p in second.passages].index("Tea")
    from factcheck.embed import load_embedder

    expected = load_embedder().encode([corpus_module.embedded_text(second.passages[tea])])[0]
    # Not bit-equal: the int8 model quantises its activations per batch, and the batch-mates differ.
    assert float(second.vectors[tea].astype("float32") @ expected) > 0.98


def test_damaged_saved_embeddings_are_computed_again(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [*DOCS, {"id": "e3", "text": f"Damaged embeddings test {tmp_path}."}])
    first = corpus_module.open_index(path, 120, embedded=True)
    assert first.vectors is not None
    corpus_module._indexes.clear()
    (saved,) = (corpus_module.cache_dir() / "corpus-embeddings").glob(f"{fingerprint(path, 120)}-*.npy")
    saved.write_bytes(b"\x93NUMPY truncated")
    again = corpus_module.open_index(path, 120, embedded=True)
    assert again.vectors is not None and again.vectors.shape == first.vectors.shape


def test_the_shipped_corpus_uses_its_shipped_embeddings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTCHECK_CACHE_DIR", str(tmp_path))  # nothing saved: the shipped file or a rebuild
    monkeypatch.setattr(corpus_module, "_indexes", {})

    def no_embedding(*args: object) -> None:
        raise AssertionError("the shipped corpus was embedded instead of using its shipped embeddings")

    monkeypatch.setattr(corpus_module, "embed_passages", no_embedding)
    index = corpus_module.open_index(corpus_module.SHIPPED_CORPUS, CorpusSource().passage_words, embedded=True)
    assert index.vectors is not None and index.vectors.shape[0] == len(index.passages)


def test_retrieval_must_be_one_of_the_known_ways() -> None:
    with pytest.raises(ConfigError, match="retrieval"):
        CorpusSource(retrieval="semantic")


def test_queries_are_searched_and_merged(tmp_path: Path) -> None:
    source = CorpusSource(path=str(write_jsonl(tmp_path / "c.jsonl", DOCS)), top_k=3)
    claim = Claim("c1", "unrelated words", queries=("coffee caffeine", "vitamin fractures"))
    titles = [e.title for e in asyncio.run(source.retrieve(claim))]
    assert set(titles) == {"Coffee", "Vitamin D"}


def test_folder_corpus_of_txt_and_md(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "moon.md").write_text("# The Moon\n\nThe Moon orbits the Earth every 27 days.\n")
    (tmp_path / "sun.txt").write_text("The Sun is a star.\n")
    (tmp_path / "ignored.csv").write_text("moon,earth\n")
    evidence = retrieve(CorpusSource(path=str(tmp_path)), "How often does the Moon orbit the Earth?")
    assert evidence[0].title == "The Moon"
    assert evidence[0].url == (tmp_path / "notes" / "moon.md").resolve().as_uri()


def test_markdown_headings_are_titles_never_sentences(tmp_path: Path) -> None:
    (tmp_path / "tower.md").write_text(
        "Notes kept by the desk.\n\n"
        "# The Eiffel Tower is in Berlin\n"
        "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.\n\n"
        "## History\n\nIt was completed in 1889.\n\n"
        "```\n# a comment in a code block, not a heading\n```\n\n"
        "Visiting hours\n--------------\nThe tower opens at nine.\n",
        encoding="utf-8",
    )
    passages = corpus_module.load_passages(tmp_path, 120)
    assert [(p.title, p.text) for p in passages] == [
        ("tower", "Notes kept by the desk."),  # before the first heading: the file's name
        ("The Eiffel Tower is in Berlin", "The Eiffel Tower is a wrought-iron lattice tower in Paris, France."),
        ("History", "It was completed in 1889. ``` # a comment in a code block, not a heading ```"),
        ("Visiting hours", "The tower opens at nine."),
    ]
    assert not any("Berlin" in p.text for p in passages)


def test_a_markdown_heading_cannot_make_a_false_claim_true(tmp_path: Path) -> None:
    # Issue 40: the heading was glued to the first sentence and read as evidence: TRUE 0.90.
    from factcheck import Agent, build_checker
    from factcheck.verifiers.nli import NLIVerifier

    (tmp_path / "tower.md").write_text(
        "# The Eiffel Tower is in Berlin\n\nThe Eiffel Tower is a wrought-iron lattice tower in Paris, France.\n",
        encoding="utf-8",
    )
    agent = Agent("corpus", CorpusSource(path=str(tmp_path)), NLIVerifier())
    claim = Claim("c1", "The Eiffel Tower is in Berlin.")
    verdict = build_checker(agents=[agent], cache={"enabled": False}).check(claim.text, claims=[claim])
    judgment = verdict.claims[0].judgments[0]
    assert verdict.claims[0].label.value != "TRUE"
    assert judgment.evidence and judgment.evidence[0].title == "The Eiffel Tower is in Berlin"
    assert "Berlin" not in judgment.evidence[0].text


def test_a_markdown_corpus_is_indexed_again_when_its_reading_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Text.\n", encoding="utf-8")
    markdown, plain = fingerprint(tmp_path / "a.md", 120), fingerprint(tmp_path / "b.txt", 120)
    monkeypatch.setattr(corpus_module, "MARKDOWN_FORMAT", "sections-0")
    assert fingerprint(tmp_path / "a.md", 120) != markdown
    assert fingerprint(tmp_path / "b.txt", 120) == plain  # a plain-text or JSONL corpus keeps its index


def test_gzipped_jsonl_is_read(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.write("".join(json.dumps(d) + "\n" for d in DOCS))
    assert retrieve(CorpusSource(path=str(path)), "caffeine in coffee")[0].title == "Coffee"


def test_the_index_is_built_once_then_loaded_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", DOCS)
    first = retrieve(CorpusSource(path=str(path)), "caffeine")
    corpus_module._indexes.clear()  # a new process: nothing in memory

    def no_build(cls, passages):  # type: ignore[no-untyped-def]
        raise AssertionError("the index was rebuilt instead of loaded from the cache")

    monkeypatch.setattr(corpus_module.CorpusIndex, "build", classmethod(no_build))
    second = retrieve(CorpusSource(path=str(path)), "caffeine")
    assert [e.text for e in second] == [e.text for e in first]


def test_a_documents_date_becomes_its_evidences_date_and_survives_the_saved_index(tmp_path: Path) -> None:
    dated = [
        {**DOCS[0], "date": "2019-06-01"},
        {**DOCS[1], "date": "Mar 3, 2021"},
        {**DOCS[2], "date": "not a date"},
    ]
    path = write_jsonl(tmp_path / "c.jsonl", dated)
    for _ in range(2):  # built, then loaded from the saved index as a new process would
        evidence = {e.title: e for e in retrieve(CorpusSource(path=str(path), top_k=3), "vitamin aspirin caffeine")}
        assert evidence["Vitamin D"].published_at == "2019-06-01"
        assert evidence["Aspirin"].published_at == "2021-03-03"
        assert evidence["Coffee"].published_at is None  # unreadable: unknown, never guessed
        corpus_module._indexes.clear()


def test_changing_the_corpus_changes_its_fingerprint(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", DOCS)
    before = fingerprint(path, 120)
    write_jsonl(path, DOCS[:2])
    assert fingerprint(path, 120) != before
    assert fingerprint(path, 60) != fingerprint(path, 120)


def test_bad_corpus_input_gives_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file or folder"):
        CorpusSource(path=str(tmp_path / "missing.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "text": "ok"}\n{"id": 2}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:2: a corpus record needs a string field 'text'"):
        retrieve(CorpusSource(path=str(bad)), "ok")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no text to search"):
        retrieve(CorpusSource(path=str(empty)), "ok")


def test_passages_keep_whole_sentences() -> None:
    text = "One two three. Four five six. Seven eight nine.\nTen eleven."
    assert split_sentences(text) == ["One two three.", "Four five six.", "Seven eight nine.", "Ten eleven."]
    assert split_passages(text, 6) == ["One two three. Four five six.", "Seven eight nine. Ten eleven."]
    assert split_passages("a b c d e f g h.", 3) == ["a b c d e f g h."]


def test_shipped_scifact_corpus_finds_the_gold_abstract() -> None:
    # SciFact dev claim 5 cites doc 13734012, whose abstract reports the PrP positivity rate.
    evidence = retrieve(CorpusSource(), "1/2000 in UK have abnormal PrP positivity.")
    assert any("prion" in e.title.lower() or "PrP" in e.text for e in evidence)
    assert len(evidence) == 3


def test_index_build_and_cache_hits_show_in_usage(tmp_path: Path) -> None:
    from factcheck import Agent
    from factcheck.build import build_checker
    from factcheck.testing import ScriptedVerifier

    unique = {"id": "d4", "title": "Usage", "text": f"A document only this test indexes: {tmp_path}."}
    path = write_jsonl(tmp_path / "c.jsonl", [*DOCS, unique])
    agents = [Agent("corpus", CorpusSource(path=str(path)), ScriptedVerifier())]
    first = build_checker(agents=agents).check("Coffee contains caffeine.")
    assert first.usage.calls["corpus-index:build"] == 1 and "corpus-index" not in first.usage.cache_hits
    assert first.usage.calls["corpus-embeddings:build"] == 1  # a user's corpus is embedded on first use
    corpus_module._indexes.clear()
    second = build_checker(agents=agents).check("Coffee contains caffeine.")
    assert second.usage.cache_hits == {"corpus-index": 1, "corpus-embeddings": 1}
    assert "corpus-index:build" not in second.usage.calls and "corpus-embeddings:build" not in second.usage.calls


def test_a_damaged_cache_entry_is_rebuilt(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [*DOCS, {"id": "d9", "text": f"Damaged cache test {tmp_path}."}])
    first = retrieve(CorpusSource(path=str(path)), "caffeine")
    corpus_module._indexes.clear()
    (folder,) = [p for p in (corpus_module.cache_dir() / "corpus-index").iterdir() if p.name == fingerprint(path, 120)]
    (folder / "passages.jsonl.gz").write_bytes(b"\x1f\x8b truncated")
    second = retrieve(CorpusSource(path=str(path)), "caffeine")
    assert [e.text for e in second] == [e.text for e in first]
    corpus_module._indexes.clear()
    assert [e.text for e in retrieve(CorpusSource(path=str(path)), "caffeine")] == [e.text for e in first]


def test_an_unwritable_cache_warns_and_still_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("FACTCHECK_CACHE_DIR", str(blocker))
    path = write_jsonl(tmp_path / "c.jsonl", [*DOCS, {"id": "d8", "text": f"Unwritable cache test {tmp_path}."}])
    with (
        pytest.warns(RuntimeWarning, match="cannot cache the corpus index"),
        pytest.warns(RuntimeWarning, match="cannot cache the corpus embeddings"),
    ):
        evidence = retrieve(CorpusSource(path=str(path)), "caffeine")
    assert evidence[0].title == "Coffee"
    assert retrieve(CorpusSource(path=str(path)), "caffeine")[0].title == "Coffee"  # kept in memory: no new warning


def test_fingerprint_is_not_recomputed_while_the_corpus_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", DOCS)
    retrieve(CorpusSource(path=str(path)), "caffeine")
    calls = []
    monkeypatch.setattr(corpus_module, "fingerprint", lambda *a: calls.append(a) or "rehashed")
    assert retrieve(CorpusSource(path=str(path)), "caffeine")[0].title == "Coffee"
    assert calls == []  # unchanged sizes and times: the stored hash is reused
    path.write_text(path.read_text() + '{"id": "d9", "text": "Tea has caffeine too."}\n')
    retrieve(CorpusSource(path=str(path)), "caffeine")
    assert len(calls) == 1  # a changed corpus is hashed again
