"""The ``wikipedia`` source: the Wikipedia agent of the MAFC paper.

For each of a claim's search queries (at most ``max_queries``) it sends a
MediaWiki full-text search used as a generator (``generator=search``) that
returns the top ``pages`` hits with their text as plain text
(``prop=extracts|info`` with ``explaintext`` and ``inprop=url``). Pages found
by several queries are returned once. A claim nothing matches gets no
evidence, so its verifier abstains. On a wiki without the TextExtracts
extension (no ``extract`` in the answer) the search snippets are used instead,
at the cost of one more request.

Each page's lead section is evidence (first, cut to ``max_chars``), and so are
the ``sections`` passages of the rest of the page that bear most on the claim:
the page's sections are cut into passages (:func:`factcheck.pages.passages_of`)
and ranked against the claim and its queries
(:func:`factcheck.pages.select_passages`, as for the pages behind web search
results), each titled ``"Eiffel Tower § History"`` with the section's anchor in
its URL (``.../Eiffel_Tower#History``). With one page a query (``pages = 1``,
the default) the whole page comes in the search request itself (no
``exintro``; headings as ``== History ==`` lines, ``exsectionformat=wiki``).
TextExtracts gives a whole page to only one page a request, so with more pages
the search asks for the leads (``exintro``) and each page's whole text is one
more request (``prop=extracts&titles=...``). A page whose whole text cannot be
read keeps its lead, and the check's notes say why. ``sections = 0`` reads the
leads only, with exactly the requests of before.

Each passage carries the date it speaks for (``published_at``): the timestamp
of the page's revision it was read from. With ``as_of`` (an ISO 8601 date or
time) the source reads each page found **as it stood then**: the revision
current at that time (``prop=revisions`` with ``rvstart`` and
``rvdir=older``), that revision rendered by ``action=parse`` (the whole of it,
lead and sections; its lead only, ``section=0``, with ``sections = 0``), and a
permanent link to it (``index.php?oldid=...``); a page that did not exist yet
gives nothing. Without the option, the claim decides
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
- ``maxlag=5`` on every request, a lagging wiki retried a little, then given up
  (:mod:`factcheck.sources.mediawiki`);
- one request at a time per host by default (``concurrency``).

The requests themselves are :class:`factcheck.sources.mediawiki.MediaWiki`'s:
through the service layer (:mod:`factcheck.net`) and the check's cache, each
real request counted as one search call in the check's usage. ``api_url``
points the source at any MediaWiki (a self-hosted wiki, a mirror, a test
server); by default it is ``https://{language}.wikipedia.org/w/api.php``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote, urlsplit

from factcheck.claimtime import reading_times
from factcheck.dates import timestamp
from factcheck.errors import ConfigError, SourceError
from factcheck.options import setting
from factcheck.pages import PASSAGE_CHARS, passages_of, select_passages
from factcheck.plugin import Source, hookimpl
from factcheck.sources.mediawiki import MAX_PAGES, USER_AGENT_ENV, MediaWiki, check_user_agent, chosen_user_agent
from factcheck.types import Claim, Evidence
from factcheck.usage import record_note

# Where a refused User-Agent is changed, as the refusal names it.
USER_AGENT_SETTING = (
    f"the wikipedia agent's user_agent option ([agents.wikipedia] user_agent = ...) or {USER_AGENT_ENV}"
)

# Wikipedia language codes: "en", "simple", "zh-yue", "be-tarask". They become part of a host name.
_LANGUAGE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
# A sentence ends at . ! or ? (and any closing quote or bracket) followed by white space; a line break also ends one.
_SENTENCE_END = re.compile(r"[.!?][\"')\]\u201d\u2019]*(?=\s)|\n")


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


_URL_SAFE = "/:(),'!*@$;~"


def wiki_url(language: str, title: str) -> str:
    """The article URL Wikipedia uses for ``title``: ``https://en.wikipedia.org/wiki/Eiffel_Tower``."""
    return f"https://{language}.wikipedia.org/wiki/" + quote(title.replace(" ", "_"), safe=_URL_SAFE)


def section_url(page_url: str, heading: str) -> str:
    """The URL of a section of the page at ``page_url``: MediaWiki's anchor is the heading with its spaces
    as underscores (``...#Early_life``)."""
    return f"{page_url.split('#', 1)[0]}#{quote(heading.replace(' ', '_'), safe=_URL_SAFE)}"


def section_passages(sections: Sequence[dict[str, str]], queries: Sequence[str], k: int) -> list[tuple[str, str]]:
    """The ``k`` passages of a page's ``sections`` (``{"heading", "text"}``) that bear most on the claim
    (``queries``: its text and search queries), best first, as ``(heading, passage)``: the sections are cut
    into passages (:func:`factcheck.pages.passages_of`) and ranked together
    (:func:`factcheck.pages.select_passages`)."""
    heading_of: dict[str, str] = {}
    for section in sections:
        for passage in passages_of(section["text"]):
            heading_of.setdefault(passage, section["heading"])  # a passage twice on a page: its first section
    chosen = select_passages(list(heading_of), queries, k)
    return [(heading_of[passage], passage) for passage in chosen]


