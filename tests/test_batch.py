"""factcheck batch: inputs, the output file, resuming, budgets, deduplication and the summary."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from factcheck.agent import Agent
from factcheck.batch.engine import Budget, LocalEngine, Tally, run_batch
from factcheck.batch.inputs import CsvInput, Document, FolderInput, JsonlInput, open_input
from factcheck.batch.output import prepare_output, settings_path
from factcheck.batch.progress import spending
from factcheck.build import build_checker
from factcheck.cli import cli
from factcheck.errors import ConfigError, InputError
from factcheck.net import REFUSALS, Service, digest, use_service
from factcheck.resume import AppendLog, read_done
from factcheck.testing import ScriptedVerifier, StaticSource
from factcheck.testing.llm import FakeChatServer
from factcheck.text import plural
from factcheck.types import Assessment, Claim, Evidence
from factcheck.webpage import html_main_text
from tests.fakes import FakeServer, Request, Response

CORPUS = [
    {"id": "p1", "title": "Statins", "text": "Statins lower LDL cholesterol in adults with high cholesterol."},
    {"id": "p2", "title": "Smoking", "text": "Smoking causes lung cancer and heart disease."},
    {"id": "p3", "title": "Aspirin", "text": "Aspirin lowers the risk of heart attacks in adults."},
]
ARTICLE = """<html><head><title>Heart health</title><script>alert("x")</script></head><body>
<nav><a href="/">Home</a> | <a href="/about">About us</a> | <a href="/contact">Contact</a></nav>
<article><h1>What lowers the risk of heart attacks</h1>
<p>Aspirin lowers the risk of heart attacks in adults. Doctors have prescribed it for decades to patients
with a history of heart disease, and large trials over many years back this use.</p>
<p>Statins lower LDL cholesterol, which is another reason they are widely prescribed to older adults.</p>
</article><footer>Copyright 2024 Example Health Inc. All rights reserved.</footer></body></html>"""


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.output


def offline_config(folder: Path, **llm: str) -> Path:
    """A settings file with one agent, the corpus above and a fixed verifier: ``lexical``, or
    ``llm`` when ``llm`` settings (the fake model server's ``base_url``) are given."""
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(p) + "\n" for p in CORPUS))
    lines = [
        'profile = "offline"',
        "[agents.corpus]",
        'source = "corpus"',
        f'verifier = "{"llm" if llm else "lexical"}"',
        f"path = {json.dumps(str(corpus))}",
    ]
    if llm:
        lines += ["[llm]", 'model = "gpt-4o-mini"', *(f"{k} = {json.dumps(v)}" for k, v in llm.items())]
    config = folder / "factcheck.toml"
    config.write_text("\n".join(lines) + "\n")
    return config


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def mixed_folder(folder: Path) -> Path:
    docs = folder / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.txt").write_text("Statins lower LDL cholesterol. Smoking causes lung cancer.\n")
    (docs / "sub" / "b.md").write_text("# Note\n\nAspirin lowers the risk of heart attacks.\n")
    (docs / "c.html").write_text(ARTICLE)
    (docs / "bad.txt").write_bytes(b"caf\xe9 au lait\n")  # Latin-1, not UTF-8
    (docs / ".hidden.txt").write_text("Hidden files are skipped.\n")
    (docs / "image.png").write_bytes(b"\x89PNG")
    return docs


# ---- inputs ---------------------------------------------------------------------------------


