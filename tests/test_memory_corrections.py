"""Corrections into the experience memory: ``factcheck feedback``, ``factcheck memory list / show / forget /
import``, the shared rules of :mod:`factcheck.memory.corrections`, and memory off creating nothing."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from factcheck.cli import cli
from factcheck.errors import ConfigError, InputError
from factcheck.memory.corrections import (
    CORRECTION_SCHEMA,
    correction_from_result,
    corrections_from_eval,
    eval_reviewer,
    record,
)
from factcheck.memory.settings import MemorySettings
from factcheck.memory.store import Correction, MemoryStore
from factcheck.types import (
    Claim,
    ClaimVerdict,
    Evidence,
    JudgedBy,
    JudgingAgent,
    Judgment,
    Label,
    TextVerdict,
)

STATINS = "Statins lower LDL cholesterol."
OBESITY = "Obesity does not increase the risk of type 2 diabetes."
PASSAGE = Evidence("corpus", "Statin therapy reduced LDL cholesterol by 30%.", "Statins and LDL", "https://e.org/1")
OTHER = Evidence("corpus", "Obesity is associated with insulin resistance.", "Obesity", "https://e.org/2")


def crafted_result() -> dict[str, Any]:
    """A checked text as ``check --format json`` prints it, made by hand: two claims, two agents."""
    first = ClaimVerdict(
        Claim("c1", STATINS, (0, 30)),
        (
            Judgment("corpus", True, 0.8, "the passage says so", (PASSAGE,)),
            Judgment("wiki", None, 0.0, "", (), error="no page"),
        ),
        score=0.9,
        label=Label.TRUE,
    )
    second = ClaimVerdict(
        Claim("c2", OBESITY, (31, 85)),
        (Judgment("corpus", False, 0.9, "negation only in the claim", (OTHER, OTHER)),),
        score=0.05,
        label=Label.FALSE,
    )
    verdict = TextVerdict(
        text=f"{STATINS} {OBESITY}",
        claims=(first, second),
        label=Label.PARTLY_TRUE,
        as_of="2026-05-01T09:00:00+00:00",
        judged_by=JudgedBy("offline", (JudgingAgent("corpus", "corpus", "lexical"),)),
    )
    return verdict.to_dict()


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


@pytest.fixture
def result_file(tmp_path: Path) -> Path:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(crafted_result(), indent=2))
    return path


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    return tmp_path / "memory" / "memory.sqlite"


# --- one real check, with no memory configured ---


@pytest.fixture(scope="module")
def real_check(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Path, set[str]]]:
    """``factcheck check --format json`` run once, in a home and working folder of its own and with no memory
    configured: its JSON, that folder, and the files of the cache folder before the check."""
    root = tmp_path_factory.mktemp("no-memory")
    config = tmp_path_factory.mktemp("config") / "factcheck.toml"
    config.write_text('profile = "offline"\n[agents.corpus]\nsource = "corpus"\nverifier = "lexical"\n')
    cache = Path(os.environ["FACTCHECK_CACHE_DIR"])
    before = {str(p.relative_to(cache)) for p in cache.rglob("*")}
    with pytest.MonkeyPatch.context() as patch:
        for name in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
            patch.setenv(name, str(root / name.lower()))
        patch.delenv("FACTCHECK_MEMORY", raising=False)
        patch.chdir(root)
        result = run("check", "--config", str(config), "--format", "json", f"{STATINS} {OBESITY}")
    assert result.exit_code == 0, result.output
    yield json.loads(result.output), root, before


def test_memory_off_creates_no_file(real_check: tuple[dict[str, Any], Path, set[str]]) -> None:
    verdict, root, before = real_check
    assert len(verdict["claims"]) == 2  # the check ran
    # Nothing of factcheck's in the home, XDG folders or working folder (onnxruntime keeps a file of its own there).
    found = [str(p.relative_to(root)) for p in root.rglob("*")]
    ours = [p for p in found if ".sqlite" in p or "memory" in p or "factcheck" in p]
    assert ours == []
    cache = Path(os.environ["FACTCHECK_CACHE_DIR"])
    new = {str(p.relative_to(cache)) for p in cache.rglob("*")} - before
    assert not [name for name in new if "memory" in name], new
    assert all(j["agent"] != "memory" for c in verdict["claims"] for j in c["judgments"])


def test_feedback_on_a_check_json_keeps_its_provenance_and_judgments(
    real_check: tuple[dict[str, Any], Path, set[str]], tmp_path: Path, memory: Path
) -> None:
    verdict = real_check[0]
    path = tmp_path / "checked.json"
    path.write_text(json.dumps(verdict, indent=2))
    result = run(
        "feedback",
        str(path),
        "--claim",
        "c2",
        "--label",
        "true",
        "--note",
        "a trial says so",
        "--reviewer",
        "alice",
        "--memory",
        str(memory),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert shown["schema"] == CORRECTION_SCHEMA and shown["id"] == 1
    assert shown["lent"] is True and shown["trust"] is None  # one reviewer is enough by default
    stored = MemoryStore(memory).get(1)
    assert stored is not None
    claim = verdict["claims"][1]
    assert (stored.claim, stored.label, stored.verdict) == (claim["text"], "TRUE", claim["label"])
    assert (stored.reviewer, stored.origin, stored.note) == ("alice", "feedback", "a trial says so")
    assert stored.created_at and stored.check_ref is not None
    assert "claim=c2" in stored.check_ref and f"as_of={verdict['as_of']}" in stored.check_ref
    assert "profile=offline" in stored.check_ref
    assert [j.to_dict() for j in stored.judgments] == [Judgment.from_dict(j).to_dict() for j in claim["judgments"]]
    cited = {(e["source"], e["text"]) for j in claim["judgments"] for e in j["evidence"]}
    assert {(e.source, e.text) for e in stored.evidence} == cited and cited


def test_feedback_from_standard_input_with_the_default_reviewer(
    result_file: Path, memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("USER", "bob")
    result = run(
        "feedback", "-", "--claim", "c1", "--label", "FALSE", "--memory", str(memory), input=result_file.read_text()
    )
    assert result.exit_code == 0, result.output
    assert "correction 1 recorded" in result.output and "TRUE -> FALSE" in result.output
    (stored,) = MemoryStore(memory).corrections()
    assert (stored.reviewer, stored.verdict, stored.label) == ("bob", "TRUE", "FALSE")
    assert [j.agent for j in stored.judgments] == ["corpus", "wiki"] and stored.evidence == (PASSAGE,)
    monkeypatch.delenv("USER")
    run("feedback", str(result_file), "--claim", "c2", "--label", "TRUE", "--memory", str(memory))
    assert MemoryStore(memory).corrections(limit=1)[0].reviewer == "cli"


def test_a_wrong_claim_id_is_a_clear_error_and_stores_nothing(result_file: Path, memory: Path) -> None:
    result = run("feedback", str(result_file), "--claim", "c9", "--label", "FALSE", "--memory", str(memory))
    assert result.exit_code == 1
    assert "no claim 'c9' in the result (its claims: c1, c2)" in result.output
    result = run("feedback", str(result_file), "--label", "FALSE", "--memory", str(memory))
    assert result.exit_code == 1 and "its claims: c1, c2" in result.output  # two claims: --claim is needed
    assert not memory.exists()


def test_a_batch_file_needs_the_document_named(tmp_path: Path, memory: Path) -> None:
    lines = [{"id": "d1", **crafted_result(), "meta": {}}, {"id": "d2", **crafted_result(), "meta": {}}]
    out = tmp_path / "out.jsonl"
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = run("feedback", str(out), "--claim", "c1", "--label", "FALSE", "--memory", str(memory))
    assert result.exit_code == 1 and "--document ID (d1, d2)" in result.output
    result = run("feedback", str(out), "--document", "d7", "--claim", "c1", "--label", "FALSE", "--memory", str(memory))
    assert result.exit_code == 1 and "no document 'd7'" in result.output
    run("feedback", str(out), "--document", "d2", "--claim", "c1", "--label", "FALSE", "--memory", str(memory))
    (stored,) = MemoryStore(memory).corrections()
    assert stored.check_ref is not None and stored.check_ref.startswith("id=d2; claim=c1;")


def test_no_memory_configured_is_a_clear_error(
    result_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for args in (("feedback", str(result_file), "--claim", "c1", "--label", "FALSE"), ("memory", "list")):
        result = run(*args)
        assert result.exit_code == 1 and "no experience memory configured: pass --memory PATH" in result.output
    config = tmp_path / "factcheck.toml"
    config.write_text(f'[memory]\npath = "{tmp_path / "from-settings.sqlite"}"\n')
    assert run("feedback", str(result_file), "--claim", "c1", "--label", "FALSE").exit_code == 0
    assert MemoryStore(tmp_path / "from-settings.sqlite").corrections()[0].claim == STATINS


def add(memory: Path, claim: str, label: str, reviewer: str) -> Correction:
    return MemoryStore(memory).add(Correction(claim=claim, label=label, reviewer=reviewer, origin="feedback"))


def test_list_and_show(memory: Path, result_file: Path) -> None:
    run(
        "feedback",
        str(result_file),
        "--claim",
        "c1",
        "--label",
        "FALSE",
        "--note",
        "retracted",
        "--reviewer",
        "alice",
        "--memory",
        str(memory),
    )
    add(memory, OBESITY, "TRUE", "bob")
    listed = json.loads(run("memory", "list", "--memory", str(memory), "--format", "json").output)
    assert [(c["id"], c["reviewer"], c["label"]) for c in listed] == [(2, "bob", "TRUE"), (1, "alice", "FALSE")]
    assert all(c["schema"] == CORRECTION_SCHEMA for c in listed)
    only = json.loads(
        run(
            "memory", "list", "--memory", str(memory), "--claim", "statins lower ldl cholesterol", "--format", "json"
        ).output
    )
    assert [c["id"] for c in only] == [1]
    assert (
        len(json.loads(run("memory", "list", "--memory", str(memory), "--limit", "1", "--format", "json").output)) == 1
    )
    table = run("memory", "list", "--memory", str(memory)).output
    assert "alice" in table and "bob" in table and "feedback" in table
    shown = run("memory", "show", "1", "--memory", str(memory)).output
    assert "retracted" in shown and "claim=c1" in shown and "the judgments it corrects" in shown
    assert "checks now lend this ruling" in shown
    assert (
        json.loads(run("memory", "show", "2", "--memory", str(memory), "--format", "json").output)["claim"] == OBESITY
    )
    result = run("memory", "show", "9", "--memory", str(memory))
    assert result.exit_code == 1 and "no correction 9 in" in result.output


def forget_at_a_terminal(memory: Path, answer: str) -> tuple[int, str]:
    """``factcheck memory forget 1`` run on a pseudo-terminal, answering its question with ``answer``."""
    import pty
    import select
    import subprocess
    import sys
    import time

    main, child = pty.openpty()
    command = [sys.executable, "-m", "factcheck", "memory", "forget", "1", "--memory", str(memory)]
    with subprocess.Popen(command, stdin=child, stdout=child, stderr=child) as process:
        os.close(child)
        seen, deadline = b"", time.monotonic() + 60
        while b"[y/N]" not in seen:
            ready, _, _ = select.select([main], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no question within 60 s: {seen!r}"
            seen += os.read(main, 1024)
        os.write(main, answer.encode() + b"\n")
        code = process.wait(timeout=60)
        try:
            while chunk := os.read(main, 1024):
                seen += chunk
        except OSError:  # the terminal closed with the process
            pass
    os.close(main)
    return code, seen.decode(errors="replace")


def test_forget_asks_first_at_a_terminal_and_says_when_there_is_no_such_id(memory: Path) -> None:
    add(memory, STATINS, "TRUE", "alice")
    code, said = forget_at_a_terminal(memory, "n")
    assert code == 1 and "Forget correction 1" in said
    assert MemoryStore(memory).get(1) is not None
    code, said = forget_at_a_terminal(memory, "y")
    assert code == 0 and "forgot correction 1" in said and MemoryStore(memory).get(1) is None
    missing = run("memory", "forget", "1", "--memory", str(memory), "--yes")
    assert missing.exit_code == 1 and "no correction 1 in" in missing.output


def test_forget_with_no_terminal_refuses_in_one_line_unless_told_yes(memory: Path) -> None:
    add(memory, STATINS, "TRUE", "alice")
    piped = run("memory", "forget", "1", "--memory", str(memory), input="y\n")  # a pipe, not a person
    assert piped.exit_code == 1 and MemoryStore(memory).get(1) is not None
    assert piped.output.strip().splitlines() == [
        "Error: forget asks before it removes correction 1, and no terminal can answer: add --yes"
    ]
    assert run("memory", "forget", "1", "--memory", str(memory), "--yes").exit_code == 0
    assert MemoryStore(memory).get(1) is None


def test_a_forgotten_entry_is_never_shown_or_lent_again(memory: Path) -> None:
    from factcheck.build import build_checker

    add(memory, "Vitamin D supplements prevent hip fractures.", "FALSE", "alice")
    kept = add(memory, STATINS, "TRUE", "alice")
    checker = build_checker(memory={"path": str(memory)}, only_agents=("memory",))
    (lent,) = checker.check(STATINS).claims[0].judgments
    assert lent.agent == "memory" and f"factcheck-memory:{kept.id}/TRUE" in [e.url for e in lent.evidence]
    assert run("memory", "forget", str(kept.id), "--memory", str(memory), "--yes").exit_code == 0
    assert MemoryStore(memory).get(kept.id) is None
    assert kept.id not in [c.id for c in MemoryStore(memory).corrections()]
    listed = json.loads(run("memory", "list", "--memory", str(memory), "--format", "json").output)
    assert [c["id"] for c in listed] == [1]
    assert run("memory", "show", str(kept.id), "--memory", str(memory)).exit_code == 1
    (after,) = checker.check(STATINS).claims[0].judgments  # the same checker: nothing kept from before
    assert after.agent == "memory" and after.factuality is None
    assert not [e for e in after.evidence if e.url == f"factcheck-memory:{kept.id}/TRUE"]


def judgments_file(folder: Path) -> Path:
    """An eval run's judgments.jsonl (two records) with the run.json the harness writes beside it."""
    one_claim = {"id": "7", "gold": "FALSE", **crafted_result()}
    one_claim["claims"] = one_claim["claims"][:1]
    two_claims = {"id": "8", "gold": "PARTLY TRUE", **crafted_result()}
    two_claims["claims"][0]["gold"] = "TRUE"
    two_claims["claims"][1]["gold"] = None  # no gold: not imported
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.json").write_text(json.dumps({"dataset": "scifact", "mode": "retrieve"}))
    path = folder / "judgments.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (one_claim, two_claims)))
    return path


