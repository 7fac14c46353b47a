"""The pages behind search results: read a result's page and keep the passages that bear on the claim.

The web search sources (:mod:`factcheck.sources.websearch`) call :func:`page_evidence` for the first
``read_pages`` organic results of a claim. Each page is fetched, its main text extracted with
trafilatura, cut into passages of a few sentences, and the best two passages for the claim (BM25 over
the page's passages, :func:`select_passages`) become evidence placed before that result's snippet.

Fetching is SSRF-safe: every connection goes through :class:`GuardedBackend`, which resolves the host
itself, refuses when any address it resolves to is not a public one (:func:`blocked_address`: loopback,
private, link-local, multicast, reserved, unspecified, cloud metadata) unless the host is in
``allow_hosts``, and then connects to that checked address, so a second DNS answer cannot send the
connection elsewhere. Redirects are followed here (at most :data:`MAX_REDIRECTS`), each through the same
backend, so each hop is checked again.

Politeness: robots.txt is read once per host (and cached), at most :data:`HOST_CONCURRENCY` requests at a
time go to one host, bodies are streamed and cut at ``page_bytes``, each page has ``page_timeout_s`` in
all, and only HTML and plain text are read. A page that cannot be read leaves the snippet as the
evidence and says why in the check's notes, once. Pages are cached (kind ``"page"``); a failure is an
absence, so it expires with the cache's absence TTL. Page requests are not search requests: they are
not counted against ``--max-searches``.
"""

from __future__ import annotations

import asyncio
import codecs
import ipaddress
import re
import socket
import ssl
import time
import weakref
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin
from urllib.robotparser import RobotFileParser

import httpcore
import httpx

from factcheck.cache import cached
from factcheck.dates import evidence_date
from factcheck.errors import ConfigError
from factcheck.net import USER_AGENT, service, tls_context
from factcheck.ranking import rank_passages
from factcheck.text import split_sentences
from factcheck.types import Evidence
from factcheck.usage import record_note

PAGE_VERSION = "1"  # bump when extraction changes: the cache holds the extracted text
ROBOTS_VERSION = "1"
MAX_REDIRECTS = 5
HOST_CONCURRENCY = 2  # page requests at a time per host
PASSAGES_PER_PAGE = 2
SENTENCES_PER_PASSAGE = 3
HEADING_WORDS = 12  # a line shorter than this, without a sentence end, is a heading
PASSAGE_CHARS = 700  # a passage is cut after this many characters, at a sentence end where it can be
ROBOTS_BYTES = 512 * 1024  # Google reads the first 500 KiB of a robots.txt
DEFAULT_PAGE_BYTES = 2 * 1024 * 1024
READABLE_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain"})
ROBOTS_MEMO_S = 600.0  # how long a loop remembers a host's robots.txt (the cache keeps it longer)

# Cloud metadata endpoints, named as such (most are link-local or private anyway; these read better).
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "169.254.169.253", "fd00:ec2::254", "100.100.100.200")
)

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


class PageNotRead(Exception):
    """A page that could not be read, and why (the note's words: "its address 10.0.0.1 is private")."""


class BlockedAddress(PageNotRead):
    """A host that resolves to an address no page is fetched from."""


def blocked_address(address: str) -> str | None:
    """Why no page is fetched from ``address`` ("private", "loopback", "cloud metadata", ...), or ``None``
    for a public address. An IPv4 address mapped or embedded in IPv6 is judged as the IPv4 address."""
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None:
            return blocked_address(str(embedded))
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    for kind, flag in (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
    ):
        if flag:
            return kind
    if not ip.is_global:
        return "not a public address"  # shared address space (100.64.0.0/10), documentation ranges
    return None


