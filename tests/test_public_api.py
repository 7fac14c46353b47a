"""The public API: what factcheck/__init__.py exports (nothing more, nothing missing), and the door for
plugin authors, factcheck.plugin, pinned name by name."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import factcheck
import factcheck.plugin
from factcheck import errors

INIT = Path(factcheck.__file__)
TYPING_HELPERS = {"annotations", "TYPE_CHECKING", "Any"}  # what the module's own code imports to run

# What a plugin author implements or calls. Adding a name is a decision: add it here, and to docs/plugins.md.
PLUGIN_DOOR = [
    "SYNC_WORKERS",
    "Action",
    "CheckContext",
    "ClaimExtractor",
    "Dataset",
    "DatasetReader",
    "DeliberationState",
    "Deliberator",
    "EvalItem",
    "GoldClaim",
    "LabelRule",
    "MemoryRetriever",
    "Scorer",
    "Source",
    "Verifier",
    "cached",
    "hookimpl",
    "record_cache_hit",
    "record_call",
    "record_llm",
    "record_note",
    "record_search",
    "request_json",
    "secret",
    "setting",
    "split_sentences",
    "stop",
    "taken",
]


def public_names(module: object) -> set[str]:
    return {
        name
        for name in dir(module)
        if not name.startswith("_") and not inspect.ismodule(getattr(module, name)) and name not in TYPING_HELPERS
    }


def test_every_public_name_of_the_package_is_exported_and_every_export_exists() -> None:
    assert public_names(factcheck) == set(factcheck.__all__)
    for name in factcheck.__all__:
        assert getattr(factcheck, name) is not None


def test_each_exported_name_is_imported_for_type_checkers_from_where_it_is_loaded_at_run_time() -> None:
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    (checking,) = [n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
    typed = {
        (node.module, alias.name) for node in checking.body if isinstance(node, ast.ImportFrom) for alias in node.names
    }
    loaded = {(module, name) for module, names in factcheck._HOMES.items() for name in names}
    assert typed == loaded
    assert {name for _, name in loaded} == set(factcheck.__all__)
    for module, name in loaded:
        assert getattr(factcheck, name) is getattr(__import__(module, fromlist=[name]), name)


def test_a_misspelt_name_is_an_attribute_error_naming_it() -> None:
    try:
        factcheck.Chekcer  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "Chekcer" in str(exc)
    else:
        raise AssertionError("factcheck.Chekcer resolved")


def test_the_plugin_door_exports_exactly_the_pinned_names() -> None:
    assert factcheck.plugin.__all__ == PLUGIN_DOOR
    assert public_names(factcheck.plugin) == set(PLUGIN_DOOR)


def test_a_name_both_doors_export_is_one_object() -> None:
    shared = set(PLUGIN_DOOR) & set(factcheck.__all__)
    assert {"Source", "Verifier", "ClaimExtractor", "Scorer", "hookimpl", "CheckContext"} <= shared
    for name in shared:
        assert getattr(factcheck, name) is getattr(factcheck.plugin, name)


def test_every_error_the_library_raises_on_purpose_comes_from_one_module_and_is_exported() -> None:
    defined = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, errors.FactcheckError) and value.__module__ == errors.__name__
    }
    assert {"BudgetReachedError", "LLMRefusedError", "SourceRefusedError"} <= defined
    assert defined <= set(factcheck.__all__)
    for name in defined:
        assert getattr(factcheck, name) is getattr(errors, name)
