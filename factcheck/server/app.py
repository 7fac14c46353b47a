"""The HTTP API for browser extensions: FastAPI routes over the Checker.

One process, one event loop for the requests (``--workers N`` runs N such
processes): every request's checks share the per-endpoint concurrency limits of
:mod:`factcheck.net` and the LLM client (sources and verifiers run on their own
loops, :mod:`factcheck.plugins.calls`), and checkers are built once per
(profile, scorer, labels) and reused. A text checked again is answered from
the cache of whole answers (:mod:`factcheck.server.answers`). The API keys of the
providers stay on the server; every answer is scrubbed of them before it is
sent, error messages included.

Routes (see docs/server.md): ``POST /v1/check``, ``POST /v1/check/stream``
(Server-Sent Events), ``GET /v1/health``, ``GET /v1/components``, and the
OpenAPI page at ``/docs``.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from factcheck.build import FALLBACK_EXTRACTOR, build_checker
from factcheck.claimtime import reference_time
from factcheck.config import PROFILES, load_settings
from factcheck.errors import ConfigError, FactcheckError
from factcheck.events import CheckEvent
from factcheck.pipeline import Checker
from factcheck.plugins.manager import get_registry
from factcheck.secrets import redact
from factcheck.server.answers import AnswerCache
from factcheck.server.auth import KeyChecker, RateLimiter, retry_after_header
from factcheck.server.runner import VOUCH
from factcheck.server.settings import ServerSettings
from factcheck.server.stream import check_events
from factcheck.sources.base import Source
from factcheck.text import valid_unicode
from factcheck.verifiers.base import Verifier

log = logging.getLogger("factcheck.server")
T = TypeVar("T")
WARM_UP_S = 120.0  # at most this long at start loading the default checker's models and indexes
STATUS_PREPARE_S = 20.0  # /v1/components waits this long for each component's prepare()
CALLER = "factcheck_caller"  # the scope state's key for the caller's id (see KeyFirst)
KEYED_PATHS = frozenset({"/v1/check", "/v1/check/stream", "/v1/components"})


class CheckRequest(BaseModel):
    """A text to check. ``url`` and ``title`` are metadata the server never fetches."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The text to check: a selection or an article.")
    url: str | None = Field(None, max_length=4096, description="Where the text was found (metadata, never fetched).")
    title: str | None = Field(None, max_length=1000, description="The page title (metadata).")
    profile: str | None = Field(None, description="Agent profile (default: the server's).")
    scorer: str | None = Field(None, description="Scorer name, e.g. mafc, normsum.")
    labels: str | None = Field(None, description="Label rule name, e.g. threshold, compose.")
    date: str | None = Field(
        None,
        max_length=64,
        description="When the text was written (ISO 8601, e.g. 2014-05-10; default now): claims' times are "
        "resolved against it and sources read as of then (docs/time.md).",
    )

    @field_validator("text", "url", "title", mode="before")
    @classmethod
    def _valid_unicode(cls, value: Any) -> Any:
        # JSON allows a lone surrogate ("\\ud800"); no answer could be encoded with it.
        return valid_unicode(value) if isinstance(value, str) else value

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("date")
    @classmethod
    def _a_date(cls, value: str | None) -> str | None:
        if value is not None:
            reference_time(value)  # a ValueError: the request is refused with its message
        return value

    @field_validator("profile", "scorer", "labels")
    @classmethod
    def _a_name(cls, value: str | None) -> str | None:
        if value is not None and not (0 < len(value) <= 64 and value.replace("-", "_").isidentifier()):
            raise ValueError("must be a component name (letters, digits, - and _)")
        return value


