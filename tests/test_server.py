"""The HTTP server (``factcheck serve``): the real uvicorn server on a free loopback port, driven with httpx."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

pytest.importorskip("fastapi", reason="the server extra is not installed")

from factcheck.cli import cli
from factcheck.errors import ConfigError
from factcheck.net import request_json
from factcheck.plugin import Source
from factcheck.server.app import create_app
from factcheck.server.auth import KeyChecker, RateLimiter
from factcheck.server.runner import serve_in_thread
from factcheck.server.settings import ServerSettings, is_loopback
from factcheck.testing import ScriptedVerifier, StaticSource, registered
from factcheck.types import Claim, Evidence, TextVerdict
from tests.fakes import FakeServer, InFlight, Response

KEY = "client-key-0123456789"
OTHER_KEY = "client-key-abcdefghij"
AUTH = {"Authorization": f"Bearer {KEY}"}
EXTENSION = "chrome-extension://abcdefghijklmnopabcdefghijklmnop"
TWO_CLAIMS = "Statins lower LDL cholesterol. Obesity does not increase the risk of type 2 diabetes."


def config_with(folder: Path, source: str = "corpus", verifier: str = "scripted") -> str:
    """A factcheck.toml whose one agent pairs ``source`` with ``verifier`` (the offline profile's
    default verifier may change; tests name the one they expect)."""
    path = folder / f"factcheck-{source}-{verifier}.toml"
    path.write_text(f'profile = "offline"\n[agents.corpus]\nsource = "{source}"\nverifier = "{verifier}"\n')
    return str(path)


@contextmanager
def server(**options: Any) -> Iterator[str]:
    """A real server with these settings (offline profile, rate limiting off unless asked)."""
    options = {"api_keys": (KEY, OTHER_KEY), "profile": "offline", "rate_per_minute": 0, **options}
    with serve_in_thread(create_app(ServerSettings(**options))) as url:
        yield url


@pytest.fixture(scope="module")
def lexical(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Settings for the corpus agent judged by ``lexical``."""
    return config_with(tmp_path_factory.mktemp("config"), "corpus", "lexical")


@pytest.fixture(scope="module")
def base_url(lexical: str) -> Iterator[str]:
    with server(cors_origins=(EXTENSION,), max_text_chars=2_000, config=lexical) as url:
        yield url


