"""HTTP for sources: time-outs, bounded retries that honour ``Retry-After``, a
concurrency limit per host, and errors that say what went wrong."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import ssl
import time
import weakref
from collections.abc import Mapping
from functools import cache
from typing import Any

import certifi
import httpx

from factcheck.errors import SourceError

USER_AGENT = "factcheck-agents/0.1 (+https://github.com/factcheck-agents/factcheck; fact-checking research)"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

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
) -> Any:
    """Send a request and return its JSON body.

    429 and 5xx answers and network errors are retried up to ``retries`` times,
    waiting ``Retry-After`` when the server says, else ``backoff_s * 2**attempt``
    with jitter. Anything else that is not a JSON 2xx answer raises SourceError
    naming ``service``.
    """
    all_headers = {"User-Agent": USER_AGENT, **(headers or {})}
    client = httpx.AsyncClient(timeout=timeout_s, headers=all_headers, verify=tls_context())
    async with host_limit(url, concurrency), client:
        for attempt in range(retries + 1):
            wait = backoff_s * 2**attempt * (0.5 + random.random())  # jitter spreads retries out
            try:
                response = await client.request(method, url, params=params, json=json_body)
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
                        return response.json()
                    except (json.JSONDecodeError, UnicodeDecodeError):
                        raise SourceError(f"{service}: answered with malformed JSON") from None
                else:
                    raise SourceError(f"{service}: HTTP {response.status_code}: {response.text[:200]}")
            await asyncio.sleep(wait)
    raise AssertionError("unreachable")  # the loop always returns or raises