class APIError(Exception):
    """An error answer: status, a one-line message and extra headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


class BodyLimit:
    """Answers 413 to a request body over ``max_bytes`` before it is read whole (declared or streamed),
    and 408 to a body not all in within ``timeout_s`` of its headers, or arriving slower than ``min_rate``
    bytes a second after its first ``grace_s`` seconds. Both are deadlines from the headers: a byte that
    arrives does not restart them (a client sending a byte every few seconds is cut off in ``grace_s``)."""

    def __init__(
        self, app: ASGIApp, max_bytes: int, timeout_s: float = 10.0, min_rate: float = 1000.0, grace_s: float = 2.0
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self.min_rate = min_rate
        self.grace_s = grace_s

    async def _refuse(self, send: Send) -> None:
        body = json.dumps({"error": f"request body over {self.max_bytes} bytes"}).encode()
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
                raise HTTPException(413, f"request body over {self.max_bytes} bytes")
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
        """``content`` as one line of JSON, scrubbed (and valid Unicode whatever a component put in it)."""
        return valid_unicode(self(json.dumps(content, ensure_ascii=False)))

    def render(self, content: Any) -> bytes:
        """:meth:`dumps` as UTF-8 bytes."""
        return self.dumps(content).encode("utf-8")

    def json(self, content: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        """``content`` as a JSON answer, scrubbed."""
        return Response(self.render(content), status_code=status, headers=headers, media_type="application/json")


class CheckerPool:
    """Checkers by (profile, scorer, labels), built on first use, at most ``size`` kept (least recent dropped)."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._checkers: OrderedDict[tuple[str | None, str | None, str | None], Checker] = OrderedDict()

    def key(
        self, profile: str | None = None, scorer: str | None = None, labels: str | None = None
    ) -> tuple[str | None, str | None, str | None]:
        """What tells the checkers apart."""
        return (profile or self.settings.profile, scorer, labels)

    def get(self, profile: str | None = None, scorer: str | None = None, labels: str | None = None) -> Checker:
        """The checker for these choices (``None``: the server's default); ConfigError for an unknown name."""
        key = self.key(profile, scorer, labels)
        checker = self._checkers.pop(key, None)
        if checker is None:
            checker = build_checker(config=self.settings.config, profile=key[0], scorer=scorer, labels=labels)
        self._checkers[key] = checker
        while len(self._checkers) > self.settings.max_checkers:
            self._checkers.popitem(last=False)
        return checker


async def prepare(component: Source | Verifier, checker: Checker, within_s: float | None = None) -> dict[str, Any]:
    """Run a source's or verifier's ``prepare()`` as a check does (:meth:`Checker.prepare_component`:
    the checker's LLM settings, its time-out, plugin faults contained), waiting at most ``within_s``.
    ``{"usable": True}``, or ``False`` with the reason."""
    try:
        async with asyncio.timeout(within_s):
            reason = await checker.prepare_component(component)
    except TimeoutError:
        reason = f"not ready within {within_s:g}s"
    except FactcheckError as exc:  # a setting the operator must fix: this component cannot run
        reason = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # FACTCHECK_RAISE_ERRORS re-raises; still only a status here
        reason = f"{type(exc).__name__}: {exc}"
    if reason is None:
        return {"usable": True}
    return {"usable": False, "reason": reason.removeprefix("skipped: ")}


async def component_status(checker: Checker) -> dict[str, dict[str, Any]]:
    """Whether each registered source and verifier can run here (see :func:`prepare`)."""
    registry = get_registry()
    result: dict[str, dict[str, Any]] = {}
    for kind in ("sources", "verifiers"):
        components = registry.components[kind]
        answers = await asyncio.gather(*(prepare(c, checker, STATUS_PREPARE_S) for c in components.values()))
        result[kind] = dict(zip(components, answers, strict=True))
    return result


