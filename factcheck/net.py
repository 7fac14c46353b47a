"""The one HTTP layer every source and the LLM client go through: :class:`Service`.

A service owns, per event loop, one ``httpx.AsyncClient`` (kept for the plugin
loops, which live as long as the process, so connections are reused; made per
call on a short-lived loop), the transport under it (injectable: tests, a proxy,
a recorder), time-outs, a concurrency limit per host, bounded retries that
honour ``Retry-After``, and the one memory of refusals (:class:`Refusals`).
Requests go through :func:`service`: the current check's service
(:data:`service_var`, the ``service`` of its :class:`~factcheck.context.CheckContext`,
set for a block with :func:`use_service`), else :data:`DEFAULT_SERVICE`.

A failed answer raises :class:`ServiceHTTPError` (a SourceError carrying the
status and the server's own message). A refusal no retry will fix (a rejected
key, a refused User-Agent, an unknown model) is remembered by whoever met it in
the service's :class:`Refusals`, so later requests are not sent at all.

A host that cannot be reached (connection refused, a failed DNS lookup, no
connection within :data:`CONNECT_TIMEOUT_S`) fails at once, without retries, with
:class:`ServiceUnreachableError` naming the host; the same memory keeps it for
:data:`UNREACHABLE_TTL_S`, so a batch does not try it again for every document
(and can say so once: :meth:`Refusals.met`).

Every request sent is counted before it goes (each retry too): a search request
(``search=True``, the default) in the check's ``usage.search_calls`` and against
the run's ``--max-searches`` (:func:`factcheck.usage.charge_search`).
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import random
import socket
import ssl
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Hashable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

import certifi
import httpx

from factcheck.errors import ServiceHTTPError, ServiceUnreachableError, SourceError
from factcheck.loops import on_plugin_loop
from factcheck.secrets import keep_keys_out_of_logs
from factcheck.usage import UsageRecorder, charge_search, usage_var

T = TypeVar("T")
keep_keys_out_of_logs("httpx")  # it logs each request's URL at INFO, and SerpAPI's key travels in the query


def package_version() -> str:
    """This package's installed version ("0" when run from a tree that was never installed)."""
    try:
        return version("factcheck-agents")
    except PackageNotFoundError:
        return "0"


# Names the software only: a contact belongs to whoever runs it, so none is made up here
# (the Wikipedia source asks the operator for theirs).
USER_AGENT = f"factcheck-agents/{package_version()} python-httpx/{httpx.__version__}"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MESSAGE_CHARS = 200  # how much of a server's error message an error quotes
REFUSAL_TTL_S = 600.0  # how long a lasting refusal is believed before one request may try again
CONNECT_TIMEOUT_S = 10.0  # a host that accepts no connection this long is unreachable (at most timeout_s)
UNREACHABLE_TTL_S = 60.0  # how long an unreachable host is believed before one request may try again

# openai's own pool figures (DEFAULT_CONNECTION_LIMITS): the per-host limits below are the ones that bite.
CONNECTION_LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100)


@cache
def tls_context() -> ssl.SSLContext:
    """One TLS context (the CA bundle loaded once) for every HTTP client this process makes.

    Building one per client costs about 50 ms of CPU (loading the certificates); with it
    shared, a new client costs well under a millisecond, so per-call clients (short-lived loops) stay cheap.
    """
    return ssl.create_default_context(cafile=certifi.where())


Key = tuple[str, ...]


