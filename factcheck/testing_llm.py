"""A fake OpenAI-compatible chat server on loopback, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` after a fixed ``latency_s``, as a
model server would, without a model: the verification prompt gets a verdict
(FALSE when the claim says "not" or "never", else TRUE, confidence 0.9), the
claim-extraction prompt one claim per sentence, anything else a fixed passage.
It is an asyncio server, so a thousand requests waiting out their latency cost
no threads; run it in a thread of the caller (:class:`FakeChatServer`) or,
so its work never competes with the caller's for the GIL, in its own process::

    python -m factcheck.testing_llm --latency 0.5     # prints its base URL, serves until killed

Point factcheck at it with ``--llm-base-url`` (no key needed for a local server).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from factcheck.extractors.llm import SYSTEM_PROMPT as EXTRACT_PROMPT
from factcheck.verifiers.llm import SYSTEM_PROMPT as VERIFY_PROMPT

PASSAGE = "The Eiffel Tower is a wrought-iron lattice tower in Paris, France, completed in 1889."
# The fixed opening of each prompt identifies it (the verification prompt goes on with a random nonce).
_VERIFY_HEAD = VERIFY_PROMPT.split("{", 1)[0][:60]
_EXTRACT_HEAD = EXTRACT_PROMPT[:60]


def chat_completion(content: str, model: str, prompt_tokens: int = 100, completion_tokens: int = 20) -> dict[str, Any]:
    """An OpenAI ``chat.completion`` object answering ``content``."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def default_answer(body: dict[str, Any]) -> str:
    """What the fake model says to a chat request (see the module docstring)."""
    messages = body.get("messages") or [{}]
    system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
    user = str(messages[-1].get("content", ""))
    if system.startswith(_VERIFY_HEAD):
        found = re.search(r"CLAIM: (.*)", user)
        claim = found.group(1) if found else ""
        false = bool(re.search(r"\b(not|never)\b", claim, re.IGNORECASE))
        return json.dumps({"factuality": not false, "confidence": 0.9, "rationale": "fake model"})
    if system.startswith(_EXTRACT_HEAD):
        found = re.search(r"<<<TEXT>>>\n(.*)\n<<<END TEXT>>>", user, re.DOTALL)
        sentences = re.findall(r"[^.!?]+[.!?]", found.group(1) if found else "")
        return json.dumps({"claims": [{"claim": s.strip(), "queries": [s.strip()]} for s in sentences]})
    return PASSAGE


class FakeChatServer:
    """The fake model server on ``127.0.0.1`` in a background thread; ``url`` is its ``/v1`` base URL.

    ``requests`` counts the chat requests answered; ``answer`` replaces :func:`default_answer`.
    """

    def __init__(
        self, latency_s: float = 0.0, *, port: int = 0, answer: Callable[[dict[str, Any]], str] = default_answer
    ) -> None:
        self.latency_s = latency_s
        self.answer = answer
        self.requests = 0
        self._port = port
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL to give as ``--llm-base-url``."""
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/v1"

    def start(self) -> FakeChatServer:
        """Start serving (returns once the port is open)."""
        self._server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", self._port))
        self._thread = threading.Thread(target=self._loop.run_forever, name="fake-chat-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the port."""
        if self._server is None or self._thread is None:
            return
        server = self._server

        async def close() -> None:
            server.close()
            self._loop.stop()

        asyncio.run_coroutine_threadsafe(close(), self._loop)
        self._thread.join(timeout=5)
        self._loop.close()
        self._server = self._thread = None

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection: HTTP/1.1 requests with bodies of known length, kept alive until the client closes."""
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
                method, path = head[0].split(" ")[:2]
                headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
                body = await reader.readexactly(int(headers.get("content-length") or 0))
                status, payload = self._respond(method, path, body)
                if self.latency_s:
                    await asyncio.sleep(self.latency_s)
                data = json.dumps(payload).encode()
                writer.write(
                    f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(data)}\r\n\r\n".encode()
                    + data
                )
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass  # the client went away, or sent something this small server does not speak
        finally:
            writer.close()

    def _respond(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {method} {path}"}}
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return 400, {"error": {"message": "body is not JSON"}}
        self.requests += 1
        return 200, chat_completion(self.answer(request), str(request.get("model") or "fake-model"))


def main() -> None:
    """Serve until killed, printing the base URL on the first line of standard output."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    args = parser.parse_args()
    server = FakeChatServer(args.latency, port=args.port).start()
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