def test_jsonl_input_keeps_extra_fields_as_meta_and_names_lines_without_id(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    rows = [{"id": 7, "text": "One.", "source": "x", "meta": {"a": 1}}, {"text": "Two."}, {"id": "t", "text": 3}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    source = open_input(path)
    assert isinstance(source, JsonlInput) and source.scan() == ["7", "2", "t"]
    docs = list(source.documents())
    assert docs[0] == Document("7", "One.", {"source": "x", "meta": {"a": 1}})
    assert docs[1].id == "2" and docs[1].error is None
    assert docs[2].error and "not a string" in docs[2].error
    assert [d.id for d in source.documents(skip={"7", "t"})] == ["2"]


def test_duplicate_ids_are_refused_before_any_work(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": "a", "text": "One."}\n{"id": "a", "text": "Two."}\n')
    with pytest.raises(InputError, match="'a' occurs more than once"):
        open_input(path).scan()


def test_csv_input_with_named_columns_and_gzip(tmp_path: Path) -> None:
    path = tmp_path / "in.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8", newline="") as handle:
        handle.write('key,body,lang\nk1,"Statins lower LDL, a lot.",en\nk2,Smoking causes lung cancer.,en\n')
    source = open_input(path, text_column="body", id_column="key")
    assert isinstance(source, CsvInput) and source.scan() == ["k1", "k2"]
    assert next(iter(source.documents())) == Document("k1", "Statins lower LDL, a lot.", {"lang": "en"})
    with pytest.raises(InputError, match=r"no column 'text' \(columns: key, body, lang\)"):
        open_input(path).scan()


def test_csv_without_id_column_uses_row_numbers(tmp_path: Path) -> None:
    path = tmp_path / "in.tsv"
    path.write_text("text\tlang\nOne.\ten\nTwo.\tfr\n")
    assert [(d.id, d.text, d.meta) for d in open_input(path).documents()] == [
        ("1", "One.", {"lang": "en"}),
        ("2", "Two.", {"lang": "fr"}),
    ]


def test_folder_input_reads_text_markdown_and_html_main_text(tmp_path: Path) -> None:
    source = open_input(mixed_folder(tmp_path))
    assert isinstance(source, FolderInput)
    assert source.scan() == ["a.txt", "bad.txt", "c.html", "sub/b.md"]
    docs = {d.id: d for d in source.documents()}
    html = docs["c.html"]
    assert "Aspirin lowers the risk of heart attacks in adults." in html.text
    assert "Copyright" not in html.text and "About us" not in html.text and "alert" not in html.text
    assert html.meta == {"path": "c.html", "title": "What lowers the risk of heart attacks"}  # trafilatura: the h1
    assert docs["bad.txt"].error == "bad.txt is not UTF-8 text"
    assert docs["sub/b.md"].text.startswith("# Note")


def test_a_folder_s_files_of_other_kinds_are_named_as_ignored(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Statins lower LDL cholesterol.")
    (docs / "paper.pdf").write_bytes(b"%PDF-1.4 ...")
    (docs / "notes.docx").write_bytes(b"PK...")
    (docs / "blob.bin").write_bytes(bytes(range(256)))
    (docs / ".hidden.pdf").write_bytes(b"%PDF-1.4")  # hidden: neither read nor named
    assert open_input(docs).ignored() == ["blob.bin", "notes.docx", "paper.pdf"]
    result = CliRunner().invoke(cli, ["batch", str(docs), "--out", str(tmp_path / "out.jsonl"), "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "warning: ignored 3 files not .txt, .md or .html: blob.bin, notes.docx, paper.pdf" in result.stderr
    assert "ignored files" in result.stdout and "paper.pdf" in result.stdout
    assert len(lines_of(tmp_path / "out.jsonl")) == 1


def test_html_without_trafilatura_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "trafilatura", None)  # as if not installed
    with pytest.raises(ConfigError, match=r"pip install '\.\[batch\]' in a checkout"):
        open_input(mixed_folder(tmp_path)).scan()
    with pytest.raises(ConfigError, match="trafilatura"):
        html_main_text(ARTICLE)


@pytest.mark.parametrize(
    ("dependency", "message"),
    [
        ("", "fc_absent_dependency is not installed (No module named 'fc_absent_dependency')"),
        (
            "raise ImportError('fc_split_dependency.clean is now a separate project')",
            "importing fc_split_dependency failed: fc_split_dependency.clean is now a separate project",
        ),
    ],
)
def test_an_installed_trafilatura_that_fails_to_import_names_what_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dependency: str, message: str
) -> None:
    # A trafilatura whose own import fails, as with lxml 5.2+ installed by a pip that drops lxml's extra.
    (tmp_path / "trafilatura").mkdir()
    name = "fc_split_dependency" if dependency else "fc_absent_dependency"
    (tmp_path / "trafilatura" / "__init__.py").write_text(f"import {name}\n")
    if dependency:
        (tmp_path / f"{name}.py").write_text(dependency + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "trafilatura", raising=False)
    with pytest.raises(ConfigError) as raised:
        html_main_text(ARTICLE)
    assert str(raised.value).startswith(
        "reading HTML pages needs trafilatura, which is installed but cannot be imported"
    )
    assert message in str(raised.value)
    assert "pip install" not in str(raised.value)  # installing the extra again would change nothing


def test_unknown_input_kind_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "in.xml").write_text("<a/>")
    with pytest.raises(InputError, match=r"give a \.jsonl, \.csv or \.tsv file, or a folder"):
        open_input(tmp_path / "in.xml")


# ---- the command ----------------------------------------------------------------------------


def test_batch_over_a_mixed_folder_writes_one_line_per_document(tmp_path: Path) -> None:
    config, out = offline_config(tmp_path), tmp_path / "out.jsonl"
    code, output = run("batch", mixed_folder(tmp_path), "--out", out, "--config", config, "--concurrency", "3")
    assert code == 0, output
    records = {r["id"]: r for r in lines_of(out)}
    assert sorted(records) == ["a.txt", "bad.txt", "c.html", "sub/b.md"]
    checked = records["a.txt"]
    assert checked["schema"] == "factcheck/1" and checked["meta"] == {"path": "a.txt"}
    assert [c["text"] for c in checked["claims"]] == ["Statins lower LDL cholesterol.", "Smoking causes lung cancer."]
    assert all(j["agent"] == "corpus" for c in checked["claims"] for j in c["judgments"])
    assert records["bad.txt"]["error"] == {"type": "InputError", "message": "bad.txt is not UTF-8 text"}
    assert records["bad.txt"]["claims"] == [] and records["bad.txt"]["label"] == "UNVERIFIED"
    assert "failed documents" in output and "InputError 1" in output
    assert "4 in the output of 4 in the input; 0 left" in output
    # The settings are recorded beside the output; a rerun has nothing to do.
    assert json.loads(settings_path(out).read_text())["agents"][0]["verifier"] == "lexical"
    code, output = run("batch", tmp_path / "docs", "--out", out, "--config", config)
    assert code == 0 and "0 checked" in output and len(lines_of(out)) == 4


def test_files_that_share_a_name_are_told_apart_by_their_path_in_every_output(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    for folder in ("a", "b"):
        (docs / folder).mkdir(parents=True)
        (docs / folder / "notes.txt").write_bytes(b"caf\xe9 au lait\n")  # Latin-1, not UTF-8
        (docs / folder / "page.html").write_text("<html><body></body></html>")  # no main text
    config, out, report = offline_config(tmp_path), tmp_path / "out.jsonl", tmp_path / "report.html"
    code, output = run("batch", docs, "--out", out, "--config", config, "--report", report)
    assert code == 0, output
    said = {r["id"]: r["error"]["message"] for r in lines_of(out)}
    assert said == {
        "a/notes.txt": "a/notes.txt is not UTF-8 text",
        "b/notes.txt": "b/notes.txt is not UTF-8 text",
        "a/page.html": "no main text found in the HTML page a/page.html",
        "b/page.html": "no main text found in the HTML page b/page.html",
    }
    page = report.read_text(encoding="utf-8")
    assert all(message in page for message in said.values())
    assert "InputError 4" in output


def test_failed_documents_are_redone_with_retry_failed_only(tmp_path: Path) -> None:
    config, out = offline_config(tmp_path), tmp_path / "out.jsonl"
    docs = mixed_folder(tmp_path)
    assert run("batch", docs, "--out", out, "--config", config, "-q")[0] == 0
    first = {r["id"]: r for r in lines_of(out)}
    (docs / "bad.txt").write_text("Smoking causes lung cancer.\n")  # fixed
    assert run("batch", docs, "--out", out, "--config", config, "-q")[0] == 0
    assert "error" in next(r for r in lines_of(out) if r["id"] == "bad.txt")  # not redone without the flag
    code, output = run("batch", docs, "--out", out, "--config", config, "--retry-failed")
    assert code == 0, output
    records = lines_of(out)
    assert sorted(r["id"] for r in records) == sorted(first)  # still one line per id
    fixed = next(r for r in records if r["id"] == "bad.txt")
    assert "error" not in fixed and fixed["claims"][0]["text"] == "Smoking causes lung cancer."
    assert "1 checked" in output
    assert next(r for r in records if r["id"] == "a.txt") == first["a.txt"]  # the others were not redone


def test_resuming_with_other_settings_is_refused(tmp_path: Path) -> None:
    config, out = offline_config(tmp_path), tmp_path / "out.jsonl"
    docs = mixed_folder(tmp_path)
    assert run("batch", docs, "--out", out, "--config", config, "-q")[0] == 0
    code, output = run("batch", docs, "--out", out, "--config", config, "--scorer", "average")
    assert code == 1
    assert "recorded with other settings (changed: scorer" in output and "use another --out" in output


def test_o_is_a_scorer_option_and_the_output_file_is_out_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config, docs = offline_config(tmp_path), mixed_folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, output = run("batch", docs, "-o", "out.jsonl", "-o", "bounds=reference", "--config", config)
    assert code == 2 and "to write to out.jsonl, use --out out.jsonl" in output
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "bounds=reference").exists()
    code, output = run("batch", docs, "--out", "out.jsonl", "-o", "bounds=reference", "--config", config, "-q")
    assert code == 0, output
    checked = [r for r in lines_of(tmp_path / "out.jsonl") if "error" not in r]
    assert checked and {r["scorer_options"]["bounds"] for r in checked} == {"reference"}


def test_an_output_file_batch_did_not_write_is_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "precious.jsonl"
    out.write_text('{"id": "mine"}')  # no trailing newline: resuming would cut it off
    code, output = run("batch", mixed_folder(tmp_path), "--out", out, "--config", offline_config(tmp_path))
    assert code == 1 and "was not written by factcheck batch" in output
    assert out.read_text() == '{"id": "mine"}'


def test_a_half_written_last_line_is_cut_off_and_that_document_redone(tmp_path: Path) -> None:
    config, out = offline_config(tmp_path), tmp_path / "out.jsonl"
    docs = mixed_folder(tmp_path)
    assert run("batch", docs, "--out", out, "--config", config, "-q")[0] == 0
    whole = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(whole[:-1]) + whole[-1][:40])  # as if killed in the middle of the last write
    assert run("batch", docs, "--out", out, "--config", config, "-q")[0] == 0
    records = lines_of(out)
    assert sorted(r["id"] for r in records) == ["a.txt", "bad.txt", "c.html", "sub/b.md"]


def test_prepare_output_keeps_the_newest_line_per_id(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    settings_path(out).write_text("{}")
    out.write_text('{"id": "a", "v": 1}\n{"id": "b", "error": {"type": "X"}}\n{"id": "a", "v": 2}\n')
    assert prepare_output(out, retry_failed=False) == {"a", "b"}
    assert lines_of(out) == [{"id": "b", "error": {"type": "X"}}, {"id": "a", "v": 2}]
    assert prepare_output(out, retry_failed=True) == {"a"}
    assert lines_of(out) == [{"id": "a", "v": 2}]


def test_read_done_and_append_log_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "log.jsonl"
    with AppendLog(out) as log:
        log.write({"id": "x", "text": "caf\u00e9"})
        log.write({"id": 2})
    out.write_bytes(out.read_bytes() + b'{"id": "half')
    assert read_done(out) == {"x", "2"}
    assert out.read_bytes().endswith(b'{"id": 2}\n')


def test_missing_ray_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    code, output = run("batch", mixed_folder(tmp_path), "--out", tmp_path / "out.jsonl", "--engine", "ray")
    assert code == 1 and "pip install '.[ray]' in a checkout" in output
    assert not (tmp_path / "out.jsonl").exists()


# ---- budgets, spending and deduplication ----------------------------------------------------


@pytest.fixture
def fake_llm() -> Iterator[FakeChatServer]:
    with FakeChatServer() as server:
        yield server


def test_max_llm_calls_stops_cleanly_and_a_rerun_finishes(tmp_path: Path, fake_llm: FakeChatServer) -> None:
    config, out = offline_config(tmp_path, base_url=fake_llm.url), tmp_path / "out.jsonl"
    path = tmp_path / "in.jsonl"
    sentences = ["Statins lower LDL cholesterol.", "Smoking causes lung cancer.", "Aspirin is never useful."]
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": s}) + "\n" for i, s in enumerate(sentences * 2)))
    args = ("batch", path, "--out", out, "--config", config, "--no-cache", "--concurrency", "1")
    code, output = run(*args, "--max-llm-calls", "2")
    assert code == 3, output
    assert [r["id"] for r in lines_of(out)] == ["d0", "d1"] and fake_llm.requests == 2
    assert "--max-llm-calls 2 reached (2 calls made)" in output and "4 documents left" in output
    code, output = run(*args, "--max-cost", "1")
    assert code == 0, output
    records = lines_of(out)
    assert [r["id"] for r in records] == [f"d{i}" for i in range(6)] and fake_llm.requests == 6
    # The fake rules "never" FALSE without a passage that says so: a weak FALSE claim, the text not FALSE.
    assert records[2]["claims"][0]["label"] == "FALSE" and records[2]["label"] == "UNVERIFIED"
    assert records[0]["usage"]["cost_usd"] > 0


def test_max_cost_counts_dollars_from_usage(tmp_path: Path, fake_llm: FakeChatServer) -> None:
    config, out = offline_config(tmp_path, base_url=fake_llm.url), tmp_path / "out.jsonl"
    path = tmp_path / "in.jsonl"
    path.write_text(
        "".join(json.dumps({"id": i, "text": f"Statins lower LDL by {i} percent."}) + "\n" for i in range(5))
    )
    # gpt-4o-mini: 100 prompt + 20 completion tokens = $0.000027 a call; 0.00005 allows two
    code, output = run("batch", path, "--out", out, "--config", config, "--concurrency", "1", "--max-cost", "0.00005")
    assert code == 3 and len(lines_of(out)) == 2 and "3 documents left" in output


@dataclass(frozen=True)
class CountingVerifier(ScriptedVerifier):
    """A scripted verifier that counts the claims it judged, across copies of itself."""

    name: str = "counting"
    seen: tuple[list[str], ...] = ([],)

    async def judge(self, claim: Claim, evidence: Any) -> Assessment:
        self.seen[0].append(claim.text)
        await asyncio.sleep(0.05)  # long enough for the duplicate document to arrive while this one is in flight
        return await super().judge(claim, evidence)


def test_identical_documents_in_flight_are_checked_once(tmp_path: Path) -> None:
    verifier = CountingVerifier()
    checker = build_checker(agents=[Agent("a", StaticSource(), verifier)], cache={"enabled": False})
    docs = [Document("1", "Statins lower LDL cholesterol."), Document("2", "Statins lower LDL cholesterol.")]
    out = tmp_path / "out.jsonl"
    with AppendLog(out) as log:
        result = asyncio.run(run_batch(iter(docs), log, LocalEngine(checker), concurrency=2))
    assert verifier.seen[0] == ["Statins lower LDL cholesterol."]
    first, second = sorted(lines_of(out), key=lambda r: r["id"])
    assert first["claims"] == second["claims"] and first["label"] == second["label"] == "TRUE"
    assert second["usage"]["cache_hits"] == {"document": 1}
    assert "same text as document '1'" in second["usage"]["notes"][0]
    assert result.tally.documents == 2 and result.tally.cache_hit_rate == 0.5


def test_budget_is_checked_before_each_document_starts() -> None:
    tally = Tally(llm_calls=5, cost_usd=0.2)
    assert Budget(max_llm_calls=5).exhausted(tally) == "--max-llm-calls 5 reached (5 calls made)"
    assert Budget(max_cost_usd=0.25).exhausted(tally) is None
    assert Budget(max_cost_usd=0.2).exhausted(tally) == "--max-cost 0.2 reached ($0.2000 spent)"
    assert Budget().exhausted(tally) is None


def test_progress_line_shows_rate_cache_and_cost() -> None:
    tally = Tally(documents=4, llm_calls=6, cost_usd=0.0123, cache_hits=1, cache_misses=3)
    text = spending(tally)
    assert "cache 25%" in text and "6 LLM calls" in text and "$0.0123" in text and "docs/s" in text
    assert "cache -" in spending(Tally())


def test_a_failing_source_shows_in_the_summary_and_does_not_stop_the_batch(tmp_path: Path) -> None:
    checker = build_checker(
        agents=[
            Agent("good", StaticSource(), ScriptedVerifier()),
            Agent("down", StaticSource(name="flaky", fail="service unavailable"), ScriptedVerifier()),
        ],
        cache={"enabled": False},
    )
    docs = [Document(str(i), f"Claim number {i} is true.") for i in range(3)] + [Document("e", "   ")]
    out = tmp_path / "out.jsonl"
    with AppendLog(out) as log:
        asyncio.run(run_batch(iter(docs), log, LocalEngine(checker), concurrency=2))
    from factcheck.batch.progress import summarise

    summary = summarise(out)
    assert log.written == 4  # what Ctrl-C reports as kept: counted by the log, as each line lands
    assert summary.documents == 4 and summary.failed == 1 and summary.failures == {"InputError": 1}
    assert summary.component_errors == {"source:flaky": 3} and summary.abstentions == {"down": 3}
    assert summary.labels == {"TRUE": 3}


def test_evidence_shapes_are_kept_whole_in_the_output(tmp_path: Path) -> None:
    source = StaticSource(passages=("Passage with <b>markup</b>.",), url="https://example.org/x?a=1&b=2")
    checker = build_checker(agents=[Agent("a", source, ScriptedVerifier())], cache={"enabled": False})
    out = tmp_path / "out.jsonl"
    with AppendLog(out) as log:
        asyncio.run(run_batch(iter([Document("1", "Water boils at 100 C.", {"k": [1]})]), log, LocalEngine(checker)))
    (record,) = lines_of(out)
    evidence = Evidence.from_dict(record["claims"][0]["judgments"][0]["evidence"][0])
    assert evidence.text == "Passage with <b>markup</b>." and evidence.url == "https://example.org/x?a=1&b=2"
    assert record["meta"] == {"k": [1]} and next(iter(record)) == "id"


def test_a_claim_repeated_across_the_corpus_is_judged_once(tmp_path: Path) -> None:
    config, out = offline_config(tmp_path), tmp_path / "out.jsonl"
    path = tmp_path / "in.jsonl"
    texts = ["Statins lower LDL cholesterol.", "statins lower  LDL cholesterol", "Smoking causes lung cancer."]
    texts.append("Smoking causes lung cancer. Statins lower LDL cholesterol.")
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)))
    args = ("batch", path, "--out", out, "--config", config, "--cache", tmp_path / "cache.sqlite", "-q")
    assert run(*args, "--concurrency", "1")[0] == 0
    usages = [r["usage"] for r in lines_of(out)]
    assert sum(u["calls"].get("verifier:lexical", 0) for u in usages) == 2  # 5 claims, 2 distinct
    assert sum(u["cache_hits"].get("judgment", 0) for u in usages) == 3
    by_id = {r["id"]: r for r in lines_of(out)}
    assert by_id["1"]["claims"][0]["judgments"] == by_id["0"]["claims"][0]["judgments"]


