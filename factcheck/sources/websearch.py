"""The web search sources ``serper`` and ``serpapi``: Google results as evidence.

This is the web-search agent of the MAFC paper. For each of the claim's search
queries (at most ``max_queries``) the source asks Google through a search API
and turns the answer into evidence:

1. the answer box (a featured snippet or direct answer), if Google shows one,
   else the knowledge graph panel (its title and description), if any;
2. then the snippets of the first five organic results.

Evidence from all queries is merged in query order, deduplicated by URL, and
cut to ``top_k`` passages.

``serper`` (https://serper.dev) is called over HTTP with
:func:`factcheck.net.request_json`, which retries 429 (honouring
``Retry-After``) and 5xx answers. ``serpapi`` (https://serpapi.com) goes
through the official ``google-search-results`` client, which is synchronous
and does not retry: one failed request makes the agent abstain on that claim.

API keys are read from the environment variable named by ``api_key_env`` when
a search runs. They are never stored in options, cache entries or errors.
"""

from __future__ import annotations

import asyncio
import os
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import quote, quote_plus

import requests
from serpapi import GoogleSearch  # type: ignore[import-untyped]

from factcheck.cache import cached
from factcheck.errors import ConfigError, MissingKeyError, SourceError
from factcheck.net import host_limit, request_json
from factcheck.plugins.hookspecs import hookimpl
from factcheck.sources.base import Source
from factcheck.types import Claim, Evidence
from factcheck.usage import record_search

ORGANIC_LIMIT = 5  # the paper keeps the snippets of the first five organic results
RESULTS_PER_PAGE = 10
REDACTED = "[redacted]"
# A message cut short (request_json keeps 200 characters of an error body) may end in
# part of an echoed key; a tail this long or longer that starts the key is redacted too.
MIN_KEY_FRAGMENT = 4
# SerpAPI reports an empty result page as an error; it means "no evidence", not "failure".
SERPAPI_NO_RESULTS = "hasn't returned any results"


@dataclass(frozen=True)
class ResultFields:
    """Where one search API puts the parts of a Google result page.

    Serper and SerpAPI return the same page under different names
    (``answerBox`` / ``answer_box``), so one parser reads both through this map.
    """

    answer_box: str
    knowledge_graph: str
    organic: str
    highlighted: str  # the answer box's list of highlighted words, a last resort for its text
    kg_links: tuple[tuple[str, ...], ...]  # paths to the knowledge graph's link, best first


SERPER_FIELDS = ResultFields(
    answer_box="answerBox",
    knowledge_graph="knowledgeGraph",
    organic="organic",
    highlighted="snippetHighlighted",
    # The description comes from descriptionLink (usually Wikipedia): cite where the text is from.
    kg_links=(("descriptionLink",), ("website",)),
)
SERPAPI_FIELDS = ResultFields(
    answer_box="answer_box",
    knowledge_graph="knowledge_graph",
    organic="organic_results",
    highlighted="snippet_highlighted_words",
    kg_links=(("source", "link"), ("website",)),
)


def _text(value: Any) -> str:
    """A stripped string, or "" for anything that is not a string (API fields are untrusted)."""
    return value.strip() if isinstance(value, str) else ""


def _url(value: Any) -> str | None:
    text = _text(value)
    return text if text.startswith(("http://", "https://")) else None


