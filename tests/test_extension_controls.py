"""The popup's controls for a result (issue 41 item 14): a text over the server's limit checked in parts after its
413, and a reader's correction of a claim sent to the server's /v1/feedback where the options' key may send one.

Real headless Chromium with the extension, as in tests/test_extension.py, whose helpers and fixtures it uses: the
real server (its 413 and its limit), a real server with an experience memory and feedback keys, and the scripted
stand-in behind a proxy that answers 413 as the server does (to hold a part and to see which parts were asked for).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import test_extension
from tests.test_extension import (
    KEY,
    MAX_TEXT_CHARS,
    NEWS,
    Extension,
    FakeServer,
    compose,
    marks,
    page,
    served,
    settled_marks,
    squash,
    wait_for,
    wait_until,
)

# The browser, the servers and the artifacts folder of tests/test_extension.py (fixtures are found by their names).
artifacts = test_extension.artifacts
ext = test_extension.ext
fake = test_extension.fake
pages = test_extension.pages
server = test_extension.server

OTHER_KEY = "extension-test-key-4567"  # key-2: a key of the corrections server that may not send corrections
EMOJI = ["🚀", "🔥", "💊", "👍", "🧪", "🫀"]


def paragraph(number: int, count: int) -> str:
    """A paragraph of ``count`` sentences, an emoji (two UTF-16 units, one code point) in each: a mark put by
    UTF-16 offsets would slide one unit a sentence."""
    topics = [
        "Statins lower LDL cholesterol in most patients",
        "Smoking causes lung cancer in many smokers",
        "Obesity does not increase the risk of type 2 diabetes",
        "Physical activity reduces the risk of type 2 diabetes",
        "Doctors add other drugs for some patients",
        "Losing weight lowers the risk of diabetes",
    ]
    return " ".join(
        f"{topics[(number + n) % len(topics)]} in cohort {EMOJI[(number + n) % len(EMOJI)]} {number}{n:02d}."
        for n in range(count)
    )


# Three paragraphs of about 900 code points each: two do not fit under the server's 1,500 (MAX_TEXT_CHARS), so
# each is a part of its own, cut where a paragraph ends.
PARAGRAPHS = [paragraph(number, 13) for number in (1, 2, 3)]
# The stand-in's third paragraph holds its check after the first claim (FakeServer.hold), to see the progress.
HELD = "Hold this part now."
# The stand-in closes the connection after two claims of a text holding this (FakeServer.kill): a part that fails.
CUT = "Cut this part now."
PAGES = {
    "cut.html": page(
        "Cut",
        '<div id="story">'
        + "".join(f"<p>{text}</p>" for text in (PARAGRAPHS[0], f"{CUT} {PARAGRAPHS[1]}", PARAGRAPHS[2]))
        + "</div>",
    ),
    "parts.html": page("In parts", '<div id="story">' + "".join(f"<p>{text}</p>" for text in PARAGRAPHS) + "</div>"),
    "held.html": page(
        "Held",
        '<div id="story">'
        + "".join(f"<p>{text}</p>" for text in (PARAGRAPHS[0], f"{HELD} {PARAGRAPHS[1]}", PARAGRAPHS[2]))
        + "</div>",
    ),
}


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """This module's pages, served: their base URL."""
    yield from served(tmp_path_factory, PAGES, "controls")


class Limited:
    """The scripted stand-in (FakeServer) behind the real server's text limit: a text over ``limit`` code points
    gets the server's 413 (its message and ``max_text_chars``); any other is passed on, its events streamed back."""

    def __init__(self, fake: FakeServer, limit: int) -> None:
        self.refused: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                text = json.loads(raw)["text"]
                if len(text) > limit:
                    limited.refused.append(text)
                    error = f"text of {len(text)} characters is over the limit of {limit}"
                    body = json.dumps({"error": error, "max_text_chars": limit}).encode()
                    self.send_response(413)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                headers = {"Content-Type": "application/json"}
                with httpx.stream("POST", f"{fake.url}{self.path}", content=raw, headers=headers, timeout=60) as answer:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    try:
                        for chunk in answer.iter_raw():
                            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                            self.wfile.flush()
                        self.wfile.write(b"0\r\n\r\n")
                    except OSError:
                        pass  # the extension went away (a cancelled check)

        limited = self
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def limited(fake: FakeServer) -> Iterator[Limited]:
    proxy = Limited(fake, MAX_TEXT_CHARS)
    yield proxy
    proxy.httpd.shutdown()
    proxy.httpd.server_close()


