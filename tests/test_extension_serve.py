"""``factcheck serve --corpus``: the server an extension talks to searches the corpus it is given."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from factcheck.cli import cli

pytest.importorskip("fastapi")


def test_serve_corpus_flag_is_the_corpus_the_checks_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient

    corpus = tmp_path / "almanac.jsonl"
    record = {
        "id": "q1",
        "title": "Quux almanac",
        "url": "https://quux.example/almanac",
        "text": "The Quuxian river floods every spring.",
    }
    corpus.write_text(json.dumps(record) + "\n", encoding="utf-8")
    config = tmp_path / "factcheck.toml"
    config.write_text('profile = "offline"\n[agents.corpus]\nsource = "corpus"\nverifier = "lexical"\n')
    monkeypatch.setenv("FACTCHECK_API_KEYS", "serve-corpus-key-0123")
    monkeypatch.setenv("FACTCHECK_CORPUS", "restored after the test")  # the flag sets it for the process
    apps: list[Any] = []
    monkeypatch.setattr("factcheck.server.runner.serve", lambda app, host, port, **options: apps.append(app))

    result = CliRunner().invoke(cli, ["serve", "--port", "0", "--config", str(config), "--corpus", str(corpus)])
    assert result.exit_code == 0, result.output
    with TestClient(apps[0]) as client:
        answer = client.post(
            "/v1/check",
            json={"text": "The Quuxian river floods every spring."},
            headers={"Authorization": "Bearer serve-corpus-key-0123"},
        )
    assert answer.status_code == 200, answer.text
    (claim,) = answer.json()["claims"]
    evidence = [e for judgment in claim["judgments"] for e in judgment["evidence"]]
    assert [(e["title"], e["url"]) for e in evidence] == [("Quux almanac", "https://quux.example/almanac")]
    assert claim["label"] == "TRUE"