async def resolve_host(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (an address is itself, with no lookup), in the resolver's order."""
    try:
        return [str(ipaddress.ip_address(host.split("%", 1)[0]))]
    except ValueError:
        pass
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


# What opens the checked connections (tests wrap it to record every connection attempted).
CONNECTOR: httpcore.AsyncNetworkBackend = httpcore.AnyIOBackend()


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that connects only to public addresses (or hosts in ``allow_hosts``).

    ``connect_tcp`` resolves the host (:func:`resolve_host`), refuses with :class:`BlockedAddress` when any
    address it resolves to is blocked (:func:`blocked_address`), and connects to the first address by its
    number, so the address checked is the address connected to (no second lookup to rebind). TLS still
    names the host: httpcore passes the URL's host as the server name.
    """

    def __init__(self, allow_hosts: Iterable[str] = ()) -> None:
        self.allow_hosts = frozenset(h.strip().lower().strip("[]") for h in allow_hosts if h.strip())

    async def check(self, host: str, port: int, timeout: float | None = None) -> list[str]:
        """The addresses ``host`` resolves to; BlockedAddress when one of them is blocked (and the host is
        not allowed), httpcore.ConnectError when it resolves to none."""
        name = host.strip("[]").lower()
        try:
            async with asyncio.timeout(timeout):
                addresses = await resolve_host(name, port)
        except (OSError, TimeoutError) as exc:
            raise httpcore.ConnectError(f"cannot resolve {name}: {exc}") from exc
        if not addresses:
            raise httpcore.ConnectError(f"cannot resolve {name}")
        if name not in self.allow_hosts:
            for address in addresses:
                if (why := blocked_address(address)) is not None:
                    raise BlockedAddress(f"its address {address} is {why} (allow_hosts lets an operator allow a host)")
        return addresses

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self.check(host, port, timeout)  # checked here, where the connection is opened
        failure: httpcore.ConnectError | httpcore.ConnectTimeout | None = None
        for address in addresses:  # each one checked above: try them in the resolver's order
            try:
                return await CONNECTOR.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # check() never returns no address
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise BlockedAddress("pages are never read over a Unix socket")

    async def sleep(self, seconds: float) -> None:
        await CONNECTOR.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport, with its connection pool on a :class:`GuardedBackend`."""

    def __init__(self, allow_hosts: Iterable[str] = (), context: ssl.SSLContext | None = None) -> None:
        context = context if context is not None else tls_context()
        super().__init__(verify=context, trust_env=False)
        if not isinstance(getattr(self, "_pool", None), httpcore.AsyncConnectionPool):
            raise RuntimeError("httpx.AsyncHTTPTransport no longer keeps an httpcore pool in _pool")
        self.guard = GuardedBackend(allow_hosts)
        self._pool = httpcore.AsyncConnectionPool(ssl_context=context, max_connections=20, network_backend=self.guard)


@dataclass(frozen=True)
class PageOptions:
    """How pages are read: the web search sources' options of that name."""

    read_pages: int = 0
    allow_hosts: tuple[str, ...] = ()
    page_bytes: int = DEFAULT_PAGE_BYTES
    page_timeout_s: float = 10.0


@dataclass(frozen=True)
class Fetched:
    """A page's body as received: the final URL (after redirects), its status, type, charset and bytes."""

    url: str
    status: int
    content_type: str
    charset: str | None
    body: bytes
    cut: bool  # the body went on past the byte cap


def _content_type(response: httpx.Response) -> tuple[str, str | None]:
    header = response.headers.get("content-type", "")
    media, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return media.strip().lower(), charset


def check_url(url: str) -> httpx.URL:
    """``url`` parsed; PageNotRead unless it is http or https with a host."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise PageNotRead(f"its address is not a URL ({exc})") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise PageNotRead(f"only http and https pages are read, not {parsed.scheme or 'this'}: URL")
    return parsed


async def fetch(
    client: httpx.AsyncClient,
    url: str,
    cap: int,
    *,
    types: frozenset[str] | None = None,
    guard: GuardedBackend | None = None,
    before_hop: Callable[[httpx.URL], Awaitable[None]] | None = None,
) -> Fetched:
    """GET ``url``, following at most :data:`MAX_REDIRECTS` redirects here (each hop connects through the
    guarded backend, so each is checked again), under the host's concurrency limit, reading at most
    ``cap`` bytes of the body. ``types``: the content types read (others raise PageNotRead before the body
    is read). ``guard``: checks each hop's address first, so that a blocked one is said as such rather
    than as an unreadable robots.txt (the connection is checked again as it opens). ``before_hop``: called
    with each URL before it is requested (robots.txt)."""
    current = url
    for _hop in range(MAX_REDIRECTS + 1):
        parsed = check_url(current)
        if guard is not None:
            try:
                await guard.check(parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80))
            except httpcore.ConnectError as exc:
                raise PageNotRead(str(exc)) from None
        if before_hop is not None:
            await before_hop(parsed)
        async with (
            service().limit(str(parsed), HOST_CONCURRENCY),
            client.stream(
                "GET",
                parsed,
                headers={"User-Agent": USER_AGENT, "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9"},
                follow_redirects=False,
            ) as response,
        ):
            if response.is_redirect and (location := response.headers.get("location")):
                current = urljoin(str(parsed), location)
                continue
            media, charset = _content_type(response)
            if types is not None and response.is_success:
                if not media:
                    raise PageNotRead("it has no Content-Type")
                if media not in types:
                    raise PageNotRead(f"it is {media}, not a web page")
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > cap:
                    raise PageNotRead(f"it is {int(declared):,} bytes, over page_bytes ({cap:,})")
            body = bytearray()
            cut = False
            if response.is_success:
                async for chunk in response.aiter_bytes():
                    body.extend(chunk)
                    if len(body) > cap:  # one byte past the cap says there is more: stop reading
                        cut = True
                        del body[cap:]
                        break
            return Fetched(str(parsed), response.status_code, media, charset, bytes(body), cut)
    raise PageNotRead(f"more than {MAX_REDIRECTS} redirects")


def decode(fetched: Fetched) -> str:
    """The body as text: the charset of the Content-Type, else of the HTML's meta tag, else UTF-8
    (undecodable bytes replaced)."""
    charset = fetched.charset
    if charset is None and fetched.content_type != "text/plain":
        match = _META_CHARSET.search(fetched.body[:4096])
        charset = match.group(1).decode("ascii") if match else None
    try:
        codec = codecs.lookup(charset).name if charset else "utf-8"
    except LookupError:
        codec = "utf-8"
    return fetched.body.decode(codec, errors="replace")


def require_trafilatura(who: str) -> None:
    """ConfigError naming the install command when trafilatura, which reads the pages, is missing
    (:func:`factcheck.webpage.require_trafilatura`, named for ``who``)."""
    from factcheck.webpage import require_trafilatura as required

    try:
        required()
    except ConfigError as exc:
        raise ConfigError(f"{who} (read_pages): {exc}") from None


def extract(text: str, content_type: str) -> tuple[str, str, str | None]:
    """The main text of a page (one paragraph a line), its title and its date (``YYYY-MM-DD``, as the page
    states it): for HTML the one HTML reader, :func:`factcheck.webpage.html_page` (trafilatura, with
    menus, banners and footers dropped); plain text is its own main text."""
    if content_type == "text/plain":
        return text.strip(), "", None
    from factcheck.webpage import html_page

    main, title, date = html_page(text)
    return main.strip(), title or "", date


def _heading(line: str) -> bool:
    """A line that reads as a heading or a menu, not prose: marked as one (``## Side effects``), or
    short with no sentence end."""
    return line.startswith("#") or (
        len(line.split()) < HEADING_WORDS and not line.rstrip().endswith((".", "!", "?", '"', "\u201d", ")", ":"))
    )


def passages_of(text: str, title: str = "") -> list[str]:
    """The page's text as passages of at most :data:`SENTENCES_PER_PASSAGE` sentences, never across a
    paragraph (one a line) and cut near :data:`PASSAGE_CHARS`. Headings (and the title) are no passages:
    short as they are, BM25 would rank them above the paragraph that says the thing."""
    passages: list[str] = []
    for paragraph in text.splitlines():
        if not paragraph.strip() or paragraph.strip() == title.strip() or _heading(paragraph):
            continue
        group: list[str] = []
        for sentence in split_sentences(paragraph):
            if group and (len(group) == SENTENCES_PER_PASSAGE or len(" ".join([*group, sentence])) > PASSAGE_CHARS):
                passages.append(" ".join(group))
                group = []
            group.append(sentence[:PASSAGE_CHARS])
        if group:
            passages.append(" ".join(group))
    return passages


def select_passages(passages: Sequence[str], queries: Sequence[str], k: int = PASSAGES_PER_PAGE) -> list[str]:
    """The ``k`` passages that bear most on the claim (``queries``: its text, then its search queries), best
    first: hybrid ranking over the page's own passages (:func:`factcheck.ranking.rank_passages`, BM25 and
    meaning fused). A passage that neither shares a word with the claim nor comes close to it in meaning is
    never chosen."""
    if k <= 0:
        return []
    return [passages[i] for i in rank_passages(passages, queries)[:k]]


# robots.txt as a loop read it a moment ago, per (origin, allow_hosts): claims in flight share one request.
_robots: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, tuple[str, ...]], tuple[float, asyncio.Task[dict[str, Any]]]]
] = weakref.WeakKeyDictionary()


class PageReader:
    """Reads pages for one claim's results: one guarded client, robots.txt, the cache, the options."""

    def __init__(self, options: PageOptions, client: httpx.AsyncClient, guard: GuardedBackend) -> None:
        self.options = options
        self.client = client
        self.guard = guard

    async def robots(self, origin: httpx.URL) -> dict[str, Any]:
        """The host's robots.txt as the cache keeps it: ``{"text": ...}`` (an answer of 4xx reads as no
        rules), or ``{"unavailable": why}`` (an absence: nothing is read from a host until it answers)."""
        key = f"{origin.scheme}://{origin.host}:{origin.port or (443 if origin.scheme == 'https' else 80)}"
        memo = _robots.setdefault(asyncio.get_running_loop(), {})
        now = time.monotonic()
        ident = (key, tuple(sorted(self.options.allow_hosts)))
        entry = memo.get(ident)
        if entry is None or entry[0] < now:
            if len(memo) > 1000:
                memo.clear()

            async def compute() -> dict[str, Any]:
                try:
                    async with asyncio.timeout(self.options.page_timeout_s):
                        got = await fetch(self.client, f"{key}/robots.txt", ROBOTS_BYTES, guard=self.guard)
                except PageNotRead as exc:
                    return {"unavailable": f"its robots.txt cannot be read: {exc}"}
                except TimeoutError:
                    return {"unavailable": f"no robots.txt within page_timeout_s ({self.options.page_timeout_s:g}s)"}
                except Exception as exc:  # a network error, or the client of a claim now done
                    return {"unavailable": f"its robots.txt cannot be read ({type(exc).__name__})"}
                if 400 <= got.status < 500:
                    return {"text": ""}  # no robots.txt: no rules (RFC 9309)
                if not 200 <= got.status < 300:
                    return {"unavailable": f"its robots.txt answered HTTP {got.status}"}
                return {"text": got.body.decode("utf-8", errors="replace")}

            task = asyncio.ensure_future(
                cached(
                    kind="robots",
                    version=ROBOTS_VERSION,
                    request={"origin": key, "allow_hosts": list(ident[1])},
                    compute=compute,
                    absent=lambda record: "unavailable" in record,
                )
            )
            entry = memo[ident] = (now + ROBOTS_MEMO_S, task)
        record = await asyncio.shield(entry[1])
        if "unavailable" in record and memo.get(ident) is entry:
            del memo[ident]  # the next claim asks again
        return record

    async def allowed(self, url: httpx.URL) -> None:
        """PageNotRead when the host's robots.txt keeps us from ``url``."""
        record = await self.robots(url)
        if "unavailable" in record:
            raise PageNotRead(str(record["unavailable"]))
        parser = RobotFileParser()
        parser.parse(str(record.get("text", "")).splitlines())
        if not parser.can_fetch(USER_AGENT, str(url)):
            raise PageNotRead("its robots.txt disallows it")

    async def page(self, url: str) -> dict[str, Any]:
        """The page as the cache keeps it: ``{"url", "title", "date", "text", "cut"}``, or ``{"failure": why}``
        (an absence)."""
        options = self.options

        async def compute() -> dict[str, Any]:
            try:
                async with asyncio.timeout(options.page_timeout_s):
                    got = await fetch(
                        self.client,
                        url,
                        options.page_bytes,
                        types=READABLE_TYPES,
                        guard=self.guard,
                        before_hop=self.allowed,
                    )
                if not 200 <= got.status < 300:
                    raise PageNotRead(f"it answered HTTP {got.status}")
                text, title, date = await asyncio.to_thread(extract, decode(got), got.content_type)
            except PageNotRead as exc:
                return {"failure": str(exc)}
            except TimeoutError:
                return {"failure": f"no whole page within page_timeout_s ({options.page_timeout_s:g}s)"}
            except httpx.HTTPError as exc:
                return {"failure": f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__}
            if not text:
                return {"failure": "no main text could be extracted"}
            return {"url": got.url, "title": title, "date": date, "text": text, "cut": got.cut}

        request = {"url": url, "page_bytes": options.page_bytes, "allow_hosts": sorted(options.allow_hosts)}
        return await cached(
            kind="page", version=PAGE_VERSION, request=request, compute=compute, absent=lambda r: "failure" in r
        )


def _note(url: str, why: str) -> None:
    record_note(f"page {url} not read: {why}")


async def _passages_for(reader: PageReader, result: Evidence, queries: Sequence[str]) -> list[Evidence]:
    assert result.url is not None
    try:
        record = await reader.page(result.url)
    except Exception as exc:  # a page never costs the claim its snippet
        _note(result.url, f"{type(exc).__name__}: {exc}")
        return []
    if "failure" in record:
        _note(result.url, str(record["failure"]))
        return []
    if record.get("cut"):
        record_note(f"page {result.url} read only in part: cut at page_bytes ({reader.options.page_bytes:,} bytes)")
    chosen = await asyncio.to_thread(
        select_passages, passages_of(str(record["text"]), str(record.get("title") or "")), queries
    )
    if not chosen:
        _note(result.url, "no passage of it bears on the claim")
        return []
    now = datetime.now(UTC).isoformat(timespec="seconds")
    date = record.get("date")
    return [
        Evidence(
            source=result.source,
            text=text,
            title=str(record.get("title") or "") or result.title,
            url=str(record["url"]),
            retrieved_at=now,
            published_at=evidence_date(date, now) if isinstance(date, str) else None,
        )
        for text in chosen
        if text != result.text
    ]


async def page_evidence(
    evidence: Sequence[Evidence], organic: Collection[Evidence], queries: Sequence[str], options: PageOptions
) -> list[Evidence]:
    """``evidence`` with, before each of its first ``options.read_pages`` organic results (those in
    ``organic`` with a URL), the passages of that result's page that bear on the claim. Pages are read
    concurrently.

    ``queries``: the claim's text and its search queries, to choose passages by. A page that cannot be
    read leaves its snippet alone, and a note says why.
    """
    chosen = [e for e in evidence if e.url is not None and e in organic][: options.read_pages]
    if not chosen:
        return list(evidence)
    transport = GuardedTransport(options.allow_hosts)
    async with httpx.AsyncClient(
        transport=transport,
        trust_env=False,  # an environment proxy would connect for us, past the address check
        timeout=httpx.Timeout(options.page_timeout_s),
        follow_redirects=False,
    ) as client:
        reader = PageReader(options, client, transport.guard)
        found = await asyncio.gather(*(_passages_for(reader, r, queries) for r in chosen))
    extra = {id(r): passages for r, passages in zip(chosen, found, strict=True)}
    merged: list[Evidence] = []
    for item in evidence:
        merged.extend(extra.get(id(item), ()))
        merged.append(item)
    return merged


__all__ = [
    "CONNECTOR",
    "BlockedAddress",
    "GuardedBackend",
    "GuardedTransport",
    "PageNotRead",
    "PageOptions",
    "PageReader",
    "blocked_address",
    "decode",
    "extract",
    "fetch",
    "page_evidence",
    "passages_of",
    "require_trafilatura",
    "resolve_host",
    "select_passages",
]
