"""Each check-worthiness filter's rule on its borderline cases, as docs/extraction.md writes it, and
``extract`` and ``check`` keeping and skipping the same sentences (issue 40 item 10)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from factcheck.cli import cli
from factcheck.extractors.sentence import SentenceExtractor

# (sentence, the rule that skips it, or None when it is kept): pairs of the same kind on either side of a rule.
BORDERLINE = [
    # prediction: a verb of expecting with what is expected, in any tense or voice; a figure keeps it.
    ("The ministry expects the deficit to fall.", "prediction"),
    ("Growth is expected to slow.", "prediction"),
    ("Prices are set to rise.", "prediction"),
    ("The deficit will fall.", "prediction"),
    ("It may rain tomorrow.", "prediction"),
    ("The ministry expected the deficit to fall in 2020.", None),
    ("As expected, the deficit fell.", None),
    ("Einstein predicted gravitational waves.", None),  # a prediction made in the past is on the record
    ("Nobody expected the Spanish Inquisition.", None),
    ("The shuttle was poised to launch when the fault was found.", None),
    ("Models predict that vaccination has a large effect on transmission.", None),  # a finding, reported
    ("Smokers are more likely to develop lung cancer.", None),
    ("We will cut the tax by 5 percent next year.", None),
    ("Statins may lower the risk of stroke.", None),
    # opinion: a judging word as what the subject is, not what it is for something.
    ("Pizza is the best food.", "opinion"),
    ("Olive oil is good for the heart.", None),
    # obligation: should / must, or need / want to with I, we, you.
    ("The town should build more cycle lanes.", "obligation"),
    ("Hillary wants to raise the minimum wage.", None),
    # first_person: the writer's feelings, not their deeds on record.
    ("I love this city.", "first_person"),
    ("We passed the bill in 2010.", None),
    ("Is the Earth flat?", "question"),
    ("Remember to switch off the heating.", "imperative"),
    ("Exercise shortens life expectancy in children.", None),
    ("They really do that sort of thing.", "no_content"),
    ("Smoking kills.", None),
    ("Thank you.", "boilerplate"),
]


@pytest.mark.parametrize(("sentence", "rule"), BORDERLINE)
def test_each_filter_keeps_and_skips_as_documented(sentence: str, rule: str | None) -> None:
    found = SentenceExtractor().extraction(sentence)
    assert [s.rule for s in found.skipped] == ([rule] if rule else [])
    assert len(found.claims) == (0 if rule else 1)


def test_extract_and_check_keep_and_skip_the_same_sentences() -> None:
    text = "\n\n".join(sentence for sentence, _ in BORDERLINE)
    runner = CliRunner()
    extracted = json.loads(runner.invoke(cli, ["extract", text, "--format", "json"]).output)
    checked = json.loads(runner.invoke(cli, ["check", text, "--format", "json"]).output)
    kept = [s for s, rule in BORDERLINE if rule is None]
    assert [c["text"] for c in extracted["claims"]] == [c["text"] for c in checked["claims"]] == kept
    skipped = [(s, rule) for s, rule in BORDERLINE if rule]
    assert [(s["text"], s["rule"]) for s in extracted["skipped"]] == skipped
    assert [(s["text"], s["rule"]) for s in checked["skipped"]] == skipped