def events(response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    """The Server-Sent Events of a streamed answer, in order."""
    found, name = [], None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            found.append((name or "message", json.loads(line.removeprefix("data: "))))
    return found


@dataclass(frozen=True)
class SlowFor(Source):
    """A source that answers at once, except for claims containing ``slow_word``: those wait ``delay_s``."""

    name = "slow-for"
    slow_word: str = "slowly"
    delay_s: float = 5.0

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        if self.slow_word in claim.text:
            await asyncio.sleep(self.delay_s)
        return [Evidence(source=self.name, text="A passage.", title="Passage", url="https://example.org/p")]


# --- the check itself ---


def test_check_with_a_key_returns_the_checked_text_json(base_url: str) -> None:
    body = {"text": TWO_CLAIMS, "url": "https://news.example/a", "title": "An article"}
    response = httpx.post(f"{base_url}/v1/check", json=body, headers=AUTH, timeout=30)
    assert response.status_code == 200, response.text
    data = response.json()
    verdict = TextVerdict.from_dict(data)  # the project's own format, readable by factcheck score
    assert [c.claim.text for c in verdict.claims] == [
        "Statins lower LDL cholesterol.",
        "Obesity does not increase the risk of type 2 diabetes.",
    ]
    assert [c.claim.span for c in verdict.claims] == [(0, 30), (31, 85)]
    assert data["partial"] is False
    assert (data["url"], data["title"]) == ("https://news.example/a", "An article")
    assert verdict.label.value in {"TRUE", "FALSE", "PARTLY TRUE", "UNVERIFIED"}
    assert verdict.usage.calls["extractor:sentence"] == 1
    # Each claim is searched, or answered from the judgment cache when an earlier test checked it.
    assert verdict.usage.calls.get("source:corpus", 0) + verdict.usage.cache_hits.get("judgment", 0) == 2
    assert all(j.evidence for c in verdict.claims for j in c.judgments)


def test_scorer_and_labels_chosen_per_request(base_url: str) -> None:
    body = {"text": TWO_CLAIMS, "scorer": "normsum", "labels": "compose"}
    data = httpx.post(f"{base_url}/v1/check", json=body, headers=AUTH, timeout=30).json()
    assert (data["scorer"], data["labels"]) == ("normsum", "compose")


def test_stream_sends_claims_then_each_claim_then_the_verdict(base_url: str) -> None:
    with httpx.stream("POST", f"{base_url}/v1/check/stream", json={"text": TWO_CLAIMS}, headers=AUTH) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-accel-buffering"] == "no"
        sent = events(response)
    names = [name for name, _ in sent]
    assert names == ["claims", "claim", "claim", "verdict"]
    assert [c["text"] for c in sent[0][1]["claims"]] == [
        "Statins lower LDL cholesterol.",
        "Obesity does not increase the risk of type 2 diabetes.",
    ]
    assert sorted(data["index"] for name, data in sent if name == "claim") == [0, 1]
    verdict = sent[-1][1]
    whole = httpx.post(f"{base_url}/v1/check", json={"text": TWO_CLAIMS}, headers=AUTH, timeout=30).json()
    # The stream's verdict is the one /v1/check answers (usage times and the time each was checked aside).
    kept = lambda data: {k: v for k, v in data.items() if k not in ("usage", "as_of")}  # noqa: E731
    assert kept(verdict) == kept(whole)
    streamed_claims = {data["index"]: data["claim"] for name, data in sent if name == "claim"}
    assert [streamed_claims[i]["label"] for i in (0, 1)] == [c["label"] for c in verdict["claims"]]


def test_a_repeated_check_reports_judgment_cache_hits(base_url: str) -> None:
    text = "Aspirin reduces the risk of colorectal cancer in adults."
    first = httpx.post(f"{base_url}/v1/check", json={"text": text}, headers=AUTH, timeout=30).json()
    with httpx.stream("POST", f"{base_url}/v1/check/stream", json={"text": text}, headers=AUTH, timeout=30) as r:
        second = events(r)[-1][1]
    assert not any(k.startswith("judgment") for k in first["usage"]["cache_hits"])
    assert any(k.startswith("judgment") for k in second["usage"]["cache_hits"])
    assert second["label"] == first["label"]


def test_a_repeated_text_is_answered_whole_from_memory(base_url: str) -> None:
    text = "Smoking causes lung cancer in adults who smoke."
    first = httpx.post(f"{base_url}/v1/check", json={"text": text}, headers=AUTH, timeout=30).json()
    again = httpx.post(f"{base_url}/v1/check", json={"text": text, "title": "t"}, headers=AUTH, timeout=30).json()
    assert again["usage"]["cache_hits"] == {"answer": 1} and "answered from memory" in again["usage"]["notes"][0]
    assert again["claims"] == first["claims"] and again["label"] == first["label"] and again["title"] == "t"


def test_a_request_dated_in_the_past_is_checked_as_of_then_and_not_answered_as_todays(base_url: str) -> None:
    text = "Unemployment fell last year in the United States."
    today = httpx.post(f"{base_url}/v1/check", json={"text": text}, headers=AUTH, timeout=30).json()
    dated = {"text": text, "date": "2014-05-10"}
    then = httpx.post(f"{base_url}/v1/check", json=dated, headers=AUTH, timeout=30).json()
    assert then["as_of"].startswith("2014-05-10") and not today["as_of"].startswith("2014")
    assert then["claims"][0]["time"]["start"] == "2013-01-01"
    assert "answer" not in then["usage"]["cache_hits"]  # another date is another check
    with httpx.stream("POST", f"{base_url}/v1/check/stream", json=dated, headers=AUTH, timeout=30) as response:
        sent = events(response)
    [claim] = [data["claim"] for name, data in sent if name == "claim"]
    assert claim["time"]["start"] == "2013-01-01" and sent[-1][1]["as_of"] == then["as_of"]
    assert sent[-1][1]["claims"][0]["time"] == claim["time"]
    refused = httpx.post(f"{base_url}/v1/check", json={"text": text, "date": "soon"}, headers=AUTH)
    assert refused.status_code == 422 and '"date" must be an ISO 8601 date' in refused.json()["error"]


# --- authentication, CORS, limits, validation ---


def test_without_or_with_a_wrong_key_401(base_url: str) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-key-000000"}, {"Authorization": f"Basic {KEY}"}):
        response = httpx.post(f"{base_url}/v1/check", json={"text": TWO_CLAIMS}, headers=headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.json() == {"error": "missing or wrong API key"}
    assert httpx.get(f"{base_url}/v1/components").status_code == 401
    streamed = httpx.post(f"{base_url}/v1/check/stream", json={"text": TWO_CLAIMS})
    assert streamed.status_code == 401
    other = httpx.post(
        f"{base_url}/v1/check", json={"text": "x."}, headers={"Authorization": f"Bearer {OTHER_KEY}"}, timeout=30
    )
    assert other.status_code == 200


def test_health_needs_no_key_and_docs_are_served(base_url: str) -> None:
    assert httpx.get(f"{base_url}/v1/health").json()["status"] == "ok"
    assert httpx.get(f"{base_url}/docs").status_code == 200
    paths = httpx.get(f"{base_url}/openapi.json").json()["paths"]
    assert {"/v1/check", "/v1/check/stream", "/v1/health", "/v1/components"} <= set(paths)


def test_key_checker_names_the_key_never_the_secret() -> None:
    checker = KeyChecker(["first-key-000", "second-key-00"])
    assert checker.identify("Bearer second-key-00") == "key-2"
    assert checker.identify("bearer  first-key-000 ") == "key-1"
    assert checker.identify("Bearer second-key-0") is None
    assert checker.identify("Token first-key-000") is None
    assert checker.identify(None) is None


def test_cors_preflight_from_the_allowed_origin(base_url: str) -> None:
    headers = {
        "Origin": EXTENSION,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
    }
    response = httpx.options(f"{base_url}/v1/check", headers=headers)
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == EXTENSION
    assert "authorization" in response.headers["access-control-allow-headers"].lower()
    # The answer itself, and an error answer, carry the header too, so the extension can read them.
    ok = httpx.post(f"{base_url}/v1/check", json={"text": "x."}, headers={**AUTH, "Origin": EXTENSION}, timeout=30)
    assert ok.headers["access-control-allow-origin"] == EXTENSION
    refused = httpx.post(f"{base_url}/v1/check", json={"text": "x."}, headers={"Origin": EXTENSION})
    assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == EXTENSION


def test_cors_other_origins_get_no_cors_headers(base_url: str) -> None:
    for origin in ("https://evil.example", "chrome-extension://" + "p" * 32):
        preflight = httpx.options(
            f"{base_url}/v1/check", headers={"Origin": origin, "Access-Control-Request-Method": "POST"}
        )
        assert preflight.status_code == 403
        assert not [h for h in preflight.headers if h.lower().startswith("access-control-")]
        answer = httpx.post(f"{base_url}/v1/check", json={"text": "x."}, headers={**AUTH, "Origin": origin})
        assert answer.status_code == 200
        assert not [h for h in answer.headers if h.lower().startswith("access-control-")]


def test_a_refused_preflight_answers_the_documented_json_error(base_url: str) -> None:
    preflight = httpx.options(
        f"{base_url}/v1/check", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    )
    assert preflight.status_code == 403
    assert preflight.headers["content-type"] == "application/json"
    assert preflight.json() == {"error": "origin not allowed (not in the server's --cors-origin list)"}
    # An allowed origin asking for a method the API does not take: refused in the same shape, not plain text.
    asked = {"Origin": EXTENSION, "Access-Control-Request-Method": "DELETE"}
    refused = httpx.options(f"{base_url}/v1/check", headers=asked)
    assert refused.status_code == 400 and refused.headers["content-type"] == "application/json"
    assert refused.json() == {"error": "preflight refused: method not allowed (methods: GET, POST)"}
    assert refused.headers["access-control-allow-origin"] == EXTENSION  # so the page can read why


def test_settings_accept_extension_origins_and_refuse_malformed_ones() -> None:
    moz = "moz-extension://0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
    assert ServerSettings(cors_origins=(EXTENSION, moz, "https://app.example:8443")).cors_origins[1] == moz
    for bad in ("https://app.example/", "chrome-extension://short", "app.example"):
        with pytest.raises(ConfigError, match="CORS origin"):
            ServerSettings(cors_origins=(bad,))


def test_text_over_the_limit_413(base_url: str) -> None:
    response = httpx.post(f"{base_url}/v1/check", json={"text": "word " * 500}, headers=AUTH)
    assert response.status_code == 413
    # The limit is said in words and as a field, for a client to split the text by (the extension's parts).
    assert response.json() == {"error": "text of 2500 characters is over the limit of 2000", "max_text_chars": 2000}
    # Characters are code points, as the claims' spans count them: 2,000 emoji are within the limit.
    emoji = httpx.post(f"{base_url}/v1/check", json={"text": "🚀" * 2001}, headers=AUTH)
    assert emoji.status_code == 413 and emoji.json()["error"].startswith("text of 2001 characters")


def test_body_over_the_limit_413_declared_or_streamed(base_url: str) -> None:
    huge = json.dumps({"text": "a" * 60_000}).encode()  # over 12 bytes a character of the text limit
    declared = httpx.post(f"{base_url}/v1/check", content=huge, headers={**AUTH, "Content-Type": "application/json"})
    assert declared.status_code == 413
    assert "request body over" in declared.json()["error"]
    assert declared.json()["max_text_chars"] == 2000  # the text limit this body limit comes from

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit counts bytes as they arrive
        for start in range(0, len(huge), 4096):
            yield huge[start : start + 4096]

    streamed = httpx.post(
        f"{base_url}/v1/check", content=chunks(), headers={**AUTH, "Content-Type": "application/json"}
    )
    assert streamed.status_code == 413 and streamed.json()["max_text_chars"] == 2000


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, 'invalid request: missing field "text"'),
        ({"text": "   "}, 'invalid request: "text" must not be empty'),
        ({"text": 42}, 'invalid request: "text" must be a string, not a number'),
        ({"text": None}, 'invalid request: "text" must be a string, not null'),
        ({"text": "x.", "txt": "x."}, 'invalid request: unknown field "txt" (did you mean "text"?)'),
        ({"text": "x.", "colour": "red"}, 'unknown field "colour" (fields: text, url, title, profile, scorer,'),
        ({"text": "x.", "url": "u" * 5000}, '"url" must be a string of at most 4096 characters (it has 5000)'),
        ({"text": "x.", "profile": "../etc"}, 'invalid request: "profile" must be a component name'),
        ({"text": "x.", "scorer": "nope"}, "unknown scorer 'nope' (available: "),
        ({"text": "x.", "profile": "nope"}, "unknown profile 'nope'"),
    ],
)
def test_invalid_requests_422_with_a_readable_message(base_url: str, body: dict[str, Any], message: str) -> None:
    response = httpx.post(f"{base_url}/v1/check", json=body, headers=AUTH)
    assert response.status_code == 422
    assert message in response.json()["error"]
    assert "\n" not in response.json()["error"]
    # No pydantic wording reaches the caller.
    assert not any(word in response.text for word in ("Field required", "Input should", "Value error", "Extra inputs"))