@pytest.fixture(scope="module")
def memory_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("memory") / "memory.sqlite"


@pytest.fixture(scope="module")
def corrector(ext: Extension, tmp_path_factory: pytest.TempPathFactory, memory_path: Path) -> Iterator[str]:
    """A real server that keeps an experience memory and takes corrections from its first key (key-1) only."""
    from factcheck.server.app import create_app
    from factcheck.server.runner import serve_in_thread
    from factcheck.server.settings import ServerSettings

    folder = tmp_path_factory.mktemp("corrector")
    news = folder / "news.jsonl"
    news.write_text("".join(json.dumps(record) + "\n" for record in NEWS), encoding="utf-8")
    config = folder / "factcheck.toml"
    config.write_text(
        'profile = "offline"\n[agents.corpus]\nsource = "corpus"\nverifier = "lexical"\n'
        f'[agents.news]\nsource = "corpus"\npath = {json.dumps(str(news))}\nverifier = "lexical"\n'
        f"[memory]\npath = {json.dumps(str(memory_path))}\n"
    )
    settings = ServerSettings(
        api_keys=(KEY, OTHER_KEY),
        feedback_keys=("key-1",),
        cors_origins=(f"chrome-extension://{ext.id}",),
        profile="offline",
        config=str(config),
        rate_per_minute=0,
        max_text_chars=MAX_TEXT_CHARS,
    )
    with serve_in_thread(create_app(settings)) as url:
        yield url


def spanned(text: str, span: list[int]) -> str:
    """The text at a span of the server's (code points)."""
    return "".join(list(text)[span[0] : span[1]])


def test_a_text_over_the_servers_limit_is_checked_in_parts_as_one_check_marked_where_each_part_lies(
    ext: Extension, server: str, sites: str, artifacts: Path
) -> None:
    ext.use(server)
    handle, tab = ext.open(f"{sites}/parts.html")
    text = ext.select(handle, "story")
    check = ext.check_selection(tab)["checkId"]
    refused = ext.wait_state(tab, check_id=check)
    assert refused["status"] == "error"
    assert refused["error"].startswith("the server answered 413: text of "), refused["error"]
    assert refused["error"].endswith(
        f"over the limit of {MAX_TEXT_CHARS} (select a shorter text, or check it in parts)"
    )
    assert refused["tooLong"] == {"limit": MAX_TEXT_CHARS, "parts": 3}
    view = ext.popup(tab)
    offer = ext.browser.find_element("id", "parts")
    assert offer.is_displayed() and offer.text == "Check in 3 parts"
    assert not view["retry"]  # the same text again would be refused again
    ext.browser.set_window_size(480, 420)
    ext.browser.save_screenshot(str(artifacts / "extension-parts-offer.png"))
    ext.browser.set_window_size(480, 1000)

    offer.click()
    state = ext.wait_state(tab, ("done",), check_id=check)  # the same check: its claims marked on the same capture
    claims = state["claims"]
    assert len(claims) == 39 and [c["id"] for c in claims] == [f"c{n}" for n in range(1, 40)]
    assert all(not c.get("pending") and not c.get("unchecked") for c in claims)
    # Each part's claims lie in its paragraph of the whole text (code points, as Python counts): their spans
    # moved by the part's start, each on its own sentence.
    whole = state["text"]
    assert squash(whole) == squash(text)
    bounds = [(whole.index(p), whole.index(p) + len(p)) for p in PARAGRAPHS]
    where = [next(i for i, (a, b) in enumerate(bounds) if a <= c["span"][0] < c["span"][1] <= b) for c in claims]
    assert where == [0] * 13 + [1] * 13 + [2] * 13
    for claim in claims:
        assert squash(claim["text"]) in squash(spanned(whole, claim["span"])), claim
    assert state["verdict"]["label"] == compose(claims) and state["verdict"]["labels"] == "compose"
    assert state["inParts"] == {"limit": MAX_TEXT_CHARS, "count": 3, "part": None}
    found = settled_marks(ext.browser, handle, state)
    for claim in claims:
        assert squash(found[f"{check} {claim['id']}"]["text"]) == squash(spanned(state["text"], claim["span"]))
        assert "\ufffd" not in found[f"{check} {claim['id']}"]["text"]  # no emoji cut in half
    view = ext.popup(tab)
    assert view["label"] == compose(claims)
    assert view["status"] == "39 claims checked (in 3 parts)"
    assert len(view["claims"]) == 39 and not view["retry"]
    assert not ext.browser.find_element("id", "parts").is_displayed()
    ext.browser.set_window_size(480, 520)
    ext.browser.save_screenshot(str(artifacts / "extension-parts.png"))
    ext.browser.set_window_size(480, 1000)


