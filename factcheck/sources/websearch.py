"""The web search sources ``serper`` and ``serpapi``: Google results as evidence.

This is the web-search agent of the MAFC paper. For each of the claim's search
queries (at most ``max_queries``) the source asks Google through a search API
and turns the answer into evidence:

1. the answer box (a featured snippet or a direct answer, kept with its own
   title: "Eiffel Tower / Height: 330 m"), if Google shows one;
2. the knowledge graph panel (its title, description and facts such as
   "Born: ..."), if any: Serper lists the facts under ``attributes``, SerpAPI
   as top-level keys (``born``, ``died``);
3. then the snippets of the first five organic results.

With ``read_pages`` (default 0: off), the pages of the first ``read_pages``
organic results are read too, SSRF-safely and politely, and the passages of
each that bear most on the claim come before its snippet (:mod:`factcheck.pages`,
docs/evidence.md). A page that cannot be read leaves its snippet as the evidence.

Titles and snippets are turned from HTML into plain text (tags dropped,
entities decoded). Evidence from all queries is merged in query order and cut
to ``top_k`` passages: organic results are deduplicated by URL, answer boxes
and panels by text, so an organic result is never lost because the answer box
quotes the same page.

Both are called over HTTP through the service layer
(:func:`factcheck.net.request_json`): ``serper`` (https://serper.dev) with
``POST /search``, retrying 429 (honouring ``Retry-After``) and 5xx answers;
``serpapi`` (https://serpapi.com) with ``GET /search.json``, sent once (SerpAPI
answers 429 when the plan's searches are spent, which no retry fixes): one failed
request makes the agent abstain on that claim.

API keys are read from the environment variable named by ``api_key_env`` when
a search runs. They are never stored in options, cache entries or errors. A
key the API refuses (HTTP 401 or 403) is remembered for that endpoint (the
service's :class:`factcheck.net.Refusals`): later searches with it are not sent,
and their claims abstain with the API's own message.
"""

from __future__ import annotations

import asyncio
import weakref
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar

from factcheck.cache import cached
from factcheck.claimtime import written_before
from factcheck.dates import evidence_date
from factcheck.errors import ConfigError, MissingKeyError, ServiceHTTPError, SourceError, SourceRefusedError
from factcheck.html import strip_html
from factcheck.net import MESSAGE_CHARS, digest, request_json, service
from factcheck.options import setting
from factcheck.pages import DEFAULT_PAGE_BYTES, PageOptions, page_evidence, require_trafilatura
from factcheck.plugin import Source, hookimpl
from factcheck.secrets import redact, secret
from factcheck.types import Claim, Evidence

ORGANIC_LIMIT = 5  # the paper keeps the snippets of the first five organic results
RESULTS_PER_PAGE = 10
# SerpAPI reports an empty result page as an error; it means "no evidence", not "failure".
SERPAPI_NO_RESULTS = "hasn't returned any results"
# A key answered with these is refused for good: sending it again for the next claim only repeats the refusal.
REFUSED_KEY_STATUSES = frozenset({401, 403})
# SerpAPI knowledge-graph keys that are not facts about the entity (links, ids, images, the parts shown apart).
SERPAPI_KG_NOT_FACTS = frozenset(
    {"title", "type", "entity_type", "kgmid", "description", "website", "thumbnail", "image", "source"}
)


# The lock a key's first request holds until the API has accepted the key, per event loop (asyncio
# locks belong to one loop). Claims queued behind a refused first request abstain without sending theirs.
_first_use: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, ...], asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def _first_use_lock(ident: tuple[str, ...]) -> asyncio.Lock:
    per_loop = _first_use.setdefault(asyncio.get_running_loop(), {})
    return per_loop.setdefault(ident, asyncio.Lock())


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
    kg_top_level_facts: bool  # SerpAPI puts the panel's facts ("born", "died") beside its title


SERPER_FIELDS = ResultFields(
    answer_box="answerBox",
    knowledge_graph="knowledgeGraph",
    organic="organic",
    highlighted="snippetHighlighted",
    # The description comes from descriptionLink (usually Wikipedia): cite where the text is from.
    kg_links=(("descriptionLink",), ("website",)),
    kg_top_level_facts=False,
)
SERPAPI_FIELDS = ResultFields(
    answer_box="answer_box",
    knowledge_graph="knowledge_graph",
    organic="organic_results",
    highlighted="snippet_highlighted_words",
    kg_links=(("source", "link"), ("website",)),
    kg_top_level_facts=True,
)


