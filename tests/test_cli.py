"""The command line: check, score, plugins and error handling."""

import io
import json
import logging
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from rich.console import Console

import factcheck
from factcheck.cli import cli
from factcheck.report import render
from factcheck.testing import StaticSource, registered
from factcheck.types import TextVerdict, Usage

TWO_CLAIMS = (
    "Vitamin D supplementation reduces the risk of fractures in older adults. "
    "Aspirin does not lower the risk of colorectal cancer."
)


def run(*args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), input=input)
    return result.exit_code, result.output


def test_check_json_has_two_claims_with_corpus_evidence() -> None:
    code, output = run("check", TWO_CLAIMS, "--format", "json")
    assert code == 0, output
    data = json.loads(output)
    assert data["schema"] == "factcheck/1"
    assert data["label"] in {"TRUE", "FALSE", "PARTLY TRUE", "UNVERIFIED"}
    assert len(data["claims"]) == 2
    for claim in data["claims"]:
        assert TWO_CLAIMS[claim["span"][0] : claim["span"][1]] == claim["text"]
        (judgment,) = claim["judgments"]
        assert judgment["agent"] == "corpus"
        assert judgment["evidence"] and all(e["source"] == "corpus" for e in judgment["evidence"])


def test_check_reads_stdin_and_files(tmp_path: Path) -> None:
    code, output = run("check", "-", "--format", "json", input=TWO_CLAIMS)
    assert code == 0 and len(json.loads(output)["claims"]) == 2
    path = tmp_path / "post.txt"
    path.write_text(TWO_CLAIMS)
    code, output = run("check", "--file", str(path), "--format", "json")
    assert code == 0 and json.loads(output)["text"] == TWO_CLAIMS


def test_check_text_report_names_label_claims_and_evidence() -> None:
    code, output = run("check", TWO_CLAIMS)
    assert code == 0, output
    assert "scorer mafc" in output
    assert "corpus:" in output and "[c1]" in output and "[c2]" in output
    assert "↳" in output  # evidence titles


def test_check_with_a_users_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "tower.md").write_text("# Eiffel Tower\n\nThe Eiffel Tower in Paris was completed in 1889.\n")
    code, output = run(
        "check", "The Eiffel Tower in Paris was completed in 1889.", "--corpus", str(corpus), "--format", "json"
    )
    assert code == 0, output
    judgment = json.loads(output)["claims"][0]["judgments"][0]
    assert judgment["factuality"] is True
    assert judgment["evidence"][0]["title"] == "Eiffel Tower"
    assert judgment["evidence"][0]["url"].startswith("file://")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "   "], "empty text"),
        (["check"], "give a text to check"),
        (["check", "--file", "/nonexistent/post.txt"], "cannot read /nonexistent/post.txt"),
        (
            ["check", "Some claim here.", "--scorer", "nope"],
            "unknown scorer 'nope' (available: average, mafc, majority, normsum, pamas)",
        ),
        (["check", "Some claim here.", "--labels", "nope"], "unknown label rule 'nope'"),
        (["check", "Some claim here.", "-o", "colour=blue"], "unknown scoring option colour"),
        (["check", "Some claim here.", "-o", "bounds=wide"], "bounds must be 'natural' or 'reference'"),
        (["check", "Some claim here.", "--profile", "nope"], "unknown profile 'nope'"),
        (["check", "Some claim here.", "--source", "nope"], "unknown source 'nope'"),
        (["check", "Some claim here.", "--corpus", "/nonexistent"], "no such file or folder"),
    ],
)
def test_errors_are_one_clear_line(args: list[str], message: str) -> None:
    code, output = run(*args)
    assert code == 1
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert lines[0].startswith("Error: ") and message in lines[0]


def test_raise_errors_env_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTCHECK_RAISE_ERRORS", "1")
    result = CliRunner().invoke(cli, ["check", "  "])
    assert result.exit_code == 1
    assert type(result.exception).__name__ == "InputError"