def test_a_422_names_each_wrong_field_in_details_as_its_error_does(base_url: str) -> None:
    response = httpx.post(f"{base_url}/v1/check", json={"text": 42, "titel": "t"}, headers=AUTH)
    answer = response.json()
    assert response.status_code == 422 and set(answer) == {"error", "details"}
    assert answer["details"] == [
        {"field": "text", "message": '"text" must be a string, not a number'},
        {"field": "titel", "message": 'unknown field "titel" (did you mean "title"?)'},
    ]
    assert answer["error"] == "invalid request: " + "; ".join(d["message"] for d in answer["details"])


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"text": ', "not JSON: Expecting value at line 1, column 10"),
        (b"text=Statins lower LDL cholesterol.", "not JSON: Expecting value at line 1, column 1"),
        (b'{\n  "text": "x."\n  "url": "u"\n}', "not JSON: Expecting ',' delimiter at line 3, column 3"),
        (
            b'{"text": "caf\xe9 au lait is sold here."}',  # Latin-1
            "not UTF-8 (byte 0xe9 at offset 13): send the JSON encoded as UTF-8",
        ),
        (b"", "empty: send a JSON object (fields: text, url, title,"),
        (b'["Statins lower LDL."]', "an array, not an object: send a JSON object (fields: text,"),
        # A UTF-16 body (its byte order mark first) cut off mid-character: the JSON is broken, not the UTF-8.
        (
            '{"text": "Statins lower LDL."}'.encode("utf-16")[:-1],
            "not JSON: unreadable UTF-16-LE: byte 0x7d at offset 60",
        ),
    ],
)
def test_a_body_that_is_not_json_or_not_utf8_is_422_in_the_documented_shape(
    base_url: str, content: bytes, problem: str
) -> None:
    response = httpx.post(f"{base_url}/v1/check", content=content, headers={**AUTH, "Content-Type": "application/json"})
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/json"
    # The body is what is wrong: no character offset passed off as a field name ("field": "0").
    answer = response.json()
    assert answer["error"].startswith(f"the body is {problem}") and answer["details"][0]["field"] == "body"
    assert answer["details"][0]["message"].startswith(problem) and len(answer["details"]) == 1