@dataclass(frozen=True)
class ResultPage:
    """The evidence of one result page: ``featured`` (answer box, knowledge graph) and ``organic`` snippets."""

    featured: tuple[Evidence, ...] = ()
    organic: tuple[Evidence, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The page as JSON (what the cache stores)."""
        return {"featured": [e.to_dict() for e in self.featured], "organic": [e.to_dict() for e in self.organic]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ResultPage:
        """Read a page written by :meth:`to_dict`."""
        return cls(
            featured=tuple(Evidence.from_dict(e) for e in data.get("featured", ())),
            organic=tuple(Evidence.from_dict(e) for e in data.get("organic", ())),
        )


def _text(value: Any) -> str:
    """Plain text of an API string (HTML tags dropped, entities decoded), or "" for anything else:
    API fields are untrusted, and Google's snippets carry markup such as ``<b>``."""
    return strip_html(value) if isinstance(value, str) else ""


def _url(value: Any) -> str | None:
    text = value.strip() if isinstance(value, str) else ""
    return text if text.startswith(("http://", "https://")) else None


def _path(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = data
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _joined(items: Any) -> str:
    """A list of strings (highlighted words, a list answer) as one line."""
    return "; ".join(t for t in map(_text, items) if t) if isinstance(items, list) else ""


def _answer_box(box: Any, fields: ResultFields, source: str, now: str) -> Evidence | None:
    if isinstance(box, list):  # SerpAPI has answered some result types with a list of boxes
        box = box[0] if box else None
    if not isinstance(box, Mapping):
        return None
    title = _text(box.get("title"))
    answer = _text(box.get("answer")) or _text(box.get("result"))
    snippet = _text(box.get("snippet")) or _joined(box.get("list")) or _joined(box.get(fields.highlighted))
    if answer:
        # A direct answer ("330 m") means nothing without the question its title names ("Eiffel Tower / Height").
        text = "\n".join(part for part in (f"{title}: {answer}" if title else answer, snippet) if part)
    else:
        text = snippet
    if not text:
        return None
    return Evidence(source=source, text=text, title=title or "Answer box", url=_url(box.get("link")), retrieved_at=now)


def _fact_label(key: str) -> str:
    """``place_of_birth`` -> ``Place of birth`` (SerpAPI's keys as the panel shows them)."""
    words = key.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def _kg_facts(kg: Mapping[str, Any], fields: ResultFields) -> list[str]:
    """The panel's facts as "Label: value" lines: the claims a check is about are often these."""
    facts: list[tuple[str, str]] = []
    attributes = kg.get("attributes")
    if isinstance(attributes, Mapping):
        facts.extend((_text(k), _text(v)) for k, v in attributes.items() if isinstance(k, str))
    if fields.kg_top_level_facts:
        for key, value in kg.items():
            if (
                not isinstance(key, str)
                or key in SERPAPI_KG_NOT_FACTS
                or key.endswith(("_link", "_links", "_id", "_stick"))
                or not isinstance(value, str)  # lists and objects are links, images, "people also search for"
                or _url(value)
            ):
                continue
            facts.append((_fact_label(key), _text(value)))
    return [f"{label}: {value}" for label, value in facts if label and value]


def _knowledge_graph(kg: Any, fields: ResultFields, source: str, now: str) -> Evidence | None:
    if not isinstance(kg, Mapping):
        return None
    title = _text(kg.get("title"))
    body = "\n".join(part for part in (_text(kg.get("description")), *_kg_facts(kg, fields)) if part)
    if not body:
        return None
    url = next((u for path in fields.kg_links if (u := _url(_path(kg, path)))), None)
    return Evidence(source=source, text=f"{title}: {body}" if title else body, title=title, url=url, retrieved_at=now)


def parse_page(answer: Mapping[str, Any], fields: ResultFields, source: str, retrieved_at: str) -> ResultPage:
    """The evidence of one Google result page: the answer box and the knowledge graph (each if shown),
    then the snippets of the first five organic results (results without a snippet are skipped)."""
    featured = (
        _answer_box(answer.get(fields.answer_box), fields, source, retrieved_at),
        _knowledge_graph(answer.get(fields.knowledge_graph), fields, source, retrieved_at),
    )
    organic: list[Evidence] = []
    results = answer.get(fields.organic)
    for result in results[:ORGANIC_LIMIT] if isinstance(results, list) else []:
        if isinstance(result, Mapping) and (snippet := _text(result.get("snippet"))):
            organic.append(
                Evidence(
                    source=source,
                    text=snippet,
                    title=_text(result.get("title")),
                    url=_url(result.get("link")),
                    retrieved_at=retrieved_at,
                    # The date Google shows beside the result ("Mar 3, 2021", "3 days ago"), where it shows one.
                    published_at=evidence_date(result.get("date"), retrieved_at),
                )
            )
    return ResultPage(tuple(e for e in featured if e is not None), tuple(organic))


def parse_results(answer: Mapping[str, Any], fields: ResultFields, source: str, retrieved_at: str) -> list[Evidence]:
    """:func:`parse_page` as one list, featured evidence first."""
    page = parse_page(answer, fields, source, retrieved_at)
    return [*page.featured, *page.organic]


def merge_pages(pages: list[ResultPage]) -> list[Evidence]:
    """The pages' evidence in query order, each passage once.

    Organic results are deduplicated by URL (two queries often find the same
    page). Answer boxes and panels are deduplicated by text only: an answer box
    quoting a page must not hide that page's own organic snippet, which says more.
    """
    merged: list[Evidence] = []
    seen_urls: set[str] = set()
    seen_texts: set[str] = set()
    for page in pages:
        for item in page.featured:
            if item.text not in seen_texts:
                seen_texts.add(item.text)
                merged.append(item)
        for item in page.organic:
            if item.text in seen_texts or (item.url is not None and item.url in seen_urls):
                continue
            seen_texts.add(item.text)
            if item.url is not None:
                seen_urls.add(item.url)
            merged.append(item)
    return merged


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
    max_queries: int = setting(2, minimum=1)
    top_k: int = setting(5, minimum=1)
    timeout_s: float = setting(20.0, minimum=0, min_open=True, unit="seconds")
    concurrency: int = setting(4, minimum=1)
    date_restrict: bool = True
    # The pages behind the results (factcheck.pages, docs/evidence.md): off by default.
    read_pages: int = setting(0, minimum=0, maximum=10)
    allow_hosts: tuple[str, ...] = ()
    page_bytes: int = setting(DEFAULT_PAGE_BYTES, minimum=1024, unit="bytes")
    page_timeout_s: float = setting(10.0, minimum=0, min_open=True, unit="seconds")
    # They change how it asks, not what it finds.
    transport_options = frozenset({"timeout_s", "concurrency", "page_timeout_s"})

    def __post_init__(self) -> None:
        super().__post_init__()  # the declared ranges
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"{self.name}: base_url must start with http:// or https://, got {self.base_url!r}")
        if not self.api_key_env.strip():
            raise ConfigError(f"{self.name}: api_key_env must name an environment variable")
        if not self.gl.strip() or not self.hl.strip():
            raise ConfigError(f"{self.name}: gl and hl must not be empty")
        for host in self.allow_hosts:
            if not isinstance(host, str) or not host.strip() or any(c in host for c in "/@ "):
                raise ConfigError(f"{self.name}: allow_hosts names hosts (news.example, 10.0.0.5), not {host!r}")

    def cache_version(self) -> str:
        return self.VERSION

    @property
    def root(self) -> str:
        """``base_url`` without a trailing slash."""
        return self.base_url.rstrip("/")

    def api_key(self) -> str:
        """The key from the environment; MissingKeyError naming the variable if it is unset."""
        key = secret(self.api_key_env).strip()
        if not key:
            raise MissingKeyError(f"{self.name}: no API key (set {self.api_key_env})", self.api_key_env)
        return key

    async def prepare(self) -> None:
        """Fail once, before the first claim, when the API key is not set, or when pages are to be read
        without trafilatura installed."""
        self.api_key()
        if self.read_pages > 0:
            require_trafilatura(self.name)

    def page_options(self) -> PageOptions:
        """The options :func:`factcheck.pages.page_evidence` reads pages with."""
        return PageOptions(self.read_pages, self.allow_hosts, self.page_bytes, self.page_timeout_s)

    def request_params(self) -> dict[str, Any]:
        """The non-secret search parameters besides the query (they also key the cache).

        For a text written more than a month ago (``as_of``), and unless ``date_restrict`` is off, results
        are restricted to those published by then: Google's ``tbs=cdr:1,cd_max:MM/DD/YYYY``.
        """
        params: dict[str, Any] = {"num": RESULTS_PER_PAGE, "gl": self.gl, "hl": self.hl}
        if self.date_restrict and (until := written_before()) is not None:
            params["tbs"] = f"cdr:1,cd_max:{until.month:02d}/{until.day:02d}/{until.year:04d}"
        return params

    def _refusal_key(self, key: str) -> tuple[str, ...]:
        return (self.name, self.root, digest(key))

    def refuse_key(self, key: str, status: int, message: str) -> SourceRefusedError:
        """Remember that the API refused ``key`` (HTTP 401/403), and the error to abstain with.

        The API's own message is kept (keys redacted), with the variable to check.
        """
        reason = redact(f"{self.name}: HTTP {status}: {message}".rstrip(": "), key)
        reason = f"{reason} (check {self.api_key_env})"
        service().refusals.remember(self._refusal_key(key), reason)
        return SourceRefusedError(reason)

    def before_send(self, key: str) -> None:
        """Called when a search holds its slot, just before it is sent: stop it if the key has been
        refused meanwhile (concurrent claims queue behind the first refusal). The request itself is
        counted where it is sent (each retry too), against the run's budget."""
        if (reason := service().refusals.reason(self._refusal_key(key))) is not None:
            raise SourceRefusedError(f"{reason}; not sent again: the key was refused earlier")

    @abstractmethod
    async def fetch(self, query: str, key: str) -> Mapping[str, Any]:
        """The API's answer to ``query`` as a JSON object; SourceError (never showing ``key``) on failure.

        Implementations call :meth:`before_send` once they may send, and :meth:`refuse_key`
        when the API refuses the key.
        """

    async def fetch_checked(self, query: str, key: str) -> Mapping[str, Any]:
        """:meth:`fetch`, alone while the API has not yet accepted ``key``: a bad key costs one
        request per process, not one per claim in flight."""
        ident = self._refusal_key(key)
        refusals = service().refusals
        if not refusals.accepted(ident):
            async with _first_use_lock(ident):
                if not refusals.accepted(ident):
                    answer = await self.fetch(query, key)
                    refusals.accept(ident)
                    return answer
        return await self.fetch(query, key)

    async def search(self, query: str, key: str) -> ResultPage:
        """The evidence of one query, from the cache of the check when it has been searched before."""

        async def compute() -> dict[str, Any]:
            answer = await self.fetch_checked(query, key)
            now = datetime.now(UTC).isoformat(timespec="seconds")
            # The parsed evidence is cached (with the time it was retrieved), not the whole page. A page
            # without evidence is stored as {}: the cache keeps an empty answer only briefly (an outage
            # must not become a lasting "nothing found").
            page = parse_page(answer, self.FIELDS, self.name, now)
            return page.to_dict() if page.featured or page.organic else {}

        # base_url is part of the key so a test server or proxy never shares entries with the real API.
        request = {"q": query, "base_url": self.root, **self.request_params()}
        record = await cached(kind=self.name, version=self.VERSION, request=request, compute=compute)
        return ResultPage.from_dict(record)

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        """Search the first ``max_queries`` queries concurrently, merge them (:func:`merge_pages`), keep ``top_k``.

        With ``read_pages``, the pages of the first ``read_pages`` organic results kept are read
        (:func:`factcheck.pages.page_evidence`): up to two passages of each come before its snippet, so a
        claim may have up to ``top_k + 2 * read_pages`` passages.
        """
        key = self.api_key()
        queries = list(dict.fromkeys(q.strip() for q in claim.search_queries() if q.strip()))[: self.max_queries]
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self.search(query, key)) for query in queries]
        except BaseExceptionGroup as failures:
            raise failures.exceptions[0] from None  # the first failure reads better than a group
        pages = [task.result() for task in tasks]
        evidence = merge_pages(pages)[: self.top_k]
        if self.read_pages <= 0:
            return evidence
        organic = [item for page in pages for item in page.organic]
        return await page_evidence(evidence, organic, [claim.text, *queries], self.page_options())


