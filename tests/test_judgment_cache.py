"""Claim-level judgment reuse: a claim judged once is not searched and judged again."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from factcheck import Agent, Checker
from factcheck.agent import normalise_claim
from factcheck.build import build_checker
from factcheck.sources.corpus import CorpusSource
from factcheck.testing import ScriptedVerifier, StaticSource
from factcheck.types import Claim, Evidence
from factcheck.verifiers.lexical import LexicalVerifier

RETRIEVALS: Counter[str] = Counter()


@dataclass(frozen=True)
class CountingSource(StaticSource):
    """A static source that allows reuse and counts how often it is really asked."""

    reuse_judgments: ClassVar[bool] = True

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        RETRIEVALS[claim.text] += 1
        return await super().retrieve(claim)


@dataclass(frozen=True)
class ReusableVerifier(ScriptedVerifier):
    reuse_judgments: ClassVar[bool] = True


def _checker(tmp_path: Path, source: StaticSource, enabled: bool = True) -> Checker:
    cache = {"path": str(tmp_path / "c.sqlite"), "enabled": enabled}
    return build_checker(agents=[Agent("a", source, ReusableVerifier())], cache=cache)


def _corpus(path: Path, text: str) -> Path:
    path.write_text(json.dumps({"id": "d1", "title": "Doc", "text": text}) + "\n", encoding="utf-8")
    return path


def test_claims_are_normalised_for_reuse() -> None:
    assert normalise_claim("  Vitamin C  cures colds. ") == normalise_claim("\u201cvitamin c cures colds\u201d")
    assert normalise_claim("Vitamin C cures colds") != normalise_claim("Vitamin C does not cure colds")


def test_a_repeated_claim_is_answered_from_the_cache(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "c.jsonl", "Statins lower LDL cholesterol in adults with high cholesterol.")
    agent = Agent("corpus", CorpusSource(path=str(corpus)), LexicalVerifier())
    checker = build_checker(agents=[agent], cache={"path": str(tmp_path / "c.sqlite")})
    first = checker.check("Statins lower LDL cholesterol.")
    second = checker.check("statins lower  LDL cholesterol")
    assert first.usage.calls.get("source:corpus") == 1
    assert second.usage.cache_hits.get("judgment") == 1
    assert "source:corpus" not in second.usage.calls and "verifier:lexical" not in second.usage.calls
    assert second.claims[0].judgments == first.claims[0].judgments
    # An edited corpus changes the source's cache_version: the claim is searched and judged afresh.
    _corpus(corpus, "Statins raise LDL cholesterol in nobody; the trial was stopped.")
    third = checker.check("Statins lower LDL cholesterol.")
    assert third.usage.calls.get("source:corpus") == 1 and "judgment" not in third.usage.cache_hits


def test_reuse_is_keyed_by_the_agent_not_its_name(tmp_path: Path) -> None:
    RETRIEVALS.clear()
    source = CountingSource(passages=("Paris is the capital of France.",))
    _checker(tmp_path, source).check("Paris is the capital of France.")
    renamed = build_checker(agents=[Agent("b", source, ReusableVerifier())], cache={"path": str(tmp_path / "c.sqlite")})
    verdict = renamed.check("Paris is the capital of France.")
    assert verdict.claims[0].judgments[0].agent == "b"
    assert RETRIEVALS["Paris is the capital of France."] == 1
    other_options = _checker(tmp_path, CountingSource(passages=("Another passage.",)))
    other_options.check("Paris is the capital of France.")
    assert RETRIEVALS["Paris is the capital of France."] == 2


def test_concurrent_checks_judge_a_shared_claim_once(tmp_path: Path) -> None:
    RETRIEVALS.clear()
    checker = _checker(tmp_path, CountingSource(delay_s=0.2))

    async def both() -> list[int]:
        verdicts = await asyncio.gather(
            checker.acheck("Water boils at 100 C."), checker.acheck("Water boils at 100 C.")
        )
        return [v.usage.cache_hits.get("judgment", 0) for v in verdicts]

    hits = asyncio.run(both())
    assert RETRIEVALS["Water boils at 100 C."] == 1
    assert sorted(hits) == [0, 1]


def test_failures_are_never_reused(tmp_path: Path) -> None:
    checker = _checker(tmp_path, CountingSource(fail="search is down"))
    for _ in range(2):
        verdict = checker.check("The sky is green.")
        assert verdict.claims[0].judgments[0].error and "search is down" in verdict.claims[0].judgments[0].error
        assert "judgment" not in verdict.usage.cache_hits


def test_components_that_do_not_opt_in_and_a_disabled_cache_are_judged_every_time(tmp_path: Path) -> None:
    plain = build_checker(
        agents=[Agent("a", StaticSource(), ScriptedVerifier())], cache={"path": str(tmp_path / "p.sqlite")}
    )
    assert all("judgment" not in plain.check("The sky is blue.").usage.cache_hits for _ in range(2))
    RETRIEVALS.clear()
    off = _checker(tmp_path, CountingSource(), enabled=False)
    off.check("The sky is blue.")
    off.check("The sky is blue.")
    assert RETRIEVALS["The sky is blue."] == 2


def test_transport_options_change_neither_reuse_nor_the_batch_fingerprint() -> None:
    from factcheck.agent import answer_options
    from factcheck.build import fingerprint
    from factcheck.config import Settings
    from factcheck.sources.wikipedia import WikipediaSource

    polite = WikipediaSource(user_agent="my-checker/1.0 (me@example.org)", timeout_s=5.0, concurrency=2)
    plain = WikipediaSource()
    assert answer_options(polite) == answer_options(plain) and "user_agent" not in answer_options(polite)
    assert answer_options(WikipediaSource(pages=3)) != answer_options(plain)  # what it finds still counts
    transport = {"user_agent": "my-checker/1.0 (me@example.org)", "timeout_s": 5.0, "concurrency": 2}
    prints = [fingerprint(Settings(profile="wiki", source_options={"wikipedia": o})) for o in (transport, {})]
    assert prints[0] == prints[1] and "me@example.org" not in json.dumps(prints[0])
    assert fingerprint(Settings(profile="wiki", source_options={"wikipedia": {"pages": 3}})) != prints[1]


@pytest.mark.parametrize("damage", ["folder in its place", "under a file"])
def test_a_cache_that_cannot_be_opened_is_said_once_and_every_judgment_is_made(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    if damage == "folder in its place":
        path = tmp_path / "c.sqlite"
        path.mkdir()
    else:
        (tmp_path / "plain-file").write_text("x")
        path = tmp_path / "plain-file" / "c.sqlite"
    RETRIEVALS.clear()
    checker = build_checker(agents=[Agent("a", CountingSource(), ReusableVerifier())], cache={"path": str(path)})
    with caplog.at_level(logging.WARNING, logger="factcheck.cache"):
        verdicts = [checker.check("The sky is blue."), checker.check("Grass is green.")]
    for verdict in verdicts:
        [judgment] = verdict.claims[0].judgments
        assert judgment.error is None and judgment.factuality is True  # judged, not dropped
        assert [n for n in verdict.usage.notes if n.startswith("cache not used")]  # each check is told
    warnings = [r.getMessage() for r in caplog.records if r.name == "factcheck.cache"]
    assert len(warnings) == 1 and "cannot be used" in warnings[0] and str(path) in warnings[0]
    assert RETRIEVALS["The sky is blue."] == 1 and RETRIEVALS["Grass is green."] == 1
