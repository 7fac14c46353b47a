"""The HTTP API for browser extensions: FastAPI routes over the Checker.

One process, one event loop for the requests (``--workers N`` runs N such
processes): every request's checks share the per-endpoint concurrency limits of
:mod:`factcheck.net` and the LLM client (sources and verifiers run on their own
loops, :mod:`factcheck.calls`), and checkers are built once per
(profile, scorer, labels, deliberation) and reused. A text checked again is answered from
the cache of whole answers (:mod:`factcheck.server.answers`). The API keys of the
providers stay on the server; every answer is scrubbed of them before it is
sent, error messages included.

Routes (see docs/server.md): ``POST /v1/check``, ``POST /v1/check/stream``
(Server-Sent Events), ``POST /v1/feedback`` (a key holder's correction, into the
experience memory), ``GET /v1/health``, ``GET /v1/components``, and the OpenAPI
page at ``/docs``.

The pieces: the middleware, error handlers and secret scrubbing in
:mod:`factcheck.server.middleware`, the checkers and their readiness in
:mod:`factcheck.server.pool`; here the request's shape, one app's :class:`Service`
(what its routes share), and the routes, each a named function of :data:`router`.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import sqlite3
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Hashable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from starlette.types import Scope

from factcheck.claimtime import reference_time
from factcheck.config import PROFILES
from factcheck.errors import ConfigError, FactcheckError, InputError
from factcheck.events import CheckEvent
from factcheck.memory.corrections import Recorded, correction_from_result, correction_from_text, record, recorded_json
from factcheck.memory.settings import MemorySettings, memory_settings
from factcheck.memory.store import MAX_CLAIM, MAX_NOTE, Correction, MemoryStore, StampWatch
from factcheck.pipeline import Checker
from factcheck.registry import get_registry
from factcheck.server.answers import REQUEST_DIGEST, AnswerCache
from factcheck.server.middleware import (
    CALLER,
    APIError,
    BodyLimit,
    Gate,
    Redactor,
    add_error_handlers,
    add_middleware,
)
from factcheck.server.pool import WARM_UP_S, CheckerPool, component_status, warm_up
from factcheck.server.settings import ServerSettings
from factcheck.server.stream import check_events
from factcheck.text import valid_unicode
from factcheck.types import Claim, Judgment

# APIError, BodyLimit and CheckerPool stay importable from here, where they were before the server was split.
__all__ = [
    "APIError",
    "BodyLimit",
    "CheckRequest",
    "CheckerPool",
    "FeedbackRequest",
    "Service",
    "create_app",
    "router",
]

log = logging.getLogger("factcheck.server")
T = TypeVar("T")


class CheckRequest(BaseModel):
    """A text to check. ``url`` and ``title`` are metadata the server never fetches."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The text to check: a selection or an article.")
    url: str | None = Field(None, max_length=4096, description="Where the text was found (metadata, never fetched).")
    title: str | None = Field(None, max_length=1000, description="The page title (metadata).")
    profile: str | None = Field(None, description="Agent profile (default: the server's).")
    scorer: str | None = Field(None, description="Scorer name, e.g. mafc, normsum.")
    labels: str | None = Field(None, description="Label rule name, e.g. threshold, compose.")
    # A policy by name only: its options (step and call caps) are the server's, never a caller's to raise.
    deliberation: str | None = Field(
        None, description="Deliberation policy, e.g. off, lase, ecmr (default: the server's); never its options."
    )
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
            try:
                reference_time(value)
            except ValueError as exc:  # the request is refused with its message, said of this field
                raise ValueError(str(exc).removeprefix("as_of ")) from None
        return value

    @field_validator("profile", "scorer", "labels", "deliberation")
    @classmethod
    def _a_name(cls, value: str | None) -> str | None:
        if value is not None and not (0 < len(value) <= 64 and value.replace("-", "_").isidentifier()):
            raise ValueError("must be a component name (letters, digits, - and _)")
        return value


