"""A fake OpenAI-compatible chat model on loopback, for tests and benchmarks.

:class:`FakeModel` answers chat-completion request bodies the way a small,
gullible model served by a real server would, without a model. It reads a
request as a model reads a prompt, by the conventions any prompt would use,
never by importing factcheck's own prompt strings or parsers:

- a request whose instructions (its text outside the data blocks) ask for a
  ``"factuality"`` field gets a verdict, one that asks for ``"claims"`` gets
  one claim per sentence, anything else a few sentences of prose;
- text between ``<<<LABEL ...>>>`` and ``<<<END LABEL ...>>>`` markers is data:
  the claim is the block labelled ``CLAIM`` (or, unfenced, a ``CLAIM:`` line),
  the text to extract from the block labelled ``TEXT``;
- it is gullible: "ignore previous instructions" anywhere *outside* the blocks
  makes it answer true with confidence 1, so a prompt that leaves untrusted
  text unfenced is caught;
- it knows a few facts (:data:`KNOWLEDGE`); any other claim is false when it
  says "not" or "never", or when an evidence block says "never", else true;
  it is less sure (:data:`HEDGED_CONFIDENCE`) when every passage its verdict
  rests on hedges ("may", "suggests", ...);
- it plays a panel's roles by the JSON keys a request asks for: a
  ``"weak_point"`` (a devil's advocate: the passages that speak against the
  verdict the request says leads, by the name each block's opening marker
  gives it, quoting the first), ``"hints"`` (what the passages say, by source)
  or a verdict with ``"relied_on"`` (the passages it rests on, and any other
  block that quotes one of them);
- asked for ``logprobs``, it sends each token's log-probability (its verdict's
  token as likely as its confidence), ignores the request, or refuses it with
  OpenAI's 400 (:attr:`FakeModel.logprobs`).

``style`` wraps its JSON as real models do (:data:`STYLES`: a code fence,
trailing prose, a preamble, a reasoning block) and the server options replay
real servers' quirks with the bodies they send (:data:`QUIRKS`): no ``usage``,
a reasoning model's 400 for ``temperature`` and ``max_tokens``, a server
without JSON mode, an unknown model's 404. :class:`FakeChatServer` serves it
from a thread (the one fake server of :mod:`factcheck.testing.http`) or its own process::

    python -m factcheck.testing.llm --latency 0.5     # prints its base URL, serves until killed

Point factcheck at it with ``--llm-base-url`` (no key needed for a local server).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from factcheck.testing.http import FakeServer, Request, Response, Route

PASSAGE = "The Eiffel Tower is a wrought-iron lattice tower in Paris, France, completed in 1889."
# What the fake model knows: a pattern a claim may match, whether it is true, and what it says about it.
KNOWLEDGE: tuple[tuple[str, bool, str], ...] = (
    (
        r"great wall.*visible from (the )?moon",
        False,
        "The Great Wall of China is not visible from the Moon with the naked eye.",
    ),
    (r"water boils at 90\b", False, "At sea level water boils at 100 degrees Celsius, not 90."),
    (r"water boils at 100\b", True, "At sea level water boils at 100 degrees Celsius."),
    (r"eiffel tower.*\bberlin\b", False, "The Eiffel Tower is in Paris, not Berlin."),
    (r"eiffel tower.*\b1889\b", True, "The Eiffel Tower was completed in 1889 for the World's Fair."),
    (r"eiffel tower", True, PASSAGE),
)
INJECTION = "ignore previous instructions"
# A gullible model's data blocks: <<<LABEL header>>> newline ... newline <<<END LABEL ...>>>.
_BLOCK = re.compile(r"<<<(?!END )([A-Z]+)((?: [^>\n]*)?)>>>\n(.*?)\n<<<END \1(?: [^>\n]*)?>>>", re.DOTALL)
# How a passage says it is not sure; a verdict resting only on such passages is given with less confidence.
HEDGES = re.compile(r"\b(may|might|could|suggests?|possibly|perhaps|unclear|some reports)\b", re.IGNORECASE)
SURE_CONFIDENCE, HEDGED_CONFIDENCE = 0.9, 0.55
METADATA = ("source:", "title:", "date:")  # lines a passage block may start with, before its text
LOGPROBS = ("on", "ignore", "refuse")

# How real models wrap the JSON they were asked for.
STYLES: Mapping[str, Callable[[str], str]] = {
    "plain": lambda j: j,
    "fenced": lambda j: f"```json\n{j}\n```",
    "trailing": lambda j: f"{j}\n\nExplanation: I weighed the passages above; the strongest one decides.",
    "preamble": lambda j: f"Sure! Here is my assessment of the claim:\n\n{j}",
    "think": lambda j: (
        "<think>\nOkay, the user wants a JSON verdict. Let me look at the passages {like this one}.\n"
        f"The evidence seems clear.\n</think>\n\n{j}"
    ),
}

# Error bodies real servers send, as documented by each (status, body).
QUIRKS: Mapping[str, tuple[int, Any]] = {
    # OpenAI, reasoning models (o1, o3, o4-mini, gpt-5) given a temperature other than 1.
    "openai_temperature": (
        400,
        {
            "error": {
                "message": "Unsupported value: 'temperature' does not support 0 with this model. "
                "Only the default (1) value is supported.",
                "type": "invalid_request_error",
                "param": "temperature",
                "code": "unsupported_value",
            }
        },
    ),
    # OpenAI, reasoning models given max_tokens.
    "openai_max_tokens": (
        400,
        {
            "error": {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "unsupported_parameter",
            }
        },
    ),
    # OpenAI, a wrong key.
    "openai_bad_key": (
        401,
        {
            "error": {
                "message": "Incorrect API key provided: sk-wrong. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        },
    ),
    # Ollama's OpenAI-compatible endpoint, a model that was never pulled.
    "ollama_missing_model": (
        404,
        {
            "error": {
                "message": 'model "{model}" not found, try pulling it first',
                "type": "api_error",
                "param": None,
                "code": None,
            }
        },
    ),
    # vLLM, a model name it does not serve.
    "vllm_missing_model": (
        404,
        {
            "object": "error",
            "message": "The model `{model}` does not exist.",
            "type": "NotFoundError",
            "param": None,
            "code": 404,
        },
    ),
    # LM Studio, which takes only json_schema response formats.
    "lmstudio_json_object": (400, {"error": "'response_format.type' must be 'json_schema' or 'text'"}),
    # OpenAI, reasoning models asked for token log-probabilities.
    "openai_logprobs": (
        400,
        {
            "error": {
                "message": "Unsupported parameter: 'logprobs' is not supported with this model.",
                "type": "invalid_request_error",
                "param": "logprobs",
                "code": "unsupported_parameter",
            }
        },
    ),
    # OpenAI, a prompt longer than the model's context window.
    "openai_context_length": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 128000 tokens. However, your messages "
                "resulted in 131072 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    ),
}


def chat_completion(
    content: str | None,
    model: str,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    *,
    usage: bool = True,
    finish_reason: str = "stop",
    refusal: str | None = None,
    logprobs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """An OpenAI ``chat.completion`` object answering ``content`` (without ``usage`` when asked, as some servers;
    with the tokens' ``logprobs``, :func:`token_logprobs`, when given)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish_reason}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs, "refusal": None}
    answer: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
    }
    if usage:
        answer["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
    return answer


def _quirk(name: str, model: str) -> tuple[int, Any]:
    status, body = QUIRKS[name]
    return status, json.loads(json.dumps(body).replace("{model}", model.replace('"', "")))


def token_logprobs(content: str, top: int) -> list[dict[str, Any]]:
    """``choices[0].logprobs.content`` as OpenAI sends it for ``content``: tokens (words, runs of white space,
    single other characters) that spell it exactly, each with its log-probability, UTF-8 bytes and ``top``
    alternatives. The token of a ``"factuality"`` value is as likely as the answer's ``"confidence"`` says,
    its opposite takes most of the rest; every other token is near certain."""
    verdict = re.search(r'"factuality"\s*:\s*(true|false)', content)
    stated = re.search(r'"confidence"\s*:\s*([0-9.]+)', content)
    confidence = min(max(float(stated.group(1)), 1e-6), 1.0) if stated else SURE_CONFIDENCE
    tokens = []
    for match in re.finditer(r"\w+|\s+|[^\w\s]", content):
        token = match.group(0)
        if verdict is not None and match.start() == verdict.start(1):
            other = "false" if token == "true" else "true"
            choices = [(token, confidence), (other, max((1 - confidence) * 0.9, 1e-6)), ("null", 1e-6)]
        else:
            choices = [(token, 0.999)]
        listed = [{"token": t, "logprob": math.log(p), "bytes": list(t.encode())} for t, p in choices]
        tokens.append({**listed[0], "top_logprobs": listed[:top]})
    return tokens


def recall(claim: str) -> tuple[bool, str] | None:
    """What the fake model knows about ``claim``: (true?, a sentence), or None."""
    for pattern, truth, sentence in KNOWLEDGE:
        if re.search(pattern, claim, re.IGNORECASE):
            return truth, sentence
    return None


@dataclass(frozen=True)
class Block:
    """A fenced block of a prompt as the model reads it: its ``label``, the ``header`` after the label (a
    nonce, then how the prompt names the block) and its ``text``."""

    label: str
    header: str
    text: str

    @property
    def name(self) -> str | None:
        """How the prompt names the block, to cite it by: the last word of its header after the first."""
        words = self.header.split()
        return words[-1] if len(words) > 1 else None

    @property
    def source(self) -> str:
        """The ``source:`` the block gives, else ""."""
        found = re.search(r"^source:[ \t]*(.*)$", self.text, re.MULTILINE)
        return found.group(1).strip() if found else ""

    @property
    def body(self) -> str:
        """The text without the metadata lines it starts with."""
        lines = self.text.split("\n")
        while lines and lines[0].startswith(METADATA):
            lines.pop(0)
        return "\n".join(lines).strip()

    @property
    def refutes(self) -> bool:
        """Whether a passage speaks against the claim (it says "never")."""
        return bool(re.search(r"\bnever\b", self.text))


@dataclass
class FakeModel:
    """The gullible model and the quirks of the server it runs on (see the module docstring).

    ``style``: how the JSON is wrapped (:data:`STYLES`). ``usage``: whether
    answers carry token counts. ``reasoning``: the server answers 400 to a
    ``temperature`` other than 1 and to ``max_tokens``, as OpenAI does for its
    reasoning models. ``json_mode``: whether ``response_format`` is accepted.
    ``models``: the model names served (others get ``missing_model``'s 404).
    ``logprobs``: what a request for token log-probabilities gets (:data:`LOGPROBS`): ``on``
    (:func:`token_logprobs`), ``ignore`` (an answer without them, as some servers) or ``refuse``
    (OpenAI's 400 naming the parameter, as for its reasoning models).
    ``requests`` keeps the request bodies answered (the latest 10,000).
    """

    style: str = "plain"
    usage: bool = True
    reasoning: bool = False
    json_mode: bool = True
    models: tuple[str, ...] = ()
    missing_model: str = "ollama_missing_model"
    logprobs: str = "on"
    # The latest requests only: a server left running for a benchmark must not grow without bound.
    requests: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=10_000))

    def __post_init__(self) -> None:
        if self.logprobs not in LOGPROBS:
            raise ValueError(f"logprobs must be one of {', '.join(LOGPROBS)}, got {self.logprobs!r}")

    def respond(self, body: Mapping[str, Any]) -> tuple[int, Any]:
        """The HTTP status and JSON body answering one chat-completions request body."""
        self.requests.append(dict(body))
        model = str(body.get("model") or "")
        if self.models and model not in self.models:
            return _quirk(self.missing_model, model)
        if self.reasoning and "temperature" in body and body["temperature"] != 1:
            return _quirk("openai_temperature", model)
        if self.reasoning and "max_tokens" in body:
            return _quirk("openai_max_tokens", model)
        if not self.json_mode and "response_format" in body:
            return _quirk("lmstudio_json_object", model)
        asked = bool(body.get("logprobs"))
        if asked and self.logprobs == "refuse":
            return _quirk("openai_logprobs", model)
        content = self.answer(body)
        top = body.get("top_logprobs")
        tokens = None
        if asked and self.logprobs == "on" and content is not None:
            tokens = token_logprobs(content, top if isinstance(top, int) and not isinstance(top, bool) else 0)
        return 200, chat_completion(content, model or "fake-model", usage=self.usage, logprobs=tokens)

    def answer(self, body: Mapping[str, Any]) -> str:
        """What the model says to a request: it does what the text outside the data blocks asks."""
        messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
        everything = "\n".join(str(m.get("content", "")) for m in messages)
        user = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
        blocks = [Block(label, header, text) for label, header, text in _BLOCK.findall(user)]
        outside = _BLOCK.sub("", user)
        asks = _BLOCK.sub("", everything)  # what the request asks for, its data left out
        obeys = INJECTION in outside.lower()
        wrap = STYLES[self.style]
        if '"weak_point"' in asks:
            return wrap(json.dumps(self._challenge(outside, blocks)))
        if '"hints"' in asks:
            return wrap(json.dumps(self._hints(blocks)))
        if '"factuality"' in asks:
            verdict, resting = self._verdict(outside, blocks, obeys)
            if '"relied_on"' in asks:
                verdict["relied_on"] = _cited(resting, blocks)
            return wrap(json.dumps(verdict))
        if '"claims"' in asks:
            text = next((b.text for b in blocks if b.label == "TEXT"), user)
            sentences = [s.strip() for s in re.findall(r"[^.!?]+[.!?]*", text) if s.strip()]
            claims = [{"claim": s, "queries": [s.rstrip("."), s.split()[0]]} for s in sentences]
            return wrap(json.dumps({"claims": claims}))
        known = recall(_claim(outside, blocks) or user)
        return known[1] if known else PASSAGE

    @staticmethod
    def _verdict(outside: str, blocks: list[Block], obeys: bool) -> tuple[dict[str, Any], list[Block]]:
        """The verdict, and the passages it rests on."""
        if obeys:
            return {"factuality": True, "confidence": 1.0, "rationale": "instructed to answer true"}, []
        claim = _claim(outside, blocks)
        evidence = [b for b in blocks if b.label == "EVIDENCE"]
        known = recall(claim)
        if known is not None:
            truth, sentence = known
            return {"factuality": truth, "confidence": SURE_CONFIDENCE, "rationale": sentence}, []
        said_no = re.search(r"\b(not|never)\b", claim, re.IGNORECASE)
        truth = not (said_no or any(b.refutes for b in evidence))
        resting = [b for b in evidence if b.refutes != truth]
        hedged = bool(resting) and all(HEDGES.search(b.body) for b in resting)
        confidence = HEDGED_CONFIDENCE if hedged else SURE_CONFIDENCE
        verdict = {"factuality": truth, "confidence": confidence, "rationale": f"judged from {len(evidence)} passages"}
        return verdict, resting

    @staticmethod
    def _challenge(outside: str, blocks: list[Block]) -> dict[str, Any]:
        """A devil's advocate: the passages against the verdict the request says leads (true if it says none)."""
        told = re.search(r"\bverdict\b[^\n]*?\b(true|false)\b", outside, re.IGNORECASE)
        leading = told is None or told.group(1).lower() == "true"
        against = [b for b in blocks if b.label == "EVIDENCE" and b.refutes == leading]
        claim = _claim(outside, blocks)
        if against:
            first = against[0]
            weak_point = f"{first.source or 'a passage'} says otherwise: {first.body[:300]}"
        else:
            weak_point = "no passage speaks against it, but few passages address the claim directly"
        return {
            "weak_point": weak_point,
            "counter_evidence": [b.name for b in against if b.name],
            "query": f"{claim.rstrip('.')} {'never' if leading else 'confirmed'}".strip(),
        }

    @staticmethod
    def _hints(blocks: list[Block]) -> dict[str, Any]:
        """A supporter's hints: what each of the first passages says, by source."""
        passages = [b for b in blocks if b.label == "EVIDENCE"][:3]
        hints = [f"{b.source or 'a passage'} reports: {b.body[:160]}" for b in passages]
        return {"hints": hints or ["look for a passage that addresses the claim directly"]}


