"""The plugin system: hooks, entry points, env switches, clashes and broken plugins."""

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import factcheck
from factcheck.cli import cli
from factcheck.errors import ConfigError
from factcheck.eval.datasets import Dataset, DatasetReader, EvalItem, load_dataset
from factcheck.plugin import hooks
from factcheck.registry import PluginWarning, get_plugin_manager, get_registry, list_plugins, reset_plugins
from factcheck.scoring.labels import ThresholdRule
from factcheck.testing import ScriptedVerifier, StaticSource, registered
from factcheck.types import Label

ROOT = Path(__file__).resolve().parent.parent
BUILTIN_SOURCES = {"corpus", "given", "memory", "selfcheck", "wikipedia", "serper", "serpapi", "wikidata"}
HOOKS = sorted(name for name in dir(hooks) if name.startswith("register_"))


def make_distribution(site: Path, dist: str, entry_point: str, module: str, code: str) -> None:
    """Write an installed distribution (dist-info + module) that importlib.metadata will find on ``site``."""
    info = site / f"{dist.replace('-', '_')}-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(f"[factcheck]\n{entry_point} = {module}\n")
    (site / f"{module}.py").write_text(textwrap.dedent(code))


GOOD_PLUGIN = """
    from dataclasses import dataclass
    import factcheck

    @dataclass(frozen=True)
    class Src(factcheck.Source):
        name = "{name}"
        async def retrieve(self, claim):
            return []

    @factcheck.hookimpl
    def register_sources(register):
        register(Src())
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path for fake installed plugins; the plugin manager is rebuilt after the test.

    Entry points are read from this folder alone: a factcheck plugin the developer has
    installed must not change what these tests see.
    """

    def entry_points_of_site(**selection: str) -> importlib.metadata.EntryPoints:
        found = [ep for dist in importlib.metadata.distributions(path=[str(tmp_path)]) for ep in dist.entry_points]
        return importlib.metadata.EntryPoints(found).select(**selection)

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points_of_site)
    monkeypatch.delenv("FACTCHECK_LOAD_PLUGINS", raising=False)
    yield tmp_path
    monkeypatch.undo()
    reset_plugins(reload=True)


def reload() -> None:
    reset_plugins(reload=True)
    get_registry()


def test_builtins_register_through_the_hooks() -> None:
    assert set(factcheck.get_sources()) == BUILTIN_SOURCES
    assert set(factcheck.get_verifiers()) == {"lexical", "llm", "nli", "precedent", "wikidata"}
    assert set(factcheck.get_extractors()) == {"sentence", "llm"}
    assert set(factcheck.get_scorers()) == {"mafc", "average", "normsum", "majority", "pamas"}
    assert set(factcheck.get_label_rules()) == {"threshold", "compose", "probable"}
    assert set(factcheck.get_deliberators()) == {"off", "lase", "ecmr"}
    assert set(get_registry().components["memory_retrievers"]) == {"bm25", "hybrid"}
    assert len(get_registry().components["datasets"]) == 13  # each family module registers its own
    assert get_registry().plugins["factcheck.eval.datasets.liar"].registered == {"datasets": ["liar"]}


def test_entry_point_plugin_is_loaded_with_its_distribution(site: Path) -> None:
    make_distribution(site, "factcheck-good", "good", "fc_good", GOOD_PLUGIN.format(name="good-source"))
    reload()
    assert "good-source" in factcheck.get_sources()
    (info,) = list_plugins()
    assert info == {
        "name": "good",
        "version": "0.3",
        "distribution": "factcheck-good",
        "builtin": False,
        "registered": {"sources": ["good-source"]},
    }


