"""What a reader sees of a claim's deliberation (issue 27): the text report, the batch HTML page, the stream's
``deliberation`` event, and a re-scored record that keeps its steps without running them again."""

from __future__ import annotations

import io
import json
import re
from collections.abc import AsyncGenerator
from dataclasses import replace
from html import escape
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console

from factcheck.batch.html import document_row, write_report
from factcheck.batch.progress import summarise
from factcheck.events import ClaimChecked, ClaimDeliberated, ClaimsFound, TextChecked
from factcheck.independence import apply_independence
from factcheck.report import render
from factcheck.scoring import REPLAYED_NOTE, rescore
from factcheck.scoring.baselines import AverageScorer
from factcheck.scoring.labels import ThresholdRule
from factcheck.types import (
    Claim,
    ClaimVerdict,
    Critique,
    Deliberation,
    DeliberationStep,
    Evidence,
    Judgment,
    Label,
    StepCost,
    TextVerdict,
)

HOSTILE = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'
GATE = "the leader is unsure: confidence 0.55 < tau_conf 0.6"
STOPPED = "the leader is sure after revising"
COUNTER = Evidence(
    "corpus",
    "In trial X statins did not lower LDL cholesterol once adherence was accounted for.",
    title="Trial X",
    url="https://example.org/trial-x",
)
FIRST = Judgment("corpus", True, 0.55, "weakly supports", (Evidence("corpus", "Statins lower LDL.", title="A review"),))
REVISED = Judgment("corpus", False, 0.8, 'trial X: "statins did not lower LDL cholesterol"', (COUNTER,))
CHALLENGE = DeliberationStep(
    1,
    "challenge",
    "devil's advocate",
    "verifier:lexical",
    critique=Critique("the support rests on one review", (COUNTER,), query="statins LDL no effect"),
    inputs=("judgment:corpus",),
    cost=StepCost(calls=2, passages=3),
)
REVISE = DeliberationStep(
    2,
    "revise",
    "leader",
    "corpus",
    judgment=REVISED,
    inputs=("judgment:corpus", "critique:1"),
    relied_on=("critique:1", "evidence:corpus#1"),
    replaces="corpus",
    cost=StepCost(calls=1, passages=1),
)
SETTLED = Deliberation(
    "lase",
    {"tau_conf": 0.6},
    {"leader": "corpus", "leader_confidence": 0.55},
    GATE,
    (CHALLENGE, REVISE),
    STOPPED,
    (FIRST,),
)
ROUND0 = Deliberation("lase", {}, {"leader": "corpus", "leader_confidence": 0.9}, None, (), "the leader is sure")


def verdict(deliberation: Deliberation | None = SETTLED, other: Deliberation | None = ROUND0) -> TextVerdict:
    """Two claims: one the agents deliberated on (statins), one settled in the first round (smoking)."""
    statins = ClaimVerdict(Claim("c1", "Statins lower LDL."), (REVISED,), 0.1, Label.FALSE, deliberation=deliberation)
    smoking = Judgment("corpus", True, 0.9, "it says so", (Evidence("corpus", "Smoking causes cancer.", title="S"),))
    smokes = ClaimVerdict(Claim("c2", "Smoking causes cancer."), (smoking,), 0.95, Label.TRUE, deliberation=other)
    return TextVerdict("Statins lower LDL. Smoking causes cancer.", (statins, smokes), 0.5, Label.PARTLY_TRUE)


def report(checked: TextVerdict) -> str:
    out = io.StringIO()
    render(checked, Console(file=out, width=240, color_system=None))
    return out.getvalue()


# ---- the text report --------------------------------------------------------------------------


