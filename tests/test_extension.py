"""The sample extension (extension/) in real headless Chromium, against a real local server (offline profile)
and a scripted stand-in that streams the same events when a test needs to hold a check or send notes.

Chromium and its driver come from Debian (`apt-get install chromium chromium-driver`, done by .ci/run);
nothing is downloaded. Without them the tests skip, except in CI (FACTCHECK_REQUIRE_BROWSER=1), where
they fail. One browser, one server and one stand-in serve the whole module. Screenshots (docs/img) are
written to $FACTCHECK_ARTIFACTS (else a temporary folder).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXTENSION_DIR = ROOT / "extension"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
KEY = "extension-test-key-0123"
MAX_TEXT_CHARS = 1500
BADGES = {"TRUE": "T", "FALSE": "F", "PARTLY TRUE": "PT", "UNVERIFIED": "?"}  # the toolbar badge of a text's label
# Read at import: the test session sets every FACTCHECK_* variable aside before the tests run (conftest.py).
REQUIRE_BROWSER = bool(os.environ.get("FACTCHECK_REQUIRE_BROWSER"))
ARTIFACTS = os.environ.get("FACTCHECK_ARTIFACTS")
FLAGS = (
    "--headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
    "--disable-component-update --disable-sync --window-size=480,1000"
).split()


def page(title: str, body: str) -> str:
    return f'<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head><body>{body}</body></html>'


PAGES = {
    # Four claims against two agents: one strong TRUE, one strong FALSE, one the agents disagree on (weak),
    # one no agent can judge (UNVERIFIED). The <b> makes a claim cross an element.
    "article.html": page(
        "An article",
        "<h1>Health claims</h1>"
        '<p id="article">Statins lower <b>LDL</b> cholesterol. Smoking causes lung cancer. Obesity does not increase'
        " the risk of type 2 diabetes. The Zorblax gizmo fromulates quintessential widgets.</p>",
    ),
    # Minified markup as real pages ship it: an ad script, a style, hidden and screen-reader-only text.
    "minified.html": page(
        "Minified",
        '<div id="story"><h2>Cholesterol drugs</h2><p>Statins lower <b>LDL</b>   cholesterol.</p>'
        '<script>window.__ad={"copy":"Statins cure cancer."};</script><style>.ad{color:red}</style>'
        "<span style=display:none>Advertisement</span><p>Vitamin D <span style=visibility:hidden>secretly </span>"
        'helps bones.</p><div hidden>A hidden block.</div><span aria-hidden="true">★★★</span>'
        "<template><p>Template text.</p></template>"
        '<span style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)">'
        "Skip to content.</span>"
        "<ul><li>Obesity does not increase risk.</li><li>Exercise helps<br>the heart.</li></ul>"
        "<table><tr><td>Tea has caffeine.</td><td>Milk has calcium.</td></tr></table></div>",
    ),
    "two.html": page(
        "Two paragraphs",
        '<div id="both"><p id="p1">Alpha is first. Beta is maybe second.</p>'
        '<p id="p2">Gamma is third. Delta is not fourth.</p></div>',
    ),
    "a.html": page("Page A", '<p id="text">Apples grow on trees.</p>'),
    "b.html": page("Page B", '<p id="text">Bananas are not berries. Cherries are red.</p>'),
    "long.html": page("Long", '<p id="text">' + "Statins lower LDL cholesterol. " * 60 + "</p>"),
    # Text hidden as news pages hide it, each way once, among text that shows (a gradient heading's glyphs
    # are transparent over a background clipped to them; a scrolling box's far end can be scrolled to),
    # and a web component: its open shadow root's text and the text slotted into it show, its unslotted
    # children do not. The off-screen sentence leaves its full stop visible, as on the page where it was met.
    "hidden.html": page(
        "Hidden text",
        '<div id="news"><p style="background:linear-gradient(90deg,#c92a2a,#1971c2);-webkit-background-clip:text;'
        'background-clip:text;color:transparent">Gradient headings are shown.</p>'
        '<p>Sunlight helps the body make vitamin D.<span style="position:absolute;left:-9999px"> Vitamin D cures'
        " cancer</span>.</p>"
        '<p style="text-indent:-9999px">Indented text is hidden.</p>'
        '<div style="max-height:0;overflow:hidden"><p>Accordion text is hidden.</p></div>'
        '<p style="font-size:0">Zero size text is hidden.</p>'
        '<p style="clip-path:inset(100%)">Clipped text is hidden.</p>'
        '<p style="transform:scale(0)">Scaled text is hidden.</p>'
        '<p style="color:transparent">Transparent text is hidden.</p>'
        '<p style="color:oklch(0 0 0 / 0)">Modern transparent text is hidden.</p>'
        '<p style="color:transparent;text-shadow:0 0 1px transparent">Shadowless text is hidden.</p>'
        "<style>body{overflow-x:hidden}</style>"
        '<p style="position:relative;left:200vw">Far right text is hidden.</p>'
        '<div style="height:1.4em;overflow:auto"><p style="margin:0">Scrolled text is shown.</p>'
        '<p style="margin:0">Text to scroll to is shown.</p></div>'
        '<div id="card"><span slot="note">Slotted text is shown.</span><span>Unslotted text is hidden.</span></div>'
        "<p>Last text is shown.</p></div>"
        "<script>document.getElementById('card').attachShadow({mode: 'open'}).innerHTML ="
        " '<p>Shadow text is shown.</p><p><slot name=\"note\"></slot></p>'"
        " + '<p style=\"font-size:0\">Shadow text can be hidden too.</p>';</script>",
    ),
    # A page with an iframe of the same site: a selection may be in either.
    "framed.html": page(
        "Framed",
        '<p id="top">Top text is older.</p><iframe id="frame" src="frame.html" width="440" height="90"></iframe>',
    ),
    "frame.html": page("Frame", '<p id="inner">Frame text is checked. Frame text is not ignored.</p>'),
    # Fifty claims, for a server that dies after the fourth.
    "fifty.html": page("Fifty", '<p id="text">' + " ".join(f"Claim {n} is numbered." for n in range(1, 51)) + "</p>"),
}
# A second corpus with URLs: it contradicts the SciFact abstracts on statins, so that claim is weak.
NEWS = [
    {
        "id": "n1",
        "title": "Cholesterol drugs, explained",
        "url": "https://health.example.org/statins",
        "text": "Statins do not lower LDL cholesterol in patients with familial hypercholesterolemia. "
        "Doctors add other drugs for them. Most other patients see their LDL fall within weeks.",
    },
    {
        "id": "n2",
        "title": "Diabetes risk factors",
        "url": "https://health.example.org/diabetes",
        "text": "Obesity increases the risk of type 2 diabetes. Losing weight lowers that risk. "
        "Family history matters too.",
    },
    {
        "id": "n3",
        "title": "Diabetes risk factors",
        "url": "https://health.example.org/diabetes",
        "text": "Physical activity reduces the risk of type 2 diabetes even without weight loss.",
    },
]


def _need_browser() -> None:
    # Each thing missing with what installs it: the apt hint is for the browser alone.
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(path)]
    if missing:
        missing = [f"{' and '.join(missing)} (apt-get install chromium chromium-driver)"]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package (the dev extra)")
    try:
        import fastapi  # noqa: F401
    except ImportError:
        missing.append("the server extra (fastapi)")
    if missing:
        reason = f"browser test needs {', '.join(missing)}"
        if REQUIRE_BROWSER:
            pytest.fail(reason)
        pytest.skip(reason)


def serve_folder(folder: Path) -> tuple[ThreadingHTTPServer, str]:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def compose(claims: list[dict[str, Any]]) -> str:
    """The text label by the server's default rule, ``compose``: TRUE if every verified claim is TRUE,
    FALSE if every one is FALSE and one is strong (weak ones alone: UNVERIFIED), PARTLY TRUE otherwise;
    claims with no score are left out."""
    verified = [c for c in claims if c["score"] is not None]
    labels = {c["label"] for c in verified}
    if not labels:
        return "UNVERIFIED"
    if labels == {"FALSE"}:
        return "FALSE" if any(abs(2 * c["score"] - 1) >= 0.5 for c in verified) else "UNVERIFIED"
    return labels.pop() if len(labels) == 1 and labels <= {"TRUE", "FALSE"} else "PARTLY TRUE"


class FakeServer:
    """A stand-in for /v1/check/stream: one claim per sentence, labelled by its words, with notes on demand.

    A sentence with "not" is FALSE (0.10), one with "maybe" a weak TRUE (0.60), others TRUE (0.90); the
    text is labelled as the real server does by default (``compose``, its score the mean). A check whose
    text contains a key of ``hold`` sends ``claims`` and its first ``claim``, then waits for that event;
    one containing a key of ``kill`` (``(n, event)``) sends ``n`` ``claim`` events, waits for the event,
    then closes the connection, its chunked body unfinished, as when the server is killed. ``notes`` go
    into the verdict (top level and usage); ``claim_notes`` into each claim; ``verdict_extra`` is laid
    over the verdict (another rule's label, a ``judged_by``). Each step of ``deliberation`` is sent as a
    ``deliberation`` event (policy ``lase``) before each claim's ``claim`` (before a hold, too).
    """

    SENTENCE = re.compile(r"[^\s.!?](?:[^.!?\n]|\n(?!\n))*[.!?]")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.hold: dict[str, threading.Event] = {}
        self.notes: list[Any] = []
        self.claim_notes: list[Any] = []
        self.claim_extra: dict[str, Any] = {}  # fields laid over every claim (a time, dated evidence)
        self.verdict_extra: dict[str, Any] = {}
        self.kill: dict[str, tuple[int, threading.Event]] = {}
        self.deliberation: list[dict[str, Any]] = []  # steps sent as "deliberation" events before each claim's
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # a chunked body, as the real server's

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["text"]
                fake.texts.append(text)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
                self.end_headers()
                claims = fake.claims(text)
                self.event("claims", {"claims": [{k: c[k] for k in ("id", "text", "span", "queries")} for c in claims]})
                gate = next((event for key, event in fake.hold.items() if key in text), None)
                kill, killed = next((after for key, after in fake.kill.items() if key in text), (None, None))
                for index, claim in enumerate(claims):
                    for step in fake.deliberation:
                        self.event("deliberation", {"index": index, "policy": "lase", "step": step})
                    if index == 1 and gate is not None:
                        gate.wait(30)
                    if index == kill and killed is not None:  # as a killed server's: closed, the body cut short
                        killed.wait(30)
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    self.event("claim", {"index": index, "claim": claim})
                scores = [c["score"] for c in claims if c["score"] is not None]  # a claim not reached has none
                score = sum(scores) / len(scores) if scores else None
                verdict = {"schema": "factcheck/1", "text": text, "label": compose(claims), "labels": "compose"}
                verdict |= {"score": score, "claims": claims, "usage": {"notes": list(fake.notes)}}
                verdict |= {"notes": list(fake.notes), "partial": False, **fake.verdict_extra}
                self.event("verdict", verdict)
                self.wfile.write(b"0\r\n\r\n")  # the last chunk

            def event(self, name: str, data: dict[str, Any]) -> None:
                chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def claims(self, text: str) -> list[dict[str, Any]]:
        found = []
        for number, match in enumerate(self.SENTENCE.finditer(text), 1):
            sentence = match.group()
            score = 0.1 if " not " in sentence else 0.6 if " maybe " in sentence else 0.9
            found.append(
                {
                    "id": f"c{number}",
                    "text": sentence,
                    "span": [match.start(), match.end()],
                    "queries": [],
                    "label": "TRUE" if score > 0.5 else "FALSE",
                    "score": score,
                    "judgments": [
                        {
                            "agent": "stand-in",
                            "factuality": score > 0.5,
                            "confidence": abs(2 * score - 1),
                            "rationale": "scripted",
                            "evidence": [],
                            "error": None,
                        }
                    ],
                    "notes": list(self.claim_notes),
                    **self.claim_extra,
                }
            )
        return found


class Extension:
    """The browser with the extension loaded, and a tab on one of its pages to call its APIs from."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.id = self._extension_id()
        browser.get(f"chrome-extension://{self.id}/options.html")
        self.control = browser.current_window_handle

    def _extension_id(self) -> str:
        """The id Chromium gave the unpacked extension, read from its running service worker."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            for target in self.browser.execute_cdp_cmd("Target.getTargets", {})["targetInfos"]:
                url = target["url"]
                if target["type"] == "service_worker" and url.startswith("chrome-extension://"):
                    return str(url.split("/")[2])
            time.sleep(0.2)
        raise AssertionError("the extension's service worker never started (did the manifest load?)")

    def call(self, script: str, *args: Any) -> Any:
        """Run ``script`` (an async function body of ``args``) in the extension's control tab; its result."""
        self.browser.switch_to.window(self.control)
        return self.browser.execute_async_script(
            f"const done = arguments[arguments.length - 1]; (async (...args) => {{ {script} }})(...arguments)"
            ".then(done, (error) => done({thrown: String(error)}));",
            *args,
        )

    def use(self, server: str, key: str = KEY) -> None:
        self.call("await chrome.storage.local.set({server: args[0], apiKey: args[1]});", server, key)

    def open(self, url: str) -> tuple[str, int]:
        """Open url in a new tab: its window handle and tab id."""
        self.browser.switch_to.new_window("tab")
        self.browser.get(url)
        handle = self.browser.current_window_handle
        tab = self.call("return (await chrome.tabs.query({url: args[0]})).map((t) => t.id);", url)
        assert tab, url
        return handle, tab[-1]

    def select(self, handle: str, element_id: str | None, frame: str | None = None) -> str:
        """Select an element's contents (None: clear the selection), in the iframe of id ``frame`` if given,
        which then has the focus, as after a reader's click in it; the browser's own selection string."""
        self.browser.switch_to.window(handle)
        if frame is not None:
            self.browser.execute_script("document.getElementById(arguments[0]).focus()", frame)
            self.browser.switch_to.frame(frame)
        return str(
            self.browser.execute_script(
                """
                getSelection().removeAllRanges();
                if (arguments[0] === null) return '';
                const range = document.createRange();
                range.selectNodeContents(document.getElementById(arguments[0]));
                getSelection().addRange(range);
                return getSelection().toString();
                """,
                element_id,
            )
        )

    def check_selection(self, tab: int, frame_id: int | None = None) -> dict[str, Any]:
        """Check the tab's selection: the answer comes once it is captured ({checkId, text, frameId}). With
        ``frame_id``, what the menu does when opened in that frame (0: the page); without, the popup's
        button, which finds the frame holding the selection."""
        answer = self.call(
            "return await chrome.runtime.sendMessage({type: 'check-selection', tabId: args[0], frameId: args[1]});",
            tab,
            frame_id,
        )
        assert "checkId" in answer, answer
        return dict(answer)

    def frame_id(self, tab: int, path: str) -> int:
        """The extension's id of the tab's frame whose URL ends with ``path``."""
        found = self.call(
            "return (await chrome.scripting.executeScript({target: {tabId: args[0], allFrames: true},"
            " func: () => location.pathname})).map((frame) => [frame.frameId, frame.result]);",
            tab,
        )
        (frame,) = [frame for frame, location in found if location.endswith(path)]
        return int(frame)

    def state(self, tab: int) -> Any:
        return self.call(
            "const key = `check:tab:${args[0]}`; return (await chrome.storage.session.get(key))[key] ?? null;", tab
        )

    def wait_state(self, tab: int, status: tuple[str, ...] = ("done", "error"), check_id: str | None = None) -> Any:
        return wait_until(
            lambda: self.state(tab),
            lambda state: state and state["status"] in status and (check_id is None or state["checkId"] == check_id),
            f"tab {tab} reaching {status}",
        )

    def badge(self, tab: int) -> str:
        return str(self.call("return await chrome.action.getBadgeText({tabId: args[0]});", tab))

    def wait_badge(self, tab: int, text: str) -> str:
        """The badge once it reads ``text``: it is set a moment after the state that it shows is saved."""
        return str(wait_until(lambda: self.badge(tab), lambda badge: badge == text, f"tab {tab}'s badge {text!r}"))

    def popup(self, tab: int) -> dict[str, Any]:
        """Open the popup as a page about a tab, wait for it to render, and read it."""
        self.browser.switch_to.window(self.control)
        self.browser.switch_to.new_window("tab")
        self.browser.get(f"chrome-extension://{self.id}/popup.html?tab={tab}")
        wait_for(self.browser, "document.body.dataset.ready")
        return popup_view(self.browser)


def wait_until(probe: Callable[[], Any], done: Callable[[Any], Any], what: str, timeout: float = 60) -> Any:
    """Poll ``probe()`` until ``done`` says its value is the awaited state (not merely the first value); that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: last {value!r}")
        time.sleep(0.05)


def wait_for(browser: Any, script: str, timeout: float = 60) -> Any:
    """Poll ``script`` (a JS expression) until it is truthy; its value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = browser.execute_script(f"return {script}")
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {script}")


def popup_view(browser: Any) -> dict[str, Any]:
    """What the popup shows: label, score, context, notes, legend and each claim with agents and evidence."""
    view: dict[str, Any] = browser.execute_script(
        """
        const text = (root, selector) => root.querySelector(selector)?.textContent ?? null;
        const shown = (id) => document.getElementById(id)?.hidden === false ? text(document, `#${id}`) : null;
        return {
          label: text(document, '#label'),
          score: text(document, '#score'),
          strength: text(document, '#strength'),
          status: text(document, '#status'),
          state: document.getElementById('status').dataset.state,
          context: document.getElementById('context').hidden ? null : text(document, '#context'),
          notes: [...document.querySelectorAll('#notes:not([hidden]) li')].map((li) => li.textContent),
          legend: {open: document.getElementById('legend').open, text: text(document, '#legend')},
          composition: text(document, '#composition'),
          labelRule: shown('label-rule'),
          judged: shown('judged'),
          caution: shown('caution'),
          retry: document.getElementById('retry')?.hidden === false,
          claims: [...document.querySelectorAll('#claims > li.claim')].map((claim) => ({
            label: text(claim, '.claim-head .label'),
            text: text(claim, '.claim-text'),
            score: text(claim, '.claim-head .score'),
            weak: claim.dataset.weak === 'true',
            strength: text(claim, '.claim-head .strength'),
            time: text(claim, '.claim-time'),
            open: claim.querySelector('details.why')?.open ?? null,
            agents: [...claim.querySelectorAll('.judgment')].map(
              (j) => j.firstChild.textContent + j.childNodes[1].textContent),
            passages: [...claim.querySelectorAll('.passage')].map((p) => ({
              source: text(p, '.passage-source'),
              link: p.querySelector('.passage-source a')?.href ?? null,
              text: text(p, '.passage-text'),
              quote: text(p, '.passage-text mark'),
            })),
            evidence: [...claim.querySelectorAll('.evidence li')].map((li) => li.textContent),
            links: [...claim.querySelectorAll('.evidence a')].map((a) => a.href),
          })),
        };
        """
    )
    return view


# Every mark in the document and in its open shadow roots, in tree order (ALL_MARKS: an expression).
ALL_MARKS = """(function all(root) {
    return [...root.querySelectorAll('mark.factcheck-claim, *')].flatMap((node) =>
        node.localName === 'mark' && node.classList.contains('factcheck-claim') ? [node]
        : node.shadowRoot ? all(node.shadowRoot) : []);
})(document)"""
MARKS = f"""(() => {{
    const byClaim = {{}};
    for (const mark of {ALL_MARKS}) {{
        const key = `${{mark.dataset.check}} ${{mark.dataset.claimId}}`;
        byClaim[key] ??= {{text: '', classes: mark.className, label: mark.dataset.label}};
        byClaim[key].text += mark.textContent;
    }}
    return byClaim;
}})()"""


def marks(browser: Any, handle: str, frame: str | None = None) -> dict[str, dict[str, str]]:
    """Each highlighted claim ("<check id> <claim id>"): its marked text, its first mark's classes and label;
    in the iframe of id ``frame`` if given."""
    browser.switch_to.window(handle)
    if frame is not None:
        browser.switch_to.frame(frame)
    return dict(browser.execute_script(f"return {MARKS}"))


def settled_marks(browser: Any, handle: str, state: dict[str, Any], frame: str | None = None) -> dict[str, Any]:
    """The marks once the page shows the state's claims (each marked claim with the label it has in the
    state): the page is told a moment before the state is saved, and may show it a moment after."""
    labels = {c["id"]: "" if c.get("pending") or c.get("unchecked") else c["label"] for c in state["claims"]}

    def settled(found: dict[str, dict[str, str]]) -> bool:
        shown = {key.split()[1]: m["label"] for key, m in found.items() if key.split()[0] == state["checkId"]}
        every_verdict_marked = all(claim in shown for claim, label in labels.items() if label)
        return every_verdict_marked and all(labels.get(claim) == label for claim, label in shown.items())

    return dict(wait_until(lambda: marks(browser, handle, frame), settled, f"the marks of {state['checkId']}"))


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(ARTIFACTS) if ARTIFACTS else tmp_path_factory.mktemp("artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def served(tmp_path_factory: pytest.TempPathFactory, pages: dict[str, str], name: str) -> Iterator[str]:
    """``pages`` (file name -> HTML) served from 127.0.0.1 (covered by the extension's host permissions), for a
    module-scoped fixture to yield from: their base URL."""
    folder = tmp_path_factory.mktemp(name)
    for file, html in pages.items():
        (folder / file).write_text(html, encoding="utf-8")
    httpd, url = serve_folder(folder)
    yield url
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The test pages, served: their base URL."""
    yield from served(tmp_path_factory, PAGES, "pages")


@pytest.fixture(scope="module")
def ext() -> Iterator[Extension]:
    _need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="factcheck-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--load-extension={EXTENSION_DIR}")
    options.add_argument(f"--disable-extensions-except={EXTENSION_DIR}")
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    browser.set_script_timeout(60)
    try:
        yield Extension(browser)
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def server(ext: Extension, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real server: the offline profile with the lexical verifier (what the popup shows is known), plus a
    second corpus agent; an API key, the extension's origin allowed, short texts only."""
    from factcheck.server.app import create_app
    from factcheck.server.runner import serve_in_thread
    from factcheck.server.settings import ServerSettings

    folder = tmp_path_factory.mktemp("server")
    news = folder / "news.jsonl"
    news.write_text("".join(json.dumps(record) + "\n" for record in NEWS), encoding="utf-8")
    config = folder / "factcheck.toml"
    config.write_text(
        'profile = "offline"\n[agents.corpus]\nsource = "corpus"\nverifier = "lexical"\n'
        f'[agents.news]\nsource = "corpus"\npath = {json.dumps(str(news))}\nverifier = "lexical"\n'
    )
    settings = ServerSettings(
        api_keys=(KEY,),
        cors_origins=(f"chrome-extension://{ext.id}",),
        profile="offline",
        config=str(config),
        rate_per_minute=0,
        max_text_chars=MAX_TEXT_CHARS,
    )
    with serve_in_thread(create_app(settings)) as url:
        yield url


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeServer]:
    server = FakeServer()
    yield server
    for gate in [*server.hold.values(), *(killed for _, killed in server.kill.values())]:
        gate.set()
    server.httpd.shutdown()
    server.httpd.server_close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_checked_selection_shows_verdict_legend_evidence_and_highlights(
    ext: Extension, server: str, pages: str, artifacts: Path
) -> None:
    browser = ext.browser
    # Options: the server URL and key, saved in extension storage through the page's own form.
    browser.switch_to.window(ext.control)
    browser.get(f"chrome-extension://{ext.id}/options.html")
    wait_for(browser, "document.getElementById('server').value")
    browser.execute_script("document.getElementById('server').value = arguments[0]", server)
    browser.find_element("id", "apiKey").send_keys(KEY)
    # The save's storage as slow as on a loaded machine (this once): "Saving…" shows first, for a while.
    # Wait for the status to settle, then read it (the first value read was once "Saving…").
    browser.execute_script(
        "const storage = chrome.storage.local; const set = storage.set;"
        "storage.set = (items) => { storage.set = set;"
        " return new Promise((done) => setTimeout(done, 300)).then(() => set.call(storage, items)); };"
    )
    browser.find_element("id", "save").click()
    status = "document.getElementById('status')"
    assert wait_for(browser, f"{status}.dataset.state !== 'busy' && {status}.textContent") == "Saved."

    article, tab = ext.open(f"{pages}/article.html")
    text = ext.select(article, "article")
    expected = httpx.post(
        f"{server}/v1/check", json={"text": text}, headers={"Authorization": f"Bearer {KEY}"}, timeout=60
    ).json()
    started = ext.check_selection(tab)
    assert started["text"] == text
    state = ext.wait_state(tab)
    assert state["status"] == "done", state["error"]
    # The text's label is composed from its claims' (the server's default rule; the extension composes
    # it for a server that labels by another rule).
    label = compose(expected["claims"])
    if expected.get("labels") == "compose":
        assert expected["label"] == label
    # The server cautions that the corpus agent's SciFact abstracts are biomedicine only: an asterisk (issue 41).
    ext.wait_badge(tab, BADGES[label] + ("*" if expected["judged_by"]["caution"] else ""))

    view = ext.popup(tab)
    assert view["label"] == label
    assert view["score"] == f"score {expected['score']:.2f}"
    assert "label was composed" in view["composition"]
    verified = sum(c["score"] is not None for c in expected["claims"])
    skipped = f", {len(expected['skipped'])} sentences skipped" if len(expected["skipped"]) > 1 else ""
    skipped = ", 1 sentence skipped" if len(expected["skipped"]) == 1 else skipped
    assert view["composition"].endswith(f" {verified} of {len(expected['claims'])} claims verified{skipped}.")
    if expected.get("judged_by"):  # a server that says who judged (older ones do not)
        # The offline profile's SciFact abstracts, and the news corpus by its file name, not the server's path.
        assert view["judged"].startswith("Judged by: offline profile, corpus SciFact abstracts")
        assert view["judged"].endswith(", corpus news.jsonl")
        # Its caution (SciFact is biomedical only), with the docs' advice for web pages.
        assert view["caution"].startswith(expected["judged_by"]["caution"])
        assert "--profile wiki" in view["caution"]
    assert view["status"] == "4 claims checked", view["status"]
    assert view["context"].startswith("Selection on “An article” (127.0.0.1:")  # which page the result is of
    assert "“Statins lower LDL cholesterol. Smoking" in view["context"]
    # The legend explains the labels, the score and an agent's "true (0.55)".
    assert view["legend"]["open"]
    for words in ("UNVERIFIED", "does not mean false", "from 0 (surely false) to 1", "true (0.55)", "weak"):
        assert words in view["legend"]["text"], words
    assert [c["text"] for c in view["claims"]] == [c["text"] for c in expected["claims"]]
    assert [c["label"] for c in view["claims"]] == [c["label"] for c in expected["claims"]]
    labels = [c["label"] for c in expected["claims"]]
    assert "UNVERIFIED" in labels and "TRUE" in labels and "FALSE" in labels
    # Weak verdicts (the two agents disagree on statins) are marked weak; the others are not.
    weak = [0.25 < c["score"] < 0.75 if c["score"] is not None else False for c in expected["claims"]]
    assert any(weak) and not all(weak)
    assert [c["strength"] == "weak" for c in expected["claims"]] == weak  # the server says so by the same rule
    assert [c["weak"] for c in view["claims"]] == weak
    assert [c["strength"] for c in view["claims"]] == ["weak" if w else None for w in weak]
    for shown, claim in zip(view["claims"], expected["claims"], strict=True):
        assert shown["open"] in (False, None)  # evidence collapsed by default
        assert [a.split(":")[0] for a in shown["agents"]] == [j["agent"] for j in claim["judgments"]]
        documents: dict[tuple[str, str | None], int] = {}
        for evidence in (e for j in claim["judgments"] for e in j["evidence"]):
            key = (evidence["title"] or evidence["url"] or evidence["source"], evidence["url"])
            documents[key] = documents.get(key, 0) + 1
        # Each document once per agent (here the agents cite different documents), with its passage count.
        assert sorted(shown["evidence"]) == sorted(
            name + (f" · {n} passages" if n > 1 else "") for (name, _), n in documents.items()
        )
        for passage, judgment in zip(
            shown["passages"], [j for j in claim["judgments"] if j["factuality"] is not None], strict=True
        ):
            # The deciding passage's text, with the sentence the rationale quotes marked.
            assert passage["quote"] and f'"{passage["quote"]}' in judgment["rationale"]
            assert passage["quote"] in passage["text"]
            assert any(passage["quote"] in e["text"] for e in judgment["evidence"])
    every = [e for c in expected["claims"] for j in c["judgments"] for e in j["evidence"]]
    assert len({(e["title"], e["url"]) for e in every}) < len(every)  # a document with two passages...
    assert all(len(c["evidence"]) == len(set(c["evidence"])) for c in view["claims"])  # ... is listed once
    assert any("https://health.example.org/statins" in c["links"] for c in view["claims"])
    assert any(p["link"] == "https://health.example.org/statins" for c in view["claims"] for p in c["passages"])

    # The screenshot: the weak claim's evidence opened, the others collapsed, the legend below.
    weak_claim = weak.index(True)
    browser.execute_script(f"document.querySelectorAll('details.why')[{weak_claim}].open = true")
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(480, min(height + 140, 2400))
    screenshot = artifacts / "extension-popup.png"
    browser.save_screenshot(str(screenshot))
    browser.set_window_size(480, 1000)
    assert screenshot.stat().st_size > 10_000

    # The claims are highlighted on the page by their spans, across the <b> element, with an icon
    # (a non-colour cue) on each claim's first mark; the page's text is unchanged.
    found = settled_marks(browser, article, state)
    assert {key.split()[1]: m["text"] for key, m in found.items()} == {c["id"]: c["text"] for c in expected["claims"]}
    for claim, is_weak in zip(expected["claims"], weak, strict=True):
        (shown,) = [m for key, m in found.items() if key.endswith(f" {claim['id']}")]
        assert f"factcheck-{claim['label'].lower()}" in shown["classes"]
        assert ("factcheck-weak" in shown["classes"]) == is_weak
    icons = browser.execute_script(
        "return [...document.querySelectorAll('mark.factcheck-first')].map("
        "(m) => getComputedStyle(m, '::before').content)"
    )
    assert sorted(icons) == sorted(
        {"TRUE": '"✓"', "FALSE": '"✗"', "UNVERIFIED": '"?"'}[c["label"]] for c in expected["claims"]
    )
    assert browser.execute_script("return document.getElementById('article').textContent") == text
    ext.select(article, None)
    browser.set_window_size(480, 330)
    browser.save_screenshot(str(artifacts / "extension-page.png"))
    browser.set_window_size(480, 1000)

    # The popup's own form checks a pasted text, kept as this tab's result and saying it was pasted.
    browser.switch_to.new_window("tab")
    browser.get(f"chrome-extension://{ext.id}/popup.html?tab={tab}")
    browser.find_element("id", "text").send_keys("Vitamin D supplementation reduces the risk of fractures.")
    browser.find_element("id", "check").click()
    wait_for(browser, "document.getElementById('status').textContent === '1 claim checked'")
    view = popup_view(browser)
    assert [c["text"] for c in view["claims"]] == ["Vitamin D supplementation reduces the risk of fractures."]
    assert view["context"].startswith("Pasted text")


def test_only_rendered_text_is_checked_with_block_breaks_and_never_marked_inside_hidden_nodes(
    ext: Extension, fake: FakeServer, pages: str
) -> None:
    ext.use(fake.url)
    handle, tab = ext.open(f"{pages}/minified.html")
    shown = ext.select(handle, "story")
    started = ext.check_selection(tab)
    # The heading is no claim: left out (issue 41), yet it ends no sentence inside one.
    visible = (
        "Statins lower LDL cholesterol.\n\nVitamin D helps bones.\n\n"
        "Obesity does not increase risk.\n\nExercise helps\nthe heart.\n\nTea has caffeine.\tMilk has calcium."
    )
    assert started["text"] == visible
    # The browser's own selection string has the same words, and also the aria-hidden stars and the
    # screen-reader-only link (read aloud, never seen), which the extension leaves out.
    assert "★★★" in shown and "Skip to content." in shown
    assert squash(shown.replace("★★★", "").replace("Skip to content.", "")) == squash("Cholesterol drugs" + visible)
    state = ext.wait_state(tab)
    assert state["status"] == "done"
    assert fake.texts[-1] == visible
    found = settled_marks(ext.browser, handle, state)
    claims = {c["id"]: c["text"] for c in state["verdict"]["claims"]}
    assert len(claims) == 6
    assert {key.split()[1]: squash(m["text"]) for key, m in found.items()} == {k: squash(v) for k, v in claims.items()}
    outside = ext.browser.execute_script(
        """return [...document.querySelectorAll('mark')].filter((m) =>
            m.closest('script, style, template, [hidden], [aria-hidden="true"]') || !m.checkVisibility()
            || m.parentElement.closest('mark')).length"""
    )
    assert outside == 0
    assert ext.browser.execute_script("return document.querySelector('script').textContent") == (
        'window.__ad={"copy":"Statins cure cancer."};'
    )


def test_claims_are_marked_as_their_events_arrive_with_a_badge_while_checking(
    ext: Extension, fake: FakeServer, pages: str
) -> None:
    ext.use(fake.url)
    gate = fake.hold.setdefault("Gamma", threading.Event())
    handle, tab = ext.open(f"{pages}/two.html")
    ext.select(handle, "p2")
    check = ext.check_selection(tab)["checkId"]
    # The first claim's event has come, the second's not: c1 is labelled on the page, c2 marked as pending.
    ext.browser.switch_to.window(handle)
    wait_for(ext.browser, "document.querySelector('mark.factcheck-true')")
    found = marks(ext.browser, handle)
    assert found[f"{check} c1"]["label"] == "TRUE" and "factcheck-pending" not in found[f"{check} c1"]["classes"]
    assert "factcheck-pending" in found[f"{check} c2"]["classes"]
    assert ext.state(tab)["status"] == "checking"
    ext.wait_badge(tab, "1/2")  # set just after the page is told
    gate.set()
    state = ext.wait_state(tab)
    ext.wait_badge(tab, "PT")
    found = settled_marks(ext.browser, handle, state)
    assert found[f"{check} c2"]["label"] == "FALSE" and "factcheck-pending" not in found[f"{check} c2"]["classes"]


def test_two_overlapping_checks_each_mark_their_own_text_and_a_recheck_never_nests(
    ext: Extension, fake: FakeServer, pages: str
) -> None:
    ext.use(fake.url)
    gate = fake.hold.setdefault("Alpha", threading.Event())
    handle, tab = ext.open(f"{pages}/two.html")
    ext.select(handle, "p1")
    first = ext.check_selection(tab)
    ext.select(handle, "p2")  # a second check while the first is still running
    second = ext.check_selection(tab)
    assert (first["text"], second["text"]) == (
        "Alpha is first. Beta is maybe second.",
        "Gamma is third. Delta is not fourth.",
    )
    ext.wait_state(tab, check_id=second["checkId"])
    gate.set()
    found = wait_until(
        lambda: marks(ext.browser, handle),
        lambda found: all(found.get(f"{check['checkId']} c2", {}).get("label") for check in (first, second)),
        "both checks' second claims labelled on the page",
    )
    assert {key: m["text"] for key, m in found.items()} == {
        f"{first['checkId']} c1": "Alpha is first.",
        f"{first['checkId']} c2": "Beta is maybe second.",
        f"{second['checkId']} c1": "Gamma is third.",
        f"{second['checkId']} c2": "Delta is not fourth.",
    }
    assert (
        found[f"{first['checkId']} c2"]["label"] == "TRUE"
        and "factcheck-weak" in found[f"{first['checkId']} c2"]["classes"]
    )
    assert found[f"{second['checkId']} c2"]["label"] == "FALSE"
    # The popup and badge follow the newest check of the tab, not the one that ended last.
    assert ext.state(tab)["checkId"] == second["checkId"]

    # Re-checking the highlighted paragraphs: the new highlights replace the old ones, never inside them.
    ext.select(handle, "both")
    third = ext.check_selection(tab)
    assert third["text"] == f"{first['text']}\n\n{second['text']}"
    found = settled_marks(ext.browser, handle, ext.wait_state(tab, check_id=third["checkId"]))
    assert {key: m["text"] for key, m in found.items()} == {
        f"{third['checkId']} c{n}": sentence
        for n, sentence in enumerate(
            ["Alpha is first.", "Beta is maybe second.", "Gamma is third.", "Delta is not fourth."], 1
        )
    }
    assert ext.browser.execute_script("return document.querySelectorAll('mark mark').length") == 0
    assert ext.browser.execute_script("return document.getElementById('both').textContent") == (
        "Alpha is first. Beta is maybe second.Gamma is third. Delta is not fourth."
    )


def test_results_are_kept_per_tab_and_say_which_page_they_belong_to(
    ext: Extension, fake: FakeServer, pages: str
) -> None:
    ext.use(fake.url)
    page_a, tab_a = ext.open(f"{pages}/a.html")
    page_b, tab_b = ext.open(f"{pages}/b.html")
    _, tab_c = ext.open(f"{pages}/a.html?unchecked")
    for handle, tab in ((page_a, tab_a), (page_b, tab_b)):
        ext.select(handle, "text")
        ext.check_selection(tab)
        ext.wait_state(tab)
    view_a, view_b, view_c = ext.popup(tab_a), ext.popup(tab_b), ext.popup(tab_c)
    assert [c["text"] for c in view_a["claims"]] == ["Apples grow on trees."]
    assert view_a["context"].startswith("Selection on “Page A”")
    assert [c["text"] for c in view_b["claims"]] == ["Bananas are not berries.", "Cherries are red."]
    assert view_b["context"].startswith("Selection on “Page B”")
    assert (ext.wait_badge(tab_a, "T"), ext.wait_badge(tab_b, "PT")) == ("T", "PT")
    assert view_c["claims"] == [] and view_c["status"].startswith("No check in this tab yet")
    assert ext.badge(tab_c) == ""


def test_popup_shows_the_servers_notes(ext: Extension, fake: FakeServer, pages: str) -> None:
    ext.use(fake.url)
    fake.notes = [
        "skipped 2 sentences that are questions or fragments",
        {"sentence": "Is it?", "reason": "a question"},
        "<b>language</b> not supported: German (de)",
    ]
    fake.claim_notes = ["cut to 1 claim by max_claims"]
    try:
        handle, tab = ext.open(f"{pages}/a.html?notes")
        ext.select(handle, "text")
        ext.check_selection(tab)
        ext.wait_state(tab)
        view = ext.popup(tab)
    finally:
        fake.notes, fake.claim_notes = [], []
    # A note that is not a string is shown by its fields (extension storage may reorder them).
    assert sorted(view["notes"][1].split("; ")) == ["reason: a question", "sentence: Is it?"]
    assert view["notes"][:1] + view["notes"][2:] == [
        "skipped 2 sentences that are questions or fragments",
        "<b>language</b> not supported: German (de)",
        "Apples grow on trees.: cut to 1 claim by max_claims",
    ]
    assert ext.browser.execute_script("return document.querySelectorAll('#notes b').length") == 0


def test_popup_shows_when_a_claim_speaks_of_and_each_passages_date_and_mark(
    ext: Extension, fake: FakeServer, pages: str
) -> None:
    ext.use(fake.url)
    late = "dated 2024-03-01, more than a year after the time the claim speaks of (2014-05-10)"
    passage = {"source": "web", "text": "Passage."}
    then = {**passage, "title": "Then", "url": "https://a.example/1", "published_at": "2014-05-01"}
    now = {**passage, "title": "Now", "url": "https://b.example/2", "published_at": "2024-03-01", "time_note": late}
    evidence = [then, now]
    judgment = {"agent": "web", "factuality": True, "confidence": 0.8, "rationale": "r", "evidence": evidence}
    fake.claim_extra = {
        "time": {"start": "2014-05-10", "end": "2014-05-10", "phrase": "currently", "kind": "present"},
        "judgments": [{**judgment, "error": None}],
    }
    try:
        handle, tab = ext.open(f"{pages}/a.html?time")
        ext.select(handle, "text")
        ext.check_selection(tab)
        ext.wait_state(tab)
        view = ext.popup(tab)
    finally:
        fake.claim_extra = {}
    claim = view["claims"][0]
    assert claim["time"] == 'Speaks of 2014-05-10 ("currently")'
    assert claim["evidence"] == ["Then · dated 2014-05-01", f"Now · dated 2024-03-01 · of another time: {late}"]


def test_badge_and_a_visible_error_on_each_error(ext: Extension, server: str, pages: str, artifacts: Path) -> None:
    handle, tab = ext.open(f"{pages}/long.html")
    cases = [
        ("wrong key", server, "not-the-key", "text", "the server answered 401"),
        ("server down", f"http://127.0.0.1:{closed_port()}", KEY, "text", "cannot reach http://127.0.0.1:"),
        ("text too long", server, KEY, "text", "the server answered 413"),
        ("nothing selected", server, KEY, None, "nothing selected"),
    ]
    for case, url, key, selected, message in cases:
        ext.use(url, key)
        ext.select(handle, selected)
        check = ext.check_selection(tab)["checkId"]
        state = ext.wait_state(tab, check_id=check)
        assert state["status"] == "error", case
        assert message in state["error"], (case, state["error"])
        ext.wait_badge(tab, "!")
        title = ext.call("return await chrome.action.getTitle({tabId: args[0]});", tab)
        assert title == f"factcheck: error: {state['error']}", case
        view = ext.popup(tab)
        assert view["state"] == "error" and view["status"] == f"Error: {state['error']}", case
        if case == "wrong key":
            assert "check the API key" in view["status"]
            ext.browser.set_window_size(480, 420)
            ext.browser.save_screenshot(str(artifacts / "extension-error.png"))
            ext.browser.set_window_size(480, 1000)
        ext.browser.switch_to.window(handle)
        assert ext.browser.execute_script("return document.querySelectorAll('mark').length") == 0, case


def test_test_connection_tests_what_is_typed_and_a_failed_save_clears_the_status(ext: Extension, server: str) -> None:
    down = f"http://127.0.0.1:{closed_port()}"
    ext.use(down, "old-key")
    browser = ext.browser
    browser.switch_to.window(ext.control)
    browser.get(f"chrome-extension://{ext.id}/options.html")
    wait_for(browser, "document.getElementById('server').value")
    status = "document.getElementById('status').textContent"

    def test_typed(url: str, key: str) -> str:
        browser.execute_script(
            "document.getElementById('server').value = arguments[0];"
            "document.getElementById('apiKey').value = arguments[1];"
            "document.getElementById('status').textContent = '';"
            "delete document.getElementById('status').dataset.state;",
            url,
            key,
        )
        browser.find_element("id", "test").click()
        return str(wait_for(browser, f"document.getElementById('status').dataset.state !== 'busy' && {status}"))

    assert test_typed(server, KEY) == "Connected: default profile offline. (these settings are not saved yet)"
    assert test_typed(server, "wrong-key").startswith("Not connected: the server answered 401")
    assert test_typed(down, "old-key").startswith(f"Cannot reach {down}")
    saved = ext.call("return await chrome.storage.local.get(['server', 'apiKey']);")
    browser.switch_to.window(ext.control)
    assert saved == {"server": down, "apiKey": "old-key"}  # testing saves nothing

    assert test_typed(server, KEY).startswith("Connected")
    browser.find_element("id", "server").clear()
    browser.find_element("id", "server").send_keys("not a url")
    browser.find_element("id", "save").click()
    assert "Connected" not in browser.execute_script(f"return {status}")
    assert "not a valid URL" in browser.execute_script(f"return {status}")
    saved = ext.call("return await chrome.storage.local.get(['server', 'apiKey']);")
    assert saved == {"server": down, "apiKey": "old-key"}


def test_popup_renders_untrusted_evidence_as_text(ext: Extension) -> None:
    browser = ext.browser
    hostile = "<img src=x onerror=\"document.title='owned'\">"
    claim = {
        "id": "c1",
        "text": f"A claim {hostile}",
        "span": None,
        "label": "TRUE",
        "score": 0.9,
        "notes": [hostile],
        "judgments": [
            {
                "agent": "web",
                "factuality": True,
                "confidence": 0.9,
                "rationale": f'quotes "A sentence with {hostile} in it."',
                "error": None,
                "evidence": [
                    {
                        "source": "web",
                        "title": hostile,
                        "url": "javascript:alert(1)",
                        "text": f"Before. A sentence with {hostile} in it. After.",
                    },
                    {"source": "web", "title": "A real page", "url": "https://example.org/a", "text": "x"},
                ],
            }
        ],
    }
    verdict = {"label": "TRUE", "score": 0.9, "claims": [claim], "partial": False, "usage": {"notes": [hostile]}}
    state = {
        "status": "done",
        "kind": "selection",
        "text": "x",
        "title": hostile,
        "url": "javascript:alert(1)",
        "claims": [claim],
        "verdict": verdict,
        "error": None,
        "notes": [hostile],
    }
    ext.call("await chrome.storage.session.set({'check:tab:999999': args[0]});", state)
    view = ext.popup(999999)
    assert browser.execute_script("return document.querySelectorAll('body img').length") == 0
    assert view["claims"][0]["text"] == f"A claim {hostile}"
    assert view["claims"][0]["links"] == ["https://example.org/a"]  # the javascript: URL is not a link
    assert view["claims"][0]["passages"][0]["quote"] == f"A sentence with {hostile} in it."
    assert view["claims"][0]["passages"][0]["link"] is None
    assert hostile in browser.execute_script("return document.querySelector('.evidence').textContent")
    assert hostile in view["notes"][0] and hostile in view["context"]
    assert browser.title != "owned"


# Whether a mark shows text a reader can see: a letter or digit, in a box of some area that the page lays out.
MARK_SEEN = f"""return {ALL_MARKS}.map((mark) => ({{
    text: mark.textContent,
    letters: /[\\p{{L}}\\p{{N}}]/u.test(mark.textContent),
    area: [...mark.getClientRects()].some((r) => r.width > 0 && r.height > 0 && r.right > 0 && r.bottom > 0),
    shadow: mark.getRootNode() instanceof ShadowRoot,
    background: getComputedStyle(mark).backgroundColor,
    icon: getComputedStyle(mark, '::before').content,
}}))"""


def test_text_the_reader_cannot_see_is_left_out_and_shadow_root_text_is_checked_and_marked(
    ext: Extension, fake: FakeServer, pages: str
) -> None:
    ext.use(fake.url)
    handle, tab = ext.open(f"{pages}/hidden.html")
    ext.select(handle, "news")
    started = ext.check_selection(tab)
    shown = [
        "Gradient headings are shown.",
        "Sunlight helps the body make vitamin D..",  # the off-screen sentence's full stop is on the page
        "Scrolled text is shown.",
        "Text to scroll to is shown.",
        "Shadow text is shown.",
        "Slotted text is shown.",
        "Last text is shown.",
    ]
    assert started["text"] == "\n\n".join(shown)
    state = ext.wait_state(tab)
    claims = [c["text"] for c in state["claims"]]
    assert claims == [sentence.rstrip(".") + "." for sentence in shown]  # the stray full stop is no claim
    found = settled_marks(ext.browser, handle, state)
    assert sorted(m["text"] for m in found.values()) == sorted(claims)
    # Every mark holds words the reader sees (no stray "." or empty striped mark); those in the shadow
    # root are styled as the page's, icon included.
    seen = ext.browser.execute_script(MARK_SEEN)
    assert all(mark["letters"] and mark["area"] for mark in seen), seen
    assert {mark["background"] for mark in seen} == {"rgb(178, 242, 187)"}  # TRUE's green, in and out of the shadow
    # (The slotted text is the page's own: its mark is in the document.)
    assert [mark["text"] for mark in seen if mark["shadow"]] == ["Shadow text is shown."]
    assert {mark["icon"] for mark in seen if mark["shadow"]} == {'"✓"'}
    page_text = ext.browser.execute_script("return document.getElementById('news').textContent")
    assert "Vitamin D cures cancer." in page_text  # the page's text is unchanged


def test_a_selection_in_an_iframe_is_checked_and_marked_in_that_frame(
    ext: Extension, fake: FakeServer, pages: str
) -> None:
    ext.use(fake.url)
    handle, tab = ext.open(f"{pages}/framed.html")
    frame = ext.frame_id(tab, "/frame.html")
    inner = "Frame text is checked. Frame text is not ignored."
    # Only the iframe holds a selection: the menu, opened in that frame, checks and marks it there.
    assert ext.select(handle, "inner", frame="frame") == inner
    menu = ext.check_selection(tab, frame)
    assert (menu["text"], menu.get("frameId")) == (inner, frame)
    state = ext.wait_state(tab, check_id=menu["checkId"])
    assert state["status"] == "done", state["error"]
    found = settled_marks(ext.browser, handle, state, frame="frame")
    assert {m["text"]: m["label"] for m in found.values()} == {
        "Frame text is checked.": "TRUE",
        "Frame text is not ignored.": "FALSE",
    }
    assert ext.popup(tab)["context"].startswith("Selection in a frame on “Frame” (127.0.0.1:")

    # The page keeps an older selection when the reader selects in the iframe: the popup's button checks
    # the iframe's, which has the focus, and marks it there; nothing is marked in the page.
    ext.select(handle, "top")
    ext.select(handle, "inner", frame="frame")
    button = ext.check_selection(tab)
    assert (button["text"], button.get("frameId")) == (inner, frame)
    state = ext.wait_state(tab, check_id=button["checkId"])
    found = settled_marks(ext.browser, handle, state, frame="frame")
    assert sorted(key.split()[0] for key in found) == [button["checkId"]] * 2  # the new marks replaced the old
    assert marks(ext.browser, handle) == {}

    # The iframe loads another page: its result, of a document that is gone, is cleared.
    ext.browser.switch_to.window(handle)
    ext.browser.execute_script("document.getElementById('frame').src = 'frame.html?next'")
    wait_until(lambda: ext.state(tab), lambda state: state is None, "the frame's result cleared")


def test_the_popup_and_badge_show_the_composed_label_how_it_was_composed_and_who_judged(
    ext: Extension, fake: FakeServer, pages: str
) -> None:
    ext.use(fake.url)
    _, tab = ext.open(f"{pages}/a.html?label")
    caution = (
        "Judged only against SciFact abstracts (5,183 biomedical research abstracts): a claim outside biomedicine"
        " gets a verdict from unrelated passages or none; for general pages use --profile wiki (keyless) or"
        " --profile paper (with keys)."
    )
    corpus = {"name": "corpus", "source": "corpus", "verifier": "nli", "domain": "biomedical"}
    judged_by = {
        "profile": "offline",
        "agents": [{**corpus, "corpus": "SciFact abstracts (5,183 biomedical research abstracts)"}],
        "caution": caution,
    }
    cases = [
        # Three FALSE claims that a server thresholding the mean labelled "TRUE 0.68" (as the report saw).
        (
            "Salt is not sweet. Ice is not hot. Snow is not black.",
            {"label": "TRUE", "labels": "threshold", "score": 0.68},
        ),
        # The server's own compose rule, one claim weak; a server that says who judged and warns.
        ("Tea is maybe hot. Milk is white.", {"judged_by": judged_by}),
        # An older server: no rule named, no judged_by.
        ("Salt is salty. Sugar is not salty.", {"label": "TRUE", "labels": None}),
    ]
    views = []
    for text, extra in cases:
        fake.verdict_extra = extra
        try:
            ext.call(
                "await chrome.runtime.sendMessage({type: 'check-text', text: args[0], tabId: args[1]});", text, tab
            )
            state = wait_until(
                lambda: ext.state(tab), lambda s, text=text: s and s["text"] == text and s["status"] == "done", text
            )
        finally:
            fake.verdict_extra = {}
        footnote = "*" if "judged_by" in extra else ""  # a caution marks the badge's label (issue 41 item 6)
        views.append((ext.popup(tab), ext.wait_badge(tab, BADGES[compose(state["claims"])] + footnote)))
    (threshold, badge), (composed, _), (older, _) = views

    assert (threshold["label"], threshold["strength"], badge) == ("FALSE", "", "F")  # never "TRUE 0.68 weak", "T"
    assert [c["label"] for c in threshold["claims"]] == ["FALSE"] * 3
    assert (
        threshold["labelRule"] == "Composed here from the claims' labels: the server said TRUE by the “threshold” rule."
    )
    assert threshold["composition"].startswith("This text's label was composed here from its claims' labels: TRUE when")
    assert threshold["judged"] is None and threshold["caution"] is None  # a server that does not say

    # Weak: a TRUE text with a weak claim, by the server's compose rule, judged by the offline profile.
    assert (composed["label"], composed["strength"], composed["labelRule"]) == ("TRUE", "weak", None)
    assert composed["composition"].startswith("This text's label was composed by the server's “compose” rule")
    assert (
        composed["judged"]
        == "Judged by: offline profile, corpus SciFact abstracts (5,183 biomedical research abstracts)"
    )
    assert composed["caution"] == caution and "--profile wiki" in composed["caution"]

    assert (older["label"], older["strength"]) == ("PARTLY TRUE", "")
    assert older["labelRule"] == (
        "Composed here from the claims' labels: the server said TRUE by a rule it did not name (an older server)."
    )


def checked(state: dict[str, Any]) -> int:
    """How many of a check's claims have their verdict."""
    return sum(not claim.get("pending") and not claim.get("unchecked") for claim in state["claims"])


def test_a_server_lost_mid_check_keeps_the_finished_claims_and_offers_a_retry(
    ext: Extension, fake: FakeServer, pages: str
) -> None:
    ext.use(fake.url)
    killed = threading.Event()
    fake.kill["Claim 50 is"] = (4, killed)
    try:
        handle, tab = ext.open(f"{pages}/fifty.html")
        ext.select(handle, "text")
        check = ext.check_selection(tab)["checkId"]
        # The server dies once the extension has the first four verdicts (not before it has read them).
        wait_until(lambda: ext.state(tab), lambda state: state and checked(state) == 4, "four claims checked")
        killed.set()
        state = ext.wait_state(tab, check_id=check)
    finally:
        fake.kill.clear()
    assert state["status"] == "error"
    assert state["error"].startswith("the connection to the server was lost after 4 of 50 claims"), state["error"]
    assert state["error"].endswith("the 4 checked are kept, the other 46 were not checked"), state["error"]
    ext.wait_badge(tab, "!")
    # The page keeps the four verdicts' marks; the others lose their "checking" marks.
    found = wait_until(
        lambda: marks(ext.browser, handle),
        lambda found: not any("factcheck-pending" in m["classes"] for m in found.values()),
        "no claim left marked as being checked",
    )
    assert sorted(found) == sorted(f"{check} c{n}" for n in range(1, 5))
    view = ext.popup(tab)
    assert view["status"] == f"Error: {state['error']}"
    assert [c["label"] for c in view["claims"]] == ["TRUE"] * 4 + ["NOT CHECKED"] * 46  # never "…" forever
    assert view["retry"]

    # Retry, the server back: the same text, checked again and marked on the same capture.
    ext.browser.find_element("id", "retry").click()
    wait_for(ext.browser, "document.getElementById('status').textContent === '50 claims checked'")
    assert not popup_view(ext.browser)["retry"]
    assert fake.texts[-1] == fake.texts[-2]
    found = settled_marks(ext.browser, handle, ext.wait_state(tab, ("done",)))
    assert sorted(m["label"] for m in found.values()) == ["TRUE"] * 50
    assert ext.browser.execute_script("return document.querySelectorAll('mark mark').length") == 0


def test_a_tab_that_loads_another_page_no_longer_shows_the_old_result(
    ext: Extension, fake: FakeServer, pages: str
) -> None:
    ext.use(fake.url)
    handle, tab = ext.open(f"{pages}/a.html?navigate")
    ext.select(handle, "text")
    ext.check_selection(tab)
    ext.wait_state(tab)
    ext.wait_badge(tab, "T")
    # A fragment is the same document: its marks are there, and so is its result.
    ext.browser.switch_to.window(handle)
    ext.browser.execute_script("location.hash = 'later'")
    assert [c["text"] for c in ext.popup(tab)["claims"]] == ["Apples grow on trees."]
    ext.browser.switch_to.window(handle)
    ext.browser.get(f"{pages}/b.html")
    wait_until(lambda: ext.state(tab), lambda state: state is None, "the old page's result cleared")
    view = ext.popup(tab)
    assert view["claims"] == [] and view["status"].startswith("No check in this tab yet")
    assert ext.badge(tab) == ""


def test_popup_shows_untrusted_text_without_bidirectional_controls(ext: Extension) -> None:
    # U+202E makes "\u202egnp.exe" read "exe.png"; each control, in every kind of untrusted text.
    controls = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    spoof = "\u202egnp.exe"
    evidence = {"source": "web", "title": spoof, "url": "https://example.org/a", "text": f"Said {controls}here."}
    judgment = {"agent": f"web{controls}", "factuality": True, "confidence": 0.9, "rationale": f"see {spoof}"}
    claim = {
        "id": "c1",
        "text": f"Open {spoof} now.",
        "span": None,
        "label": "TRUE",
        "score": 0.9,
        "notes": [f"note {spoof}"],
        "judgments": [{**judgment, "error": None, "evidence": [evidence]}],
    }
    judged_by = {"profile": f"off{controls}line", "agents": [], "caution": f"careful {spoof}"}
    verdict = {"label": "TRUE", "labels": "compose", "score": 0.9, "claims": [claim], "judged_by": judged_by}
    state = {"status": "done", "kind": "selection", "text": spoof, "title": spoof, "url": None, "claims": [claim]}
    state |= {"verdict": verdict, "error": None, "notes": [spoof]}
    ext.call("await chrome.storage.session.set({'check:tab:999998': args[0]});", state)
    view = ext.popup(999998)
    shown = ext.browser.execute_script("return document.body.textContent")
    assert not re.search(f"[{controls}]", shown)
    assert view["claims"][0]["text"] == "Open gnp.exe now."
    assert view["claims"][0]["evidence"] == ["gnp.exe"]
    assert view["caution"].startswith("careful gnp.exe For general web pages")  # the docs' advice added
    assert view["judged"] == "Judged by: offline profile"
    assert ext.browser.execute_script("return document.querySelector('.rationale').textContent") == "see gnp.exe"
    # Each untrusted string takes its direction from its own text, isolated from what is around it.
    directions = ext.browser.execute_script(
        "return [...document.querySelectorAll('.claim-text, .source-name, .rationale, #notes li')].map((e) => e.dir)"
    )
    assert directions and set(directions) == {"auto"}


# A claim's deliberation (issue 27), as Deliberation.to_dict() gives it: a challenge and the leader's revision.
COUNTER: dict[str, Any] = {
    "source": "web",
    "title": "Trial X",
    "url": "https://example.org/x",
    "text": "Statins did not lower LDL.",
}
STEPS: list[dict[str, Any]] = [
    {
        "number": 1,
        "action": "challenge",
        "role": "devil's advocate",
        "actor": "verifier:lexical",
        "judgment": None,
        "critique": {"weak_point": "rests on one review", "counter": [COUNTER], "hints": [], "query": "statins no"},
        "query": None,
        "evidence": [],
        "inputs": ["judgment:web"],
        "relied_on": [],
        "replaces": None,
        "cost": {"calls": 2, "passages": 3, "llm_calls": 0, "tokens": 0, "cost_usd": 0.0, "seconds": 0.01},
        "error": None,
    },
    {
        "number": 2,
        "action": "revise",
        "role": "leader",
        "actor": "web",
        "judgment": {
            "agent": "web",
            "factuality": False,
            "confidence": 0.8,
            "rationale": "trial X says no",
            "evidence": [COUNTER],
            "error": None,
        },
        "critique": None,
        "query": None,
        "evidence": [],
        "inputs": ["judgment:web", "critique:1"],
        "relied_on": ["critique:1"],
        "replaces": "web",
        "cost": {"calls": 1, "passages": 1, "llm_calls": 0, "tokens": 0, "cost_usd": 0.0, "seconds": 0.01},
        "error": None,
    },
]
SETTLED: dict[str, Any] = {
    "policy": "lase",
    "options": {},
    "state": {"leader": "web"},
    "gated": "the leader is unsure: confidence 0.55 < tau_conf 0.6",
    "steps": STEPS,
    "stopped": "the leader is sure after revising",
    "replaced": [],
    "replayed": False,
}
DELIBERATION_VIEW = """return [...document.querySelectorAll('#claims > li.claim')].map((claim) => {
    const details = claim.querySelector('details.deliberation');
    return {
      open: details?.open ?? null,
      summary: details?.querySelector('summary')?.textContent ?? null,
      why: details?.querySelector('.deliberation-why')?.textContent ?? null,
      steps: [...(details?.querySelectorAll('.step') ?? [])].map((step) => step.innerText.split('\\n')),
      stopped: details?.querySelector('.deliberation-stopped')?.textContent ?? null,
      replayed: details?.querySelector('.deliberation-replayed')?.textContent ?? null,
      links: [...(details?.querySelectorAll('a') ?? [])].map((a) => a.href),
      none: claim.querySelector('.deliberation-none')?.textContent ?? null,
      deliberating: claim.querySelector('.deliberating')?.textContent ?? null,
    };
  })"""


def test_popup_shows_how_the_agents_settled_a_claim_collapsed_and_as_text(ext: Extension) -> None:
    hostile = "<img src=x onerror=\"document.title='owned'\">"
    steps = [
        {
            **STEPS[0],
            "critique": {
                **STEPS[0]["critique"],
                "weak_point": f"weak {hostile}",
                "counter": [{**COUNTER, "title": hostile}, {**COUNTER, "url": "javascript:alert(1)"}],
            },
        },
        {**STEPS[1], "error": f"failed {hostile}"},
    ]
    judgment = {"agent": "web", "factuality": False, "confidence": 0.8, "rationale": "r", "evidence": [], "error": None}
    base = {"span": None, "label": "FALSE", "score": 0.1, "notes": [], "judgments": [judgment]}
    claims = [
        {
            **base,
            "id": "c1",
            "text": "Statins lower LDL.",
            "deliberation": {**SETTLED, "steps": steps, "replayed": True},
        },
        {**base, "id": "c2", "text": "Smoking is healthy.", "deliberation": {**SETTLED, "gated": None, "steps": []}},
        {**base, "id": "c3", "text": "Salt is sweet."},  # no deliberation ran: nothing shown
    ]
    verdict = {"label": "FALSE", "labels": "compose", "score": 0.1, "claims": claims, "partial": False}
    state: dict[str, Any] = {
        "status": "done",
        "kind": "text",
        "text": "x",
        "title": None,
        "url": None,
        "claims": claims,
    }
    state |= {"verdict": verdict, "error": None, "notes": []}
    ext.call("await chrome.storage.session.set({'check:tab:999997': args[0]});", state)
    ext.popup(999997)
    first, second, third = ext.browser.execute_script(DELIBERATION_VIEW)
    assert first["open"] is False  # collapsed under the claim
    assert first["summary"] == "How the agents settled it (lase): 2 steps"
    assert first["why"] == "Why: the leader is unsure: confidence 0.55 < tau_conf 0.6"
    assert first["replayed"] == "Recorded steps kept, not re-run"
    assert first["stopped"] == "Stopped: the leader is sure after revising"
    ext.browser.execute_script("document.querySelector('details.deliberation').open = true")
    first = ext.browser.execute_script(DELIBERATION_VIEW)[0]
    assert first["steps"][0] == [
        "challenge · devil's advocate (verifier:lexical) · 2 calls",
        f"Weak point: weak {hostile}",
        f"Counter-evidence, from {hostile} · 1 more",
        "Statins did not lower LDL.",
        "Searched: statins no",
    ]
    assert first["steps"][1] == [
        "revise · leader (web): false (0.80), in place of its first answer · 1 call",
        "trial X says no",
        "Used the passage, from Trial X",  # the counter-evidence step 1 found (issue 41 item 16)
        "Statins did not lower LDL.",
        "Relied on: critique:1",
        f"failed {hostile}",
    ]
    assert first["links"] == ["https://example.org/x", "https://example.org/x"]
    assert ext.browser.execute_script("return document.querySelectorAll('body img').length") == 0
    assert ext.browser.title != "owned"
    assert (second["open"], second["none"]) == (None, "Deliberation (lase): settled in the first round")
    assert (third["open"], third["none"]) == (None, None)


def test_the_stream_s_deliberation_steps_show_as_progress_then_under_the_claim(
    ext: Extension, fake: FakeServer, pages: str
) -> None:
    ext.use(fake.url)
    gate = fake.hold.setdefault("Deliberated claims wait", threading.Event())
    fake.deliberation = STEPS
    fake.claim_extra = {"deliberation": SETTLED}
    try:
        _, tab = ext.open(f"{pages}/a.html?deliberation")
        text = "Settled claims come first. Deliberated claims wait."
        ext.call("await chrome.runtime.sendMessage({type: 'check-text', text: args[0], tabId: args[1]});", text, tab)
        held = wait_until(
            lambda: ext.state(tab),
            lambda s: (
                s and s["text"] == text and s["claims"] and s["claims"][-1].get("deliberating", {}).get("number") == 2
            ),
            "the held claim's deliberation progress",
        )
        assert held["status"] == "checking" and held["notes"] == []  # a step's event carries no notes
        assert held["claims"][-1]["deliberating"] == {"policy": "lase", "number": 2, "action": "revise"}
        ext.popup(tab)
        progress = ext.browser.execute_script(DELIBERATION_VIEW)
        assert progress[1]["deliberating"] == "Deliberating (lase)… step 2: revise"
        assert (
            progress[0]["summary"] == "How the agents settled it (lase): 2 steps"
            and progress[0]["deliberating"] is None
        )
        gate.set()
        state = wait_until(lambda: ext.state(tab), lambda s: s and s["text"] == text and s["status"] == "done", text)
    finally:
        fake.deliberation, fake.claim_extra = [], {}
        gate.set()
    assert state["error"] is None and all("deliberating" not in claim for claim in state["claims"])
    done = ext.popup(tab)
    assert done["status"] == "2 claims checked"
    shown = ext.browser.execute_script(DELIBERATION_VIEW)
    assert [c["summary"] for c in shown] == ["How the agents settled it (lase): 2 steps"] * 2
