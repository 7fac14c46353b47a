"""Chat completions through the ``openai`` client, with a cache, a ledger and limits.

Settings come from ``[llm]`` in factcheck.toml, then ``OPENAI_BASE_URL`` /
``FACTCHECK_LLM_BASE_URL``, ``FACTCHECK_LLM_MODEL``, then CLI flags; the
Checker makes them current for the check. A component may override ``model``
or ``base_url`` (a cheap model for extraction, a strong one for judging).

Every request is charged to the run's budget and counted in the check's usage
as it is sent, retries included, so none goes out uncounted or past
``--max-llm-calls``: this module retries (``max_retries`` more requests, with
exponential backoff and jitter, honouring ``Retry-After`` on 429 and retrying
408, 409, 5xx, time-outs and connection errors), not the ``openai`` client.
Every request has a time-out, and runs in the caller's task, so cancelling
the caller (a check's time-out) cancels it; calls to one endpoint share a
concurrency limit.

Servers differ, and this module absorbs the differences so components need not:

- JSON mode (``response_format``) is asked for where a component wants JSON; a
  server that rejects it is asked again without, and remembered.
- Token log-probabilities (``logprobs``, ``top_logprobs``) are asked for only
  where a component wants them (a deliberation gate reads them).
- Reasoning models (o1, o3, o4-mini, gpt-5) accept only their default
  temperature, take ``max_completion_tokens`` and give no log-probabilities:
  known names are sent neither ``temperature``, ``max_tokens`` nor
  ``logprobs``, and any other model whose server answers 400 naming one of
  those parameters is asked again without it, remembered per endpoint and
  model for the life of the process (an answer asked again without
  ``logprobs`` carries none).
- An error quotes the server's own message, status and request id. A rejected
  key or an unknown model (HTTP 401, 403, 404) is a :class:`LLMRefusedError`:
  the rest of the check does not ask that model again (the service layer's
  refusal memory keeps it for the check: :class:`factcheck.net.Refusals`).
- A request is counted when it is sent, with its prompt's estimated tokens; its
  answer's ``usage`` then replaces the estimate. A server that sends no
  ``usage`` gets the answer's tokens estimated too (about four characters a
  token) and the call stays counted as estimated; so does a request cut off by
  a time-out or cancellation (it may be billed). One answered with an error
  status is not counted in usage (it still took its budget slot).

Requests go out through the service layer (:func:`factcheck.net.service`): the
``openai`` client is given its HTTP client (``http_client=``), so a transport
injected there carries the model's requests too, and the per-host limits are
the ones the sources share.
"""

from __future__ import annotations

import asyncio
import importlib
import math
import random
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

import httpx

from factcheck.cache import cached
from factcheck.errors import LLMError, LLMRefusedError, LLMUnreachableError, MissingKeyError
from factcheck.net import (
    CONNECT_TIMEOUT_S,
    Key,
    host_limit,
    message_of,
    retry_after,
    service,
)
from factcheck.options import check_fields, setting
from factcheck.secrets import secret
from factcheck.text import valid_unicode
from factcheck.usage import amend_llm, charge_llm_call, record_llm, record_note

OPENAI_URL = "https://api.openai.com/v1"
CLIENT_VERSION = "llm-2"  # part of every cache key: bump when request shaping changes
CHARS_PER_TOKEN = 4  # OpenAI's rule of thumb for English, used only when a server reports no usage
MESSAGE_OVERHEAD_TOKENS = 4  # role and separators each message adds in chat formats
# Reasoning models that accept only their default temperature and want max_completion_tokens (OpenAI's docs).
REASONING_MODEL = re.compile(r"^(o\d+(-.*)?|gpt-5(?!-chat).*)$")
KEY_REFUSED_STATUSES = {401, 403}  # the key (or what it may do) was refused: said in one sentence, once
FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s+")
REFUSED_STATUSES = {401, 402, 403, 404}  # no retry within a check will fix a key, credit or model name
RETRY_STATUSES = frozenset({408, 409, 429})  # and every 5xx: what the openai client would retry
INITIAL_RETRY_S, MAX_RETRY_S = 0.5, 8.0  # backoff between retries (the openai client's own figures)
MAX_RETRY_AFTER_S = 60.0  # a longer Retry-After is not waited for in full
NEVER_SENT = frozenset({"ConnectError", "ConnectTimeout"})  # httpx errors of a connection never made
# Parameters a server may reject with a 400 naming them, and that are then left out (see the module docstring).
OPTIONAL_PARAMETERS = ("temperature", "max_tokens", "response_format", "logprobs")
MAX_TOP_LOGPROBS = 20  # OpenAI's limit on top_logprobs