def test_the_report_says_how_the_agents_settled_a_claim_step_by_step() -> None:
    text = report(verdict())
    lines = text.splitlines()
    start = lines.index("  how the agents settled it (lase)")
    assert lines[start - 1].strip().startswith("↳ Trial X")  # after the claim's own judgments
    assert lines[start + 1] == f"    why: {GATE}"
    assert lines[start + 2] == "    1. challenge · devil's advocate (verifier:lexical) · 2 calls"
    assert "weak point: the support rests on one review" in lines[start + 3]
    assert lines[start + 4].strip() == f'counter-evidence: Trial X "{COUNTER.text}"'
    assert lines[start + 5].strip() == "query: statins LDL no effect"
    assert (
        lines[start + 6]
        == "    2. revise · leader (corpus): false, confidence 0.80, in place of its first answer · 1 call"
    )
    assert lines[start + 7].strip() == REVISED.rationale
    assert lines[start + 8].strip() == "relied on: critique:1, evidence:corpus#1"
    assert lines[start + 9] == f"    stopped: {STOPPED}"
    assert "  deliberation (lase): settled in the first round" in lines
    assert "recorded steps kept" not in text


def test_a_step_that_failed_says_why_and_long_model_text_is_cut_to_one_line() -> None:
    failed = DeliberationStep(3, "arbitrate", "decision-maker", "llm", error="the model refused: timed out")
    long = replace(REVISE, judgment=replace(REVISED, rationale="word\n" * 200))
    text = report(verdict(replace(SETTLED, steps=(CHALLENGE, long, failed), stopped="a step failed")))
    assert "    3. arbitrate · decision-maker (llm)\n         error: the model refused: timed out" in text
    rationale = next(line for line in text.splitlines() if line.strip().startswith("word word"))
    assert rationale.strip().endswith("…") and len(rationale.strip()) == 200
    assert "    stopped: a step failed" in text


def test_model_text_in_the_report_is_shown_as_text_not_markup_or_control_codes() -> None:
    hostile = replace(
        CHALLENGE,
        critique=Critique(f"[bold red]{HOSTILE}[/] \x1b[31mred\x1b[0m", (replace(COUNTER, title="[link]T[/link]"),)),
    )
    text = report(verdict(replace(SETTLED, steps=(hostile, REVISE))))
    assert f"weak point: [bold red]{HOSTILE}[/] " in text  # rich markup is not read
    assert "\x1b" not in text
    assert "counter-evidence: [link]T[/link]" in text


def test_a_claim_without_deliberation_is_reported_as_before() -> None:
    plain = report(verdict(None, None))
    assert "deliberat" not in plain and "settled" not in plain
    # The report with a deliberation is the report without it, plus the deliberation's own lines.
    full = report(verdict()).splitlines()
    start = full.index("  how the agents settled it (lase)")
    end = full.index(f"    stopped: {STOPPED}")
    rest = full[:start] + full[end + 1 :]
    rest.remove("  deliberation (lase): settled in the first round")
    assert rest == plain.splitlines()


def test_the_report_reads_the_same_from_the_json_record() -> None:
    checked = verdict()
    again = TextVerdict.from_dict(json.loads(json.dumps(checked.to_dict())))
    assert again.claims[0].deliberation == SETTLED
    assert report(again) == report(checked)


# ---- re-scoring a record ----------------------------------------------------------------------


def test_rescoring_keeps_the_deliberation_marks_it_replayed_and_says_so_once() -> None:
    recorded = verdict()
    recorded = replace(
        recorded, claims=(replace(recorded.claims[0], notes=("a note of the check",)), recorded.claims[1])
    )
    again = rescore(TextVerdict.from_dict(recorded.to_dict()), AverageScorer(), ThresholdRule())
    statins, smokes = again.claims
    assert statins.deliberation == replace(SETTLED, replayed=True)
    assert statins.judgments == (REVISED,)  # the deliberated judgments are scored, not the first round's
    assert statins.label is Label.FALSE
    assert statins.notes == ("a note of the check", REPLAYED_NOTE)
    assert smokes.deliberation == replace(ROUND0, replayed=True)
    assert smokes.notes == ()  # no step was recorded: nothing to say
    twice = rescore(again, AverageScorer(), ThresholdRule())
    assert twice.claims[0].notes == ("a note of the check", REPLAYED_NOTE)
    # The report says it in the deliberation's heading, not twice.
    text = report(again)
    assert "  how the agents settled it (lase) (recorded steps kept, not re-run)" in text
    assert f"note: {REPLAYED_NOTE}" not in text
    assert "note: a note of the check" in text