def test_a_check_in_parts_says_which_part_it_is_on_and_stops_with_its_tab(
    ext: Extension, fake: FakeServer, limited: Limited, sites: str
) -> None:
    ext.use(limited.url)
    gate = threading.Event()
    fake.hold[HELD] = gate
    try:
        handle, tab = ext.open(f"{sites}/held.html")
        ext.select(handle, "story")
        check = ext.check_selection(tab)["checkId"]
        assert ext.wait_state(tab, check_id=check)["tooLong"]["parts"] == 3
        asked = len(fake.texts)
        ext.popup(tab)
        ext.browser.find_element("id", "parts").click()
        # The second part is held after its first claim: the popup says which part, and how far it got.
        state = wait_until(
            lambda: ext.state(tab),
            lambda s: (
                s and (s.get("inParts") or {}).get("part") == 2 and sum(not c.get("pending") for c in s["claims"]) == 14
            ),
            "the second part's first claim checked",
        )
        assert len(state["claims"]) == 27  # the first part's 13, the second's 14 (the held sentence too)
        assert ext.popup(tab)["status"] == "Checking part 2 of 3…: 14 of 27 claims done"
        # The parts asked for are the paragraphs, cut after their breaks; never more than the limit.
        parts = fake.texts[asked:]
        assert [squash(part) for part in parts] == [squash(PARAGRAPHS[0]), squash(f"{HELD} {PARAGRAPHS[1]}")]
        assert state["text"].startswith(parts[0] + parts[1]) and parts[0].rstrip() == parts[0].rstrip(" \n")
        assert all(len(part) <= MAX_TEXT_CHARS for part in parts)
        # The tab closes: its check is cancelled, and the third part is never asked for.
        ext.browser.switch_to.window(handle)
        ext.browser.close()
        gate.set()
        time.sleep(1.5)
        assert len(fake.texts) == asked + 2
    finally:
        gate.set()
        fake.hold.pop(HELD, None)


def test_a_check_in_parts_that_fails_keeps_the_parts_done_and_retry_goes_on_from_the_failed_part(
    ext: Extension, fake: FakeServer, limited: Limited, sites: str
) -> None:
    ext.use(limited.url)
    killed = threading.Event()
    killed.set()  # the connection closes as soon as the part's third claim is due
    fake.kill[CUT] = (2, killed)
    try:
        handle, tab = ext.open(f"{sites}/cut.html")
        ext.select(handle, "story")
        check = ext.check_selection(tab)["checkId"]
        assert ext.wait_state(tab, check_id=check)["tooLong"]["parts"] == 3
        asked = len(fake.texts)
        ext.call("return await chrome.runtime.sendMessage({type: 'check-parts', tabId: args[0]});", tab)
        failed = wait_until(
            lambda: ext.state(tab),
            lambda s: s and s.get("inParts") and s["status"] == "error",
            "the second part failed",
        )
    finally:
        fake.kill.pop(CUT, None)
    assert failed["error"].startswith("part 2 of 3: the connection to the server was lost"), failed["error"]
    # The first part's 13 claims and the second's first two keep their verdicts; its other 12 are not checked.
    checked = [not c.get("unchecked") for c in failed["claims"]]
    assert checked == [True] * 15 + [False] * 12
    assert failed["verdict"] is not None and failed["verdict"]["partial"] is True
    assert (failed["inParts"]["done"], failed["inParts"]["claims"]) == (1, 13)
    view = ext.popup(tab)
    assert view["retry"] and ext.browser.find_element("id", "retry").text == "Retry: check from part 2 of 3"
    ext.browser.find_element("id", "retry").click()
    state = wait_until(lambda: ext.state(tab), lambda s: s and s["status"] == "done", "the check in parts resumed")
    # Only the second and third parts were asked for again, in the same check; every claim numbered on.
    parts = fake.texts[asked:]
    assert [squash(part) for part in parts] == [
        squash(PARAGRAPHS[0]),
        squash(f"{CUT} {PARAGRAPHS[1]}"),
        squash(f"{CUT} {PARAGRAPHS[1]}"),
        squash(PARAGRAPHS[2]),
    ]
    assert state["checkId"] == check and [c["id"] for c in state["claims"]] == [f"c{n}" for n in range(1, 41)]
    assert not any(c.get("unchecked") or c.get("pending") for c in state["claims"])
    assert state["verdict"]["label"] == compose(state["claims"]) and state["verdict"]["parts"] == 3
    assert len(settled_marks(ext.browser, handle, state)) == 40