def test_score_rescoring_keeps_order_and_extra_fields(tmp_path: Path) -> None:
    lines = [
        {
            "id": "a",
            "gold": "TRUE",
            "text": "t1",
            "claims": [
                {"id": "c1", "text": "t1", "judgments": [{"agent": "x", "factuality": True, "confidence": 1.0}]}
            ],
        },
        {
            "id": "b",
            "text": "t2",
            "claims": [
                {"id": "c1", "text": "t2", "judgments": [{"agent": "x", "factuality": None, "error": "timeout"}]}
            ],
        },
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    out = tmp_path / "out.jsonl"
    code, output = run("score", str(path), "--scorer", "normsum", "--out", str(out))
    assert code == 0, output
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [s["id"] for s in scored] == ["a", "b"] and scored[0]["gold"] == "TRUE"
    assert scored[0]["scorer"] == "normsum" and scored[0]["score"] == pytest.approx(0.75)
    assert scored[1]["label"] == "UNVERIFIED" and scored[1]["score"] is None


@pytest.mark.parametrize("content", ["", "\n\n"])
def test_score_of_nothing_says_so(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(content)
    code, output = run("score", str(path), "--out", str(tmp_path / "out.jsonl"))
    assert code == 1, output
    assert output == f"Error: {path} holds no recorded check: there is nothing to score\n"
    assert not (tmp_path / "out.jsonl").exists()


def scored_statuses(tmp_path: Path, *fail_on: str) -> tuple[int, str, str]:
    """``score --fail-on`` over three recorded checks: TRUE, FALSE and one whose agent timed out."""
    claims = [
        ("t1", {"agent": "x", "factuality": True, "confidence": 1.0}),
        ("t2", {"agent": "x", "factuality": False, "confidence": 1.0}),
        ("t3", {"agent": "x", "factuality": None, "error": "timed out after 60s during retrieve"}),
    ]
    lines = [{"id": text, "text": text, "claims": [{"id": "c1", "text": text, "judgments": [j]}]} for text, j in claims]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    args = ["score", str(path), "--out", str(tmp_path / "out.jsonl")]
    result = CliRunner().invoke(cli, [*args, *(f"--fail-on={f}" for f in fail_on)])
    return result.exit_code, result.stdout, result.stderr


def test_score_fail_on_exits_as_check_does_after_writing_every_line(tmp_path: Path) -> None:
    assert scored_statuses(tmp_path)[0] == 0
    code, _, err = scored_statuses(tmp_path, "false", "unverified", "error")
    assert code == 3, err  # error first, as in check: an agent's error is why a claim is UNVERIFIED
    assert err.startswith("--fail-on error: agent x could not judge 1 of 1 claim (x: timed out after 60s")
    assert err.endswith(f"({tmp_path / 'in.jsonl'}:3; exit status 3)\n")
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 3  # every line written all the same
    code, _, err = scored_statuses(tmp_path, "unverified")
    assert code == 4 and err.startswith("--fail-on unverified: 1 of 1 claim UNVERIFIED")
    code, _, err = scored_statuses(tmp_path, "false")
    assert code == 5 and err.startswith("--fail-on false: 1 of 1 claim FALSE") and ":2;" in err


def test_score_reports_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"text": "t", "claims": []}\n{not json}\n')
    code, output = run("score", str(path))
    assert code == 1
    assert "in.jsonl:2: not valid JSON" in output


# ---- score reads what check prints; check --format jsonl -----------------------------------------


def test_score_reads_what_check_prints_as_json_jsonl_an_array_or_documents_in_a_row(tmp_path: Path) -> None:
    code, indented = run("check", "Statins lower LDL cholesterol.", "--format", "json")
    assert code == 0, indented
    code, line = run("check", "Aspirin does not lower the risk of colorectal cancer.", "--format", "jsonl")
    assert code == 0, line
    assert line.count("\n") == 1 and json.loads(line)["schema"] == "factcheck/1"  # one line per text
    first, second = json.loads(indented), json.loads(line)
    inputs = {
        "check.json": indented,  # one indented document, as `check --format json > check.json` writes it
        "two.json": indented + indented,  # `>>` twice: documents in a row
        "array.json": json.dumps([first, second], indent=2),
        "checks.jsonl": line + json.dumps(first) + "\n",
    }
    expected = {
        "check.json": [first["text"]],
        "two.json": [first["text"], first["text"]],
        "array.json": [first["text"], second["text"]],
        "checks.jsonl": [second["text"], first["text"]],
    }
    for name, content in inputs.items():
        (tmp_path / name).write_text(content)
        code, output = run("score", str(tmp_path / name), "--scorer", "normsum")
        assert code == 0, f"{name}: {output}"
        scored = [json.loads(row) for row in output.splitlines()]  # JSON Lines out, whatever came in
        assert [row["text"] for row in scored] == expected[name], name
        assert all(row["scorer"] == "normsum" and row["judged_by"]["profile"] == "offline" for row in scored)
    code, output = run("score", "-", input=indented)
    assert code == 0 and json.loads(output)["text"] == first["text"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{\n  "text": "t",\n  "claims": [\n}\n', "in.json:4: not valid JSON (Expecting value, column 1)"),
        ('[\n  {"text": "t", "claims": []},\n  3\n]\n', "in.json:3: item 2 of the array is not a JSON object"),
        ('[\n  {"text": "t", "claims": []},\n  {"text": "no claims"}\n]\n', "in.json:3: a checked text needs"),
        ('{"text": "t", "claims": []}\n"a string"\n', "in.json:2: each line must be a JSON object"),
        # JSON Lines are read line by line: a cut line is named by its own number, not the next one's.
        ('{"text": "t", "claims": []}\n{"text": \n{"text": "u", "claims": []}\n', "in.json:2: not valid JSON"),
        ('{"text": "t", "claims": []} "a string"\n', "in.json:1: expected a JSON object"),
        ('[{"text": "t", "claims": []}\n', "in.json:2: not valid JSON (the array is not closed)"),
    ],
)
def test_score_names_the_line_of_bad_input_in_any_json_layout(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "in.json"
    path.write_text(content)
    code, output = run("score", str(path))
    assert code == 1 and output.startswith("Error: ") and message in output, output
    assert len(output.strip().splitlines()) == 1


# ---- exit statuses: --fail-on -----------------------------------------------------------------


def check_status(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["check", *args, "--format", "jsonl"])
    return result.exit_code, result.stdout, result.stderr


def test_fail_on_error_exits_3_when_no_agent_could_judge() -> None:
    # The wiki profile with its wiki unreachable: its agent abstains. Without --fail-on that is still exit 0.
    unreachable = ("--profile", "wiki", "--wikipedia-url", "http://127.0.0.1:9/w/api.php")
    code, out, err = check_status("Statins lower LDL cholesterol.", *unreachable)
    assert code == 0 and json.loads(out)["label"] == "UNVERIFIED"
    code, out, err = check_status("Statins lower LDL cholesterol.", *unreachable, "--fail-on", "error")
    assert code == 3, err
    assert json.loads(out)["label"] == "UNVERIFIED"  # the verdict is printed all the same
    assert err.startswith("--fail-on error: agent wikipedia could not judge 1 of 1 claim (wikipedia: ")
    assert err.rstrip().endswith("(exit status 3)") and len(err.splitlines()) == 1


def test_fail_on_error_counts_one_failing_agent_beside_a_working_one() -> None:
    with registered(StaticSource(name="down", fail="wiki unreachable")):
        claim = "Obesity does not increase the risk of type 2 diabetes."  # one the corpus settles (FALSE)
        code, out, err = check_status(claim, "--source", "down", "--fail-on", "error")
    assert code == 3 and "agent down could not judge 1 of 1 claim" in err and "wiki unreachable" in err
    assert json.loads(out)["claims"][0]["label"] != "UNVERIFIED"  # the corpus agent did judge


@pytest.mark.parametrize(
    ("text", "fail_on", "status", "reason"),
    [
        ("Do statins lower LDL cholesterol?", ["unverified"], 4, "--fail-on unverified: the text is UNVERIFIED (no"),
        ("Obesity does not increase the risk of type 2 diabetes.", ["false"], 5, "--fail-on false: 1 of 1 claim FALSE"),
        ("Statins reduce cardiovascular events.", ["error", "unverified", "false"], 0, ""),
    ],
)
def test_fail_on_unverified_and_false_have_their_own_statuses(
    text: str, fail_on: list[str], status: int, reason: str
) -> None:
    flags = [arg for condition in fail_on for arg in ("--fail-on", condition)]
    code, out, err = check_status(text, *flags)
    assert code == status, err
    assert err.startswith(reason) if reason else err == ""
    assert json.loads(out)["schema"] == "factcheck/1"


def test_check_help_documents_every_exit_status() -> None:
    code, output = run("check", "--help")
    flat = " ".join(output.split())
    assert code == 0
    for status in ("0 checked", "1 an error you can fix", "2 a usage error", "3 an agent could not judge", "4 a claim"):
        assert status in flat, status
    assert "5 a claim is FALSE" in flat and "--fail-on [error|unverified|false]" in flat


def test_plugins_lists_builtins_only_with_all() -> None:
    code, output = run("plugins")
    assert code == 0 and json.loads(output) == []
    code, output = run("plugins", "--all")
    plugins = {p["name"]: p for p in json.loads(output)}
    assert plugins["factcheck.sources.corpus"]["registered"] == {"sources": ["corpus"]}
    assert plugins["factcheck.scoring.builtins"]["registered"]["scorers"] == [
        "mafc",
        "average",
        "normsum",
        "majority",
        "pamas",
    ]
    assert plugins["factcheck.cli"]["registered"]["commands"] == [
        "check",
        "extract",
        "score",
        "eval",
        "import-mafc",
        "calibrate",
        "plugins",
        "feedback",
        "memory",
    ]
    assert all(p["builtin"] for p in plugins.values())


def test_console_script_runs_offline() -> None:
    env = {**os.environ, "FACTCHECK_LOAD_PLUGINS": ""}
    script = Path(sys.executable).parent / "factcheck"
    result = subprocess.run(
        [str(script), "check", TWO_CLAIMS, "--format", "json"], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["claims"]) == 2


def test_check_labels_the_sample_deterministically() -> None:
    code, output = run(
        "check",
        "Statins reduce cardiovascular events. Obesity does not increase the risk of type 2 diabetes.",
        "--format",
        "json",
    )
    assert code == 0, output
    data = json.loads(output)
    assert [c["label"] for c in data["claims"]] == ["TRUE", "FALSE"]
    assert data["label"] == "PARTLY TRUE"


def write_lines(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


RECORDED = {
    "id": "a",
    "text": "t",
    "claims": [
        {
            "id": "c1",
            "text": "t",
            "gold": "TRUE",
            "judgments": [{"agent": "x", "factuality": True, "confidence": 1.0, "note": "kept"}],
        }
    ],
}


def test_score_may_overwrite_its_input_and_keeps_nested_fields(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "in.jsonl", [RECORDED] * 50)
    code, output = run("score", str(path), "--out", str(path))
    assert code == 0, output
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 50
    claim = lines[0]["claims"][0]
    assert claim["gold"] == "TRUE" and claim["judgments"][0]["note"] == "kept"
    assert claim["score"] == pytest.approx(1.0) and lines[0]["scorer"] == "mafc"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_score_reads_gzip_and_rejects_non_utf8(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "in.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(json.dumps(RECORDED) + "\n")
    code, output = run("score", str(path))
    assert code == 0 and json.loads(output)["score"] == pytest.approx(1.0)
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(json.dumps(RECORDED).encode() + b"\n\xff\xfe\n")
    code, output = run("score", str(bad))
    assert code == 1 and "latin1.jsonl:2: not UTF-8 text" in output


def test_a_failed_score_leaves_no_partial_output(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "in.jsonl", [RECORDED, {"text": "no claims"}])
    out = tmp_path / "out.jsonl"
    code, output = run("score", str(path), "--out", str(out))
    assert code == 1 and "in.jsonl:2: a checked text needs a 'claims' list" in output
    assert not out.exists()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(), "has no text to search"),
        (lambda p: p.write_text('{"id": 1}\n'), "a corpus record needs a string field 'text'"),
        (lambda p: p.write_text("not json\n"), "not valid JSON"),
    ],
)
def test_a_bad_corpus_is_one_error_line_not_silent_abstentions(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    corpus = tmp_path / "corpus.jsonl"
    make(corpus)
    code, output = run("check", "The Eiffel Tower is in Paris.", "--corpus", str(corpus))
    assert code == 1 and output.startswith("Error: ") and message in output
    assert len(output.strip().splitlines()) == 1


def test_a_single_text_file_is_a_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "tower.txt"
    corpus.write_text("The Eiffel Tower in Paris was completed in 1889.\n")
    code, output = run("check", "The Eiffel Tower was completed in 1889.", "--corpus", str(corpus), "--format", "json")
    assert code == 0, output
    assert json.loads(output)["claims"][0]["judgments"][0]["evidence"][0]["title"] == "tower"


def test_non_utf8_stdin_is_a_clear_error() -> None:
    result = CliRunner().invoke(cli, ["check", "-"], input=b"caf\xe9 is open.")
    assert result.exit_code == 1 and "standard input is not UTF-8 text" in result.output


TEXT_ONLY_PDF = b"""%PDF-1.4
1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj
4 0 obj << /Length 44 >> stream
BT /F1 12 Tf 72 712 Td (Statins lower LDL.) Tj ET
endstream endobj
trailer << /Root 1 0 R >>
%%EOF
"""


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("post.pdf", TEXT_ONLY_PDF, "post.pdf is a PDF, not text; convert it to text first (pdftotext "),
        ("post.docx", b"PK\x03\x04\x14\x00\x06\x00word/document.xml", "post.docx is a ZIP archive"),
        ("post.bin", bytes(range(256)), "post.bin is a binary file, not text; convert it to text first"),
        ("post.txt", "Statins lower LDL.".encode("utf-16"), "post.txt is UTF-16 or UTF-32 text (convert it to UTF-8)"),
    ],
)
@pytest.mark.parametrize("command", ["check", "extract"])
def test_a_document_that_is_not_text_is_refused_in_one_line(
    tmp_path: Path, command: str, name: str, content: bytes, said: str
) -> None:
    (tmp_path / name).write_bytes(content)
    code, output = run(command, "--file", str(tmp_path / name))
    assert code == 1 and output.startswith("Error: ") and said in output, output
    assert len(output.splitlines()) == 1
    result = CliRunner().invoke(cli, [command, "-"], input=content)
    assert result.exit_code == 1 and "standard input is " in result.output