def _path(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = data
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _answer_box(box: Any, fields: ResultFields, source: str, now: str) -> Evidence | None:
    if isinstance(box, list):  # SerpAPI has answered some result types with a list of boxes
        box = box[0] if box else None
    if not isinstance(box, Mapping):
        return None
    text = _text(box.get("answer")) or _text(box.get("snippet")) or _text(box.get("result"))
    if not text and isinstance(highlighted := box.get(fields.highlighted), list):
        text = "; ".join(t for t in map(_text, highlighted) if t)
    if not text:
        return None
    return Evidence(source=source, text=text, title="Answer box", url=_url(box.get("link")), retrieved_at=now)


def _knowledge_graph(kg: Any, fields: ResultFields, source: str, now: str) -> Evidence | None:
    if not isinstance(kg, Mapping):
        return None
    title = _text(kg.get("title"))
    parts = [_text(kg.get("description"))]
    attributes = kg.get("attributes")
    if isinstance(attributes, Mapping):  # "Born: ...", "Height: ...": the facts claims are about
        parts.extend(f"{_text(k)}: {_text(v)}" for k, v in attributes.items() if _text(k) and _text(v))
    body = "\n".join(part for part in parts if part)
    if not body:
        return None
    url = next((u for path in fields.kg_links if (u := _url(_path(kg, path)))), None)
    return Evidence(source=source, text=f"{title}: {body}" if title else body, title=title, url=url, retrieved_at=now)


def parse_results(answer: Mapping[str, Any], fields: ResultFields, source: str, retrieved_at: str) -> list[Evidence]:
    """Evidence from one Google result page: the answer box, else the knowledge graph, then the
    snippets of the first five organic results (results without a snippet are skipped)."""
    evidence: list[Evidence] = []
    first = _answer_box(answer.get(fields.answer_box), fields, source, retrieved_at) or _knowledge_graph(
        answer.get(fields.knowledge_graph), fields, source, retrieved_at
    )
    if first is not None:
        evidence.append(first)
    organic = answer.get(fields.organic)
    for result in organic[:ORGANIC_LIMIT] if isinstance(organic, list) else []:
        if isinstance(result, Mapping) and (snippet := _text(result.get("snippet"))):
            evidence.append(
                Evidence(
                    source=source,
                    text=snippet,
                    title=_text(result.get("title")),
                    url=_url(result.get("link")),
                    retrieved_at=retrieved_at,
                )
            )
    return evidence


def redact(message: str, secret: str) -> str:
    """``message`` with ``secret`` (plain or URL-encoded) replaced, including a fragment of it
    left at the end of a message that was cut short."""
    if len(secret) < 2 * MIN_KEY_FRAGMENT:
        return message  # not a real key; replacing it would mangle ordinary words
    for form in {secret, quote(secret, safe=""), quote_plus(secret)}:
        message = message.replace(form, REDACTED)
    for n in range(len(secret) - 1, MIN_KEY_FRAGMENT - 1, -1):
        if message.endswith(secret[:n]):
            return message[:-n] + REDACTED
    return message


@dataclass(frozen=True)
class WebSearchSource(Source):
    """What Serper and SerpAPI share: options, key handling, caching, parsing and merging.

    Subclasses set ``name``, ``FIELDS`` and ``VERSION`` and implement :meth:`fetch`.
    """

    reuse_judgments = True

    FIELDS: ClassVar[ResultFields]
    VERSION: ClassVar[str]  # bump when parsing changes: the cache holds parsed evidence

    base_url: str = ""
    api_key_env: str = ""
    gl: str = "us"
    hl: str = "en"
    max_queries: int = 2
    top_k: int = 5
    timeout_s: float = 20.0
    concurrency: int = 4

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"{self.name}: base_url must start with http:// or https://, got {self.base_url!r}")
        if not self.api_key_env.strip():
            raise ConfigError(f"{self.name}: api_key_env must name an environment variable")
        if not self.gl.strip() or not self.hl.strip():
            raise ConfigError(f"{self.name}: gl and hl must not be empty")
        if self.max_queries < 1 or self.top_k < 1 or self.concurrency < 1:
            raise ConfigError(f"{self.name}: max_queries, top_k and concurrency must be at least 1")
        if not self.timeout_s > 0:
            raise ConfigError(f"{self.name}: timeout_s must be positive, got {self.timeout_s!r}")

    def cache_version(self) -> str:
        return self.VERSION

    @property
    def root(self) -> str:
        """``base_url`` without a trailing slash."""
        return self.base_url.rstrip("/")

    def api_key(self) -> str:
        """The key from the environment; MissingKeyError naming the variable if it is unset."""
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise MissingKeyError(f"{self.name}: no API key (set {self.api_key_env})")
        return key

    async def prepare(self) -> None:
        """Fail once, before the first claim, when the API key is not set."""
        self.api_key()

    def request_params(self) -> dict[str, Any]:
        """The non-secret search parameters besides the query (they also key the cache)."""
        return {"num": RESULTS_PER_PAGE, "gl": self.gl, "hl": self.hl}

    @abstractmethod
    async def fetch(self, query: str, key: str) -> Mapping[str, Any]:
        """The API's answer to ``query`` as a JSON object; SourceError (never showing ``key``) on failure."""

    async def search(self, query: str, key: str) -> list[Evidence]:
        """Evidence for one query, from the cache of the check when it has been searched before."""

        async def compute() -> list[dict[str, Any]]:
            record_search()  # a request made is counted, even when it fails
            answer = await self.fetch(query, key)
            now = datetime.now(UTC).isoformat(timespec="seconds")
            # The parsed evidence is cached (with the time it was retrieved), not the whole page.
            return [e.to_dict() for e in parse_results(answer, self.FIELDS, self.name, now)]

        # base_url is part of the key so a test server or proxy never shares entries with the real API.
        request = {"q": query, "base_url": self.root, **self.request_params()}
        records = await cached(kind=self.name, version=self.VERSION, request=request, compute=compute)
        return [Evidence.from_dict(record) for record in records]

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        """Search the claim's first ``max_queries`` queries concurrently; merge, deduplicate by URL, keep ``top_k``."""
        key = self.api_key()
        queries = list(dict.fromkeys(q.strip() for q in claim.search_queries() if q.strip()))[: self.max_queries]
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self.search(query, key)) for query in queries]
        except BaseExceptionGroup as failures:
            raise failures.exceptions[0] from None  # the first failure reads better than a group
        merged: list[Evidence] = []
        seen: set[str] = set()
        for task in tasks:
            for item in task.result():
                identity = item.url or f"text:{item.text}"  # an answer box may have no URL
                if identity not in seen:
                    seen.add(identity)
                    merged.append(item)
        return merged[: self.top_k]


