"""``--report report.html``: one self-contained HTML page of a batch's results.

A sortable table of documents (click a column heading), each row opening onto
its claims: label, score, every agent's verdict with its rationale, and links
to the evidence. No external asset, font or script is loaded.

Everything shown comes from documents and evidence that may be hostile, so
every piece of text is HTML-escaped, links are kept only when they are plain
``http``/``https`` URLs, and a Content-Security-Policy allows no script or
style but the page's own (by hash): even a bug in the escaping could not run
injected code.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Iterator
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from factcheck.batch.output import is_failure
from factcheck.batch.progress import Summary
from factcheck.errors import FactcheckError
from factcheck.jsonl import atomic_writer, read_records
from factcheck.report import judged_by_line, time_phrase
from factcheck.scoring import REPLAYED_NOTE
from factcheck.types import ClaimTime, JudgedBy, decided

EVIDENCE_CHARS = 300  # of each passage; the output file has them whole
TEXT_CHARS = 2000

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 6px; text-align: left; vertical-align: top; }
#docs > thead th { cursor: pointer; background: #f4f4f4; position: sticky; top: 0; user-select: none; }
#docs > thead th[aria-sort=ascending]::after { content: " \\25B2"; }
#docs > thead th[aria-sort=descending]::after { content: " \\25BC"; }
.l-TRUE { color: #17662b; font-weight: 600; } .l-FALSE { color: #a11; font-weight: 600; }
.l-PARTLY { color: #8a5a00; font-weight: 600; } .l-UNVERIFIED, .abstain { color: #777; }
.error { color: #a11; } .time, .dated { color: #555; } .time-note, .note { color: #8a5a00; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
details > summary { cursor: pointer; } .claim { margin: .6em 0 .9em; } .claim table td { font-size: 13px; }
blockquote { margin: .3em 0 .6em 1em; color: #444; white-space: pre-wrap; }
.deliberation { margin: .4em 0 0; font-size: 13px; } .deliberation ol { margin: .2em 0; padding-left: 1.6em; }
.deliberation .why, .deliberation .stopped, .deliberation .detail { color: #555; } .replayed { color: #8a5a00; }
#filter { margin: .5em 0; padding: 4px; width: 20em; }
""".strip()

SCRIPT = """
(function () {
  var table = document.getElementById("docs");
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  function key(row, i) {
    var cell = row.cells[i];
    var v = cell.getAttribute("data-v");
    if (v !== null) { var n = parseFloat(v); return isNaN(n) ? -Infinity : n; }
    return cell.textContent.toLowerCase();
  }
  Array.prototype.forEach.call(heads, function (th, i) {
    th.addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a, i), y = key(b, i);
        return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  document.getElementById("filter").addEventListener("input", function (e) {
    var q = e.target.value.toLowerCase();
    Array.prototype.forEach.call(body.rows, function (r) {
      r.hidden = q !== "" && r.textContent.toLowerCase().indexOf(q) < 0;
    });
  });
})();
""".strip()


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


CSP = f"default-src 'none'; style-src {_hash(STYLE)}; script-src {_hash(SCRIPT)}; img-src 'none'; form-action 'none'"


