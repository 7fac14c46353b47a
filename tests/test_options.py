"""Declared settings (factcheck.options): coercion, range checks, environment and unknown keys."""

import sys
import types
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from factcheck import ConfigError
from factcheck.options import (
    Configurable,
    Constraint,
    check_fields,
    coerce_option,
    coerce_section,
    declared,
    env_values,
    reject_unknown,
    setting,
)
from factcheck.registry import get_registry


@dataclass(frozen=True)
class Section:
    """A section with one field of each kind the machinery knows."""

    SECTION: ClassVar[str] = "[demo]"

    workers: int = setting(4, minimum=1, env="DEMO_WORKERS")
    timeout_s: float = setting(5.0, minimum=0, min_open=True, unit="seconds", env=("OLD_TIMEOUT", "DEMO_TIMEOUT"))
    rate: float = setting(1.0, minimum=0, zero="off")
    share: float | None = setting(None, minimum=0, min_open=True, maximum=1, label="share of work")
    mode: str = setting("fast", choices=("fast", "slow"))
    enabled: bool = setting(True)
    hosts: tuple[str, ...] = setting(())
    note: str = "not declared, so not a setting"

    def __post_init__(self) -> None:
        check_fields(self)


def test_strings_and_toml_values_are_coerced_to_the_declared_types() -> None:
    section = coerce_section(
        Section,
        {"workers": "3", "timeout_s": 2, "share": "0.5", "enabled": "off", "hosts": "a, b,", "mode": "slow"},
    )
    assert (section.workers, section.timeout_s, section.share, section.enabled) == (3, 2.0, 0.5, False)
    assert section.hosts == ("a", "b") and section.mode == "slow"
    assert coerce_section(Section, {"workers": 6.0, "hosts": ["x"], "share": "none"}).workers == 6
    assert coerce_section(Section, {"share": "none"}).share is None
    assert coerce_section(Section) == Section()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"workers": "many"}, r"^\[demo\]: workers must be a whole number, got 'many'$"),
        ({"workers": 2.5}, "workers must be a whole number, got 2.5"),
        ({"workers": 0}, "workers must be a whole number of at least 1, got 0"),
        ({"timeout_s": 0}, "timeout_s must be a positive number of seconds, got 0.0"),
        ({"timeout_s": "inf"}, "timeout_s must be a positive number of seconds, got inf"),
        ({"rate": -1}, r"rate must be 0 \(off\) or a positive number, got -1.0"),
        ({"share": 1.5}, r"share of work must be a number in \(0, 1\], got 1.5"),
        ({"mode": "medium"}, r"unknown mode 'medium' \(available: fast, slow\)"),
        ({"enabled": "maybe"}, "enabled must be true or false, got 'maybe'"),
        ({"enabled": 2}, "enabled must be true or false, got 2"),
        ({"note": "x"}, r"unknown setting note \(known: enabled, hosts, mode, rate, share, timeout_s, workers\)"),
    ],
)
def test_wrong_values_name_the_setting_and_what_it_accepts(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        coerce_section(Section, values)


def test_values_set_from_python_are_checked_too() -> None:
    with pytest.raises(ConfigError, match=r"\[demo\]: workers must be a whole number of at least 1, got 0"):
        Section(workers=0)
    with pytest.raises(ConfigError, match="rate must be 0"):
        Section(rate=float("nan"))
    with pytest.raises(ConfigError, match="workers must be a whole number of at least 1, got True"):
        Section(workers=True)


def test_the_environment_sets_declared_fields_and_later_variables_win() -> None:
    env = {"DEMO_WORKERS": "7", "OLD_TIMEOUT": "1", "DEMO_TIMEOUT": "2.5", "UNRELATED": "x"}
    assert env_values(Section, env) == {"workers": 7, "timeout_s": 2.5}
    assert env_values(Section, {"DEMO_WORKERS": " ", "OLD_TIMEOUT": "3"}) == {"timeout_s": 3.0}
    with pytest.raises(ConfigError, match=r"^env: DEMO_WORKERS must be a whole number, got 'seven'$"):
        env_values(Section, {"DEMO_WORKERS": "seven"}, "env")


def test_declared_lists_the_settings_in_field_order() -> None:
    items = declared(Section)
    assert [d.name for d in items] == ["workers", "timeout_s", "rate", "share", "mode", "enabled", "hosts"]
    assert items[0].constraint == Constraint(minimum=1, env=("DEMO_WORKERS",))
    assert items[3].optional and items[3].base is float and not items[0].optional


def test_unknown_keys_are_named_with_the_known_ones() -> None:
    reject_unknown({"a": 1}, ("a", "b"))
    with pytest.raises(ConfigError, match=r"^f.toml: unknown \[x\] setting c, d \(known: a, b\)$"):
        reject_unknown({"d": 1, "c": 2, "a": 3}, ("b", "a"), "f.toml", "[x] setting")


@dataclass(frozen=True)
class Widget(Configurable):
    """A component whose option declares its bounds."""

    name = "widget"
    size: int = setting(3, minimum=1, maximum=10)


def test_a_component_option_declared_with_bounds_is_range_checked() -> None:
    assert Widget().configure(size="10").size == 10
    with pytest.raises(ConfigError, match=r"^widget: size must be a whole number in \[1, 10\], got 11$"):
        Widget().configure(size="11")
    with pytest.raises(ConfigError, match="widget: size must be a whole number in"):
        Widget(size=0)


# One option of each component family that declares its range with setting(...): a value at the bound
# is accepted, one past it refused with the shared message (the component's name, the option, the range).
@pytest.mark.parametrize(
    ("kind", "name", "option", "good", "bad", "message"),
    [
        ("sources", "serper", "top_k", "1", "0", "serper: top_k must be a whole number of at least 1, got 0"),
        ("sources", "serper", "retries", 0, -1, "serper: retries must be a whole number of at least 0, got -1"),
        ("sources", "serpapi", "timeout_s", "0.5", "0", "serpapi: timeout_s must be a positive number of seconds"),
        ("sources", "wikipedia", "pages", 20, 21, r"wikipedia: pages must be a whole number in \[1, 20\], got 21"),
        ("sources", "wikipedia", "concurrency", 1, 0, "wikipedia: concurrency must be a whole number of at least 1"),
        ("sources", "selfcheck", "samples", 20, 21, r"selfcheck: samples must be a whole number in \[1, 20\]"),
        ("sources", "selfcheck", "max_tokens", 1, 0, "selfcheck: max_tokens must be a whole number of at least 1"),
        ("sources", "corpus", "passage_words", 1, 0, "corpus: passage_words must be a whole number of at least 1"),
        ("verifiers", "llm", "temperature", 2, 2.5, r"llm: temperature must be a number in \[0, 2\], got 2.5"),
        ("verifiers", "llm", "max_passages", 1, 0, "llm: max_passages must be a whole number of at least 1"),
        ("verifiers", "nli", "min_relevance", 1, 1.5, r"nli: min_relevance must be a number in \[0, 1\], got 1.5"),
        ("verifiers", "nli", "threads", 0, -1, r"nli: threads must be 0 \(onnxruntime's default, one per core\) or a"),
        ("verifiers", "lexical", "max_confidence", 0.5, 0.4, r"lexical: max_confidence must be a number in \[0.5, 1\]"),
        ("extractors", "llm", "max_queries", 10, 11, r"llm extractor: max_queries must be a whole number in \[1, 10\]"),
        ("extractors", "llm", "max_tokens", 1, 0, "llm extractor: max_tokens must be a whole number of at least 1"),
        ("label_rules", "threshold", "claim_threshold", -1, 1.5, r"threshold: claim_threshold must be a number in"),
        ("label_rules", "compose", "claim_threshold", 1, -2, r"compose: claim_threshold must be a number in \[-1, 1\]"),
        ("label_rules", "probable", "claim_threshold", 1, 2, "probable: claim_threshold must be a number in"),
    ],
)
def test_a_registered_component_refuses_an_option_out_of_its_declared_range(
    kind: str, name: str, option: str, good: object, bad: object, message: str
) -> None:
    component = get_registry().get(kind, name)
    assert getattr(component.configure(**{option: good}), option) == float(str(good))
    with pytest.raises(ConfigError, match="^" + message):
        component.configure(**{option: bad})


@pytest.mark.parametrize(
    ("value", "current", "expected"),
    [("3", 1, 3), (3.0, 1, 3), ("yes", False, True), ("0.33, 0.67", (0.5,), (0.33, 0.67)), ([1], (), (1,))],
)
def test_coerce_option_reads_a_value_as_the_type_of_the_current_one(value: Any, current: Any, expected: Any) -> None:
    assert coerce_option("size", value, current) == expected
    assert type(coerce_option("size", value, current)) is type(expected)


def test_coerce_option_names_the_option_it_cannot_read() -> None:
    with pytest.raises(ConfigError, match=r"^option size: expected int, got 2.5$"):
        coerce_option("size", 2.5, 1)
    with pytest.raises(ConfigError, match=r"^option size: invalid literal"):
        coerce_option("size", "many", 1)


PLUGIN_MODULE = """
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from factcheck.sources.wikipedia import WikipediaSource

if TYPE_CHECKING:
    from collections import OrderedDict


@dataclasses.dataclass(frozen=True)
class Mine(WikipediaSource):
    name: str = "mine"
    seen: OrderedDict[str, int] | None = None
"""


def test_a_subclass_of_a_built_in_may_annotate_its_own_fields_with_type_checking_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = types.ModuleType("a_plugin_module")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(PLUGIN_MODULE, "a_plugin_module.py", "exec"), module.__dict__)
    mine = module.Mine
    assert mine().configure(pages="3").pages == 3  # the built-in's declared range still applies
    with pytest.raises(ConfigError, match=r"mine: pages must be a whole number in \[1, 20\], got 0"):
        mine(pages=0)