class FeedbackRequest(BaseModel):
    """A reviewer's correction of one claim: of a claim of a checked text (``result`` and ``claim``), or of a
    claim given by its text alone (``claim_text``). Who ruled is the caller's key, never a field."""

    model_config = ConfigDict(extra="forbid")

    result: dict[str, Any] | None = Field(
        None,
        description="The checked text the correction is of (factcheck/1: /v1/check's answer; its claims may be "
        "cut down to the one corrected). Its claim's verdict, judgments and evidence are kept with the correction.",
    )
    claim: str | None = Field(
        None,
        max_length=64,
        description="The id of the corrected claim in result (c1, c2, ...); may be left out when it holds one.",
    )
    claim_text: str | None = Field(
        None, max_length=MAX_CLAIM, description="The claim corrected, for a correction without a result."
    )
    label: Literal["TRUE", "FALSE", "UNVERIFIED"] = Field(description="The claim's right label.")
    note: str = Field(
        "", max_length=MAX_NOTE, description="Why: kept with the correction and shown with its precedent."
    )

    @field_validator("claim_text", "note", mode="before")
    @classmethod
    def _valid_unicode(cls, value: Any) -> Any:
        return valid_unicode(value) if isinstance(value, str) else value

    @field_validator("label", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_claim(self) -> FeedbackRequest:
        if (self.result is None) == (self.claim_text is None):
            raise ValueError("give either result (with claim) or claim_text")
        if self.claim_text is not None and self.claim is not None:
            raise ValueError("claim names a claim of result; without a result give claim_text alone")
        if self.claim_text is not None and not self.claim_text.strip():
            raise ValueError("claim_text must not be empty")
        return self

    def correction(self, reviewer: str) -> Correction:
        """The correction this request makes, by ``reviewer`` (the caller's key id); InputError when the
        result is not a checked text or holds no such claim."""
        if self.result is not None:
            return correction_from_result(self.result, self.claim, self.label, self.note, reviewer, "server")
        assert self.claim_text is not None  # _one_claim
        return correction_from_text(self.claim_text, self.label, self.note, reviewer, "server")


EVENT_STREAM = "text/event-stream"
STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


@dataclass(frozen=True)
class Place:
    """Where the answer to one check request is kept: ``base`` (the route, the checker's settings, the text's date
    and the text) and the memory's stamp make its key; ``fields``, the request's metadata to add to the kept answer
    (JSON); ``digest``, its body's (:func:`~factcheck.server.answers.request_digest`), if it was taken."""

    base: tuple[Hashable, ...]
    memory: str
    fields: bytes
    digest: bytes | None

    @property
    def key(self) -> tuple[Hashable, ...]:
        return (*self.base, self.memory)


class Service:
    """What the routes of one app share: its settings, checkers, gate, cache of answers and scrubber."""

    def __init__(self, settings: ServerSettings, checker_overrides: Mapping[str, Any] | None = None) -> None:
        self.settings = settings
        self.pool = CheckerPool(settings, checker_overrides)
        self.gate = Gate(settings)
        self.answers = AnswerCache(settings.answer_cache_size, settings.answer_cache_ttl_s)
        self.scrub = Redactor(settings.secrets())
        self.components: dict[str, Any] = {}  # GET /v1/components' answer, worked out once
        self.components_lock = asyncio.Lock()
        self.memory_settings: MemorySettings | None = None  # the checkers' [memory], read at the first correction
        # The memory's stamp, for the keys of kept answers; None: not yet looked at; False: no memory.
        self.memory_watch: StampWatch | Literal[False] | None = None
        self.checks_cancelled = 0  # checks stopped because their client went away (GET /v1/health)

    def client_gone(self, route: str) -> None:
        """Count a check stopped because its client went away before the answer, and log it."""
        self.checks_cancelled += 1
        log.info("%s: the client went away; its check was cancelled", route)

    def memory(self) -> MemorySettings:
        """The experience memory corrections go to: the checkers' ``[memory]`` settings (``[memory] path``,
        ``FACTCHECK_MEMORY``, ``factcheck serve --memory``). 404 when the server keeps none, 503 when its
        settings cannot be read."""
        if self.memory_settings is None:
            try:
                self.memory_settings = memory_settings(self.pool.base.memory)
            except ConfigError as exc:
                raise APIError(503, f"the server cannot take corrections: {exc}") from None
        if not self.memory_settings.enabled:
            raise APIError(
                404,
                "this server keeps no experience memory: start it with factcheck serve --memory PATH "
                "(or set [memory] path) to take corrections",
            )
        return self.memory_settings

    def memory_stamp(self) -> str:
        """What changes whenever the experience memory does (a correction taken here, by another worker, or
        forgotten with ``factcheck memory forget``): part of an answer's cache key, so an answer kept from
        before a correction is never repeated after it. Empty when the server keeps no memory. Cheap enough
        for every request, on the event loop (:class:`StampWatch`: no query, no thread)."""
        if self.memory_watch is None:
            try:
                memory = self.memory()
            except APIError:
                self.memory_watch = False  # the server's settings keep no memory: none for its whole life
                return ""
            self.memory_watch = StampWatch(memory.path or "")
        return self.memory_watch.stamp() if self.memory_watch else ""

    def repeat(self, scope: Scope, request: bytes) -> Response | None:
        """The kept answer to a check whose body was answered before (``request``: its digest), or the claim
        rate limit's refusal; ``None``: route it (:class:`~factcheck.server.answers.RepeatFirst`)."""
        who = scope.get("state", {}).get(CALLER)
        stored = self.answers.repeat(request, self.memory_stamp()) if isinstance(who, str) else None
        if stored is None:
            return None
        try:
            self.gate.admit_claims(who)(stored.claims)
        except APIError as exc:
            return self.scrub.error(exc.status, exc.message, exc.headers, **exc.extra)
        return stored.response()

    def place_of(self, request: Request, body: CheckRequest) -> Place:
        """Where the answer to ``body`` on ``request``'s route is kept (:class:`Place`)."""
        # A text of another date is another check (its claims' times, the sources' dates); an undated one is
        # answered from memory as the check of its first asking, within the cache's time to live.
        # A correction taken since (the memory's stamp) makes it another check too: its precedents may differ.
        pool_key = self.pool.key(body.profile, body.scorer, body.labels, body.deliberation)
        extra = metadata(body)
        return Place(
            (request.scope["path"], pool_key, body.date, body.text),
            self.memory_stamp(),
            self.scrub.render(extra) if extra else b"",
            request.scope.get("state", {}).get(REQUEST_DIGEST),
        )

    def kept(self, place: Place, who: str) -> Response | None:
        """The answer kept at ``place`` with this request's fields, ``who`` charged its claims; ``None`` if none
        is kept."""
        stored = self.answers.get(place.key)
        if stored is None:
            return None
        self.gate.admit_claims(who)(stored.claims)
        self._remember(place)
        return stored.response(place.fields)

    def keep(self, place: Place, answer: dict[str, Any], events: Sequence[str] | None = None) -> None:
        """Keep ``answer`` at ``place`` if it is complete (:class:`~factcheck.server.answers.AnswerCache`): as its
        JSON or, with ``events`` (a stream's events before its verdict), as the stream."""
        scrub = self.scrub
        if events is None:
            kept = self.answers.put(place.key, answer, scrub.render)
        else:
            before = "".join(events).encode("utf-8")
            render = lambda verdict: sse("verdict", verdict, scrub).encode("utf-8")  # noqa: E731
            kept = self.answers.put(place.key, answer, render, before, EVENT_STREAM, STREAM_HEADERS)
        if kept:
            self._remember(place)

    def _remember(self, place: Place) -> None:
        """The same body sent again is then answered before it is routed (RepeatFirst)."""
        if place.digest is not None:
            self.answers.remember(place.digest, place.key[:-1], place.fields)

    async def own_judgments(self, claim: str) -> tuple[Judgment, ...]:
        """This server's own judgments of ``claim`` (its default checker, the claim alone): what
        ``learn_trust`` learns from, since a caller's result could carry any judgments it likes. A check
        that fails teaches nothing (no judgments)."""
        try:
            checker = self.pool.get(None, None, None, None)  # the server's defaults
            verdict = await checker.acheck(claim, claims=[Claim("c1", claim)])
        except FactcheckError as exc:
            log.warning("no trust learned from a correction: the server's check failed: %s", self.scrub(str(exc)))
            return ()
        return verdict.claims[0].judgments if verdict.claims else ()

    async def take_correction(self, body: FeedbackRequest, who: str) -> Recorded:
        """Store ``who``'s correction (and learn trust from it, with ``[memory] learn_trust``): 422 for a
        result that holds no such claim, 503 for the server's own memory settings."""
        memory = self.memory()
        try:
            correction = body.correction(who)
        except InputError as exc:
            raise APIError(422, str(exc)) from None
        own = await self.own_judgments(correction.claim) if memory.learn_trust else None
        store = MemoryStore(memory.path or "")
        try:
            return await asyncio.to_thread(record, store, correction, memory, learn_from=own)
        except (FactcheckError, OSError, sqlite3.Error) as exc:  # the server's memory or trust file: not the caller's
            log.error("cannot store a correction: %s", self.scrub(str(exc)))
            raise APIError(503, f"the server cannot take corrections: {exc}") from None

    def checker_for(self, body: CheckRequest) -> Checker:
        """The checker ``body`` asks for; 413 for a text over the limit, 422 for an unknown name, 503 when
        the server's own settings cannot build it."""
        settings = self.settings
        if len(body.text) > settings.max_text_chars:
            # The limit as a field too: a client (the extension) splits the text into parts under it.
            limit = settings.max_text_chars
            raise APIError(
                413,
                f"text of {len(body.text)} characters is over the limit of {limit}",
                extra={"max_text_chars": limit},
            )
        registry = get_registry()
        if body.profile is not None and body.profile not in PROFILES:
            raise APIError(422, f"unknown profile {body.profile!r} (available: {', '.join(sorted(PROFILES))})")
        try:
            chosen = (("scorers", body.scorer), ("label_rules", body.labels), ("deliberators", body.deliberation))
            for kind, name in chosen:
                if name is not None:
                    registry.get(kind, name)
        except ConfigError as exc:  # a name the caller chose
            raise APIError(422, str(exc)) from None
        try:
            return self.pool.get(body.profile, body.scorer, body.labels, body.deliberation)
        except ConfigError as exc:  # the server's own settings: not the caller's fault
            log.error("cannot build a checker: %s", self.scrub(str(exc)))
            raise APIError(503, f"the server cannot check: {exc}") from None

    def run_check(self, checker: Checker, body: CheckRequest, who: str) -> AsyncGenerator[CheckEvent, None]:
        """The check of ``body`` as events, within the server's deadline and claim limits."""
        return check_events(
            checker,
            body.text,
            self.settings.deadline_s,
            max_claims=self.settings.max_claims,
            admit=self.gate.admit_claims(who),
            as_of=body.date,
        )

    async def component_answer(self) -> dict[str, Any]:
        """``GET /v1/components``' answer, worked out on the first call (it runs every ``prepare``)."""
        async with self.components_lock:
            if not self.components:
                self.components.update(await self._components())
        return self.components

    async def _components(self) -> dict[str, Any]:
        try:
            checker = self.pool.get()
            agents_of = {name: self.pool.base.with_overrides(profile=name).resolved_agents() for name in PROFILES}
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
        return {
            "default_profile": checker.profile,
            "profiles": profiles,
            "sources": status["sources"],
            "verifiers": status["verifiers"],
            "extractors": sorted(registry.components["extractors"]),
            "scorers": sorted(registry.components["scorers"]),
            "label_rules": sorted(registry.components["label_rules"]),
            "deliberators": sorted(registry.components["deliberators"]),
        }


def service_of(request: Request) -> Service:
    """The service of the app serving ``request``."""
    service: Service = request.app.state.factcheck
    return service


async def caller(request: Request) -> str:
    """The caller's id, as :class:`~factcheck.server.middleware.KeyFirst` found it before the body was read
    (else found now). A coroutine, though it never waits: FastAPI would run a plain function in a worker thread."""
    who = request.scope.get("state", {}).get(CALLER)
    return who if isinstance(who, str) else service_of(request).gate.authenticate(request)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Build the default checker and load its models and indexes at start, so the first caller does not wait."""
    service: Service = app.state.factcheck
    try:
        async with asyncio.timeout(WARM_UP_S):  # a plugin that never gets ready must not keep the server down
            problems = await warm_up(service.pool.get())
        for problem in problems:
            log.warning("an agent of the default profile cannot run: %s", service.scrub(problem))
    except TimeoutError:
        log.warning("the default checker was not ready within %gs: starting anyway", WARM_UP_S)
    except Exception as exc:  # the server still starts: each request then says what is wrong
        log.warning("the default checker is not ready: %s: %s", type(exc).__name__, service.scrub(str(exc)))
    yield


router = APIRouter()


@router.get("/v1/health")
async def health(request: Request) -> dict[str, Any]:
    """Liveness: answers without a key and tells nothing secret. ``checks_cancelled``: the checks this
    process stopped because their client went away (a closed tab, a page left, a newer check)."""
    service = service_of(request)
    auth = "api-key" if service.settings.auth else "none"
    return {"status": "ok", "version": _version(), "auth": auth, "checks_cancelled": service.checks_cancelled}


@router.get("/v1/components", dependencies=[Depends(caller)])
async def components(request: Request) -> Response:
    """Installed sources, verifiers, extractors, scorers, label rules and deliberation policies, and which can run with
    the keys this server has (a source or verifier whose ``prepare`` fails is not usable)."""
    service = service_of(request)
    return service.scrub.json(await service.component_answer())


@router.post("/v1/check")
async def check(body: CheckRequest, request: Request, who: str = Depends(caller)) -> Response:
    """Check a text; the answer is the checked-text JSON (``factcheck/1``) plus ``partial``.

    A text checked before with the same settings is answered from memory (``usage.cache_hits.answer``).
    When the client goes away the check is cancelled.
    """
    service = service_of(request)
    checker = service.checker_for(body)
    place = service.place_of(request, body)
    if (kept := service.kept(place, who)) is not None:
        return kept

    async def verdict_of() -> dict[str, Any]:
        verdict: dict[str, Any] = {}
        async for event in service.run_check(checker, body, who):
            if event.name == "verdict":
                verdict = event.data
        return verdict

    verdict = await checked(service, until_disconnected(request, verdict_of()))
    if verdict is None:
        service.client_gone("/v1/check")
        return Response(status_code=499)  # nobody is listening; the status is for the access log
    service.keep(place, verdict)
    return service.scrub.json({**verdict, **metadata(body)})


@router.post(
    "/v1/check/stream",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "claims, claim..., verdict"}},
)
async def check_stream(body: CheckRequest, request: Request, who: str = Depends(caller)) -> Response:
    """Check a text, sending Server-Sent Events as it goes: ``claims``, one ``claim`` per claim
    as it is done, then ``verdict`` (the same JSON as ``/v1/check``); ``error`` if it fails.

    The text is split before the answer starts, so a refusal (429 for too many claims, 400, 503)
    is a plain HTTP status. A text streamed before with the same settings is sent its events again at once,
    the verdict's usage saying so (``usage.cache_hits.answer``)."""
    service = service_of(request)
    scrub = service.scrub
    checker = service.checker_for(body)
    place = service.place_of(request, body)
    if (kept := service.kept(place, who)) is not None:
        return kept
    stream = service.run_check(checker, body, who)

    async def split() -> CheckEvent:
        return await anext(stream)

    # The text is split before the answer starts: a client gone meanwhile stops the split too.
    first = await checked(service, until_disconnected(request, split()))
    if first is None:
        await stream.aclose()
        service.client_gone("/v1/check/stream")
        return Response(status_code=499)  # nobody is listening; the status is for the access log

    async def rest() -> AsyncIterator[CheckEvent]:
        yield first
        async for event in stream:
            yield event

    async def events() -> AsyncIterator[str]:
        sent: list[str] = []  # the events before the verdict, kept with it when the check is complete
        try:
            async for event in rest():
                if event.name == "verdict":
                    service.keep(place, event.data, sent)
                    event_text = sse(event.name, {**event.data, **metadata(body)}, scrub)
                else:
                    event_text = sse(event.name, event.data, scrub)
                    sent.append(event_text)
                yield event_text
        except FactcheckError as exc:
            yield sse("error", {"error": str(exc)}, scrub)
        except Exception:
            log.exception("unexpected error in a streamed check")
            yield sse("error", {"error": "internal error (see the server log)"}, scrub)
        except (asyncio.CancelledError, GeneratorExit):
            # The client went away (Starlette cancels the response when it hears the disconnect): the check's
            # task and its agents' calls are cancelled as the stream closes, below.
            service.client_gone("/v1/check/stream")
            raise
        finally:
            await stream.aclose()

    return StreamingResponse(events(), media_type=EVENT_STREAM, headers=STREAM_HEADERS)


@router.post(
    "/v1/feedback",
    status_code=201,
    responses={
        201: {"description": "the stored correction (factcheck-correction/1), with lent and trust"},
        401: {"description": "no key, or a wrong one"},
        403: {"description": "the server runs without keys, or this key is not one of its feedback_keys"},
        404: {"description": "the server keeps no experience memory"},
    },
)
async def feedback(body: FeedbackRequest, request: Request, who: str = Depends(caller)) -> Response:
    """Record a correction of one claim's verdict in the server's experience memory: the right label and a
    note, ruled by the caller's key (``key-N``), with the check's verdict, judgments and evidence when a
    ``result`` is given. Only a key's holder may correct; the answer says whether checks now lend the ruling
    as a precedent (``lent``: false while ``[memory] require`` reviewers have not agreed)."""
    service = service_of(request)
    service.gate.may_correct(who)  # KeyFirst refused already; said again here, where the correction is made
    recorded = await service.take_correction(body, who)
    memory = service.memory()
    answer = await asyncio.to_thread(recorded_json, MemoryStore(memory.path or ""), recorded, memory.require)
    return service.scrub.json(answer, status=201)


async def checked(service: Service, work: Awaitable[T]) -> T:
    """``await work``, a failed check said as its status: 503 for the server's own settings (a missing
    model or corpus: not the caller's fault), 400 for any other :class:`FactcheckError`."""
    try:
        return await work
    except ConfigError as exc:
        log.error("check failed: %s", service.scrub(str(exc)))
        raise APIError(503, f"the server cannot check: {exc}") from None
    except FactcheckError as exc:
        raise APIError(400, str(exc)) from None


def metadata(body: CheckRequest) -> dict[str, Any]:
    """The request's ``url`` and ``title``, given back in the answer as they came."""
    return {k: v for k, v in (("url", body.url), ("title", body.title)) if v is not None}


def create_app(
    settings: ServerSettings | None = None, *, checker_overrides: Mapping[str, Any] | None = None
) -> FastAPI:
    """The ASGI application for ``settings`` (default: from the environment). Its checkers' settings are
    read now, once: the settings file, the environment, then ``checker_overrides`` (``factcheck serve``'s
    ``--corpus``, ``--memory``, ``--serper-url``..., see :class:`~factcheck.server.pool.CheckerPool`)."""
    settings = settings or ServerSettings.from_env()
    service = Service(settings, checker_overrides)
    app = FastAPI(
        title="factcheck",
        version=_version(),
        summary="Evidence-based, multi-agent fact-checking for browser extensions.",
        lifespan=lifespan,
    )
    app.state.factcheck = service
    bodies: dict[str, type[BaseModel]] = {
        "/v1/check": CheckRequest,
        "/v1/check/stream": CheckRequest,
        "/v1/feedback": FeedbackRequest,
    }
    add_error_handlers(app, service.scrub, bodies)
    app.include_router(router)
    add_middleware(app, settings, service.gate, service.scrub, repeat=service.repeat)
    return app


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
