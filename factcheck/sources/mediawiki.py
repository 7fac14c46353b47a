"""A MediaWiki API client: full-text search with lead sections or whole pages, and pages as they stood
at a time.

:class:`MediaWiki` talks to one wiki's ``api.php`` (Wikipedia's or any other) for one
User-Agent. A search is one request: ``generator=search`` returning the top hits with their
lead sections as plain text (``prop=extracts|info|revisions`` with ``exintro``); on a wiki without
the TextExtracts extension (no ``extract`` in the answer) the search snippets stand in, at the
cost of one more request. Asked for whole pages (``whole``), a search for one hit leaves
``exintro`` out and gets that page's whole text in the same request, its sections headed
``== History ==`` (``exsectionformat=wiki``); TextExtracts gives a whole page to only one page a
request (it lowers ``exlimit`` to 1 and sends the others without text), so for more hits each
page's whole text is one more request (:meth:`MediaWiki.page_text`). A page's text is split
into its lead and its sections by :func:`sections_of`.

:meth:`MediaWiki.as_it_stood` reads a page as it stood at a time: the revision current then
(``prop=revisions`` with ``rvstart`` and ``rvdir=older``), its lead (or, with ``whole``, the whole
revision) rendered by ``action=parse`` and a permanent link to it (``index.php?oldid=...``).

Wikimedia's API etiquette is kept: ``maxlag=5`` on every request, a ``maxlag`` error retried
after the server's ``Retry-After`` (at most :data:`MAXLAG_RETRIES` times, each wait capped at
:data:`MAXLAG_WAIT_S`; a wiki still lagging then is given up, named, and for :data:`LAG_HOLD_S`
its requests are sent once with no waiting), and a 403 refusing the User-Agent is remembered
(:class:`factcheck.net.Refusals`) and says which setting to change.

Every request goes through the service layer (:func:`factcheck.net.request_json`: time-outs,
retries honouring ``Retry-After``, the per-host limit) and the check's cache; the parsed form
is what is cached, so an answer that does not parse (an API error) is never stored.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from factcheck.cache import cached
from factcheck.context import current
from factcheck.errors import ConfigError, ServiceHTTPError, SourceError, SourceRefusedError
from factcheck.html import has_tags, paragraphs_text, sectioned_text, strip_html
from factcheck.net import package_version, request_json, service
from factcheck.secrets import secret
from factcheck.usage import record_note

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
USER_AGENT_POLICY = "https://foundation.wikimedia.org/wiki/Policy:Wikimedia_Foundation_User-Agent_Policy"

# A MediaWiki timestamp: 2009-12-30T12:00:00Z.
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
# Words of a 403 body that refuses the client for its User-Agent (Wikimedia's text/plain answers).
_USER_AGENT_REFUSAL = re.compile(r"user[- ]agent|robot policy", re.IGNORECASE)
# A section heading of a plain-text extract (exsectionformat=wiki): "== History ==", "=== Origin ===".
_HEADING_LINE = re.compile(r"(={2,6})[ \t]*(.+?)[ \t]*\1[ \t]*")
# Where an HTML extract's first section starts (a wiki that ignores explaintext).
_HTML_HEADING = re.compile(r"<h[1-6][\s>]", re.IGNORECASE)
# The appendices of an article (Wikipedia's Manual of Style, MOS:LAYOUT): lists and citations, not what
# the article says. Their sections (and the sections under them) are no passages.
APPENDICES = frozenset(
    {
        "see also",
        "notes",
        "footnotes",
        "references",
        "citations",
        "sources",
        "bibliography",
        "works cited",
        "further reading",
        "external links",
        "notes and references",
    }
)


# The User-Agent Wikimedia's policy asks for names the operator: its contact is set by whoever runs a check.
USER_AGENT_ENV = "FACTCHECK_WIKIPEDIA_USER_AGENT"
# The contact must be the operator's own, so the default has none and says so to whoever reads the logs.
DEFAULT_USER_AGENT = (
    f"factcheck-agents/{package_version()} (operator contact not set: set {USER_AGENT_ENV}) "
    f"python-httpx/{httpx.__version__}"
)


def check_user_agent(value: object, where: str, component: str) -> None:
    """A User-Agent must be one non-empty printable line (it becomes an HTTP header)."""
    if not isinstance(value, str) or not value.strip() or not value.isprintable():
        raise ConfigError(f"{component}: {where} must be one line of printable text, got {value!r}")


def chosen_user_agent(option: str | None, component: str, env: tuple[str, ...] = (USER_AGENT_ENV,)) -> str:
    """The User-Agent a Wikimedia source sends: its ``user_agent`` option, else the first of the ``env``
    variables set, else :data:`DEFAULT_USER_AGENT`; ConfigError for one that cannot be a header."""
    if option is not None:
        check_user_agent(option, "user_agent", component)
        return option.strip()
    for name in env:
        from_env = secret(name).strip()  # the operator's contact, kept out of settings files
        if from_env:
            check_user_agent(from_env, name, component)
            return from_env
    return DEFAULT_USER_AGENT


def is_int(value: object) -> bool:
    """An integer that is not a bool (JSON's ``true`` is not a page id)."""
    return isinstance(value, int) and not isinstance(value, bool)


def plain_extract(extract: str) -> str:
    """A lead extract as plain text. ``explaintext`` asks for plain text, but a wiki that ignores it (an
    older TextExtracts, a mirror or proxy) sends HTML (``<p><b>...``): that is stripped as search snippets
    are (:func:`~factcheck.html.strip_html`), so no markup reaches the evidence and the verifier. A plain
    extract keeps its line breaks (they end sentences)."""
    return strip_html(extract) if has_tags(extract) else extract.strip()


def sections_of(text: str) -> tuple[str, list[dict[str, str]]]:
    """A page's plain text split at its section headings (``== History ==`` lines, as TextExtracts writes
    them with ``exsectionformat=wiki``): its lead, and its sections in page order as ``{"heading", "text"}``
    (``heading``: the section's own, the innermost; ``text``: one paragraph a line). Sections with no
    text (a heading straight above a subheading) and the appendices (:data:`APPENDICES`, with the
    sections under them) are left out."""
    lead: list[str] = []
    sections: list[dict[str, str]] = []
    body: list[str] = lead
    heading, appendix_level = "", 0  # appendix_level: the level of the appendix being skipped, 0 for none

    def close() -> None:
        if heading and not appendix_level and (text := "\n".join(body).strip()):
            sections.append({"heading": heading, "text": text})

    for line in text.splitlines():
        if (match := _HEADING_LINE.fullmatch(line.strip())) is None:
            if line.strip():
                body.append(line.strip())
            continue
        close()
        level, heading, body = len(match.group(1)), match.group(2), []
        if appendix_level and level <= appendix_level:
            appendix_level = 0
        if not appendix_level and heading.casefold() in APPENDICES:
            appendix_level = level
    close()
    return "\n".join(lead).strip(), sections


def whole_extract(extract: str) -> tuple[str, list[dict[str, str]]]:
    """A whole-page extract as its lead (plain text, as :func:`plain_extract` makes it) and its sections
    (:func:`sections_of`). An HTML extract (a wiki that ignores ``explaintext``) is cut at its first
    heading, and its sections read from their paragraphs and headings."""
    if not has_tags(extract):
        return sections_of(extract)
    start = _HTML_HEADING.search(extract)
    if start is None:
        return plain_extract(extract), []
    return plain_extract(extract[: start.start()]), sections_of(sectioned_text(extract[start.start() :]))[1]


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


def _gave_up_on_lag(host: str, data: Mapping[str, Any], service: str = SERVICE) -> None:
    """After a maxlag answer left unretried: remember ``host`` as lagging, note it once in the check's usage,
    and raise SourceError (the agent abstains with it)."""
    LAGGING.remember(host)
    retries = f"{MAXLAG_RETRIES} {'retry' if MAXLAG_RETRIES == 1 else 'retries'}"
    note = (
        f"{service}: {host} lags (maxlag): gave up after {retries} of at most {MAXLAG_WAIT_S:g}s;"
        f" for {LAG_HOLD_S:g}s its requests are sent once, with no waiting"
    )
    if (recorder := current().usage) is not None and note not in recorder.notes:
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


def _page(page: Mapping[str, Any], whole: bool = False) -> dict[str, Any] | None:
    """One page of a ``prop=extracts|info`` answer as ``{"pageid", "title", "url", "extract", "revision"}``;
    a whole-page answer (``whole``) also gives ``"sections"`` (:func:`whole_extract`), ``None`` when the
    page came without text."""
    title = page.get("title")
    if page.get("missing") or page.get("invalid") or not isinstance(title, str) or not title:
        return None
    url = page.get("canonicalurl") or page.get("fullurl")
    if isinstance(url, str) and url.startswith("//"):
        url = "https:" + url  # a wiki with a protocol-relative $wgServer
    extract = page.get("extract")
    parsed = {
        "pageid": page.get("pageid"),
        "title": title,
        "url": url if isinstance(url, str) and url else None,
        # None, not "": the wiki sent no extract at all (no TextExtracts), so the snippet must stand in.
        "extract": plain_extract(extract) if isinstance(extract, str) else None,
        "revision": _revision(page),
    }
    if whole:
        lead, sections = whole_extract(extract) if isinstance(extract, str) else (None, None)
        parsed.update(extract=lead, sections=sections)
    return parsed


def _revision(page: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``{"revid", "timestamp"}`` of a page's one listed revision (``prop=revisions``), or ``None``."""
    revisions = page.get("revisions")
    first = revisions[0] if isinstance(revisions, list) and revisions else None
    if not isinstance(first, Mapping) or not is_int(first.get("revid")):
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


def _rendered(data: Any) -> str:
    """The HTML of an ``action=parse&prop=text`` answer."""
    _api_error(data)
    text = data.get("parse", {}).get("text") if isinstance(data, Mapping) else None
    if isinstance(text, Mapping):  # formatversion=1 wraps it: {"*": "<div>..."}
        text = text.get("*")
    if not isinstance(text, str):
        raise SourceError(f"{SERVICE}: unexpected answer: no 'parse.text' in the rendered revision")
    return text


def parse_lead(data: Any) -> str:
    """The lead section's text from an ``action=parse&prop=text&section=0`` answer (one line per paragraph)."""
    return paragraphs_text(_rendered(data))


def parse_whole(data: Any) -> dict[str, Any]:
    """A whole rendered revision (``action=parse&prop=text``, no ``section``) as ``{"extract", "sections"}``:
    its lead's paragraphs (what :func:`parse_lead` gives for section 0) and its sections
    (:func:`sections_of`)."""
    lead, sections = sections_of(sectioned_text(_rendered(data)))
    return {"extract": lead, "sections": sections}


def parse_page_text(data: Any) -> dict[str, Any]:
    """The one page of a ``prop=extracts&titles=...`` whole-page answer as ``{"extract", "sections"}``
    (:func:`whole_extract`); SourceError when the page is missing or came without text."""
    _api_error(data)
    pages = data.get("query", {}).get("pages", [])
    if not isinstance(pages, list):
        raise SourceError(f"{SERVICE}: unexpected answer: 'query.pages' is not a list (formatversion=2 expected)")
    page = pages[0] if pages and isinstance(pages[0], Mapping) else {}
    if page.get("missing") or page.get("invalid"):
        raise SourceError(f"{SERVICE}: the page {page.get('title')!r} is missing")
    extract = page.get("extract")
    if not isinstance(extract, str):
        raise SourceError(f"{SERVICE}: no text of {page.get('title')!r} in the answer (no 'extract')")
    lead, sections = whole_extract(extract)
    return {"extract": lead, "sections": sections}


def parse_pages(data: Any, whole: bool = False) -> list[dict[str, Any]]:
    """The pages of a ``generator=search`` + ``prop=extracts|info`` answer, best hit first, as
    ``{"pageid", "title", "url", "extract"}`` (``extract`` is ``None`` when the wiki sent none), and
    ``"sections"`` for whole-page extracts (``whole``).

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
        if isinstance(r, Mapping) and isinstance(r.get("to"), str) and is_int(r.get("index"))
    }
    ranked: list[tuple[float, int, dict[str, Any]]] = []
    for position, page in enumerate(pages):
        parsed = _page(page, whole) if isinstance(page, Mapping) else None
        if parsed is None:
            continue
        rank = page.get("index") if is_int(page.get("index")) else redirect_rank.get(parsed["title"], math.inf)
        ranked.append((rank, position, parsed))
    return [parsed for _, _, parsed in sorted(ranked, key=lambda item: (item[0], item[1]))]


def now_stamp() -> str:
    """Now, as a passage's ``retrieved_at``: stamped when fetched, so evidence served from the cache says how
    old it is."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def _user_agent_refused(exc: ServiceHTTPError) -> bool:
    """A 403 refusing the client for its User-Agent (Wikimedia answers those in text/plain)."""
    return exc.status == 403 and bool(_USER_AGENT_REFUSAL.search(exc.message))


@dataclass(frozen=True)
class MediaWiki:
    """One wiki's ``api.php`` (``endpoint``), asked with ``user_agent``, ``timeout_s`` per request and at
    most ``concurrency`` requests at once; ``user_agent_setting`` names where the operator sets the
    User-Agent (a refusal of it says so). ``service`` names the requests in errors, usage and the cache, and
    ``version`` keys their cache entries: a Wikibase (Wikidata's own API, a MediaWiki too) is asked through
    this same client (:mod:`factcheck.sources.wikibase`)."""

    endpoint: str
    user_agent: str
    timeout_s: float = 20.0
    concurrency: int = 1
    user_agent_setting: str = "the User-Agent"
    service: str = SERVICE
    version: str = VERSION

    def _refused_user_agent(self, exc: ServiceHTTPError) -> SourceRefusedError:
        host = urlsplit(self.endpoint).netloc
        return SourceRefusedError(
            f"{self.service}: {host} refused the User-Agent {self.user_agent!r} (HTTP 403: {exc.message}). "
            f"Set one that names your tool and how to reach you, with {self.user_agent_setting}, "
            f"e.g. 'my-factchecker/1.0 (you@example.org)'; see {USER_AGENT_POLICY}"
        )

    async def get(self, params: Mapping[str, str | int], parse: Callable[[Any], Any]) -> Any:
        """GET the API with ``params`` and return ``parse(answer)``, through the check's cache."""
        url = self.endpoint
        host = urlsplit(url).netloc
        refusal_key = (self.service, url, self.user_agent)
        refusals = service().refusals

        def before_send() -> None:
            # Checked once this request may go (one at a time per host): claims queued behind
            # the first refusal of this User-Agent do not repeat it.
            if (reason := refusals.reason(refusal_key)) is not None:
                raise SourceRefusedError(reason)
            # Each request sent (each retry too) is counted by request_json, against the run's budget.

        async def fetch() -> Any:
            try:
                data = await request_json(
                    "GET",
                    url,
                    service=self.service,
                    params=params,
                    headers={"User-Agent": self.user_agent},
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
                refused = self._refused_user_agent(exc)
                refusals.remember(refusal_key, str(refused))
                raise refused from None
            if is_lagged(data):
                _gave_up_on_lag(host, data, self.service)
            return parse(data)

        return await cached(
            kind=self.service, version=self.version, request={"url": url, "params": dict(params)}, compute=fetch
        )

    async def search(self, query: str, limit: int, whole: bool = False) -> list[dict[str, Any]]:
        """The top ``limit`` hits for ``query``, best first, as ``{"pageid", "title", "url", "extract",
        "revision", "retrieved_at"}``: one request, and one more for the snippets on a wiki that sends
        no lead extracts.

        ``whole``: the pages' sections are wanted. For one hit its whole text comes in the same request
        (no ``exintro``), split into ``extract`` (the lead) and ``"sections"``; for more, TextExtracts
        gives one page a request its whole text, so the leads are asked for as without ``whole`` and
        each page's whole text is :meth:`page_text`'s to read. A page with no text to read (no
        TextExtracts: its snippet stands in) gets ``"sections": []``."""
        single = whole and limit == 1
        params: dict[str, str | int] = {
            "action": "query",
            "format": "json",
            "formatversion": 2,
            "generator": "search",
            "gsrsearch": query,
            "gsrlimit": limit,
            "prop": "extracts|info|revisions",
            "rvprop": "ids|timestamp",  # the revision each lead is read from: its date, and a permanent link
            "exintro": 1,
            "explaintext": 1,
            "exlimit": limit,
            "inprop": "url",
            "redirects": 1,
            "maxlag": MAXLAG_S,
        }
        if single:
            del params["exintro"]  # the whole page, its headings as "== History ==" lines
            params["exsectionformat"] = "wiki"

        def parse(data: Any) -> list[dict[str, Any]]:
            # Stamped when fetched, so evidence served from the cache says how old it is.
            return [{**page, "retrieved_at": now_stamp()} for page in parse_pages(data, whole=single)]

        pages: list[dict[str, Any]] = (await self.get(params, parse))[:limit]
        if any(page["extract"] is None for page in pages):
            snippets = await self.snippets(query, limit)
            if whole:
                record_note(
                    f"{SERVICE}: {urlsplit(self.endpoint).netloc} sends no page text (no TextExtracts):"
                    " search snippets stand in for the leads, and no sections are read"
                )
            unread: dict[str, Any] = {"sections": []} if whole else {}
            pages = [
                {**p, "extract": snippets.get(p["title"], ""), **unread} if p["extract"] is None else p for p in pages
            ]
        return pages

    async def page_text(self, title: str) -> dict[str, Any]:
        """The whole text of ``title`` as it is today, as ``{"extract", "sections"}`` (:func:`sections_of`):
        one ``prop=extracts`` request, without ``exintro``, for this one page (TextExtracts' limit)."""
        params: dict[str, str | int] = {
            "action": "query",
            "format": "json",
            "formatversion": 2,
            "prop": "extracts",
            "titles": title,
            "explaintext": 1,
            "exsectionformat": "wiki",
            "exlimit": 1,
            "redirects": 1,
            "maxlag": MAXLAG_S,
        }
        text: dict[str, Any] = await self.get(params, parse_page_text)
        return text

    async def snippets(self, query: str, limit: int) -> dict[str, str]:
        """Search snippets by title, for a wiki that sends no lead extracts (TextExtracts not installed)."""
        params: dict[str, str | int] = {
            "action": "query",
            "format": "json",
            "formatversion": 2,
            "list": "search",
            "srsearch": query,
            "srlimit": limit,
            "maxlag": MAXLAG_S,
        }
        hits: list[dict[str, str]] = await self.get(params, parse_search)
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
        revision: dict[str, Any] = await self.get(params, parse_revision)
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
        lead: str = await self.get(params, parse_lead)
        return lead

    async def text_of(self, revid: int) -> dict[str, Any]:
        """One whole revision as ``{"extract", "sections"}``: its lead as :meth:`lead_of` gives it, and its
        sections (``action=parse`` of the whole revision, without its table of contents)."""
        params: dict[str, str | int] = {
            "action": "parse",
            "format": "json",
            "formatversion": 2,
            "oldid": revid,
            "prop": "text",
            "disabletoc": 1,
            "disableeditsection": 1,
            "disablelimitreport": 1,
            "maxlag": MAXLAG_S,
        }
        text: dict[str, Any] = await self.get(params, parse_whole)
        return text

    async def _old_text(self, title: str, revid: int) -> dict[str, Any]:
        """The whole revision (:meth:`text_of`); when it cannot be read, its lead (:meth:`lead_of`) with no
        sections, and a note that says why."""
        try:
            return await self.text_of(revid)
        except SourceError as exc:
            record_note(f"{SERVICE}: the sections of {title!r} (revision {revid}) not read: {exc}; its lead stands")
        return {"extract": await self.lead_of(revid), "sections": []}

    async def as_it_stood(
        self, page: dict[str, Any], times: Sequence[str], fallback: bool, whole: bool = False
    ) -> dict[str, Any] | None:
        """``page`` with the lead, URL and revision it had at the first of ``times`` (MediaWiki timestamps) at
        which it existed; else ``page`` as it is today (``fallback``) or ``None``. ``whole``: with that
        revision's sections too (``"sections"``; :meth:`text_of` instead of :meth:`lead_of`).

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
        text = (
            await self._old_text(page["title"], revision["revid"])
            if whole
            else {"extract": await self.lead_of(revision["revid"])}
        )
        return {
            **page,
            **text,
            "url": self.permalink(page["title"], revision["revid"]),
            "revision": revision,
        }
