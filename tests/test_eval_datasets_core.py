"""The readers' core: options coerced as every component's are, and READERS kept as a live view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from factcheck.errors import ConfigError
from factcheck.eval.datasets import READERS, Dataset, DatasetReader, EvalItem, load_dataset
from factcheck.registry import get_datasets
from factcheck.types import Label


def read_counted(data_dir: Path, size: int = 2, split: str = "dev", shuffle: bool = False) -> Dataset:
    items = tuple(EvalItem(f"{split}-{n}", "A claim.", Label.TRUE, ()) for n in range(size))
    return Dataset("counted", 2, items, False, f"{size} {split} shuffle={shuffle}")


COUNTED = DatasetReader("counted", read_counted)


def test_options_are_the_keyword_parameters_after_data_dir() -> None:
    assert COUNTED.options() == {"size": 2, "split": "dev", "shuffle": False}


@pytest.mark.parametrize(
    ("options", "description"),
    [
        ({"size": "3"}, "3 dev shuffle=False"),  # strings from --dataset-option
        ({"size": 3.0}, "3 dev shuffle=False"),  # a whole float, as options.py reads one (TOML)
        ({"shuffle": "yes", "split": "test"}, "2 test shuffle=True"),
    ],
)
def test_option_values_are_coerced_to_the_default_type(options: dict[str, Any], description: str) -> None:
    assert COUNTED.load(Path("."), **options).description == description


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sise": 1}, "dataset 'counted': unknown option sise (options: size, split, shuffle)"),
        ({"size": "many"}, "dataset 'counted': option size must be an integer, got 'many'"),
        ({"split": 3}, "dataset 'counted': option split must be str, got 3"),
        ({"shuffle": "maybe"}, "dataset 'counted': option shuffle must be true or false, got 'maybe'"),
    ],
)
def test_a_wrong_option_says_which_and_why(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as error:
        COUNTED.load(Path("."), **options)
    assert str(error.value) == message


def test_a_reader_taking_any_options_gets_them_unchecked() -> None:
    seen: dict[str, Any] = {}

    def read(data_dir: Path, **options: Any) -> Dataset:
        seen.update(options)
        return read_counted(data_dir)

    DatasetReader("any", read).load(Path("."), anything="1")
    assert seen == {"anything": "1"}


def test_readers_is_a_live_view_that_registers_through_the_hook(tmp_path: Path) -> None:
    assert set(READERS) == set(get_datasets()) and READERS["liar"] is get_datasets()["liar"].read
    READERS["counted"] = read_counted
    try:
        assert get_datasets()["counted"].read is read_counted
        assert load_dataset("counted", tmp_path, size="1").items[0].id == "dev-0"
    finally:
        del READERS["counted"]
    assert "counted" not in READERS and "counted" not in get_datasets()
    with pytest.raises(KeyError):
        del READERS["liar"]  # a plugin's reader is not READERS' to take back
    assert "liar" in READERS