@dataclass(frozen=True)
class WikipediaSource(Source):
    """Wikipedia lead sections, and the passages of the rest of each page that bear on the claim, for a
    claim's search queries (the MAFC Wikipedia agent).

    Options: ``language`` (Wikipedia edition), ``api_url`` (any MediaWiki
    ``api.php``; default the edition's), ``pages`` (top search hits used per
    query, at most 20), ``max_queries`` (queries searched per claim),
    ``max_chars`` (lead text kept, cut at a sentence end), ``sections``
    (passages kept per page from beyond its lead, each at most
    :data:`factcheck.pages.PASSAGE_CHARS` characters; 0 reads the leads
    only), ``timeout_s`` (per
    request), ``concurrency`` (simultaneous requests to the host; Wikimedia
    asks for 1) and ``user_agent`` (the User-Agent sent, naming you and your
    contact; default: ``FACTCHECK_WIKIPEDIA_USER_AGENT``, else a placeholder)
    and ``as_of`` (an ISO 8601 date or time: read each page as it stood then).
    """

    reuse_judgments = True

    name = "wikipedia"
    language: str = "en"
    api_url: str | None = None
    pages: int = setting(1, minimum=1, maximum=MAX_PAGES)
    max_queries: int = setting(2, minimum=1)
    max_chars: int = setting(1500, minimum=1)
    sections: int = setting(2, minimum=0, zero="the leads only")
    timeout_s: float = setting(20.0, minimum=0, min_open=True, unit="seconds")
    concurrency: int = setting(1, minimum=1)
    user_agent: str | None = None
    as_of: str | None = None
    transport_options = frozenset({"timeout_s", "concurrency", "user_agent"})  # change how it asks, not what it finds

    def __post_init__(self) -> None:
        super().__post_init__()  # the declared ranges
        if not isinstance(self.language, str) or not _LANGUAGE.fullmatch(self.language):
            raise ConfigError(f"wikipedia: language must be a Wikipedia language code like 'en', got {self.language!r}")
        if self.api_url is not None:
            parts = urlsplit(self.api_url) if isinstance(self.api_url, str) else None
            if parts is None or parts.scheme not in {"http", "https"} or not parts.netloc:
                raise ConfigError(
                    f"wikipedia: api_url must be an http(s) URL of a MediaWiki api.php, got {self.api_url!r}"
                )
        if self.user_agent is not None:
            check_user_agent(self.user_agent, "user_agent", "wikipedia")
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
        return chosen_user_agent(self.user_agent, "wikipedia")

    async def prepare(self) -> None:
        """Fail once, before the first claim, when ``FACTCHECK_WIKIPEDIA_USER_AGENT`` cannot be a header."""
        self.user_agent_header()

    def wiki(self) -> MediaWiki:
        """The client this source asks: its wiki, User-Agent, time-out and concurrency."""
        return MediaWiki(
            endpoint=self.endpoint,
            user_agent=self.user_agent_header(),
            timeout_s=self.timeout_s,
            concurrency=self.concurrency,
            user_agent_setting=USER_AGENT_SETTING,
        )

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        """Lead sections of the top pages for the claim's queries, in query then rank order, each page once,
        each followed by the ``sections`` passages of the rest of the page that bear most on the claim;
        with ``as_of``, each as it stood then.

        A query whose request fails is skipped when others succeed; when all
        fail, the first error is raised (a SourceError: the agent abstains).
        A page whose whole text cannot be read keeps its lead, with a note.
        """
        wiki = self.wiki()
        queries = list(dict.fromkeys(q.strip() for q in claim.search_queries() if q.strip()))[: self.max_queries]
        whole = self.sections > 0
        answers = await asyncio.gather(*(wiki.search(q, self.pages, whole) for q in queries), return_exceptions=True)
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
                *(wiki.as_it_stood(page, times, fallback, whole) for page in found), return_exceptions=True
            )
            found = [page for page in _successes(then) if page is not None]
        if whole:
            found = list(await asyncio.gather(*(_with_sections(wiki, page) for page in found)))
        evidence: list[Evidence] = []
        for page in found:
            evidence.extend(await self._page_evidence(page, [claim.text, *queries]))
        return evidence

    async def _page_evidence(self, page: dict[str, Any], queries: Sequence[str]) -> list[Evidence]:
        """The page's lead (cut to ``max_chars``), then its ``sections`` passages that bear most on the claim
        (``queries``); nothing for a page with no lead."""
        lead = trim_at_sentence(page["extract"] or "", self.max_chars)
        if not lead:
            return []
        revision = page.get("revision") or {}
        url = page["url"] or wiki_url(self.language, page["title"])
        first = Evidence(
            source=self.name,
            text=lead,
            title=page["title"],
            url=url,
            retrieved_at=page["retrieved_at"],
            published_at=revision.get("timestamp"),
        )
        sections = page.get("sections") or []
        if not self.sections or not sections:
            return [first]
        # Ranked by words and meaning (embedding the passages): off the event loop, as the web pages are.
        chosen = await asyncio.to_thread(section_passages, sections, queries, self.sections)
        return [first] + [
            replace(
                first,
                text=passage[:PASSAGE_CHARS],  # passages_of keeps to it; the cut is a guarantee
                title=f"{page['title']} § {heading}",
                url=section_url(url, heading),
            )
            for heading, passage in chosen
        ]


async def _with_sections(wiki: MediaWiki, page: dict[str, Any]) -> dict[str, Any]:
    """``page`` with its sections: read already (the search gave the whole page, or its old revision was
    read), else read now (:meth:`MediaWiki.page_text`). A page whose whole text cannot be read keeps its
    lead, with no sections, and a note says why."""
    if page.get("sections") is not None:
        return page
    try:
        text = await wiki.page_text(page["title"])
    except SourceError as exc:
        record_note(f"wikipedia: the sections of {page['title']!r} not read: {exc}; its lead stands")
        return {**page, "sections": []}
    return {**page, "sections": text["sections"]}


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