@dataclass(frozen=True)
class LLMSettings:
    """Where and how to call the model. Prices are US dollars per million tokens."""

    # FACTCHECK_LLM_BASE_URL wins over OPENAI_BASE_URL: the later variable is the more specific.
    base_url: str = setting(
        OPENAI_URL, env=("OPENAI_BASE_URL", "FACTCHECK_LLM_BASE_URL"), help="OpenAI-compatible endpoint"
    )
    model: str = setting("gpt-4o", env="FACTCHECK_LLM_MODEL", help="model name")
    api_key_env: str = setting("OPENAI_API_KEY", env="FACTCHECK_LLM_API_KEY_ENV", help="the variable holding the key")
    timeout_s: float = setting(60.0, minimum=0, min_open=True, unit="seconds", help="per call")
    max_retries: int = setting(3, minimum=0, help="more requests after a retryable failure")
    max_concurrency: int = setting(8, minimum=1, help="calls in flight per endpoint")
    json_mode: bool = setting(True, help="ask for response_format json_object")
    prices: Mapping[str, Mapping[str, float]] = setting(
        default_factory=lambda: {
            "gpt-4o": {"input": 2.5, "output": 10.0},
            "gpt-4o-mini": {"input": 0.15, "output": 0.6},
        },
        help="dollars per million tokens, by model: {input, output}",
    )

    def __post_init__(self) -> None:
        check_fields(self, "[llm]")

    def api_key(self) -> str:
        """The key from the environment. A local server needs none; OpenAI itself does."""
        key = secret(self.api_key_env)
        if not key and self.base_url.rstrip("/") == OPENAI_URL:
            raise MissingKeyError(f"no API key for {self.base_url} (set {self.api_key_env})", self.api_key_env)
        return key or "not-needed"

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """Estimated dollars for one call (0 for a model with no configured price)."""
        price = self.prices.get(model, {})
        return (prompt_tokens * price.get("input", 0.0) + completion_tokens * price.get("output", 0.0)) / 1e6


def llm_env(env: Mapping[str, str]) -> dict[str, str]:
    """``[llm]`` settings from ``OPENAI_BASE_URL`` and ``FACTCHECK_LLM_BASE_URL`` / ``_MODEL`` / ``_API_KEY_ENV``."""
    from factcheck.options import env_values

    return {key: str(value) for key, value in env_values(LLMSettings, env, "[llm]").items()}


def llm_settings(mapping: Mapping[str, Any] | None = None) -> LLMSettings:
    """LLMSettings from an ``[llm]`` table (the settings loader has already layered env and flags into it)."""
    from factcheck.options import coerce_section

    return coerce_section(LLMSettings, mapping, "[llm]")


@dataclass(frozen=True)
class TokenLogprob:
    """One token of an answer with its log-probability (nats) and the ``top`` alternatives the server
    listed (token, log-probability), the token's UTF-8 ``bytes`` where the server sent them."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()
    bytes: tuple[int, ...] | None = None

    def to_data(self) -> list[Any]:
        """A JSON-able form (the cache stores answers as JSON)."""
        return [
            self.token,
            self.logprob,
            [list(t) for t in self.top],
            list(self.bytes) if self.bytes is not None else None,
        ]

    @classmethod
    def from_data(cls, data: Sequence[Any]) -> TokenLogprob:
        token, logprob, top, raw = data
        return cls(
            str(token),
            float(logprob),
            tuple((str(t), float(lp)) for t, lp in top),
            tuple(int(b) for b in raw) if raw is not None else None,
        )


@dataclass(frozen=True)
class LLMAnswer:
    """The text of one completion and its token counts (``estimated`` when the server sent none).

    ``logprobs``: the answer's tokens with their log-probabilities, when they were asked for and the
    server sent them (``None`` otherwise)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    logprobs: tuple[TokenLogprob, ...] | None = None


llm_var: ContextVar[LLMSettings | None] = ContextVar("factcheck.llm", default=None)
"""The LLM settings of the check running here (``None``: the environment's)."""


