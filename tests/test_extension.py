"""The sample extension (extension/) in real headless Chromium, against a real local server (offline profile).

Chromium and its driver come from Debian (`apt-get install chromium chromium-driver`, done by .ci/run);
nothing is downloaded. Without them the test skips, except in CI (FACTCHECK_REQUIRE_BROWSER=1), where
it fails. The popup's screenshot is written to $FACTCHECK_ARTIFACTS (else the test's tmp folder).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXTENSION_DIR = ROOT / "extension"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
KEY = "extension-test-key-0123"
ARTICLE = (
    '<!doctype html><html><head><meta charset="utf-8"><title>An article</title></head><body>'
    '<p id="article">Statins lower <b>LDL</b> cholesterol. Obesity does not increase the risk of type 2 diabetes.</p>'
    "</body></html>"
)
# Read at import: the test session sets every FACTCHECK_* variable aside before the tests run (conftest.py).
REQUIRE_BROWSER = bool(os.environ.get("FACTCHECK_REQUIRE_BROWSER"))
ARTIFACTS = os.environ.get("FACTCHECK_ARTIFACTS")
FLAGS = (
    "--headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
    "--disable-component-update --disable-sync --window-size=480,1000"
).split()


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


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    folder = Path(ARTIFACTS or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page_url(tmp_path: Path) -> Iterator[str]:
    """An article page served from 127.0.0.1 (covered by the extension's host permissions)."""
    (tmp_path / "article.html").write_text(ARTICLE, encoding="utf-8")

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(tmp_path)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/article.html"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def driver() -> Iterator[Any]:
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
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


def extension_id(browser: Any) -> str:
    """The id Chromium gave the unpacked extension, read from its running service worker."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for target in browser.execute_cdp_cmd("Target.getTargets", {})["targetInfos"]:
            url = target["url"]
            if target["type"] == "service_worker" and url.startswith("chrome-extension://"):
                return str(url.split("/")[2])
        time.sleep(0.2)
    raise AssertionError("the extension's service worker never started (did the manifest load?)")


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
    """What the popup shows: the label, the score and each claim with its agents and evidence links."""
    return browser.execute_script(
        """
        const text = (root, selector) => root.querySelector(selector)?.textContent ?? null;
        return {
          label: text(document, '#label'),
          score: text(document, '#score'),
          status: text(document, '#status'),
          claims: [...document.querySelectorAll('#claims > li.claim')].map((claim) => ({
            label: text(claim, '.claim-head .label'),
            text: text(claim, '.claim-text'),
            agents: [...claim.querySelectorAll('.judgment')].map((j) => j.textContent),
            evidence: [...claim.querySelectorAll('.evidence li')].map((li) => li.textContent),
            links: [...claim.querySelectorAll('.evidence a')].map((a) => a.href),
          })),
        };
        """
    )


def test_extension_checks_a_selection_shows_the_verdict_and_highlights_claims(
    driver: Any, page_url: str, artifacts: Path, tmp_path: Path
) -> None:
    from factcheck.server.app import create_app
    from factcheck.server.runner import serve_in_thread
    from factcheck.server.settings import ServerSettings

    ext_id = extension_id(driver)
    config = tmp_path / "factcheck.toml"  # the offline profile, its verifier named: what the popup shows is known
    config.write_text('profile = "offline"\n[agents.corpus]\nsource = "corpus"\nverifier = "lexical"\n')
    settings = ServerSettings(
        api_keys=(KEY,),
        cors_origins=(f"chrome-extension://{ext_id}",),
        profile="offline",
        config=str(config),
        rate_per_minute=0,
    )
    with serve_in_thread(create_app(settings)) as server:
        # Options: the server URL and key, saved in extension storage through the page's own form.
        driver.get(f"chrome-extension://{ext_id}/options.html")
        wait_for(driver, "document.getElementById('server').value")
        driver.execute_script("document.getElementById('server').value = arguments[0]", server)
        driver.find_element("id", "apiKey").send_keys(KEY)
        driver.find_element("id", "save").click()
        assert wait_for(driver, "document.getElementById('status').textContent") == "Saved."

        # A page with a selection spanning an inline element.
        driver.switch_to.new_window("tab")
        driver.get(page_url)
        article = driver.current_window_handle
        text = driver.execute_script(
            """
            const range = document.createRange();
            range.selectNodeContents(document.getElementById('article'));
            getSelection().removeAllRanges();
            getSelection().addRange(range);
            return getSelection().toString();
            """
        )
        expected = httpx.post(
            f"{server}/v1/check", json={"text": text}, headers={"Authorization": f"Bearer {KEY}"}, timeout=30
        ).json()

        # The popup page (in a tab), asking the background to check the page's selection, as the menu does.
        driver.switch_to.new_window("tab")
        driver.get(f"chrome-extension://{ext_id}/popup.html")
        driver.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            chrome.tabs.query({url: arguments[0]})
              .then((tabs) => chrome.runtime.sendMessage({type: 'check-selection', tabId: tabs[0].id}))
              .then(done);
            """,
            page_url,
        )
        wait_for(driver, "['done', 'error'].includes(document.getElementById('status').dataset.state)")
        view = popup_view(driver)
        assert view["label"] == expected["label"]
        assert view["score"] == f"score {expected['score']:.2f}"
        assert view["status"] == "2 claims checked", view["status"]
        assert [c["text"] for c in view["claims"]] == [c["text"] for c in expected["claims"]]
        assert [c["label"] for c in view["claims"]] == [c["label"] for c in expected["claims"]]
        for shown, claim in zip(view["claims"], expected["claims"], strict=True):
            assert [a.split(":")[0] for a in shown["agents"]] == [j["agent"] for j in claim["judgments"]]
            evidence = [e for j in claim["judgments"] for e in j["evidence"]]
            assert shown["evidence"] == [e["title"] or e["url"] or e["source"] for e in evidence]
            assert shown["evidence"]
            assert shown["links"] == [e["url"] for e in evidence if e["url"]]  # the shipped corpus has no URLs
        driver.set_window_size(480, 1000)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(480, min(height + 140, 2400))
        screenshot = artifacts / "extension-popup.png"
        driver.save_screenshot(str(screenshot))
        assert screenshot.stat().st_size > 10_000

        # The claims are highlighted on the page, by their spans, across the <b> element.
        driver.switch_to.window(article)
        marks = wait_for(
            driver,
            """(() => {
                const marks = [...document.querySelectorAll('mark.factcheck-claim')];
                if (!marks.length) return null;
                const byClaim = {};
                for (const mark of marks) {
                    byClaim[mark.dataset.claimId] = (byClaim[mark.dataset.claimId] ?? '') + mark.textContent;
                }
                return byClaim;
            })()""",
        )
        assert marks == {c["id"]: c["text"] for c in expected["claims"]}
        assert driver.execute_script("return document.getElementById('article').textContent") == text

        # The popup's own form checks a pasted text.
        driver.switch_to.new_window("tab")
        driver.get(f"chrome-extension://{ext_id}/popup.html")
        driver.find_element("id", "text").send_keys("Vitamin D supplementation reduces the risk of fractures.")
        driver.find_element("id", "check").click()
        wait_for(driver, "document.getElementById('status').textContent === '1 claim checked'")
        assert [c["text"] for c in popup_view(driver)["claims"]] == [
            "Vitamin D supplementation reduces the risk of fractures."
        ]


