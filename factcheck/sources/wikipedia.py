"""The ``wikipedia`` source: the Wikipedia agent of the MAFC paper.

For each of a claim's search queries (at most ``max_queries``) it sends one
MediaWiki request: a full-text search used as a generator
(``generator=search``) that returns the top ``pages`` hits with their lead
sections as plain text (``prop=extracts|info`` with ``exintro``,
``explaintext`` and ``inprop=url``). Pages found by several queries are
returned once. A claim nothing matches gets no evidence, so its verifier
abstains. On a wiki without the TextExtracts extension (no ``extract`` in the
answer) the search snippets are used instead, at the cost of one more request.

Each passage carries the date it speaks for (``published_at``): the timestamp
of the page's revision it was read from. With ``as_of`` (an ISO 8601 date or
time) the source reads each page found **as it stood then**: the revision
current at that time (``prop=revisions`` with ``rvstart`` and
``rvdir=older``), its lead section rendered by ``action=parse`` from that
revision, and a permanent link to it (``index.php?oldid=...``); a page that did
not exist yet gives nothing. Without the option, the claim decides
(:func:`factcheck.claimtime.reading_times`): a claim about a past time ("in
2012", or "currently" in a text written in 2012) is read as of the end of that
time, else as of when the text was written, else today's page when the page is
younger than both. Two more requests per page edited since then (none for one
that was not), both cached (for good: an old
revision never changes; "the page did not exist then" for the cache's absence
time). This is how a claim made in 2012 is judged against
Wikipedia of 2012, not of today (issue 18; the MAFC paper's own failure). The
search itself is today's: a page renamed since is found under its new title,
whose history holds the old revisions.

Wikimedia's API etiquette is kept:

- a User-Agent naming the operator: the ``user_agent`` option, else the
  ``FACTCHECK_WIKIPEDIA_USER_AGENT`` environment variable, else a default that
  names this software and says no contact was set (a 403 refusing it says
  which setting to change, and is not repeated for every claim);
- ``maxlag=5`` on every request, and a ``maxlag`` error is retried after the
  server's ``Retry-After`` (at most ``MAXLAG_RETRIES`` times, each wait capped at
  ``MAXLAG_WAIT_S``); a wiki still lagging then makes the agent abstain with the
  lag named, and for ``LAG_HOLD_S`` its requests are sent once with no waiting;
- one request at a time per host by default (``concurrency``).

Every request goes through :func:`factcheck.net.request_json` (time-outs,
retries honouring ``Retry-After``) and the check's cache, and each real
request counts as one search call in the check's usage.

``api_url`` points the source at any MediaWiki (a self-hosted wiki, a mirror, a
test server); by default it is ``https://{language}.wikipedia.org/w/api.php``.
The ``wikipedia-api`` package is not used: it is synchronous (it would block
the event loop or need a thread per request) and builds ``wikipedia.org`` URLs
itself, so it cannot talk to a configurable API URL, and it would bypass the
shared retry, concurrency and caching of :mod:`factcheck.net`.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from factcheck.cache import cached
from factcheck.claimtime import reading_times
from factcheck.dates import timestamp
from factcheck.errors import ConfigError, SourceError
from factcheck.net import REFUSALS, ServiceHTTPError, SourceRefusedError, package_version, request_json
from factcheck.plugins.hookspecs import hookimpl
from factcheck.sources.base import Source
from factcheck.types import Claim, Evidence
from factcheck.usage import current_usage

VERSION = "4"  # bump when the requests or the parsing of answers change, to invalidate cached entries
SERVICE = "wikipedia"
# Retry policy handed to request_json; module constants so tests can shorten the back-off.
RETRIES = 3
BACKOFF_S = 0.5
# TextExtracts returns at most 20 lead sections per request (exlimit), so more pages would come without text.
MAX_PAGES = 20
# Wikimedia asks automated clients for maxlag=5: back off while the database replicas lag more than that.
MAXLAG_S = 5
# A lagging wiki is retried at most MAXLAG_RETRIES times per request, each after its Retry-After capped at
# MAXLAG_WAIT_S; after giving up, the host counts as lagging for LAG_HOLD_S, and its requests are sent once,
# with no waiting, so one lagging wiki costs a check seconds, not the agent time-out.
MAXLAG_RETRIES = 1
MAXLAG_WAIT_S = 5.0
LAG_HOLD_S = 60.0
USER_AGENT_ENV = "FACTCHECK_WIKIPEDIA_USER_AGENT"
USER_AGENT_POLICY = "https://foundation.wikimedia.org/wiki/Policy:Wikimedia_Foundation_User-Agent_Policy"
# The contact must be the operator's own, so the default has none and says so to whoever reads the logs.
DEFAULT_USER_AGENT = (
    f"factcheck-agents/{package_version()} (operator contact not set: set {USER_AGENT_ENV}) "
    f"python-httpx/{httpx.__version__}"
)

# Wikipedia language codes: "en", "simple", "zh-yue", "be-tarask". They become part of a host name.
_LANGUAGE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
# A sentence ends at . ! or ? (and any closing quote or bracket) followed by white space; a line break also ends one.
_SENTENCE_END = re.compile(r"[.!?][\"')\]\u201d\u2019]*(?=\s)|\n")
# A MediaWiki timestamp: 2009-12-30T12:00:00Z.
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
# An HTML tag (or comment) in text: "<p>", "</b>", "<br/>", "<!--"; not "x < 5" or "a <= b".
_TAG = re.compile(r"<(?:/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?|!--[^>]*)>")
# Words of a 403 body that refuses the client for its User-Agent (Wikimedia's text/plain answers).
_USER_AGENT_REFUSAL = re.compile(r"user[- ]agent|robot policy", re.IGNORECASE)


class _TextOnly(HTMLParser):
    """Collects the text of an HTML fragment: tags dropped, entities decoded, scripts and styles skipped."""

    _SKIPPED = frozenset({"script", "style"})
    _BREAKS = frozenset({"br", "p", "div", "li", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIPPED:
            self.skipping += 1
        elif tag in self._BREAKS:
            self.parts.append(" ")  # "a<br>b" is two words, not "ab"

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIPPED and self.skipping:
            self.skipping -= 1
        elif tag in self._BREAKS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def strip_html(fragment: str) -> str:
    """Plain text of an HTML fragment (a search snippet with ``<span class="searchmatch">`` or ``<b>``):
    tags removed, entities decoded, white space collapsed. Text that only looks like a tag
    ("x < 5") is kept as it is."""
    parser = _TextOnly()
    parser.feed(fragment)
    parser.close()
    return " ".join("".join(parser.parts).split())


def plain_extract(extract: str) -> str:
    """A lead extract as plain text. ``explaintext`` asks for plain text, but a wiki that ignores it (an
    older TextExtracts, a mirror or proxy) sends HTML (``<p><b>...``): that is stripped as search snippets
    are (:func:`strip_html`), so no markup reaches the evidence and the verifier. A plain extract keeps its
    line breaks (they end sentences)."""
    return strip_html(extract) if _TAG.search(extract) else extract.strip()


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
        # MediaWiki reports bad requests (and maxlag) with HTTP 200 and an "error" object.
        raise SourceError(f"{SERVICE}: API error {error.get('code', '?')}: {error.get('info', '')}".rstrip(": "))
    if not isinstance(data.get("query", {}), Mapping):
        raise SourceError(f"{SERVICE}: unexpected answer: 'query' is not an object")


def is_lagged(data: Any) -> bool:
    """The answer is MediaWiki's ``maxlag`` error: the replicas lag, and the request should wait and retry."""
    error = data.get("error") if isinstance(data, Mapping) else None
    return isinstance(error, Mapping) and error.get("code") == "maxlag"


