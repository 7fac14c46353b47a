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
from collections.abc import Iterator
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
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(path)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package")
    try:
        import fastapi  # noqa: F401
    except ImportError:
        missing.append("the server extra (fastapi)")
    if missing:
        reason = f"browser test needs {', '.join(missing)} (apt-get install chromium chromium-driver)"
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


class FakeServer:
    """A stand-in for /v1/check/stream: one claim per sentence, labelled by its words, with notes on demand.

    A sentence with "not" is FALSE (0.10), one with "maybe" a weak TRUE (0.60), others TRUE (0.90). A
    check whose text contains a key of ``hold`` sends ``claims`` and its first ``claim``, then waits
    for that event. ``notes`` go into the verdict (top level and usage); ``claim_notes`` into each claim.
    """

    SENTENCE = re.compile(r"[^\s.!?](?:[^.!?\n]|\n(?!\n))*[.!?]")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.hold: dict[str, threading.Event] = {}
        self.notes: list[Any] = []
        self.claim_notes: list[Any] = []
        self.claim_extra: dict[str, Any] = {}  # fields laid over every claim (a time, dated evidence)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["text"]
                fake.texts.append(text)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                claims = fake.claims(text)
                self.event("claims", {"claims": [{k: c[k] for k in ("id", "text", "span", "queries")} for c in claims]})
                gate = next((event for key, event in fake.hold.items() if key in text), None)
                for index, claim in enumerate(claims):
                    if index == 1 and gate is not None:
                        gate.wait(30)
                    self.event("claim", {"index": index, "claim": claim})
                scores = [c["score"] for c in claims]
                score = sum(scores) / len(scores) if scores else None
                label = "UNVERIFIED" if score is None else "TRUE" if score > 0.67 else "FALSE" if score < 0.33 else ""
                label = label or "PARTLY TRUE"
                usage = {"notes": list(fake.notes)}
                verdict = {"schema": "factcheck/1", "text": text, "label": label, "score": score, "claims": claims}
                self.event("verdict", {**verdict, "usage": usage, "notes": list(fake.notes), "partial": False})

            def event(self, name: str, data: dict[str, Any]) -> None:
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
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

    def select(self, handle: str, element_id: str | None) -> str:
        """Select an element's contents (None: clear the selection); the browser's own selection string."""
        self.browser.switch_to.window(handle)
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

    def check_selection(self, tab: int) -> dict[str, Any]:
        """What the menu does: the answer comes once the selection is captured ({checkId, text})."""
        answer = self.call("return await chrome.runtime.sendMessage({type: 'check-selection', tabId: args[0]});", tab)
        assert "checkId" in answer, answer
        return dict(answer)

    def state(self, tab: int) -> Any:
        return self.call(
            "const key = `check:tab:${args[0]}`; return (await chrome.storage.session.get(key))[key];", tab
        )

    def wait_state(self, tab: int, status: tuple[str, ...] = ("done", "error"), check_id: str | None = None) -> Any:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = self.state(tab)
            if state and state["status"] in status and (check_id is None or state["checkId"] == check_id):
                return state
            time.sleep(0.1)
        raise AssertionError(f"tab {tab} never reached {status}: {self.state(tab)}")

    def badge(self, tab: int) -> str:
        return str(self.call("return await chrome.action.getBadgeText({tabId: args[0]});", tab))

    def popup(self, tab: int) -> dict[str, Any]:
        """Open the popup as a page about a tab, wait for it to render, and read it."""
        self.browser.switch_to.window(self.control)
        self.browser.switch_to.new_window("tab")
        self.browser.get(f"chrome-extension://{self.id}/popup.html?tab={tab}")
        wait_for(self.browser, "document.body.dataset.ready")
        return popup_view(self.browser)


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
        return {
          label: text(document, '#label'),
          score: text(document, '#score'),
          strength: text(document, '#strength'),
          status: text(document, '#status'),
          state: document.getElementById('status').dataset.state,
          context: document.getElementById('context').hidden ? null : text(document, '#context'),
          notes: [...document.querySelectorAll('#notes:not([hidden]) li')].map((li) => li.textContent),
          legend: {open: document.getElementById('legend').open, text: text(document, '#legend')},
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


MARKS = """(() => {
    const byClaim = {};
    for (const mark of document.querySelectorAll('mark.factcheck-claim')) {
        const key = `${mark.dataset.check} ${mark.dataset.claimId}`;
        byClaim[key] ??= {text: '', classes: mark.className, label: mark.dataset.label};
        byClaim[key].text += mark.textContent;
    }
    return byClaim;
})()"""


def marks(browser: Any, handle: str) -> dict[str, dict[str, str]]:
    """Each highlighted claim ("<check id> <claim id>"): its marked text, its first mark's classes and label."""
    browser.switch_to.window(handle)
    return dict(browser.execute_script(f"return {MARKS}"))


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(ARTIFACTS) if ARTIFACTS else tmp_path_factory.mktemp("artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The test pages, served from 127.0.0.1 (covered by the extension's host permissions): their base URL."""
    folder = tmp_path_factory.mktemp("pages")
    for name, html in PAGES.items():
        (folder / name).write_text(html, encoding="utf-8")
    httpd, url = serve_folder(folder)
    yield url
    httpd.shutdown()
    httpd.server_close()


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
    for gate in server.hold.values():
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
    browser.find_element("id", "save").click()
    assert wait_for(browser, "document.getElementById('status').textContent") == "Saved."

    article, tab = ext.open(f"{pages}/article.html")
    text = ext.select(article, "article")
    expected = httpx.post(
        f"{server}/v1/check", json={"text": text}, headers={"Authorization": f"Bearer {KEY}"}, timeout=60
    ).json()
    started = ext.check_selection(tab)
    assert started["text"] == text
    state = ext.wait_state(tab)
    assert state["status"] == "done", state["error"]
    assert ext.badge(tab) == {"TRUE": "T", "FALSE": "F", "PARTLY TRUE": "PT", "UNVERIFIED": "?"}[expected["label"]]

    view = ext.popup(tab)
    assert view["label"] == expected["label"]
    assert view["score"] == f"score {expected['score']:.2f}"
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
    found = marks(browser, article)
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
    visible = (
        "Cholesterol drugs\n\nStatins lower LDL cholesterol.\n\nVitamin D helps bones.\n\n"
        "Obesity does not increase risk.\n\nExercise helps\nthe heart.\n\nTea has caffeine.\tMilk has calcium."
    )
    assert started["text"] == visible
    # The browser's own selection string has the same words, and also the aria-hidden stars and the
    # screen-reader-only link (read aloud, never seen), which the extension leaves out.
    assert "★★★" in shown and "Skip to content." in shown
    assert squash(shown.replace("★★★", "").replace("Skip to content.", "")) == squash(visible)
    state = ext.wait_state(tab)
    assert state["status"] == "done"
    assert fake.texts[-1] == visible
    found = marks(ext.browser, handle)
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
    assert ext.badge(tab) == "1/2"
    gate.set()
    ext.wait_state(tab)
    assert ext.badge(tab) == "PT"
    found = marks(ext.browser, handle)
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
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = marks(ext.browser, handle)
        if found.get(f"{first['checkId']} c2", {}).get("label"):
            break
        time.sleep(0.1)
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
    ext.wait_state(tab, check_id=third["checkId"])
    found = marks(ext.browser, handle)
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
    assert (ext.badge(tab_a), ext.badge(tab_b)) == ("T", "PT")
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
        assert ext.badge(tab) == "!", case
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
            "document.getElementById('status').textContent = '';",
            url,
            key,
        )
        browser.find_element("id", "test").click()
        return str(wait_for(browser, f"!{status}.startsWith('Testing') && {status}"))

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
