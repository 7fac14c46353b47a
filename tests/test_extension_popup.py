"""The extension's popup and badge on real pages (issue 41): a selection in another site's iframe, the corpus's
caution on the page, the popup's layout at a popup's size, the header's counts and a language no agent reads.

Real headless Chromium with the extension, as in tests/test_extension.py, whose helpers and fixtures it uses.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests import test_extension
from tests.extension_shots import page_shot
from tests.test_extension import (
    Extension,
    FakeServer,
    page,
    popup_view,
    settled_marks,
    wait_until,
)

# The browser, the servers and the artifacts folder of tests/test_extension.py (fixtures are found by their names).
artifacts = test_extension.artifacts
ext = test_extension.ext
fake = test_extension.fake
server = test_extension.server

# Served from 127.0.0.2: another site than the pages' 127.0.0.1, and outside the extension's host permissions.
FOREIGN = {"foreign.html": page("Foreign", '<p id="inner">Foreign text is out of reach.</p>')}
GERMAN = (
    "Statine senken das LDL-Cholesterin bei den meisten Patienten. Rauchen verursacht Lungenkrebs bei vielen Menschen."
)
CAUTION = (
    "Judged only against SciFact abstracts (5,183 biomedical research abstracts): a claim outside biomedicine"
    " gets a verdict from unrelated passages or none; for general pages use --profile wiki (keyless) or"
    " --profile paper (with keys)."
)


def _serve(folder: Path, host: str) -> tuple[ThreadingHTTPServer, str]:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer((host, 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://{host}:{httpd.server_address[1]}"


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """This module's pages on 127.0.0.1, one framing a page of another site (127.0.0.2): their base URL."""
    foreign_folder = tmp_path_factory.mktemp("foreign")
    for name, html in FOREIGN.items():
        (foreign_folder / name).write_text(html, encoding="utf-8")
    foreign, foreign_url = _serve(foreign_folder, "127.0.0.2")
    folder = tmp_path_factory.mktemp("sites")
    own = {
        "crossframed.html": page(
            "Cross framed",
            '<p id="top">Top text is older.</p>'
            f'<iframe id="frame" src="{foreign_url}/foreign.html" width="440" height="90"></iframe>',
        ),
        "german.html": page("Deutsch", f'<p id="text">{GERMAN}</p>'),
        "caution.html": page("Caution", '<p id="text">Alpha is first. Beta is maybe second.</p>'),
    }
    for name, html in own.items():
        (folder / name).write_text(html, encoding="utf-8")
    httpd, url = _serve(folder, "127.0.0.1")
    yield url
    for running in (httpd, foreign):
        running.shutdown()
        running.server_close()


def test_the_popup_button_says_it_cannot_read_a_selection_in_another_site_s_frame(
    ext: Extension, fake: FakeServer, sites: str
) -> None:
    """Issue 41 item 5: the focus in an iframe the extension cannot script never falls back to an older selection."""
    ext.use(fake.url)
    handle, tab = ext.open(f"{sites}/crossframed.html")
    # The page keeps its older selection; the reader then selects in the other site's iframe (the focus moves there).
    ext.select(handle, "top")
    assert ext.select(handle, "inner", frame="frame") == "Foreign text is out of reach."
    before = len(fake.texts)
    answer = ext.check_selection(tab)
    message = "cannot read the selection in this frame (a page from another site)"
    assert answer.get("error") == message, answer
    state = ext.wait_state(tab, check_id=answer["checkId"])
    assert (state["status"], state["error"]) == ("error", message)
    assert fake.texts[before:] == []  # "Top text is older." was never sent
    ext.wait_badge(tab, "!")
    view = ext.popup(tab)
    assert (view["state"], view["status"]) == ("error", f"Error: {message}")

    # Back in the page (a click there moves the focus out of the iframe): its own selection is checked.
    ext.browser.switch_to.window(handle)
    ext.browser.execute_script("document.activeElement.blur()")
    ext.select(handle, "top")
    answer = ext.check_selection(tab)
    assert (answer["text"], answer.get("frameId"), answer.get("error")) == ("Top text is older.", 0, None)
    assert ext.wait_state(tab, check_id=answer["checkId"])["status"] == "done"


TOOLTIPS = """return [...document.querySelectorAll('mark.factcheck-claim')]
    .filter((mark) => mark.dataset.check === arguments[0]).map((mark) => mark.title)"""


