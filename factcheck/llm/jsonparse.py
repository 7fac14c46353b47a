"""Reading the JSON object a model was asked for out of the answer it actually gave. Never eval.

Real servers wrap the object in many ways: a Markdown code fence, a sentence
of preamble, an explanation after it ("Extra data" to a strict parser), or a
reasoning block first (``<think>...</think>`` from DeepSeek-R1 and QwQ served
by vLLM without a reasoning parser, llama.cpp with ``--reasoning-format none``,
older Ollama). The reader drops a leading reasoning block, then takes the
first complete JSON object in the rest that has the keys the caller expects.

It stays strict about the shape: an answer with no such object is an error
that quotes the answer, and the caller still checks each field's type.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from factcheck.errors import LLMError
from factcheck.text import valid_unicode_data

# Reasoning tags seen in the wild. A chat template may open the block in the prompt, so only the close is needed.
_REASONING_CLOSE = re.compile(r"</(think|thinking|reasoning|thought)>", re.IGNORECASE)
_REASONING_OPEN = re.compile(r"^\s*<(think|thinking|reasoning|thought)>", re.IGNORECASE)
MAX_CANDIDATES = 200  # object openings tried in one answer: a hostile answer cannot make parsing quadratic
_decoder = json.JSONDecoder()


def strip_reasoning(text: str) -> str:
    """``text`` without a leading reasoning block; LLMError when the block never closes (the answer was cut off)."""
    return text[_answer_start(text) :]


def _answer_start(text: str) -> int:
    """Where the answer begins in ``text``: after its reasoning block, if it has one."""
    closes = list(_REASONING_CLOSE.finditer(text))
    if closes:
        return closes[-1].end()
    if _REASONING_OPEN.match(text):
        raise LLMError(f"the model's reasoning block never closed, so there is no answer after it: {_quote(text)}")
    return 0


def _quote(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def parse_json_object(text: str, required: Collection[str] = ()) -> dict[str, Any]:
    """The first JSON object in ``text`` (after any reasoning block) that has every key in ``required``.

    A code fence, prose before or after and several objects are all tolerated;
    LLMError (quoting the answer) when no object with those keys is there.
    """
    return find_json_object(text, required)[0]


def find_json_object(text: str, required: Collection[str] = ()) -> tuple[dict[str, Any], int, int]:
    """The object :func:`parse_json_object` reads, and where it lies in ``text``: (object, start, end)."""
    start = _answer_start(text)
    body = text[start:]
    first: dict[str, Any] | None = None
    for tried, match in enumerate(re.finditer(r"\{", body)):
        if tried >= MAX_CANDIDATES:
            break
        try:
            value, end = _decoder.raw_decode(body, match.start())
        except json.JSONDecodeError:
            continue
        if not isinstance(value, dict):
            continue
        if all(key in value for key in required):
            # the model may write "\\ud800": valid JSON, no valid Unicode
            return valid_unicode_data(value), start + match.start(), start + end
        first = first if first is not None else value
    if first is not None:
        missing = ", ".join(repr(k) for k in required if k not in first)
        raise LLMError(f"the model's JSON has no {missing}: {_quote(body)}")
    raise LLMError(f"the model did not answer with a JSON object: {_quote(body)}")


def value_span(text: str, key: str, required: Collection[str] = ()) -> tuple[int, int] | None:
    """Where the literal value (``true``, ``false``, ``null`` or a number) of the top-level ``key`` of the
    object :func:`parse_json_object` reads lies in ``text``, as (start, end); ``None`` where it is not a
    literal or cannot be found (a key written with escapes)."""
    try:
        value, start, end = find_json_object(text, required)
    except LLMError:
        return None
    if key not in value or isinstance(value[key], str | list | dict):
        return None
    pattern = re.compile(r'[{,]\s*"' + re.escape(key) + r'"\s*:\s*(true|false|null|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)')
    for match in pattern.finditer(text, start, end):
        literal = json.loads(match.group(1))
        # A nested object's key of the same name may hold another value (and 1 == True in Python).
        if isinstance(literal, bool) is isinstance(value[key], bool) and literal == value[key]:
            return match.start(1), match.end(1)
    return None