def test_a_stray_nul_in_a_text_ends_a_paragraph_and_refuses_nothing() -> None:
    # docs/extraction.md: a control character in a text is a paragraph break, from a file or standard input too.
    result = CliRunner().invoke(cli, ["extract", "-"], input=b"Statins lower LDL cholesterol\0Aspirin thins the blood.")
    assert result.exit_code == 0, result.output
    assert "Statins lower LDL cholesterol" in result.output and "Aspirin thins the blood." in result.output
    assert "2 claims to check" in result.output


# ---- one meaning per flag, help from the registry, output files --------------------------------


def trust_records() -> list[dict]:
    """Recorded checks where agent ``good`` is always right and ``bad`` always wrong, and one
    text they disagree on (id ``split``), which only trust can decide."""
    records = []
    for n in range(12):
        truth = n % 2 == 0
        judgments = [
            {"agent": "good", "factuality": truth, "confidence": 0.9},
            {"agent": "bad", "factuality": not truth, "confidence": 0.9},
        ]
        claim = {"id": "c1", "text": f"Claim {n}.", "judgments": judgments}
        records.append({"id": str(n), "gold": "TRUE" if truth else "FALSE", "text": f"Claim {n}.", "claims": [claim]})
    split = [
        {"agent": "good", "factuality": True, "confidence": 0.9},
        {"agent": "bad", "factuality": False, "confidence": 0.9},
    ]
    records.append({"id": "split", "text": "Split.", "claims": [{"id": "c1", "text": "Split.", "judgments": split}]})
    return records