def test_a_latin1_body_that_declares_its_charset_is_told_to_send_utf8(base_url: str) -> None:
    headers = {**AUTH, "Content-Type": "application/json; charset=ISO-8859-1"}
    response = httpx.post(
        f"{base_url}/v1/check", content='{"text": "Café au lait."}'.encode("latin-1"), headers=headers
    )
    assert response.status_code == 422
    assert response.json()["error"] == (
        "the body is not UTF-8 (byte 0xe9 at offset 13): send the JSON encoded as UTF-8 "
        "(its charset=ISO-8859-1 is not read)"
    )


def test_a_body_sent_as_a_form_is_told_to_send_json(base_url: str) -> None:
    response = httpx.post(f"{base_url}/v1/check", data={"text": "Statins lower LDL."}, headers=AUTH)
    assert response.status_code == 422
    assert response.json()["error"] == (
        "the body is not read as JSON (sent as application/x-www-form-urlencoded): "
        "send a JSON object with Content-Type: application/json"
    )


def test_rate_limit_429_with_retry_after_per_key(lexical: str) -> None:
    with server(rate_per_minute=6, rate_burst=2, config=lexical) as url:
        statuses = [httpx.post(f"{url}/v1/check", json={"text": "x."}, headers=AUTH).status_code for _ in range(3)]
        assert statuses == [200, 200, 429]
        limited = httpx.post(f"{url}/v1/check", json={"text": "x."}, headers=AUTH)
        assert limited.status_code == 429
        assert 1 <= int(limited.headers["retry-after"]) <= 10
        assert "rate limit" in limited.json()["error"]
        # Another key has its own bucket.
        other = httpx.post(f"{url}/v1/check", json={"text": "x."}, headers={"Authorization": f"Bearer {OTHER_KEY}"})
        assert other.status_code == 200


