"""HTTP for sources: time-outs, bounded retries that honour ``Retry-After``, a
concurrency limit per host, and errors that say what went wrong.

A failed answer raises :class:`ServiceHTTPError` (a SourceError carrying the
status and the server's own message). A refusal no retry will fix (a rejected
key, a refused User-Agent) is remembered in :data:`REFUSALS` by the source that
met it, so later requests are not sent at all.

A host that cannot be reached (connection refused, a failed DNS lookup, no
connection within :data:`CONNECT_TIMEOUT_S`) fails at once, without retries, with
:class:`ServiceUnreachableError` naming the host; it is remembered in
:data:`UNREACHABLE` for :data:`UNREACHABLE_TTL_S`, so a batch does not try it again
for every document (and can say so once).

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
from collections.abc import Callable, Mapping
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import certifi
import httpx

from factcheck.errors import ServiceRefusedError, SourceError
from factcheck.usage import charge_search


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

# Semaphores belong to an event loop, and each synchronous check runs its own loop.
_limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


@cache
def tls_context() -> ssl.SSLContext:
    """One TLS context (the CA bundle loaded once) for every HTTP client this process makes.

    Building one per client costs about 50 ms of CPU (loading the certificates); with it
    shared, a new client costs well under a millisecond, so per-call clients stay cheap.
    """
    return ssl.create_default_context(cafile=certifi.where())


class ServiceHTTPError(SourceError):
    """A service answered with an HTTP error that was not retried (or still failed after retries).

    ``status`` is the HTTP status, ``message`` the server's own words (at most
    :data:`MESSAGE_CHARS` characters) and ``content_type`` its media type, so a
    source can recognise a particular refusal.
    """

    def __init__(self, service: str, status: int, message: str, content_type: str) -> None:
        super().__init__(f"{service}: HTTP {status}: {message}".rstrip(": "))
        self.status = status
        self.message = message
        self.content_type = content_type


class SourceRefusedError(SourceError, ServiceRefusedError):
    """A service refused a source for a reason that lasts (a rejected key, a refused User-Agent):
    asking again in this check would be refused the same way."""


class Refusals:
    """Lasting refusals, remembered process-wide for ``ttl_s`` seconds, so that a batch or a
    server does not send every claim's request to a service that already said no; and the
    keys a service has accepted, so a source can send its first request with a new key alone.

    Keys are tuples of strings chosen by the source (service, endpoint, a digest of the key);
    never put a secret itself in one (see :func:`digest`). Safe to use from worker threads.
    """

    def __init__(self, ttl_s: float = REFUSAL_TTL_S) -> None:
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._reasons: dict[tuple[str, ...], tuple[float, str]] = {}
        self._accepted: set[tuple[str, ...]] = set()

    def remember(self, key: tuple[str, ...], reason: str) -> None:
        """Record that requests under ``key`` are refused, and why (the first reason is kept)."""
        with self._lock:
            self._accepted.discard(key)
            if self._reason_locked(key) is None:
                self._reasons[key] = (time.monotonic() + self.ttl_s, reason)

    def reason(self, key: tuple[str, ...]) -> str | None:
        """Why requests under ``key`` were refused, or ``None`` (never, or long enough ago to try again)."""
        with self._lock:
            return self._reason_locked(key)

    def _reason_locked(self, key: tuple[str, ...]) -> str | None:
        entry = self._reasons.get(key)
        if entry is None:
            return None
        if entry[0] <= time.monotonic():
            del self._reasons[key]  # expired: the key may have been fixed since
            return None
        return entry[1]

    def accept(self, key: tuple[str, ...]) -> None:
        """Record that the service answered a request under ``key``."""
        with self._lock:
            self._accepted.add(key)

    def accepted(self, key: tuple[str, ...]) -> bool:
        """Whether the service has answered a request under ``key`` (and not refused one since)."""
        with self._lock:
            return key in self._accepted

    def clear(self) -> None:
        """Forget every refusal and acceptance (tests; a running server that must try a key again)."""
        with self._lock:
            self._reasons.clear()
            self._accepted.clear()


REFUSALS = Refusals()


class ServiceUnreachableError(SourceRefusedError):
    """A service's host could not be reached (connection refused, a failed DNS lookup, no connection in
    time). A refusal that lasts for this check: its agent abstains with it and is not asked again."""


class Unreachable:
    """Hosts found unreachable, remembered process-wide for ``ttl_s`` seconds (then one request may try
    again), and every reason met in this process, in order (a batch notes each once). Thread-safe."""

    def __init__(self, ttl_s: float = UNREACHABLE_TTL_S) -> None:
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._until: dict[str, tuple[float, str]] = {}
        self._met: dict[str, None] = {}

    def remember(self, endpoint: str, reason: str) -> None:
        """Record that ``endpoint`` (scheme://host:port) cannot be reached, and why."""
        with self._lock:
            self._until[endpoint] = (time.monotonic() + self.ttl_s, reason)
            self._met.setdefault(reason, None)

    def reason(self, endpoint: str) -> str | None:
        """Why ``endpoint`` was unreachable a moment ago, or ``None``."""
        with self._lock:
            entry = self._until.get(endpoint)
            if entry is not None and entry[0] <= time.monotonic():
                del self._until[endpoint]
                return None
            return entry[1] if entry else None

    def met(self) -> tuple[str, ...]:
        """Every reason an endpoint was found unreachable in this process, first met first."""
        with self._lock:
            return tuple(self._met)

    def clear(self) -> None:
        """Forget every unreachable host (tests)."""
        with self._lock:
            self._until.clear()
            self._met.clear()


UNREACHABLE = Unreachable()


def endpoint_of(url: str) -> tuple[str, str]:
    """``(key, "host:port")`` of ``url``'s endpoint: the key for :data:`UNREACHABLE`, and how errors name it."""
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
    """A short one-way name for ``secret`` (an API key) to key :data:`REFUSALS` with."""
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


def provider_message(response: httpx.Response) -> str:
    """:func:`message_of` a failed HTTP response (its JSON body, else its text)."""
    try:
        body: Any = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    return (message_of(body) if isinstance(body, Mapping) else "") or message_of(response.text)


def host_limit(url: str, concurrency: int) -> asyncio.Semaphore:
    """The semaphore shared, in this event loop, by every request to ``url``'s endpoint
    (scheme, host and port) that asks for the same limit."""
    per_loop = _limits.setdefault(asyncio.get_running_loop(), {})
    parsed = httpx.URL(url)
    key = f"{parsed.scheme}://{parsed.host}:{parsed.port}/{concurrency}"
    if key not in per_loop:
        per_loop[key] = asyncio.Semaphore(concurrency)
    return per_loop[key]


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


async def request_json(
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
    once, without retries, and is remembered in :data:`UNREACHABLE`: requests to
    it meanwhile are not sent. Each request sent is counted first (a search,
    unless ``search`` is false: :func:`factcheck.usage.charge_search`, which
    raises BudgetReachedError when the run's budget is spent).
    """
    endpoint, where = endpoint_of(url)

    def refuse_if_unreachable() -> None:
        if (reason := UNREACHABLE.reason(endpoint)) is not None:
            raise ServiceUnreachableError(f"{reason}; not sent: unreachable a moment ago")

    refuse_if_unreachable()  # before queueing behind the host's other requests
    all_headers = {"User-Agent": USER_AGENT, **(headers or {})}
    connect_s = min(timeout_s, CONNECT_TIMEOUT_S)
    timeout = httpx.Timeout(timeout_s, connect=connect_s)
    client = httpx.AsyncClient(timeout=timeout, headers=all_headers, verify=tls_context())
    async with host_limit(url, concurrency), client:
        refuse_if_unreachable()  # an earlier request found out while this one waited
        if before_send is not None:
            before_send()
        for attempt in range(retries + 1):
            wait = backoff_s * 2**attempt * (0.5 + random.random())  # jitter spreads retries out
            if search:
                charge_search(service)  # counted before it goes: a request sent is spent, answered or not
            try:
                response = await client.request(method, url, params=params, json=json_body)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                reason = f"{service}: cannot reach {where} ({_unreachable_why(exc, connect_s)})"
                UNREACHABLE.remember(endpoint, reason)
                raise ServiceUnreachableError(reason) from None
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
                    raise ServiceHTTPError(service, response.status_code, provider_message(response), content_type)
            await asyncio.sleep(wait)
    raise AssertionError("unreachable")  # the loop always returns or raises