def test_score_takes_trust_as_check_and_eval_do(tmp_path: Path) -> None:
    recorded = write_lines(tmp_path / "in.jsonl", trust_records())
    trust = tmp_path / "trust.json"
    code, output = run("calibrate", str(recorded), "--out", str(trust))
    assert code == 0, output

    def split_score(*args: str) -> float:
        code, output = run("score", str(recorded), "--scorer", "pamas", *args)
        assert code == 0, output
        return float(json.loads(output.splitlines()[-1])["score"])

    untrusted = split_score()
    assert untrusted == pytest.approx(0.5)  # equal weights: the two agents cancel out
    assert split_score("--trust", str(trust)) == split_score("-o", f"trust={trust}") > 0.5


@pytest.mark.parametrize("command", [["check", "Statins lower LDL cholesterol."], ["score", "-"]])
def test_o_is_option_in_every_command_and_a_non_pair_is_refused_while_parsing(command: list[str]) -> None:
    code, output = run(*command, "-o", "bounds")
    assert code == 2
    assert "'bounds' is not KEY=VALUE (-o is --option in every factcheck command" in output


def test_o_meant_as_an_output_file_points_to_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, output = run("score", "in.jsonl", "-o", "out.jsonl")
    assert code == 2 and "to write to out.jsonl, use --out out.jsonl" in output
    assert list(tmp_path.iterdir()) == []


