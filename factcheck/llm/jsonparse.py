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
    closes = list(_REASONING_CLOSE.finditer(text))
    if closes:
        return text[closes[-1].end() :]
    if _REASONING_OPEN.match(text):
        raise LLMError(f"the model's reasoning block never closed, so there is no answer after it: {_quote(text)}")
    return text


def _quote(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def parse_json_object(text: str, required: Collection[str] = ()) -> dict[str, Any]:
    """The first JSON object in ``text`` (after any reasoning block) that has every key in ``required``.

    A code fence, prose before or after and several objects are all tolerated;
    LLMError (quoting the answer) when no object with those keys is there.
    """
    body = strip_reasoning(text)
    first: dict[str, Any] | None = None
    for tried, match in enumerate(re.finditer(r"\{", body)):
        if tried >= MAX_CANDIDATES:
            break
        try:
            value, _ = _decoder.raw_decode(body, match.start())
        except json.JSONDecodeError:
            continue
        if not isinstance(value, dict):
            continue
        if all(key in value for key in required):
            return valid_unicode_data(value)  # the model may write "\\ud800": valid JSON, no valid Unicode
        first = first if first is not None else value
    if first is not None:
        missing = ", ".join(repr(k) for k in required if k not in first)
        raise LLMError(f"the model's JSON has no {missing}: {_quote(body)}")
    raise LLMError(f"the model did not answer with a JSON object: {_quote(body)}")