def resolve(model: str | None = None, base_url: str | None = None) -> LLMSettings:
    """The current check's LLM settings, with a component's own ``model`` / ``base_url`` applied.

    Outside a check (no LLM settings in the context) they are :class:`LLMSettings`' defaults, as for a
    :class:`~factcheck.Checker` built without ``llm=``: the environment's ``[llm]`` variables reach a
    check through :func:`factcheck.load_settings`, never read here."""
    settings = llm_var.get() or LLMSettings()
    return replace(settings, model=model or settings.model, base_url=base_url or settings.base_url)


def service_name(settings: LLMSettings) -> str:
    """How refusals of this endpoint and model are remembered within a check."""
    return f"llm:{settings.base_url}:{settings.model}"


def _refusal_key(settings: LLMSettings) -> Key:
    return (service_name(settings),)


def ensure_usable(model: str | None = None, base_url: str | None = None) -> None:
    """Raise before any work if the model cannot be asked: MissingKeyError without a key,
    LLMRefusedError if it already refused for good in this check (the extractor found a bad model name),
    LLMUnreachableError if its server could not be reached a moment ago."""
    settings = resolve(model, base_url)
    settings.api_key()
    if (reason := service().refusals.reason(_refusal_key(settings))) is not None:
        raise LLMRefusedError(reason)
    _refuse_if_unreachable(settings)


class _Unreachable(Exception):
    """No connection could be made to the model server (raised inside :func:`_create`, never retried)."""

    def __init__(self, error: httpx.TransportError) -> None:
        super().__init__(str(error))
        self.error = error


def _refuse_if_unreachable(settings: LLMSettings) -> None:
    if (reason := service().unreachable(settings.base_url)) is not None:
        raise LLMUnreachableError(reason)


def _connect_s(settings: LLMSettings) -> float:
    """How long a connection to the model server may take before the server counts as unreachable."""
    return min(settings.timeout_s, CONNECT_TIMEOUT_S)


# What each endpoint and model turned out not to accept, learned from its 400s: "temperature", "max_tokens",
# "response_format", "logprobs" (which stands for top_logprobs too). Process-wide, so a batch or a server learns
# it once.
_unsupported: dict[tuple[str, str], set[str]] = {}
_unsupported_lock = threading.Lock()


def _is_reasoning_model(model: str) -> bool:
    return bool(REASONING_MODEL.match(model.rsplit("/", 1)[-1].lower()))  # "openai/o3-mini" through a router


def unsupported_parameters(settings: LLMSettings) -> set[str]:
    """The request parameters this endpoint's model does not take (documented or learned)."""
    with _unsupported_lock:
        learned = set(_unsupported.get((settings.base_url, settings.model), set()))
    if _is_reasoning_model(settings.model):
        learned |= {"temperature", "max_tokens", "logprobs"}
    return learned


def _learn_unsupported(settings: LLMSettings, parameter: str) -> None:
    with _unsupported_lock:
        _unsupported.setdefault((settings.base_url, settings.model), set()).add(parameter)


