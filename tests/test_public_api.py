"""The public API is what factcheck/__init__.py exports: nothing more, nothing missing."""

from __future__ import annotations

import inspect

import factcheck
from factcheck import errors


def test_every_public_name_of_the_package_is_exported_and_every_export_exists() -> None:
    public = {
        name
        for name, value in vars(factcheck).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    }
    assert public == set(factcheck.__all__)


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