class Refusals:
    """The one memory of refusals no retry will fix, so that a batch or a server does not send every
    claim's request to a service that already said no. Safe to use from worker threads and any loop.

    A refusal is believed for a while, then one request may try again (the key may have been fixed):

    - a lasting one (a rejected key, a refused User-Agent) for ``ttl_s`` seconds, in every check;
    - an unreachable endpoint for ``unreachable_ttl_s`` seconds (:meth:`unreachable`);
    - one ``for_check`` (an unknown model, a key the LLM server rejects) for the rest of the current
      check only: the next check may come with other settings. Outside a check it is not kept.

    It also keeps the keys a service has accepted (a source can send its first request with a new key
    alone) and every reason an endpoint was unreachable, in order (a batch says each once).

    Keys are tuples of strings chosen by the source (service, endpoint, a digest of the key);
    never put a secret itself in one (see :func:`digest`).
    """

    def __init__(self, ttl_s: float = REFUSAL_TTL_S, unreachable_ttl_s: float = UNREACHABLE_TTL_S) -> None:
        self.ttl_s = ttl_s
        self.unreachable_ttl_s = unreachable_ttl_s
        self._lock = threading.Lock()
        self._reasons: dict[Key, tuple[float, str]] = {}  # key -> (believed until, monotonic; why)
        self._in_check: weakref.WeakKeyDictionary[UsageRecorder, dict[Key, str]] = weakref.WeakKeyDictionary()
        self._accepted: set[Key] = set()
        self._met: dict[str, None] = {}

    def remember(self, key: Key, reason: str, *, ttl_s: float | None = None, for_check: bool = False) -> None:
        """Record that requests under ``key`` are refused, and why (while it is believed, the first reason
        is kept): for ``ttl_s`` seconds (default :attr:`ttl_s`), or with ``for_check`` for the current check."""
        with self._lock:
            self._accepted.discard(key)
            if for_check:
                if (recorder := usage_var.get()) is not None:
                    self._in_check.setdefault(recorder, {}).setdefault(key, reason)
            elif self._reason_locked(key) is None:
                self._reasons[key] = (time.monotonic() + (self.ttl_s if ttl_s is None else ttl_s), reason)

    def reason(self, key: Key) -> str | None:
        """Why requests under ``key`` are refused, or ``None`` (never, or long enough ago to try again)."""
        with self._lock:
            return self._reason_locked(key)

    def _reason_locked(self, key: Key) -> str | None:
        entry = self._reasons.get(key)
        if entry is not None and entry[0] <= time.monotonic():
            del self._reasons[key]  # expired: the key may have been fixed since
            entry = None
        if entry is not None:
            return entry[1]
        recorder = usage_var.get()
        return self._in_check.get(recorder, {}).get(key) if recorder is not None else None

    def accept(self, key: Key) -> None:
        """Record that the service answered a request under ``key``."""
        with self._lock:
            self._accepted.add(key)

    def accepted(self, key: Key) -> bool:
        """Whether the service has answered a request under ``key`` (and not refused one since)."""
        with self._lock:
            return key in self._accepted

    def remember_unreachable(self, endpoint: str, reason: str) -> None:
        """Record that ``endpoint`` (scheme://host:port) cannot be reached, and why."""
        self.remember(("unreachable", endpoint), reason, ttl_s=self.unreachable_ttl_s)
        with self._lock:
            self._met.setdefault(reason, None)

    def unreachable(self, endpoint: str) -> str | None:
        """Why ``endpoint`` was unreachable a moment ago, or ``None``."""
        return self.reason(("unreachable", endpoint))

    def met(self) -> tuple[str, ...]:
        """Every reason an endpoint was found unreachable in this process, first met first."""
        with self._lock:
            return tuple(self._met)

    def clear(self) -> None:
        """Forget every refusal, acceptance and unreachable host (tests; a running server that must try a
        key again)."""
        with self._lock:
            self._reasons.clear()
            self._in_check.clear()
            self._accepted.clear()
            self._met.clear()


REFUSALS = Refusals()  # the default service's memory: refused keys and unreachable hosts alike


def endpoint_of(url: str) -> tuple[str, str]:
    """``(key, "host:port")`` of ``url``'s endpoint: how :meth:`Refusals.unreachable` keys it, and how errors
    name it."""
    parsed = httpx.URL(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return f"{parsed.scheme}://{parsed.host}:{port}", f"{parsed.host}:{port}"


def _unreachable_why(exc: httpx.TransportError, connect_s: float) -> str:
    """What stopped the connection, in words: refused, a failed DNS lookup, or no answer in time
    (read from the OS error under httpx's own, which may only say "All connection attempts failed")."""
    if isinstance(exc, httpx.ConnectTimeout):
        return f"no connection within {connect_s:g}s"
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, socket.gaierror):
            return f"DNS lookup failed: {cause.strerror or cause}"
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        cause = cause.__cause__ or cause.__context__
    return str(exc) or type(exc).__name__


