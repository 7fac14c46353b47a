"""Settings from factcheck.toml, the environment and overrides; component options."""

from pathlib import Path

import pytest

from factcheck import AgentSpec, ConfigError, load_settings
from factcheck.options import parse_option_pairs
from factcheck.scoring.labels import ThresholdRule
from factcheck.scoring.mafc import MAFCScorer
from factcheck.sources.corpus import CorpusSource

CONFIG = """
profile = "offline"

[agents.corpus]
top_k = 5
verifier_options = { min_relevance = 0.4 }

[agents.notes]
source = "corpus"
path = "notes/"

[scoring]
scorer = "normsum"
labels = "compose"
claim_threshold = 0.6

[pipeline]
max_concurrency = 3
"""


def test_config_file_sets_agents_scoring_and_pipeline(tmp_path: Path) -> None:
    path = tmp_path / "factcheck.toml"
    path.write_text(CONFIG)
    settings = load_settings(path, env={})
    agents = {a.name: a for a in settings.resolved_agents()}
    assert agents["corpus"] == AgentSpec("corpus", "corpus", "nli", {"top_k": 5}, {"min_relevance": 0.4})
    assert agents["notes"] == AgentSpec("notes", "corpus", "nli", {"path": "notes/"})
    assert (settings.scorer, settings.labels, dict(settings.scoring_options)) == (
        "normsum",
        "compose",
        {"claim_threshold": 0.6},
    )
    assert settings.max_concurrency == 3


def test_a_file_with_text_thresholds_and_no_rule_keeps_the_threshold_rule(tmp_path: Path) -> None:
    from factcheck.build import build_checker

    path = tmp_path / "factcheck.toml"
    path.write_text("[scoring]\nthresholds = [0.4, 0.6]\n")
    assert load_settings(path, env={}).labels == "threshold"  # as before compose became the default
    assert isinstance(build_checker(config=path).labels, ThresholdRule)
    (tmp_path / "none.toml").write_text("[scoring]\n")
    assert load_settings(tmp_path / "none.toml", env={}).labels == "compose"
    with pytest.raises(ConfigError, match="thresholds are the threshold rule's: add --labels threshold"):
        build_checker(scoring_options={"thresholds": "0.5"})


def test_environment_then_overrides_win(tmp_path: Path) -> None:
    path = tmp_path / "factcheck.toml"
    path.write_text(CONFIG)
    settings = load_settings(path, env={"FACTCHECK_SCORER": "average", "FACTCHECK_MAX_CONCURRENCY": "9"})
    assert settings.scorer == "average" and settings.max_concurrency == 9
    assert load_settings(path, env={"FACTCHECK_SCORER": "average"}, scorer="majority").scorer == "majority"


def test_config_in_the_working_directory_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "factcheck.toml").write_text('[scoring]\nscorer = "majority"\n')
    monkeypatch.chdir(tmp_path)
    assert load_settings(env={}).scorer == "majority"


def test_corpus_and_source_overrides_build_agents() -> None:
    settings = load_settings(env={}, corpus="docs.jsonl", sources=["glossary"])
    agents = {a.name: a for a in settings.resolved_agents()}
    assert agents["corpus"].source_options == {"path": "docs.jsonl"}
    assert agents["glossary"] == AgentSpec("glossary", "glossary", "nli")
    baseline = load_settings(env={}, profile="baseline", sources=["glossary"]).resolved_agents()
    assert [(a.name, a.verifier) for a in baseline] == [("corpus", "lexical"), ("glossary", "lexical")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("colour = 'blue'", "unknown setting colour"),
        ("profile = 'nope'", "unknown profile 'nope'"),
        ("[agents.x]\nverifier = 'lexical'", r"\[agents.x\] needs a 'source'"),
        ("profile = ", "invalid TOML"),
    ],
)
def test_bad_config_gives_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "factcheck.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_settings(path, env={})


def test_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(tmp_path / "nope.toml", env={})