@dataclass(frozen=True)
class MisconfiguredVerifier(ScriptedVerifier):
    """A verifier whose setup is wrong: every document would fail the same way."""

    name: str = "misconfigured"

    async def prepare(self) -> None:
        raise ConfigError("misconfigured: model file missing")


def test_a_broken_setup_stops_the_batch_instead_of_failing_every_document(tmp_path: Path) -> None:
    checker = build_checker(agents=[Agent("a", StaticSource(), MisconfiguredVerifier())], cache={"enabled": False})
    out = tmp_path / "out.jsonl"
    docs = [Document(str(i), f"Claim {i} holds.") for i in range(5)]
    with AppendLog(out) as log, pytest.raises(ConfigError, match="model file missing"):
        asyncio.run(run_batch(iter(docs), log, LocalEngine(checker), concurrency=2))
    assert out.read_text() == ""


def test_each_document_is_checked_as_of_its_own_date(tmp_path: Path) -> None:
    rows = [
        {"id": "iso", "text": "Unemployment fell last year.", "date": "2014-05-10"},
        {"id": "google", "text": "Unemployment fell last year.", "date": "Mar 3, 2021"},  # same text, other date
        {"id": "year", "text": "Statins lower LDL cholesterol.", "as_of": 2012},
        {"id": "none", "text": "Statins lower LDL cholesterol."},
        {"id": "bad", "text": "Statins lower LDL cholesterol.", "date": "around the election"},
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    code, output = run("batch", source, "--out", out, "--config", offline_config(tmp_path), "-q")
    assert code == 0, output
    lines = {r["id"]: r for r in lines_of(out)}
    for key, written, last_year in (("iso", "2014-05-10", "2013-01-01"), ("google", "2021-03-03", "2020-01-01")):
        assert lines[key]["as_of"].startswith(written) and lines[key]["claims"][0]["time"]["start"] == last_year
    assert lines["year"]["as_of"].startswith("2012-12-31")
    assert lines["none"]["as_of"][:4] >= "2026"  # no date: as of the check
    assert "not a date" in lines["bad"]["error"]["message"] and lines["bad"]["claims"] == []  # not checked


def test_an_html_page_is_dated_by_its_metadata_never_by_its_copyright_line(tmp_path: Path) -> None:
    from factcheck.webpage import html_page

    assert html_page(ARTICLE)[2] is None  # "Copyright 2024" is no publication date
    dated = ARTICLE.replace("<head>", '<head><meta property="article:published_time" content="2014-05-10T08:00:00Z">')
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "old.html").write_text(dated)
    [doc] = open_input(tmp_path / "docs").documents()
    assert doc.meta["date"] == "2014-05-10"


