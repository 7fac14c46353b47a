"""The ``nli`` verifier: a small trained cross-encoder, run offline with onnxruntime.

The model reads ``(claim, evidence sentence)`` pairs and gives the
probabilities of SUPPORTS, REFUTES and NOT ENOUGH INFO (temperature-scaled, so
they are calibrated on held-out claims). It is MiniLM-L6 fine-tuned on SciFact
and FEVER training data, quantised to int8 and shipped in the package
(``factcheck/data/nli``); ``scripts/train_offline_nli.py`` retrains it and
``docs/models/offline-nli.md`` is its model card. Running it needs
``onnxruntime`` and ``tokenizers`` only, no torch.

How a claim is decided:

1. Split the retrieved passages into sentences (best passages first, at most
   ``max_sentences``) and classify every (claim, sentence) pair in batches.
2. Relevance is the best ``P(SUPPORTS) + P(REFUTES)`` of any sentence. Below
   ``min_relevance`` NOT ENOUGH INFO dominates everywhere: **abstain**.
3. Otherwise the strongest support and the strongest refutation are compared:
   the larger one gives the verdict, and its probability is the confidence.

Evidence is only classified, never followed as instructions: text in a page
can change what the model reads, not what it is asked.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factcheck.errors import ConfigError
from factcheck.plugins.hookspecs import hookimpl
from factcheck.text import split_sentences
from factcheck.types import Assessment, Claim, Evidence
from factcheck.usage import record_call
from factcheck.verifiers.base import Verifier

SHIPPED_MODEL = Path(__file__).resolve().parent.parent / "data" / "nli"
LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
SUPPORTS, REFUTES, NEI = range(3)
MODEL_FILES = ("model.onnx", "tokenizer.json", "nli.json")


class NLIModel:
    """The ONNX cross-encoder and its tokenizer: ``probabilities(pairs)`` -> rows of (S, R, NEI)."""

    def __init__(self, folder: Path, threads: int = 0) -> None:
        missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
        if missing:
            raise ConfigError(f"nli: model folder {folder} lacks {', '.join(missing)}")
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ConfigError(
                f"nli: needs onnxruntime and tokenizers ({exc}): pip install onnxruntime tokenizers"
            ) from None
        config = json.loads((folder / "nli.json").read_text(encoding="utf-8"))
        if list(config.get("labels", [])) != list(LABELS):
            raise ConfigError(f"nli: {folder}/nli.json must list the labels {list(LABELS)}")
        self.temperature = float(config.get("temperature", 1.0))
        self.max_length = int(config.get("max_length", 128))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=self.max_length, strategy="longest_first")
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self.session = onnxruntime.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}

    def probabilities(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """Calibrated label probabilities, one row per (claim, evidence) pair."""
        rows = []
        for start in range(0, len(pairs), batch_size):
            encodings = self.tokenizer.encode_batch(list(pairs[start : start + batch_size]))
            features = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            (logits,) = self.session.run(["logits"], {k: v for k, v in features.items() if k in self.inputs})
            rows.append(softmax(np.asarray(logits, dtype=np.float64) / self.temperature))
        return np.concatenate(rows) if rows else np.zeros((0, len(LABELS)))


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]


_models: dict[tuple[Path, int], NLIModel] = {}
_digests: dict[tuple[Path, int, int], str] = {}
_lock = threading.Lock()


def load_model(folder: Path, threads: int = 0) -> NLIModel:
    """The model in ``folder``, loaded once per process (sessions are thread-safe and shared)."""
    key = (folder.resolve(), threads)
    with _lock:
        if key not in _models:
            _models[key] = NLIModel(key[0], threads)
        return _models[key]


def model_digest(folder: Path) -> str:
    """SHA-256 of the model file (recomputed only when its size or modification time changes)."""
    path = (folder / "model.onnx").resolve()
    stat = path.stat()
    key = (path, stat.st_size, stat.st_mtime_ns)
    with _lock:
        if key not in _digests:
            _digests[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        return _digests[key]


def _quote(sentence: str, limit: int = 200) -> str:
    return sentence if len(sentence) <= limit else sentence[: limit - 3] + "..."


@dataclass(frozen=True)
class Reading:
    """What the model read for one claim: each evidence sentence and its (S, R, NEI) probabilities."""

    sentences: tuple[tuple[Evidence, str], ...]
    probs: np.ndarray

    @property
    def relevance(self) -> float:
        """The best ``P(SUPPORTS) + P(REFUTES)`` of any sentence: how much the evidence bears on the claim."""
        return float((1.0 - self.probs[:, NEI]).max()) if len(self.probs) else 0.0

    def strongest(self, label: int) -> tuple[float, int]:
        """The highest probability of ``label`` over the sentences, and that sentence's index."""
        index = int(self.probs[:, label].argmax())
        return float(self.probs[index, label]), index