def test_help_lists_what_is_registered_plugins_included() -> None:
    @dataclass(frozen=True)
    class Sceptic(factcheck.Scorer):
        name = "sceptic"

        def score_votes(self, votes):  # type: ignore[no-untyped-def]
            return 0.0

    with registered(Sceptic()):
        code, output = run("check", "--help")
    assert code == 0
    flat = " ".join(output.split())
    assert "Scorer: average, mafc, majority, normsum, pamas, sceptic." in flat
    assert "Label rule: compose, probable, threshold." in flat
    assert "Agent profile: baseline, offline, paper, wiki." in flat
    assert "sceptic" not in run("check", "--help")[1]  # read from the registry when shown, not fixed at import


BUILTIN_COMMANDS = ["batch", "calibrate", "check", "eval", "import-mafc", "plugins", "score", "serve"]


def test_every_option_of_every_command_says_what_it_does() -> None:
    for name in BUILTIN_COMMANDS:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        bare = [p.opts[0] for p in command.params if isinstance(p, click.Option) and not p.help]
        assert bare == [], f"factcheck {name}: options without help: {bare}"
        # One style for defaults: click's "[default: ...]", never a hand-written "(default ...)".
        code, output = run(name, "--help")
        assert code == 0 and "(default" not in output, f"factcheck {name} --help"