def test_an_html_pages_headings_are_marked_and_never_checked_as_claims() -> None:
    from factcheck.extractors.sentence import SentenceExtractor
    from factcheck.webpage import html_page

    page = (
        "<html><head><title>Statins</title></head><body><article>"
        "<h1>Statins and cholesterol in adults</h1>"
        "<p>Statins lower LDL cholesterol in most adults who take them daily.</p>"
        "<h2>Side effects of statins in adults</h2>"
        "<p>Muscle pain is the side effect reported most often in the large trials.</p>"
        "</article></body></html>"
    )
    text = html_page(page)[0]
    assert "# Statins and cholesterol in adults" in text and "## Side effects of statins in adults" in text
    found = SentenceExtractor().extraction(text)
    assert [(s.text, s.rule) for s in found.skipped] == [
        ("# Statins and cholesterol in adults", "heading"),
        ("## Side effects of statins in adults", "heading"),
    ]
    assert len(found.claims) == 2


# ---- budgets over searches, and what went out (issue 24, item 4) -----------------------------


def search_config(folder: Path, serper: str, wikipedia: str, verifier: str = "lexical", **llm: str) -> Path:
    """Two search agents, Serper and MediaWiki (at the fake servers' URLs), judged by ``verifier``."""
    lines = ['profile = "offline"']
    agents = (("web", "serper", "base_url", serper), ("wiki", "wikipedia", "api_url", wikipedia))
    for name, source, option, url in agents:
        lines += [f"[agents.{name}]", f'source = "{source}"', f'verifier = "{verifier}"']
        lines.append(f"{option} = {json.dumps(url)}")
    if llm:
        lines += ["[llm]", 'model = "gpt-4o-mini"', *(f"{k} = {json.dumps(v)}" for k, v in llm.items())]
    config = folder / "search.toml"
    config.write_text("\n".join(lines) + "\n")
    return config