@dataclass(frozen=True)
class SerperSource(WebSearchSource):
    """Google results through Serper (``POST {base_url}/search``), with retries on 429 and 5xx.

    Options: ``base_url``, ``api_key_env`` (the variable holding the key),
    ``gl`` / ``hl`` (country / language), ``max_queries`` searched per claim,
    ``top_k`` passages kept, ``timeout_s`` per request, ``concurrency``
    (requests at once), ``retries`` (after a 429, 5xx or network error).
    """

    name = "serper"
    FIELDS = SERPER_FIELDS
    VERSION = "1"

    base_url: str = "https://google.serper.dev"
    api_key_env: str = "SERPER_API_KEY"
    retries: int = 3

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.retries < 0:
            raise ConfigError(f"serper: retries must be at least 0, got {self.retries!r}")

    async def fetch(self, query: str, key: str) -> Mapping[str, Any]:
        """POST the query; the key travels in the ``X-API-KEY`` header."""
        try:
            answer = await request_json(
                "POST",
                f"{self.root}/search",
                service=self.name,
                json_body={"q": query, **self.request_params()},
                headers={"X-API-KEY": key},
                timeout_s=self.timeout_s,
                retries=self.retries,
                concurrency=self.concurrency,
            )
        except SourceError as exc:
            # Error bodies are quoted in the message, and some servers echo the key back.
            raise SourceError(redact(str(exc), key)) from None
        if not isinstance(answer, Mapping):
            raise SourceError(f"serper: unexpected answer (a JSON {type(answer).__name__}, not an object)")
        return answer


@dataclass(frozen=True)
class SerpAPISource(WebSearchSource):
    """Google results through SerpAPI's ``google-search-results`` client, run in a worker thread.

    The client does not retry: a failed request fails the claim's retrieval.
    Options as for ``serper`` (without ``retries``); ``base_url`` replaces the
    client's ``BACKEND`` (default ``https://serpapi.com``).
    """

    name = "serpapi"
    FIELDS = SERPAPI_FIELDS
    VERSION = "1"

    base_url: str = "https://serpapi.com"
    api_key_env: str = "SERPAPI_API_KEY"

    def request_params(self) -> dict[str, Any]:
        """SerpAPI also needs the engine."""
        return {"engine": "google", **super().request_params()}

    def is_empty(self, answer: Mapping[str, Any]) -> bool:
        """SerpAPI answers a page without results with an ``error``; that is not a failure."""
        state = _path(answer, ("search_information", "organic_results_state"))
        return state == "Fully empty" or SERPAPI_NO_RESULTS in _text(answer.get("error"))

    def fetch_sync(self, query: str, key: str) -> Mapping[str, Any]:
        """One blocking search through the client (the key goes in the query string, so errors are redacted)."""
        search = GoogleSearch({"q": query, "api_key": key, **self.request_params()})
        search.BACKEND = self.root  # construct_url builds self.BACKEND + "/search"
        search.timeout = self.timeout_s  # passed to requests.get; the client's default is 60000 s
        try:
            answer: dict[str, Any] = search.get_dict()
        except requests.Timeout:
            raise SourceError(f"serpapi: timed out after {self.timeout_s:g}s") from None
        except requests.RequestException as exc:
            raise SourceError(redact(f"serpapi: {type(exc).__name__}: {exc}", key)[:300]) from None
        except (ValueError, TypeError):  # json.JSONDecodeError, or JSON that is not an object
            raise SourceError("serpapi: answered with malformed JSON") from None
        if "error" in answer:
            if self.is_empty(answer):
                return {}
            raise SourceError(redact(f"serpapi: {_text(answer['error'])[:200]}", key))
        if not isinstance(answer.get("search_metadata"), Mapping):
            # Every real answer has it; without it this is some other server's error page.
            raise SourceError("serpapi: unexpected answer (no search_metadata)")
        if _path(answer, ("search_metadata", "status")) == "Error":
            raise SourceError("serpapi: the search failed (search_metadata.status is Error)")
        return answer

    async def fetch(self, query: str, key: str) -> Mapping[str, Any]:
        """:meth:`fetch_sync` in a worker thread, at most ``concurrency`` at once per host."""
        async with host_limit(self.root, self.concurrency):
            return await asyncio.to_thread(self.fetch_sync, query, key)


@hookimpl
def register_sources(register: Callable[[Any], None]) -> None:
    register(SerperSource())
    register(SerpAPISource())
