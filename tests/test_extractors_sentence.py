"""The spaCy sentence extractor."""

import warnings

import pytest

from factcheck import ConfigError
from factcheck.extractors.sentence import SentenceExtractor, load_pipeline

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


def test_min_words_option() -> None:
    assert SentenceExtractor().configure(min_words="1").extract("Yes. No.") != []
    assert SentenceExtractor().extract("Yes. No.") == []


def test_unknown_model_is_a_config_error() -> None:
    with warnings.catch_warnings(), pytest.raises(ConfigError, match="cannot load spaCy model"):
        SentenceExtractor(model="xx_no_such_model").extract("Some text here.")