def serper_answer(request: Request) -> Response:
    query = request.json()["q"]
    return Response({"organic": [{"title": query, "snippet": query, "link": "https://example.org/" + query[:5]}]})


@pytest.fixture(scope="module")
def running_fakes() -> Iterator[tuple[FakeServer, FakeServer]]:
    # One pair for the module: stopping a server takes half a second (serve_forever's poll interval).
    with FakeServer() as serper, FakeServer() as wiki:
        yield serper, wiki


@pytest.fixture
def search_fakes(
    running_fakes: tuple[FakeServer, FakeServer], monkeypatch: pytest.MonkeyPatch
) -> tuple[FakeServer, FakeServer]:
    """A fake Serper (one organic result per query) and a fake MediaWiki (no page found), with the Serper
    key set and nothing remembered as refused or unreachable."""
    serper, wiki = running_fakes
    for server in running_fakes:
        server.requests.clear()
        server.queued.clear()
    serper.route("POST", "/search", serper_answer)
    wiki.route("GET", "/w/api.php", lambda request: Response({"batchcomplete": True, "query": {}}))
    monkeypatch.setenv("SERPER_API_KEY", "test-serper-key-0123456789")
    REFUSALS.clear()
    REFUSALS.clear()
    return serper, wiki


def test_max_searches_stops_searches_and_the_summary_counts_what_went_out(
    tmp_path: Path, search_fakes: tuple[FakeServer, FakeServer]
) -> None:
    path, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    texts = ["Statins lower LDL cholesterol.", "Smoking causes lung cancer.", "Aspirin lowers heart attacks."]
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    serper, wiki = search_fakes
    config = search_config(tmp_path, serper.url, f"{wiki.url}/w/api.php")
    code, output = run("batch", path, "--out", out, "--config", config, "--no-cache", "--max-searches", "3")
    sent_serper, sent_wiki = len(serper.requests), len(wiki.requests)
    assert code == 3, output
    assert sent_serper + sent_wiki <= 3  # no request past the budget
    assert "--max-searches 3 reached (3 search requests sent)" in output
    # What went out, counted from the requests as each was sent, documents cut short included: what the fakes
    # received (a request cancelled on its way, by a sibling query refused, is counted: it may have arrived).
    counted = re.search(r"3 search requests \(serper (\d+), wikipedia (\d+)\)", output)
    assert counted is not None, output
    assert int(counted[1]) >= sent_serper and int(counted[2]) == sent_wiki
    assert len(lines_of(out)) < 3


