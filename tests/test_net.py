"""The service layer (factcheck.net): one client per loop over an injectable transport, retries, the per-host
limit and the one memory of refusals. Unit tests inject an ``httpx.MockTransport`` through ``Service``; the
sources' own tests speak real HTTP to fakes on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from factcheck import Claim
from factcheck.calls import run_beside
from factcheck.context import using
from factcheck.errors import LLMRefusedError, ServiceHTTPError, ServiceUnreachableError, SourceError
from factcheck.llm.client import LLMSettings, chat, ensure_usable
from factcheck.net import (
    DEFAULT_SERVICE,
    REFUSALS,
    Refusals,
    Service,
    request_json,
    service,
    use_service,
)
from factcheck.sources.websearch import SerperSource
from factcheck.sources.wikipedia import WikipediaSource
from factcheck.usage import UsageRecorder

Handler = Callable[[httpx.Request], httpx.Response]


class Recording(httpx.MockTransport):
    """A MockTransport that keeps the requests it carried and says whether anything closed it."""

    def __init__(self, answer: Handler) -> None:
        self.requests: list[httpx.Request] = []
        self.closed = False

        def handle(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            return answer(request)

        super().__init__(handle)

    async def aclose(self) -> None:
        self.closed = True


def completion(text: str) -> dict[str, Any]:
    """An OpenAI chat completion as the API sends it."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
    }


def by_host(request: httpx.Request) -> httpx.Response:
    if request.url.host == "serper.test":
        return httpx.Response(
            200, json={"organic": [{"title": "T", "snippet": "From Serper.", "link": "https://a.b/"}]}
        )
    if request.url.host == "wiki.test":
        page = {"pageid": 1, "title": "P", "index": 1, "extract": "From the wiki.", "fullurl": "https://wiki.test/P"}
        return httpx.Response(200, json={"query": {"pages": [page]}})
    if request.url.host == "llm.test":
        return httpx.Response(200, json=completion("From the model."))
    return httpx.Response(404, json={"error": "unknown host"})


def test_an_injected_transport_carries_every_source_and_the_llm_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERPER_API_KEY", "sk-test-0123456789abcdef")
    transport = Recording(by_host)
    layer = Service(transport=transport)
    claim = Claim("c", "A claim.", queries=("a claim",))
    settings = LLMSettings(base_url="https://llm.test/v1", model="m", api_key_env="NO_SUCH_KEY_VARIABLE")

    async def everything() -> list[str]:
        web = await SerperSource(base_url="https://serper.test").retrieve(claim)
        wiki = await WikipediaSource(api_url="https://wiki.test/w/api.php").retrieve(claim)
        answer = await chat([{"role": "user", "content": "Say it."}])
        return [web[0].text, wiki[0].text, answer.text]

    with using(llm=settings), use_service(layer):
        assert service() is layer
        texts = asyncio.run(everything())
    assert texts == ["From Serper.", "From the wiki.", "From the model."]
    assert [r.url.host for r in transport.requests] == ["serper.test", "wiki.test", "llm.test"]
    assert transport.requests[0].headers["X-API-KEY"] == "sk-test-0123456789abcdef"
    assert json.loads(transport.requests[2].content)["model"] == "m"
    assert not transport.closed  # each call's client was closed, the transport lent to it was not
    assert service() is DEFAULT_SERVICE  # outside the block


def test_a_plugin_loop_keeps_one_client_and_a_short_lived_loop_gets_one_per_call() -> None:
    layer = Service(transport=Recording(by_host))
    source = SerperSource()

    async def twice() -> tuple[tuple[httpx.AsyncClient, bool], tuple[httpx.AsyncClient, bool]]:
        return layer.http_client(), layer.http_client()

    async def on_the_plugin_loop() -> tuple[tuple[httpx.AsyncClient, bool], tuple[httpx.AsyncClient, bool]]:
        return await run_beside(source, twice)

    (kept, owned), (again, owned_again) = asyncio.run(on_the_plugin_loop())
    assert kept is again and not owned and not owned_again
    (first, first_owned), (second, second_owned) = asyncio.run(twice())
    assert first is not second and first_owned and second_owned


def test_429_is_retried_after_retry_after_and_each_request_is_counted() -> None:
    answers = iter([httpx.Response(429, headers={"Retry-After": "0"}, json={"message": "slow down"})])
    transport = Recording(lambda request: next(answers, httpx.Response(200, json={"ok": True})))
    recorder = UsageRecorder()
    with using(usage=recorder), use_service(Service(transport=transport)):
        body = asyncio.run(request_json("GET", "https://api.test/x", service="api", backoff_s=30.0))
    assert body == {"ok": True}  # after no wait: the server said 0 s, not the 30 s back-off
    assert len(transport.requests) == 2 and recorder.search_calls == 2
    assert transport.requests[0].headers["User-Agent"].startswith("factcheck-agents/")