async def warm_up(checker: Checker) -> list[str]:
    """Load what the checker's agents need (indexes, models) before the first request; why any cannot run.

    No check is run: with the paper profile that would spend model and search calls at every start.
    The sentence splitter (no model service) is loaded too.
    """
    parts = {id(c): c for agent in checker.agents for c in (agent.source, agent.verifier)}
    answers = await asyncio.gather(*(prepare(c, checker) for c in parts.values()))
    problems = [f"{c.name}: {a['reason']}" for c, a in zip(parts.values(), answers, strict=True) if not a["usable"]]
    if checker.extractor.name == FALLBACK_EXTRACTOR:
        await asyncio.to_thread(checker.extractor.extract, "The server is starting.")
    return problems


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    """The ASGI application for ``settings`` (default: from the environment)."""
    settings = settings or ServerSettings.from_env()
    pool = CheckerPool(settings)
    keys = KeyChecker(settings.api_keys)
    limiter = RateLimiter(settings.rate_per_minute, settings.rate_burst)
    claim_limiter = RateLimiter(settings.claims_per_minute, settings.claims_burst)
    auth_failures = RateLimiter(settings.auth_failures_per_minute, 10)
    answers = AnswerCache(settings.answer_cache_size, settings.answer_cache_ttl_s)
    scrub = Redactor(settings.secrets())
    components_cache: dict[str, Any] = {}
    components_lock = asyncio.Lock()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Build the default checker and load its models and indexes now, so the first caller does not wait.
        try:
            async with asyncio.timeout(WARM_UP_S):  # a plugin that never gets ready must not keep the server down
                problems = await warm_up(pool.get())
            for problem in problems:
                log.warning("an agent of the default profile cannot run: %s", scrub(problem))
        except TimeoutError:
            log.warning("the default checker was not ready within %gs: starting anyway", WARM_UP_S)
        except Exception as exc:  # the server still starts: each request then says what is wrong
            log.warning("the default checker is not ready: %s: %s", type(exc).__name__, scrub(str(exc)))
        yield

    app = FastAPI(
        title="factcheck",
        version=_version(),
        summary="Evidence-based, multi-agent fact-checking for browser extensions.",
        lifespan=lifespan,
    )

    def error(status: int, message: str, headers: dict[str, str] | None = None, **extra: Any) -> Response:
        return scrub.json({"error": message, **extra}, status, headers)

    @app.exception_handler(APIError)
    async def _api_error(request: Request, exc: APIError) -> Response:
        return error(exc.status, exc.message, exc.headers)

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 400 and isinstance(exc.__cause__, UnicodeDecodeError):
            # FastAPI's "There was an error parsing the body": a body that is no UTF-8 is invalid JSON (422).
            cause = exc.__cause__
            if cause.encoding.replace("_", "-").lower() not in ("utf-8", "utf8"):
                # The parser read the body as the UTF-16 or UTF-32 its first bytes announce, and it broke off:
                # the body is not UTF-8 by intent, so what is wrong is the JSON.
                return body_error(f"not JSON: unreadable {cause.encoding.upper()}: {unreadable_byte(cause)}")
            return body_error(f"not UTF-8: {unreadable_byte(cause)}")
        return error(exc.status_code, str(exc.detail), dict(exc.headers or {}))

    def body_error(problem: str) -> Response:
        """422 for a body that cannot be read as JSON at all: the problem is the body, not a field of it."""
        return error(422, f"the body is {problem}", details=[{"field": "body", "message": problem}])

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        for e in exc.errors():
            if e.get("type") == "json_invalid":  # its "loc" holds a character offset, not a field
                return body_error(f"not JSON: {json_position(e, exc.body)}")
        details = [
            {"field": ".".join(str(p) for p in e.get("loc", ()) if p != "body") or "body", "message": e.get("msg", "")}
            for e in exc.errors()
        ]
        message = "; ".join(f"{d['field']}: {d['message']}" for d in details)
        return error(422, f"invalid request: {message}", details=details)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s", request.url.path)
        return error(500, "internal error (see the server log)")

    async def caller(request: Request) -> str:
        """The caller's id, as :class:`KeyFirst` found it before the body was read (else found now).
        A coroutine, though it never waits: FastAPI would run a plain function in a worker thread."""
        who = request.scope.get("state", {}).get(CALLER)
        return who if isinstance(who, str) else authenticate(request)

    def authenticate(request: Request) -> str:
        """Authenticate and rate-limit; the caller's id (a key number, or the client address without auth).

        An address that sent too many wrong keys gets 429 for a while, whatever key it sends (requests with
        no key at all are refused but not counted: they would let one address lock out the callers beside it).
        """
        address = f"ip:{request.client.host if request.client else 'unknown'}"
        if settings.auth:
            wait = auth_failures.waiting(address)
            if wait > 0:
                raise APIError(
                    429, f"too many wrong API keys: retry in {wait:.1f}s", {"Retry-After": retry_after_header(wait)}
                )
            given = request.headers.get("authorization")
            who = keys.identify(given)
            if who is None:
                if given:  # a guess; a request with no key guesses nothing, and must not lock out its address
                    auth_failures.take(address)
                raise APIError(401, "missing or wrong API key", {"WWW-Authenticate": "Bearer"})
        else:
            who = address
        wait = limiter.take(who)
        if wait > 0:
            raise APIError(429, f"rate limit reached: retry in {wait:.1f}s", {"Retry-After": retry_after_header(wait)})
        return who

    authorized = [Depends(caller)]

    def admit_claims(who: str) -> Callable[[int], None]:
        """Charge ``who``'s claim bucket one token per claim (429 when it is empty)."""

        def admit(count: int) -> None:
            wait = claim_limiter.take(who, count)
            if wait > 0:
                raise APIError(
                    429,
                    f"claim rate limit reached ({count} claims): retry in {wait:.1f}s",
                    {"Retry-After": retry_after_header(wait)},
                )

        return admit

    def run_check(checker: Checker, body: CheckRequest, who: str) -> AsyncGenerator[CheckEvent, None]:
        return check_events(
            checker,
            body.text,
            settings.deadline_s,
            max_claims=settings.max_claims,
            admit=admit_claims(who),
            as_of=body.date,
        )

    def checker_for(body: CheckRequest) -> Checker:
        if len(body.text) > settings.max_text_chars:
            raise APIError(413, f"text of {len(body.text)} characters is over the limit of {settings.max_text_chars}")
        registry = get_registry()
        if body.profile is not None and body.profile not in PROFILES:
            raise APIError(422, f"unknown profile {body.profile!r} (available: {', '.join(sorted(PROFILES))})")
        try:
            for kind, name in (("scorers", body.scorer), ("label_rules", body.labels)):
                if name is not None:
                    registry.get(kind, name)
        except ConfigError as exc:  # a name the caller chose
            raise APIError(422, str(exc)) from None
        try:
            return pool.get(body.profile, body.scorer, body.labels)
        except ConfigError as exc:  # the server's own settings: not the caller's fault
            log.error("cannot build a checker: %s", scrub(str(exc)))
            raise APIError(503, f"the server cannot check: {exc}") from None

    def metadata(body: CheckRequest) -> dict[str, Any]:
        return {k: v for k, v in (("url", body.url), ("title", body.title)) if v is not None}

    @app.get("/v1/health")
    async def health() -> dict[str, Any]:
        """Liveness: answers without a key and tells nothing secret."""
        return {"status": "ok", "version": _version(), "auth": "api-key" if settings.auth else "none"}

    @app.get("/v1/components", dependencies=authorized)
    async def components() -> Response:
        """Installed sources, verifiers, extractors, scorers and label rules, and which can run with
        the keys this server has (a source or verifier whose ``prepare`` fails is not usable)."""
        async with components_lock:
            if not components_cache:
                try:
                    checker = pool.get()
                    agents_of = {
                        name: load_settings(settings.config, profile=name).resolved_agents() for name in PROFILES
                    }
                except ConfigError as exc:
                    raise APIError(503, f"the server cannot check: {exc}") from None
                status = await component_status(checker)
                registry = get_registry()
                profiles = {}
                for name, agents in agents_of.items():
                    profiles[name] = [
                        {
                            "name": spec.name,
                            "source": spec.source,
                            "verifier": spec.verifier,
                            "usable": status["sources"].get(spec.source, {}).get("usable", False)
                            and status["verifiers"].get(spec.verifier, {}).get("usable", False),
                        }
                        for spec in agents
                    ]
                components_cache.update(
                    default_profile=checker.profile,
                    profiles=profiles,
                    sources=status["sources"],
                    verifiers=status["verifiers"],
                    extractors=sorted(registry.components["extractors"]),
                    scorers=sorted(registry.components["scorers"]),
                    label_rules=sorted(registry.components["label_rules"]),
                )
        return scrub.json(components_cache)

    @app.post("/v1/check")
    async def check(body: CheckRequest, request: Request, who: str = Depends(caller)) -> Response:
        """Check a text; the answer is the checked-text JSON (``factcheck/1``) plus ``partial``.

        A text checked before with the same settings is answered from memory (``usage.cache_hits.answer``).
        When the client goes away the check is cancelled.
        """
        checker = checker_for(body)
        # A text of another date is another check (its claims' times, the sources' dates); an undated one is
        # answered from memory as the check of its first asking, within the cache's time to live.
        answer_key = (pool.key(body.profile, body.scorer, body.labels), body.date, body.text)
        stored = answers.get(answer_key)
        if stored is not None:
            admit_claims(who)(stored.claims)
            extra = metadata(body)
            fields = scrub.render(extra) if extra else b""
            return Response(stored.with_fields(fields), media_type="application/json")

        async def verdict_of() -> dict[str, Any]:
            verdict: dict[str, Any] = {}
            async for event in run_check(checker, body, who):
                if event.name == "verdict":
                    verdict = event.data
            return verdict

        try:
            verdict = await until_disconnected(request, verdict_of())
        except ConfigError as exc:  # the server's own settings (a missing model or corpus): not the caller's fault
            log.error("check failed: %s", scrub(str(exc)))
            raise APIError(503, f"the server cannot check: {exc}") from None
        except FactcheckError as exc:
            raise APIError(400, str(exc)) from None
        if verdict is None:
            return Response(status_code=499)  # nobody is listening; the status is for the access log
        answers.put(answer_key, verdict, scrub.render)
        return scrub.json({**verdict, **metadata(body)})

    @app.post(
        "/v1/check/stream",
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}, "description": "claims, claim..., verdict"}},
    )
    async def check_stream(body: CheckRequest, request: Request, who: str = Depends(caller)) -> Response:
        """Check a text, sending Server-Sent Events as it goes: ``claims``, one ``claim`` per claim
        as it is done, then ``verdict`` (the same JSON as ``/v1/check``); ``error`` if it fails.

        The text is split before the answer starts, so a refusal (429 for too many claims, 400, 503)
        is a plain HTTP status."""
        checker = checker_for(body)
        stream = run_check(checker, body, who)

        async def split() -> CheckEvent:
            return await anext(stream)

        try:
            # The text is split before the answer starts: a client gone meanwhile stops the split too.
            first = await until_disconnected(request, split())
        except ConfigError as exc:
            log.error("check failed: %s", scrub(str(exc)))
            raise APIError(503, f"the server cannot check: {exc}") from None
        except FactcheckError as exc:
            raise APIError(400, str(exc)) from None
        if first is None:
            await stream.aclose()
            return Response(status_code=499)  # nobody is listening; the status is for the access log

        async def rest() -> AsyncIterator[CheckEvent]:
            yield first
            async for event in stream:
                yield event

        async def events() -> AsyncIterator[str]:
            try:
                async for event in rest():
                    data = {**event.data, **metadata(body)} if event.name == "verdict" else event.data
                    yield sse(event.name, data, scrub)
            except FactcheckError as exc:
                yield sse("error", {"error": str(exc)}, scrub)
            except Exception:
                log.exception("unexpected error in a streamed check")
                yield sse("error", {"error": "internal error (see the server log)"}, scrub)

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(events(), media_type="text/event-stream", headers=headers)

    # Outermost: CORS headers go on every answer to an allowed origin, errors included, so a page can read them.
    # Inside CORS, the key is checked before the body limits read anything (KeyFirst); refusals get CORS headers.
    app.add_middleware(
        BodyLimit,
        max_bytes=settings.max_body_bytes,
        timeout_s=settings.body_timeout_s,
        min_rate=settings.min_body_rate,
    )
    app.add_middleware(
        KeyFirst,
        paths=KEYED_PATHS,
        authenticate=authenticate,
        refuse=lambda exc: error(exc.status, exc.message, exc.headers),
        keyed=settings.auth,
    )
    app.add_middleware(
        StrictCORS,
        allow_origins=list(settings.cors_origins),
        allow_methods=["GET", "POST"],
        allow_headers=["Authorization", "Content-Type"],
        max_age=600,
    )
    return app


def app_from_environment() -> FastAPI:
    """The app of one worker process of ``factcheck serve --workers N``: its settings come from
    the environment variable the supervisor set (see :func:`factcheck.server.runner.serve_workers`)."""
    import os

    from factcheck.server.runner import WORKER_SETTINGS, install_log_filters

    install_log_filters()
    return create_app(ServerSettings.from_json(os.environ[WORKER_SETTINGS]))


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


def unreadable_byte(exc: UnicodeDecodeError) -> str:
    """``byte 0xe9 at offset 14``: where a body stops being UTF-8."""
    return f"byte 0x{exc.object[exc.start]:02x} at offset {exc.start}"


def sse(name: str, data: dict[str, Any], scrub: Redactor) -> str:
    """One Server-Sent Event: a name and one line of scrubbed JSON."""
    return f"event: {name}\ndata: {scrub.dumps(data)}\n\n"


async def until_disconnected(request: Request, work: Awaitable[T]) -> T | None:
    """``await work``, cancelled if the client disconnects first (then ``None``)."""

    async def gone() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(gone())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if task.cancelled():
        return None
    return task.result()


def _version() -> str:
    try:
        return importlib.metadata.version("factcheck-agents")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