def test_token_bucket_refills_at_the_rate() -> None:
    now = [0.0]
    limiter = RateLimiter(per_minute=60, burst=2, clock=lambda: now[0])
    assert [limiter.take("a"), limiter.take("a")] == [0.0, 0.0]
    assert limiter.take("a") == pytest.approx(1.0)
    now[0] = 0.5
    assert limiter.take("a") == pytest.approx(0.5)
    now[0] = 2.0
    assert limiter.take("a") == 0.0
    assert RateLimiter(per_minute=0, burst=1).take("a") == 0.0


# --- deadline, SSRF, secrets, shared limits ---


def test_deadline_returns_a_partial_result_instead_of_hanging(tmp_path: Path) -> None:
    text = "The first claim is quick. The second claim comes slowly."
    with (
        registered(SlowFor(), ScriptedVerifier()),
        server(config=config_with(tmp_path, "slow-for"), deadline_s=0.5) as url,
    ):
        started = time.monotonic()
        response = httpx.post(f"{url}/v1/check", json={"text": text}, headers=AUTH, timeout=10)
        elapsed = time.monotonic() - started
        with httpx.stream("POST", f"{url}/v1/check/stream", json={"text": text}, headers=AUTH) as streamed:
            sent = events(streamed)
    assert elapsed < 3
    data = response.json()
    assert data["partial"] is True
    quick, slow = data["claims"]
    assert quick["label"] == "TRUE" and quick["judgments"][0]["factuality"] is True
    assert slow["label"] == "UNVERIFIED"
    assert slow["judgments"] == [
        {
            "agent": "corpus",
            "factuality": None,
            "confidence": 0.0,
            "rationale": "",
            "evidence": [],
            "error": "deadline of 0.5s reached before this claim was checked",
        }
    ]
    assert "deadline of 0.5s reached: 1 of 2 claims not checked" in data["usage"]["notes"]
    assert [name for name, _ in sent] == ["claims", "claim", "verdict"]
    assert sent[-1][1]["partial"] is True


