"""Sentence embeddings: all-MiniLM-L6-v2 as int8 ONNX, run with onnxruntime (no torch).

The encoder maps a text to a unit vector of 384 numbers; the cosine of two vectors (their dot
product) says how close the texts are in meaning. It serves two uses (issue 26):

- hybrid retrieval: the ``corpus`` source ranks passages by meaning beside BM25
  (:mod:`factcheck.sources.corpus`), and the web-page reader picks a page's passages the same way
  (:func:`factcheck.pages.select_passages`);
- relevance by meaning: the ``nli`` verifier lets only sentences about the claim decide.

The model is sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), the checkpoint the shipped NLI
model was fine-tuned from, exported by ``scripts/export_embedder.py`` and shipped in
``factcheck/data/embedder`` (22.8 MB). Nothing is downloaded at run time.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from factcheck.onnxmodel import THREADS, open_onnx, side_by_side
from factcheck.usage import record_call

SHIPPED_EMBEDDER = Path(__file__).resolve().parent / "data" / "embedder"
EMBEDDER_FILES = ("embedder.onnx", "tokenizer.json", "embedder.json")
BATCH = 32  # a corpus's passages, sorted by length
# A claim's sentences and queries, one at a time: the int8 model scales its activations per batch, so a
# batch-mate would move a similarity (and the relevance gate with it); unpadded, it is also the fastest.
ONE_AT_A_TIME = 1
REMEMBERED = 8192  # vectors of texts encoded alone kept per encoder (384 floats each: 12.6 MB at most)


class Embedder:
    """The ONNX sentence encoder and its tokenizer: ``encode(texts)`` -> unit vectors, one row a text."""

    def __init__(self, folder: Path, threads: int = THREADS) -> None:
        opened = open_onnx(folder, EMBEDDER_FILES, "embedder: folder", threads)
        self.dimension = int(opened.config["dimension"])
        self.tokenizer = opened.tokenizer
        self.tokenizer.enable_truncation(max_length=int(opened.config.get("max_length", 256)))
        self.session = opened.session
        self.digest = embedder_digest(folder)
        # Texts encoded alone, remembered: a claim is embedded to search the corpus and again to rank its
        # sentences, and the passages of related claims repeat. Alone, a text's vector never depends on another.
        self._alone: OrderedDict[str, np.ndarray] = OrderedDict()
        self._alone_lock = threading.Lock()

    def encode(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None, batch_size: int = BATCH
    ) -> np.ndarray:
        """Unit vectors (float32, one row per text, in the given order). Texts are batched by length,
        so that little padding is computed; ``progress`` is told how many texts each batch encoded."""
        matrix = np.zeros((len(texts), self.dimension), dtype=np.float32)
        order = np.argsort([len(text) for text in texts], kind="stable")
        for start in range(0, len(texts), batch_size):
            chosen = order[start : start + batch_size]
            encodings = self.tokenizer.encode_batch([texts[i] for i in chosen])
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            }
            (vectors,) = self.session.run(["embedding"], feed)
            matrix[chosen] = vectors
            if progress is not None:
                progress(len(chosen))
        return matrix

    def encode_each(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` each encoded alone (no batch-mate, no padding), as :meth:`encode` with
        ``batch_size=1`` gives them, on every core at once (:func:`factcheck.onnxmodel.side_by_side`); a text
        encoded alone before, among the last :data:`REMEMBERED`, is not encoded again."""
        known: dict[str, np.ndarray] = {}
        with self._alone_lock:
            for text in texts:
                if (vector := self._alone.get(text)) is not None:
                    self._alone.move_to_end(text)
                    known[text] = vector
        new = list(dict.fromkeys(text for text in texts if text not in known))
        if new:
            vectors = side_by_side(lambda text: self.encode([text], batch_size=ONE_AT_A_TIME)[0], new)
            record_call("embedder:texts", len(new))
            known.update(zip(new, vectors, strict=True))
            with self._alone_lock:
                self._alone.update(zip(new, vectors, strict=True))
                while len(self._alone) > REMEMBERED:
                    self._alone.popitem(last=False)
        matrix = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            matrix[row] = known[text]
        return matrix

    def similarities(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """The cosine of ``query`` with each of ``texts`` (one number per text), each encoded alone."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        vectors = self.encode_each([query, *texts])
        return vectors[1:] @ vectors[0]  # type: ignore[no-any-return]


_embedders: dict[tuple[Path, int], Embedder] = {}
_digests: dict[tuple[Path, int, int], str] = {}
_lock = threading.Lock()
_digest_lock = threading.Lock()  # apart from _lock: loading a model computes its digest


def embedder_digest(folder: Path | None = None) -> str:
    """SHA-256 of the encoder file (recomputed only when its size or modification time changes): what
    embeddings computed by it, and judgments that used them, are keyed by."""
    path = ((folder or SHIPPED_EMBEDDER) / "embedder.onnx").resolve()
    stat = path.stat()
    key = (path, stat.st_size, stat.st_mtime_ns)
    with _digest_lock:
        if key not in _digests:
            _digests[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        return _digests[key]


def load_embedder(folder: Path | None = None, threads: int = THREADS) -> Embedder:
    """The encoder in ``folder`` (default: the shipped one), loaded once per process."""
    key = ((folder or SHIPPED_EMBEDDER).resolve(), threads)
    with _lock:
        if key not in _embedders:
            _embedders[key] = Embedder(key[0], threads)
        return _embedders[key]