def digest(secret: str) -> str:
    """A short one-way name for ``secret`` (an API key) to key a :class:`Refusals` entry with."""
    return hashlib.sha256(secret.encode()).hexdigest()[:16]


def message_of(body: object) -> str:
    """The server's own words in an error body, on one line: a JSON body's ``message``, ``error``
    (a string, or an object with ``message`` / ``info``) or ``detail``; else the body as text.
    One reader for every provider: OpenAI, llama.cpp, Ollama, vLLM, Serper, SerpAPI, MediaWiki."""
    text = body if isinstance(body, str) else ""
    if isinstance(body, Mapping):
        for field in ("message", "error", "detail"):
            value = body.get(field)
            if isinstance(value, Mapping):
                value = value.get("message") or value.get("info")
            if isinstance(value, str) and value.strip():
                text = value
                break
    return " ".join(text.split())[:MESSAGE_CHARS]


def json_of(response: httpx.Response) -> Any:
    """The response's JSON body, or ``None`` when it is not JSON."""
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def provider_message(response: httpx.Response, body: Any = None) -> str:
    """:func:`message_of` a failed HTTP response (its JSON ``body``, read here unless given, else its text)."""
    body = json_of(response) if body is None else body
    return (message_of(body) if isinstance(body, Mapping) else "") or message_of(response.text)


def retry_after(response: httpx.Response, default: float, cap: float) -> float:
    """Seconds to wait before retrying: the ``Retry-After`` header (seconds or an HTTP date), else ``default``."""
    value = response.headers.get("retry-after")
    if value:
        try:
            return min(cap, max(0.0, float(value)))
        except ValueError:
            try:
                parsed = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                return min(cap, default)  # an unreadable header: back off as usual
            return min(cap, max(0.0, parsed.timestamp() - time.time()))
    return min(cap, default)


class _Borrowed(httpx.AsyncBaseTransport):
    """A transport the service was given, lent to one client: closing that client leaves it open
    (it is its owner's, and serves the service's other clients)."""

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self.transport = transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.transport.handle_async_request(request)

    async def aclose(self) -> None:
        pass