class _Lagging:
    """Hosts that lagged past the maxlag retries recently (until when, monotonic): not waited for again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._until: dict[str, float] = {}

    def remember(self, host: str) -> None:
        with self._lock:
            self._until[host] = time.monotonic() + LAG_HOLD_S

    def lagging(self, host: str) -> bool:
        with self._lock:
            return self._until.get(host, 0.0) > time.monotonic()

    def clear(self) -> None:
        with self._lock:
            self._until.clear()


LAGGING = _Lagging()


def _lag_retries(host: str) -> Callable[[Any], bool]:
    """A ``retry_answer`` for one request: true for its first ``MAXLAG_RETRIES`` maxlag answers (none while
    ``host`` is known to lag)."""
    left = [MAXLAG_RETRIES]

    def retry(data: Any) -> bool:
        # Asked when the answer comes: a request queued behind one that gave up does not wait either.
        if not is_lagged(data) or left[0] <= 0 or LAGGING.lagging(host):
            return False
        left[0] -= 1
        return True

    return retry


def _gave_up_on_lag(host: str, data: Mapping[str, Any]) -> None:
    """After a maxlag answer left unretried: remember ``host`` as lagging, note it once in the check's usage,
    and raise SourceError (the agent abstains with it)."""
    LAGGING.remember(host)
    retries = f"{MAXLAG_RETRIES} {'retry' if MAXLAG_RETRIES == 1 else 'retries'}"
    note = (
        f"{SERVICE}: {host} lags (maxlag): gave up after {retries} of at most {MAXLAG_WAIT_S:g}s;"
        f" for {LAG_HOLD_S:g}s its requests are sent once, with no waiting"
    )
    if (recorder := current_usage.get()) is not None and note not in recorder.notes:
        recorder.notes.append(note)
    info = data["error"].get("info")
    raise SourceError(f"{note} ({info})" if isinstance(info, str) and info else note)


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


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _page(page: Mapping[str, Any]) -> dict[str, Any] | None:
    """One page of a ``prop=extracts|info`` answer as ``{"pageid", "title", "url", "extract"}``."""
    title = page.get("title")
    if page.get("missing") or page.get("invalid") or not isinstance(title, str) or not title:
        return None
    url = page.get("canonicalurl") or page.get("fullurl")
    if isinstance(url, str) and url.startswith("//"):
        url = "https:" + url  # a wiki with a protocol-relative $wgServer
    extract = page.get("extract")
    return {
        "pageid": page.get("pageid"),
        "title": title,
        "url": url if isinstance(url, str) and url else None,
        # None, not "": the wiki sent no extract at all (no TextExtracts), so the snippet must stand in.
        "extract": plain_extract(extract) if isinstance(extract, str) else None,
        "revision": _revision(page),
    }


def _revision(page: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``{"revid", "timestamp"}`` of a page's one listed revision (``prop=revisions``), or ``None``."""
    revisions = page.get("revisions")
    first = revisions[0] if isinstance(revisions, list) and revisions else None
    if not isinstance(first, Mapping) or not _is_int(first.get("revid")):
        return None
    stamp = first.get("timestamp")
    return {"revid": first["revid"], "timestamp": stamp if isinstance(stamp, str) and _TIMESTAMP.match(stamp) else None}