def test_top_level_help_summaries_are_whole() -> None:
    code, output = run("--help")
    assert code == 0
    commands = output.split("Commands:")[1]
    assert all(f"  {name} " in commands for name in BUILTIN_COMMANDS)
    assert "..." not in commands


def test_output_files_respect_the_umask(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "in.jsonl", [RECORDED])
    old = os.umask(0o027)
    try:
        assert run("score", str(path), "--out", str(tmp_path / "out.jsonl"))[0] == 0
        private = write_lines(tmp_path / "private.jsonl", [RECORDED])
        private.chmod(0o600)
        assert run("score", str(private), "--out", str(private))[0] == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.jsonl").stat().st_mode) == 0o640  # 0o666 less the umask, not 0o600
    assert stat.S_IMODE(private.stat().st_mode) == 0o600  # a replaced file keeps its mode


# ---- the text report ------------------------------------------------------------------------


def test_one_claim_is_singular() -> None:
    code, output = run("check", "Statins lower LDL cholesterol.")
    assert code == 0, output
    assert "of 1 claim verified ·" in output and "1 claims" not in output


SHIPPED = "SciFact abstracts (5,183 biomedical research abstracts)"


def test_the_report_and_the_json_say_which_corpus_and_profile_judged_with_a_caution(tmp_path: Path) -> None:
    code, output = run("check", "Statins lower LDL cholesterol.")
    assert code == 0, output
    lines = output.splitlines()
    judged = next(i for i, line in enumerate(lines) if line.startswith("Judged by: "))
    assert lines[judged] == f"Judged by: profile offline · corpus (corpus search, nli verifier) over {SHIPPED}"
    # The caution comes right under it, beside the label, before any claim.
    assert lines[judged + 1].startswith(f"caution: Judged only against {SHIPPED}: a claim outside biomedicine")
    assert "--profile wiki (keyless) or --profile paper (with keys)" in lines[judged + 1]
    assert judged < next(i for i, line in enumerate(lines) if line.startswith("[c1]"))
    code, output = run("check", "Statins lower LDL cholesterol.", "--format", "json")
    judged_by = json.loads(output)["judged_by"]
    assert judged_by == {
        "profile": "offline",
        "agents": [
            {"name": "corpus", "source": "corpus", "verifier": "nli", "corpus": SHIPPED, "domain": "biomedical"}
        ],
        "caution": (
            f"Judged only against {SHIPPED}: a claim outside biomedicine gets a verdict from unrelated passages "
            "or none; for general pages use --profile wiki (keyless) or --profile paper (with keys)."
        ),
    }
    # A corpus of the user's own: named by its file name (a server never hands out its paths), its domain
    # unknown, and no caution.
    corpus = tmp_path / "tower.txt"
    corpus.write_text("The Eiffel Tower in Paris was completed in 1889.\n")
    code, output = run("check", "The Eiffel Tower was completed in 1889.", "--corpus", str(corpus), "--format", "json")
    assert json.loads(output)["judged_by"]["agents"] == [
        {"name": "corpus", "source": "corpus", "verifier": "nli", "corpus": "tower.txt", "domain": None}
    ]
    assert json.loads(output)["judged_by"]["caution"] is None
    code, output = run("check", "The Eiffel Tower was completed in 1889.", "--corpus", str(corpus))
    assert "over tower.txt" in output and str(tmp_path) not in output and "caution:" not in output


def test_the_usage_line_counts_answers_from_the_cache_not_loading_the_corpus_index() -> None:
    def usage_line(cache_hits: dict[str, int]) -> str:
        console = Console(record=True, width=200)
        render(TextVerdict("t", (), usage=Usage(cache_hits=cache_hits)), console)
        return next(line for line in console.export_text().splitlines() if line.startswith("usage: "))

    assert ", 0 cache hits, " in usage_line({"corpus-index": 1})  # the first check: only the index was read
    assert ", 1 cache hit, " in usage_line({"corpus-index": 1, "judgment": 1})
    assert ", 3 cache hits, " in usage_line({"judgment": 2, "answer": 1})