def test_retry_of_the_claims_a_check_in_parts_left_not_checked_sends_them_under_the_limit(
    ext: Extension, fake: FakeServer, limited: Limited, sites: str
) -> None:
    ext.use(limited.url)
    fake.claim_extra = {"checked": False, "score": None}  # as a server's deadline leaves them: none reached
    try:
        handle, tab = ext.open(f"{sites}/parts.html?rest")
        ext.select(handle, "story")
        check = ext.check_selection(tab)["checkId"]
        assert ext.wait_state(tab, check_id=check)["tooLong"]["parts"] == 3
        ext.call("return await chrome.runtime.sendMessage({type: 'check-parts', tabId: args[0]});", tab)
        cut = wait_until(
            lambda: ext.state(tab), lambda s: s and s.get("inParts") and s["status"] == "done", "the parts checked"
        )
    finally:
        fake.claim_extra = {}
    assert len(cut["claims"]) == 39 and all(c.get("unchecked") for c in cut["claims"])
    rest = len("\n\n".join(c["text"] for c in cut["claims"]))
    assert rest > MAX_TEXT_CHARS  # one text of them all would be refused
    refused, asked = len(limited.refused), len(fake.texts)
    ext.call("return await chrome.runtime.sendMessage({type: 'retry', tabId: args[0]});", tab)
    state = wait_until(
        lambda: ext.state(tab),
        lambda s: s and s["status"] == "done" and not any(c.get("unchecked") for c in s["claims"]),
        "every claim checked",
    )
    sent = fake.texts[asked:]
    assert len(limited.refused) == refused and len(sent) >= 2
    assert all(len(text) <= MAX_TEXT_CHARS for text in sent)
    assert [c["id"] for c in state["claims"]] == [f"c{n}" for n in range(1, 40)]
    assert len(settled_marks(ext.browser, handle, state)) == 39


def test_a_check_in_parts_starts_no_further_part_after_a_newer_check_in_its_tab(
    ext: Extension, fake: FakeServer, limited: Limited, sites: str
) -> None:
    ext.use(limited.url)
    gate = threading.Event()
    fake.hold[HELD] = gate
    try:
        handle, tab = ext.open(f"{sites}/held.html?newer")
        ext.select(handle, "story")
        check = ext.check_selection(tab)["checkId"]
        assert ext.wait_state(tab, check_id=check)["tooLong"]["parts"] == 3
        asked = len(fake.texts)
        ext.call("return await chrome.runtime.sendMessage({type: 'check-parts', tabId: args[0]});", tab)
        wait_until(
            lambda: ext.state(tab), lambda s: s and (s.get("inParts") or {}).get("part") == 2, "the second part asked"
        )
        # A pasted text checked in the same tab: it does not take the selection's text, yet the tab shows it now.
        ext.call(
            "return await chrome.runtime.sendMessage({type: 'check-text', tabId: args[0], text: 'Tea has caffeine.'});",
            tab,
        )
        newer = wait_until(lambda: ext.state(tab), lambda s: s and s["checkId"] != check, "the newer check")
        gate.set()
        ext.wait_state(tab, check_id=newer["checkId"])
        time.sleep(1.5)
        # The parts' first two and the newer text (the held part and the newer text are recorded in either
        # order, as they reach the stand-in): the third part was never asked for.
        assert sorted(squash(text) for text in fake.texts[asked:]) == sorted(
            [squash(PARAGRAPHS[0]), squash(f"{HELD} {PARAGRAPHS[1]}"), "Teahascaffeine."]
        )
    finally:
        gate.set()
        fake.hold.pop(HELD, None)


def claim_items(browser: Any) -> list[dict[str, Any]]:
    """Each claim of the popup: its id, text, whether it offers "Correct this", and its correction's line."""
    return list(
        browser.execute_script(
            """
            return [...document.querySelectorAll('#claims > li.claim')].map((item) => ({
              id: item.dataset.claimId,
              text: item.querySelector('.claim-text').textContent,
              offered: Boolean(item.querySelector('.correct-open')),
              said: item.querySelector('.correct-said')?.textContent ?? null,
              precedent: item.querySelector('.precedent-head')?.textContent ?? null,
            }));
            """
        )
    )


