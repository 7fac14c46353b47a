"""The ``wikipedia`` source: the Wikipedia agent of the MAFC paper.

For each of a claim's search queries (at most ``max_queries``) it runs a
MediaWiki full-text search (``action=query&list=search``), takes the top
``pages`` titles, and fetches each page's lead section as plain text
(``prop=extracts|info`` with ``exintro`` and ``inprop=url``). Pages found by
several queries are returned once. A claim nothing matches gets no evidence,
so its verifier abstains.

Every request goes through :func:`factcheck.net.request_json` (User-Agent,
time-outs, retries honouring ``Retry-After``) and the check's cache, and each
real request counts as one search call in the check's usage.

``api_url`` points the source at any MediaWiki (a self-hosted wiki, a mirror, a
test server); by default it is ``https://{language}.wikipedia.org/w/api.php``.
The ``wikipedia-api`` package is not used: it is synchronous (it would block
the event loop or need a thread per request) and builds ``wikipedia.org`` URLs
itself, so it cannot talk to a configurable API URL, and it would bypass the
shared retry, concurrency and caching of :mod:`factcheck.net`. The two API
calls it would wrap are simple enough to make directly.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

from factcheck.cache import cached
from factcheck.errors import ConfigError, SourceError
from factcheck.net import request_json
from factcheck.plugins.hookspecs import hookimpl
from factcheck.sources.base import Source
from factcheck.types import Claim, Evidence
from factcheck.usage import record_search

VERSION = "1"  # bump when the requests or the parsing of answers change, to invalidate cached entries
SERVICE = "wikipedia"
# Retry policy handed to request_json; module constants so tests can shorten the back-off.
RETRIES = 3
BACKOFF_S = 0.5
MAX_PAGES = 50  # MediaWiki caps srlimit at 50 for most clients without the apihighlimits right

# Wikipedia language codes: "en", "simple", "zh-yue", "be-tarask". They become part of a host name.
_LANGUAGE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_TAG = re.compile(r"<[^>]*>")
# A sentence ends at . ! or ? (and any closing quote or bracket) followed by white space; a line break also ends one.
_SENTENCE_END = re.compile(r"[.!?][\"')\]\u201d\u2019]*(?=\s)|\n")


def strip_html(snippet: str) -> str:
    """Plain text of a search snippet: tags (``<span class="searchmatch">``) removed, entities decoded."""
    return re.sub(r"\s+", " ", html.unescape(_TAG.sub("", snippet))).strip()


def trim_at_sentence(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` characters at the last sentence end that fits.

    When even the first sentence is too long, it is cut at a word boundary and
    ends with an ellipsis.
    """
    text = text.strip()
    if len(text) <= max_chars:
        return text
    # One character past the limit, so a sentence ending exactly at the limit is seen to end.
    window = text[: max_chars + 1]
    ends = [m.end() for m in _SENTENCE_END.finditer(window) if m.end() <= max_chars]
    if ends:
        trimmed = text[: ends[-1]].rstrip()
        if trimmed:
            return trimmed
    cut = text[: max_chars - 1]  # one character is left for the ellipsis
    if not text[max_chars - 1].isspace():  # the cut fell inside a word: drop its start
        space = cut.rfind(" ")
        cut = cut[:space] if space > 0 else cut
    return cut.rstrip() + "\u2026"


def wiki_url(language: str, title: str) -> str:
    """The article URL Wikipedia uses for ``title``: ``https://en.wikipedia.org/wiki/Eiffel_Tower``."""
    return f"https://{language}.wikipedia.org/wiki/" + quote(title.replace(" ", "_"), safe="/:(),'!*@$;~")


def _api_error(data: Any) -> None:
    """Raise SourceError for an answer that is not a MediaWiki query result."""
    if not isinstance(data, Mapping):
        raise SourceError(f"{SERVICE}: unexpected answer (a JSON {type(data).__name__}, not an object)")
    error = data.get("error")
    if isinstance(error, Mapping):
        # MediaWiki reports bad requests with HTTP 200 and an "error" object.
        raise SourceError(f"{SERVICE}: API error {error.get('code', '?')}: {error.get('info', '')}".rstrip(": "))
    if not isinstance(data.get("query", {}), Mapping):
        raise SourceError(f"{SERVICE}: unexpected answer: 'query' is not an object")


