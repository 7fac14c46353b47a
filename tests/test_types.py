import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factcheck import (
    SCHEMA,
    Claim,
    ClaimVerdict,
    Evidence,
    InputError,
    JudgedBy,
    JudgingAgent,
    Judgment,
    Label,
    TextVerdict,
    Usage,
)

texts = st.text(max_size=40)
confidences = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
evidence = st.builds(Evidence, source=texts, text=texts, title=texts, url=st.none() | texts)
judgments = st.builds(
    Judgment,
    agent=texts,
    factuality=st.none() | st.booleans(),
    confidence=confidences,
    rationale=texts,
    evidence=st.lists(evidence, max_size=2).map(tuple),
    error=st.none() | texts,
)
claims = st.builds(
    Claim,
    id=texts,
    text=texts,
    span=st.none() | st.tuples(st.integers(0, 100), st.integers(0, 100)),
    queries=st.lists(texts, max_size=2).map(tuple),
)
claim_verdicts = st.builds(
    ClaimVerdict,
    claim=claims,
    judgments=st.lists(judgments, max_size=3).map(tuple),
    score=st.none() | confidences,
    label=st.sampled_from([Label.TRUE, Label.FALSE, Label.UNVERIFIED]),
)
usages = st.builds(
    Usage,
    calls=st.dictionaries(texts, st.integers(0, 9), max_size=2),
    wall_s=st.dictionaries(texts, confidences, max_size=2),
    llm_calls=st.integers(0, 9),
)
optional_texts = st.none() | texts
judged_bys = st.builds(
    JudgedBy,
    profile=optional_texts,
    agents=st.lists(
        st.builds(JudgingAgent, name=texts, source=texts, verifier=texts, corpus=optional_texts, domain=optional_texts),
        max_size=2,
    ).map(tuple),
    caution=optional_texts,
)
text_verdicts = st.builds(
    TextVerdict,
    text=texts,
    claims=st.lists(claim_verdicts, max_size=3).map(tuple),
    score=st.none() | confidences,
    label=st.sampled_from(list(Label)),
    scorer=texts,
    labels=texts,
    usage=usages,
    judged_by=st.none() | judged_bys,
)


@given(text_verdicts)
def test_text_verdict_round_trips_through_json(verdict: TextVerdict) -> None:
    data = json.loads(json.dumps(verdict.to_dict()))
    assert TextVerdict.from_dict(data) == verdict


def test_json_has_the_documented_fields() -> None:
    verdict = TextVerdict(
        text="x is y.",
        claims=(
            ClaimVerdict(
                Claim("c1", "x is y.", (0, 7)),
                (Judgment("corpus", True, 0.8, "why", (Evidence("corpus", "x is y", "X", "http://x"),)),),
                0.9,
                Label.TRUE,
            ),
        ),
        score=0.9,
        label=Label.TRUE,
        scorer="mafc",
    )
    data = verdict.to_dict()
    assert data["schema"] == SCHEMA == "factcheck/1"
    assert {"schema", "text", "label", "score", "scorer", "claims", "usage"} <= set(data)
    claim = data["claims"][0]
    assert {"id", "text", "span", "label", "score", "judgments"} <= set(claim)
    assert claim["span"] == [0, 7]
    judgment = claim["judgments"][0]
    assert set(judgment) == {"agent", "factuality", "confidence", "rationale", "evidence", "error"}
    assert {"source", "title", "url", "text"} <= set(judgment["evidence"][0])