def test_a_text_over_both_claim_limits_gets_one_truthful_note(tmp_path: Path) -> None:
    # The checker's own max_claims (3) and the server's (2): one note, with the number of claims found.
    config = tmp_path / "factcheck.toml"
    config.write_text(
        'profile = "offline"\n[agents.corpus]\nsource = "static"\nverifier = "scripted"\n[pipeline]\nmax_claims = 3\n'
    )
    text = "Paris is in France. Berlin is in Germany. Rome is in Italy. Madrid is in Spain. Lisbon is in Portugal."
    with registered(StaticSource(), ScriptedVerifier()), server(config=str(config), max_claims=2) as url:
        data = httpx.post(f"{url}/v1/check", json={"text": text}, headers=AUTH, timeout=30).json()
        with httpx.stream("POST", f"{url}/v1/check/stream", json={"text": text}, headers=AUTH) as streamed:
            streamed_verdict = events(streamed)[-1][1]
    assert [c["text"] for c in data["claims"]] == ["Paris is in France.", "Berlin is in Germany."]
    for verdict in (data, streamed_verdict):
        notes = [note for note in verdict["usage"]["notes"] if "claims found" in note]
        assert notes == ["5 claims found; only the first 2 were checked (the server's max_claims = 2)"]


SHIPPED = "SciFact abstracts (5,183 biomedical research abstracts)"


def test_answers_and_the_stream_say_which_profile_and_corpus_judged_with_the_caution(base_url: str) -> None:
    text = "Vitamin C prevents the common cold in adults."
    answer = httpx.post(f"{base_url}/v1/check", json={"text": text}, headers=AUTH, timeout=30).json()
    again = httpx.post(f"{base_url}/v1/check", json={"text": text}, headers=AUTH, timeout=30).json()  # from memory
    with httpx.stream("POST", f"{base_url}/v1/check/stream", json={"text": text}, headers=AUTH) as response:
        streamed = events(response)[-1]
    assert streamed[0] == "verdict"
    expected = {
        "profile": "offline",
        "agents": [
            {"name": "corpus", "source": "corpus", "verifier": "lexical", "corpus": SHIPPED, "domain": "biomedical"}
        ],
        "caution": (
            f"Judged only against {SHIPPED}: a claim outside biomedicine gets a verdict from unrelated passages "
            "or none; for general pages use --profile wiki (keyless) or --profile paper (with keys)."
        ),
    }
    assert answer["judged_by"] == again["judged_by"] == streamed[1]["judged_by"] == expected
    assert again["usage"]["cache_hits"] == {"answer": 1}
    assert TextVerdict.from_dict(answer).judged_by is not None


@dataclass(frozen=True)
class MisconfiguredSource(Source):
    """A source whose settings are wrong, found only when a check prepares it."""

    name = "misconfigured"

    async def prepare(self) -> None:
        raise ConfigError("misconfigured: the index folder is not readable")

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        raise AssertionError("never asked: prepare failed")