def test_import_from_an_eval_run(tmp_path: Path, memory: Path) -> None:
    path = judgments_file(tmp_path / "run")
    result = run("memory", "import", str(path), "--memory", str(memory))
    assert result.exit_code == 0, result.output
    assert "imported 2 corrections by gold:scifact" in result.output
    stored = sorted(MemoryStore(memory).corrections(), key=lambda c: c.id)
    assert [(c.claim, c.label, c.verdict, c.reviewer, c.origin) for c in stored] == [
        (STATINS, "FALSE", "TRUE", "gold:scifact", "import"),  # the text's gold, for its one claim
        (STATINS, "TRUE", "TRUE", "gold:scifact", "import"),  # the claim's own gold
    ]
    assert stored[0].check_ref is not None and stored[0].check_ref.startswith("id=7; claim=c1;")
    assert [j.agent for j in stored[1].judgments] == ["corpus", "wiki"]
    again = run("memory", "import", str(path), "--memory", str(memory))
    assert "imported 0 corrections" in again.output and "(2 already there)" in again.output
    run("memory", "import", str(path), "--memory", str(memory), "--reviewer", "gold:mine")
    assert len(MemoryStore(memory).corrections()) == 4


def test_eval_corrections_and_their_reviewer(tmp_path: Path) -> None:
    path = judgments_file(tmp_path / "run")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [c.label for c in corrections_from_eval(records, "gold:x")] == ["FALSE", "TRUE"]
    assert eval_reviewer(path) == "gold:scifact"
    loose = tmp_path / "scifact-binary.jsonl"
    loose.write_text("")
    assert eval_reviewer(loose) == "gold:scifact-binary" and eval_reviewer("-") == "gold:stdin"
    with pytest.raises(InputError, match=r"judgments record 1: .*'claims' list"):
        corrections_from_eval([{"gold": "TRUE", "text": "x"}], "gold:x")
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"id": "1", "gold": "PARTLY TRUE", **crafted_result()}) + "\n")
    result = run("memory", "import", str(empty), "--memory", str(tmp_path / "m.sqlite"))
    assert result.exit_code == 1 and "no claims with a TRUE or FALSE gold label" in result.output
    assert not (tmp_path / "m.sqlite").exists()


