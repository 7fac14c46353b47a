"""The popup's views of a claim's precedents and deliberation, in real headless Chromium (issue 41 items 15, 16).

Each test streams a crafted verdict through the scripted stand-in server (``FakeServer``) and reads the popup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests import test_extension
from tests.extension_shots import popup_shot
from tests.test_extension import COUNTER, Extension, FakeServer

# The browser, the stand-in server, the pages and the artifacts folder of tests/test_extension.py.
artifacts = test_extension.artifacts
ext = test_extension.ext
fake = test_extension.fake
pages = test_extension.pages

# The popup's view of each claim's precedents, its agents' votes and its deliberation steps.
VIEW = """return [...document.querySelectorAll('#claims > li.claim')].map((claim) => ({
    precedents: [...claim.querySelectorAll(':scope > .precedent')].map((p) => p.innerText.split('\\n')),
    votes: [...claim.querySelectorAll('details.why li.judgment')].map((j) => j.innerText.split('\\n')),
    summary: claim.querySelector('details.why > summary')?.textContent ?? null,
    deliberation: claim.querySelector('details.deliberation > summary')?.textContent ?? null,
    none: claim.querySelector('.deliberation-none')?.textContent ?? null,
    steps: [...claim.querySelectorAll('details.deliberation .step')].map((s) => s.innerText.split('\\n')),
    passages: [...claim.querySelectorAll('details.deliberation .step')].map(
      (s) => s.querySelector('.step-passage blockquote')?.textContent ?? null),
  }))"""


def streamed(ext: Extension, fake: FakeServer, pages: str, query: str, extra: dict[str, Any]) -> dict[str, Any]:
    """Check the test page's selection against the stand-in, each claim carrying ``extra``; the first claim's view."""
    ext.use(fake.url)
    fake.claim_extra = extra
    try:
        handle, tab = ext.open(f"{pages}/a.html?{query}")
        ext.select(handle, "text")
        ext.check_selection(tab)
        ext.wait_state(tab)
        ext.popup(tab)
        ext.browser.execute_script("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        view: list[dict[str, Any]] = ext.browser.execute_script(VIEW)
    finally:
        fake.claim_extra = {}
    return view[0]


def precedent(case: int, label: str, claim: str, who: str, day: str, note: str = "") -> dict[str, Any]:
    """A precedent passage as the memory source gives it (factcheck.memory.source.precedent_evidence)."""
    title = f"Precedent {case}: {who} ruled it {label} on {day}" + (f', noting: "{note}"' if note else "")
    url = f"factcheck-memory:{case}/{label}"
    return {"source": "memory", "text": claim, "title": title, "url": url, "published_at": f"{day}T09:00:00+00:00"}


def test_a_precedent_shows_as_a_reviewers_earlier_correction_only_where_it_bears_on_the_claim(
    ext: Extension, fake: FakeServer, pages: str, artifacts: Path
) -> None:
    lent = precedent(
        1,
        "FALSE",
        "Obesity does not increase the risk of type 2 diabetes.",
        "a reviewer (key-1)",
        "2026-12-02",
        "Cohort studies show a strong association.",
    )
    unrelated = precedent(7, "TRUE", "Vitamin C cures the common cold.", "a reviewer (key-2)", "2026-11-30")
    memory = {
        "agent": "memory",
        "factuality": True,
        "confidence": 0.63,
        "rationale": "TRUE by precedent: a past claim ruled FALSE is contradicted by this one (p=0.79)",
        "evidence": [lent, unrelated],  # the precedent verifier puts the one that lent first
        "error": None,
    }
    corpus = {**COUNTER, "text": "Cohort studies link obesity to diabetes.", "title": "Cohort"}
    web = {
        "agent": "web",
        "factuality": True,
        "confidence": 0.68,
        "rationale": "r",
        "evidence": [corpus],
        "error": None,
    }
    claim = streamed(ext, fake, pages, "precedent", {"judgments": [web, memory]})
    assert claim["precedents"] == [
        [
            "A reviewer's earlier correction",
            "Obesity does not increase the risk of type 2 diabetes.",
            "Ruled FALSE by a reviewer (key-1) on 2026-12-02",
            "Noting: “Cohort studies show a strong association.”",
            "Lends this claim TRUE through the memory agent (0.63)",
        ]
    ]
    # The memory's vote says where its verdict came from, and lists no precedent as a document, the unrelated one least.
    vote = claim["votes"][1]
    assert vote[0] == "memory: true (0.63)" and "By a reviewer's earlier correction (above)" in vote
    assert not any("Vitamin C" in line or "Precedent" in line for line in vote)
    assert claim["summary"] == "Why: 2 agents, 1 passage"
    ext.browser.save_screenshot(str(artifacts / "extension-precedent.png"))

    # A memory that found only an unrelated precedent lends nothing: no correction is shown, nor listed.
    abstained = {**memory, "factuality": None, "confidence": 0.0, "rationale": "no precedent bears on this claim"}
    claim = streamed(ext, fake, pages, "unrelated", {"judgments": [web, {**abstained, "evidence": [unrelated]}]})
    assert claim["precedents"] == []
    assert not any("Vitamin C" in line for vote in claim["votes"] for line in vote)


def step(number: int, action: str, actor: str, verdict: bool | None, evidence: list[dict[str, Any]]) -> dict[str, Any]:
    """A recorded deliberation step (factcheck.types.DeliberationStep.to_dict) whose ruling cites ``evidence``."""
    judgment = None
    if verdict is not None:
        judgment = {"agent": actor, "factuality": verdict, "confidence": 0.7, "rationale": f"ruling {number}"}
        judgment |= {"evidence": evidence, "error": None}
    return {
        "number": number,
        "action": action,
        "role": "leader",
        "actor": actor,
        "judgment": judgment,
        "critique": None,
        "query": None,
        "evidence": [],
        "inputs": [],
        "relied_on": [],
        "replaces": None,
        "cost": {"calls": 1},
        "error": None,
    }


def test_the_deliberation_shows_only_steps_that_happened_once_each_with_the_passage_each_used(
    ext: Extension, fake: FakeServer, pages: str, artifacts: Path
) -> None:
    mine = {**COUNTER, "text": "Statins lowered LDL by 30% in trial X.", "title": "Trial X"}
    elsewhere = {
        "source": "web",
        "title": "Pasta",
        "url": "https://example.org/pasta",
        "text": "Boil pasta in salted water.",
    }
    web = {"agent": "web", "factuality": True, "confidence": 0.55, "rationale": "r", "evidence": [mine], "error": None}
    steps = [
        step(1, "revise", "web", True, [mine]),
        step(2, "revise", "web", True, [mine]),  # the same ruling again: shown once
        step(3, "revise", "web", True, [mine]),
        step(4, "revise", "web", False, [elsewhere]),  # a flip on a passage the claim never had: no passage
    ]
    gated = {"policy": "lase", "options": {}, "state": {}, "gated": "the leader is unsure", "stopped": "budget"}
    claim = streamed(ext, fake, pages, "steps", {"judgments": [web], "deliberation": {**gated, "steps": steps}})
    assert claim["deliberation"] == "How the agents settled it (lase): 2 steps"
    assert claim["steps"][0][0] == "revise · leader (web): true (0.70) · 1 call · 3 times alike"
    assert claim["passages"] == ["Statins lowered LDL by 30% in trial X.", None]
    assert claim["steps"][1] == ["revise · leader (web): false (0.70) · 1 call", "ruling 4"]
    assert not any("pasta" in line.lower() for s in claim["steps"] for line in s)
    ext.browser.execute_script("document.getElementById('legend').open = false")
    popup_shot(ext.browser, artifacts / "extension-deliberation.png")

    # A deliberation gated but stopped before any step shows no empty "0 steps" section: one line.
    claim = streamed(ext, fake, pages, "nosteps", {"judgments": [web], "deliberation": {**gated, "steps": []}})
    assert (claim["deliberation"], claim["none"]) == (None, "Deliberation (lase): settled in the first round")
