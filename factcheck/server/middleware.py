"""What stands between a request and the routes, and what every answer passes through on its way out.

In the order a request meets them: CORS with an allow-list (:class:`StrictCORS`), the
key and rate limits checked as soon as the headers are in (:class:`KeyFirst`, deciding
with a :class:`Gate`), then the body's size, deadline and minimum rate
(:class:`BodyLimit`). Refusals and errors are answered in one JSON shape,
``{"error": ...}``, by the handlers :func:`add_error_handlers` installs, and every
answer is scrubbed of the server's secrets (:class:`Redactor`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import Response
from pydantic import BaseModel
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from factcheck.jsonl import rounded
from factcheck.secrets import redact
from factcheck.server.answers import RepeatFirst
from factcheck.server.auth import KeyChecker, RateLimiter, retry_after_header
from factcheck.server.runner import VOUCH
from factcheck.server.settings import ServerSettings
from factcheck.server.validation import body_problem, plain_errors
from factcheck.text import plural, valid_unicode

log = logging.getLogger("factcheck.server")
CALLER = "factcheck_caller"  # the scope state's key for the caller's id (see KeyFirst)
FEEDBACK_PATH = "/v1/feedback"  # corrections into the experience memory: a key's holder only (Gate.may_correct)
KEYED_PATHS = frozenset({"/v1/check", "/v1/check/stream", "/v1/components", FEEDBACK_PATH})


class APIError(Exception):
    """An error answer: status, a one-line message and extra headers."""

    def __init__(
        self, status: int, message: str, headers: dict[str, str] | None = None, extra: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.extra = extra or {}  # fields beside "error" for a program to read (a 413's max_text_chars)


class BodyTooLarge(HTTPException):
    """413 for a body that grew over the limit while it was read, with the fields :class:`APIError` would carry."""

    def __init__(self, message: str, extra: dict[str, Any]) -> None:
        super().__init__(413, message)
        self.extra = extra


class BodyLimit:
    """Answers 413 to a request body over ``max_bytes`` before it is read whole (declared or streamed),
    and 408 to a body not all in within ``timeout_s`` of its headers, or arriving slower than ``min_rate``
    bytes a second after its first ``grace_s`` seconds. Both are deadlines from the headers: a byte that
    arrives does not restart them (a client sending a byte every few seconds is cut off in ``grace_s``).
    With ``max_text_chars`` (the text limit this body limit is worked out from), a 413 says it too, so a
    client can split its text without reading the message."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        timeout_s: float = 10.0,
        min_rate: float = 1000.0,
        grace_s: float = 2.0,
        max_text_chars: int | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self.min_rate = min_rate
        self.grace_s = grace_s
        self.extra = {"max_text_chars": max_text_chars} if max_text_chars is not None else {}

    async def _refuse(self, send: Send) -> None:
        body = json.dumps({"error": f"request body over {self.max_bytes} bytes", **self.extra}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        received = 0
        body_done = False
        started = asyncio.get_running_loop().time()

        async def limited() -> Message:
            nonlocal received, body_done
            if body_done:  # after the body only the disconnect is awaited: no time-out
                return await receive()
            allowed = self.timeout_s
            if self.min_rate > 0:  # the time the bytes in so far buy at the minimum rate
                allowed = min(allowed, self.grace_s + received / self.min_rate)
            try:
                async with asyncio.timeout_at(started + allowed):
                    message = await receive()
            except TimeoutError:
                if allowed < self.timeout_s:
                    problem = f"request body arriving slower than {self.min_rate:g} bytes a second"
                else:
                    problem = f"request body not received within {self.timeout_s:g}s"
                raise HTTPException(408, problem, {"Connection": "close"}) from None
            body_done = message.get("type") != "http.request" or not message.get("more_body", False)
            received += len(message.get("body", b""))
            if received > self.max_bytes:
                # FastAPI passes an HTTPException raised while it reads the body on to the handlers.
                raise BodyTooLarge(f"request body over {self.max_bytes} bytes", self.extra)
            return message

        await self.app(scope, limited, send)


class KeyFirst:
    """Runs ``authenticate`` (key and rate limits) on the requests to ``paths`` as soon as their headers are
    in, before anything reads the body: a caller without a key is refused at once, and its connection
    closed, instead of being let send a body first. The caller's id goes into the scope's state
    (``factcheck_caller``). With ``keyed`` (the server has keys), a connection whose key was accepted is
    vouched for to the protocol (:data:`factcheck.server.runner.VOUCH`), which then no longer counts it
    as pending; without keys nobody shows one, and every body still coming stays pending."""

    def __init__(
        self,
        app: ASGIApp,
        paths: frozenset[str],
        authenticate: Callable[[Request], str],
        refuse: Callable[[APIError], Response],
        keyed: bool = True,
    ) -> None:
        self.app = app
        self.paths = paths
        self.authenticate = authenticate
        self.refuse = refuse
        self.keyed = keyed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in self.paths or scope["method"] == "OPTIONS":
            await self.app(scope, receive, send)
            return
        try:
            who = self.authenticate(Request(scope))
        except APIError as exc:
            response = self.refuse(exc)
            response.headers["Connection"] = "close"
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})[CALLER] = who
        vouch = scope.get("extensions", {}).get(VOUCH, {}).get("vouch")
        if self.keyed and callable(vouch):
            vouch()
        await self.app(scope, receive, send)