class Service:
    """Where HTTP requests go out: one client per event loop over one transport, the per-host limits,
    retries and the one memory of refusals (see the module's docstring).

    ``transport`` (an ``httpx.AsyncBaseTransport``) carries every request of every loop's client, the LLM
    client's too: an ``httpx.MockTransport`` in a test, a transport through a proxy. It must serve any
    loop (a MockTransport does; an ``httpx.AsyncHTTPTransport`` pools connections of the loop that
    opened them). Without one each client has its own connection pool, with this process's TLS context.
    ``refusals`` is the memory shared by everything that uses the service (default: a fresh one;
    :data:`DEFAULT_SERVICE` has :data:`REFUSALS`).
    """

    def __init__(self, transport: httpx.AsyncBaseTransport | None = None, refusals: Refusals | None = None) -> None:
        self.transport = transport
        self.refusals = refusals if refusals is not None else Refusals()
        self._lock = threading.Lock()  # the plugin loops run in threads of their own
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )
        # Semaphores belong to an event loop, and each synchronous check runs its own loop.
        self._limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
            weakref.WeakKeyDictionary()
        )
        # Clients built on a plugin loop's HTTP client (the LLM client's openai one): they live as long as
        # the loop and this service, no longer.
        self._kept: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, Any]] = (
            weakref.WeakKeyDictionary()
        )

    def _new_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            transport=_Borrowed(self.transport) if self.transport is not None else None,
            verify=tls_context(),
            limits=CONNECTION_LIMITS,
            follow_redirects=True,  # what the openai client expects of its http_client; sources ask per request
        )

    def http_client(self) -> tuple[httpx.AsyncClient, bool]:
        """The running loop's client, and whether the caller must close it: a plugin loop's is kept
        (False); a short-lived loop (``asyncio.run`` by a caller) gets one for this call only (True), since
        nothing may outlive that loop. The LLM client hands it to ``openai.AsyncOpenAI(http_client=...)``."""
        if not on_plugin_loop():
            return self._new_client(), True
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._clients.get(loop)
            if client is None or client.is_closed:
                client = self._clients[loop] = self._new_client()
        return client, False

    def kept(self, key: Hashable, build: Callable[[httpx.AsyncClient], T]) -> tuple[T, bool]:
        """A client built by ``build`` on :meth:`http_client` (the openai client), and whether the caller
        must close it. On a plugin loop one is kept per ``key``, for as long as the loop and this service;
        on a short-lived loop each call builds its own, on an HTTP client of its own."""
        http, owned = self.http_client()
        if owned:
            return build(http), True
        loop = asyncio.get_running_loop()
        with self._lock:
            per_loop = self._kept.setdefault(loop, {})
            if key not in per_loop:
                per_loop[key] = build(http)
            return per_loop[key], False

    def unreachable(self, url: str) -> str | None:
        """Why ``url``'s endpoint is not asked now (it could not be reached a moment ago), or ``None``.
        Every client of the service asks this before it sends: the sources here, the LLM client."""
        reason = self.refusals.unreachable(endpoint_of(url)[0])
        return None if reason is None else f"{reason}; not sent: unreachable a moment ago"

    def found_unreachable(self, service: str, url: str, exc: httpx.TransportError, connect_s: float) -> str:
        """Remember that no connection to ``url``'s endpoint could be made (for :data:`UNREACHABLE_TTL_S`),
        and say why: ``"serper: cannot reach host:port (connection refused)"``."""
        endpoint, where = endpoint_of(url)
        reason = f"{service}: cannot reach {where} ({_unreachable_why(exc, connect_s)})"
        self.refusals.remember_unreachable(endpoint, reason)
        return reason

    @asynccontextmanager
    async def client(self) -> AsyncIterator[httpx.AsyncClient]:
        """:meth:`http_client` for the block, closed after it when it was made for it."""
        client, owned = self.http_client()
        try:
            yield client
        finally:
            if owned:
                await client.aclose()

    def limit(self, url: str, concurrency: int) -> asyncio.Semaphore:
        """The semaphore shared, in this event loop, by every request to ``url``'s endpoint
        (scheme, host and port) that asks for the same limit."""
        loop = asyncio.get_running_loop()
        parsed = httpx.URL(url)
        key = f"{parsed.scheme}://{parsed.host}:{parsed.port}/{concurrency}"
        with self._lock:
            per_loop = self._limits.setdefault(loop, {})
            if key not in per_loop:
                per_loop[key] = asyncio.Semaphore(concurrency)
            return per_loop[key]

    async def request_json(
        self,
        method: str,
        url: str,
        *,
        service: str,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = 20.0,
        retries: int = 3,
        backoff_s: float = 0.5,
        max_wait_s: float = 30.0,
        concurrency: int = 4,
        before_send: Callable[[], None] | None = None,
        retry_answer: Callable[[Any], bool] | None = None,
        retry_answer_wait_s: float | None = None,
        search: bool = True,
    ) -> Any:
        """Send a request and return its JSON body.

        429 and 5xx answers and network errors are retried up to ``retries`` times,
        waiting ``Retry-After`` when the server says, else ``backoff_s * 2**attempt``
        with jitter. A 2xx answer for which ``retry_answer(body)`` is true (a
        MediaWiki ``maxlag`` error) is retried the same way; after the last retry
        its body is returned (``retry_answer_wait_s``, when given, caps its wait).
        Anything else that is not a JSON 2xx answer raises SourceError naming
        ``service`` (:class:`ServiceHTTPError` for an HTTP error).

        ``before_send`` is called once the request holds its slot under the host's
        concurrency limit, before it is first sent: it may raise to cancel it (a
        source that has learnt, while it waited, that the service refuses it).

        A host that cannot be reached raises :class:`ServiceUnreachableError` at
        once, without retries, and is remembered in :attr:`refusals`: requests to
        it meanwhile are not sent. Each request sent is counted first (a search,
        unless ``search`` is false: :func:`factcheck.usage.charge_search`, which
        raises BudgetReachedError when the run's budget is spent).
        """

        def refuse_if_unreachable() -> None:
            if (reason := self.unreachable(url)) is not None:
                raise ServiceUnreachableError(reason)

        refuse_if_unreachable()  # before queueing behind the host's other requests
        all_headers = {"User-Agent": USER_AGENT, **(headers or {})}
        connect_s = min(timeout_s, CONNECT_TIMEOUT_S)
        timeout = httpx.Timeout(timeout_s, connect=connect_s)
        async with self.limit(url, concurrency), self.client() as client:
            refuse_if_unreachable()  # an earlier request found out while this one waited
            if before_send is not None:
                before_send()
            for attempt in range(retries + 1):
                wait = backoff_s * 2**attempt * (0.5 + random.random())  # jitter spreads retries out
                if search:
                    charge_search(service)  # counted before it goes: a request sent is spent, answered or not
                try:
                    response = await client.request(
                        method,
                        url,
                        params=params,
                        json=json_body,
                        headers=all_headers,
                        timeout=timeout,
                        follow_redirects=False,  # an API that redirects is answered as it answers
                    )
                except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                    raise ServiceUnreachableError(self.found_unreachable(service, url, exc, connect_s)) from None
                except httpx.TimeoutException:
                    if attempt == retries:
                        raise SourceError(f"{service}: timed out after {timeout_s:g}s") from None
                except httpx.HTTPError as exc:
                    if attempt == retries:
                        raise SourceError(f"{service}: {type(exc).__name__}: {exc}") from None
                else:
                    if response.status_code in RETRY_STATUSES and attempt < retries:
                        wait = retry_after(response, wait, max_wait_s)
                    elif response.is_success:
                        try:
                            body = response.json()
                        except (json.JSONDecodeError, UnicodeDecodeError):
                            raise SourceError(f"{service}: answered with malformed JSON") from None
                        if retry_answer is None or attempt == retries or not retry_answer(body):
                            return body
                        cap = max_wait_s if retry_answer_wait_s is None else retry_answer_wait_s
                        wait = retry_after(response, wait, cap)
                    else:
                        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
                        body = json_of(response)
                        message = provider_message(response, body)
                        raise ServiceHTTPError(service, response.status_code, message, content_type, body)
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # the loop always returns or raises


DEFAULT_SERVICE = Service(refusals=REFUSALS)
service_var: ContextVar[Service | None] = ContextVar("factcheck.service", default=None)
"""The service of the check running here (``None``: :data:`DEFAULT_SERVICE`)."""


def service() -> Service:
    """The service requests go through now: the current check's (:func:`use_service`), else
    :data:`DEFAULT_SERVICE`. Read from a context variable, so it follows a check into the plugin loops
    its components run on."""
    return service_var.get() or DEFAULT_SERVICE


@contextmanager
def use_service(chosen: Service) -> Iterator[Service]:
    """Make ``chosen`` the service for the block (and the checks started in it)."""
    token = service_var.set(chosen)
    try:
        yield chosen
    finally:
        service_var.reset(token)


def host_limit(url: str, concurrency: int) -> asyncio.Semaphore:
    """:meth:`Service.limit` of the current :func:`service`."""
    return service().limit(url, concurrency)


async def request_json(method: str, url: str, **options: Any) -> Any:
    """:meth:`Service.request_json` of the current :func:`service` (the same arguments)."""
    return await service().request_json(method, url, **options)