def test_a_reached_llm_budget_stops_the_searches_of_the_checks_in_flight(
    tmp_path: Path, search_fakes: tuple[FakeServer, FakeServer], fake_llm: FakeChatServer
) -> None:
    path, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    path.write_text(
        json.dumps({"id": "a", "text": "Statins lower LDL cholesterol."})
        + "\n"
        + json.dumps({"id": "b", "text": "Smoking causes lung cancer."})
        + "\n"
    )
    serper, wiki = search_fakes

    def busy_for_smoking(request: Request) -> Response:
        # The second document's search is answered "busy, try again" once the first document's one LLM
        # call has been made: its retry would be sent with the budget spent.
        if "Smoking" in request.json()["q"]:
            deadline = time.monotonic() + 5
            while not fake_llm.requests and time.monotonic() < deadline:
                time.sleep(0.01)
            return Response({"message": "busy"}, status=503, headers={"Retry-After": "0.1"})
        return serper_answer(request)

    serper.route("POST", "/search", busy_for_smoking)
    # The key counts as accepted already: else the first search holds the others back until it is answered.
    REFUSALS.accept(("serper", serper.url, digest(os.environ["SERPER_API_KEY"])))
    config = search_config(tmp_path, serper.url, f"{wiki.url}/w/api.php", verifier="llm", base_url=fake_llm.url)
    args = ("batch", path, "--out", out, "--config", config, "--no-cache", "--concurrency", "2")
    code, output = run(*args, "--max-llm-calls", "1")
    smoking = [r for r in serper.requests if "Smoking" in r.json()["q"]]
    sent = len(serper.requests) + len(wiki.requests)
    assert code == 3, output
    assert fake_llm.requests == 1
    assert len(smoking) <= 1  # no retry sent with the budget reached (nor the first, if it came later)
    by_service = f"(serper {len(serper.requests)}, wikipedia {len(wiki.requests)})"
    assert f"1 LLM call, {plural(sent, 'search request')} {by_service}" in " ".join(output.split())