def test_rescoring_a_record_without_deliberation_adds_nothing() -> None:
    recorded = verdict(None, None)
    again = rescore(recorded, AverageScorer(), ThresholdRule())
    assert [c.deliberation for c in again.claims] == [None, None]
    assert [c.notes for c in again.claims] == [(), ()]
    assert report(again) == report(replace(recorded, scorer=again.scorer, labels=again.labels, score=again.score))


def test_independence_keeps_the_deliberation_and_the_notes_it_does_not_derive_again() -> None:
    shared = Evidence("web", "Statins lower LDL cholesterol in adults.", title="Page", url="https://e.org/p")
    a, b = Judgment("a", True, 0.9, evidence=(shared,)), Judgment("b", True, 0.8, evidence=(shared,))
    claim = ClaimVerdict(Claim("c1", "Statins lower LDL."), (a, b), 0.9, Label.TRUE, ("kept",), SETTLED)
    merged = apply_independence(TextVerdict("t", (claim,), 0.9, Label.TRUE))
    assert merged.claims[0].judgments == (a,)
    assert merged.claims[0].deliberation == SETTLED and merged.claims[0].notes == ("kept",)
    again = rescore(merged, AverageScorer(), ThresholdRule()).claims[0]
    assert again.deliberation == replace(SETTLED, replayed=True)
    assert again.notes == ("kept", REPLAYED_NOTE)


# ---- the batch HTML page ----------------------------------------------------------------------


def record_of(checked: TextVerdict) -> dict[str, Any]:
    return {"id": "doc1", **checked.to_dict(), "meta": {}}


def test_the_html_page_shows_the_deliberation_collapsed_under_its_claim() -> None:
    row = document_row(record_of(verdict()))
    start = row.index('<details class="deliberation">')
    first, second = (m.start() for m in re.finditer('<div class="claim">', row))
    assert first < start < second  # under the first claim, whose steps they are
    block = row[start : row.index("</details>", start) + len("</details>")]
    assert "<summary>how the agents settled it (lase): 2 steps</summary>" in block
    assert f'<p class="why">why: {escape(GATE)}</p>' in block
    assert "<b>challenge</b> · devil&#x27;s advocate" in block
    assert "weak point: the support rests on one review" in block
    assert '<a href="https://example.org/trial-x" rel="noopener noreferrer nofollow">Trial X</a>' in block
    assert "query: <span" in block and "statins LDL no effect" in block
    assert (
        '<b>revise</b> · leader <span class="detail">(corpus)</span>: <span class="l-FALSE">FALSE</span> 0.80' in block
    )
    assert "in place of its first answer" in block and "relied on: critique:1, evidence:corpus#1" in block
    assert f'<p class="stopped">stopped: {STOPPED}</p>' in block
    assert '<p class="deliberation detail">deliberation (lase): settled in the first round</p>' in row


def test_the_html_page_escapes_every_piece_of_a_deliberation() -> None:
    counter = Evidence("web", f"Passage {HOSTILE}", title=f"Title {HOSTILE}", url="javascript:alert(1)")
    hostile = DeliberationStep(
        1,
        f"challenge{HOSTILE}",
        f"role{HOSTILE}",
        f"actor{HOSTILE}",
        judgment=Judgment(f"a{HOSTILE}", None, 0.0, f"why {HOSTILE}", error=f"err {HOSTILE}"),
        critique=Critique(f"weak {HOSTILE}", (counter,), (f"hint {HOSTILE}",), f"query {HOSTILE}"),
        relied_on=(f"id{HOSTILE}",),
        replaces=f"r{HOSTILE}",
        error=f"error {HOSTILE}",
    )
    deliberation = Deliberation(f"p{HOSTILE}", {}, {}, f"gate {HOSTILE}", (hostile,), f"stop {HOSTILE}")
    row = document_row(record_of(verdict(deliberation, replace(ROUND0, policy=HOSTILE))))
    assert "<script" not in row and "<img" not in row and "javascript:" not in row
    assert row.count("&lt;script&gt;") >= 12


