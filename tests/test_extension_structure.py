"""The page's structure decides what is checked (issue 41 items 10 and 14): bylines, datelines, headings, captions,
asides, ads, hatnotes, references and comment counters are left out of a selection's check and listed in the popup,
a pull quote is checked once, a reader who selects a caption alone has it checked; and "Check the whole page"
checks the page's main text (its <main>, else its article), marked as a selection is.

Real headless Chromium with the extension, as in tests/test_extension.py, whose helpers and fixtures it uses.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import test_extension
from tests.extension_shots import page_shot
from tests.test_extension import (
    MAX_TEXT_CHARS,
    Extension,
    FakeServer,
    page,
    popup_view,
    served,
    settled_marks,
    wait_for,
    wait_until,
)

# The browser, the servers and the artifacts folder of tests/test_extension.py (fixtures are found by their names).
artifacts = test_extension.artifacts
ext = test_extension.ext
fake = test_extension.fake
server = test_extension.server

# A news article as such pages are built: its title, a byline and a dateline, a hatnote, a pull quote that
# repeats a sentence, a heading (one of role=heading inside a line of text), a figure's caption, an ad, a
# comment counter and the references, around the claims; a quotation and a date inside a sentence are the text's.
STORY = (
    '<article id="story"><h1 id="title">Statins under review</h1>'
    '<div class="meta">By <a rel="author" href="/jane">Jane Doe</a> | <time datetime="2014-05-10">May 10, 2014</time>'
    "</div>"
    '<p><time datetime="2014-05-11">Updated May 11, 2014</time></p>'
    '<div role="note" class="hatnote">For the drug class, see Statin.</div>'
    '<p id="first">Statins lower LDL cholesterol. Smoking causes lung cancer.</p>'
    '<aside style="float:right;width:40%"><p id="pull">“Smoking causes lung cancer.”</p></aside>'
    "<h2>Diet</h2>"
    '<div>Tea has caffeine<span role="heading" aria-level="3">Coffee</span>Milk has calcium.</div>'
    "<blockquote><p>Vitamin D helps bones.</p></blockquote>"
    '<p>On <time datetime="2014-05-01">May 1</time> the agency approved the drug.</p>'
    '<figure><div style="width:120px;height:40px;background:#ced4da"></div>'
    '<figcaption id="caption">A chart of LDL levels that maybe fall.</figcaption></figure>'
    '<ins class="adsbygoogle" style="display:block">Buy statins online now.</ins>'
    '<p><a href="#comments">Comments (3)</a></p>'
    '<ol class="references"><li>Smith J. Statins lower cholesterol. Lancet 2010.</li></ol>'
    "<p>Obesity does not increase the risk of type 2 diabetes.</p></article>"
)
STORY_TEXT = (
    "Statins lower LDL cholesterol. Smoking causes lung cancer.\n\nTea has caffeine\n\nMilk has calcium.\n\n"
    "Vitamin D helps bones.\n\nOn May 1 the agency approved the drug.\n\n"
    "Obesity does not increase the risk of type 2 diabetes."
)
STORY_LEFT_OUT = [
    ("a heading", "Statins under review"),
    ("a byline", "By Jane Doe | May 10, 2014"),
    ("a dateline", "Updated May 11, 2014"),
    ("a hatnote: a note about the article, not of it", "For the drug class, see Statin."),
    ("a pull quote: repeats the article's text", "“Smoking causes lung cancer.”"),
    ("a heading", "Diet"),
    ("a heading", "Coffee"),
    ("a figure caption", "A chart of LDL levels that maybe fall."),
    ("an advertisement", "Buy statins online now."),
    ("a comment counter", "Comments (3)"),
    ("the references", "Smith J. Statins lower cholesterol. Lancet 2010."),
]
# The page around a main text: a site header and menu, a sidebar, a footer, none of it the page's text.
AROUND = (
    "<header><nav><a href='/'>Home</a> · <a href='/health'>Health</a></nav></header>"
    '<div class="trending">Trending: statins cure every cancer.</div>'
)
MAIN = (
    '<main id="main"><h1>Statins under review</h1><p class="byline">By Jane Doe</p>'
    "<p>Statins lower <b>LDL</b> cholesterol. Smoking causes lung cancer. The Zorblax gizmo maybe"
    " fromulates widgets.</p>"
    "<figure><figcaption>A chart of LDL levels.</figcaption></figure>"
    "<p>Obesity does not increase the risk of type 2 diabetes.</p></main>"
    "<footer>© 2014 The Daily Example. Smoking is not healthy.</footer>"
)
MAIN_TEXT = (
    "Statins lower LDL cholesterol. Smoking causes lung cancer. The Zorblax gizmo maybe fromulates widgets.\n\n"
    "Obesity does not increase the risk of type 2 diabetes."
)
PAGES = {
    "story.html": page("Statins under review", STORY),
    "whole.html": page("The Daily Example", AROUND + MAIN),
    # No <main>: the longest of its articles (a teaser beside it is not the page's text).
    "articles.html": page(
        "Articles",
        '<div class="menu">Menu text is not checked.</div>'
        "<article><p>Teasers are short.</p></article>"
        "<article><p>Apples grow on trees. Bananas are not berries. Cherries are red.</p>"
        "<article><p>A nested comment is inside it.</p></article></article>",
    ),
    # An ad's label and a comment counter's words inside sentences (Wikipedia's link to "Advertising"), and as lines.
    "inline.html": page(
        "Inline",
        '<article id="inline"><p>Wikipedia gets no revenue from <a href="/wiki/Advertising">advertising</a>.</p>'
        '<p>The post drew <a href="/post">300 comments</a> in an hour.</p>'
        '<p>Die Polizei hat <a href="/anzeige">Anzeige</a> erstattet</p>'
        '<div class="label">Advertisement</div><p><span>Share</span> · <a href="/post">12 comments</a></p>'
        "<p>Tea has caffeine.</p></article>",
    ),
    # Short lines with a date: a dateline (its words), a table's row, a list's item and a line below the article's
    # first sentence that are data, not datelines.
    "dates.html": page(
        "Dates",
        '<article id="dates"><p>Published <time datetime="2021-03-04">2021-03-04</time> · 5 min read</p>'
        "<p>Statins lower LDL cholesterol.</p>"
        "<table><tr><td><time>2020</time></td><td>GDP fell 3.4%</td></tr></table>"
        "<ul><li><time>1998</time>: Smith elected mayor</li></ul>"
        "<p><time>2001</time> Jones and Ray</p></article>",
    ),
    # An article with a header holding a standfirst, readers' comments in every form pages give them, and a list
    # of teasers: the standfirst is checked, the comments and teasers are not.
    "comments.html": page(
        "Comments",
        '<main id="main"><article><header><h1>Statins under review</h1>'
        '<p class="dek">Statins lower LDL cholesterol, a new review finds.</p>'
        '<div class="meta">By Jane Doe · 10 May 2014</div></header>'
        "<p>Smoking causes lung cancer.</p>"
        '<ul class="related"><li><a href="/a">Coffee cures every cancer, says a blogger.</a></li></ul>'
        '<section id="comments"><h2>Comments</h2><p>Statins are poison, my aunt says.</p></section>'
        '<div class="comments"><p>I read that tea has no caffeine.</p></div>'
        '<div itemscope itemtype="https://schema.org/Comment"><p>The moon is made of cheese.</p></div>'
        "<article><p>Vaccines cause autism, I think.</p></article>"
        "<p>Obesity does not increase the risk of type 2 diabetes.</p></article></main>",
    ),
    # A main text over the real server's limit of MAX_TEXT_CHARS characters.
    "huge.html": page("Huge", "<main><p>" + "Statins lower LDL cholesterol. " * 60 + "</p></main>"),
    # A page without text of its own.
    "empty.html": page("Empty", "<main><img alt='' width=10 height=10></main>"),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """This module's pages, served from 127.0.0.1 (within the extension's host permissions): their base URL."""
    yield from served(tmp_path_factory, PAGES, "pages-structure")


def left_out(ext: Extension) -> list[tuple[str, str]]:
    """The popup's list of what was left out: (why, text) of each passage, the quotes taken off."""
    found = ext.browser.execute_script(
        "return [...document.querySelectorAll('#left-out:not([hidden]) li')].map((li) => ["
        "li.querySelector('.left-out-why').textContent, li.querySelector('.left-out-text').textContent])"
    )
    return [(why, text.removeprefix("“").removesuffix("”")) for why, text in found]