def scroll_to(browser: Any, claim_id: str) -> None:
    browser.execute_script(
        "document.querySelector(`li.claim[data-claim-id='${arguments[0]}']`).scrollIntoView()", claim_id
    )


def open_correction(browser: Any, claim_id: str) -> None:
    browser.execute_script(
        "document.querySelector(`#claims > li.claim[data-claim-id='${arguments[0]}'] .correct-open`).click()", claim_id
    )


def in_claim(browser: Any, claim_id: str, selector: str) -> Any:
    return browser.find_element("css selector", f"#claims > li.claim[data-claim-id='{claim_id}'] {selector}")


def stored(memory_path: Path) -> list[Any]:
    from factcheck.memory.store import MemoryStore

    return list(MemoryStore(memory_path).corrections()) if memory_path.exists() else []


def test_a_reader_corrects_a_claim_with_a_click_and_later_checks_of_it_use_the_correction(
    ext: Extension, corrector: str, pages: str, memory_path: Path, artifacts: Path
) -> None:
    ext.use(corrector, KEY)
    handle, tab = ext.open(f"{pages}/article.html")
    ext.select(handle, "article")
    check = ext.check_selection(tab)["checkId"]
    state = ext.wait_state(tab, check_id=check)
    assert state["status"] == "done", state["error"]
    ext.popup(tab)
    items = claim_items(ext.browser)
    assert [item["offered"] for item in items] == [True] * len(state["claims"])
    smoking = next(item for item in items if item["text"].startswith("Smoking causes lung cancer"))
    # Nothing leaves without the reader's click: opening the form, choosing and typing send nothing.
    open_correction(ext.browser, smoking["id"])
    send = in_claim(ext.browser, smoking["id"], ".correct-send")
    assert not send.is_enabled()  # no ruling chosen yet
    in_claim(ext.browser, smoking["id"], "input[value='FALSE']").click()
    in_claim(ext.browser, smoking["id"], ".correct-note").send_keys("Retracted trial\n")
    assert send.is_enabled()
    scroll_to(ext.browser, smoking["id"])
    ext.browser.set_window_size(480, 420)
    ext.browser.save_screenshot(str(artifacts / "extension-correct.png"))
    ext.browser.set_window_size(480, 1000)
    time.sleep(0.5)
    assert stored(memory_path) == []
    send.click()
    said = "Correction sent: later checks of this claim use it."
    items = wait_until(lambda: claim_items(ext.browser), lambda items: any(i["said"] for i in items), "the answer")
    assert [item["said"] for item in items if item["said"]] == [said]
    assert not next(item for item in items if item["id"] == smoking["id"])["offered"]  # sent once
    (correction,) = stored(memory_path)
    assert (correction.label, correction.reviewer, correction.note) == ("FALSE", "key-1", "Retracted trial")
    assert correction.claim == smoking["text"] and correction.verdict == "TRUE"
    assert correction.check_ref is not None and "claim=" in correction.check_ref and "url=http" in correction.check_ref

    # A later check of the same text: the memory agent lends the reader's ruling, shown as a reviewer's correction.
    again = ext.check_selection(tab)["checkId"]
    assert ext.wait_state(tab, check_id=again)["status"] == "done"
    ext.popup(tab)
    after = {item["text"]: item for item in claim_items(ext.browser)}
    assert after[smoking["text"]]["precedent"] == "A reviewer's earlier correction"
    ext.browser.switch_to.window(handle)
    ext.browser.close()


