"""The ``nli`` verifier: a small trained cross-encoder, run offline with onnxruntime.

The model reads ``(claim, evidence sentence)`` pairs and gives the
probabilities of SUPPORTS, REFUTES and NOT ENOUGH INFO (temperature-scaled, so
they are calibrated on held-out claims). It is MiniLM-L6 fine-tuned on
SciFact, VitaminC, NLI, negation and other claim-evidence training sets,
quantised to int8 and shipped in the package (``factcheck/data/nli``); ``scripts/train_offline_nli.py`` retrains it and
``docs/models/offline-nli.md`` is its model card. Running it needs
``onnxruntime`` and ``tokenizers`` only, no torch.

How a claim is decided:

1. Split the retrieved passages into sentences (best passages first, at most
   ``max_sentences``) and classify every (claim, sentence) pair, one pair at
   a time by default (``batch_size``).
2. The relevance gate: **abstain**, saying that no passage in the corpus
   addresses the claim, when no passage holds ``min_coverage`` of the claim's
   content words (or ``min_shared`` of them, whichever is fewer: a long claim
   is not asked for a third of its twenty words), or when the best
   ``P(SUPPORTS) + P(REFUTES)`` of any
   sentence is below ``min_relevance`` (NOT ENOUGH INFO dominates
   everywhere). Both thresholds are calibrated on held-out training claims
   (``scripts/tune_nli.py``; the model's ``nli.json`` records them).
3. Otherwise the strongest support and the strongest refutation are compared:
   the larger one gives the verdict, and its probability is the confidence.
   The rationale quotes that sentence, and the judgment's evidence shows its
   passage first.

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
from factcheck.options import setting
from factcheck.plugins.hookspecs import hookimpl
from factcheck.text import split_sentences
from factcheck.types import Assessment, Claim, Evidence
from factcheck.usage import record_call
from factcheck.verifiers.base import Verifier
from factcheck.verifiers.lexical import content_stems

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


def word_overlap(claim: str, evidence: Sequence[Evidence]) -> tuple[float, int]:
    """(the largest share, the largest number) of the claim's content words (stemmed, stop words dropped)
    found in one passage: a passage about the claim's subject shares its words. ``(1.0, 0)`` for a claim
    with no content word: there is nothing to look for."""
    stems = content_stems(claim)
    if not stems:
        return 1.0, 0
    shared = [len(stems & content_stems(item.text)) for item in evidence]
    return max(shared, default=0) / len(stems), max(shared, default=0)


def _quote(sentence: str, limit: int = 200) -> str:
    return sentence if len(sentence) <= limit else sentence[: limit - 3] + "..."


def _below(value: float, limit: float) -> str:
    """``value`` with the digits that show it under ``limit`` ("0.2999 < 0.3", never "0.30 < 0.3")."""
    for digits in range(2, 7):
        shown = f"{value:.{digits}f}"
        if float(shown) < limit:
            return shown
    return repr(value)


NO_PASSAGE = "no passage in the corpus addresses this claim"


@dataclass(frozen=True)
class Reading:
    """What the model read for one claim: each evidence sentence and its (S, R, NEI) probabilities,
    and the evidence passages in the order they were retrieved."""

    sentences: tuple[tuple[Evidence, str], ...]
    probs: np.ndarray
    evidence: tuple[Evidence, ...] = ()
    coverage: float = 1.0  # the largest share of the claim's content words that one passage holds
    shared: int = 0  # the largest number of the claim's content words that one passage holds

    @property
    def relevance(self) -> float:
        """The best ``P(SUPPORTS) + P(REFUTES)`` of any sentence: how much the evidence bears on the claim."""
        return float((1.0 - self.probs[:, NEI]).max()) if len(self.probs) else 0.0

    def strongest(self, label: int) -> tuple[float, int]:
        """The highest probability of ``label`` over the sentences, and that sentence's index."""
        index = int(self.probs[:, label].argmax())
        return float(self.probs[index, label]), index

    def decisive(self) -> tuple[bool, float, int]:
        """(verdict, probability, sentence index): the stronger of the best support and the best refutation
        (support wins a tie), its probability, and the sentence that has it: the sentence that decides."""
        support, refute = self.strongest(SUPPORTS), self.strongest(REFUTES)
        verdict = support[0] >= refute[0]
        p, index = support if verdict else refute
        return verdict, p, index

    def deciding_first(self, index: int) -> tuple[Evidence, ...]:
        """The evidence passages with the one holding sentence ``index`` first, the rest in retrieved order."""
        item = self.sentences[index][0]
        return (item, *(e for e in self.evidence if e is not item))


