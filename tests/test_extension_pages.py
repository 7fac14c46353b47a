"""The extension on real pages (issue 41, part two): the page's own date sent as when its text was written, and a
result that stays, with a note, when a single-page app moves or draws the text again, but not its orphan marks.

Real headless Chromium with the extension, as in tests/test_extension.py, whose helpers and fixtures it uses.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import test_extension
from tests.extension_shots import popup_shot
from tests.test_extension import Extension, FakeServer, marks, page, served, settled_marks, wait_until

# The browser, the servers and the artifacts folder of tests/test_extension.py (fixtures are found by their names).
artifacts = test_extension.artifacts
ext = test_extension.ext
fake = test_extension.fake
server = test_extension.server

LAST_YEAR = "Apples grew on trees last year."
# Records a restore from the back/forward cache, as the page sees it.
RESTORED = (
    "<script>addEventListener('pageshow', (e) => { if (e.persisted) document.body.dataset.restored = 'yes'; });"
    "</script>"
)


def dated(head: str, body: str) -> str:
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>Dated</title>{head}</head><body>{body}</body></html>'
    )


PAGES = {
    "meta.html": dated(
        '<meta property="article:published_time" content="2014-05-10T08:00:00+00:00">',
        f'<article><p id="text">{LAST_YEAR}</p></article>',
    ),
    "time.html": dated("", f'<article><time datetime="2014-05-10">May 10</time><p id="text">{LAST_YEAR}</p></article>'),
    "jsonld.html": dated(
        '<script type="application/ld+json">'
        + json.dumps(
            {"@context": "https://schema.org", "@graph": [{"@type": "NewsArticle", "datePublished": "2014-05-10"}]}
        )
        + "</script>",
        f'<p id="text">{LAST_YEAR}</p>',
    ),
    "undated.html": dated('<meta name="date" content="soon">', f'<p id="text">{LAST_YEAR}</p>'),
    "app.html": page("App", f'<p id="text">Apples grow on trees.</p>{RESTORED}'),
    "other.html": page("Other", '<p id="text">Bananas are not berries.</p>'),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """This module's pages, served from 127.0.0.1 (within the extension's host permissions): their base URL."""
    yield from served(tmp_path_factory, PAGES, "pages-part-two")


def use_page_date(ext: Extension, on: bool) -> None:
    """Set the option as a reader does: the options page's checkbox, saved on change."""
    browser = ext.browser
    browser.switch_to.window(ext.control)
    browser.get(f"chrome-extension://{ext.id}/options.html")
    wait_until(lambda: browser.execute_script("return document.getElementById('server').value"), bool, "options")
    if browser.execute_script("return document.getElementById('usePageDate').checked") != on:
        browser.find_element("id", "usePageDate").click()
    stored = "return (await chrome.storage.local.get({usePageDate: true})).usePageDate;"  # on unless saved off
    wait_until(lambda: ext.call(stored), lambda value: value is on, "the option saved")


def check_page(ext: Extension, url: str) -> tuple[str, int, dict[str, object]]:
    handle, tab = ext.open(url)
    ext.select(handle, "text")
    check_id = ext.check_selection(tab)["checkId"]
    return handle, tab, ext.wait_state(tab, check_id=check_id)


def test_the_page_s_date_is_when_its_claims_speak_of_shown_in_the_popup_and_can_be_turned_off(
    ext: Extension, server: str, site: str, artifacts: Path
) -> None:
    ext.use(server)
    use_page_date(ext, True)
    _, tab, state = check_page(ext, f"{site}/meta.html")
    # The request carried the page's date: the server read the text as of it, and "last year" is 2013.
    assert state["date"] == "2014-05-10" and str(state["verdict"]["as_of"]).startswith("2014-05-10")
    view = ext.popup(tab)
    page_date = ext.browser.execute_script("return document.getElementById('page-date').textContent")
    assert page_date.startswith("Page dated 2014-05-10 (from the page)")
    assert view["claims"][0]["time"] == 'Speaks of 2013 ("last year")'
    popup_shot(ext.browser, artifacts / "extension-page-date.png")

    # Turned off in the options: the same page is checked as of today, and the popup says the date was not used.
    use_page_date(ext, False)
    try:
        _, tab, state = check_page(ext, f"{site}/meta.html")
        view = ext.popup(tab)
        page_date = ext.browser.execute_script("return document.getElementById('page-date').textContent")
    finally:
        use_page_date(ext, True)
    assert state["date"] is None and not str(state["verdict"]["as_of"]).startswith("2014")
    assert "not used" in page_date
    year = datetime.datetime.now(datetime.UTC).year - 1
    assert view["claims"][0]["time"] == f'Speaks of {year} ("last year")'