def test_a_selection_s_bylines_headings_captions_ads_and_pull_quote_are_left_out_and_listed(
    ext: Extension, fake: FakeServer, site: str, artifacts: Path
) -> None:
    ext.use(fake.url)
    handle, tab = ext.open(f"{site}/story.html")
    ext.select(handle, "story")
    started = ext.check_selection(tab)
    assert started["text"] == STORY_TEXT
    state = ext.wait_state(tab, check_id=started["checkId"])
    assert fake.texts[-1] == STORY_TEXT
    # The pull quote repeats a sentence: that sentence is checked once.
    claims = [claim["text"] for claim in state["claims"]]
    assert claims.count("Smoking causes lung cancer.") == 1
    assert "Tea has caffeineCoffee" not in fake.texts[-1]  # the heading glues to nothing
    assert [(each["reason"], each["text"]) for each in state["leftOut"]] == STORY_LEFT_OUT
    found = settled_marks(ext.browser, handle, state)
    assert ext.browser.execute_script("return document.querySelector('#pull mark')") is None  # the repeat: no mark
    assert sorted(m["text"] for m in found.values()) == sorted(claims)

    view = ext.popup(tab)
    heading = ext.browser.execute_script("return document.querySelector('#left-out h2').textContent")
    assert heading == f"Left out of the check: {len(STORY_LEFT_OUT)} passages of the selection"
    assert left_out(ext) == [(why, text) for why, text in STORY_LEFT_OUT]
    assert view["status"] == f"{len(claims)} claims checked"
    # The screenshot: the last claims, then what was left out and why.
    ext.browser.execute_script("document.getElementById('legend').open = false")
    ext.browser.set_window_size(480, 680)
    ext.browser.execute_script("document.getElementById('left-out').scrollIntoView({block: 'end'})")
    screenshot = artifacts / "extension-left-out.png"
    ext.browser.save_screenshot(str(screenshot))
    ext.browser.set_window_size(480, 1000)
    assert screenshot.stat().st_size > 10_000