@dataclass(frozen=True)
class NLIVerifier(Verifier):
    """Offline natural-language-inference verifier (ONNX MiniLM cross-encoder).

    Options: ``model`` (a folder with model.onnx, tokenizer.json and nli.json;
    default: the shipped model); the relevance gate, ``min_relevance`` (abstain
    when no sentence's P(SUPPORTS) + P(REFUTES) reaches it) and ``min_coverage``
    (abstain when no passage holds this share of the claim's content words)
    with ``min_shared`` (or this many of them, whichever is fewer), all
    calibrated for the shipped model (its nli.json's ``gate`` records them);
    ``max_sentences`` read per claim, ``batch_size``, ``threads`` (onnxruntime
    intra-op threads; 0: its default).
    """

    name = "nli"
    languages = frozenset({"en"})  # trained on English pairs only
    reuse_judgments = True
    model: str | None = None
    # The gate calibrated for the shipped model on held-out training claims (its nli.json records it);
    # re-tune it with scripts/tune_nli.py for another model.
    min_relevance: float = setting(0.3, minimum=0, maximum=1)
    min_coverage: float = setting(0.5, minimum=0, maximum=1)
    min_shared: int = setting(3, minimum=1)
    max_sentences: int = setting(48, minimum=1)
    # Pair by pair: no padding, and no batch-mate moves a probability (int8 scales per batch).
    batch_size: int = setting(1, minimum=1)
    threads: int = setting(0, minimum=0, zero="onnxruntime's default")

    def __post_init__(self) -> None:
        super().__post_init__()  # the declared ranges
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
            return Reading((), np.zeros((0, len(LABELS))), tuple(evidence), 0.0)
        model = load_model(self.model_folder, self.threads)
        probs = model.probabilities([(claim.text, sentence) for _, sentence in sentences], self.batch_size)
        record_call("nli:pairs", len(sentences))
        share, shared = word_overlap(claim.text, evidence)
        return Reading(tuple(sentences), probs, tuple(evidence), share, shared)

    def decide(self, reading: Reading) -> Assessment:
        """The verdict on a :class:`Reading`: abstain when no passage addresses the claim (coverage below
        ``min_coverage`` or relevance below ``min_relevance``), else the stronger of the best support and
        the best refutation, with its probability as the confidence. The rationale quotes that sentence,
        and its passage comes first in the judgment's evidence."""
        if not reading.sentences:
            return Assessment(None, 0.0, "no evidence retrieved")
        support, refute = reading.strongest(SUPPORTS), reading.strongest(REFUTES)
        min_relevance, min_coverage = self.min_relevance, self.min_coverage
        if reading.coverage < min_coverage and reading.shared < self.min_shared:
            return Assessment(
                None,
                0.0,
                f"{NO_PASSAGE}: the best passage holds {reading.coverage:.0%} of its content words "
                f"(at least {min_coverage:.0%}, or {self.min_shared} words, needed)",
            )
        if reading.relevance < min_relevance:
            return Assessment(
                None,
                0.0,
                f"{NO_PASSAGE}: NOT ENOUGH INFO in all {len(reading.sentences)} sentences read "
                f"(relevance {_below(reading.relevance, min_relevance)} < {min_relevance:g}; "
                f"best P(supports) {support[0]:.2f}, P(refutes) {refute[0]:.2f})",
            )
        verdict, p, index = reading.decisive()
        item, sentence = reading.sentences[index]
        label = LABELS[SUPPORTS if verdict else REFUTES]
        rationale = f'{label} (p={p:.2f}) by ({item.title or item.source}): "{_quote(sentence)}"'
        other = refute[0] if verdict else support[0]
        if other >= 0.3:
            rationale += f"; the strongest {'refutation' if verdict else 'support'} has p={other:.2f}"
        return Assessment(verdict, round(p, 4), rationale, evidence=reading.deciding_first(index))

    def assess(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        """Synchronous judgment (the async :meth:`judge` runs it in a worker thread)."""
        return self.decide(self.read(claim, evidence))

    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        return await asyncio.to_thread(self.assess, claim, evidence)


@hookimpl
def register_verifiers(register: Callable[[Any], None]) -> None:
    register(NLIVerifier())