def test_a_text_of_questions_says_why_nothing_was_checked() -> None:
    code, output = run("check", "Do statins lower LDL cholesterol? What about aspirin?")
    assert code == 0, output
    assert "0 claims" in output
    assert "note: no claim found: questions and fragments are not checked" in output
    assert "agents:" not in output  # no blank list of agents


# ---- serve, CI and packaging ----------------------------------------------------------------


def test_serve_logs_at_its_level_even_for_libraries_that_log_everything() -> None:
    from factcheck.server.cli import configure_logging

    stream = io.StringIO()
    root = logging.getLogger()
    level = root.level
    handler = configure_logging("info", stream)
    try:
        logging.getLogger("bm25s").setLevel(logging.DEBUG)  # as bm25s does on import
        logging.getLogger("bm25s").debug("Building index from IDs")
        logging.getLogger("factcheck.server").info("serving")
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    assert "serving" in stream.getvalue()
    assert "Building index" not in stream.getvalue()


ROOT = Path(__file__).resolve().parent.parent


def readme_blocks() -> list[str]:
    return re.findall(r"^```bash\n(.*?)^```", (ROOT / "README.md").read_text(), re.MULTILINE | re.DOTALL)


def test_ci_runs_the_readmes_two_commands_with_the_stock_pip() -> None:
    install_and_check, install_and_test = readme_blocks()[:2]
    assert install_and_check.startswith("pip install . && factcheck check ")
    assert install_and_test == 'pip install -e ".[dev]" && python -m pytest\n'
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'eval "$(readme_block 1)"' in ci and 'eval "$(readme_block 2)"' in ci
    assert "--upgrade pip" not in ci and "-U pip" not in ci
    assert "git clone" in ci  # and again in a clone with nothing beside it


# ---- the same endpoint and budget flags wherever a command checks (issue 24, items 4 and 9) ------


@pytest.mark.parametrize("command", ["check", "batch", "eval", "serve"])
def test_every_command_that_checks_takes_the_endpoint_flags(command: str) -> None:
    code, output = run(command, "--help")
    assert code == 0, output
    assert "--serper-url" in output and "--serpapi-url" in output and "--wikipedia-url" in output
    assert "--wikidata-url" in output


@pytest.mark.parametrize("command", ["check", "batch"])
def test_check_and_batch_take_the_same_budget_flags(command: str) -> None:
    code, output = run(command, "--help")
    assert code == 0, output
    assert all(flag in output for flag in ("--max-cost", "--max-llm-calls", "--max-searches"))


def test_check_stops_searching_at_its_budget_and_says_what_was_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factcheck.net import REFUSALS
    from tests.fakes import FakeServer, Request, Response

    def serper(request: Request) -> Response:
        query = request.json()["q"]
        return Response({"organic": [{"title": query, "snippet": query, "link": "https://example.org/a"}]})

    monkeypatch.setenv("SERPER_API_KEY", "test-serper-key-0123456789")
    REFUSALS.clear()
    REFUSALS.clear()
    config = tmp_path / "factcheck.toml"
    config.write_text(
        'profile = "offline"\n[agents.web]\nsource = "serper"\nverifier = "lexical"\n'
        '[agents.wiki]\nsource = "wikipedia"\nverifier = "lexical"\n'
    )
    with FakeServer() as fake:
        fake.route("POST", "/search", serper)
        fake.route("GET", "/w/api.php", lambda request: Response({"batchcomplete": True, "query": {}}))
        code, output = run(
            "check",
            TWO_CLAIMS,
            "--config",
            str(config),
            "--no-cache",
            "--serper-url",
            fake.url,
            "--wikipedia-url",
            f"{fake.url}/w/api.php",
            "--max-searches",
            "1",
        )
        sent = len(fake.requests)
    assert code == 0, output
    assert sent == 1  # two claims, two agents: one request allowed, one sent
    assert "budget: --max-searches 1 reached (1 search request sent)" in output


def test_serve_passes_its_endpoint_flags_to_every_checker_through_the_environment() -> None:
    from factcheck.config import load_settings

    env = {"FACTCHECK_SERPER_URL": "http://127.0.0.1:9", "FACTCHECK_WIKIPEDIA_URL": "http://127.0.0.1:9/w/api.php"}
    agents = {a.source: a.source_options for a in load_settings(None, env=env, profile="paper").resolved_agents()}
    assert agents["serper"]["base_url"] == "http://127.0.0.1:9"
    assert agents["wikipedia"]["api_url"] == "http://127.0.0.1:9/w/api.php"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["chek", "x"], "No such command 'chek'. Did you mean 'check'?"),
        (["extrat"], "No such command 'extrat'. Did you mean 'extract'?"),
        (["memory", "forgte", "1"], "No such command 'forgte'. Did you mean 'forget'?"),
    ],
)
def test_a_mistyped_command_gets_the_closest_one_suggested(args: list[str], said: str) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and said in result.output