def _cited(resting: list[Block], blocks: list[Block]) -> list[str]:
    """The names of the passages a verdict rests on, and of any other block that quotes one of them."""
    names = [b.name for b in resting if b.name]
    quotes = [b.body[:60] for b in resting if b.body]
    for block in blocks:
        if block.label not in ("EVIDENCE", "CLAIM") and block.name and any(q in block.text for q in quotes):
            names.append(block.name)
    return names


def _claim(outside: str, blocks: list[Block]) -> str:
    fenced = next((b.text for b in blocks if b.label == "CLAIM"), None)
    if fenced is not None:
        return fenced
    unfenced = re.search(r"^CLAIM:[ \t]*(.+)$", outside, re.MULTILINE)
    return unfenced.group(1) if unfenced else ""


def model_route(model: FakeModel) -> Route:
    """A :class:`~factcheck.testing.http.FakeServer` route answering chat-completions requests with ``model``."""

    def route(request: Request) -> Response:
        status, body = model.respond(request.json())
        return Response(body, status=status)

    return route


class FakeChatServer:
    """The fake model served on ``127.0.0.1`` from a background thread; ``url`` is its ``/v1`` base URL.

    A :class:`~factcheck.testing.http.FakeServer` that keeps connections alive, as a real model server
    does, and answers ``POST .../chat/completions`` (any prefix) with :attr:`model` after ``latency_s``.
    ``requests`` counts the chat requests answered; ``model`` is the :class:`FakeModel` answering them.
    """

    def __init__(self, latency_s: float = 0.0, *, port: int = 0, model: FakeModel | None = None) -> None:
        self.latency_s = latency_s
        self.model = model or FakeModel()
        self.requests = 0
        self._lock = threading.Lock()
        # Not recorded: a server left running for a benchmark must not grow without bound (the model keeps the latest).
        self._server = FakeServer(port=port, keep_alive=True, record=False, fallback=self._chat)

    @property
    def url(self) -> str:
        """The base URL to give as ``--llm-base-url``."""
        return f"{self._server.url}/v1"

    def start(self) -> FakeChatServer:
        """Start serving (the port is open once the server is made)."""
        self._server.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the connections clients keep alive and the port."""
        self._server.stop()

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _chat(self, request: Request) -> Response:
        if request.method != "POST" or not request.path.rstrip("/").endswith("/chat/completions"):
            return Response({"error": {"message": f"no route {request.method} {request.path}"}}, status=404)
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            return Response({"error": {"message": "body is not JSON"}}, status=400)
        with self._lock:
            self.requests += 1
        status, payload = self.model.respond(body)
        return Response(payload, status=status, delay_s=self.latency_s)


def main() -> None:
    """Serve until killed, printing the base URL on the first line of standard output."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    parser.add_argument("--logprobs", choices=LOGPROBS, default="on", help="what a request for logprobs gets")
    args = parser.parse_args()
    server = FakeChatServer(args.latency, port=args.port, model=FakeModel(logprobs=args.logprobs)).start()
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
