"""The extension (issue 41): claims the server's deadline came before are "not checked", and Retry checks only
them; a check is cancelled (its request closed) when its tab closes, its page is left or a newer check begins.

Real headless Chromium, with the helpers and fixtures of tests/test_extension.py.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests import test_extension
from tests.test_extension import (
    Extension,
    FakeServer,
    marks,
    page,
    popup_view,
    served,
    settled_marks,
    wait_for,
    wait_until,
)

# The browser and the artifacts folder of tests/test_extension.py (fixtures are found by their names here).
artifacts = test_extension.artifacts
ext = test_extension.ext

PAGES = {
    "deadline.html": page(
        "A long article",
        '<p id="text">Apples grow on trees. Pears ripen slowly. Plums are stone fruit. Quinces cook slowly.</p>',
    ),
    "first.html": page(
        "First", '<div id="both"><p id="one">Rivers flow to the sea.</p><p id="two">Snow falls in winter.</p></div>'
    ),
    "second.html": page("Second", '<p id="text">Bees make honey.</p>'),
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from served(tmp_path_factory, PAGES, "cancel-pages")


class DeadlineServer(FakeServer):
    """The stand-in, but a claim with "slowly" is one its deadline came before (``"checked": false``, no
    score, a partial verdict) until ``reached`` is set: then every claim is checked."""

    def __init__(self) -> None:
        super().__init__()
        self.reached = False

    def claims(self, text: str) -> list[dict[str, Any]]:
        found = super().claims(text)
        if self.reached:
            return found
        for claim in found:
            if "slowly" in claim["text"]:
                error = "deadline of 30s reached before this claim was checked"
                judgment = {"agent": "stand-in", "factuality": None, "confidence": 0.0, "rationale": ""}
                claim |= {"label": "UNVERIFIED", "score": None, "strength": None, "checked": False}
                claim["judgments"] = [{**judgment, "evidence": [], "error": error}]
        return found


@pytest.fixture(scope="module")
def deadline() -> Iterator[DeadlineServer]:
    server = DeadlineServer()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


class HangingServer:
    """A /v1/check/stream that sends the claims and then nothing, writing down each text whose client
    closed the connection (``gone``) as soon as it does."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.gone: list[str] = []
        hanging = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["text"]
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                claims = [{"id": "c1", "text": text, "span": [0, len(text)], "queries": []}]
                chunk = f"event: claims\ndata: {json.dumps({'claims': claims})}\n\n".encode()
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
                hanging.opened.append(text)
                until = time.monotonic() + 60
                while time.monotonic() < until:  # a check that takes long: the client may go away meanwhile
                    readable, _, _ = select.select([self.connection], [], [], 0.05)
                    if readable and not self.connection.recv(1, socket.MSG_PEEK):
                        hanging.gone.append(text)
                        return
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def hanging() -> Iterator[HangingServer]:
    server = HangingServer()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def test_claims_the_deadline_came_before_show_as_not_checked_and_retry_checks_only_them(
    ext: Extension, deadline: DeadlineServer, pages: str, artifacts: Path
) -> None:
    ext.use(deadline.url)
    deadline.verdict_extra = {"partial": True}
    handle, tab = ext.open(f"{pages}/deadline.html")
    ext.select(handle, "text")
    check = ext.check_selection(tab)["checkId"]
    state = ext.wait_state(tab, check_id=check)
    assert state["status"] == "done" and state["verdict"]["partial"] is True
    assert [bool(claim.get("unchecked")) for claim in state["claims"]] == [False, True, False, True]
    # Only the claims checked are marked; those not reached lose their "checking" marks.
    found = wait_until(
        lambda: marks(ext.browser, handle),
        lambda found: sorted(found) == [f"{check} c1", f"{check} c3"],
        "only the checked claims marked",
    )
    assert {m["label"] for m in found.values()} == {"TRUE"}
    ext.wait_badge(tab, "T")  # the label of the two claims checked, not of "?" claims

    view = ext.popup(tab)
    assert view["status"] == "2 of 4 checked: the server's deadline stopped the check before the other 2 claims"
    assert [c["label"] for c in view["claims"]] == ["TRUE", "NOT CHECKED", "TRUE", "NOT CHECKED"]
    assert [c["score"] for c in view["claims"]] == ["0.90", None, "0.90", None]
    assert view["label"] == "TRUE" and view["retry"]
    assert ext.browser.find_element("id", "retry").text == "Retry: check the 2 claims not checked"
    ext.browser.save_screenshot(str(artifacts / "extension-not-checked.png"))

    # Retry, the server in time now: only the two claims not checked are sent, and merged into the result.
    deadline.reached, deadline.verdict_extra = True, {}
    try:
        ext.browser.find_element("id", "retry").click()
        wait_for(ext.browser, "document.getElementById('status').textContent === '4 claims checked'")
    finally:
        deadline.reached = False
    assert deadline.texts[-1] == "Pears ripen slowly.\n\nQuinces cook slowly."
    view = popup_view(ext.browser)
    assert [c["label"] for c in view["claims"]] == ["TRUE"] * 4 and not view["retry"]
    assert [c["text"] for c in view["claims"]] == [c["text"] for c in state["claims"]]
    after = ext.wait_state(tab, ("done",), check_id=check)
    assert [(c["id"], c["span"]) for c in after["claims"]] == [(c["id"], c["span"]) for c in state["claims"]]
    assert after["verdict"]["partial"] is False
    found = settled_marks(ext.browser, handle, after)  # the rechecked claims marked on the same capture
    assert sorted(found) == [f"{check} c{n}" for n in range(1, 5)]
    assert "".join(m["text"] for m in found.values()) == "".join(c["text"] for c in state["claims"])


def test_a_check_is_cancelled_when_its_tab_closes_its_page_is_left_or_a_newer_check_begins(
    ext: Extension, hanging: HangingServer, pages: str
) -> None:
    ext.use(hanging.url)

    def start(handle: str, tab: int, element: str, text: str) -> str:
        ext.select(handle, element)
        check = ext.check_selection(tab)["checkId"]
        wait_until(lambda: list(hanging.opened), lambda opened: text in opened, f"the check of {text!r} sent")
        return check

    def cancelled(text: str) -> None:
        wait_until(lambda: list(hanging.gone), lambda gone: text in gone, f"the check of {text!r} cancelled", 10)

    # A tab closed: its check's request is closed.
    handle, tab = ext.open(f"{pages}/second.html")
    start(handle, tab, "text", "Bees make honey.")
    ext.call("await chrome.tabs.remove(args[0]);", tab)
    cancelled("Bees make honey.")

    # Two paragraphs checked one after the other: both go on, each to mark its own text.
    handle, tab = ext.open(f"{pages}/first.html")
    start(handle, tab, "one", "Rivers flow to the sea.")
    start(handle, tab, "two", "Snow falls in winter.")
    time.sleep(1)
    assert hanging.gone == ["Bees make honey."]
    # A newer check of a selection holding them: theirs are closed, and they do not touch the tab's result.
    both = "Rivers flow to the sea.\n\nSnow falls in winter."
    newer = start(handle, tab, "both", both)
    cancelled("Rivers flow to the sea.")
    cancelled("Snow falls in winter.")
    time.sleep(0.5)
    state = ext.state(tab)
    assert (state["checkId"], state["status"]) == (newer, "checking")
    assert both not in hanging.gone

    # The page left: its check is closed too.
    ext.browser.switch_to.window(handle)
    ext.browser.get(f"{pages}/second.html")
    cancelled(both)
    wait_until(lambda: ext.state(tab), lambda state: state is None, "the old page's result cleared")