def test_a_command_like_no_other_gets_no_suggestion() -> None:
    result = CliRunner().invoke(cli, ["zzzz"])
    assert result.exit_code == 2 and "No such command 'zzzz'." in result.output
    assert "Did you mean" not in result.output


@pytest.mark.parametrize(
    ("count", "noun", "many", "said"),
    [
        (1, "search", "searches", "1 search"),
        (2, "search", "searches", "2 searches"),
        (0, "LLM call", None, "0 LLM calls"),
    ],
)
def test_counts_agree_with_their_nouns(count: int, noun: str, many: str | None, said: str) -> None:
    from factcheck.text import plural

    assert plural(count, noun, many) == said


def test_the_usage_line_says_one_search_not_one_searches() -> None:
    from factcheck.report import usage_line

    verdict = TextVerdict(text="x", claims=(), usage=Usage(llm_calls=1, search_calls=1, prompt_tokens=1))
    assert str(usage_line(verdict)).startswith("usage: 1 LLM call, 1 token, 1 search, $0.0000, 0 cache hits")


# ---- one flag set: check and batch declare their checker's flags once (issue 42 item 5) ------------------


def _option(flag: Any) -> click.Option:
    """The click option a ``click.option(...)`` decorator adds."""

    def command() -> None: ...

    (option,) = flag(command).__click_params__
    return option  # type: ignore[no-any-return]


def _help(option: click.Option) -> str | None:
    """The help as declared (a HelpOption fills its ``{names}`` when help is shown)."""
    return getattr(option, "help_template", option.help)


def test_check_and_batch_take_the_checker_flags_from_one_declaration() -> None:
    from factcheck.cli.flags import CHECKER_FLAGS, CheckerFlags
    from factcheck.registry import get_commands

    declared = [_option(flag) for flag in CHECKER_FLAGS]
    fields = set(CheckerFlags.__dataclass_fields__)
    assert {option.name for option in declared} <= fields
    commands = get_commands()
    for name in ("check", "batch"):
        params = {p.name: p for p in commands[name].params}
        for option in declared:
            assert option.name is not None
            theirs = params[option.name]
            assert isinstance(theirs, click.Option)
            assert (theirs.opts, _help(theirs), theirs.default, theirs.multiple, theirs.is_flag) == (
                option.opts,
                _help(option),
                option.default,
                option.multiple,
                option.is_flag,
            ), (name, option.name)


def test_the_checker_flags_reach_the_command_as_one_frozen_object(tmp_path: Path) -> None:
    from factcheck.cli.flags import CheckerFlags, checker_flags

    seen: list[CheckerFlags] = []

    @click.command()
    @click.option("--other")
    @checker_flags(click.option("--tau"))
    def probe(other: str | None, flags: CheckerFlags) -> None:
        seen.append(flags)

    args = ["--scorer", "pamas", "--no-cache", "--source", "web", "--source", "wikipedia", "--tau", "0.7"]
    result = CliRunner().invoke(probe, [*args, "--trust", str(tmp_path / "t.json"), "--other", "x"])
    assert result.exit_code == 0, result.output
    expected = CheckerFlags(
        scorer="pamas", no_cache=True, sources=("web", "wikipedia"), tau="0.7", trust_file=tmp_path / "t.json"
    )
    assert seen == [expected]


def test_each_runner_says_what_it_runs_and_eval_and_calibrate_sit_beside_the_other_commands() -> None:
    import ast
    import importlib

    from factcheck.registry import get_commands

    package = Path(factcheck.__file__).parent
    assert not (package / "eval" / "runner.py").exists() and not (package / "batch" / "runner.py").exists()
    assert importlib.import_module("factcheck.eval.evaluate").score_rows
    assert importlib.import_module("factcheck.batch.engine").run_batch
    commands = get_commands()
    for name, module in (("calibrate", "calibrate"), ("eval", "eval"), ("import-mafc", "eval")):
        assert commands[name].callback.__module__ == f"factcheck.cli.{module}"  # type: ignore[union-attr]
    tree = ast.parse((package / "eval" / "calibrate.py").read_text(encoding="utf-8"))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in modules if m and m.split(".")[0] in ("click", "rich")}  # the logic, not the command