@dataclass(frozen=True)
class SerperSource(WebSearchSource):
    """Google results through Serper (``POST {base_url}/search``), with retries on 429 and 5xx.

    Options: ``base_url``, ``api_key_env`` (the variable holding the key),
    ``gl`` / ``hl`` (country / language), ``max_queries`` searched per claim,
    ``top_k`` passages kept, ``timeout_s`` per request, ``concurrency``
    (requests at once), ``retries`` (after a 429, 5xx or network error),
    ``date_restrict`` (for a text written more than a month ago, only results
    published by then; default on), and the page reading options ``read_pages``
    (results whose pages are read; default 0), ``allow_hosts`` (hosts read even at
    a private address), ``page_bytes`` and ``page_timeout_s`` (docs/evidence.md).
    """

    name = "serper"
    FIELDS = SERPER_FIELDS
    VERSION = "3"

    base_url: str = "https://google.serper.dev"
    api_key_env: str = "SERPER_API_KEY"
    retries: int = setting(3, minimum=0)

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
                before_send=lambda: self.before_send(key),
            )
        except ServiceHTTPError as exc:
            if exc.status in REFUSED_KEY_STATUSES:  # Serper: 403 {"message": "Unauthorized.", "statusCode": 403}
                raise self.refuse_key(key, exc.status, exc.message) from None
            # Error bodies are quoted in the message, and some servers echo the key back.
            raise SourceError(redact(str(exc), key)) from None
        except SourceRefusedError:
            raise
        except SourceError as exc:
            raise SourceError(redact(str(exc), key)) from None
        if not isinstance(answer, Mapping):
            raise SourceError(f"serper: unexpected answer (a JSON {type(answer).__name__}, not an object)")
        return answer


