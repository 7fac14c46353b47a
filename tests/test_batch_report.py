"""factcheck batch --report: a self-contained page in which no piece of evidence can run code."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
from html.parser import HTMLParser
from pathlib import Path

from factcheck.batch.html import CSP, safe_url, write_report
from factcheck.batch.progress import summarise
from factcheck.types import Claim, ClaimVerdict, Evidence, Judgment, Label, TextVerdict
from tests.test_batch import lines_of, mixed_folder, offline_config, run

HOSTILE = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'


class Collector(HTMLParser):
    """Every start tag with its attributes, and the text of each <script>."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)


def hostile_output(tmp_path: Path) -> Path:
    evidence = (
        Evidence("web", f"Passage {HOSTILE}", title=f"Title {HOSTILE}", url="javascript:alert(1)"),
        Evidence("web", "A fine passage.", title="Fine", url="https://example.org/page?a=1&b=<2>"),
    )
    judgment = Judgment("web", True, 0.9, rationale=f"Because {HOSTILE}", evidence=evidence)
    claim = ClaimVerdict(Claim("c1", f"Claim {HOSTILE}"), (judgment,), score=0.95, label=Label.TRUE)
    verdict = TextVerdict(text=f"Text {HOSTILE}", claims=(claim,), score=0.95, label=Label.TRUE)
    out = tmp_path / "out.jsonl"
    records = [
        {"id": f"doc {HOSTILE}", **verdict.to_dict(), "meta": {"note": HOSTILE}},
        {
            "id": "z",
            **TextVerdict(text="", claims=()).to_dict(),
            "meta": {},
            "error": {"type": "X", "message": HOSTILE},
        },
    ]
    out.write_text("".join(json.dumps(r) + "\n" for r in records))
    return out


def hostile_report(tmp_path: Path) -> tuple[str, Collector]:
    """The HTML report of :func:`hostile_output`, as text and parsed."""
    out, report = hostile_output(tmp_path), tmp_path / "report.html"
    write_report(out, report, summarise(out))
    page = report.read_text(encoding="utf-8")
    parsed = Collector()
    parsed.feed(page)
    return page, parsed


def test_report_escapes_all_untrusted_text_and_drops_unsafe_links(tmp_path: Path) -> None:
    page, parsed = hostile_report(tmp_path)
    assert "<script>alert" not in page and "<img" not in page
    assert not [t for t, a in parsed.tags if t == "img" or any(name.startswith("on") for name in a)]
    assert page.count("&lt;script&gt;alert(&quot;pwned&quot;)") >= 6  # id, text, claim, rationale, title, meta, error
    assert len(parsed.scripts) == 1 and [t for t, _ in parsed.tags].count("script") == 1
    hrefs = [a.get("href") for t, a in parsed.tags if t == "a"]
    assert hrefs == ["https://example.org/page?a=1&b=<2>"]  # parsed back: the javascript: link is gone
    assert all(a.get("rel") == "noopener noreferrer nofollow" for t, a in parsed.tags if t == "a")