def test_broken_server_settings_503_before_the_stream_and_an_error_event_in_it(tmp_path: Path) -> None:
    missing = tmp_path / "factcheck.toml"
    missing.write_text(f'[agents.corpus]\nverifier = "lexical"\npath = "{tmp_path / "missing.jsonl"}"\n')
    with server(config=str(missing)) as url:
        for path in ("/v1/check", "/v1/check/stream"):
            response = httpx.post(f"{url}{path}", json={"text": TWO_CLAIMS}, headers=AUTH, timeout=30)
            assert response.status_code == 503
            assert response.json()["error"].startswith("the server cannot check: corpus: no such file or folder")
    with registered(MisconfiguredSource()), server(config=config_with(tmp_path, "misconfigured", "lexical")) as url:
        response = httpx.post(f"{url}/v1/check", json={"text": TWO_CLAIMS}, headers=AUTH, timeout=30)
        with httpx.stream("POST", f"{url}/v1/check/stream", json={"text": TWO_CLAIMS}, headers=AUTH) as streamed:
            sent = events(streamed)
    assert response.status_code == 503
    assert response.json() == {"error": "the server cannot check: misconfigured: the index folder is not readable"}
    assert [name for name, _ in sent] == ["claims", "error"]
    assert sent[-1][1] == {"error": "misconfigured: the index folder is not readable"}


def test_url_is_metadata_the_server_never_fetches(base_url: str) -> None:
    with FakeServer() as target:
        body = {"text": TWO_CLAIMS, "url": f"{target.url}/private/admin", "title": "x"}
        response = httpx.post(f"{base_url}/v1/check", json=body, headers=AUTH, timeout=30)
        with httpx.stream("POST", f"{base_url}/v1/check/stream", json=body, headers=AUTH) as streamed:
            events(streamed)
        time.sleep(0.2)
        assert response.status_code == 200
        assert response.json()["url"] == f"{target.url}/private/admin"
        assert target.requests == []


@dataclass(frozen=True)
class LeakySource(Source):
    """A source whose error message quotes the provider key, as a careless client library might."""

    name = "leaky"

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        raise RuntimeError(f"upstream refused key {os.environ['SERPER_API_KEY']} for {claim.text}")


def test_provider_and_caller_keys_never_leave_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "SERPER_API_KEY": "serper-secret-0123456789",
        "OPENAI_API_KEY": "sk-openai-secret-abcdefgh",
        "SERPAPI_API_KEY": "serpapi-secret-98765432",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    answers: list[str] = []
    with registered(LeakySource(), ScriptedVerifier()), server(config=config_with(tmp_path, "leaky")) as url:
        answers.append(httpx.get(f"{url}/v1/components", headers=AUTH, timeout=60).text)
        answers.append(httpx.post(f"{url}/v1/check", json={"text": TWO_CLAIMS}, headers=AUTH, timeout=30).text)
        with httpx.stream("POST", f"{url}/v1/check/stream", json={"text": TWO_CLAIMS}, headers=AUTH) as streamed:
            answers.append(streamed.read().decode())
        answers.append(httpx.post(f"{url}/v1/check", json={"text": "", "scorer": "x!"}, headers=AUTH).text)
        answers.append(httpx.post(f"{url}/v1/check", json={"text": "x."}).text)
        answers.append(httpx.get(f"{url}/v1/health").text)
    assert "upstream refused key [redacted]" in answers[1]  # the error is kept, the key is not
    components = json.loads(answers[0])
    assert components["sources"]["serper"] == {"usable": True}  # a key is present, and never shown
    for answer in answers:
        for secret in (*secrets.values(), KEY, OTHER_KEY):
            assert secret not in answer


def test_components_say_what_is_usable_with_the_keys_present(base_url: str) -> None:
    data = httpx.get(f"{base_url}/v1/components", headers=AUTH, timeout=60).json()
    assert data["default_profile"] == "offline"
    assert data["sources"]["corpus"] == {"usable": True}
    assert data["sources"]["serper"] == {"usable": False, "reason": "serper: no API key (set SERPER_API_KEY)"}
    assert data["verifiers"]["lexical"] == {"usable": True}
    assert data["verifiers"]["llm"]["usable"] is False
    assert data["profiles"]["offline"] == [
        {"name": "corpus", "source": "corpus", "verifier": "lexical", "usable": True}
    ]
    paper = {agent["name"]: agent["usable"] for agent in data["profiles"]["paper"]}
    assert paper["web"] is paper["selfcheck"] is paper["wikipedia"] is False  # the LLM verifier has no key
    assert {"mafc", "normsum"} <= set(data["scorers"]) and "threshold" in data["label_rules"]
    assert "sentence" in data["extractors"]