@dataclass(frozen=True)
class NLIVerifier(Verifier):
    """Offline natural-language-inference verifier (ONNX MiniLM cross-encoder).

    Options: ``model`` (a folder with model.onnx, tokenizer.json and nli.json;
    default: the shipped model), ``min_relevance`` (abstain when no sentence's
    P(SUPPORTS) + P(REFUTES) reaches it), ``max_sentences`` read per claim,
    ``batch_size``, ``threads`` (onnxruntime intra-op threads; 0: its default).
    """

    name = "nli"
    reuse_judgments = True
    model: str | None = None
    min_relevance: float = 0.2
    max_sentences: int = 48
    batch_size: int = 32
    threads: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.min_relevance <= 1:
            raise ConfigError(f"nli: min_relevance must be in [0, 1], got {self.min_relevance!r}")
        if self.max_sentences < 1 or self.batch_size < 1 or self.threads < 0:
            raise ConfigError("nli: max_sentences and batch_size must be at least 1, threads at least 0")
        if self.model is not None and not Path(self.model).expanduser().is_dir():
            raise ConfigError(f"nli: no such model folder: {self.model}")

    @property
    def model_folder(self) -> Path:
        return Path(self.model).expanduser() if self.model else SHIPPED_MODEL

    def cache_version(self) -> str:
        """The model file's digest: a retrained model never reuses the old one's judgments."""
        return model_digest(self.model_folder)

    async def prepare(self) -> None:
        """Load the model once, before the first claim, so a broken install is reported once, clearly."""
        await asyncio.to_thread(load_model, self.model_folder, self.threads)

    def read(self, claim: Claim, evidence: Sequence[Evidence]) -> Reading:
        """Classify ``claim`` against every evidence sentence (best passages first, at most ``max_sentences``)."""
        sentences = [
            (item, sentence) for item in evidence for sentence in split_sentences(item.text) if len(sentence) > 1
        ][: self.max_sentences]
        if not sentences:
            return Reading((), np.zeros((0, len(LABELS))))
        model = load_model(self.model_folder, self.threads)
        probs = model.probabilities([(claim.text, sentence) for _, sentence in sentences], self.batch_size)
        record_call("nli:pairs", len(sentences))
        return Reading(tuple(sentences), probs)

    def decide(self, reading: Reading) -> Assessment:
        """The verdict on a :class:`Reading`: abstain below ``min_relevance``, else the stronger of
        the best support and the best refutation, with its probability as the confidence."""
        if not reading.sentences:
            return Assessment(None, 0.0, "no evidence retrieved")
        support, refute = reading.strongest(SUPPORTS), reading.strongest(REFUTES)
        if reading.relevance < self.min_relevance:
            return Assessment(
                None,
                0.0,
                f"NOT ENOUGH INFO in {len(reading.sentences)} sentences "
                f"(best P(supports) {support[0]:.2f}, P(refutes) {refute[0]:.2f})",
            )
        verdict = support[0] >= refute[0]
        p, index = support if verdict else refute
        item, sentence = reading.sentences[index]
        label = LABELS[SUPPORTS if verdict else REFUTES]
        rationale = f'{label} (p={p:.2f}) by ({item.title or item.source}): "{_quote(sentence)}"'
        other = refute[0] if verdict else support[0]
        if other >= 0.3:
            rationale += f"; the strongest {'refutation' if verdict else 'support'} has p={other:.2f}"
        return Assessment(verdict, round(p, 4), rationale)

    def assess(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        """Synchronous judgment (the async :meth:`judge` runs it in a worker thread)."""
        return self.decide(self.read(claim, evidence))

    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        return await asyncio.to_thread(self.assess, claim, evidence)


@hookimpl
def register_verifiers(register: Callable[[Any], None]) -> None:
    register(NLIVerifier())