def estimate_tokens(text: str) -> int:
    """Tokens in ``text`` by the four-characters rule (used only when the server reports none)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _prompt_estimate(messages: Sequence[Mapping[str, str]]) -> int:
    return sum(estimate_tokens(str(m.get("content", ""))) + MESSAGE_OVERHEAD_TOKENS for m in messages)


def _status_error(settings: LLMSettings, exc: Any) -> LLMError:
    """An LLMError that says what the server said: status, its message and the request id."""
    message = message_of(exc.body)
    key_refused = exc.status_code in KEY_REFUSED_STATUSES
    if key_refused:  # "Incorrect API key provided: sk-....abcd." and not the page to find one at
        message = FIRST_SENTENCE.split(message, maxsplit=1)[0]
    request_id = getattr(exc, "request_id", None)
    text = f"LLM at {settings.base_url} (model {settings.model}): HTTP {exc.status_code}"
    text += f": {message}" if message else ""
    text += f" [request {request_id}]" if request_id else ""
    # Only a 401 says the key is wrong; a 403 may refuse a region or a model to a good key.
    text += f" (check {settings.api_key_env})" if exc.status_code == 401 else ""
    lasting = exc.status_code in REFUSED_STATUSES or getattr(exc, "code", None) in {
        "model_not_found",
        "invalid_api_key",
        "insufficient_quota",
    }
    return LLMRefusedError(text) if lasting else LLMError(text)


def _rejected_parameter(exc: Any, sent: Mapping[str, Any]) -> str | None:
    """Which optional parameter a 400 says the model does not take, if it names one we sent."""
    param = str(getattr(exc, "param", None) or "").removeprefix("top_")  # top_logprobs goes with logprobs
    message = message_of(exc.body).lower()
    for name in OPTIONAL_PARAMETERS:
        if name in sent and (param.startswith(name) or name in message):
            return name
    if "response_format" in sent and "json_object" in message:
        return "response_format"
    return None


def _request(
    settings: LLMSettings,
    messages: Sequence[Mapping[str, str]],
    temperature: float,
    max_tokens: int | None,
    json_mode: bool,
    skip: set[str],
    logprobs: int = 0,
) -> dict[str, Any]:
    params: dict[str, Any] = {"model": settings.model, "messages": list(messages)}
    if "temperature" not in skip:
        params["temperature"] = temperature
    if max_tokens is not None:
        params["max_tokens" if "max_tokens" not in skip else "max_completion_tokens"] = max_tokens
    if json_mode and settings.json_mode and "response_format" not in skip:
        params["response_format"] = {"type": "json_object"}
    if logprobs > 0 and "logprobs" not in skip:
        params["logprobs"] = True
        params["top_logprobs"] = min(logprobs, MAX_TOP_LOGPROBS)
    return params


@dataclass(frozen=True)
class _Sent:
    """A request answered, with what was counted for it when it was sent."""

    response: Any
    prompt_tokens: int
    cost_usd: float


async def _create(
    client: Any,
    settings: LLMSettings,
    build: Callable[[set[str]], dict[str, Any]],
    messages: Sequence[Mapping[str, str]],
) -> _Sent:
    """The completion, asking again without each parameter the server rejects (each learned once) and
    retrying what may pass (a time-out, a dropped connection, 408, 409, 429, 5xx) ``max_retries`` times."""
    import openai

    retries = 0
    while True:
        skip = unsupported_parameters(settings)
        params = build(skip)
        try:
            return await _send(client, settings, params, messages)
        except openai.BadRequestError as exc:
            rejected = _rejected_parameter(exc, params)
            if rejected is None or rejected in skip:
                raise
            _learn_unsupported(settings, rejected)
            if rejected == "temperature":
                record_note(f"model {settings.model} takes only its default temperature: sent without one")
            elif rejected == "logprobs":
                record_note(f"model {settings.model} gives no token log-probabilities: asked again without them")
            continue
        except (openai.APIConnectionError, openai.APIStatusError) as exc:  # APITimeoutError is a connection error
            if isinstance(exc.__cause__, httpx.ConnectError | httpx.ConnectTimeout):
                raise _Unreachable(exc.__cause__) from None  # no server there: no retry will find one
            if retries >= settings.max_retries or not _retryable(exc):
                raise
            response = getattr(exc, "response", None)
            backoff = min(INITIAL_RETRY_S * 2**retries, MAX_RETRY_S) * (1 - 0.25 * random.random())
            delay = retry_after(response, backoff, MAX_RETRY_AFTER_S) if response is not None else backoff
        retries += 1
        await asyncio.sleep(delay)


def _retryable(exc: Any) -> bool:
    """Whether a failed request may pass if sent again: the server's ``x-should-retry`` if it says, else
    a time-out, a dropped connection, 408, 409, 429 or 5xx."""
    response = getattr(exc, "response", None)
    should: str | None = response.headers.get("x-should-retry") if response is not None else None
    if should in ("true", "false"):
        return should == "true"
    status = getattr(exc, "status_code", None)
    return status is None or status in RETRY_STATUSES or status >= 500


async def _send(
    client: Any, settings: LLMSettings, params: dict[str, Any], messages: Sequence[Mapping[str, str]]
) -> _Sent:
    """One request: charged to the budget and counted, with its prompt's estimated tokens, as it goes out."""
    import openai

    async with host_limit(settings.base_url, settings.max_concurrency):
        charge_llm_call()  # a budget reached stops here, before the request is sent and paid for
        prompt = _prompt_estimate(messages)
        cost = settings.cost(settings.model, prompt, 0)
        record_llm(prompt, 0, cost, estimated=True)  # a request cut off by a time-out may still be billed
        try:
            response = await client.chat.completions.create(**params)
        except (openai.APIStatusError, openai.APIConnectionError) as exc:
            # Refused with a status, or the connection never made: nothing billed, so not in usage.
            if isinstance(exc, openai.APIStatusError) or type(exc.__cause__).__name__ in NEVER_SENT:
                amend_llm(calls=-1, estimated=-1, prompt_tokens=-prompt, cost_usd=-cost)
            raise
    return _Sent(response, prompt, cost)