def test_an_error_keeps_the_servers_words_and_its_json_body() -> None:
    body = {"error": "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"}
    layer = Service(transport=Recording(lambda request: httpx.Response(401, json=body)))
    with pytest.raises(ServiceHTTPError) as caught:
        asyncio.run(layer.request_json("GET", "https://api.test/x", service="api"))
    assert (caught.value.status, caught.value.body, caught.value.content_type) == (401, body, "application/json")
    assert str(caught.value) == f"api: HTTP 401: {body['error']}"


def test_an_unreachable_endpoint_fails_at_once_and_is_tried_again_after_its_ttl() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("All connection attempts failed", request=request)

    transport = Recording(refuse)
    layer = Service(transport=transport, refusals=Refusals(unreachable_ttl_s=0.2))

    def send() -> Any:
        return asyncio.run(layer.request_json("GET", "https://down.test/x", service="api", retries=3))

    with pytest.raises(ServiceUnreachableError, match=r"^api: cannot reach down\.test:443 \(") as first:
        send()
    assert len(transport.requests) == 1  # no retries
    with pytest.raises(ServiceUnreachableError, match="not sent: unreachable a moment ago"):
        send()
    assert len(transport.requests) == 1
    time.sleep(0.25)
    with pytest.raises(ServiceUnreachableError, match="cannot reach"):
        send()
    assert len(transport.requests) == 2
    assert layer.refusals.met() == (str(first.value),)  # the reason, once however often it was met


def test_refusals_for_a_check_last_that_check_only() -> None:
    refusals = Refusals()
    refusals.remember(("web", "key"), "a lasting refusal")  # believed in every check, for ttl_s
    refusals.remember(("llm", "x"), "outside a check", for_check=True)
    assert refusals.reason(("llm", "x")) is None  # no check to keep it for
    first, second = UsageRecorder(), UsageRecorder()
    with using(usage=first):
        refusals.remember(("llm", "x"), "unknown model", for_check=True)
        refusals.remember(("llm", "x"), "said again", for_check=True)
        assert refusals.reason(("llm", "x")) == "unknown model"  # the first reason is kept
        with using(usage=second):
            assert refusals.reason(("llm", "x")) is None
            assert refusals.reason(("web", "key")) == "a lasting refusal"
    assert refusals.reason(("llm", "x")) is None


def test_a_model_the_server_refuses_is_remembered_in_the_services_memory_for_the_check() -> None:
    refused = {"error": {"message": "The model `m` does not exist", "type": "invalid_request_error"}}
    transport = Recording(lambda request: httpx.Response(404, json=refused))
    layer = Service(transport=transport)
    settings = LLMSettings(base_url="https://llm.test/v1", model="m", api_key_env="NO_SUCH_KEY_VARIABLE")

    async def ask() -> None:
        await chat([{"role": "user", "content": "Hello?"}])

    recorder = UsageRecorder()
    with using(llm=settings, usage=recorder), use_service(layer):
        with pytest.raises(LLMRefusedError, match="does not exist"):
            asyncio.run(ask())
        with pytest.raises(LLMRefusedError, match="does not exist"):
            ensure_usable()  # the rest of the check does not ask again
        with pytest.raises(LLMRefusedError):
            asyncio.run(ask())
        assert len(transport.requests) == 1
        with using(usage=UsageRecorder()):  # the next check asks again
            ensure_usable()
        assert REFUSALS.reason(("llm:https://llm.test/v1:m",)) is None  # the layer's own memory, not the default


def test_a_refusal_raised_before_sending_stops_the_request() -> None:
    transport = Recording(lambda request: httpx.Response(200, json={}))
    layer = Service(transport=transport)

    def refused() -> None:
        raise SourceError("refused earlier")

    with pytest.raises(SourceError, match="refused earlier"):
        asyncio.run(layer.request_json("GET", "https://api.test/x", service="api", before_send=refused))
    assert transport.requests == []


def test_an_llm_client_kept_on_a_plugin_loop_goes_with_its_service() -> None:
    import gc
    import weakref

    layer = Service(transport=Recording(by_host))
    settings = LLMSettings(base_url="https://llm.test/v1", model="m", api_key_env="NO_SUCH_KEY_VARIABLE")
    source = SerperSource()  # whose plugin loop runs the calls

    async def ask() -> str:
        return (await chat([{"role": "user", "content": "Say it."}])).text

    async def on_the_plugin_loop() -> list[str]:
        return [await run_beside(source, ask) for _ in range(2)]

    with using(llm=settings), use_service(layer):
        assert asyncio.run(on_the_plugin_loop()) == ["From the model.", "From the model."]
    assert len(layer.transport.requests) == 2  # type: ignore[union-attr]
    (kept,) = (client for per_loop in layer._kept.values() for client in per_loop.values())
    gone = weakref.ref(kept)
    del kept, layer
    for _ in range(3):  # the openai client's own reference cycles take more than one pass
        gc.collect()
    assert gone() is None  # not held by a table of its own for the rest of the process
