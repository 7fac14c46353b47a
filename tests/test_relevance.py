"""Issue 26's verdicts on the offline default (hybrid retrieval over the shipped corpus, the ``nli`` verifier):
a sentence that is not about the claim does not decide it. Each of these failed on the code before issue 26
(the verdicts quoted in its report).

Issue 39 made them strict again (they had been marked xfail). They used to sit on the model's and the gate's
boundaries, and the int8 kernels onnxruntime picks by version and CPU turned them (1.30 and 1.31 the fasting and
aspirin cases, 1.32 the statins cases). Under the decision rule a verdict needs a sentence about the claim that
clears its fitted threshold with nothing comparable against it, so what rounding can still move is a verdict to
UNVERIFIED or back, never TRUE to FALSE. The assertions ask for no harm (no FALSE on statins and aspirin, no TRUE
on antibiotics, no strong TRUE on statins) and that no off-topic sentence decides; only the fasting claim, which
the corpus has nothing on, must be UNVERIFIED. All four read UNVERIFIED with onnxruntime 1.32 (2026-12-06)."""

from __future__ import annotations

import pytest

from factcheck import ClaimVerdict, Label, build_checker


@pytest.fixture(scope="module")
def checker():  # type: ignore[no-untyped-def]
    return build_checker(cache={"enabled": False})


def verdict(checker, text: str) -> ClaimVerdict:  # type: ignore[no-untyped-def]
    (claim,) = checker.check(text).claims
    return claim


def test_a_claim_the_corpus_has_nothing_on_is_unverified_not_refuted_by_a_sentence_on_fasting_humans(checker) -> None:  # type: ignore[no-untyped-def]
    # Before: REFUTES p=0.87, by a sentence on renal homocysteine uptake in fasting humans.
    claim = verdict(checker, "Fasting causes hair loss in rats.")
    assert claim.label == Label.UNVERIFIED, claim.judgments[0].rationale
    assert "homocysteine" not in claim.judgments[0].rationale


def test_a_sentence_on_antibiotics_and_gut_microbiota_no_longer_makes_a_strong_true(checker) -> None:  # type: ignore[no-untyped-def]
    # Before: TRUE 0.85, decided by a sentence about antibiotics and the gut microbiota.
    claim = verdict(checker, "Antibiotics are effective against viral infections.")
    assert claim.label != Label.TRUE, claim.judgments[0].rationale
    assert "microbio" not in claim.judgments[0].rationale


def test_statins_and_ldl_are_not_decided_by_a_sentence_on_hdl_and_triglycerides(checker) -> None:  # type: ignore[no-untyped-def]
    # Before: TRUE or FALSE by a window from an HDL abstract that names triglycerides, by onnxruntime version.
    claim = verdict(checker, "Statins lower LDL cholesterol.")
    rationale = claim.judgments[0].rationale
    assert claim.label != Label.FALSE, rationale
    assert claim.strength in (None, "weak"), rationale


def test_aspirin_and_heart_attacks_are_not_refuted_by_a_sentence_on_another_disease(checker) -> None:  # type: ignore[no-untyped-def]
    # Before: FALSE 0.10 by a colorectal-cancer sentence, then FALSE by one on age-related macular degeneration
    # (similarity 0.61, above the gate's 0.55): it names aspirin and a risk, not heart attacks.
    claim = verdict(checker, "Aspirin lowers the risk of heart attacks.")
    assert claim.label != Label.FALSE, claim.judgments[0].rationale
    assert claim.label == Label.UNVERIFIED or "macular" not in claim.judgments[0].rationale