async def _complete(
    settings: LLMSettings,
    messages: Sequence[Mapping[str, str]],
    temperature: float,
    max_tokens: int | None,
    json_mode: bool,
    validate: Callable[[str], object] | None,
    logprobs: int = 0,
) -> dict[str, Any]:
    refusals = service().refusals
    if (reason := refusals.reason(_refusal_key(settings))) is not None:
        raise LLMRefusedError(reason)
    _refuse_if_unreachable(settings)
    openai = await _imported_openai()
    client, owned = _client(openai, settings)

    def build(skip: set[str]) -> dict[str, Any]:
        return _request(settings, messages, temperature, max_tokens, json_mode, skip, logprobs)

    try:
        sent = await _create(client, settings, build, messages)
    except _Unreachable as exc:
        reason = service().found_unreachable("llm", settings.base_url, exc.error, _connect_s(settings))
        raise LLMUnreachableError(reason) from None
    except openai.APITimeoutError:
        raise LLMError(f"LLM at {settings.base_url} timed out after {settings.timeout_s:g}s") from None
    except openai.APIStatusError as exc:
        error = _status_error(settings, exc)
        if isinstance(error, LLMRefusedError):
            # For this check only: the next one may come with another model or key.
            refusals.remember(_refusal_key(settings), str(error), for_check=True)
        raise error from None
    except openai.APIError as exc:
        raise LLMError(f"LLM at {settings.base_url}: {type(exc).__name__}: {exc}") from None
    except GeneratorExit:  # closed unfinished (its loop was retired): nothing can be awaited any more
        owned = False
        raise
    finally:
        if owned:
            await client.close()
    return _read_response(settings, messages, sent, validate)


async def _imported_openai() -> Any:
    """The ``openai`` module, imported in a worker thread the first time: the import takes a second or
    more, which would stall the plugin loop every built-in component shares (and get it retired)."""
    if "openai" not in sys.modules:
        await asyncio.to_thread(importlib.import_module, "openai")
    import openai

    return openai


# Clients kept open on the plugin loops, which live as long as the process: one per service, endpoint and
# key, over the service's kept HTTP client, so calls reuse its connections instead of opening their own.
def _client(openai: Any, settings: LLMSettings) -> tuple[Any, bool]:
    """An OpenAI client for ``settings`` over the service layer's HTTP client, and whether the caller must
    close it: True on a short-lived loop, where the HTTP client too was made for this call."""
    key = (settings.base_url, settings.api_key(), settings.timeout_s, settings.max_retries)

    def build(http: Any) -> Any:
        return openai.AsyncOpenAI(
            base_url=settings.base_url,
            api_key=key[1],
            timeout=httpx.Timeout(settings.timeout_s, connect=_connect_s(settings)),
            max_retries=0,  # _create retries, so that each request is charged and counted
            http_client=http,
        )

    # Kept by the service, per plugin loop: it goes when the service does (a batch's own service, a test's).
    return service().kept(key, build)