def parse_search(data: Any) -> list[dict[str, str]]:
    """The hits of a ``list=search`` answer as ``{"title", "snippet"}``, best first (snippets as plain text)."""
    _api_error(data)
    hits = data.get("query", {}).get("search", [])
    if not isinstance(hits, list):
        raise SourceError(f"{SERVICE}: unexpected answer: 'query.search' is not a list")
    results = []
    for hit in hits:
        if isinstance(hit, Mapping) and isinstance(hit.get("title"), str) and hit["title"]:
            snippet = hit.get("snippet")
            results.append({"title": hit["title"], "snippet": strip_html(snippet) if isinstance(snippet, str) else ""})
    return results


def parse_page(data: Any) -> dict[str, Any] | None:
    """The page of a ``prop=extracts|info`` answer as ``{"pageid", "title", "url", "extract"}``, or ``None``
    when the title names no page (deleted since the search, or invalid)."""
    _api_error(data)
    pages = data.get("query", {}).get("pages", [])
    if not isinstance(pages, list):
        raise SourceError(f"{SERVICE}: unexpected answer: 'query.pages' is not a list (formatversion=2 expected)")
    for page in pages:
        if not isinstance(page, Mapping) or page.get("missing") or page.get("invalid"):
            continue
        title = page.get("title")
        if not isinstance(title, str) or not title:
            continue
        url = page.get("canonicalurl") or page.get("fullurl")
        if isinstance(url, str) and url.startswith("//"):
            url = "https:" + url  # a wiki with a protocol-relative $wgServer
        extract = page.get("extract")
        return {
            "pageid": page.get("pageid"),
            "title": title,
            "url": url if isinstance(url, str) and url else None,
            "extract": extract.strip() if isinstance(extract, str) else "",
        }
    return None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class WikipediaSource(Source):
    """Wikipedia lead sections for a claim's search queries (the MAFC Wikipedia agent).

    Options: ``language`` (Wikipedia edition), ``api_url`` (any MediaWiki
    ``api.php``; default the edition's), ``pages`` (top search hits used per
    query), ``max_queries`` (queries searched per claim), ``max_chars`` (lead
    text kept, cut at a sentence end), ``timeout_s`` (per request) and
    ``concurrency`` (simultaneous requests to the host).
    """

    reuse_judgments = True

    name = "wikipedia"
    language: str = "en"
    api_url: str | None = None
    pages: int = 1
    max_queries: int = 2
    max_chars: int = 1500
    timeout_s: float = 20.0
    concurrency: int = 4

    def __post_init__(self) -> None:
        if not isinstance(self.language, str) or not _LANGUAGE.fullmatch(self.language):
            raise ConfigError(f"wikipedia: language must be a Wikipedia language code like 'en', got {self.language!r}")
        if self.api_url is not None:
            parts = urlsplit(self.api_url) if isinstance(self.api_url, str) else None
            if parts is None or parts.scheme not in {"http", "https"} or not parts.netloc:
                raise ConfigError(
                    f"wikipedia: api_url must be an http(s) URL of a MediaWiki api.php, got {self.api_url!r}"
                )
        if not _is_int(self.pages) or not 1 <= self.pages <= MAX_PAGES:
            raise ConfigError(f"wikipedia: pages must be an integer from 1 to {MAX_PAGES}, got {self.pages!r}")
        for option in ("max_queries", "max_chars", "concurrency"):
            value = getattr(self, option)
            if not _is_int(value) or value < 1:
                raise ConfigError(f"wikipedia: {option} must be an integer of at least 1, got {value!r}")
        if isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, int | float) or not self.timeout_s > 0:
            raise ConfigError(f"wikipedia: timeout_s must be a positive number of seconds, got {self.timeout_s!r}")

    @property
    def endpoint(self) -> str:
        """The ``api.php`` URL requests go to."""
        return self.api_url or f"https://{self.language}.wikipedia.org/w/api.php"

    async def _get(self, params: Mapping[str, str | int], parse: Callable[[Any], Any]) -> Any:
        """GET the API with ``params`` and return ``parse(answer)``, through the check's cache.

        The parsed form is what is cached: it is small, and an answer that does
        not parse (an API error) raises before it can be stored.
        """
        url = self.endpoint

        async def fetch() -> Any:
            record_search()  # only on a real request: cache hits are counted by cached()
            data = await request_json(
                "GET",
                url,
                service=SERVICE,
                params=params,
                timeout_s=self.timeout_s,
                retries=RETRIES,
                backoff_s=BACKOFF_S,
                concurrency=self.concurrency,
            )
            return parse(data)

        return await cached(kind=SERVICE, version=VERSION, request={"url": url, "params": dict(params)}, compute=fetch)

    async def search(self, query: str) -> list[dict[str, str]]:
        """The top ``pages`` hits for ``query``: ``{"title", "snippet"}``, best first."""
        params: dict[str, str | int] = {
            "action": "query",
            "list": "search",
            "srsearch": query,
            "srlimit": self.pages,
            "format": "json",
            "formatversion": 2,
        }
        hits: list[dict[str, str]] = await self._get(params, parse_search)
        return hits[: self.pages]

    async def page(self, title: str) -> dict[str, Any] | None:
        """The lead section of ``title`` as ``{"pageid", "title", "url", "extract", "retrieved_at"}``, or ``None``."""
        params: dict[str, str | int] = {
            "action": "query",
            "prop": "extracts|info",
            "exintro": 1,
            "explaintext": 1,
            "inprop": "url",
            "titles": title,
            "format": "json",
            "formatversion": 2,
            "redirects": 1,
        }

        def parse(data: Any) -> dict[str, Any]:
            page = parse_page(data)
            # Stamped when fetched, so evidence served from the cache says how old it is. A missing
            # page is cached as {} because the cache cannot tell a stored null from no entry.
            return {} if page is None else {**page, "retrieved_at": _now()}

        result: dict[str, Any] = await self._get(params, parse)
        return result or None

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        """Lead sections of the top pages for the claim's queries, in query then rank order, each page once.

        A query or page whose request fails is skipped when others succeed; when
        all fail, the first error is raised (a SourceError: the agent abstains).
        """
        queries = list(dict.fromkeys(q.strip() for q in claim.search_queries() if q.strip()))[: self.max_queries]
        searches = await asyncio.gather(*(self.search(q) for q in queries), return_exceptions=True)
        hits = _successes(searches)
        titles: dict[str, str] = {}  # title -> snippet, in query then rank order
        for result in hits:
            for hit in result:
                titles.setdefault(hit["title"], hit["snippet"])
        if not titles:
            return []

        answers = await asyncio.gather(*(self.page(title) for title in titles), return_exceptions=True)
        _successes(answers)  # raises when every page request failed
        evidence: list[Evidence] = []
        seen: set[object] = set()
        for (title, snippet), page in zip(titles.items(), answers, strict=True):
            if page is None or isinstance(page, BaseException):
                continue
            # Two search titles can resolve to one page (redirects): keep it once.
            key = page["pageid"] if page["pageid"] is not None else page["title"]
            if key in seen:
                continue
            seen.add(key)
            # A page without a lead extract (TextExtracts missing on a self-hosted wiki) still has its snippet.
            text = trim_at_sentence(page["extract"] or snippet, self.max_chars)
            if not text:
                continue
            evidence.append(
                Evidence(
                    source=self.name,
                    text=text,
                    title=page["title"] or title,
                    url=page["url"] or wiki_url(self.language, page["title"] or title),
                    retrieved_at=page["retrieved_at"],
                )
            )
        return evidence


def _successes(results: Sequence[Any]) -> list[Any]:
    """The results that are not errors; raises the first error when nothing succeeded.

    Only SourceErrors are tolerated: anything else is a bug and propagates.
    """
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, SourceError):
            raise result
    successes = [r for r in results if not isinstance(r, BaseException)]
    if results and not successes:
        raise results[0]
    return successes


@hookimpl
def register_sources(register: Callable[[Any], None]) -> None:
    register(WikipediaSource())