def safe_url(url: object) -> str | None:
    """``url`` if it is an absolute http(s) URL (never ``javascript:`` or ``data:``), else ``None``."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return url.strip() if parts.scheme in ("http", "https") and parts.netloc else None


def _label_class(label: object) -> str:
    return "l-" + str(label).split()[0]


def _number(value: object, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) and not isinstance(value, bool) else ""


def _evidence(items: Iterable[dict[str, Any]]) -> str:
    links = []
    for item in items:
        title = escape(str(item.get("title") or item.get("source") or "evidence"))
        url = safe_url(item.get("url"))
        text = str(item.get("text") or "")
        snippet = escape(text[:EVIDENCE_CHARS] + ("..." if len(text) > EVIDENCE_CHARS else ""))
        head = f'<a href="{escape(url)}" rel="noopener noreferrer nofollow">{title}</a>' if url else title
        dated = item.get("published_at")
        if dated:
            head += f' <span class="dated">(dated {escape(str(dated)[:10])})</span>'
        if item.get("time_note"):
            head += f' <span class="time-note">of another time: {escape(str(item["time_note"]))}</span>'
        links.append(f"<li>{head}: <span>{snippet}</span></li>")
    return f"<ul>{''.join(links)}</ul>" if links else ""


def _verdict(judgment: dict[str, Any]) -> str:
    factuality = judgment.get("factuality")
    if factuality is None:
        reason = judgment.get("error") or judgment.get("rationale") or ""
        return f'<span class="abstain">abstained</span> {escape(str(reason))}'
    label = "TRUE" if factuality else "FALSE"
    return f'<span class="l-{label}">{label}</span> {_number(judgment.get("confidence"), 2)}'


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _clip(text: object, length: int = EVIDENCE_CHARS) -> str:
    flat = " ".join(str(text or "").split())
    return escape(flat if len(flat) <= length else flat[: length - 3] + "...")


def _step(step: dict[str, Any]) -> str:
    head = f"<b>{escape(str(step.get('action') or ''))}</b>"
    if step.get("role"):
        head += f" · {escape(str(step['role']))}"
    if step.get("actor"):
        head += f' <span class="detail">({escape(str(step["actor"]))})</span>'
    judgment = _dict(step.get("judgment"))
    if judgment:
        head += f": {_verdict(judgment)}"
    if step.get("applied") is False:
        head += ' <span class="detail">not applied: less sure than the answer it would overturn</span>'
    elif step.get("replaces"):
        whose = "its" if step["replaces"] == step.get("actor") else f"{step['replaces']}'s"
        head += f' <span class="detail">in place of {escape(str(whose))} first answer</span>'
    calls = _dict(step.get("cost")).get("calls")
    if isinstance(calls, int) and not isinstance(calls, bool) and calls:
        head += f' <span class="detail">· {calls} call{"" if calls == 1 else "s"}</span>'
    lines = []
    if judgment.get("rationale"):
        lines.append(f'<span class="detail">{_clip(judgment["rationale"])}</span>')
    critique = _dict(step.get("critique"))
    if critique.get("weak_point"):
        lines.append(f"weak point: {_clip(critique['weak_point'])}")
    counter = [item for item in _list(critique.get("counter")) if isinstance(item, dict)]
    if counter:
        lines.append(f"counter-evidence: {_evidence(counter[:1])}")
    for hint in _list(critique.get("hints")):
        lines.append(f'hint: <span class="detail">{_clip(hint)}</span>')
    query = step.get("query") or critique.get("query")
    if query:
        lines.append(f'query: <span class="detail">{_clip(query)}</span>')
    found = _list(step.get("evidence"))
    if found and not judgment:
        lines.append(f'<span class="detail">found {len(found)} passage{"" if len(found) == 1 else "s"}</span>')
    relied = [str(i) for i in _list(step.get("relied_on"))]
    if relied:
        lines.append(f'<span class="detail">relied on: {escape(", ".join(relied))}</span>')
    if step.get("error"):
        lines.append(f'<span class="error">error: {escape(str(step["error"]))}</span>')
    return f"<li>{head}{''.join(f'<br>{line}' for line in lines)}</li>"


def _deliberation(claim: dict[str, Any]) -> str:
    """How the agents settled a claim (``claim.deliberation``), collapsed; nothing when it has none."""
    record = _dict(claim.get("deliberation"))
    if not record:
        return ""
    policy = escape(str(record.get("policy") or ""))
    if record.get("gated") is None:
        return f'<p class="deliberation detail">deliberation ({policy}): settled in the first round</p>'
    steps = [step for step in _list(record.get("steps")) if isinstance(step, dict)]
    replayed = ' <span class="replayed">(recorded steps kept, not re-run)</span>' if record.get("replayed") else ""
    body = f'<p class="why">why: {escape(str(record["gated"]))}</p>'
    body += f"<ol>{''.join(_step(step) for step in steps)}</ol>" if steps else '<p class="why">no step was taken</p>'
    if record.get("stopped"):
        body += f'<p class="stopped">stopped: {escape(str(record["stopped"]))}</p>'
    summary = f"how the agents settled it ({policy}): {len(steps)} step{'' if len(steps) == 1 else 's'}{replayed}"
    return f'<details class="deliberation"><summary>{summary}</summary>{body}</details>'


def _claims(record: dict[str, Any]) -> str:
    parts = []
    for claim in record.get("claims") or []:
        rows = "".join(
            f"<tr><td>{escape(str(j.get('agent')))}</td><td>{_verdict(j)}</td>"
            f"<td>{escape(str(j.get('rationale') or ''))}</td><td>{_evidence(j.get('evidence') or [])}</td></tr>"
            for j in claim.get("judgments") or []
        )
        label = claim.get("label")
        extra = ""
        time = ClaimTime.from_dict(claim["time"]) if isinstance(claim.get("time"), dict) else None
        if time is not None:
            extra += f' <span class="time">(speaks of {escape(time_phrase(time))})</span>'
        deliberated = _dict(claim.get("deliberation")).get("gated") is not None
        for note in claim.get("notes") or []:
            if deliberated and note == REPLAYED_NOTE:
                continue  # the deliberation's summary says it
            extra += f'<p class="note">note: {escape(str(note))}</p>'
        parts.append(
            f'<div class="claim"><span class="{_label_class(label)}">{escape(str(label))}</span> '
            f"{_number(claim.get('score'))} {escape(str(claim.get('text')))}{extra}"
            f"<table><thead><tr><th>agent</th><th>verdict</th><th>rationale</th><th>evidence</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>{_deliberation(claim)}</div>"
        )
    return "".join(parts)


def _decided(record: dict[str, Any], claims: list[Any]) -> str:
    """What the label stands on: ", weak" and "2 of 7 claims verified, 1 sentence skipped" (empty for a
    failed document)."""
    skipped = record.get("skipped") or []
    if is_failure(record) or not (claims or skipped):
        return ""
    verified = sum(1 for c in claims if isinstance(c, dict) and c.get("score") is not None)
    weak = ", weak" if record.get("strength") == "weak" else ""
    counts = decided(verified, len(claims), len(skipped) if isinstance(skipped, list) else 0)
    return f"{weak}<br><small>{escape(counts)}</small>"


def document_row(record: dict[str, Any], judged: bool = False) -> str:
    """One ``<tr>`` of the documents table; with ``judged``, its details say who judged it (a page of
    documents judged by different settings)."""
    claims = record.get("claims") or []
    labels = [str(c.get("label")) for c in claims]
    raw_usage = record.get("usage")
    usage = raw_usage if isinstance(raw_usage, dict) else {}
    text = str(record.get("text") or "")
    meta = record.get("meta") or {}
    failed = is_failure(record)
    label = "FAILED" if failed else str(record.get("label"))
    error = record.get("error") if failed else None
    details = [f"<blockquote>{escape(text[:TEXT_CHARS] + ('...' if len(text) > TEXT_CHARS else ''))}</blockquote>"]
    if error:
        details.append(f'<p class="error">{escape(json.dumps(error, ensure_ascii=False))}</p>')
    if meta:
        details.append(f"<p>meta: <code>{escape(json.dumps(meta, ensure_ascii=False))}</code></p>")
    judged_by = _judges([record]) if judged else []
    details += [judged_by_html(one) for one in judged_by]
    raw_notes = usage.get("notes")
    for note in raw_notes if isinstance(raw_notes, list) else []:
        details.append(f'<p class="note">note: {escape(str(note))}</p>')
    details.append(_claims(record))
    cells = [
        f"<td>{escape(str(record.get('id')))}</td>",
        f'<td class="{"error" if failed else _label_class(label)}">{escape(label)}{_decided(record, claims)}</td>',
        f'<td class="num" data-v="{_number(record.get("score"), 6)}">{_number(record.get("score"))}</td>',
        f'<td class="num" data-v="{len(claims)}">{len(claims)}</td>',
        *(f'<td class="num" data-v="{labels.count(k)}">{labels.count(k)}</td>' for k in ("TRUE", "FALSE")),
        f'<td class="num" data-v="{labels.count("UNVERIFIED")}">{labels.count("UNVERIFIED")}</td>',
        f'<td class="num" data-v="{usage.get("llm_calls", 0)}">{escape(str(usage.get("llm_calls", 0)))}</td>',
        f"<td><details><summary>{len(claims)} claims</summary>{''.join(details)}</details></td>",
    ]
    return f'<tr class="doc">{"".join(cells)}</tr>\n'


def judged_by_html(judged: JudgedBy) -> str:
    """Who judged and what a reader should be warned of, as the text report says it (``Judged by: ...``
    and ``caution: ...``)."""
    html = f'<p class="judged">{escape(judged_by_line(judged).plain)}</p>'
    if judged.caution:
        html += f'<p class="note caution">caution: {escape(judged.caution)}</p>'
    return html


def _judges(records: Iterable[dict[str, Any]]) -> list[JudgedBy]:
    """The distinct ``judged_by`` of ``records``, in the order met (one, unless a resumed run changed it)."""
    found: list[JudgedBy] = []
    for record in records:
        try:
            judged = JudgedBy.from_dict(record.get("judged_by"))
        except FactcheckError:
            continue  # an unreadable one is the row's problem, not the page's
        if judged is not None and judged not in found:
            found.append(judged)
    return found


def _page(
    records: Iterable[dict[str, Any]], summary: Summary, title: str, judges: list[JudgedBy] | None = None
) -> Iterator[str]:
    yield (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style></head><body>\n"
        f"<h1>{escape(title)}</h1>\n"
    )
    labels = ", ".join(f"{escape(k)} {v}" for k, v in sorted(summary.labels.items())) or "none"
    yield (
        f"<p>{summary.documents} documents ({summary.failed} failed); labels: {labels}; "
        f"{summary.claims} claims; {summary.llm_calls} LLM calls; ${summary.cost_usd:.4f}.</p>\n"
        + "".join(judged_by_html(judged) + "\n" for judged in judges or ())
        + '<input id="filter" type="search" placeholder="filter rows" aria-label="filter rows">\n'
        '<table id="docs"><thead><tr><th>id</th><th>label</th><th>score</th><th>claims</th><th>true</th>'
        "<th>false</th><th>unverified</th><th>LLM calls</th><th>details</th></tr></thead><tbody>\n"
    )
    for record in records:
        yield document_row(record, judged=len(judges or ()) > 1)
    yield f"</tbody></table>\n<script>{SCRIPT}</script>\n</body></html>\n"


def write_report(results: Path, report: Path, summary: Summary) -> None:
    """Write the HTML page for the output file ``results`` to ``report`` (atomically, streaming)."""
    judges = _judges(record for _, record in read_records(results))  # a first pass: they head the page
    records = (record for _, record in read_records(results))
    with atomic_writer(report) as handle:
        handle.writelines(_page(records, summary, f"factcheck batch: {results.name}", judges))