def test_an_html_page_without_deliberation_is_as_before(tmp_path: Path) -> None:
    plain = document_row(record_of(verdict(None, None)))
    assert "deliberation" not in plain
    full = document_row(record_of(verdict()))
    start = full.index('<details class="deliberation">')
    full = full[:start] + full[full.index("</details>", start) + len("</details>") :]
    assert (
        full.replace('<p class="deliberation detail">deliberation (lase): settled in the first round</p>', "") == plain
    )
    # A whole page with it passes its own Content-Security-Policy (the style's hash still matches).
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps(record_of(verdict())) + "\n", encoding="utf-8")
    write_report(out, tmp_path / "report.html", summarise(out))
    assert "how the agents settled it" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_a_replayed_record_says_so_once_in_the_html_page() -> None:
    again = rescore(verdict(), AverageScorer(), ThresholdRule())
    row = document_row(record_of(again))
    assert "(recorded steps kept, not re-run)" in row
    assert f"note: {REPLAYED_NOTE}" not in row


# ---- the stream -------------------------------------------------------------------------------


def test_the_deliberation_event_carries_the_claim_index_policy_and_step_and_no_notes() -> None:
    event = ClaimDeliberated(index=1, policy="lase", step=CHALLENGE)
    assert event.name == "deliberation"
    data = json.loads(json.dumps(event.data))
    assert data == {"index": 1, "policy": "lase", "step": CHALLENGE.to_dict()}
    assert "notes" not in data  # the extension gathers every event's top-level notes
    assert DeliberationStep.from_dict(data["step"]) == CHALLENGE
    assert data["step"]["critique"]["counter"][0]["title"] == "Trial X"


def test_the_server_streams_each_deliberation_step_before_its_claim(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("fastapi", reason="the server extra is not installed")
    from factcheck.pipeline import Checker
    from factcheck.server.app import create_app
    from factcheck.server.runner import serve_in_thread
    from factcheck.server.settings import ServerSettings

    original = Checker.stream

    async def deliberating(self: Checker, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        # What the pipeline sends when a policy deliberates on every claim: its steps, then its verdict.
        async for event in original(self, *args, **kwargs):
            if isinstance(event, ClaimChecked):
                for step in (CHALLENGE, REVISE):
                    yield ClaimDeliberated(event.index, "lase", step)
            yield event

    monkeypatch.setattr(Checker, "stream", deliberating)
    config = tmp_path / "factcheck.toml"
    config.write_text('profile = "offline"\n[agents.corpus]\nsource = "corpus"\nverifier = "lexical"\n')
    settings = ServerSettings(api_keys=("key-0123456789",), profile="offline", rate_per_minute=0, config=str(config))
    with serve_in_thread(create_app(settings)) as url:
        body = {"text": "Statins lower LDL cholesterol. Smoking causes lung cancer."}
        headers = {"Authorization": "Bearer key-0123456789"}
        with httpx.stream("POST", f"{url}/v1/check/stream", json=body, headers=headers, timeout=60) as response:
            assert response.status_code == 200
            found, name = [], None
            for line in response.iter_lines():
                if line.startswith("event: "):
                    name = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    found.append((name, json.loads(line.removeprefix("data: "))))
    names = [n for n, _ in found]
    assert names[0] == ClaimsFound.name and names[-1] == TextChecked.name
    for index in (0, 1):
        steps = [d for n, d in found if n == "deliberation" and d["index"] == index]
        assert [d["step"]["number"] for d in steps] == [1, 2] and {d["policy"] for d in steps} == {"lase"}
        checked = next(i for i, (n, d) in enumerate(found) if n == "claim" and d["index"] == index)
        assert all(i < checked for i, (n, d) in enumerate(found) if n == "deliberation" and d["index"] == index)
    assert all("notes" not in d for n, d in found if n == "deliberation")
    assert found[1][1]["step"] == CHALLENGE.to_dict()