def test_an_ad_label_or_comment_counter_s_words_inside_a_sentence_are_checked(
    ext: Extension, fake: FakeServer, site: str
) -> None:
    ext.use(fake.url)
    handle, tab = ext.open(f"{site}/inline.html")
    ext.select(handle, "inline")
    started = ext.check_selection(tab)
    state = ext.wait_state(tab, check_id=started["checkId"])
    assert fake.texts[-1] == (
        "Wikipedia gets no revenue from advertising.\n\nThe post drew 300 comments in an hour.\n\n"
        "Die Polizei hat Anzeige erstattet\n\nTea has caffeine."
    )
    # Only a line of them is left out.
    assert [(each["reason"], each["text"]) for each in state["leftOut"]] == [
        ("an advertisement", "Advertisement"),
        ("a comment counter", "Share · 12 comments"),
    ]


def test_a_short_line_with_a_date_is_a_dateline_only_by_its_words_or_place(
    ext: Extension, fake: FakeServer, site: str
) -> None:
    ext.use(fake.url)
    handle, tab = ext.open(f"{site}/dates.html")
    ext.select(handle, "dates")
    started = ext.check_selection(tab)
    state = ext.wait_state(tab, check_id=started["checkId"])
    sent = fake.texts[-1]
    assert sent.startswith("Statins lower LDL cholesterol.")
    for data in ("2020\tGDP fell 3.4%", "1998: Smith elected mayor", "2001 Jones and Ray"):
        assert data in sent, (data, sent)
    assert [(each["reason"], each["text"]) for each in state["leftOut"]] == [
        ("a dateline", "Published 2021-03-04 · 5 min read")
    ]


