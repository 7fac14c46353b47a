"""Opening a shipped ONNX model: its folder's files checked, its tokenizer and its CPU inference session;
and running many small inputs of one claim side by side (:func:`side_by_side`).

The NLI cross-encoder (:mod:`factcheck.verifiers.nli`) and the sentence encoder (:mod:`factcheck.embed`)
open the same way; each then sets the tokenizer's truncation it needs.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from factcheck.errors import ConfigError


@dataclass(frozen=True)
class OnnxModel:
    """A model's inference session, its tokenizer (padding on) and its JSON configuration."""

    session: Any
    tokenizer: Any
    config: dict[str, Any]


T = TypeVar("T")
R = TypeVar("R")

# One thread a model run. The shipped models read one sentence (or one claim and sentence) at a time, a few
# dozen tokens: split over threads, such a run costs more CPU than it saves time, and onnxruntime's pool spins
# between runs (python bench/profile_stages.py; docs/performance.md). The runs of a claim go side by side
# instead, one a core (:func:`side_by_side`), and so do the claims of a check and a server's requests.
THREADS = 1


def open_onnx(folder: Path, files: tuple[str, str, str], what: str, threads: int = THREADS) -> OnnxModel:
    """Open the model of ``folder``, whose ``files`` are (the model, tokenizer.json, its configuration);
    ``what`` names it in errors ("nli: model folder", "embedder: folder"). ``threads``: onnxruntime's intra-op
    threads a run (:data:`THREADS`); 0, onnxruntime's own default (one per core). Threads beyond the caller's
    own never spin waiting for work. ConfigError when a file is missing or onnxruntime / tokenizers are not
    installed."""
    missing = [name for name in files if not (folder / name).is_file()]
    if missing:
        raise ConfigError(f"{what} {folder} lacks {', '.join(missing)}")
    name = what.split(":")[0]
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ConfigError(
            f"{name}: needs onnxruntime and tokenizers ({exc}): pip install onnxruntime tokenizers"
        ) from None
    model, tokenizer_file, config_file = files
    config = json.loads((folder / config_file).read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_file(str(folder / tokenizer_file))
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1  # the graph runs node after node (sequential execution): no second pool
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = onnxruntime.InferenceSession(str(folder / model), options, providers=["CPUExecutionProvider"])
    return OnnxModel(session, tokenizer, config)


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_busy = 0  # calls of side_by_side running on the pool now


def side_by_side(work: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``work(item)`` for each item, in order. While no other claim is using them, the items run on one thread
    per core: a claim's sentences, each read alone by a model on one thread (:data:`THREADS`), are read at once
    on every core instead of one after the other. Each result is computed exactly as alone; only the time
    changes. When another claim is already running side by side (a batch, a busy server), the items run here,
    one after the other: the claims then fill the cores themselves, and more threads would only contend."""
    global _pool, _busy
    with _pool_lock:
        alone = len(items) > 1 and _busy == 0
        if alone:
            _busy += 1
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="factcheck-onnx")
            pool = _pool
    if not alone:
        return [work(item) for item in items]
    try:
        return list(pool.map(work, items))
    finally:
        with _pool_lock:
            _busy -= 1


def _forget_pool() -> None:
    """In a forked child, the parent's threads are not there: start a pool of its own when needed."""
    global _pool, _busy
    _pool, _busy = None, 0


os.register_at_fork(after_in_child=_forget_pool)