def test_the_caution_reaches_each_mark_s_tooltip_and_the_badge(
    ext: Extension, fake: FakeServer, sites: str, artifacts: Path
) -> None:
    """Issue 41 item 6: a reader who only hovers sees that the evidence may not fit the page."""
    ext.use(fake.url)
    judged_by = {"profile": "offline", "agents": [], "caution": CAUTION}
    handle, tab = ext.open(f"{sites}/caution.html")
    fake.verdict_extra = {"judged_by": judged_by}
    try:
        ext.select(handle, "text")
        answer = ext.check_selection(tab)
        state = ext.wait_state(tab, check_id=answer["checkId"])
    finally:
        fake.verdict_extra = {}
    assert state["status"] == "done", state["error"]
    settled_marks(ext.browser, handle, state)
    titles = wait_until(
        lambda: ext.browser.execute_script(TOOLTIPS, answer["checkId"]),
        lambda found: len(found) == 2 and all(CAUTION in title for title in found),
        "the caution in each mark's tooltip",
    )
    assert titles[0] == f"factcheck: TRUE 0.90: Alpha is first.\n⚠ {CAUTION}"
    # The badge: the label with an asterisk, its tooltip the footnote; the colour stays the label's.
    assert ext.wait_badge(tab, "T*") == "T*"
    title = ext.call("return await chrome.action.getTitle({tabId: args[0]});", tab)
    assert title == f"factcheck: TRUE (2 of 2 claims verified)\n* {CAUTION}"
    page_shot(ext, handle, tab, artifacts / "extension-caution-page.png", mark="mark.factcheck-first")

    # Without a caution: the plain label, and tooltips without one.
    ext.select(handle, "text")
    answer = ext.check_selection(tab)
    state = ext.wait_state(tab, check_id=answer["checkId"])
    settled_marks(ext.browser, handle, state)
    assert ext.wait_badge(tab, "T") == "T"
    assert (
        ext.call("return await chrome.action.getTitle({tabId: args[0]});", tab)
        == "factcheck: TRUE (2 of 2 claims verified)"
    )
    assert not any("⚠" in title for title in ext.browser.execute_script(TOOLTIPS, answer["checkId"]))


# A popup's worst case: tall (the legend open, many claims), a 3,000-character word, Arabic runs, an error.
ARABIC_TITLE = "الصحة العامة ٢٠٢٤"
ARABIC_TEXT = "اللقاحات آمنة وفعالة للأطفال."
LONG_WORD = "x" * 3000
LAYOUT = """
const root = document.documentElement;
const chips = [...document.querySelectorAll('.label, .score, .strength')]
  .filter((chip) => chip.getClientRects().length);
return {
  scrollbar: innerWidth - root.clientWidth,
  scrollWidth: root.scrollWidth,
  clientWidth: root.clientWidth,
  tall: root.scrollHeight > innerHeight,
  chips: chips.length,
  clipped: chips.filter((chip) => chip.getBoundingClientRect().right > root.clientWidth + 0.5
    || chip.getBoundingClientRect().left < 0).map((chip) => chip.textContent),
  runs: [...document.querySelectorAll('#context [dir=auto]')].map((run) => run.textContent),
  isolated: [...document.querySelectorAll('#context [dir=auto]')].every(
    (run) => getComputedStyle(run).unicodeBidi === 'isolate'),
};
"""


def _claim(number: int, text: str, label: str, score: float | None) -> dict[str, Any]:
    strength = None if score is None else "weak" if abs(2 * score - 1) < 0.5 else "strong"
    judgment = {"agent": "corpus", "factuality": None if score is None else score > 0.5, "confidence": 0.5}
    judgment |= {"rationale": "scripted", "evidence": [], "error": None}
    return {"id": f"c{number}", "text": text, "span": None, "label": label, "score": score, "strength": strength,
            "judgments": [judgment]}  # fmt: skip