def test_the_shared_rules(tmp_path: Path) -> None:
    result = crafted_result()
    with pytest.raises(InputError, match=r"no claim 'c3' in the result \(its claims: c1, c2\)"):
        correction_from_result(result, "c3", "FALSE", "", "key-1", "server")
    with pytest.raises(InputError, match="could not be checked"):
        failed = {**TextVerdict(text="x", claims=()).to_dict(), "error": {"type": "X", "message": "boom"}}
        correction_from_result(failed, "c1", "FALSE", "", "key-1", "server")
    with pytest.raises(InputError, match="label must be one of"):
        correction_from_result(result, "c1", "PARTLY TRUE", "", "key-1", "server")
    made = correction_from_result({**result, "url": "https://news.example/a"}, "c2", "true", "", "key-1", "server")
    assert made.label == "TRUE" and made.evidence == (OTHER,)  # each cited passage once
    assert made.check_ref is not None and "url=https://news.example/a" in made.check_ref
    digest = hashlib.sha256(result["text"].encode("utf-8")).hexdigest()[:16]
    assert made.check_ref.endswith(f"; text=sha256:{digest}")


def test_record_learns_trust_only_when_asked(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.sqlite")
    correction = correction_from_result(crafted_result(), "c1", "FALSE", "", "alice", "feedback")
    trust = tmp_path / "trust.json"
    assert record(store, correction, MemorySettings(path=str(store.path))).trust is None
    assert not trust.exists()
    with pytest.raises(ConfigError, match="learn_trust is on but no trust file is set"):
        record(store, correction, MemorySettings(path=str(store.path), learn_trust=True))
    assert len(store.corrections()) == 1  # refused before anything was stored
    learning = MemorySettings(path=str(store.path), learn_trust=True, trust=str(trust), rate=0.5)
    recorded = record(store, correction, learning)
    assert recorded.trust is not None and recorded.trust.updated == ("corpus",)  # the team said TRUE: wrong
    agents = json.loads(trust.read_text())["agents"]
    assert agents["corpus"]["judged"] == 1 and agents["corpus"]["correct"] == 0 and agents["corpus"]["pamas"] < 1
    assert agents["wiki"]["abstained"] == 1
    unverified = correction_from_result(crafted_result(), "c2", "UNVERIFIED", "", "alice", "feedback")
    assert record(store, unverified, learning).trust is None  # nothing to learn from
    trust.write_text("{}")
    with pytest.raises(InputError, match="not a trust file"):
        record(store, correction, learning)
    assert len(store.corrections()) == 3
    # Where two reviewers must agree, one correction moves no trust; the second, agreeing, does.
    agreeing = MemorySettings(path=str(store.path), learn_trust=True, trust=str(trust), rate=0.5, require=2)
    trust.unlink()
    other = correction_from_result(crafted_result(), "c2", "TRUE", "", "alice", "feedback")
    assert record(store, other, agreeing).trust is None and not trust.exists()
    second = correction_from_result(crafted_result(), "c2", "TRUE", "", "bob", "feedback")
    assert record(store, second, agreeing).trust is not None and trust.exists()


def test_every_option_says_what_it_does() -> None:
    feedback = cli.get_command(click.Context(cli), "feedback")
    group = cli.get_command(click.Context(cli), "memory")
    assert isinstance(group, click.Group) and feedback is not None
    commands = [feedback, *(group.commands[name] for name in ("list", "show", "forget", "import"))]
    for command in commands:
        bare = [p.opts[0] for p in command.params if isinstance(p, click.Option) and not p.help]
        assert bare == [], f"{command.name}: options without help: {bare}"
    top = run("--help").output.split("Commands:")[1]
    assert "  feedback " in top and "  memory " in top and "..." not in top
    assert "--memory" in run("memory", "import", "--help").output
    assert "(default" not in run("feedback", "--help").output


def test_a_ruling_waits_for_a_second_reviewer_where_two_must_agree(result_file: Path, tmp_path: Path) -> None:
    memory = tmp_path / "memory.sqlite"
    settings = tmp_path / "factcheck.toml"
    settings.write_text(f'[memory]\npath = "{memory}"\nrequire = 2\n')
    args = ("feedback", str(result_file), "--claim", "c1", "--label", "FALSE", "--config", str(settings))
    first = run(*args, "--reviewer", "alice")
    assert "not lent yet: 2 reviewers must agree" in first.output
    assert json.loads(run(*args, "--reviewer", "alice", "--format", "json").output)["lent"] is False  # the same one
    assert json.loads(run(*args, "--reviewer", "bob", "--format", "json").output)["lent"] is True
    assert "checks now lend this ruling" in run("memory", "show", "1", "--config", str(settings)).output
