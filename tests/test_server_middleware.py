"""What stands between a request and the routes (:mod:`factcheck.server.middleware`), on a bare app with
no checker: the gate of keys and rate limits, the key checked before the body, the error answers, CORS
and the scrubbing of secrets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed")

from fastapi import FastAPI, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.testclient import TestClient

from factcheck.server.middleware import (
    CALLER,
    APIError,
    Gate,
    Redactor,
    add_error_handlers,
    add_middleware,
    json_position,
    unreadable_byte,
)
from factcheck.server.settings import ServerSettings
from factcheck.server.validation import plain_errors

KEY = "client-key-0123456789"
SECRET = "provider-secret-abcdef"
ORIGIN = "https://app.example"


def request_from(address: str = "10.0.0.1", authorization: str | None = None) -> Request:
    headers = [(b"authorization", authorization.encode())] if authorization else []
    return Request({"type": "http", "method": "POST", "path": "/v1/check", "headers": headers, "client": (address, 1)})


def refused(gate: Gate, request: Request) -> APIError:
    with pytest.raises(APIError) as caught:
        gate.authenticate(request)
    return caught.value


def test_the_gate_names_the_key_and_refuses_a_missing_or_wrong_one() -> None:
    gate = Gate(ServerSettings(api_keys=(KEY,), rate_per_minute=0))
    assert gate.authenticate(request_from(authorization=f"Bearer {KEY}")) == "key-1"
    for authorization in (None, "Bearer wrong-key-000000"):
        error = refused(gate, request_from(authorization=authorization))
        assert (error.status, error.message, error.headers) == (
            401,
            "missing or wrong API key",
            {"WWW-Authenticate": "Bearer"},
        )


def test_wrong_keys_lock_out_their_address_and_no_key_does_not() -> None:
    gate = Gate(ServerSettings(api_keys=(KEY,), rate_per_minute=0, auth_failures_per_minute=1))
    for _ in range(20):  # requests with no key guess nothing: never counted
        assert refused(gate, request_from()).status == 401
    for _ in range(10):  # the burst of wrong keys
        assert refused(gate, request_from(authorization="Bearer wrong-key-000000")).status == 401
    locked = refused(gate, request_from(authorization=f"Bearer {KEY}"))
    assert locked.status == 429 and locked.message.startswith("too many wrong API keys")
    assert int(locked.headers["Retry-After"]) >= 1
    assert gate.authenticate(request_from("10.0.0.2", f"Bearer {KEY}")) == "key-1"  # another address


def test_without_keys_the_caller_is_its_address_and_requests_and_claims_are_rate_limited() -> None:
    gate = Gate(ServerSettings(rate_per_minute=60, rate_burst=1, claims_per_minute=60, claims_burst=3))
    assert gate.authenticate(request_from("10.0.0.7")) == "ip:10.0.0.7"
    limited = refused(gate, request_from("10.0.0.7"))
    assert limited.status == 429 and limited.message.startswith("rate limit reached")
    admit = gate.admit_claims("ip:10.0.0.7")
    admit(3)
    with pytest.raises(APIError, match=r"claim rate limit reached \(2 claims\)") as caught:
        admit(2)
    assert caught.value.status == 429 and "Retry-After" in caught.value.headers


class Body(BaseModel):
    text: str


@pytest.fixture
def client() -> Iterator[TestClient]:
    """A bare app with the middleware and error handlers: ``/v1/check`` says who called, how many times it ran
    is counted, ``/boom`` fails with the secret in its message, ``/teapot`` refuses with an APIError."""
    settings = ServerSettings(api_keys=(KEY,), rate_per_minute=0, cors_origins=(ORIGIN,), max_text_chars=10)
    scrub = Redactor([KEY, SECRET])
    app = FastAPI()
    app.state.ran = 0
    add_error_handlers(app, scrub)

    @app.post("/v1/check")
    async def check(body: Body, request: Request) -> dict[str, Any]:
        request.app.state.ran += 1
        return {"caller": request.scope["state"][CALLER], "text": body.text}

    @app.get("/teapot")
    async def teapot() -> None:
        raise APIError(418, f"short and stout ({SECRET})", {"X-Why": "tea"})

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError(SECRET)

    add_middleware(app, settings, Gate(settings), scrub)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def test_a_request_without_a_key_is_refused_before_the_route_and_its_connection_closed(client: TestClient) -> None:
    answer = client.post("/v1/check", json={"text": "x."})
    assert answer.status_code == 401 and answer.json() == {"error": "missing or wrong API key"}
    assert answer.headers["connection"] == "close" and client.app.state.ran == 0  # type: ignore[attr-defined]
    accepted = client.post("/v1/check", json={"text": "x."}, headers={"Authorization": f"Bearer {KEY}"})
    assert accepted.json() == {"caller": "key-1", "text": "x."} and client.app.state.ran == 1  # type: ignore[attr-defined]


def test_errors_are_answered_in_the_documented_shape_and_scrubbed(client: TestClient) -> None:
    teapot = client.get("/teapot")
    assert teapot.status_code == 418 and teapot.headers["x-why"] == "tea"
    assert teapot.json() == {"error": "short and stout ([redacted])"}
    boom = client.get("/boom")
    assert boom.status_code == 500 and boom.json() == {"error": "internal error (see the server log)"}
    auth = {"Authorization": f"Bearer {KEY}"}
    invalid = client.post("/v1/check", json={}, headers=auth)
    assert invalid.status_code == 422 and invalid.json()["error"] == 'invalid request: missing field "text"'
    assert invalid.json()["details"] == [{"field": "text", "message": 'missing field "text"'}]
    huge = client.post("/v1/check", json={"text": "a" * 20_000}, headers=auth)  # over 12 * 10 + 16384 bytes
    assert huge.status_code == 413 and huge.json() == {"error": "request body over 16504 bytes", "max_text_chars": 10}


def test_a_preflight_from_another_origin_gets_403_and_no_cors_header(client: TestClient) -> None:
    asked = {"Access-Control-Request-Method": "POST"}
    allowed = client.options("/v1/check", headers={"Origin": ORIGIN, **asked})
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == ORIGIN
    other = client.options("/v1/check", headers={"Origin": "https://evil.example", **asked})
    assert other.status_code == 403
    assert other.json() == {"error": "origin not allowed (not in the server's --cors-origin list)"}
    assert not [h for h in other.headers if h.lower().startswith("access-control-")]


def test_the_redactor_removes_every_secret_from_text_and_json() -> None:
    scrub = Redactor([KEY, "", SECRET])
    assert KEY not in scrub(f"key {KEY} and {SECRET}") and SECRET not in scrub(f"{SECRET}")
    assert SECRET not in scrub.dumps({"error": f"sent {SECRET}"})
    assert scrub.error(400, "bad", extra=1).body == b'{"error": "bad", "extra": 1}'


def test_json_position_and_unreadable_byte_say_where_a_body_breaks() -> None:
    error = {"loc": ("body", 10), "ctx": {"error": "Expecting value"}}
    assert json_position(error, '{\n"text": ') == "Expecting value at line 2, column 9"
    assert json_position({"loc": ("body",)}, "x") == "invalid JSON"
    try:
        b"caf\xe9".decode("utf-8")
    except UnicodeDecodeError as exc:
        assert unreadable_byte(exc) == "byte 0xe9 at offset 3"


class Tagged(BaseModel):
    name: str = Field(min_length=2)
    tags: list[str] = []
    size: int = 0


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"name": "x"}, "name", '"name" must be a string of at least 2 characters (it has 1)'),
        ({"name": "xy", "tags": "a"}, "tags", '"tags" must be an array, not a string'),
        ({"name": "xy", "tags": [1]}, "tags.0", '"tags.0" must be a string, not a number'),
        ({"name": "xy", "size": "big"}, "size", '"size" must be a whole number, not a string'),
        ({"name": "xy", "nmae": "x"}, "nmae", 'unknown field "nmae" (did you mean "name"?)'),
    ],
)
def test_validation_errors_are_said_in_plain_words(data: dict[str, Any], field: str, message: str) -> None:
    class Strict(Tagged):
        model_config = ConfigDict(extra="forbid")

    with pytest.raises(ValidationError) as caught:
        Strict.model_validate(data)
    assert plain_errors(caught.value.errors(), Strict) == [{"field": field, "message": message}]
