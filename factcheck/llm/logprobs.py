"""How sure a model was of one field of its JSON answer, from the answer's token log-probabilities.

A deliberation gate (LASE, papers/003, eq. 5-7) reads two signals of the tokens that spell a field's value
(the ``true`` / ``false`` of ``"factuality"``):

- ``lp_min``: the least log-probability (nats) of those tokens;
- ``h_max``: the largest next-token entropy (nats) over them. A server lists only the top ``k`` tokens at
  each position, so the entropy is computed over those ``k`` (and the chosen token) plus one residual
  bucket holding the probability they leave, ``1 - sum p``. Spreading that residual over the many tokens
  it really belongs to can only raise the entropy, so ``h_max`` is a lower bound of the true one; it is
  exact when the listed tokens hold all the mass.

Signals are given only where they can be trusted to belong to the text that was read: the tokens must
spell the answer exactly (their text, or their UTF-8 bytes, joined), else there are none.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from factcheck.llm.client import LLMAnswer, TokenLogprob
from factcheck.llm.jsonparse import value_span


def entropy(token: TokenLogprob) -> float:
    """The next-token entropy at ``token``'s position over its listed alternatives and the chosen token,
    plus one residual bucket for the probability they leave (a lower bound: see the module docstring)."""
    listed = dict(token.top)
    listed.setdefault(token.token, token.logprob)
    probabilities = [math.exp(min(lp, 0.0)) for lp in listed.values()]
    residual = max(0.0, 1.0 - sum(probabilities))
    return -sum(p * math.log(p) for p in [*probabilities, residual] if p > 0.0)


def _offsets(tokens: Sequence[TokenLogprob], text: str) -> tuple[list[tuple[int, int]], bool] | None:
    """Each token's (start, end) in ``text`` (in characters), or, where only their bytes spell it, in the
    text's UTF-8 bytes (then the flag is True); ``None`` when the tokens do not spell ``text``."""
    if "".join(t.token for t in tokens) == text:
        lengths = [len(t.token) for t in tokens]
        in_bytes = False
    elif all(t.bytes is not None for t in tokens) and b"".join(bytes(t.bytes or ()) for t in tokens) == text.encode():
        lengths = [len(t.bytes or ()) for t in tokens]
        in_bytes = True
    else:
        return None
    offsets, at = [], 0
    for length in lengths:
        offsets.append((at, at + length))
        at += length
    return offsets, in_bytes


def span_signals(tokens: Sequence[TokenLogprob], text: str, span: tuple[int, int]) -> tuple[tuple[str, float], ...]:
    """``lp_min`` and ``h_max`` over the tokens that overlap ``span`` (characters of ``text``); none when
    the tokens do not spell ``text``."""
    located = _offsets(tokens, text)
    if located is None:
        return ()
    offsets, in_bytes = located
    start, end = span
    if in_bytes:
        start, end = len(text[:start].encode()), len(text[:end].encode())
    covering = [t for t, (a, b) in zip(tokens, offsets, strict=True) if a < end and b > start]
    if not covering:
        return ()
    lp_min = min(t.logprob for t in covering)
    h_max = max(entropy(t) for t in covering)
    if not (math.isfinite(lp_min) and math.isfinite(h_max)):
        return ()  # a server's -inf (or NaN) is no measure, and JSON cannot hold it
    return (("lp_min", round(lp_min, 6)), ("h_max", round(h_max, 6)))


def answer_signals(answer: LLMAnswer, key: str, required: Collection[str] = ()) -> tuple[tuple[str, float], ...]:
    """``lp_min`` and ``h_max`` of the value of ``key`` in the JSON object of ``answer`` (the one
    :func:`~factcheck.llm.jsonparse.parse_json_object` reads with ``required``); none when the answer has
    no log-probabilities, they do not spell its text, or the value is not a literal."""
    if not answer.logprobs:
        return ()
    span = value_span(answer.text, key, required)
    if span is None:
        return ()
    return span_signals(answer.logprobs, answer.text, span)