def select_range(ext: Extension, handle: str, script: str) -> str:
    """Select what ``script`` (statements setting ``range``) makes a range of; the browser's selection string."""
    ext.browser.switch_to.window(handle)
    return str(
        ext.browser.execute_script(
            f"getSelection().removeAllRanges(); const range = document.createRange(); {script}"
            " getSelection().addRange(range); return getSelection().toString();"
        )
    )


@pytest.mark.parametrize(
    ("what", "script", "text"),
    [
        (
            "a caption",
            "range.selectNodeContents(document.getElementById('caption'));",
            "A chart of LDL levels that maybe fall.",
        ),
        ("a pull quote", "range.selectNodeContents(document.getElementById('pull'));", "“Smoking causes lung cancer.”"),
        # A heading as a triple click selects it: to the start of the next block.
        (
            "a heading",
            "const title = document.getElementById('title'); range.setStart(title, 0);"
            " range.setEnd(document.querySelector('.meta').firstChild, 0);",
            "Statins under review",
        ),
    ],
)
def test_a_caption_pull_quote_or_heading_selected_alone_is_checked(
    ext: Extension, fake: FakeServer, site: str, what: str, script: str, text: str
) -> None:
    ext.use(fake.url)
    handle, tab = ext.open(f"{site}/story.html?{what.replace(' ', '-')}")
    select_range(ext, handle, script)
    started = ext.check_selection(tab)
    assert (what, started["text"]) == (what, text)
    state = ext.wait_state(tab, check_id=started["checkId"])
    assert state["leftOut"] == [] and fake.texts[-1] == text


def test_check_the_whole_page_checks_its_main_text_marked_as_a_selection(
    ext: Extension, fake: FakeServer, site: str, artifacts: Path
) -> None:
    ext.use(fake.url)
    handle, tab = ext.open(f"{site}/whole.html")
    ext.select(handle, None)
    # The popup's button, as a reader clicks it.
    browser = ext.browser
    browser.switch_to.window(ext.control)
    browser.switch_to.new_window("tab")
    popup = browser.current_window_handle
    browser.get(f"chrome-extension://{ext.id}/popup.html?tab={tab}")
    wait_for(browser, "document.body.dataset.ready")
    browser.find_element("id", "page").click()
    state = ext.wait_state(tab)
    assert state["kind"] == "page" and state["status"] == "done", state
    # Only the <main>'s text, with its heading, byline and caption left out; not the menu, sidebar or footer.
    assert state["text"] == MAIN_TEXT and fake.texts[-1] == MAIN_TEXT
    assert [(each["reason"], each["text"]) for each in state["leftOut"]] == [
        ("a heading", "Statins under review"),
        ("a byline", "By Jane Doe"),
        ("a figure caption", "A chart of LDL levels."),
    ]
    ext.wait_badge(tab, "PT")
    found = settled_marks(browser, handle, state)
    assert sorted(m["text"] for m in found.values()) == sorted(c["text"] for c in state["claims"])
    tooltips = browser.execute_script(
        "return [...document.querySelectorAll('mark.factcheck-first')].map((m) => m.title)"
    )
    assert "factcheck: TRUE 0.90: Statins lower LDL cholesterol." in tooltips
    browser.switch_to.window(popup)
    wait_for(browser, "document.getElementById('status').textContent === '4 claims checked'")
    view = popup_view(browser)
    assert view["context"].startswith("Whole page (its main text) on “The Daily Example” (127.0.0.1:")
    assert left_out(ext)[0] == ("a heading", "Statins under review")
    heading = browser.execute_script("return document.querySelector('#left-out h2').textContent")
    assert heading == "Left out of the check: 3 passages of the page"

    # The screenshot: the page's marks, a mark's tooltip and the badge (drawn from the extension's own values).
    shot = artifacts / "extension-whole-page.png"
    page_shot(ext, handle, tab, shot, mark="mark.factcheck-first", which=-1, size=(480, 620))


