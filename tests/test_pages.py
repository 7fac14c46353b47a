"""Reading the pages behind search results (factcheck.pages through the web search sources), against
local servers only: the fake search API and the pages it links to on 127.0.0.1 (tests/data/pages), and
raw socket servers for bodies that stream, drip or must never be connected to.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpcore
import pytest

from factcheck import Claim
from factcheck import pages as pages_module
from factcheck.cache import Cache
from factcheck.context import using
from factcheck.errors import ConfigError
from factcheck.pages import blocked_address, passages_of, select_passages
from factcheck.sources.websearch import SerpAPISource, SerperSource, WebSearchSource
from factcheck.types import Evidence
from factcheck.usage import UsageRecorder
from tests.fakes import FakeServer, InFlight, Request, Response

PAGES = Path(__file__).resolve().parent / "data" / "pages"
KEY = "sk-test-0123456789abcdef0123456789abcdef"
CLAIM = "The Lisbon metro carried 173 million passengers in 2023."
QUERY = "Lisbon metro passengers 2023"
HTML = {"Content-Type": "text/html; charset=utf-8"}


def page(name: str) -> bytes:
    return (PAGES / name).read_bytes()


def html(name: str, headers: dict[str, str] | None = None) -> Response:
    return Response(raw=page(name), headers=headers or HTML)


def redirect(location: str, status: int = 302) -> Response:
    return Response(raw=b"", status=status, headers={"Location": location, "Content-Type": "text/html"})


def serper_answer(links: list[str]) -> dict[str, Any]:
    """A Serper answer whose organic results link to ``links``, each with a snippet of its own."""
    return {
        "searchParameters": {"q": QUERY, "type": "search", "engine": "google"},
        "organic": [
            {
                "title": f"Result {i}",
                "link": link,
                "snippet": f"Snippet {i}: Lisbon metro news and passenger figures.",
                "position": i,
            }
            for i, link in enumerate(links, 1)
        ],
    }


@pytest.fixture(scope="module")
def shared_server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


@pytest.fixture
def server(shared_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> FakeServer:
    monkeypatch.setenv("SERPER_API_KEY", KEY)
    shared_server.requests.clear()
    shared_server.queued.clear()
    shared_server.routes.clear()
    return shared_server


def results(server: FakeServer, *paths_or_urls: str) -> None:
    """Make the fake search API answer with these results (paths are on ``server``)."""
    links = [p if "://" in p else f"{server.url}{p}" for p in paths_or_urls]
    server.route("POST", "/search", lambda request: Response(serper_answer(links)))


def source(server: FakeServer, **options: Any) -> SerperSource:
    options.setdefault("read_pages", 2)
    options.setdefault("allow_hosts", ("127.0.0.1",))
    return SerperSource(base_url=server.url, **options)


def check(chosen: WebSearchSource, claim: str = CLAIM) -> tuple[list[Evidence], UsageRecorder]:
    recorder = UsageRecorder()
    with using(usage=recorder):
        evidence = asyncio.run(chosen.retrieve(Claim("c1", claim, queries=(QUERY,))))
    return evidence, recorder


def page_calls(server: FakeServer) -> list[Request]:
    return [r for r in server.requests if r.method == "GET"]


class Recording(httpcore.AsyncNetworkBackend):
    """The backend under the guard, recording every connection actually attempted."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self.inner = inner
        self.connects: list[tuple[str, int]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.connects.append((host, port))
        return await self.inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise AssertionError("no Unix socket is ever opened")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    recording = Recording(pages_module.CONNECTOR)
    monkeypatch.setattr(pages_module, "CONNECTOR", recording)
    return recording.connects


class Listener:
    """A listening socket that nobody should connect to: :meth:`accepted` says whether anyone did."""

    def __init__(self, host: str) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((host, 0))
        self.sock.listen(8)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def accepted(self) -> bool:
        try:
            connection, _ = self.sock.accept()
        except BlockingIOError:
            return False
        connection.close()
        return True

    def close(self) -> None:
        self.sock.close()


class StreamingServer:
    """A raw HTTP server on 127.0.0.1 that answers every page with ``total`` bytes of HTML sent
    ``chunk`` bytes at a time, ``pause_s`` apart, and counts the bytes it got out (``sent``).
    robots.txt is answered 404. ``content_length``: declare the length (else the body ends at close)."""

    def __init__(
        self,
        total: int,
        *,
        chunk: int = 64 * 1024,
        pause_s: float = 0.0,
        content_length: bool = False,
        content_type: str = "text/html; charset=utf-8",
    ) -> None:
        self.total, self.chunk, self.pause_s = total, chunk, pause_s
        self.content_length, self.content_type = content_length, content_type
        self.sent = 0
        self.done = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                connection, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            head = b""
            while b"\r\n\r\n" not in head:
                data = connection.recv(4096)
                if not data:
                    return
                head += data
            path = head.split(b" ", 2)[1]
            if path == b"/robots.txt":
                connection.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            length = f"Content-Length: {self.total}\r\n" if self.content_length else ""
            header = f"HTTP/1.1 200 OK\r\nContent-Type: {self.content_type}\r\n{length}Connection: close\r\n\r\n"
            paragraph = b"<p>The Lisbon metro carried 173 million passengers in 2023, its busiest year so far.</p>\n"
            filler = paragraph * (self.chunk // len(paragraph) + 1)
            data = b"<html><head><title>Metro figures</title></head><body><article>\n" + filler
            try:
                connection.sendall(header.encode())
                while self.sent < self.total and not self._stop.is_set():
                    piece = data[: min(self.chunk, self.total - self.sent)]
                    connection.sendall(piece)
                    self.sent += len(piece)
                    data = filler
                    if self.pause_s:
                        time.sleep(self.pause_s)
            except OSError:
                pass  # the client stopped reading and closed: what the cap and the time-out are for
            finally:
                self.done.set()

    def close(self) -> None:
        self._stop.set()
        self.sock.close()


# --- choosing passages -----------------------------------------------------------------------


def test_the_relevant_paragraph_deep_in_a_news_page_comes_before_its_snippet(server: FakeServer) -> None:
    server.route("GET", "/old-article", lambda r: redirect("/transport/lisbon-metro-record", 301))
    server.route("GET", "/transport/lisbon-metro-record", lambda r: html("news_article.html"))
    results(server, "/old-article")
    evidence, recorder = check(source(server))
    first, snippet = evidence[0], evidence[-1]
    # The paragraph that says it, not the cookie banner, the menu, the headline or the first paragraphs.
    assert "173 million passengers in 2023" in first.text
    assert "cookies" not in " ".join(e.text for e in evidence)
    assert first.title == "Lisbon metro sets a passenger record"
    assert first.url == f"{server.url}/transport/lisbon-metro-record"  # the final URL, after the redirect
    assert first.published_at is not None and first.published_at.startswith("2024-02-14")
    assert first.source == "serper"
    # At most two passages of the page, then the result's own snippet, which is kept.
    assert 2 <= len(evidence) <= 3
    assert snippet.text.startswith("Snippet 1") and snippet.url == f"{server.url}/old-article"
    assert not recorder.notes
    # A page request is not a search request.
    assert recorder.search_calls == 1


def test_select_passages_ranks_by_the_claim_and_skips_headings() -> None:
    text = "Metro news\nThe metro opened in 1959 in the city.\nThe metro carried 173 million passengers in 2023."
    passages = passages_of(text, title="Metro news")
    assert passages == ["The metro opened in 1959 in the city.", "The metro carried 173 million passengers in 2023."]
    assert select_passages(passages, [CLAIM])[0] == passages[1]
    assert select_passages(passages, ["zebra giraffe"]) == []


def test_select_passages_finds_by_meaning_a_passage_that_shares_no_word_with_the_claim() -> None:
    # Hybrid ranking: "acetylsalicylic acid" and "myocardial infarction" are the claim's aspirin and heart attack.
    passages = [
        "We use cookies to improve your experience. Accept all cookies to continue.",
        "Daily acetylsalicylic acid cut the rate of myocardial infarction by a third in the trial.",
        "Subscribe to our newsletter for the latest headlines.",
    ]
    claim = "Aspirin lowers the risk of heart attacks."
    assert select_passages(passages, [claim], k=1) == [passages[1]]
    assert select_passages(passages, [claim], k=3) == [passages[1]]  # boilerplate is never close enough


def test_read_pages_zero_sends_no_page_request(server: FakeServer) -> None:
    server.route("GET", "/article", lambda r: html("news_article.html"))
    results(server, "/article")
    evidence, _ = check(source(server, read_pages=0))
    assert [e.text[:9] for e in evidence] == ["Snippet 1"]
    assert page_calls(server) == []  # neither the page nor its robots.txt


def test_only_the_first_read_pages_results_are_read(server: FakeServer) -> None:
    for path in ("/a", "/b", "/c"):
        server.route("GET", path, lambda r: html("news_article.html"))
    results(server, "/a", "/b", "/c")
    evidence, _ = check(source(server, read_pages=1))
    assert [r.path for r in page_calls(server)] == ["/robots.txt", "/a"]
    assert "173 million" in evidence[0].text and [e.text[:9] for e in evidence[-3:]] == [
        "Snippet 1",
        "Snippet 2",
        "Snippet 3",
    ]


# --- SSRF ------------------------------------------------------------------------------------


def note_of(recorder: UsageRecorder) -> str:
    notes = [n for n in recorder.notes if n.startswith("page ")]
    assert len(notes) == 1, recorder.notes
    return notes[0]


def test_a_redirect_chain_to_the_cloud_metadata_address_is_never_connected_to(
    server: FakeServer, connects: list[tuple[str, int]]
) -> None:
    server.route("GET", "/go", lambda r: redirect("/go-on"))
    server.route("GET", "/go-on", lambda r: redirect("http://169.254.169.254/latest/meta-data/iam/"))
    results(server, "/go")
    evidence, recorder = check(source(server))
    assert [e.text[:9] for e in evidence] == ["Snippet 1"]  # the snippet stays
    note = note_of(recorder)
    assert f"page {server.url}/go not read" in note
    assert "169.254.169.254 is a cloud metadata address" in note and "allow_hosts" in note
    assert [r.path for r in page_calls(server)] == ["/robots.txt", "/go", "/go-on"]  # the chain was followed
    port = int(server.url.rsplit(":", 1)[1])
    assert connects and set(connects) == {("127.0.0.1", port)}  # and nothing else was ever connected to


def test_a_redirect_to_a_private_address_is_never_connected_to(
    server: FakeServer, connects: list[tuple[str, int]]
) -> None:
    server.route("GET", "/moved", lambda r: redirect("http://10.0.0.1/admin", 301))
    results(server, "/moved")
    evidence, recorder = check(source(server))
    assert [e.text[:9] for e in evidence] == ["Snippet 1"]
    assert "its address 10.0.0.1 is private" in note_of(recorder)
    assert all(host == "127.0.0.1" for host, _ in connects)


def test_a_name_resolving_to_loopback_is_refused_when_only_127_0_0_1_is_allowed(
    server: FakeServer, connects: list[tuple[str, int]]
) -> None:
    listener = Listener("127.0.0.1")  # a real server there, that must see no connection
    try:
        server.route("GET", "/elsewhere", lambda r: redirect(f"http://localhost:{listener.port}/"))
        results(server, "/elsewhere", f"http://localhost:{listener.port}/direct")
        evidence, recorder = check(source(server))
        time.sleep(0.05)
        assert not listener.accepted()
    finally:
        listener.close()
    assert [e.text[:9] for e in evidence] == ["Snippet 1", "Snippet 2"]
    notes = [n for n in recorder.notes if n.startswith("page ")]
    assert len(notes) == 2 and all("is loopback" in n for n in notes)
    assert all(port != listener.port for _, port in connects)


def test_another_loopback_address_is_not_allowed_by_allowing_127_0_0_1(
    server: FakeServer, connects: list[tuple[str, int]]
) -> None:
    listener = Listener("127.0.0.2")
    try:
        results(server, f"http://127.0.0.2:{listener.port}/page")
        evidence, recorder = check(source(server))
        time.sleep(0.05)
        assert not listener.accepted()
    finally:
        listener.close()
    assert [e.text[:9] for e in evidence] == ["Snippet 1"]
    assert "its address 127.0.0.2 is loopback" in note_of(recorder)
    assert connects == []


def test_the_connection_goes_to_the_address_checked_not_to_a_second_lookup(
    server: FakeServer, connects: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    lookups: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        lookups.append(host)
        # A rebinding name: the first answer (checked) is the local server, any later one the metadata address.
        return ["127.0.0.1"] if len(lookups) == 1 else ["169.254.169.254"]

    monkeypatch.setattr(pages_module, "resolve_host", resolve)
    port = int(server.url.rsplit(":", 1)[1])
    server.route("GET", "/article", lambda r: html("news_article.html"))
    results(server, f"http://news.example:{port}/article")
    evidence, recorder = check(source(server, allow_hosts=()))
    # news.example is not allowed: the first lookup says 127.0.0.1, refused before any connection.
    assert "its address 127.0.0.1 is loopback" in note_of(recorder)
    assert connects == [] and [e.text[:9] for e in evidence] == ["Snippet 1"]

    lookups.clear()
    monkeypatch.setattr(pages_module, "resolve_host", lambda host, port: _answer(["127.0.0.1"]))
    evidence, recorder = check(source(server, allow_hosts=("news.example",)))
    assert "173 million" in evidence[0].text and not recorder.notes
    # Connected to the resolved number, never by the name (which a resolver could answer differently).
    assert connects and all(c == ("127.0.0.1", port) for c in connects)


async def _answer(addresses: list[str]) -> list[str]:
    return addresses


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("169.254.169.254", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("10.0.0.1", "private"),
        ("192.168.1.20", "private"),
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("240.0.0.1", "reserved"),
        ("100.64.0.1", "not a public address"),
        ("93.184.216.34", None),
        ("2606:4700:4700::1111", None),
    ],
)
def test_blocked_addresses(address: str, why: str | None) -> None:
    assert blocked_address(address) == why


def test_only_http_and_https_redirects_are_followed(server: FakeServer) -> None:
    server.route("GET", "/file", lambda r: redirect("file:///etc/passwd"))
    results(server, "/file")
    evidence, recorder = check(source(server))
    assert "only http and https" in note_of(recorder) and [e.text[:9] for e in evidence] == ["Snippet 1"]


# --- politeness and what is read ---------------------------------------------------------------


def test_a_huge_body_is_cut_at_the_cap_without_being_read_whole(server: FakeServer) -> None:
    big = StreamingServer(30 * 1024 * 1024)
    try:
        results(server, f"{big.url}/big")
        evidence, recorder = check(source(server, page_bytes=256 * 1024))
        assert big.done.wait(5)
    finally:
        big.close()
    assert big.sent < 15 * 1024 * 1024  # what the socket buffers took in, not 30 MB
    assert "173 million" in evidence[0].text  # what was read is used
    assert any("read only in part" in n for n in recorder.notes)


def test_a_declared_length_over_the_cap_is_not_read(server: FakeServer) -> None:
    big = StreamingServer(30 * 1024 * 1024, content_length=True)
    try:
        results(server, f"{big.url}/big")
        evidence, recorder = check(source(server, page_bytes=256 * 1024))
        assert big.done.wait(5)
    finally:
        big.close()
    assert big.sent < 15 * 1024 * 1024
    assert "over page_bytes" in note_of(recorder) and [e.text[:9] for e in evidence] == ["Snippet 1"]


def test_a_slow_drip_times_out_and_the_snippet_stays(server: FakeServer) -> None:
    drip = StreamingServer(100_000, chunk=16, pause_s=0.1)
    try:
        results(server, f"{drip.url}/drip")
        started = time.monotonic()
        evidence, recorder = check(source(server, page_timeout_s=0.5))
        elapsed = time.monotonic() - started
    finally:
        drip.close()
    assert elapsed < 3
    assert "no whole page within page_timeout_s (0.5s)" in note_of(recorder)
    assert [e.text[:9] for e in evidence] == ["Snippet 1"]


def test_a_pdf_is_skipped_with_a_note(server: FakeServer) -> None:
    server.route(
        "GET",
        "/report.pdf",
        lambda r: Response(raw=b"%PDF-1.7\n" + b"0" * 1000, headers={"Content-Type": "application/pdf"}),
    )
    results(server, "/report.pdf")
    evidence, recorder = check(source(server))
    assert "it is application/pdf, not a web page" in note_of(recorder)
    assert [e.text[:9] for e in evidence] == ["Snippet 1"]


def test_a_latin1_page_declared_in_its_meta_tag_decodes_right(server: FakeServer) -> None:
    # No charset in the header: only the page's own meta tag says ISO-8859-1.
    server.route("GET", "/padaria", lambda r: html("latin1_meta.html", {"Content-Type": "text/html"}))
    results(server, "/padaria")
    evidence, recorder = check(source(server), "A padaria São João vende três mil pães por dia.")
    assert "cerca de três mil pães por dia" in evidence[0].text
    assert evidence[0].title == "Padaria São João celebra 100 anos"
    assert not recorder.notes


def test_a_cookie_wall_yields_nothing_and_the_snippet_stays(server: FakeServer) -> None:
    server.route("GET", "/walled", lambda r: html("cookie_wall.html"))
    results(server, "/walled")
    evidence, recorder = check(source(server))
    assert [e.text[:9] for e in evidence] == ["Snippet 1"]
    assert "no passage of it bears on the claim" in note_of(recorder)


def test_an_http_error_leaves_the_snippet(server: FakeServer) -> None:
    server.route("GET", "/gone", lambda r: Response(raw=b"gone", status=410, headers={"Content-Type": "text/html"}))
    results(server, "/gone")
    evidence, recorder = check(source(server))
    assert "it answered HTTP 410" in note_of(recorder) and [e.text[:9] for e in evidence] == ["Snippet 1"]


def test_robots_txt_is_honoured_and_read_once_per_host(server: FakeServer) -> None:
    robots = b"User-agent: *\nDisallow: /private/\n"
    server.route("GET", "/robots.txt", lambda r: Response(raw=robots, headers={"Content-Type": "text/plain"}))
    server.route("GET", "/private/article", lambda r: html("news_article.html"))
    server.route("GET", "/public/article", lambda r: html("news_article.html"))
    results(server, "/private/article", "/public/article")
    evidence, recorder = check(source(server))
    paths = [r.path for r in page_calls(server)]
    assert "/private/article" not in paths and paths.count("/robots.txt") == 1 and "/public/article" in paths
    assert "its robots.txt disallows it" in note_of(recorder)
    assert all(r.headers.get("User-Agent", "").startswith("factcheck-agents/") for r in page_calls(server))
    # The first snippet alone, then the public page's passages before its own snippet.
    assert evidence[0].text.startswith("Snippet 1") and "173 million" in evidence[1].text
    assert evidence[-1].text.startswith("Snippet 2")


def test_the_page_cache_is_used_on_the_second_check(server: FakeServer, tmp_path: Path) -> None:
    server.route("GET", "/article", lambda r: html("news_article.html"))
    results(server, "/article")
    cache = Cache(tmp_path / "cache.sqlite")
    with using(cache=cache):
        first, _ = check(source(server))
        calls = len(page_calls(server))
        second, recorder = check(source(server))
    assert calls == 2  # robots.txt and the page
    assert len(page_calls(server)) == calls  # nothing fetched again
    assert recorder.cache_hits["page"] == 1
    assert [e.text for e in second] == [e.text for e in first] and "173 million" in second[0].text


def test_a_failed_page_is_cached_as_an_absence(server: FakeServer, tmp_path: Path) -> None:
    server.route("GET", "/gone", lambda r: Response(raw=b"", status=503, headers={"Content-Type": "text/html"}))
    results(server, "/gone")
    with using(cache=Cache(tmp_path / "cache.sqlite", absence_ttl_s=0)):
        check(source(server))
        check(source(server))
    assert [r.path for r in page_calls(server)].count("/gone") == 2  # expired at once: asked again


def test_read_pages_without_trafilatura_is_a_config_error_from_prepare(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "trafilatura", None)
    with pytest.raises(
        ConfigError, match=r"serper \(read_pages\): reading HTML pages needs trafilatura: pip install '\.\[batch\]'"
    ):
        asyncio.run(source(server).prepare())
    asyncio.run(source(server, read_pages=0).prepare())  # not needed when no page is read


def test_serpapi_reads_pages_too(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERPAPI_API_KEY", KEY)
    server.route("GET", "/article", lambda r: html("news_article.html"))
    organic = serper_answer([f"{server.url}/article"])["organic"]
    answer = {"search_metadata": {"status": "Success"}, "organic_results": organic}
    server.route("GET", "/search.json", lambda r: Response(answer))
    chosen = SerpAPISource(base_url=server.url, read_pages=1, allow_hosts=("127.0.0.1",))
    evidence, recorder = check(chosen)
    assert evidence[0].source == "serpapi" and "173 million" in evidence[0].text
    assert evidence[-1].text.startswith("Snippet 1") and recorder.search_calls == 1


def test_pages_are_read_concurrently_but_two_at_a_time_per_host(server: FakeServer) -> None:
    slow = InFlight(lambda r: html("news_article.html"), delay_s=0.2)
    for path in ("/p1", "/p2", "/p3", "/p4"):
        server.route("GET", path, slow)
    results(server, "/p1", "/p2", "/p3", "/p4")
    evidence, recorder = check(source(server, read_pages=4))
    assert slow.most == 2  # concurrent, and never more than two requests at once to one host
    assert sum("173 million" in e.text for e in evidence) == 4 and not recorder.notes


def test_a_long_page_is_ranked_by_meaning_only_among_its_best_by_words() -> None:
    from factcheck.ranking import rank_passages

    filler = [f"Section {i} describes the weather in another town." for i in range(60)]
    relevant = "Daily aspirin lowers the chance of a heart attack."
    synonym = "Acetylsalicylic acid cut myocardial infarctions by a third."  # no word in common with the claim
    passages = [*filler, relevant, synonym]
    claim = "Aspirin lowers the risk of heart attacks."
    assert rank_passages(passages, [claim])[0] == 60
    # The synonym passage shares no word, so on a page this long it is not among those embedded.
    assert 61 not in rank_passages(passages, [claim], pool=48)
    assert 61 in rank_passages(passages, [claim], pool=100)
