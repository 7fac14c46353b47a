"""A check sent again is answered from the kept answers: byte for byte before routing
(:class:`factcheck.server.answers.RepeatFirst`), and a streamed check as the events it sent. The middleware on raw
ASGI messages, then the real server, where the answer, the claim rate limit and the answer's metadata must be
what the route would have given."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed")

from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from factcheck.server.answers import REQUEST_DIGEST, AnswerCache, RepeatFirst, request_digest
from tests.test_server import AUTH, TWO_CLAIMS, events, server

PATHS = frozenset({"/v1/check", "/v1/check/stream"})
BODY = [b'{"text": "Statins', b' lower LDL."}']


def scope_of(path: str = "/v1/check", method: str = "POST", content_type: bytes = b"application/json") -> Scope:
    return {"type": "http", "method": method, "path": path, "headers": [(b"content-type", content_type)]}


def receiving(chunks: list[bytes], failure: Exception | None = None) -> tuple[Receive, list[int]]:
    """A receive giving ``chunks`` as the body (then ``failure``, if any, instead of the last), counting calls."""
    calls = [0]

    async def receive() -> Message:
        calls[0] += 1
        index = calls[0] - 1
        if failure is not None and index == len(chunks) - 1:
            raise failure
        if index < len(chunks):
            return {"type": "http.request", "body": chunks[index], "more_body": index < len(chunks) - 1}
        return {"type": "http.disconnect"}

    return receive, calls


class Inner:
    """The app behind the middleware: records the body messages it reads, or the error reading them raised."""

    def __init__(self) -> None:
        self.read: list[Message] = []
        self.raised: Exception | None = None
        self.scopes: list[Scope] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scopes.append(scope)
        try:
            while not self.read or self.read[-1].get("more_body", False):
                self.read.append(await receive())
        except Exception as exc:
            self.raised = exc
        await Response(b"routed")(scope, receive, send)


def run(app: Any, scope: Scope, receive: Receive) -> list[Message]:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent


def answering(answer: Response | None) -> tuple[Callable[[Scope, bytes], Response | None], list[bytes]]:
    asked: list[bytes] = []

    def repeat(scope: Scope, digest: bytes) -> Response | None:
        asked.append(digest)
        return answer

    return repeat, asked


def test_a_new_body_reaches_the_app_message_for_message_with_its_digest() -> None:
    inner = Inner()
    repeat, asked = answering(None)
    receive, _ = receiving(BODY)
    sent = run(RepeatFirst(inner, PATHS, repeat), scope_of(), receive)
    assert [m["body"] for m in inner.read] == BODY and [m["more_body"] for m in inner.read] == [True, False]
    assert sent[-1]["body"] == b"routed"
    assert asked == [request_digest(scope_of(), b"".join(BODY))] == [inner.scopes[0]["state"][REQUEST_DIGEST]]


def test_a_repeat_is_answered_without_the_app() -> None:
    inner = Inner()
    repeat, asked = answering(Response(b'{"label": "TRUE"}', media_type="application/json"))
    receive, _ = receiving(BODY)
    sent = run(RepeatFirst(inner, PATHS, repeat), scope_of(), receive)
    assert inner.scopes == [] and len(asked) == 1
    assert sent[0]["status"] == 200 and sent[1]["body"] == b'{"label": "TRUE"}'


def test_an_error_reading_the_body_reaches_the_app_where_it_was_met() -> None:
    inner = Inner()
    repeat, asked = answering(Response(b"never"))
    failure = TimeoutError("the body stopped coming")
    receive, _ = receiving(BODY, failure=failure)
    sent = run(RepeatFirst(inner, PATHS, repeat), scope_of(), receive)
    assert asked == []  # no digest of half a body
    assert [m["body"] for m in inner.read] == BODY[:1] and inner.raised is failure
    assert sent[-1]["body"] == b"routed"


@pytest.mark.parametrize("scope", [scope_of(path="/v1/feedback"), scope_of(method="GET")])
def test_other_routes_and_methods_are_passed_on_unread(scope: Scope) -> None:
    inner = Inner()
    repeat, asked = answering(Response(b"never"))
    receive, calls = receiving(BODY)
    run(RepeatFirst(inner, PATHS, repeat), scope, receive)
    assert asked == [] and calls[0] == len(BODY) and "state" not in inner.scopes[0]


def test_the_content_type_and_every_byte_tell_requests_apart() -> None:
    body = b"".join(BODY)
    digests = {
        request_digest(scope_of(), body),
        request_digest(scope_of(), body.replace(b": ", b":")),
        request_digest(scope_of(content_type=b"text/plain"), body),
        request_digest(scope_of(path="/v1/check/stream"), body),
    }
    assert len(digests) == 4


def test_a_remembered_request_follows_its_answer_out_of_the_cache() -> None:
    now = [0.0]
    cache = AnswerCache(size=4, ttl_s=10, clock=lambda: now[0])
    answer = {"label": "TRUE", "claims": [{"judgments": []}]}
    cache.put(("offline", None, "text", "stamp-1"), answer, lambda content: json.dumps(content).encode())
    cache.remember(b"digest", ("offline", None, "text"), b'{"url": "u"}')
    repeated = cache.repeat(b"digest", "stamp-1")
    assert repeated is not None and repeated.claims == 1 and json.loads(repeated.body)["url"] == "u"
    assert cache.repeat(b"other", "stamp-1") is None
    now[0] = 11.0
    assert cache.repeat(b"digest", "stamp-1") is None  # expired with its answer
    cache.put(("offline", None, "text", "stamp-2"), answer, lambda content: json.dumps(content).encode())
    assert cache.repeat(b"digest", "stamp-2") is None  # forgotten with it: the route remembers it again
    cache.remember(b"digest", ("offline", None, "text"), b"")
    again = cache.repeat(b"digest", "stamp-2")
    assert again is not None and "url" not in json.loads(again.body)  # this time the request had no url
    assert cache.repeat(b"digest", "stamp-3") is None  # the memory moved on: checked again


def test_the_server_repeats_the_routes_answer_and_its_limits() -> None:
    body = json.dumps({"text": TWO_CLAIMS, "url": "https://example.org/a"}).encode()
    spaced = body.replace(b'", "', b'",  "')  # the same request, another body: routed, then answered from memory
    headers = {**AUTH, "Content-Type": "application/json"}
    with server(claims_per_minute=1, claims_burst=6) as url:

        def post(content: bytes) -> httpx.Response:
            return httpx.post(f"{url}/v1/check", content=content, headers=headers, timeout=60)

        first, routed, repeated = post(body), post(spaced), post(body)
        refused = post(body)  # 6 claims in: the bucket is empty, for a repeat too
    assert [r.status_code for r in (first, routed, repeated)] == [200, 200, 200]
    assert routed.json()["usage"]["cache_hits"] == {"answer": 1} and repeated.content == routed.content
    assert repeated.headers["content-type"] == routed.headers["content-type"] == "application/json"
    assert repeated.json()["url"] == "https://example.org/a" and repeated.json()["claims"] == first.json()["claims"]
    assert refused.status_code == 429 and "claim rate limit reached (2 claims)" in refused.json()["error"]
    assert int(refused.headers["retry-after"]) >= 1


def test_a_stream_sent_again_is_sent_its_events_again_from_memory() -> None:
    """The browser extension checks through the stream: a page checked again must not be checked again."""
    headers = {**AUTH, "Content-Type": "application/json"}
    with server(claims_per_minute=1, claims_burst=6) as url:

        def streamed(body: dict[str, Any]) -> tuple[httpx.Response, list[tuple[str, dict[str, Any]]]]:
            with httpx.stream("POST", f"{url}/v1/check/stream", json=body, headers=headers, timeout=60) as response:
                if response.status_code != 200:
                    response.read()
                    return response, []
                return response, events(response)

        first, sent = streamed({"text": TWO_CLAIMS})
        again, resent = streamed({"text": TWO_CLAIMS, "title": "A page"})  # routed: another body, the same check
        repeat, repeated = streamed({"text": TWO_CLAIMS, "title": "A page"})  # byte for byte: before routing
        refused, _ = streamed({"text": TWO_CLAIMS})  # 6 claims in: the bucket is empty
    assert first.status_code == 200 and [name for name, _ in sent] == ["claims", "claim", "claim", "verdict"]
    assert "answer" not in sent[-1][1]["usage"]["cache_hits"]
    for response, events_again in ((again, resent), (repeat, repeated)):
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-cache"
        assert events_again[:-1] == sent[:-1]  # the claims and each claim, as they were sent
        verdict = events_again[-1][1]
        assert verdict["usage"]["cache_hits"] == {"answer": 1} and verdict["title"] == "A page"
        assert verdict["claims"] == sent[-1][1]["claims"] and verdict["label"] == sent[-1][1]["label"]
    assert refused.status_code == 429 and "claim rate limit" in refused.json()["error"]