def test_judged_by_has_the_shape_clients_code_against_and_old_json_reads_without_it() -> None:
    corpus = JudgingAgent(
        "corpus", "corpus", "nli", "SciFact abstracts (5,183 biomedical research abstracts)", "biomedical"
    )
    judged = JudgedBy("offline", (corpus, JudgingAgent("wikipedia", "wikipedia", "nli")), "Judged only against ...")
    data = TextVerdict("t", (), judged_by=judged).to_dict()
    assert data["judged_by"] == {
        "profile": "offline",
        "agents": [
            {
                "name": "corpus",
                "source": "corpus",
                "verifier": "nli",
                "corpus": "SciFact abstracts (5,183 biomedical research abstracts)",
                "domain": "biomedical",
            },
            {"name": "wikipedia", "source": "wikipedia", "verifier": "nli", "corpus": None, "domain": None},
        ],
        "caution": "Judged only against ...",
    }
    assert TextVerdict.from_dict(data).judged_by == judged
    recorded_before = {k: v for k, v in data.items() if k != "judged_by"}  # factcheck/1 JSON of before
    assert TextVerdict.from_dict(recorded_before).judged_by is None
    assert TextVerdict("t", ()).to_dict()["judged_by"] is None
    with pytest.raises(InputError, match="judged_by agent corpus must be a string or null"):
        TextVerdict.from_dict({**data, "judged_by": {"agents": [{"name": "a", "corpus": 3}]}})


def test_signed_score_keeps_negative_zero() -> None:
    judgment = Judgment.from_signed("a", -0.0)
    assert judgment.factuality is False and judgment.confidence == 0.0
    assert str(judgment.signed_score) == "-0.0"
    assert Judgment.from_signed("a", 0.0).factuality is True


def test_abstained_judgment_has_no_signed_score() -> None:
    with pytest.raises(ValueError, match="abstained"):
        _ = Judgment("a", None).signed_score


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"schema": "factcheck/0", "text": "t", "claims": []}, "unsupported schema"),
        ({"text": "t"}, "'claims' list"),
        ({"claims": []}, "missing the field 'text'"),
        (
            {"text": "t", "claims": [{"id": "c1", "text": "t", "judgments": [{"agent": "a", "factuality": "yes"}]}]},
            "factuality must be true, false or null",
        ),
        (
            {
                "text": "t",
                "claims": [
                    {"id": "c1", "text": "t", "judgments": [{"agent": "a", "factuality": True, "confidence": 1.5}]}
                ],
            },
            "in \\[0, 1\\]",
        ),
        ({"text": "t", "claims": [], "label": "MAYBE"}, "unknown label"),
    ],
)
def test_bad_json_gives_a_clear_error(data: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        TextVerdict.from_dict(data)


def test_recorded_checks_may_omit_scores() -> None:
    verdict = TextVerdict.from_dict(
        {"text": "t", "claims": [{"id": "c1", "text": "t", "judgments": [{"agent": "a", "factuality": False}]}]}
    )
    assert verdict.score is None and verdict.label is Label.UNVERIFIED
    assert verdict.claims[0].judgments[0].confidence == 0.0


def test_label_parse_accepts_dataset_spellings() -> None:
    assert Label.parse("PARTLY") is Label.PARTLY_TRUE
    assert Label.parse("partly_true") is Label.PARTLY_TRUE
    assert Label.parse("true") is Label.TRUE


@pytest.mark.parametrize(
    ("score", "expected"),
    [(None, None), (0.5, "weak"), (0.74, "weak"), (0.26, "weak"), (0.75, "strong"), (0.1, "strong")],
)
def test_one_rule_says_whether_a_verdict_is_weak_in_the_json_and_the_report(score, expected) -> None:  # type: ignore[no-untyped-def]
    from io import StringIO

    from rich.console import Console

    from factcheck.report import render

    claim = ClaimVerdict(Claim("c1", "t"), (), score=score, label=Label.UNVERIFIED if score is None else Label.TRUE)
    assert claim.strength == expected and claim.to_dict()["strength"] == expected
    label = Label.UNVERIFIED if score is None else Label.TRUE
    text = TextVerdict("t", (claim,), score=score, label=label)
    # A TRUE or FALSE text is as sure as its least sure claim; another label has no strength.
    assert text.to_dict()["strength"] == (None if score is None else expected)
    out = StringIO()
    render(text, Console(file=out, width=120))
    assert (", weak" in out.getvalue()) == (expected == "weak")
    assert TextVerdict.from_dict(json.loads(json.dumps(text.to_dict()))).claims[0].strength == expected