def test_the_whole_page_is_its_longest_article_without_main(ext: Extension, fake: FakeServer, site: str) -> None:
    ext.use(fake.url)
    _, tab = ext.open(f"{site}/articles.html")
    answer = ext.call("return await chrome.runtime.sendMessage({type: 'check-page', tabId: args[0]});", tab)
    state = ext.wait_state(tab, check_id=answer["checkId"])
    # An <article> inside the article is a reader's comment on it (HTML's way to mark one): left out, said why.
    assert state["text"] == "Apples grow on trees. Bananas are not berries. Cherries are red."
    assert [(each["reason"], each["text"]) for each in state["leftOut"]] == [
        ("reader comments", "A nested comment is inside it.")
    ]


def test_the_whole_page_leaves_out_comments_and_teasers_and_keeps_the_header_s_standfirst(
    ext: Extension, fake: FakeServer, site: str
) -> None:
    ext.use(fake.url)
    handle, tab = ext.open(f"{site}/comments.html")
    answer = ext.call("return await chrome.runtime.sendMessage({type: 'check-page', tabId: args[0]});", tab)
    state = ext.wait_state(tab, check_id=answer["checkId"])
    text = (
        "Statins lower LDL cholesterol, a new review finds.\n\nSmoking causes lung cancer.\n\n"
        "Obesity does not increase the risk of type 2 diabetes."
    )
    assert state["text"] == text and fake.texts[-1] == text
    assert [(each["reason"], each["text"]) for each in state["leftOut"]] == [
        ("a heading", "Statins under review"),
        ("a header: title, byline or date", "By Jane Doe · 10 May 2014"),
        ("teasers of other stories", "Coffee cures every cancer, says a blogger."),
        ("reader comments", "Comments Statins are poison, my aunt says."),
        ("reader comments", "I read that tea has no caffeine."),
        ("reader comments", "The moon is made of cheese."),
        ("reader comments", "Vaccines cause autism, I think."),
    ]
    # The standfirst is marked on the page as the article's first claim.
    found = settled_marks(ext.browser, handle, state)
    assert "Statins lower LDL cholesterol, a new review finds." in {m["text"] for m in found.values()}
    # A reader who selects the comments has them checked.
    ext.select(handle, "comments")
    started = ext.check_selection(tab)
    assert started["text"] == "Statins are poison, my aunt says.", started


def check_page(ext: Extension, tab: int) -> dict[str, Any]:
    answer = ext.call("return await chrome.runtime.sendMessage({type: 'check-page', tabId: args[0]});", tab)
    assert "checkId" in answer, answer
    return dict(ext.wait_state(tab, check_id=answer["checkId"]))