def test_plugins_installed_outside_the_test_site_are_not_seen(
    site: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    users = tmp_path_factory.mktemp("users-site")  # a plugin the developer installed
    make_distribution(users, "factcheck-users", "users", "fc_users", GOOD_PLUGIN.format(name="users-source"))
    monkeypatch.syspath_prepend(str(users))
    assert "factcheck-users" in {d.metadata["Name"] for d in importlib.metadata.distributions()}  # it is installed
    make_distribution(site, "factcheck-good", "good", "fc_good", GOOD_PLUGIN.format(name="good-source"))
    reload()
    assert set(factcheck.get_sources()) - BUILTIN_SOURCES == {"good-source"}


def test_load_plugins_allow_list_and_disabled_block_list(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_distribution(site, "factcheck-a", "a", "fc_a", GOOD_PLUGIN.format(name="src-a"))
    make_distribution(site, "factcheck-b", "b", "fc_b", GOOD_PLUGIN.format(name="src-b"))
    monkeypatch.setenv("FACTCHECK_LOAD_PLUGINS", "factcheck-a")  # a distribution name works too
    reload()
    assert {"src-a"} == set(factcheck.get_sources()) - BUILTIN_SOURCES
    monkeypatch.setenv("FACTCHECK_LOAD_PLUGINS", "")
    reload()
    assert set(factcheck.get_sources()) == BUILTIN_SOURCES
    monkeypatch.delenv("FACTCHECK_LOAD_PLUGINS")
    monkeypatch.setenv("FACTCHECK_DISABLED_PLUGINS", "a")
    reload()
    assert {"src-b"} == set(factcheck.get_sources()) - BUILTIN_SOURCES


def test_a_plugin_that_fails_to_import_is_skipped_with_its_distribution_named(site: Path) -> None:
    make_distribution(site, "factcheck-broken", "broken", "fc_broken", "raise ImportError('needs libfoo')\n")
    make_distribution(site, "factcheck-fine", "fine", "fc_fine", GOOD_PLUGIN.format(name="fine-source"))
    with pytest.warns(PluginWarning, match=r"distribution factcheck-broken.*ImportError: needs libfoo"):
        reload()
    assert "fine-source" in factcheck.get_sources()
    broken = next(p for p in list_plugins() if p["name"] == "broken")
    assert "failed to import" in broken["problems"][0]


def test_a_misspelt_hook_is_caught_by_check_pending(site: Path) -> None:
    code = """
        import factcheck

        @factcheck.hookimpl
        def register_source(register):
            pass
    """
    make_distribution(site, "factcheck-typo", "typo", "fc_typo", code)
    with pytest.warns(PluginWarning, match=r"factcheck-typo.*register_source"):
        reload()
    assert not get_plugin_manager().has_plugin("typo")


def test_a_name_clash_is_reported_and_the_first_registration_kept() -> None:
    clash = "source 'corpus' is already registered by factcheck.sources.corpus"
    with pytest.warns(PluginWarning, match=clash), registered(StaticSource(name="corpus")):
        (problems,) = [p.problems for name, p in get_registry().plugins.items() if name.startswith("factcheck-testing")]
        assert clash in problems[0]
    assert type(factcheck.get_sources()["corpus"]).__name__ == "CorpusSource"


def test_the_command_line_shows_a_clash_as_one_clean_warning_line(tmp_path: Path) -> None:
    make_distribution(tmp_path, "factcheck-clash", "clash", "fc_clash", GOOD_PLUGIN.format(name="corpus"))
    # This checkout's factcheck first (not whichever one the console script was installed from), then the plugin.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)]), "FACTCHECK_LOAD_PLUGINS": "clash"}
    script = Path(sys.executable).parent / "factcheck"
    result = subprocess.run([str(script), "plugins"], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    # Not Python's "path/manager.py:123: PluginWarning: ..." with the source line under it.
    refused = (
        "clash: source 'corpus' is already registered by factcheck.sources.corpus (a built-in); "
        "ignored: register(obj, replace=True) replaces it"
    )
    assert result.stderr == f"warning: {refused}\n"
    (clash,) = [p for p in json.loads(result.stdout) if p["name"] == "clash"]
    assert clash["problems"] == [refused]


REPLACING_PLUGIN = """
    from dataclasses import dataclass
    from factcheck.plugin import Source, hookimpl

    @dataclass(frozen=True)
    class Mine(Source):
        name = "{name}"
        async def retrieve(self, claim):
            return []

    @hookimpl
    def register_sources(register):
        register(Mine(), replace=True)
"""


def test_a_plugin_replaces_a_builtin_it_names_with_replace_true_and_says_so_in_the_listing(site: Path) -> None:
    make_distribution(site, "factcheck-mycorpus", "mycorpus", "fc_mycorpus", REPLACING_PLUGIN.format(name="corpus"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginWarning)  # a replacement asked for by name warns of nothing
        reload()
    assert type(factcheck.get_sources()["corpus"]).__module__ == "fc_mycorpus"
    (mine,) = list_plugins()
    assert mine["registered"] == {"sources": ["corpus"]}
    assert mine["replaces"] == {"sources": ["corpus"]}
    assert get_registry().plugins["factcheck.sources.corpus"].registered.get("sources") == []  # no longer its


def test_replace_true_replaces_only_a_builtin_never_another_plugins_component(site: Path) -> None:
    make_distribution(site, "factcheck-first", "a-first", "fc_first", GOOD_PLUGIN.format(name="shared"))
    make_distribution(site, "factcheck-second", "b-second", "fc_second", REPLACING_PLUGIN.format(name="shared"))
    refused = (
        "b-second: source 'shared' is already registered by a-first; ignored: replace=True replaces only a built-in"
    )
    with pytest.warns(PluginWarning, match=re.escape(refused)):
        reload()
    assert type(factcheck.get_sources()["shared"]).__module__ == "fc_first"


def test_registering_the_wrong_type_is_refused() -> None:
    class Plugin:
        @factcheck.hookimpl
        def register_sources(self, register):  # type: ignore[no-untyped-def]
            register(ThresholdRule())

    with (
        pytest.warns(PluginWarning, match="register_sources expects a Source, got ThresholdRule"),
        registered(Plugin()),
    ):
        assert "threshold" not in factcheck.get_sources()


def test_a_hook_that_raises_does_not_break_the_others() -> None:
    class Plugin:
        @factcheck.hookimpl
        def register_sources(self, register):  # type: ignore[no-untyped-def]
            raise RuntimeError("boom")

    with pytest.warns(PluginWarning, match="register_sources raised RuntimeError: boom"), registered(Plugin()):
        assert "corpus" in factcheck.get_sources()


def test_hook_register_sources() -> None:
    with registered(StaticSource(name="extra")):
        assert isinstance(factcheck.get_sources()["extra"], StaticSource)
    assert "extra" not in factcheck.get_sources()


def test_hook_register_verifiers() -> None:
    with registered(ScriptedVerifier(name="always")):
        assert isinstance(factcheck.get_verifiers()["always"], ScriptedVerifier)


def test_hook_register_extractors() -> None:
    @dataclass(frozen=True)
    class Lines(factcheck.ClaimExtractor):
        name = "lines"

        def extract(self, text: str) -> list[factcheck.Claim]:
            return [factcheck.Claim(f"c{i}", line) for i, line in enumerate(text.splitlines(), 1)]

    with registered(Lines()):
        checker = factcheck.build_checker(
            agents=[factcheck.Agent("s", StaticSource(), ScriptedVerifier())], extractor="lines"
        )
        verdict = checker.check("one claim\nsecond claim")
        assert [c.claim.text for c in verdict.claims] == ["one claim", "second claim"]


def test_hook_register_scorers() -> None:
    @dataclass(frozen=True)
    class Pessimist(factcheck.Scorer):
        name = "pessimist"

        def score_votes(self, votes):  # type: ignore[no-untyped-def]
            return 0.0

    with registered(Pessimist()):
        assert "pessimist" in factcheck.get_scorers()
        result = CliRunner().invoke(
            cli,
            ["check", "Obesity increases the risk of type 2 diabetes.", "--scorer", "pessimist", "--format", "json"],
        )
        assert result.exit_code == 0, result.output
        assert '"score": 0.0' in result.output


def test_hook_register_commands() -> None:
    @click.command(name="hello")
    def hello() -> None:
        click.echo("hello from a plugin")

    class Plugin:
        @factcheck.hookimpl
        def register_commands(self, register):  # type: ignore[no-untyped-def]
            register(hello)

    with registered(Plugin()):
        result = CliRunner().invoke(cli, ["hello"])
        assert result.exit_code == 0 and result.output == "hello from a plugin\n"
    assert CliRunner().invoke(cli, ["hello"]).exit_code != 0


def test_hook_register_deliberators() -> None:
    from factcheck.plugin import stop

    @dataclass(frozen=True)
    class Hesitant(factcheck.Deliberator):
        """Sends every claim on, then stops at once: the gate's reason and the stop are recorded."""

        name: str = "hesitant"

        def gate(self, state: factcheck.DeliberationState) -> str | None:
            return f"{state.votes} vote(s) are never enough"

        def next_action(self, state, steps):  # type: ignore[no-untyped-def]
            return stop("thought better of it")

    class Plugin:
        @factcheck.hookimpl
        def register_deliberators(self, register):  # type: ignore[no-untyped-def]
            register(Hesitant())

    with registered(Plugin()):
        assert isinstance(factcheck.get_deliberators()["hesitant"], Hesitant)
        result = CliRunner().invoke(
            cli,
            ["check", "Statins lower LDL cholesterol.", "--profile", "baseline", "--deliberation", "hesitant",
             "-o", "max_steps=1", "--format", "json", "--no-cache"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        (claim,) = json.loads(result.output)["claims"]
        record = claim["deliberation"]
        assert (record["policy"], record["options"]["max_steps"]) == ("hesitant", 1)
        assert record["gated"] == "1 vote(s) are never enough" and record["stopped"] == "thought better of it"
    assert "hesitant" not in factcheck.get_deliberators()


def test_hook_register_memory_retrievers(tmp_path: Path) -> None:
    from factcheck.build import build_checker
    from factcheck.memory.retrieval import MemoryRetriever

    @dataclass(frozen=True)
    class Newest(MemoryRetriever):
        """Every past claim, the newest first, whatever it says."""

        name = "newest"

        def rank(self, past, claim):  # type: ignore[no-untyped-def]
            return list(reversed(range(len(past))))

    class Plugin:
        @factcheck.hookimpl
        def register_memory_retrievers(self, register):  # type: ignore[no-untyped-def]
            register(Newest())

    memory = tmp_path / "memory.sqlite"
    factcheck.MemoryStore(memory).add(factcheck.Correction("Aspirin thins the blood.", "TRUE", "key-1", "feedback"))
    text = "Comets are made of ice."  # not a word in common: BM25 finds nothing
    with registered(Plugin()):
        for retriever, found in (("newest", ["factcheck-memory:1/TRUE"]), ("bm25", [])):
            checker = build_checker(memory={"path": str(memory), "retriever": retriever}, only_agents=["memory"])
            (judgment,) = checker.check(text).claims[0].judgments
            assert [e.url for e in judgment.evidence] == found, retriever
    with pytest.raises(factcheck.UnknownComponentError, match="newest"):
        build_checker(memory={"path": str(memory), "retriever": "newest"}).check(text)


def read_two_texts(data_dir: Path, seed: int = 0) -> Dataset:
    """A dataset a plugin ships: two one-claim texts, no data file needed."""
    items = tuple(EvalItem(f"p{n}-{seed}", f"Claim {n}.", (Label.TRUE, Label.FALSE)[n], ()) for n in range(2))
    return Dataset("two-texts", 2, items, False, f"two texts, seed {seed}")


def test_hook_register_datasets(tmp_path: Path) -> None:
    with registered(DatasetReader("two-texts", read_two_texts)):
        assert "two-texts" in get_registry().components["datasets"]
        data = load_dataset("two-texts", tmp_path, seed="3")  # options coerced as the built-ins' are
        assert [item.id for item in data.items] == ["p0-3", "p1-3"]
        # factcheck eval looks the name up the same way: the reader is found, its option checked
        result = CliRunner().invoke(cli, ["eval", "two-texts", "--data-dir", str(tmp_path), "--dataset-option", "x=1"])
        assert "dataset 'two-texts': unknown option x (options: seed)" in result.output
    with pytest.raises(ConfigError, match=r"unknown dataset 'two-texts' \(available: anli, "):
        load_dataset("two-texts", tmp_path)


def test_an_installed_plugin_s_dataset_is_found_by_load_dataset(site: Path) -> None:
    code = """
        import factcheck
        from factcheck.eval.datasets import Dataset, DatasetReader, EvalItem
        from factcheck.types import Label

        def read(data_dir, size: int = 1):
            items = tuple(EvalItem(f"i{n}", "A claim.", Label.TRUE, ()) for n in range(size))
            return Dataset("extra-set", 2, items, False, "from a plugin")

        @factcheck.hookimpl
        def register_datasets(register):
            register(DatasetReader("extra-set", read))
    """
    make_distribution(site, "factcheck-sets", "sets", "fc_sets", code)
    reload()
    assert len(load_dataset("extra-set", site, size="4").items) == 4
    (info,) = list_plugins()
    assert info["registered"] == {"datasets": ["extra-set"]}


def test_a_dataset_name_clash_keeps_the_built_in_reader(tmp_path: Path) -> None:
    clash = "dataset 'liar' is already registered by factcheck.eval.datasets.liar"
    with (
        pytest.warns(PluginWarning, match=clash),
        registered(DatasetReader("liar", read_two_texts)),
        pytest.raises(factcheck.errors.InputError, match="missing data file"),
    ):
        load_dataset("liar", tmp_path)  # still LIAR's reader, which wants liar/valid.jsonl


def test_trace_plugins_writes_each_hook_call_to_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Raises:
        @factcheck.hookimpl
        def register_sources(self, register):  # type: ignore[no-untyped-def]
            raise RuntimeError("boom")

    monkeypatch.setenv("FACTCHECK_TRACE_PLUGINS", "1")
    reset_plugins(reload=True)
    try:
        with pytest.warns(PluginWarning), registered(Raises(), name="tracer"):
            get_registry()
    finally:
        monkeypatch.delenv("FACTCHECK_TRACE_PLUGINS")
        reset_plugins(reload=True)
    err = capsys.readouterr().err.splitlines()
    assert "factcheck plugins: register_sources(register) -> factcheck.sources.corpus" in err
    assert "factcheck plugins: register_datasets(register) -> factcheck.eval.datasets.scifact" in err
    assert "factcheck plugins: register_sources raised RuntimeError: boom" in err
    # a plugin registered at run time is traced too (registered() numbers its plugins: tracer-N)
    assert any(re.fullmatch(r"factcheck plugins: register_sources\(register\) -> tracer-\d+", line) for line in err)
    assert all(line.startswith("factcheck plugins: ") for line in err)  # nothing else: no warning reaches stderr
    get_registry()  # untraced once the variable is gone
    assert capsys.readouterr().err == ""


def test_every_hook_has_a_test_and_documentation() -> None:
    assert HOOKS == [
        "register_commands",
        "register_datasets",
        "register_deliberators",
        "register_extractors",
        "register_memory_retrievers",
        "register_scorers",
        "register_sources",
        "register_verifiers",
    ]
    docs = (ROOT / "docs" / "plugins.md").read_text()
    tests = Path(__file__).read_text()
    for hook in HOOKS:
        assert f"def test_hook_{hook}(" in tests, f"no test for {hook}"
        assert re.search(rf"^### `{hook}", docs, re.MULTILINE), f"{hook} is not documented in docs/plugins.md"


def test_a_plugin_that_exits_on_import_is_skipped(site: Path) -> None:
    make_distribution(site, "factcheck-exits", "exits", "fc_exits", "import sys\nsys.exit(3)\n")
    with pytest.warns(PluginWarning, match=r"factcheck-exits.*SystemExit"):
        reload()
    assert "corpus" in factcheck.get_sources()


def test_registered_blocks_nest() -> None:
    with registered(StaticSource(name="outer")):
        with registered(StaticSource(name="inner")):
            assert {"outer", "inner"} <= set(factcheck.get_sources())
        assert "inner" not in factcheck.get_sources() and "outer" in factcheck.get_sources()


def guide_block_after(marker: str) -> str:
    """The Python block of docs/plugins.md that follows ``marker`` (an HTML comment)."""
    guide = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    after = guide[guide.index(marker) :]
    return after[after.index("```python\n") + len("```python\n") : after.index("\n```\n")]


def test_a_plugin_source_calls_its_service_through_the_service_layer_with_retries_and_the_cache(
    tmp_path: Path,
) -> None:
    from factcheck.testing.http import FakeServer, Response

    namespace: dict[str, object] = {"__name__": "fc_dictionary"}
    exec(guide_block_after("runs this block against a fake service on 127.0.0.1"), namespace)  # the guide's plugin
    source_class = namespace["DictionarySource"]
    hit = {"term": "Eiffel Tower", "definition": "The Eiffel Tower is in Paris.", "url": "https://d.example/e"}
    cache = {"path": str(tmp_path / "cache.sqlite")}
    with FakeServer() as server:
        server.route("GET", "/search", lambda request: Response({"hits": [hit]}))
        server.queue("GET", "/search", Response({"error": "busy"}, status=503, headers={"Retry-After": "0"}))
        source = source_class(base_url=server.url)  # type: ignore[operator]
        verifier = ScriptedVerifier(rules={"Paris": (True, 0.9)})

        first = factcheck.build_checker(agents=[factcheck.Agent("d", source, verifier)], cache=cache)
        verdict = first.check("The Eiffel Tower is in Paris.")
        (judgment,) = verdict.claims[0].judgments
        assert [e.text for e in judgment.evidence] == ["The Eiffel Tower is in Paris."]
        calls = server.calls("/search")
        assert len(calls) == 2  # the 503 retried, as the built-ins' requests are
        assert calls[-1].query["q"] == ["The Eiffel Tower is in Paris."]
        assert calls[-1].headers["User-Agent"].startswith("factcheck-agents/")
        assert verdict.usage.search_calls == 2

        again = factcheck.build_checker(agents=[factcheck.Agent("d", source, verifier)], cache=cache)
        repeated = again.check("The Eiffel Tower is in Paris.")
        assert len(server.calls("/search")) == 2  # answered from the check's cache: no request sent
        assert repeated.usage.cache_hits["dictionary"] == 1
        assert repeated.claims[0].judgments[0].evidence == judgment.evidence
