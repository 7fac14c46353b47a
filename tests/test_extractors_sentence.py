"""The spaCy sentence extractor."""

import warnings

import pytest

from factcheck import ConfigError
from factcheck.extractors.sentence import SentenceExtractor, blocks, load_pipeline

TEXT = "  The Eiffel Tower is in Paris. Is it tall? It was completed in 1889 by Gustave Eiffel's company.\nYes."


def test_one_claim_per_declarative_sentence_with_spans() -> None:
    claims = SentenceExtractor().extract(TEXT)
    assert [c.text for c in claims] == [
        "The Eiffel Tower is in Paris.",
        "It was completed in 1889 by Gustave Eiffel's company.",
    ]
    assert [c.id for c in claims] == ["c1", "c2"]
    for claim in claims:
        assert claim.span is not None
        assert TEXT[claim.span[0] : claim.span[1]] == claim.text


def test_the_packaged_model_is_used_offline() -> None:
    assert "parser" in load_pipeline("auto").pipe_names


def test_blank_pipeline_fallback_splits_too() -> None:
    claims = SentenceExtractor(model="blank").extract("Water boils at 100 degrees. Ice is frozen water.")
    assert [c.text for c in claims] == ["Water boils at 100 degrees.", "Ice is frozen water."]


def test_fragments_are_dropped_but_short_claims_kept() -> None:
    assert [c.text for c in SentenceExtractor().extract("Yes. Smoking kills. See below:")] == ["Smoking kills."]
    assert SentenceExtractor().configure(min_letters="1").extract("Yes. No.") != []


def test_text_without_spaces_is_not_dropped() -> None:
    assert len(SentenceExtractor().extract("東京は日本の首都です。")) == 1


def test_long_texts_are_split_in_blocks_with_exact_spans() -> None:
    paragraph = "The Eiffel Tower is in Paris. It was completed in 1889.\n\n"
    text = paragraph * 40
    claims = SentenceExtractor(block_chars=500).extract(text)
    assert len(claims) == 80
    assert all(text[c.span[0] : c.span[1]] == c.text for c in claims if c.span)
    assert [c.id for c in claims[:3]] == ["c1", "c2", "c3"]


def test_blocks_cut_at_breaks_and_cover_the_text() -> None:
    text = "aaaa bbbb\n\ncccc dddd eeee"
    pieces = list(blocks(text, 12))
    assert "".join(p for _, p in pieces) == text
    assert pieces[0] == (0, "aaaa bbbb\n\n")
    assert all(len(p) <= 12 for _, p in pieces)


def test_unknown_model_is_a_config_error() -> None:
    with warnings.catch_warnings(), pytest.raises(ConfigError, match="cannot load spaCy model"):
        SentenceExtractor(model="xx_no_such_model").extract("Some text here.")


def test_keyword_queries_from_entities_and_noun_chunks() -> None:
    (claim,) = SentenceExtractor(queries="keywords").extract(
        "The Eiffel Tower was completed by Gustave Eiffel in 1889."
    )
    assert claim.queries == (claim.text, "Eiffel Tower Gustave Eiffel 1889")
    assert SentenceExtractor().extract("The Eiffel Tower is in Paris.")[0].queries == ()
    with pytest.raises(ConfigError, match="queries must be"):
        SentenceExtractor(queries="magic")


def test_a_blank_line_always_ends_a_claim() -> None:
    text = "Aspirin study\n\nAspirin lowers the risk of heart attacks. It is cheap.\n  \nStatins lower LDL cholesterol"
    claims = SentenceExtractor().extract(text)
    assert [c.text for c in claims] == [
        "Aspirin study",
        "Aspirin lowers the risk of heart attacks.",
        "It is cheap.",
        "Statins lower LDL cholesterol",
    ]
    assert all(c.span is not None and text[c.span[0] : c.span[1]] == c.text for c in claims)
