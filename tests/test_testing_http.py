"""factcheck.testing.http, the one fake server: scripted answers, kept-alive connections, a prompt stop."""

from __future__ import annotations

import http.client
import json
import time

import pytest

from factcheck.testing.http import FakeServer, Response
from factcheck.testing.llm import FakeChatServer


def get(connection: http.client.HTTPConnection, path: str) -> tuple[int, object]:
    connection.request("GET", path)
    answer = connection.getresponse()
    return answer.status, json.loads(answer.read())


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def test_queued_answers_come_first_then_the_route_then_the_fallback() -> None:
    with FakeServer() as server:
        server.route("GET", "/a", lambda request: Response({"route": request.query["q"][0]}))
        server.queue("GET", "/a", Response({"error": "busy"}, status=503))
        answers = [get(http.client.HTTPConnection("127.0.0.1", port_of(server.url)), p) for p in ("/a?q=1",) * 2]
        missing = get(http.client.HTTPConnection("127.0.0.1", port_of(server.url)), "/b")
    assert answers == [(503, {"error": "busy"}), (200, {"route": "1"})]
    assert missing == (404, {"error": "no route ('GET', '/b')"})
    assert [r.path for r in server.requests] == ["/a", "/a", "/b"] and len(server.calls("/a")) == 2


def test_keep_alive_serves_many_requests_on_one_connection_and_stop_closes_it() -> None:
    server = FakeServer(keep_alive=True).start()
    server.route("GET", "/a", lambda request: Response({"ok": True}))
    connection = http.client.HTTPConnection("127.0.0.1", port_of(server.url), timeout=5)
    assert [get(connection, "/a") for _ in range(3)] == [(200, {"ok": True})] * 3
    server.stop()
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        get(connection, "/a")  # the kept connection went with the server


def test_stop_does_not_wait_for_a_delayed_answer() -> None:
    server = FakeServer().start()
    server.queue("GET", "/slow", Response({"late": True}, delay_s=30))
    connection = http.client.HTTPConnection("127.0.0.1", port_of(server.url), timeout=10)
    connection.request("GET", "/slow")
    while not server.requests:
        time.sleep(0.01)
    started = time.monotonic()
    server.stop()
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        connection.getresponse()
    assert time.monotonic() - started < 5


def test_the_chat_server_answers_chat_completions_only() -> None:
    with FakeChatServer() as fake:
        connection = http.client.HTTPConnection("127.0.0.1", port_of(fake.url), timeout=5)
        connection.request("POST", "/v1/chat/completions", body=b"{not json")
        bad = connection.getresponse()
        assert (bad.status, json.loads(bad.read())) == (400, {"error": {"message": "body is not JSON"}})
        assert get(connection, "/v1/models") == (404, {"error": {"message": "no route GET /v1/models"}})
        body = {"model": "m", "messages": [{"role": "user", "content": 'Answer "factuality".\nCLAIM: x'}]}
        connection.request("POST", "/v1/chat/completions", body=json.dumps(body))
        answer = json.loads(connection.getresponse().read())
    assert json.loads(answer["choices"][0]["message"]["content"])["factuality"] is True
    assert fake.requests == 1 and list(fake.model.requests) == [body]  # one connection, kept alive throughout