def parse_revision(data: Any) -> dict[str, Any]:
    """The revision of a ``prop=revisions&titles=...&rvlimit=1`` answer, or ``{}`` when the page is missing
    or had no revision at that time (it did not exist yet): an absence the cache keeps (``None`` it cannot)."""
    _api_error(data)
    pages = data.get("query", {}).get("pages", []) if isinstance(data, Mapping) else []
    if not isinstance(pages, list):
        raise SourceError(f"{SERVICE}: unexpected answer: 'query.pages' is not a list (formatversion=2 expected)")
    page = pages[0] if pages and isinstance(pages[0], Mapping) else {}
    return {} if page.get("missing") else (_revision(page) or {})


class _LeadText(HTMLParser):
    """The paragraphs of a rendered section (``action=parse`` HTML) as plain text: tables (infoboxes),
    footnote markers, edit links, styles and hidden notes left out."""

    _SKIPPED = frozenset({"table", "style", "script", "sup", "figure", "math"})
    _VOID = frozenset({"br", "img", "hr", "wbr", "input", "meta", "link", "source", "track", "area", "col", "embed"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[list[str]] = []
        self.skipping: list[str] = []  # the open tags whose content is left out
        self.in_paragraph = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._VOID:
            return
        classes = dict(attrs).get("class") or ""
        if (
            self.skipping
            or tag in self._SKIPPED
            or "mw-editsection" in classes
            or "display:none" in (dict(attrs).get("style") or "").replace(" ", "")
        ):
            self.skipping.append(tag)
        elif tag == "p":
            self.in_paragraph += 1
            self.paragraphs.append([])

    def handle_endtag(self, tag: str) -> None:
        if self.skipping:
            if tag == self.skipping[-1]:
                self.skipping.pop()
        elif tag == "p" and self.in_paragraph:
            self.in_paragraph -= 1

    def handle_data(self, data: str) -> None:
        if self.in_paragraph and not self.skipping:
            self.paragraphs[-1].append(data)


def parse_lead(data: Any) -> str:
    """The lead section's text from an ``action=parse&prop=text&section=0`` answer (one line per paragraph)."""
    _api_error(data)
    text = data.get("parse", {}).get("text") if isinstance(data, Mapping) else None
    if isinstance(text, Mapping):  # formatversion=1 wraps it: {"*": "<div>..."}
        text = text.get("*")
    if not isinstance(text, str):
        raise SourceError(f"{SERVICE}: unexpected answer: no 'parse.text' in the rendered revision")
    parser = _LeadText()
    parser.feed(text)
    parser.close()
    paragraphs = (" ".join("".join(parts).split()) for parts in parser.paragraphs)
    return "\n".join(p for p in paragraphs if p)


def parse_pages(data: Any) -> list[dict[str, Any]]:
    """The pages of a ``generator=search`` + ``prop=extracts|info`` answer, best hit first, as
    ``{"pageid", "title", "url", "extract"}`` (``extract`` is ``None`` when the wiki sent none).

    The answer lists pages in no useful order (by page id); each carries its search
    rank as ``index``, or its redirect does (``query.redirects``). A search that finds
    nothing has no ``query`` at all.
    """
    _api_error(data)
    query = data.get("query", {})
    pages = query.get("pages", [])
    if not isinstance(pages, list):
        raise SourceError(f"{SERVICE}: unexpected answer: 'query.pages' is not a list (formatversion=2 expected)")
    redirects = query.get("redirects", [])
    redirect_rank = {
        r["to"]: r["index"]
        for r in (redirects if isinstance(redirects, list) else [])
        if isinstance(r, Mapping) and isinstance(r.get("to"), str) and _is_int(r.get("index"))
    }
    ranked: list[tuple[float, int, dict[str, Any]]] = []
    for position, page in enumerate(pages):
        parsed = _page(page) if isinstance(page, Mapping) else None
        if parsed is None:
            continue
        rank = page.get("index") if _is_int(page.get("index")) else redirect_rank.get(parsed["title"], math.inf)
        ranked.append((rank, position, parsed))
    return [parsed for _, _, parsed in sorted(ranked, key=lambda item: (item[0], item[1]))]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _user_agent_refused(exc: ServiceHTTPError) -> bool:
    """A 403 refusing the client for its User-Agent (Wikimedia answers those in text/plain)."""
    return exc.status == 403 and bool(_USER_AGENT_REFUSAL.search(exc.message))


@dataclass(frozen=True)
class WikipediaSource(Source):
    """Wikipedia lead sections for a claim's search queries (the MAFC Wikipedia agent).

    Options: ``language`` (Wikipedia edition), ``api_url`` (any MediaWiki
    ``api.php``; default the edition's), ``pages`` (top search hits used per
    query, at most 20), ``max_queries`` (queries searched per claim),
    ``max_chars`` (lead text kept, cut at a sentence end), ``timeout_s`` (per
    request), ``concurrency`` (simultaneous requests to the host; Wikimedia
    asks for 1) and ``user_agent`` (the User-Agent sent, naming you and your
    contact; default: ``FACTCHECK_WIKIPEDIA_USER_AGENT``, else a placeholder)
    and ``as_of`` (an ISO 8601 date or time: read each page as it stood then).
    """

    reuse_judgments = True

    name = "wikipedia"
    language: str = "en"
    api_url: str | None = None
    pages: int = 1
    max_queries: int = 2
    max_chars: int = 1500
    timeout_s: float = 20.0
    concurrency: int = 1
    user_agent: str | None = None
    as_of: str | None = None
    transport_options = frozenset({"timeout_s", "concurrency", "user_agent"})  # change how it asks, not what it finds

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
        if self.user_agent is not None:
            _check_user_agent(self.user_agent, "user_agent")
        if self.as_of is not None:
            try:
                timestamp(self.as_of) if isinstance(self.as_of, str) else timestamp("")
            except ValueError:
                raise ConfigError(
                    f"wikipedia: as_of must be an ISO 8601 date or time like 2012-06-30, got {self.as_of!r}"
                ) from None

    @property
    def endpoint(self) -> str:
        """The ``api.php`` URL requests go to."""
        return self.api_url or f"https://{self.language}.wikipedia.org/w/api.php"

    def user_agent_header(self) -> str:
        """The User-Agent sent: the ``user_agent`` option, else ``FACTCHECK_WIKIPEDIA_USER_AGENT``, else the default."""
        if self.user_agent is not None:
            return self.user_agent.strip()
        from_env = os.environ.get(USER_AGENT_ENV, "").strip()
        if from_env:
            _check_user_agent(from_env, USER_AGENT_ENV)
            return from_env
        return DEFAULT_USER_AGENT

    async def prepare(self) -> None:
        """Fail once, before the first claim, when ``FACTCHECK_WIKIPEDIA_USER_AGENT`` cannot be a header."""
        self.user_agent_header()

    def _refused_user_agent(self, agent: str, exc: ServiceHTTPError) -> SourceRefusedError:
        host = urlsplit(self.endpoint).netloc
        return SourceRefusedError(
            f"{SERVICE}: {host} refused the User-Agent {agent!r} (HTTP 403: {exc.message}). "
            f"Set one that names your tool and how to reach you, with the wikipedia agent's "
            f"user_agent option ([agents.wikipedia] user_agent = ...) or {USER_AGENT_ENV}, "
            f"e.g. 'my-factchecker/1.0 (you@example.org)'; see {USER_AGENT_POLICY}"
        )

    async def _get(self, params: Mapping[str, str | int], parse: Callable[[Any], Any]) -> Any:
        """GET the API with ``params`` and return ``parse(answer)``, through the check's cache.

        The parsed form is what is cached: it is small, and an answer that does
        not parse (an API error) raises before it can be stored.
        """
        url = self.endpoint
        host = urlsplit(url).netloc
        agent = self.user_agent_header()
        refusal_key = (SERVICE, url, agent)

        def before_send() -> None:
            # Checked once this request may go (one at a time per host): claims queued behind
            # the first refusal of this User-Agent do not repeat it.
            if (reason := REFUSALS.reason(refusal_key)) is not None:
                raise SourceRefusedError(reason)
            # Each request sent (each retry too) is counted by request_json, against the run's budget.

        async def fetch() -> Any:
            try:
                data = await request_json(
                    "GET",
                    url,
                    service=SERVICE,
                    params=params,
                    headers={"User-Agent": agent},
                    timeout_s=self.timeout_s,
                    retries=RETRIES,
                    backoff_s=BACKOFF_S,
                    concurrency=self.concurrency,
                    before_send=before_send,
                    retry_answer=_lag_retries(host),
                    retry_answer_wait_s=MAXLAG_WAIT_S,
                )
            except ServiceHTTPError as exc:
                if not _user_agent_refused(exc):
                    raise
                refused = self._refused_user_agent(agent, exc)
                REFUSALS.remember(refusal_key, str(refused))
                raise refused from None
            if is_lagged(data):
                _gave_up_on_lag(host, data)
            return parse(data)

        return await cached(kind=SERVICE, version=VERSION, request={"url": url, "params": dict(params)}, compute=fetch)

    def search_params(self, query: str) -> dict[str, str | int]:
        """The one request that searches ``query`` and returns its top ``pages`` with their lead sections."""
        return {
            "action": "query",
            "format": "json",
            "formatversion": 2,
            "generator": "search",
            "gsrsearch": query,
            "gsrlimit": self.pages,
            "prop": "extracts|info|revisions",
            "rvprop": "ids|timestamp",  # the revision each lead is read from: its date, and a permanent link
            "exintro": 1,
            "explaintext": 1,
            "exlimit": self.pages,
            "inprop": "url",
            "redirects": 1,
            "maxlag": MAXLAG_S,
        }

    async def search(self, query: str) -> list[dict[str, Any]]:
        """The top ``pages`` hits for ``query``, best first, as ``{"pageid", "title", "url", "extract",
        "retrieved_at"}``."""

        def parse(data: Any) -> list[dict[str, Any]]:
            # Stamped when fetched, so evidence served from the cache says how old it is.
            return [{**page, "retrieved_at": _now()} for page in parse_pages(data)]

        pages: list[dict[str, Any]] = (await self._get(self.search_params(query), parse))[: self.pages]
        if any(page["extract"] is None for page in pages):
            snippets = await self._snippets(query)
            pages = [
                {**p, "extract": snippets.get(p["title"], "") if p["extract"] is None else p["extract"]} for p in pages
            ]
        return pages

    async def _snippets(self, query: str) -> dict[str, str]:
        """Search snippets by title, for a wiki that sends no lead extracts (TextExtracts not installed)."""
        params: dict[str, str | int] = {
            "action": "query",
            "format": "json",
            "formatversion": 2,
            "list": "search",
            "srsearch": query,
            "srlimit": self.pages,
            "maxlag": MAXLAG_S,
        }
        hits: list[dict[str, str]] = await self._get(params, parse_search)
        return {hit["title"]: hit["snippet"] for hit in hits}

    def permalink(self, title: str, revid: int) -> str:
        """The permanent link to one revision of a page (``index.php?title=...&oldid=...``)."""
        base = self.endpoint.rsplit("/", 1)[0]
        return f"{base}/index.php?title={quote(title.replace(' ', '_'), safe='')}&oldid={revid}"

    async def revision_at(self, title: str, when: str) -> dict[str, Any] | None:
        """The revision of ``title`` current at ``when`` (a MediaWiki timestamp), or ``None`` when the page
        did not exist then."""
        params: dict[str, str | int] = {
            "action": "query",
            "format": "json",
            "formatversion": 2,
            "prop": "revisions",
            "titles": title,
            "rvlimit": 1,
            "rvdir": "older",  # from rvstart back in time: the first one listed is the one current then
            "rvstart": when,
            "rvprop": "ids|timestamp",
            "maxlag": MAXLAG_S,
        }
        revision: dict[str, Any] = await self._get(params, parse_revision)
        return revision or None

    async def lead_of(self, revid: int) -> str:
        """The lead section of one revision as plain text (``action=parse``, section 0)."""
        params: dict[str, str | int] = {
            "action": "parse",
            "format": "json",
            "formatversion": 2,
            "oldid": revid,
            "prop": "text",
            "section": 0,
            "disableeditsection": 1,
            "disablelimitreport": 1,
            "maxlag": MAXLAG_S,
        }
        lead: str = await self._get(params, parse_lead)
        return lead

    async def as_it_stood(self, page: dict[str, Any], times: Sequence[str], fallback: bool) -> dict[str, Any] | None:
        """``page`` with the lead, URL and revision it had at the first of ``times`` (MediaWiki timestamps) at
        which it existed; else ``page`` as it is today (``fallback``) or ``None``.

        A page not edited since the first of ``times`` stood then as it is today: its own lead and
        revision serve, with the permanent link, and no more is asked."""
        current = page.get("revision") or {}
        stamp = current.get("timestamp")
        if times and page.get("extract") and stamp is not None and stamp <= times[0]:
            return {**page, "url": self.permalink(page["title"], current["revid"])}
        for when in times:
            revision = await self.revision_at(page["title"], when)
            if revision is not None:
                break
        else:
            return page if fallback else None
        lead = await self.lead_of(revision["revid"])
        return {
            **page,
            "extract": lead,
            "url": self.permalink(page["title"], revision["revid"]),
            "revision": revision,
        }

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        """Lead sections of the top pages for the claim's queries, in query then rank order, each page once;
        with ``as_of``, each as it stood then.

        A query whose request fails is skipped when others succeed; when all
        fail, the first error is raised (a SourceError: the agent abstains).
        """
        queries = list(dict.fromkeys(q.strip() for q in claim.search_queries() if q.strip()))[: self.max_queries]
        answers = await asyncio.gather(*(self.search(q) for q in queries), return_exceptions=True)
        found: list[dict[str, Any]] = []
        seen: set[object] = set()
        for pages in _successes(answers):
            for page in pages:
                # Two queries (or two redirects) can lead to one page: keep it once.
                key = page["pageid"] if page["pageid"] is not None else page["title"]
                if key not in seen:
                    seen.add(key)
                    found.append(page)
        # The option names one time and a page younger than it gives nothing; otherwise the claim's own
        # time, then the text's, and today's page when the page is younger than both.
        chosen = [self.as_of] if self.as_of is not None else reading_times(claim)
        if chosen:
            times = [timestamp(when) for when in chosen]
            fallback = self.as_of is None
            then = await asyncio.gather(
                *(self.as_it_stood(page, times, fallback) for page in found), return_exceptions=True
            )
            found = [page for page in _successes(then) if page is not None]
        evidence: list[Evidence] = []
        for page in found:
            text = trim_at_sentence(page["extract"] or "", self.max_chars)
            if not text:
                continue
            revision = page.get("revision") or {}
            evidence.append(
                Evidence(
                    source=self.name,
                    text=text,
                    title=page["title"],
                    url=page["url"] or wiki_url(self.language, page["title"]),
                    retrieved_at=page["retrieved_at"],
                    published_at=revision.get("timestamp"),
                )
            )
        return evidence


def _check_user_agent(value: object, where: str) -> None:
    """A User-Agent must be one non-empty printable line (it becomes an HTTP header)."""
    if not isinstance(value, str) or not value.strip() or not value.isprintable():
        raise ConfigError(f"wikipedia: {where} must be one line of printable text, got {value!r}")


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