def test_popup_renders_untrusted_evidence_as_text(driver: Any) -> None:
    ext_id = extension_id(driver)
    driver.get(f"chrome-extension://{ext_id}/popup.html")
    hostile = "<img src=x onerror=\"document.title='owned'\">"
    claim = {
        "id": "c1",
        "text": f"A claim {hostile}",
        "span": None,
        "label": "TRUE",
        "score": 0.9,
        "judgments": [
            {
                "agent": "web",
                "factuality": True,
                "confidence": 0.9,
                "rationale": hostile,
                "error": None,
                "evidence": [
                    {"source": "web", "title": hostile, "url": "javascript:alert(1)", "text": "x"},
                    {"source": "web", "title": "A real page", "url": "https://example.org/a", "text": "x"},
                ],
            }
        ],
    }
    verdict = {"label": "TRUE", "score": 0.9, "claims": [claim], "partial": False}
    state = {"status": "done", "text": "x", "claims": [claim], "verdict": verdict, "error": None}
    driver.execute_async_script(
        "chrome.storage.session.set({current: arguments[0]}).then(arguments[arguments.length - 1])", state
    )
    wait_for(driver, "document.getElementById('status').dataset.state === 'done'")
    assert driver.execute_script("return document.querySelectorAll('#claims img').length") == 0
    view = popup_view(driver)
    assert view["claims"][0]["text"] == f"A claim {hostile}"
    assert view["claims"][0]["links"] == ["https://example.org/a"]  # the javascript: URL is not a link
    assert hostile in driver.execute_script("return document.querySelector('.evidence').textContent")
    assert driver.title != "owned"