def test_string_options_are_coerced_to_the_fields_types() -> None:
    assert ThresholdRule().configure(thresholds="0.2, 0.8").thresholds == (0.2, 0.8)
    assert CorpusSource().configure(top_k="7").top_k == 7
    assert MAFCScorer().configure(bounds="reference").bounds == "reference"
    with pytest.raises(ConfigError, match=r"mafc: unknown option colour \(options: bounds\)"):
        MAFCScorer().configure(colour="red")
    with pytest.raises(ConfigError, match="option top_k"):
        CorpusSource().configure(top_k="many")


def test_option_pairs() -> None:
    assert parse_option_pairs(["bounds=reference", "claim-threshold=0.6"]) == {
        "bounds": "reference",
        "claim_threshold": "0.6",
    }
    with pytest.raises(ConfigError, match="key=value"):
        parse_option_pairs(["bounds"])


def test_profiles_switch_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "factcheck.toml"
    path.write_text('profile = "paper"\n')
    paper = ["web", "wikipedia", "selfcheck", "wikidata"]
    assert [a.name for a in load_settings(path, env={}).resolved_agents()] == paper
    assert [a.name for a in load_settings(path, env={}, profile="offline").resolved_agents()] == ["corpus"]
    assert [a.name for a in load_settings(env={"FACTCHECK_PROFILE": "paper"}).resolved_agents()] == paper


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FACTCHECK_MAX_CONCURRENCY": "0"}, "max_concurrency must be a whole number of at least 1"),
        ({"FACTCHECK_MAX_CONCURRENCY": "many"}, "bad FACTCHECK_"),
        ({"FACTCHECK_AGENT_TIMEOUT_S": "0"}, "agent_timeout_s must be a positive number"),
        ({"FACTCHECK_PROFILE": "nope"}, "unknown profile"),
    ],
)
def test_bad_environment_values_are_rejected(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(env=env)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[pipeline]\nmax_concurrency = "x"', "max_concurrency must be a whole number"),
        ("[pipeline]\nmax_concurency = 3", "unknown \\[pipeline\\] setting max_concurency"),
        ('scoring = "mafc"', "\\[scoring\\] must be a table"),
        ("[agents]\ncorpus = 3", "\\[agents.corpus\\] must be a table"),
    ],
)
def test_wrongly_typed_config_is_a_config_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "factcheck.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_settings(path, env={})


def test_non_string_options_are_type_checked() -> None:
    with pytest.raises(ConfigError, match=r"option top_k: expected int, got 2\.5"):
        CorpusSource().configure(top_k=2.5)
    assert CorpusSource().configure(top_k=4.0).top_k == 4
    with pytest.raises(ConfigError, match="thresholds must be a number in"):
        ThresholdRule().configure(thresholds="nan")
    with pytest.raises(ConfigError, match="thresholds must be a number in"):
        ThresholdRule().configure(thresholds="5,9")


def test_independence_is_a_pipeline_setting(tmp_path: Path) -> None:
    path = tmp_path / "factcheck.toml"
    path.write_text("[pipeline]\nindependence = 0.5\n")
    assert load_settings(path, env={}).independence == 0.5
    assert load_settings(env={}).independence is None  # off unless set
    assert load_settings(path, env={}, independence=1).independence == 1
    path.write_text("[pipeline]\nindependence = 0\n")
    with pytest.raises(ConfigError, match=r"factcheck.toml: independence threshold must be a number in \(0, 1\], got"):
        load_settings(path, env={})


def test_every_declared_variable_sets_its_setting() -> None:
    from factcheck.config import Settings
    from factcheck.options import declared

    items = [d for d in declared(Settings) if d.constraint.env]
    values = {"profile": "baseline", "max_concurrency": "3", "agent_timeout_s": "7", "max_claims": "9"}
    env = {d.constraint.env[0]: values.get(d.name, f"my-{d.name}") for d in items}
    settings = load_settings(env=env)
    assert (settings.profile, settings.max_concurrency, settings.agent_timeout_s, settings.max_claims) == (
        "baseline",
        3,
        7.0,
        9,
    )
    assert (settings.corpus, settings.extractor, settings.scorer, settings.labels) == (
        "my-corpus",
        "my-extractor",
        "my-scorer",
        "my-labels",
    )
    assert {d.constraint.env[0] for d in items} >= {"FACTCHECK_MAX_CONCURRENCY", "FACTCHECK_AGENT_TIMEOUT_S"}