def test_a_key_that_may_not_correct_is_told_so_once_and_no_key_is_offered_nothing(
    ext: Extension, corrector: str, fake: FakeServer, pages: str, memory_path: Path, artifacts: Path
) -> None:
    before = stored(memory_path)
    ext.use(corrector, OTHER_KEY)
    handle, tab = ext.open(f"{pages}/two.html")
    ext.select(handle, "both")
    check = ext.check_selection(tab)["checkId"]
    assert ext.wait_state(tab, check_id=check)["status"] == "done"
    ext.popup(tab)
    first, *others = claim_items(ext.browser)
    assert first["offered"] and all(item["offered"] for item in others)
    open_correction(ext.browser, first["id"])
    in_claim(ext.browser, first["id"], "input[value='TRUE']").click()
    in_claim(ext.browser, first["id"], ".correct-send").click()
    refused = (
        "This key may not send corrections: the server answered 403: key-2 may not send corrections"
        " (not one of the server's feedback_keys)."
    )
    items = wait_until(lambda: claim_items(ext.browser), lambda items: items[0]["said"] == refused, "the refusal")
    # Said once, in one line, where the reader tried; no other claim offers it any more.
    assert [item["offered"] for item in items] == [False] * len(items)
    assert [item["said"] for item in items[1:]] == [None] * len(others)
    assert stored(memory_path) == before
    scroll_to(ext.browser, first["id"])
    ext.browser.set_window_size(480, 300)
    ext.browser.save_screenshot(str(artifacts / "extension-correct-refused.png"))
    ext.browser.set_window_size(480, 1000)
    # Remembered for this server and key: a popup opened later offers nothing.
    ext.popup(tab)
    assert not any(item["offered"] for item in claim_items(ext.browser))
    # The key allowed on the same server is offered it again; no key at all is offered nothing.
    ext.use(corrector, KEY)
    ext.popup(tab)
    assert all(item["offered"] for item in claim_items(ext.browser))
    ext.use(fake.url, "")
    check = ext.check_selection(tab)["checkId"]
    assert ext.wait_state(tab, check_id=check)["status"] == "done"
    view = ext.popup(tab)
    assert view["claims"] and not any(item["offered"] for item in claim_items(ext.browser))
    ext.browser.switch_to.window(handle)
    ext.browser.close()


def send_correction(ext: Extension, tab: int, label: str = "TRUE") -> dict[str, Any]:
    """Open the popup about a tab, send a correction of its first claim; the first claim once it says something."""
    ext.popup(tab)
    first = claim_items(ext.browser)[0]
    assert first["offered"], first
    open_correction(ext.browser, first["id"])
    in_claim(ext.browser, first["id"], f"input[value='{label}']").click()
    in_claim(ext.browser, first["id"], ".correct-send").click()
    return dict(wait_until(lambda: claim_items(ext.browser)[0], lambda item: item["said"], "the answer", timeout=45))


def save_options(ext: Extension) -> None:
    """Save the options page's form as it stands (the server and key it shows), as a reader clicks Save."""
    browser = ext.browser
    browser.switch_to.window(ext.control)
    browser.get(f"chrome-extension://{ext.id}/options.html")
    wait_for(browser, "document.getElementById('server').value")
    browser.find_element("id", "save").click()
    status = "document.getElementById('status')"
    assert wait_for(browser, f"{status}.dataset.state !== 'busy' && {status}.textContent") == "Saved."


def test_a_correction_goes_only_to_the_server_and_key_that_gave_the_verdict_and_saving_options_offers_it_again(
    ext: Extension, corrector: str, fake: FakeServer, pages: str, memory_path: Path
) -> None:
    before = stored(memory_path)
    ext.use(corrector, OTHER_KEY)
    ext.call("await chrome.storage.local.set({correctionsRefused: []});")  # whatever an earlier test left
    handle, tab = ext.open(f"{pages}/two.html?checked-by")
    ext.select(handle, "both")
    check = ext.check_selection(tab)["checkId"]
    assert ext.wait_state(tab, check_id=check)["status"] == "done"
    assert send_correction(ext, tab)["said"].startswith("This key may not send corrections: the server answered 403")
    ext.popup(tab)
    assert not any(item["offered"] for item in claim_items(ext.browser))
    # Saving the options (the server may have been told to take this key's corrections since) forgets the refusal.
    save_options(ext)
    ext.popup(tab)
    assert all(item["offered"] for item in claim_items(ext.browser))
    # The options now hold another key, then name another server: the verdict was not theirs, nothing is sent.
    ext.use(corrector, KEY)
    assert send_correction(ext, tab)["said"] == (
        "Not sent: the options now hold another API key: check again to correct."
    )
    ext.use(fake.url, KEY)
    assert send_correction(ext, tab)["said"] == (
        "Not sent: the options now name another server: check again to correct."
    )
    assert stored(memory_path) == before
    # Checked again with the key that may correct: sent.
    ext.use(corrector, KEY)
    check = ext.check_selection(tab)["checkId"]
    assert ext.wait_state(tab, check_id=check)["status"] == "done"
    assert send_correction(ext, tab, "FALSE")["said"] == "Correction sent: later checks of this claim use it."
    assert len(stored(memory_path)) == len(before) + 1
    ext.browser.switch_to.window(handle)
    ext.browser.close()