def test_concurrent_requests_share_the_per_service_limit(tmp_path: Path) -> None:
    counter = InFlight(lambda request: Response({"passage": "A passage."}), delay_s=0.15)
    with FakeServer() as service:
        service.route("POST", "/search", counter)

        @dataclass(frozen=True)
        class LimitedSource(Source):
            name = "limited"

            async def retrieve(self, claim: Claim) -> list[Evidence]:
                answer = await request_json("POST", f"{service.url}/search", service="fake", concurrency=2)
                return [Evidence(source=self.name, text=answer["passage"])]

        with registered(LimitedSource(), ScriptedVerifier()), server(config=config_with(tmp_path, "limited")) as url:
            counter.most = 0  # forget the warm-up check

            async def many() -> list[httpx.Response]:
                async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=30) as client:
                    texts = [f"Claim number {n} is about the shared limit." for n in range(8)]
                    return await asyncio.gather(*(client.post("/v1/check", json={"text": t}) for t in texts))

            responses = asyncio.run(many())
    assert [r.status_code for r in responses] == [200] * 8
    assert all(r.json()["claims"][0]["label"] == "TRUE" for r in responses)
    assert counter.most == 2  # eight requests at once, never more than the service's limit in flight


# --- settings, pool, usage, command ---


def test_no_keys_refused_on_a_public_address_unless_insecure() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")
    ServerSettings().check_exposure("127.0.0.1")
    ServerSettings(api_keys=(KEY,)).check_exposure("0.0.0.0")
    ServerSettings(insecure_no_auth=True).check_exposure("0.0.0.0")
    with pytest.raises(ConfigError, match=r"refusing to listen on 0\.0\.0\.0 without API keys"):
        ServerSettings().check_exposure("0.0.0.0")
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 1
    assert "refusing to listen on 0.0.0.0 without API keys" in result.output


def test_settings_from_the_environment() -> None:
    env = {
        "FACTCHECK_API_KEYS": f"{KEY}, {OTHER_KEY}",
        "FACTCHECK_CORS_ORIGINS": EXTENSION,
        "FACTCHECK_MAX_TEXT_CHARS": "500",
        "FACTCHECK_RATE_PER_MINUTE": "0",
        "FACTCHECK_DEADLINE_S": "2.5",
        "SERPER_API_KEY": "serper-secret-0123456789",
        "FACTCHECK_LLM_API_KEY_ENV": "MY_LLM_KEY",
    }
    settings = ServerSettings.from_env(env, deadline_s=4.0)
    assert settings.api_keys == (KEY, OTHER_KEY) and settings.cors_origins == (EXTENSION,)
    assert (settings.max_text_chars, settings.rate_per_minute, settings.deadline_s) == (500, 0.0, 4.0)
    assert set(settings.secrets(env)) == {KEY, OTHER_KEY, "serper-secret-0123456789"}
    with pytest.raises(ConfigError, match="FACTCHECK_DEADLINE_S must be a number"):
        ServerSettings.from_env({"FACTCHECK_DEADLINE_S": "soon"})
    with pytest.raises(ConfigError, match="at least 8 characters"):
        ServerSettings(api_keys=("short",))


def test_serve_is_a_registered_command() -> None:
    result = CliRunner().invoke(cli, ["serve", "--help"])
    assert result.exit_code == 0
    assert "--cors-origin" in result.output and "--insecure-no-auth" in result.output


def test_stream_of_a_german_text_names_the_language_and_gives_no_english_verdict(base_url: str) -> None:
    text = "Der Eiffelturm steht in Berlin. Er wurde 1925 fertiggestellt."
    with httpx.stream("POST", f"{base_url}/v1/check/stream", json={"text": text}, headers=AUTH) as response:
        sent = events(response)
    claims = [data["claim"] for name, data in sent if name == "claim"]
    assert len(claims) == 2 and all(c["label"] == "UNVERIFIED" for c in claims)
    assert all("German (de)" in c["judgments"][0]["error"] for c in claims)
    verdict = sent[-1][1]
    assert verdict["language"] == "de" and verdict["label"] == "UNVERIFIED"