def _layout(ext: Extension, tab: int, width: int, height: int, screenshot: Path | None = None) -> dict[str, Any]:
    """The popup of a tab laid out in a window of a popup's size: what overflows, what is cut."""
    ext.popup(tab)
    ext.browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        if screenshot is not None:
            ext.browser.save_screenshot(str(screenshot))
        return dict(ext.browser.execute_script(LAYOUT))
    finally:
        ext.browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_the_popup_fits_a_popup_window_wraps_long_words_and_isolates_each_untrusted_run(
    ext: Extension, artifacts: Path
) -> None:
    """Issue 41 item 12: no horizontal scrollbar and no chip cut at a popup's size, errors included; each
    untrusted run of the context line reads in its own direction."""
    claims = [_claim(1, f"The word {LONG_WORD} is long.", "TRUE", 0.9), _claim(2, ARABIC_TEXT, "FALSE", 0.4)]
    claims += [_claim(n, f"Claim {n} is one of many.", "TRUE" if n % 2 else "FALSE", 0.6 if n % 3 else 0.95)
               for n in range(3, 23)]  # fmt: skip
    verdict = {"label": "PARTLY TRUE", "labels": "compose", "score": 0.6, "claims": claims, "notes": [LONG_WORD]}
    done = {"status": "done", "kind": "selection", "text": ARABIC_TEXT, "title": ARABIC_TITLE, "frameId": 0}
    done |= {"url": "http://127.0.0.1:8000/ar", "claims": claims, "verdict": verdict, "error": None, "notes": []}
    error = {**done, "status": "error", "verdict": None, "claims": claims[:1]}
    error["error"] = f"the server answered 413: text too long {LONG_WORD}"
    ext.call("await chrome.storage.local.set({legendClosed: false});")  # the default: the legend open
    ext.call(
        "await chrome.storage.session.set({'check:tab:999990': args[0], 'check:tab:999991': args[1]});",
        done,
        error,
    )

    for tab in (999990, 999991):
        # 444 wide: the popup's own width; 600 high: Chrome's limit, so it scrolls down.
        for width in (444, 400):
            found = _layout(ext, tab, width, 600)
            assert found["tall"] and found["chips"] >= 3, found
            assert found["scrollWidth"] <= found["clientWidth"], (tab, width, found)
            assert found["clipped"] == [], (tab, width, found)
    # The context line: our words, and each untrusted run (title, host, text) in an element of its own
    # direction, isolated, so the Arabic title does not reorder the host after it.
    found = _layout(ext, 999990, 444, 600, artifacts / "extension-popup-layout.png")
    assert found["runs"] == [ARABIC_TITLE, "127.0.0.1:8000", ARABIC_TEXT] and found["isolated"], found
    assert popup_view(ext.browser)["context"] == f"Selection on “{ARABIC_TITLE}” (127.0.0.1:8000)“{ARABIC_TEXT}”"
    host_after_title = """
        const [title, host] = document.querySelectorAll('#context .where [dir=auto]');
        return host.getBoundingClientRect().left >= title.getBoundingClientRect().right - 0.5;"""
    assert ext.browser.execute_script(host_after_title)


# An element's text while it is shown, else null.
SHOWN = "(id) => document.getElementById(id)?.hidden === false ? document.getElementById(id).textContent : null"


def test_the_header_says_how_many_claims_were_verified_and_why_a_text_in_another_language_is_unverified(
    ext: Extension, fake: FakeServer, server: str, sites: str, artifacts: Path
) -> None:
    """Issue 41 item 14: "k of n claims verified" under the label, and the reason a German text is UNVERIFIED."""
    ext.use(fake.url)
    handle, tab = ext.open(f"{sites}/caution.html?decided")
    fake.verdict_extra = {"skipped": [{"text": "Is it?", "reason": "a question"}]}
    try:
        ext.select(handle, "text")
        ext.wait_state(tab, check_id=ext.check_selection(tab)["checkId"])
    finally:
        fake.verdict_extra = {}
    ext.popup(tab)
    header = ext.browser.execute_script(f"const shown = {SHOWN};return [shown('decided'), shown('unread')];")
    assert header == ["2 of 2 claims verified, 1 sentence skipped", None]

    # The real server (its agents' lexical verifier reads English only) on a German page.
    ext.use(server)
    handle, tab = ext.open(f"{sites}/german.html")
    ext.select(handle, "text")
    state = ext.wait_state(tab, check_id=ext.check_selection(tab)["checkId"])
    assert state["status"] == "done", state["error"]
    view = ext.popup(tab)
    header = ext.browser.execute_script(
        f"const shown = {SHOWN};"
        "return [shown('decided'), shown('unread'), document.getElementById('unread').getBoundingClientRect().top"
        " < document.getElementById('claims').getBoundingClientRect().top];"
    )
    assert view["label"] == "UNVERIFIED"
    assert header == [
        "0 of 2 claims verified",
        "German text: no agent here reads German (the lexical verifier reads English only).",
        True,  # above the claims, beside the label
    ]
    # A reader who only looks at the toolbar learns the same from the badge's tooltip.
    title = ext.call("return await chrome.action.getTitle({tabId: args[0]});", tab)
    assert title.splitlines()[:2] == [
        "factcheck: UNVERIFIED (0 of 2 claims verified)",
        "German text: no agent here reads German (the lexical verifier reads English only).",
    ]
    # And a reader who only hovers, from each mark's tooltip.
    ext.browser.switch_to.window(handle)
    wait_until(
        lambda: ext.browser.execute_script(TOOLTIPS, state["checkId"]),
        lambda found: (
            len(found) == 2 and all("\nGerman text: no agent here reads German (" in title for title in found)
        ),
        "the language's reason in each mark's tooltip",
    )
    page_shot(ext, handle, tab, artifacts / "extension-german-page.png", mark="mark.factcheck-first")