def test_a_correction_the_server_never_answers_says_so_after_30_seconds(ext: Extension, pages: str) -> None:
    """A server that takes the check but holds /v1/feedback open without an answer: "Sending…" does not stay."""
    silent = FakeServer()
    answered = threading.Event()
    checks = silent.httpd.RequestHandlerClass

    class Silent(checks):  # type: ignore[misc, valid-type]
        def do_POST(self) -> None:
            if self.path != "/v1/feedback":
                super().do_POST()
                return
            answered.wait(60)  # never answers while the test runs

    silent.httpd.RequestHandlerClass = Silent
    try:
        ext.use(silent.url, KEY)
        handle, tab = ext.open(f"{pages}/two.html?silent")
        ext.select(handle, "both")
        check = ext.check_selection(tab)["checkId"]
        assert ext.wait_state(tab, check_id=check)["status"] == "done"
        ext.popup(tab)
        first = claim_items(ext.browser)[0]
        open_correction(ext.browser, first["id"])
        in_claim(ext.browser, first["id"], "input[value='TRUE']").click()
        in_claim(ext.browser, first["id"], ".correct-send").click()
        assert in_claim(ext.browser, first["id"], ".correct-send").text == "Sending…"
        started = time.monotonic()
        item = wait_until(lambda: claim_items(ext.browser)[0], lambda item: item["said"], "the answer", timeout=45)
        assert 25 < time.monotonic() - started < 40
        assert item["said"] == f"Not sent: {silent.url} gave no answer in 30 s: try again later."
        assert in_claim(ext.browser, first["id"], ".correct-send").text == "Send correction"  # may be sent again
    finally:
        answered.set()
        silent.httpd.shutdown()


def test_a_check_run_again_under_its_id_marks_each_claim_where_it_lies_and_keeps_the_newer_run_s_pending_marks(
    ext: Extension, fake: FakeServer, pages: str
) -> None:
    """A retry or a check in parts keeps the check's id, and the page is told each run's claims as the background
    tells it (factcheck-highlight, factcheck-unmark-pending): a claim id that names other text in a later run is
    marked where it lies now, and an earlier run that is cancelled takes off its own "…" marks only."""
    ext.use(fake.url)
    handle, tab = ext.open(f"{pages}/two.html?runs")
    ext.select(handle, "both")
    check = ext.check_selection(tab)["checkId"]
    state = ext.wait_state(tab, check_id=check)
    settled_marks(ext.browser, handle, state)
    claims = {claim["id"]: claim for claim in state["claims"]}
    assert [claims[c]["text"] for c in ("c1", "c2", "c3")] == [
        "Alpha is first.",
        "Beta is maybe second.",
        "Gamma is third.",
    ]

    def tell(message: dict[str, Any]) -> None:
        ext.call("return await chrome.tabs.sendMessage(args[0], args[1], {frameId: 0});", tab, message)

    # A later run whose ids shifted: its c1 is the text's second sentence, FALSE.
    shifted = {**claims["c2"], "id": "c1", "label": "FALSE", "score": 0.1}
    tell({"type": "factcheck-highlight", "checkId": check, "run": "later", "claims": [shifted]})
    found = marks(ext.browser, handle)
    assert (found[f"{check} c1"]["text"], found[f"{check} c1"]["label"]) == ("Beta is maybe second.", "FALSE")
    assert f"{check} c2" not in found  # the earlier run's mark in its way is taken off
    assert found[f"{check} c3"]["label"] == "TRUE"
    # The newest run checks c3 again ("…"); the run before it, cancelled, takes off its own pending marks only.
    tell(
        {
            "type": "factcheck-highlight",
            "checkId": check,
            "run": "newest",
            "claims": [{**claims["c3"], "pending": True}],
        }
    )
    tell({"type": "factcheck-unmark-pending", "checkId": check, "run": "later"})
    found = marks(ext.browser, handle)
    assert found[f"{check} c3"]["text"] == "Gamma is third." and "factcheck-pending" in found[f"{check} c3"]["classes"]
    tell({"type": "factcheck-unmark-pending", "checkId": check, "run": "newest"})
    assert f"{check} c3" not in marks(ext.browser, handle)
    ext.browser.close()
