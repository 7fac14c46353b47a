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


def test_the_caution_reaches_each_mark_s_tooltip_and_the_badge(ext: Extension, fake: FakeServer, sites: str) -> None:
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
    assert title == f"factcheck: TRUE\n* {CAUTION}"

    # Without a caution: the plain label, and tooltips without one.
    ext.select(handle, "text")
    answer = ext.check_selection(tab)
    state = ext.wait_state(tab, check_id=answer["checkId"])
    settled_marks(ext.browser, handle, state)
    assert ext.wait_badge(tab, "T") == "T"
    assert ext.call("return await chrome.action.getTitle({tabId: args[0]});", tab) == "factcheck: TRUE"
    assert not any("⚠" in title for title in ext.browser.execute_script(TOOLTIPS, answer["checkId"]))