def test_the_page_s_date_is_read_from_its_article_s_time_and_json_ld_and_a_word_is_never_sent(
    ext: Extension, fake: FakeServer, site: str
) -> None:
    ext.use(fake.url)
    for name in ("time.html", "jsonld.html"):
        state = check_page(ext, f"{site}/{name}")[2]
        assert (name, state["pageDate"], state["date"]) == (name, "2014-05-10", "2014-05-10")
    _, tab, state = check_page(ext, f"{site}/undated.html")
    assert state["pageDate"] is None and state["date"] is None
    ext.popup(tab)
    assert ext.browser.execute_script("return document.getElementById('page-date').hidden") is True


def page_changed(ext: Extension) -> str:
    return str(ext.browser.execute_script("return document.getElementById('page-changed').textContent"))


def test_a_single_page_app_s_new_address_keeps_the_result_with_a_note(
    ext: Extension, fake: FakeServer, site: str, artifacts: Path
) -> None:
    ext.use(fake.url)
    handle, tab, state = check_page(ext, f"{site}/app.html?spa")
    settled_marks(ext.browser, handle, state)
    ext.browser.switch_to.window(handle)
    ext.browser.execute_script("history.pushState({}, '', '/app/next')")
    kept = wait_until(lambda: ext.state(tab), lambda s: s and s.get("pageChanged"), "the note that the page changed")
    assert kept["checkId"] == state["checkId"] and kept["pageChanged"] == {
        "why": "new address",
        "url": f"{site}/app/next",
    }
    view = ext.popup(tab)
    assert [c["text"] for c in view["claims"]] == ["Apples grow on trees."]
    assert page_changed(ext) == f"The page changed since this check (new address: {site}/app/next)."
    popup_shot(ext.browser, artifacts / "extension-page-moved.png")
    assert ext.badge(tab) == "T"


def test_text_drawn_again_the_same_keeps_the_result_with_a_note(ext: Extension, fake: FakeServer, site: str) -> None:
    ext.use(fake.url)
    handle, tab, state = check_page(ext, f"{site}/app.html?redraw")
    settled_marks(ext.browser, handle, state)
    ext.browser.switch_to.window(handle)
    # The app draws the paragraph again (new nodes, the same words; the marks go with the old ones), then its
    # address's fragment changes, which makes the extension ask whether the page still holds the check.
    ext.browser.execute_script("const p = document.getElementById('text'); p.textContent = p.textContent;")
    ext.browser.execute_script("location.hash = 'drawn-again'")
    kept = wait_until(lambda: ext.state(tab), lambda s: s is None or s.get("pageChanged"), "the result kept, noted")
    assert kept is not None and kept["checkId"] == state["checkId"]
    ext.popup(tab)
    assert page_changed(ext).startswith("The page changed since this check (the checked text was drawn again")
    assert marks(ext.browser, handle) == {}


def test_a_page_back_from_the_back_forward_cache_loses_the_marks_of_a_result_it_left(
    ext: Extension, fake: FakeServer, site: str
) -> None:
    ext.use(fake.url)
    handle, tab, state = check_page(ext, f"{site}/app.html?bfcache")
    assert settled_marks(ext.browser, handle, state)
    ext.browser.switch_to.window(handle)
    ext.browser.get(f"{site}/other.html")
    wait_until(lambda: ext.state(tab), lambda s: s is None, "the left page's result dropped")
    ext.browser.switch_to.window(handle)
    ext.browser.back()
    ext.browser.switch_to.window(handle)
    assert ext.browser.execute_script("return document.body.dataset.restored") == "yes"  # not loaded afresh
    assert wait_until(lambda: marks(ext.browser, handle), lambda found: found == {}, "the orphan marks gone") == {}
    assert ext.popup(tab)["status"].startswith("No check in this tab yet")