@dataclass(frozen=True)
class SerpAPISource(WebSearchSource):
    """Google results through SerpAPI (``GET {base_url}/search.json``, the key in the query string).

    Sent once, without retries: a failed request fails the claim's retrieval.
    Options as for ``serper`` (without ``retries``); ``base_url`` defaults to
    ``https://serpapi.com``.
    """

    name = "serpapi"
    FIELDS = SERPAPI_FIELDS
    VERSION = "3"

    base_url: str = "https://serpapi.com"
    api_key_env: str = "SERPAPI_API_KEY"

    def request_params(self) -> dict[str, Any]:
        """SerpAPI also needs the engine."""
        return {"engine": "google", **super().request_params()}

    def is_empty(self, answer: Mapping[str, Any]) -> bool:
        """SerpAPI answers a page without results with an ``error``; that is not a failure."""
        state = _path(answer, ("search_information", "organic_results_state"))
        return state == "Fully empty" or SERPAPI_NO_RESULTS in _text(answer.get("error"))

    def read_error(self, answer: Mapping[str, Any], status: int, key: str) -> Mapping[str, Any]:
        """An answer carrying SerpAPI's ``error``: ``{}`` for a page without results, else the error to raise
        (a refusal of the key for 401 and 403: "Invalid API key. ...", a disabled account)."""
        if self.is_empty(answer):
            return {}
        message = _text(answer["error"])[:MESSAGE_CHARS]
        if status in REFUSED_KEY_STATUSES:
            raise self.refuse_key(key, status, message)
        suffix = f" (HTTP {status})" if status >= 400 else ""
        raise SourceError(redact(f"serpapi: {message}{suffix}", key))

    async def fetch(self, query: str, key: str) -> Mapping[str, Any]:
        """GET the query (the key goes in the query string, so errors are redacted)."""
        try:
            answer = await request_json(
                "GET",
                f"{self.root}/search.json",
                service=self.name,
                params={"q": query, "api_key": key, **self.request_params()},
                timeout_s=self.timeout_s,
                retries=0,
                concurrency=self.concurrency,
                before_send=lambda: self.before_send(key),
            )
        except ServiceHTTPError as exc:
            if isinstance(exc.body, Mapping) and "error" in exc.body:
                return self.read_error(exc.body, exc.status, key)
            if exc.body is None:
                raise SourceError("serpapi: answered with malformed JSON") from None
            raise SourceError(f"serpapi: HTTP {exc.status}: unexpected answer (no error message)") from None
        except SourceRefusedError:
            raise
        except SourceError as exc:
            raise SourceError(redact(str(exc), key)) from None
        if not isinstance(answer, Mapping):
            raise SourceError("serpapi: answered with malformed JSON (not an object)")
        if "error" in answer:
            return self.read_error(answer, 200, key)
        if not isinstance(answer.get("search_metadata"), Mapping):
            # Every real answer has it; without it this is some other server's error page.
            raise SourceError("serpapi: unexpected answer (no search_metadata)")
        if _path(answer, ("search_metadata", "status")) == "Error":
            raise SourceError("serpapi: the search failed (search_metadata.status is Error)")
        return answer


@hookimpl
def register_sources(register: Callable[[Any], None]) -> None:
    register(SerperSource())
    register(SerpAPISource())