def test_a_whole_page_over_the_server_s_limit_or_empty_says_so(ext: Extension, server: str, site: str) -> None:
    ext.use(server)
    handle, tab = ext.open(f"{site}/huge.html")
    state = check_page(ext, tab)
    length = len("Statins lower LDL cholesterol. " * 60) - 1
    assert length > MAX_TEXT_CHARS
    assert state["status"] == "error" and state["error"] == (
        f"the page's main text is {length:,} characters, more than the server accepts (it answered 413): "
        "check it in parts, select a part of the page and check the selection, or raise the server's --max-text-chars"
    )
    ext.wait_badge(tab, "!")
    first = state["checkId"]
    # The popup offers the page in parts under the server's limit: one check, every sentence a claim.
    parts = -(-length // MAX_TEXT_CHARS)
    assert state["tooLong"] == {"limit": MAX_TEXT_CHARS, "parts": parts}
    ext.call("return await chrome.runtime.sendMessage({type: 'check-parts', tabId: args[0]});", tab)
    state = wait_until(lambda: ext.state(tab), lambda s: s and s["status"] == "done", "the page checked in parts")
    assert (state["kind"], state["inParts"]["count"], len(state["claims"])) == ("page", parts, 60)
    # The same check as the page captured: each claim is marked where it lies, and the result stays when the
    # tab's address changes its #fragment (the page is asked whether it still holds the check's text).
    assert state["checkId"] == first
    found = settled_marks(ext.browser, handle, state)
    assert len(found) == 60 and {m["text"] for m in found.values()} == {"Statins lower LDL cholesterol."}
    ext.browser.switch_to.window(handle)
    ext.browser.execute_script("location.hash = 'moved'")
    time.sleep(1)
    assert (ext.state(tab) or {}).get("checkId") == first
    _, tab = ext.open(f"{site}/empty.html")
    state = check_page(ext, tab)
    assert state["error"] == "the page's main text is empty: nothing to check"


def test_a_whole_page_check_cut_short_is_retried_on_the_same_marks_and_kept_per_tab(
    ext: Extension, fake: FakeServer, site: str
) -> None:
    ext.use(fake.url)
    killed = threading.Event()
    fake.kill["Zorblax"] = (2, killed)
    handle, tab = ext.open(f"{site}/whole.html?retry")
    _, other_tab = ext.open(f"{site}/articles.html?other")
    try:
        answer = ext.call("return await chrome.runtime.sendMessage({type: 'check-page', tabId: args[0]});", tab)
        wait_until(
            lambda: ext.state(tab),
            lambda s: s and len([c for c in s["claims"] if not c.get("pending")]) == 2,
            "two claims",
        )
        killed.set()
        cut = ext.wait_state(tab, check_id=answer["checkId"])
    finally:
        del fake.kill["Zorblax"]
    assert cut["status"] == "error" and [c.get("unchecked", False) for c in cut["claims"]] == [False, False, True, True]
    assert ext.state(other_tab) is None  # the other tab has no result of this one's
    assert ext.call("return await chrome.runtime.sendMessage({type: 'retry', tabId: args[0]});", tab) == {
        "checkId": cut["checkId"]
    }
    again = ext.wait_state(tab, check_id=cut["checkId"])
    assert again["status"] == "done" and again["kind"] == "page"
    found = settled_marks(ext.browser, handle, again)
    assert len(found) == 4 and all(key.startswith(cut["checkId"]) for key in found)


def test_a_whole_page_result_too_large_for_the_session_is_kept_without_its_evidence(
    ext: Extension, fake: FakeServer, site: str
) -> None:
    """The browser's session storage holds 10 MB for every tab: four claims of 2 MB of evidence each (kept twice,
    in the claims and the verdict) are over it; the result is kept, said to be too large, without the passages."""
    big = {"title": "A long source", "url": "https://example.org/long", "source": "corpus", "text": "x" * 2_000_000}
    judgment = {"agent": "stand-in", "factuality": True, "confidence": 0.8, "rationale": "scripted", "error": None}
    fake.claim_extra = {"judgments": [{**judgment, "evidence": [big]}]}
    try:
        ext.use(fake.url)
        _, tab = ext.open(f"{site}/whole.html?large")
        answer = ext.call("return await chrome.runtime.sendMessage({type: 'check-page', tabId: args[0]});", tab)
        state = ext.wait_state(tab, check_id=answer["checkId"])
    finally:
        fake.claim_extra = {}
    assert state["status"] == "done" and len(state["claims"]) == 4
    too_large = "the result is too large to keep in the browser's session: showing it without the evidence passages"
    assert too_large in state["notes"]
    assert all(judgment["evidence"] == [] for claim in state["claims"] for judgment in claim["judgments"])
    ext.wait_badge(tab, "PT")
    assert too_large in ext.popup(tab)["notes"]
