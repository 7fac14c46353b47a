"""What a 422 says: pydantic's validation errors of a request body, in plain words.

Each error becomes ``{"field": ..., "message": ...}``: the field as a dotted path
(``text``, ``result.claims``; ``body`` for the body as a whole) and one sentence
that names it and says what it must be (``"text" must be a string, not a
number``, ``missing field "text"``, ``unknown field "txt" (did you mean
"text"?)``). A body that is no JSON object at all (empty, an array, sent as
``text/plain``) is said as what the body is: :func:`body_problem`.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

# What a pydantic type error expected, in JSON's words.
EXPECTED = {
    "string_type": "a string",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "list_type": "an array",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}
OBJECT_TYPES = ("dict_type", "model_type", "model_attributes_type")
SHOWN_CHARS = 40  # of a value quoted back to the caller


def json_kind(value: Any) -> str:
    """What ``value`` is in JSON: ``null``, ``a number``, ``an array``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def shown(value: Any) -> str:
    """``value`` as JSON, cut to :data:`SHOWN_CHARS` characters."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def field_of(error: Mapping[str, Any]) -> str:
    """The dotted path of the field ``error`` is about; ``body`` for the body itself."""
    return ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"


def fields_hint(model: type[BaseModel] | None) -> str:
    """`` (fields: text, url, ...)``: what ``model`` takes; empty when it is not known."""
    return f" (fields: {', '.join(model.model_fields)})" if model is not None else ""


def body_problem(error: Mapping[str, Any], model: type[BaseModel] | None, content_type: str) -> str | None:
    """What is wrong with the body as a whole (``empty: ...``, ``a JSON array, not an object``), or ``None``
    when ``error`` is about one of its fields."""
    if tuple(error.get("loc", ())) != ("body",):
        return None
    kind, given = error.get("type", ""), error.get("input")
    if kind == "missing":
        return f"empty: send a JSON object{fields_hint(model)}"
    if kind in OBJECT_TYPES:
        if isinstance(given, bytes):  # not parsed: its Content-Type is not JSON's
            sent = content_type.split(";")[0].strip() or "no Content-Type"
            return f"not read as JSON (sent as {sent}): send a JSON object with Content-Type: application/json"
        return f"{json_kind(given)}, not an object: send a JSON object{fields_hint(model)}"
    return None


def plain(error: Mapping[str, Any], model: type[BaseModel] | None = None) -> dict[str, str]:
    """``{"field", "message"}``: one validation error of a field, said in plain words."""
    field = field_of(error)
    name = json.dumps(field)
    kind = str(error.get("type", ""))
    ctx = error.get("ctx") or {}
    given = error.get("input")
    if kind == "missing":
        message = f"missing field {name}"
    elif kind == "extra_forbidden":
        message = f"unknown field {name}{_known(field, model)}"
    elif kind in EXPECTED:
        message = f"{name} must be {EXPECTED[kind]}, not {json_kind(given)}"
    elif kind in ("string_too_long", "string_too_short"):
        bound = "at most" if kind == "string_too_long" else "at least"
        limit = ctx.get("max_length" if kind == "string_too_long" else "min_length")
        length = f" (it has {len(given)})" if isinstance(given, str) else ""
        message = f"{name} must be a string of {bound} {limit} characters{length}"
    elif kind == "literal_error":
        expected = re.sub(r"'([^']*)'", r'"\1"', str(ctx.get("expected", "")))
        message = f"{name} must be one of {expected}, not {shown(given)}"
    elif kind == "value_error":
        said = str(ctx.get("error", error.get("msg", "")))
        if field == "body":  # a rule across fields: it says which
            message = said
        elif said.startswith("must "):
            message = f"{name} {said}"
        else:
            message = f"{name}: {said}"
    else:
        said = str(error.get("msg", "is not valid"))
        message = re.sub(r"^(Input|Value|String|List|Dictionary) should", f"{name} should", said)
        if message == said:
            message = f"{name}: {said}"
    return {"field": field, "message": message}


def _known(field: str, model: type[BaseModel] | None) -> str:
    """`` (did you mean "text"?)`` for a mistyped field of ``model``, else the fields it takes."""
    if model is None or "." in field:
        return ""
    close = difflib.get_close_matches(field, list(model.model_fields), n=1, cutoff=0.6)
    return f" (did you mean {json.dumps(close[0])}?)" if close else fields_hint(model)


def plain_errors(errors: Sequence[Mapping[str, Any]], model: type[BaseModel] | None = None) -> list[dict[str, str]]:
    """Every error of ``errors`` in plain words, in their order."""
    return [plain(error, model) for error in errors]
