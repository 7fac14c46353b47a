"""What every output shows a reader: how many claims a label stands on and what was skipped (issue 40
item 6), and numbers rounded to 3 decimals unless full precision is asked for (item 8)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from factcheck.batch.html import document_row
from factcheck.cli import cli
from factcheck.jsonl import rounded
from factcheck.server.middleware import Redactor
from factcheck.types import Claim, ClaimVerdict, Judgment, Label, SkippedSentence, TextVerdict

MIXED = "Statins lower LDL cholesterol. The Eiffel Tower is in Berlin. Paris is nice."


def mixed_verdict() -> TextVerdict:
    statins, tower = (
        Claim("c1", "Statins lower LDL cholesterol.", (0, 30)),
        Claim("c2", "The Eiffel Tower is in Berlin."),
    )
    return TextVerdict(
        text=MIXED,
        claims=(
            ClaimVerdict(statins, (Judgment("corpus", True, 0.8),), 0.7000000000000001, Label.TRUE),
            ClaimVerdict(tower, (Judgment("corpus", None),), None, Label.UNVERIFIED),
        ),
        score=0.7000000000000001,
        label=Label.TRUE,
        skipped=(SkippedSentence("Paris is nice.", (62, 76), "opinion", "a value judgment ('nice')"),),
    )


def test_the_header_json_and_batch_report_say_what_was_verified_and_what_skipped() -> None:
    verdict = mixed_verdict()
    assert verdict.decided == "1 of 2 claims verified, 1 sentence skipped"
    data = verdict.to_dict()
    assert (data["claims_verified"], data["claims_total"], data["sentences_skipped"]) == (1, 2, 1)
    assert "1 of 2 claims verified, 1 sentence skipped</small>" in document_row({"id": "d", **data})
    nothing_skipped = TextVerdict(text="x", claims=verdict.claims[:1], score=0.7, label=Label.TRUE)
    assert nothing_skipped.decided == "1 of 1 claim verified"


def test_the_text_report_header_says_it_too() -> None:
    result = CliRunner().invoke(cli, ["check", MIXED])
    assert result.exit_code == 0, result.output
    header = result.output.splitlines()[1]
    assert re.search(r"\d of 2 claims verified, 1 sentence skipped", header), header


def floats(data: Any) -> list[tuple[str, float]]:
    """Every ``(key, number)`` of a JSON value whose number is not whole."""
    if isinstance(data, dict):
        return [pair for key, value in data.items() for pair in floats_under(key, value)]
    if isinstance(data, list):
        return [pair for value in data for pair in floats(value)]
    return []


def floats_under(key: str, value: Any) -> list[tuple[str, float]]:
    return [(key, value)] if isinstance(value, float) else floats(value)


def decimals(number: float) -> int:
    text = repr(number)
    return 99 if "e" in text else len(text.partition(".")[2])


def test_numbers_are_rounded_for_readers_and_costs_keep_six_places() -> None:
    data = {"score": 0.09144999999999998, "wall_s": {"score": 5e-06}, "cost_usd": 0.000150123, "n": 3, "ok": True}
    assert rounded(data) == {"score": 0.091, "wall_s": {"score": 0.0}, "cost_usd": 0.00015, "n": 3, "ok": True}
    assert rounded([{"p": 0.8957999999999999}]) == [{"p": 0.896}]
    # The user's own: a document's meta, and the settings a replay reads.
    assert rounded({"meta": {"lat": 1 / 3}, "scorer_options": {"t": 1 / 3}}) == {
        "meta": {"lat": 1 / 3},
        "scorer_options": {"t": 1 / 3},
    }


def test_check_json_is_rounded_unless_full_precision_is_asked_for() -> None:
    runner = CliRunner()
    shown = json.loads(runner.invoke(cli, ["check", MIXED, "--format", "json"]).output)
    numbers = floats(shown)
    assert numbers and all(decimals(n) <= (6 if "cost" in k else 3) for k, n in numbers), numbers
    full = json.loads(runner.invoke(cli, ["check", MIXED, "--format", "json", "--full-precision"]).output)
    assert any(decimals(n) > 3 for _, n in floats(full["usage"]["wall_s"]))  # timings to the microsecond


def test_batch_and_score_round_their_own_numbers_and_leave_the_users_alone(tmp_path: Path) -> None:
    recorded = tmp_path / "recorded.jsonl"
    record = {**mixed_verdict().to_dict(), "prior": 1 / 3}  # a field of the user's own, kept by score
    record["usage"]["wall_s"] = {"total": 0.1234567}
    recorded.write_text(json.dumps(record) + "\n", encoding="utf-8")
    out = tmp_path / "rescored.jsonl"
    assert CliRunner().invoke(cli, ["score", str(recorded), "--out", str(out)]).exit_code == 0
    rescored = json.loads(out.read_text(encoding="utf-8"))
    assert rescored["usage"]["wall_s"]["total"] == 0.123 and rescored["prior"] == 1 / 3
    assert all(decimals(n) <= 3 for k, n in floats({**rescored, "prior": 0}) if "cost" not in k)
    assert CliRunner().invoke(cli, ["score", str(recorded), "--out", str(out), "--full-precision"]).exit_code == 0
    assert json.loads(out.read_text(encoding="utf-8"))["usage"]["wall_s"]["total"] == 0.1234567
    documents = tmp_path / "docs.jsonl"
    documents.write_text(json.dumps({"id": "a", "text": MIXED, "lat": 0.123456789}) + "\n", encoding="utf-8")
    lines = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["batch", str(documents), "--out", str(lines), "--quiet"])
    assert result.exit_code == 0, result.output
    line = json.loads(lines.read_text(encoding="utf-8"))
    assert line["meta"]["lat"] == 0.123456789  # the document's own field, as given
    del line["meta"]
    assert floats(line) and all(decimals(n) <= (6 if "cost" in k else 3) for k, n in floats(line))


def test_every_server_answer_is_rounded() -> None:
    # Every JSON answer and stream event of the server goes through this one encoder.
    assert Redactor([]).dumps({"score": 0.7000000000000001, "usage": {"cost_usd": 1e-07}}) == (
        '{"score": 0.7, "usage": {"cost_usd": 0.0}}'
    )
