"""HTTP for plugins: the same service layer the built-in sources go through (:mod:`factcheck.net`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from factcheck import net


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
    concurrency: int = 4,
    search: bool = True,
) -> Any:
    """Send an HTTP request through the check's service layer and return the JSON body of its answer.

    This is the path the built-in ``serper``, ``serpapi`` and ``wikipedia`` sources take: the check's
    :class:`httpx.AsyncClient` (connections reused), time-outs (``timeout_s``; at most 10 s to connect),
    at most ``concurrency`` requests at once to the host, and up to ``retries`` retries of a 429, a 5xx
    or a network error, waiting ``Retry-After`` when the server says, else ``backoff_s * 2**attempt``.
    ``service`` names your service in errors and in ``usage.search_calls``.

    Each request sent (each retry too) is counted in the check's ``usage.search_calls`` and against the
    run's ``--max-searches`` (``search=False`` for a request that is no search). A host that accepts no
    connection raises :class:`factcheck.ServiceUnreachableError` at once, and the check sends it no
    more requests for a minute; any other failure raises :class:`factcheck.SourceError`
    (:class:`factcheck.ServiceHTTPError`, with ``status`` and the server's ``message``, for an HTTP error).

    To keep answers in the check's cache (``--cache``), wrap the call in :func:`cached`::

        body = await cached(kind="glossary", version="1", request={"q": query},
                            compute=lambda: request_json("GET", url, service="glossary", params={"q": query}))
    """
    return await net.request_json(
        method,
        url,
        service=service,
        params=params,
        json_body=json_body,
        headers=headers,
        timeout_s=timeout_s,
        retries=retries,
        backoff_s=backoff_s,
        concurrency=concurrency,
        search=search,
    )


__all__ = ["request_json"]