def test_report_is_self_contained_and_its_policy_allows_only_its_own_script(tmp_path: Path) -> None:
    page, parsed = hostile_report(tmp_path)
    assert not [
        a for t, a in parsed.tags if t in ("script", "img", "link", "iframe") and (a.get("src") or a.get("href"))
    ]
    assert "@import" not in page and "url(" not in page
    policy = next(a["content"] for t, a in parsed.tags if t == "meta" and a.get("http-equiv"))
    assert policy == CSP and "default-src 'none'" in policy
    digest = base64.b64encode(hashlib.sha256(parsed.scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy  # the page's script runs, nothing else can
    style = base64.b64encode(hashlib.sha256(parsed.styles[0].encode()).digest()).decode()
    assert f"style-src 'sha256-{style}'" in policy


def test_report_rows_are_sortable_with_numeric_keys(tmp_path: Path) -> None:
    config, out, report = offline_config(tmp_path), tmp_path / "out.jsonl", tmp_path / "r.html"
    code, output = run("batch", mixed_folder(tmp_path), "--out", out, "--config", config, "--report", report)
    assert code == 0, output
    page = report.read_text(encoding="utf-8")
    rows = re.findall(r'<tr class="doc"><td>([^<]*)</td>', page)
    assert sorted(rows) == sorted(r["id"] for r in lines_of(out))
    assert "FAILED" in page and "not UTF-8" in page  # the failed document is shown with its error
    scores = re.findall(r'<td class="num" data-v="([0-9.]+)">', page)
    assert scores and all(float(s) >= 0 for s in scores)
    assert 'addEventListener("click"' in page and "aria-sort" in page


def test_report_and_output_respect_the_umask(tmp_path: Path) -> None:
    config, out, report = offline_config(tmp_path), tmp_path / "out.jsonl", tmp_path / "r.html"
    old = os.umask(0o022)
    try:
        code, output = run("batch", mixed_folder(tmp_path), "--out", out, "--config", config, "-q", "--report", report)
    finally:
        os.umask(old)
    assert code == 0, output
    assert stat.S_IMODE(report.stat().st_mode) == 0o644  # as any file a program writes; not 0o600
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_safe_url_accepts_only_absolute_http_links() -> None:
    assert safe_url("https://en.wikipedia.org/wiki/X") == "https://en.wikipedia.org/wiki/X"
    assert safe_url(" http://a.b/c ") == "http://a.b/c"
    for bad in ("javascript:alert(1)", "JavaScript:x", "data:text/html,x", "/relative", "//host/x", None, 3, "http://"):
        assert safe_url(bad) is None


def test_report_shows_each_claims_time_its_passages_dates_marks_and_notes_as_text(tmp_path: Path) -> None:
    from factcheck.types import ClaimTime

    mark = f"dated 2024-03-01, more than a year after {HOSTILE}"
    evidence = (Evidence("web", "Then.", "Then", published_at="2014-05-01"),)
    evidence += (Evidence("web", "Now.", "Now", published_at="2024-03-01", time_note=mark),)
    time = ClaimTime("2014-05-10", "2014-05-10", f"currently {HOSTILE}", "present")
    judgment = Judgment("web", True, 0.9, evidence=evidence)
    claim = ClaimVerdict(Claim("c1", "Obama is currently the president.", time=time), (judgment,), 0.9, Label.TRUE)
    claim = ClaimVerdict(claim.claim, claim.judgments, 0.9, Label.TRUE, notes=(f"of another time {HOSTILE}",))
    out, report = tmp_path / "out.jsonl", tmp_path / "r.html"
    out.write_text(json.dumps({"id": "d", **TextVerdict("t", (claim,), 0.9, Label.TRUE).to_dict(), "meta": {}}) + "\n")
    write_report(out, report, summarise(out))
    page = report.read_text(encoding="utf-8")
    assert "(speaks of 2014-05-10 (&quot;currently &lt;script&gt;" in page
    assert "(dated 2014-05-01)" in page and "(dated 2024-03-01)" in page
    assert "of another time: dated 2024-03-01, more than a year after &lt;script&gt;" in page
    assert "note: of another time &lt;script&gt;" in page and "<script>alert" not in page


def test_the_label_cell_says_how_many_claims_it_stands_on_and_when_it_is_weak() -> None:
    from factcheck.batch.html import document_row

    sure, unknown = Claim("c1", "Smoking causes lung cancer."), Claim("c2", "Vaccines cause autism.")
    verdict = TextVerdict(
        text="Smoking causes lung cancer. Vaccines cause autism.",
        claims=(
            ClaimVerdict(sure, (Judgment("corpus", True, 0.9),), 0.95, Label.TRUE),
            ClaimVerdict(unknown, (Judgment("corpus", None),), None, Label.UNVERIFIED),
        ),
        score=0.95,
        label=Label.TRUE,
    )
    row = document_row({"id": "doc", **verdict.to_dict()})
    assert "TRUE, weak<br><small>1 of 2 claims verified</small>" in row


def test_the_report_says_who_judged_with_the_caution_and_each_documents_notes(tmp_path: Path) -> None:
    # What the text report shows beside the label (issue 40 item 7): "Judged by: ..." and "caution: ...".
    out, report = tmp_path / "out.jsonl", tmp_path / "report.html"
    judged = {
        "profile": "offline",
        "agents": [
            {
                "name": "corpus",
                "source": "corpus",
                "verifier": "nli",
                "corpus": "SciFact abstracts",
                "domain": "biomedical",
            }
        ],
        "caution": "Judged only against SciFact abstracts: <b>a claim</b> outside biomedicine ...",
    }
    verdict = TextVerdict(text="Paris is in France.", claims=(), label=Label.UNVERIFIED).to_dict()
    noted = {**verdict, "usage": {**verdict["usage"], "notes": ["the wikipedia agent was refused <x>"]}}
    out.write_text(
        json.dumps({"id": "a", **verdict, "judged_by": judged})
        + "\n"
        + json.dumps({"id": "b", **noted, "judged_by": judged})
        + "\n"
    )
    write_report(out, report, summarise(out))
    page = report.read_text()
    head = page.split('<table id="docs">')[0]
    assert head.count("Judged by: profile offline · corpus (corpus search, nli verifier) over SciFact abstracts") == 1
    assert "caution: Judged only against SciFact abstracts: &lt;b&gt;a claim&lt;/b&gt;" in head
    assert "note: the wikipedia agent was refused &lt;x&gt;" in page
    # Documents judged by other settings (a resumed run) each say who judged them.
    other = {**judged, "profile": "wiki", "caution": None}
    out.write_text(out.read_text() + json.dumps({"id": "c", **verdict, "judged_by": other}) + "\n")
    write_report(out, report, summarise(out))
    rows = report.read_text().split('<table id="docs">')[1]
    assert "Judged by: profile wiki" in rows and "Judged by: profile offline" in rows
