"""Issue 26's verdicts on the offline default (hybrid retrieval over the shipped corpus, the ``nli`` verifier):
a sentence that is not about the claim no longer decides it confidently. Each of these failed on the code
before (the verdicts quoted in the issue); the ones still wrong are marked.

These verdicts sit close to the gate's and the model's boundaries, and the int8 kernels onnxruntime picks
differ by version and CPU (seen 2026-12-02: with 1.30 and 1.31 the fasting and aspirin cases turn, with
1.32 the statins cases). A case seen to turn that way is marked ``xfail(strict=False)``, with what was
seen, rather than dropped."""

from __future__ import annotations

import pytest

from factcheck import ClaimVerdict, Label, build_checker

NUMERICS = "int8 kernels differ by onnxruntime version and CPU"


@pytest.fixture(scope="module")
def checker():  # type: ignore[no-untyped-def]
    return build_checker(cache={"enabled": False})


def verdict(checker, text: str) -> ClaimVerdict:  # type: ignore[no-untyped-def]
    (claim,) = checker.check(text).claims
    return claim


@pytest.mark.xfail(
    strict=False, reason=f"{NUMERICS}: with onnxruntime 1.30 and 1.31 a sentence on fasting humans decides"
)
def test_a_claim_the_corpus_has_nothing_on_is_unverified_not_refuted_by_a_sentence_on_fasting_humans(checker) -> None:  # type: ignore[no-untyped-def]
    # Before: REFUTES p=0.87, by a sentence on renal homocysteine uptake in fasting humans.
    claim = verdict(checker, "Fasting causes hair loss in rats.")
    assert claim.label == Label.UNVERIFIED
    assert "off topic" in claim.judgments[0].rationale


def test_a_sentence_on_antibiotics_and_gut_microbiota_no_longer_makes_a_strong_true(checker) -> None:  # type: ignore[no-untyped-def]
    # Before: TRUE 0.85, decided by a sentence about antibiotics and the gut microbiota.
    claim = verdict(checker, "Antibiotics are effective against viral infections.")
    assert claim.label == Label.UNVERIFIED or claim.strength == "weak", claim.judgments[0].rationale
    assert "microbio" not in claim.judgments[0].rationale


@pytest.mark.xfail(
    strict=False,
    reason=f"{NUMERICS}: with onnxruntime 1.32 a window from an HDL abstract that names triglycerides decides "
    "(TRUE, p=0.67)",
)
def test_statins_and_ldl_are_not_decided_by_a_sentence_on_hdl_and_triglycerides(checker) -> None:  # type: ignore[no-untyped-def]
    claim = verdict(checker, "Statins lower LDL cholesterol.")
    rationale = claim.judgments[0].rationale
    assert "HDL" not in rationale and "triglyceride" not in rationale
    assert claim.strength in (None, "weak")


@pytest.mark.xfail(
    strict=False,
    reason=f"issue 26, left: a sentence on aspirin and macular degeneration is close enough ({NUMERICS}: "
    "read right with onnxruntime 1.30 and 1.31)",
)
def test_aspirin_and_heart_attacks_are_not_refuted_by_a_sentence_on_another_disease(checker) -> None:  # type: ignore[no-untyped-def]
    # Before: FALSE 0.10 by a colorectal-cancer sentence; now FALSE by one on age-related macular degeneration
    # (similarity 0.61, above the gate's 0.55).
    claim = verdict(checker, "Aspirin lowers the risk of heart attacks.")
    assert claim.label != Label.FALSE, claim.judgments[0].rationale


@pytest.mark.xfail(
    strict=False,
    reason="issue 26, left: the model reads 'potent inhibitors of cholesterol biosynthesis' as a refutation "
    f"({NUMERICS}: TRUE with onnxruntime 1.32)",
)
def test_statins_lower_ldl_is_true(checker) -> None:  # type: ignore[no-untyped-def]
    claim = verdict(checker, "Statins lower LDL cholesterol.")
    assert claim.label == Label.TRUE, claim.judgments[0].rationale