def batch_to_an_unreachable_host(tmp_path: Path, wiki: FakeServer, documents: int) -> tuple[int, str, Path, str]:
    """A batch of ``documents`` texts whose Serper is a loopback port nothing listens on: its exit status,
    output and output file, and how the unreachable host is named."""
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    path, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    texts = [f"Statins lower LDL cholesterol by {i} percent." for i in range(documents)]
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)))
    config = search_config(tmp_path, "https://google.serper.dev", f"{wiki.url}/w/api.php")
    code, output = run(
        "batch", path, "--out", out, "--config", config, "--no-cache", "--serper-url", f"http://127.0.0.1:{port}"
    )
    return code, output, out, f"serper: cannot reach 127.0.0.1:{port} (connection refused)"


def test_a_batch_aimed_at_an_unreachable_host_says_so_once_and_does_not_grind(
    tmp_path: Path, search_fakes: tuple[FakeServer, FakeServer]
) -> None:
    started = time.monotonic()
    code, output, out, named = batch_to_an_unreachable_host(tmp_path, search_fakes[1], 8)
    assert code == 0, output
    assert time.monotonic() - started < 30  # no retries, no time-outs: each document is done at once
    assert " ".join(output.split()).count(f"warning: {named}") == 1  # said once, not once per document
    records = lines_of(out)
    assert len(records) == 8
    for record in records:
        web = next(j for j in record["claims"][0]["judgments"] if j["agent"] == "web")
        assert named in web["error"] and web["factuality"] is None


def test_an_unreachable_host_is_said_from_the_memory_of_the_service_in_use(
    tmp_path: Path, search_fakes: tuple[FakeServer, FakeServer]
) -> None:
    # A custom service keeps its own memory of refusals: the default service's knows nothing of this host.
    custom = Service()
    with use_service(custom):
        code, output, _, named = batch_to_an_unreachable_host(tmp_path, search_fakes[1], 3)
    assert code == 0, output
    assert any(named in reason for reason in custom.refusals.met()) and not REFUSALS.met()
    assert " ".join(output.split()).count(f"warning: {named}") == 1