def _read_response(
    settings: LLMSettings,
    messages: Sequence[Mapping[str, str]],
    sent: _Sent,
    validate: Callable[[str], object] | None,
) -> dict[str, Any]:
    """The answer's tokens in place of the estimate counted when it was sent, then its text; LLMError
    naming a refusal, a cut-off or an unusable answer."""
    response = sent.response
    choice = response.choices[0] if response.choices else None
    message = choice.message if choice is not None else None
    text = valid_unicode((message.content if message is not None else None) or "")
    usage = response.usage
    estimated = usage is None or not (usage.prompt_tokens or usage.completion_tokens)
    if estimated:
        prompt, completion = _prompt_estimate(messages), estimate_tokens(text)
    else:
        prompt, completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
    amend_llm(
        estimated=0 if estimated else -1,
        prompt_tokens=prompt - sent.prompt_tokens,
        completion_tokens=completion,
        cost_usd=settings.cost(settings.model, prompt, completion) - sent.cost_usd,
    )

    where = f"LLM at {settings.base_url} (model {settings.model})"
    finish = getattr(choice, "finish_reason", None)
    if message is not None and getattr(message, "refusal", None):
        raise LLMError(f"{where} refused to answer: {message_of(message.refusal)}")
    if finish == "content_filter":
        raise LLMError(f"{where}: the answer was withheld by the provider's content filter")
    if not text.strip():
        cut = " (cut off at the token limit: finish_reason 'length'; raise max_tokens)" if finish == "length" else ""
        raise LLMError(f"{where} returned no answer{cut}")
    if validate is not None:
        try:
            validate(text)
        except LLMError as exc:
            if finish == "length":
                raise LLMError(
                    f"{exc} (cut off at the token limit: finish_reason 'length'; raise max_tokens)"
                ) from None
            raise
    data: dict[str, Any] = {"text": text, "prompt_tokens": prompt, "completion_tokens": completion}
    data["estimated"] = estimated
    if (tokens := _token_logprobs(choice)) is not None:
        data["logprobs"] = [t.to_data() for t in tokens]
    return data


def _token_logprobs(choice: Any) -> list[TokenLogprob] | None:
    """The answer's tokens with their log-probabilities (``choice.logprobs.content``), or ``None`` when the
    server sent none or sent them in a shape this reader does not know."""
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if not isinstance(content, list) or not content:
        return None
    tokens = []
    for item in content:
        token, logprob = getattr(item, "token", None), getattr(item, "logprob", None)
        if not isinstance(token, str) or isinstance(logprob, bool) or not isinstance(logprob, int | float):
            return None
        top = []
        for alternative in getattr(item, "top_logprobs", None) or ():
            other, other_lp = getattr(alternative, "token", None), getattr(alternative, "logprob", None)
            if isinstance(other, str) and isinstance(other_lp, int | float) and not isinstance(other_lp, bool):
                top.append((other, float(other_lp)))
        raw = getattr(item, "bytes", None)
        spelt = None
        if isinstance(raw, list) and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
            spelt = tuple(int(b) for b in raw)
        tokens.append(TokenLogprob(token, float(logprob), tuple(top), spelt))
    return tokens


async def chat(
    messages: Sequence[Mapping[str, str]],
    *,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    json_mode: bool = False,
    model: str | None = None,
    base_url: str | None = None,
    sample: int = 0,
    cache_as: Mapping[str, Any] | None = None,
    validate: Callable[[str], object] | None = None,
    logprobs: int = 0,
) -> LLMAnswer:
    """One chat completion. Identical requests are answered from the cache.

    ``json_mode`` asks for a JSON object (``response_format``) where the server
    supports it; ``max_tokens`` caps the answer. ``sample`` tells apart
    deliberately repeated requests (several samples at temperature 1);
    ``cache_as`` replaces the messages in the cache key (a prompt holding a
    random fence nonce is cached by what it asks instead); an answer
    ``validate(text)`` rejects is an LLMError and is not cached.
    ``logprobs`` (top-k, 0 = off) asks for the answer's token log-probabilities
    with that many alternatives each (:attr:`LLMAnswer.logprobs`); a server that
    refuses them is asked again without, and the answer has none.
    """
    settings = resolve(model, base_url)
    request = {
        "base_url": settings.base_url,
        "model": settings.model,
        "messages": list(messages) if cache_as is None else dict(cache_as),
        "temperature": temperature,
        "max_tokens": max_tokens,
        "sample": sample,
    }
    if logprobs > 0:  # only when asked: the keys of answers cached without them stay as they were
        request["logprobs"] = logprobs

    def compute() -> Any:
        return _complete(settings, messages, temperature, max_tokens, json_mode, validate, logprobs)

    data = await cached("llm", CLIENT_VERSION, request, compute)
    tokens = data.get("logprobs")
    return LLMAnswer(
        data["text"],
        data.get("prompt_tokens", 0),
        data.get("completion_tokens", 0),
        bool(data.get("estimated")),
        tuple(TokenLogprob.from_data(t) for t in tokens) if isinstance(tokens, list) and logprobs > 0 else None,
    )