class StrictCORS(CORSMiddleware):
    """CORS with an allow-list; a preflight from any other origin gets 403 and no CORS header at all
    (Starlette's own answer still lists the allowed methods and headers)."""

    def preflight_response(self, request_headers: Headers) -> Response:
        if not self.is_allowed_origin(request_headers.get("origin", "")):
            # The documented error shape, like every other refusal (nothing in it to scrub).
            body = json.dumps({"error": "origin not allowed (not in the server's --cors-origin list)"})
            return Response(body, status_code=403, media_type="application/json")
        answer = super().preflight_response(request_headers)
        if answer.status_code == 400:  # a method or header not allowed: Starlette says so in plain text
            refused = bytes(answer.body).decode().removeprefix("Disallowed CORS ")
            body = json.dumps({"error": f"preflight refused: {refused} not allowed (methods: GET, POST)"})
            kept = {k: v for k, v in answer.headers.items() if k not in ("content-length", "content-type")}
            return Response(body, status_code=400, headers=kept, media_type="application/json")
        return answer


class Redactor:
    """Removes every secret (caller keys, provider keys) from text about to leave the server."""

    def __init__(self, secrets: Sequence[str]) -> None:
        self.secrets = [s for s in secrets if s]

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = redact(text, secret)
        return text

    def dumps(self, content: Any) -> str:
        """``content`` as one line of JSON, scrubbed (and valid Unicode whatever a component put in it), its
        numbers rounded for readers (:func:`factcheck.jsonl.rounded`)."""
        return valid_unicode(self(json.dumps(rounded(content), ensure_ascii=False)))

    def render(self, content: Any) -> bytes:
        """:meth:`dumps` as UTF-8 bytes."""
        return self.dumps(content).encode("utf-8")

    def json(self, content: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        """``content`` as a JSON answer, scrubbed."""
        return Response(self.render(content), status_code=status, headers=headers, media_type="application/json")

    def error(self, status: int, message: str, headers: dict[str, str] | None = None, **extra: Any) -> Response:
        """An error answer in the documented shape, ``{"error": message, ...}``, scrubbed."""
        return self.json({"error": message, **extra}, status, headers)


class Gate:
    """Who may call, and how often: one app's API keys and its rate limits of requests, of claims, and of
    wrong keys per address."""

    def __init__(self, settings: ServerSettings) -> None:
        self.auth = settings.auth
        self.keys = KeyChecker(settings.api_keys)
        self.feedback_keys = frozenset(settings.feedback_keys)
        self.limiter = RateLimiter(settings.rate_per_minute, settings.rate_burst)
        self.claim_limiter = RateLimiter(settings.claims_per_minute, settings.claims_burst)
        self.auth_failures = RateLimiter(settings.auth_failures_per_minute, 10)

    def authenticate(self, request: Request) -> str:
        """Authenticate and rate-limit; the caller's id (a key number, or the client address without auth).
        On ``/v1/feedback`` a caller who may not send corrections is refused (403, :meth:`may_correct`)
        before its body is read.

        An address that sent too many wrong keys gets 429 for a while, whatever key it sends (requests with
        no key at all are refused but not counted: they would let one address lock out the callers beside it).
        """
        address = f"ip:{request.client.host if request.client else 'unknown'}"
        if self.auth:
            wait = self.auth_failures.waiting(address)
            if wait > 0:
                raise APIError(
                    429, f"too many wrong API keys: retry in {wait:.1f}s", {"Retry-After": retry_after_header(wait)}
                )
            given = request.headers.get("authorization")
            who = self.keys.identify(given)
            if who is None:
                if given:  # a guess; a request with no key guesses nothing, and must not lock out its address
                    self.auth_failures.take(address)
                raise APIError(401, "missing or wrong API key", {"WWW-Authenticate": "Bearer"})
        else:
            who = address
        if request.scope.get("path") == FEEDBACK_PATH:
            self.may_correct(who)
        wait = self.limiter.take(who)
        if wait > 0:
            raise APIError(429, f"rate limit reached: retry in {wait:.1f}s", {"Retry-After": retry_after_header(wait)})
        return who

    def may_correct(self, who: str) -> None:
        """403 unless ``who`` may send corrections: only a caller whose key is one of ``feedback_keys``. A
        server that names none takes no corrections (the keys of a browser extension are often shared by
        many; who may correct is the operator's explicit choice), and a server without keys takes none at
        all, since a correction nobody can be held to could poison every check that lends it."""
        if not self.auth:
            raise APIError(
                403,
                "this server takes no corrections: it runs without API keys, and only an authenticated "
                "correction may enter the experience memory (set FACTCHECK_API_KEYS)",
            )
        if not self.feedback_keys:
            raise APIError(
                403,
                "this server takes no corrections: it names no feedback_keys (the key ids whose callers may "
                "correct: set FACTCHECK_FEEDBACK_KEYS=key-1 or serve --feedback-key key-1)",
            )
        if who not in self.feedback_keys:
            raise APIError(403, f"{who} may not send corrections (not one of the server's feedback_keys)")

    def admit_claims(self, who: str) -> Callable[[int], None]:
        """Charge ``who``'s claim bucket one token per claim (429 when it is empty)."""

        def admit(count: int) -> None:
            wait = self.claim_limiter.take(who, count)
            if wait > 0:
                raise APIError(
                    429,
                    f"claim rate limit reached ({plural(count, 'claim')}): retry in {wait:.1f}s",
                    {"Retry-After": retry_after_header(wait)},
                )

        return admit


def add_error_handlers(app: FastAPI, scrub: Redactor, bodies: Mapping[str, type[BaseModel]] | None = None) -> None:
    """Answer every error in the documented shape: an :class:`APIError` as it says, an unreadable body
    or a field that does not validate as 422 with the field named in plain words
    (:mod:`factcheck.server.validation`), anything unexpected as 500 (logged). ``bodies``: the model
    of each path's body, so a mistyped field can be answered with the one meant."""

    def body_error(problem: str) -> Response:
        """422 for a body that cannot be read as JSON at all: the problem is the body, not a field of it."""
        return scrub.error(422, f"the body is {problem}", details=[{"field": "body", "message": problem}])

    @app.exception_handler(APIError)
    async def api_error(request: Request, exc: APIError) -> Response:
        return scrub.error(exc.status, exc.message, exc.headers, **exc.extra)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 400 and isinstance(exc.__cause__, UnicodeDecodeError):
            # FastAPI's "There was an error parsing the body": a body that is no UTF-8 is invalid JSON (422).
            cause = exc.__cause__
            if cause.encoding.replace("_", "-").lower() not in ("utf-8", "utf8"):
                # The parser read the body as the UTF-16 or UTF-32 its first bytes announce, and it broke off:
                # the body is not UTF-8 by intent, so what is wrong is the JSON.
                return body_error(f"not JSON: unreadable {cause.encoding.upper()}: {unreadable_byte(cause)}")
            return body_error(
                f"not UTF-8 ({unreadable_byte(cause)}): send the JSON encoded as UTF-8"
                f"{declared_charset(request.headers.get('content-type', ''))}"
            )
        return scrub.error(exc.status_code, str(exc.detail), dict(exc.headers or {}), **getattr(exc, "extra", {}))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        for e in exc.errors():
            if e.get("type") == "json_invalid":  # its "loc" holds a character offset, not a field
                return body_error(f"not JSON: {json_position(e, exc.body)}")
        model = (bodies or {}).get(request.scope.get("path", ""))
        for e in exc.errors():
            problem = body_problem(e, model, request.headers.get("content-type", ""))
            if problem is not None:  # an empty body, an array, a form: no field of it is the trouble
                return body_error(problem)
        details = plain_errors(exc.errors(), model)
        message = "; ".join(d["message"] for d in details)
        return scrub.error(422, f"invalid request: {message}", details=details)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s", request.url.path)
        return scrub.error(500, "internal error (see the server log)")


def add_middleware(
    app: FastAPI,
    settings: ServerSettings,
    gate: Gate,
    scrub: Redactor,
    repeat: Callable[[Scope, bytes], Response | None] | None = None,
) -> None:
    """CORS, the key, the body limits and, with ``repeat``, the answers to repeated checks, in that order from
    the outside in."""
    # Outermost: CORS headers go on every answer to an allowed origin, errors included, so a page can read them.
    # Inside CORS, the key is checked before the body limits read anything (KeyFirst); refusals get CORS headers.
    # Innermost, a check whose body was answered before is answered from the kept answers (RepeatFirst): after
    # the key, the rate limits and the body limits, before routing.
    if repeat is not None:
        app.add_middleware(RepeatFirst, paths=frozenset({"/v1/check", "/v1/check/stream"}), repeat=repeat)
    app.add_middleware(
        BodyLimit,
        max_bytes=settings.max_body_bytes,
        timeout_s=settings.body_timeout_s,
        min_rate=settings.min_body_rate,
        max_text_chars=settings.max_text_chars,
    )
    app.add_middleware(
        KeyFirst,
        paths=KEYED_PATHS,
        authenticate=gate.authenticate,
        refuse=lambda exc: scrub.error(exc.status, exc.message, exc.headers),
        keyed=settings.auth,
    )
    app.add_middleware(
        StrictCORS,
        allow_origins=list(settings.cors_origins),
        allow_methods=["GET", "POST"],
        allow_headers=["Authorization", "Content-Type"],
        max_age=600,
    )


def json_position(error: Any, body: Any) -> str:
    """``Expecting value at line 1, column 10``: FastAPI's JSON decode error, said where it is."""
    reason = str((error.get("ctx") or {}).get("error") or "invalid JSON")
    loc = error.get("loc") or ()
    offset = loc[-1] if loc and isinstance(loc[-1], int) else None
    if offset is None or not isinstance(body, str):
        return reason
    line = body.count("\n", 0, offset) + 1
    column = offset - (body.rfind("\n", 0, offset) + 1) + 1
    return f"{reason} at line {line}, column {column}"


def declared_charset(content_type: str) -> str:
    """`` (its charset=latin-1 is not read)``: a charset other than UTF-8 that a body declares; else empty."""
    found = re.search(r"charset=\"?([^\";\s]+)", content_type, re.IGNORECASE)
    if found is None or found.group(1).replace("_", "-").lower() in ("utf-8", "utf8"):
        return ""
    return f" (its charset={found.group(1)} is not read)"


def unreadable_byte(exc: UnicodeDecodeError) -> str:
    """``byte 0xe9 at offset 14``: where a body stops being UTF-8."""
    return f"byte 0x{exc.object[exc.start]:02x} at offset {exc.start}"
