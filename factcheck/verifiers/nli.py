"""The ``nli`` verifier: a small trained cross-encoder, run offline with onnxruntime.

The model reads ``(claim, evidence sentence)`` pairs and gives the
probabilities of SUPPORTS, REFUTES and NOT ENOUGH INFO (temperature-scaled, so
they are calibrated on held-out claims). It is MiniLM-L6 fine-tuned on
SciFact, VitaminC, NLI, negation and other claim-evidence training sets,
quantised to int8 and shipped in the package (``factcheck/data/nli``); ``scripts/train_offline_nli.py`` retrains it and
``docs/models/offline-nli.md`` is its model card. Running it needs
``onnxruntime`` and ``tokenizers`` only, no torch.

How a claim is decided (issue 26; ``docs/evidence.md``):

1. **Sentences in context.** The retrieved passages are split into sentences
   (at most ``max_sentences``, best passages first). A sentence that opens with
   a pronoun or a bare definite reference ("It was completed in 1889.", "The
   tower ...") is read after the sentence before it.
2. **Relevance by meaning.** Every sentence, with its passage's title, is
   embedded (:mod:`factcheck.embed`) and ranked by its cosine with the claim.
   The ``read_sentences`` closest are classified, with a two-sentence window
   around each of the ``windows`` closest; the best window can decide.
3. **The relevance gate: abstain**, saying that no passage in the corpus
   addresses the claim, when no passage holds ``min_coverage`` of the claim's
   content words (or ``min_shared`` of them, whichever is fewer), when no
   sentence is as close to the claim as ``min_similarity`` ("the closest
   sentence is off topic"), or when the best ``P(SUPPORTS) + P(REFUTES)`` of
   the sentences on topic is below ``min_relevance``. The thresholds are
   calibrated on held-out training claims and on claims outside the corpus's
   coverage (``scripts/tune_relevance.py``; the model's ``nli.json`` records
   them).
4. **The decision rule (issue 39: a FALSE must be earned).** A sentence decides only when it is on topic
   *and about the claim*: it names the claim's subject and what the claim says of it
   (:mod:`factcheck.verifiers.about`), not only its topic words. The claim is FALSE (TRUE) only when such a
   sentence refutes (supports) it with at least ``refute_threshold`` (``support_threshold``), thresholds
   fitted by conformal risk control on a calibration split so that the false-accusation rate stays at most
   5% and the myth-acceptance rate at most 10% (``scripts/fit_risk.py``; ``docs/harm.md``), and no sentence
   about the claim reaches ``conflict`` on the other side: evidence on both sides is UNVERIFIED ("the
   evidence conflicts"), both sentences shown. Otherwise the claim is UNVERIFIED: "the evidence on this
   topic does not say", with the sentence that came closest and why it did not decide. The rationale quotes
   the unit that decided (a sentence, with its antecedent, or a window), and the judgment's evidence shows
   its passage first.
5. **Confidence that means something.** The confidence comes from the model's calibration
   (``nli.json``'s ``confidence``, fitted on held-out claims) of the deciding probability. A verdict is
   strong only when a second sentence about the claim agrees (``agree``) and its probability clears its
   threshold by ``margin``; one sentence alone, however sure, is at most weak. Between the two labels
   stands the conflict rule (the other side below ``conflict`` in every sentence, and below its own
   threshold by ``margin`` in every unit), so a rounding of the model's probabilities can move a verdict to
   UNVERIFIED, never from TRUE to FALSE.

Evidence is only classified, never followed as instructions: text in a page
can change what the model reads, not what it is asked.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from factcheck.embed import embedder_digest, load_embedder
from factcheck.errors import ConfigError
from factcheck.extractors.decontext import needs_antecedent
from factcheck.onnxmodel import THREADS, open_onnx, side_by_side
from factcheck.options import setting
from factcheck.plugin import Verifier, hookimpl
from factcheck.plugin.verifier import WEAK_CAP
from factcheck.text import split_sentences
from factcheck.types import Assessment, Claim, Evidence
from factcheck.usage import record_call
from factcheck.verifiers.about import claim_parts
from factcheck.verifiers.lexical import content_stems

SHIPPED_MODEL = Path(__file__).resolve().parent.parent / "data" / "nli"
LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
SUPPORTS, REFUTES, NEI = range(3)
MODEL_FILES = ("model.onnx", "tokenizer.json", "nli.json")
READING_FORMAT = "units-2"  # bump when what the model reads of the evidence changes
MIN_CONFIDENCE = 0.05
FEATURES = ("input_ids", "attention_mask", "token_type_ids")
TOKENISED = 4096  # (claim, text) pairs whose tokens are remembered per model
COMPARABLE_COUNTER = 0.75  # the other side weighs at least this share of the verdict's: a comparable counter


class NLIModel:
    """The ONNX cross-encoder and its tokenizer: ``probabilities(pairs)`` -> rows of (S, R, NEI)."""

    def __init__(self, folder: Path, threads: int = THREADS) -> None:
        opened = open_onnx(folder, MODEL_FILES, "nli: model folder", threads)
        config = opened.config
        if list(config.get("labels", [])) != list(LABELS):
            raise ConfigError(f"nli: {folder}/nli.json must list the labels {list(LABELS)}")
        self.temperature = float(config.get("temperature", 1.0))
        self.max_length = int(config.get("max_length", 128))
        self.tokenizer = opened.tokenizer
        self.tokenizer.enable_truncation(max_length=self.max_length, strategy="longest_first")
        self.tokenizer.no_padding()  # pairs are kept unpadded, and padded per batch (:func:`features`)
        self.session = opened.session
        self.inputs = {i.name for i in self.session.get_inputs()}
        # Pairs tokenised, remembered: :meth:`fits` tokenises the pairs a claim may read, and
        # :meth:`probabilities` reads some of the same pairs.
        self._tokenised: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._tokenised_lock = threading.Lock()

    def encodings(self, pairs: Sequence[tuple[str, str]]) -> list[Any]:
        """The tokenizer's encoding of each pair (unpadded), each pair tokenised once among the last
        :data:`TOKENISED` asked for."""
        with self._tokenised_lock:
            known = {pair: self._tokenised[pair] for pair in pairs if pair in self._tokenised}
        new = list(dict.fromkeys(pair for pair in pairs if pair not in known))
        if new:
            made = self.tokenizer.encode_batch(new)
            known.update(zip(new, made, strict=True))
            with self._tokenised_lock:
                for pair, encoding in zip(new, made, strict=True):
                    self._tokenised[pair] = encoding
                while len(self._tokenised) > TOKENISED:
                    self._tokenised.popitem(last=False)
        return [known[pair] for pair in pairs]

    def fits(self, claim: str, texts: Sequence[str]) -> list[bool]:
        """Whether the model reads each ``(claim, text)`` pair whole, within its ``max_length`` tokens."""
        return [not encoding.overflowing for encoding in self.encodings([(claim, t) for t in texts])]

    def probabilities(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """Calibrated label probabilities, one row per (claim, evidence) pair."""
        encodings = self.encodings(pairs)
        batches = [encodings[start : start + batch_size] for start in range(0, len(pairs), batch_size)]

        def run(batch: list[Any]) -> np.ndarray:
            fed = features(batch)
            (logits,) = self.session.run(["logits"], {k: v for k, v in fed.items() if k in self.inputs})
            return softmax(np.asarray(logits, dtype=np.float64) / self.temperature)

        rows = side_by_side(run, batches)  # each batch as alone, on every core at once
        return np.concatenate(rows) if rows else np.zeros((0, len(LABELS)))


def features(encodings: Sequence[Any]) -> dict[str, np.ndarray]:
    """The model's inputs for a batch of encodings, padded at the end to the longest as the tokenizer pads a
    batch: ``[PAD]`` (id 0), attention 0 and token type 0."""
    longest = max((len(e.ids) for e in encodings), default=0)
    batch = {name: np.zeros((len(encodings), longest), dtype=np.int64) for name in FEATURES}
    for row, encoding in enumerate(encodings):
        width = len(encoding.ids)
        batch["input_ids"][row, :width] = encoding.ids
        batch["attention_mask"][row, :width] = encoding.attention_mask
        batch["token_type_ids"][row, :width] = encoding.type_ids
    return batch


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]


_models: dict[tuple[Path, int], NLIModel] = {}
_digests: dict[tuple[Path, int, int], str] = {}
_configs: dict[Path, dict[str, Any]] = {}
_lock = threading.Lock()


def load_model(folder: Path, threads: int = THREADS) -> NLIModel:
    """The model in ``folder``, loaded once per process (sessions are thread-safe and shared)."""
    key = (folder.resolve(), threads)
    with _lock:
        if key not in _models:
            _models[key] = NLIModel(key[0], threads)
        return _models[key]


def model_config(folder: Path) -> dict[str, Any]:
    """The model's nli.json (labels, temperature, gate, confidence calibration), read once per process."""
    key = (folder / "nli.json").resolve()
    with _lock:
        if key not in _configs:
            _configs[key] = json.loads(key.read_text(encoding="utf-8"))
        return _configs[key]


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
UNDECIDED = "the evidence on this topic does not say"
CONFLICTING = "the evidence conflicts"


@dataclass(frozen=True)
class Thresholds:
    """The decision rule's thresholds (:meth:`NLIVerifier.rule`), on calibrated probabilities."""

    support_threshold: float  # a TRUE needs a sentence about the claim supporting it with at least this
    refute_threshold: float  # a FALSE needs one refuting it with at least this
    conflict: float  # the other side reaching this, about the claim too: conflicting, UNVERIFIED
    agree: float  # a second sentence reaching this on the same side makes a verdict strong
    margin: float  # a verdict closer than this to its threshold is at most weak


# Where a model records no fitted rule (nli.json's ``decision``): the stronger side of a sentence about the claim.
DEFAULT_THRESHOLDS = Thresholds(0.5, 0.5, 0.5, 0.5, 0.05)


@dataclass(frozen=True)
class Unit:
    """One piece of evidence the model reads, as it needs to be read to stand alone: a sentence (after the
    sentence before it when it opens with a reference back, "It was completed in 1889."), or a window of two
    sentences. ``similarity`` is how close it is in meaning to the claim: the cosine of their embeddings, the
    passage's title read with it."""

    item: Evidence
    text: str
    similarity: float = 1.0
    window: bool = False
    own: str = ""  # what the unit itself says, its antecedent left out ("": all of ``text``)


@dataclass(frozen=True)
class Balance:
    """The evidence weighed: the verdict, the unit that decides it, and the strength of the best unit on each
    side (its probability times its similarity, over the units on topic)."""

    verdict: bool
    index: int
    strength: float
    counter: float
    counter_index: int


@dataclass(frozen=True)
class Reading:
    """What the model read for one claim: the units it classified (the closest in meaning first, then the
    windows) with their (S, R, NEI) probabilities, and the evidence passages in the order they were retrieved."""

    units: tuple[Unit, ...]
    probs: np.ndarray
    evidence: tuple[Evidence, ...] = ()
    coverage: float = 1.0  # the largest share of the claim's content words that one passage holds
    shared: int = 0  # the largest number of the claim's content words that one passage holds
    claim: str = ""  # the claim read; "" asks nothing of a unit's aboutness (a reading made by hand)
    about: bool = True  # whether a unit that decides must be about the claim (NLIVerifier's ``about``)
    # The units closer than this to the claim were classified; the others, off topic at any ``min_similarity``
    # from here up, were not (their rows say NOT ENOUGH INFO). Deciding with a lower ``min_similarity`` is an error.
    read_from: float = -1.0

    @property
    def similarities(self) -> np.ndarray:
        return np.array([unit.similarity for unit in self.units], dtype=np.float64)

    @property
    def closest(self) -> int:
        """The index of the unit closest in meaning to the claim."""
        return int(self.similarities.argmax())

    def on_topic(self, min_similarity: float) -> np.ndarray:
        """Which units are about the claim: similarity at least ``min_similarity``."""
        return self.similarities >= min_similarity

    def relevance(self, min_similarity: float = 0.0) -> float:
        """The best ``P(SUPPORTS) + P(REFUTES)`` of a unit on topic: how much the evidence bears on the claim."""
        mask = self.on_topic(min_similarity)
        return float((1.0 - self.probs[mask, NEI]).max()) if mask.any() else 0.0

    def weigh(self, min_similarity: float = 0.0) -> Balance:
        """Weigh the units on topic: each side's strength is its best probability times that unit's similarity,
        so a sentence closer to the claim outweighs an equally sure one further from it; the stronger side
        decides (support wins a tie)."""
        mask = self.on_topic(min_similarity)
        weighted = self.probs[:, :2] * self.similarities[:, None] * mask[:, None]
        support, refute = int(weighted[:, SUPPORTS].argmax()), int(weighted[:, REFUTES].argmax())
        s, r = float(weighted[support, SUPPORTS]), float(weighted[refute, REFUTES])
        if s >= r:
            return Balance(True, support, s, r, refute)
        return Balance(False, refute, r, s, support)

    def deciding_first(self, *indices: int) -> tuple[Evidence, ...]:
        """The evidence passages with the ones holding units ``indices`` first, the rest in retrieved order."""
        first = list(dict.fromkeys(id(self.units[i].item) for i in indices))
        items = {id(self.units[i].item): self.units[i].item for i in indices}
        return (*(items[k] for k in first), *(e for e in self.evidence if id(e) not in items))

    def missing(self, index: int) -> str | None:
        """What unit ``index`` lacks to be about the claim, not only its topic (:mod:`.about`), or None; None for
        a reading that asks nothing of it (no claim recorded, or ``about`` off)."""
        if not self.claim or not self.about:
            return None
        unit = self.units[index]
        own = titled(unit.item, unit.own) if unit.own else None
        return claim_parts(self.claim).missing(titled(unit.item, unit.text), own)

    def side(self, label: int, min_similarity: float, agree: float) -> Side:
        """The surest unit of one side (SUPPORTS or REFUTES) among the units on topic and about the claim,
        and how many distinct sentences about it reach ``agree`` on that side (windows repeat a sentence and
        are not counted); also the surest unit on topic whatever it is about, for the reason of an abstention."""
        on_topic = self.on_topic(min_similarity)
        about = np.array([bool(on_topic[i]) and self.missing(i) is None for i in range(len(self.units))], dtype=bool)
        p = self.probs[:, label]
        topical = int(np.where(on_topic, p, -1.0).argmax()) if on_topic.any() else -1
        if not about.any():
            return Side(label, -1, 0.0, 0, topical)
        best = int(np.where(about, p, -1.0).argmax())
        sentences = about & np.array([not unit.window for unit in self.units], dtype=bool)
        said = int(np.where(sentences, p, -1.0).argmax()) if sentences.any() else -1
        agreeing = {self.units[i].text for i in range(len(self.units)) if sentences[i]}
        count = sum(1 for text in agreeing if any(u.text == text and p[i] >= agree for i, u in enumerate(self.units)))
        return Side(label, best, float(p[best]), count, topical, said, float(p[said]) if said >= 0 else 0.0)


@dataclass(frozen=True)
class Side:
    """One side of the evidence (SUPPORTS or REFUTES): its surest unit about the claim (``index``, -1 when no
    unit on topic is about the claim) and that unit's probability ``p``; ``agreeing``, the distinct sentences
    about the claim that reach the agreement level; ``topical``, the surest unit on topic of any aboutness;
    ``said`` and ``stated``, the surest sentence about the claim (windows left out) and its probability."""

    label: int
    index: int
    p: float
    agreeing: int
    topical: int
    said: int = -1  # the surest sentence about the claim, windows left out: what a conflict needs
    stated: float = 0.0  # its probability


def passage_units(sentences: Sequence[str]) -> list[tuple[str, str, str | None]]:
    """Each sentence of a passage (of more than one character) as ``(sentence, in context, the next sentence)``:
    in context, after the sentence before it when it opens with a pronoun or a bare definite reference
    (:func:`factcheck.extractors.decontext.needs_antecedent`)."""
    kept = [sentence for sentence in sentences if len(sentence) > 1]
    return [
        (
            sentence,
            f"{kept[i - 1]} {sentence}" if i and needs_antecedent(sentence) else sentence,
            kept[i + 1] if i + 1 < len(kept) else None,
        )
        for i, sentence in enumerate(kept)
    ]


def titled(item: Evidence, text: str) -> str:
    """What the encoder reads of a unit: its passage's title, then the unit."""
    return f"{item.title}. {text}" if item.title else text


def signals(row: np.ndarray, label: int, balance: Balance) -> tuple[tuple[str, float], ...]:
    """How sure the reading was, for a deliberation gate: ``lp_min``, the log-probability of the deciding
    class; ``h_max``, the entropy of the deciding unit's (S, R, NEI) row in nats (at most ln 3); ``counter``,
    the opposing side's strength over the deciding side's."""
    p = np.clip(row.astype(np.float64), 1e-12, 1.0)
    entropy = float(-(p * np.log(p)).sum())
    counter = balance.counter / balance.strength if balance.strength > 0 else 0.0
    return (
        ("lp_min", round(float(math.log(p[label])), 6)),
        ("h_max", round(entropy, 6)),
        ("counter", round(counter, 6)),
    )


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@dataclass(frozen=True)
class NLIVerifier(Verifier):
    """Offline natural-language-inference verifier (ONNX MiniLM cross-encoder).

    Options: ``model`` (a folder with model.onnx, tokenizer.json and nli.json;
    default: the shipped model); the relevance gate, ``min_similarity`` (a
    sentence closer in meaning to the claim than this may decide; abstain when
    none is), ``min_relevance`` (abstain when no such sentence's P(SUPPORTS) +
    P(REFUTES) reaches it) and ``min_coverage`` (abstain when no passage holds
    this share of the claim's content words) with ``min_shared`` (or this many
    of them, whichever is fewer), all calibrated for the shipped model (its
    nli.json's ``gate`` records them); ``max_sentences`` ranked by meaning per
    claim, of which the ``read_sentences`` closest are classified, with
    ``windows`` two-sentence windows around the closest; ``calibrated``
    (confidence from the model's calibration, else the bare probability) and
    ``calibration`` (the weight of the deciding probability, in place of the model's);
    ``batch_size``, ``threads`` (onnxruntime intra-op threads a model run, of the classifier and the encoder; 1:
    the claims run side by side instead; 0: onnxruntime's default, one per core). The decision rule
    (:meth:`rule`): ``support_threshold``, ``refute_threshold``, ``conflict``, ``agree`` and ``margin`` (None:
    the model's fitted rule, nli.json's ``decision``), and ``about`` (a deciding sentence must name the claim's
    subject and relation; false reads any sentence on topic, as before issue 39).
    """

    name = "nli"
    languages = frozenset({"en"})  # trained on English pairs only
    reuse_judgments = True
    model: str | None = None
    # The gate calibrated for the shipped model on held-out training claims (its nli.json records it);
    # re-tune it for another model with scripts/tune_nli.py (the word test) and scripts/tune_relevance.py
    # (min_similarity and the confidence calibration).
    min_similarity: float = setting(0.55, minimum=-1, maximum=1)
    min_relevance: float = setting(0.3, minimum=0, maximum=1)
    min_coverage: float = setting(0.5, minimum=0, maximum=1)
    min_shared: int = setting(3, minimum=1)
    max_sentences: int = setting(48, minimum=1)
    read_sentences: int = setting(12, minimum=1)
    windows: int = setting(3, minimum=0, zero="no windows")
    calibrated: bool = True
    calibration: float | None = setting(None, minimum=0, min_open=True)  # the probability's weight; None: nli.json's
    # The decision rule (issue 39); None: the model's fitted rule (nli.json's ``decision``, scripts/fit_risk.py).
    support_threshold: float | None = setting(None, minimum=0, maximum=1)
    refute_threshold: float | None = setting(None, minimum=0, maximum=1)
    conflict: float | None = setting(None, minimum=0, maximum=1)
    agree: float | None = setting(None, minimum=0, maximum=1)
    margin: float | None = setting(None, minimum=0, maximum=1)
    about: bool = True  # the deciding sentence must name the claim's subject and relation (verifiers/about.py)
    # Pair by pair: no padding, and no batch-mate moves a probability (int8 scales per batch).
    batch_size: int = setting(1, minimum=1)
    threads: int = setting(THREADS, minimum=0, zero="onnxruntime's default, one per core")

    def __post_init__(self) -> None:
        super().__post_init__()  # the declared ranges
        if self.model is not None and not Path(self.model).expanduser().is_dir():
            raise ConfigError(f"nli: no such model folder: {self.model}")

    @property
    def model_folder(self) -> Path:
        return Path(self.model).expanduser() if self.model else SHIPPED_MODEL

    def cache_version(self) -> str:
        """The model's and the encoder's digests, the reading's format and the fitted decision rule: a retrained
        model, another encoder, another way of reading or a refitted rule never reuses the old judgments."""
        rule = json.dumps(model_config(self.model_folder).get("decision"), sort_keys=True)
        rule_digest = hashlib.sha256(rule.encode()).hexdigest()[:12]
        return f"{model_digest(self.model_folder)}-{embedder_digest()[:16]}-{READING_FORMAT}-{rule_digest}"

    async def prepare(self) -> None:
        """Load the models once, before the first claim, so a broken install is reported once, clearly."""
        await asyncio.to_thread(load_model, self.model_folder, self.threads)
        await asyncio.to_thread(load_embedder, None, self.threads)

    def units_of(self, claim: Claim, evidence: Sequence[Evidence]) -> tuple[list[Unit], int]:
        """The units to classify: every sentence (at most ``max_sentences``, with its antecedent when it needs
        one) ranked by meaning against the claim, the ``read_sentences`` closest kept, then a window of two
        sentences for each of the ``windows`` closest. A text the model could not read whole with the claim
        is never made: an antecedent that would push the sentence itself out is dropped, and such a window is
        not formed. Also how many sentences were ranked."""
        ranked = [
            (item, sentence, in_context, following)
            for item in evidence
            for sentence, in_context, following in passage_units(split_sentences(item.text))
        ][: self.max_sentences]
        if not ranked:
            return [], 0
        model = load_model(self.model_folder, self.threads)
        fits = model.fits(claim.text, [in_context for _, _, in_context, _ in ranked])
        texts = [
            in_context if fit else sentence for (_, sentence, in_context, _), fit in zip(ranked, fits, strict=True)
        ]
        embedder = load_embedder(None, self.threads)
        similarities = embedder.similarities(
            claim.text, [titled(r[0], text) for r, text in zip(ranked, texts, strict=True)]
        )
        order = [int(i) for i in np.argsort(-similarities, kind="stable")]
        units = [
            Unit(ranked[i][0], texts[i], float(similarities[i]), own=ranked[i][1]) for i in order[: self.read_sentences]
        ]
        # A window is as close to the claim as its closer sentence: no second pass of the encoder.
        windows = [
            Unit(
                ranked[i][0],
                f"{texts[i]} {ranked[i][3]}",
                float(max(similarities[i], similarities[i + 1])),
                True,
                f"{ranked[i][1]} {ranked[i][3]}",
            )
            for i in order[: self.windows]
            if ranked[i][3] is not None and i + 1 < len(ranked)
        ]
        fits = model.fits(claim.text, [unit.text for unit in windows])
        return units + [unit for unit, fit in zip(windows, fits, strict=True) if fit], len(ranked)

    def read(self, claim: Claim, evidence: Sequence[Evidence], overlap: tuple[float, int] | None = None) -> Reading:
        """Classify ``claim`` against the units of the evidence that are closest to it in meaning. A unit less
        similar than ``min_similarity`` is off topic: nothing in :meth:`decide` reads its probabilities, so the
        model does not read it (about two units in five; its row says NOT ENOUGH INFO)."""
        units, _ = self.units_of(claim, evidence)
        if not units:
            return Reading((), np.zeros((0, len(LABELS))), tuple(evidence), 0.0)
        probs = np.tile(np.eye(len(LABELS))[NEI], (len(units), 1))
        on_topic = [i for i, unit in enumerate(units) if unit.similarity >= self.min_similarity]
        if on_topic:
            model = load_model(self.model_folder, self.threads)
            probs[on_topic] = model.probabilities([(claim.text, units[i].text) for i in on_topic], self.batch_size)
            record_call("nli:pairs", len(on_topic))
        share, shared = overlap or word_overlap(claim.text, evidence)
        return Reading(tuple(units), probs, tuple(evidence), share, shared, claim.text, read_from=self.min_similarity)

    def confidence(self, balance: Balance, p: float, *, sure: bool = True) -> float:
        """How sure the verdict is: the chance that it is right, ``P = sigmoid(weight * p)`` of the deciding
        probability ``p``, read as how far that stands from a coin toss, ``2P - 1``; ``weight`` is the model's
        calibration (nli.json's ``confidence``, fitted on held-out claims) or the ``calibration`` option. No
        constant term: the share of true claims in the claims it was fitted on does not leak into every
        verdict. A verdict with a comparable counter-sentence (the other side weighs at least
        ``comparable_counter`` of it), or not ``sure`` (one sentence alone, or close to its threshold), is at
        most weak (:data:`WEAK_CAP`), however sure its own sentence is.
        Without a calibration, or with ``calibrated = false``, ``p`` itself. At least 0.05, so that the claim's
        score stays on its verdict's side of 0.5."""
        if not self.calibrated:
            return p if sure else min(p, WEAK_CAP)
        fitted = model_config(self.model_folder).get("confidence") or {}
        weight = self.calibration if self.calibration is not None else fitted.get("probability")
        if weight is None:
            return p if sure else min(p, WEAK_CAP)
        confidence = 2 * _sigmoid(weight * p) - 1
        if not sure or balance.counter >= fitted.get("comparable_counter", COMPARABLE_COUNTER) * balance.strength:
            confidence = min(confidence, WEAK_CAP)
        return min(1.0, max(MIN_CONFIDENCE, confidence))

    def decide(self, reading: Reading) -> Assessment:
        """The verdict on a :class:`Reading`: abstain when no passage addresses the claim (coverage below
        ``min_coverage``, no sentence as close as ``min_similarity``, or relevance below ``min_relevance``),
        else the stronger side of the units on topic (:meth:`Reading.weigh`), with a confidence that is high
        only when the deciding unit is sure and unopposed (:meth:`confidence`). The rationale quotes that unit,
        and its passage comes first in the judgment's evidence."""
        if not reading.units:
            return Assessment(None, 0.0, "no evidence retrieved")
        min_similarity, min_relevance = self.min_similarity, self.min_relevance
        if min_similarity < reading.read_from:
            raise ValueError(
                f"this reading classified only the units with similarity >= {reading.read_from:g}: read it with "
                f"min_similarity {min_similarity:g} or lower to decide at {min_similarity:g}"
            )
        if (uncovered := self.uncovered(reading.coverage, reading.shared)) is not None:
            return uncovered
        closest = reading.units[reading.closest]
        if closest.similarity < min_similarity:
            return Assessment(
                None,
                0.0,
                f"{NO_PASSAGE}: the closest sentence is off topic (similarity "
                f'{_below(closest.similarity, min_similarity)} < {min_similarity:g}): "{_quote(closest.text)}"',
            )
        relevance = reading.relevance(min_similarity)
        if relevance < min_relevance:
            on_topic = reading.on_topic(min_similarity)
            best = reading.probs[on_topic].max(axis=0)
            return Assessment(
                None,
                0.0,
                f"{NO_PASSAGE}: NOT ENOUGH INFO in all {int(on_topic.sum())} sentences on topic "
                f"(relevance {_below(relevance, min_relevance)} < {min_relevance:g}; "
                f"best P(supports) {best[SUPPORTS]:.2f}, P(refutes) {best[REFUTES]:.2f})",
            )
        return self.rule(reading if self.about else replace(reading, about=False), min_similarity)

    def uncovered(self, coverage: float, shared: int) -> Assessment | None:
        """The abstention of the coverage gate, or None when a passage holds enough of the claim's content words:
        ``min_coverage`` of them, or ``min_shared``."""
        if coverage >= self.min_coverage or shared >= self.min_shared:
            return None
        return Assessment(
            None,
            0.0,
            f"{NO_PASSAGE}: the best passage holds {coverage:.0%} of its content words "
            f"(at least {self.min_coverage:.0%}, or {self.min_shared} words, needed)",
        )

    def thresholds(self) -> Thresholds:
        """The decision rule's thresholds: the options where set, else the model's (nli.json's ``decision``,
        fitted by ``scripts/fit_risk.py``), else :data:`DEFAULT_THRESHOLDS`."""
        fitted = model_config(self.model_folder).get("decision") or {}
        values = {name: getattr(self, name) for name in Thresholds.__dataclass_fields__}
        return Thresholds(
            **{
                name: float(value if value is not None else fitted.get(name, getattr(DEFAULT_THRESHOLDS, name)))
                for name, value in values.items()
            }
        )

    def rule(self, reading: Reading, min_similarity: float) -> Assessment:
        """The decision rule (issue 39: a FALSE must be earned). A claim is TRUE (FALSE) only when a sentence
        on topic that names the claim's subject and relation (:mod:`factcheck.verifiers.about`) supports
        (refutes) it with a probability of at least ``support_threshold`` (``refute_threshold``), thresholds
        fitted on a calibration split by conformal risk control so that the rate of false accusations (and of
        accepted myths) stays bounded (``docs/harm.md``), and no sentence about the claim (a sentence, not a
        two-sentence window) reaches ``conflict`` on the other side: then the evidence conflicts and the claim
        is UNVERIFIED, both sentences shown. Otherwise UNVERIFIED: the evidence on this topic does not say. A
        verdict is strong only when a second sentence about the claim agrees (at least ``agree``) and its
        probability clears its threshold by ``margin``; else at most weak."""
        t = self.thresholds()
        support = reading.side(SUPPORTS, min_similarity, t.agree)
        refute = reading.side(REFUTES, min_similarity, t.agree)
        passes = {
            SUPPORTS: support.index >= 0 and support.p >= t.support_threshold,
            REFUTES: refute.index >= 0 and refute.p >= t.refute_threshold,
        }
        # Counter-evidence is a sentence that says the opposite: a window of two sentences, read to catch a
        # claim two sentences settle together, does not make a conflict on its own, unless it comes within
        # ``margin`` of a verdict itself (so no rounding turns a TRUE into a FALSE without passing UNVERIFIED).
        needed = {SUPPORTS: t.support_threshold, REFUTES: t.refute_threshold}
        for side, other in ((support, refute), (refute, support)):
            near = other.index >= 0 and other.p >= needed[other.label] - t.margin
            if passes[side.label] and (other.stated >= t.conflict or near):
                against = other.said if other.stated >= t.conflict else other.index
                return Assessment(
                    None,
                    0.0,
                    f"{CONFLICTING}: {self._cite(reading, side)}; but {self._cite(reading, other, against)}",
                    evidence=reading.deciding_first(side.index, against),
                )
        if not (passes[SUPPORTS] or passes[REFUTES]):
            return Assessment(None, 0.0, self._undecided(reading, support, refute, t))
        side, other = (support, refute) if passes[SUPPORTS] else (refute, support)
        threshold = t.support_threshold if side.label == SUPPORTS else t.refute_threshold
        rationale = self._cite(reading, side)
        if other.index >= 0 and other.p >= 0.3:
            rationale += f"; the strongest {'refutation' if side.label == SUPPORTS else 'support'} has p={other.p:.2f}"
        aside = other.topical
        if aside >= 0 and aside != other.index and (p_aside := float(reading.probs[aside, other.label])) >= 0.3:
            verb = "refutes" if side.label == SUPPORTS else "supports"
            quoted = _quote(reading.units[aside].text, 120)
            rationale += (
                f"; set aside: a sentence on its topic that {verb} it (p={p_aside:.2f}) does not name "
                f'{reading.missing(aside)}: "{quoted}"'
            )
        sure = side.agreeing >= 2 and side.p >= threshold + t.margin
        if side.agreeing < 2:
            rationale += "; no second sentence agrees, so the verdict is at most weak"
        balance = reading.weigh(min_similarity)
        return Assessment(
            side.label == SUPPORTS,
            round(self.confidence(balance, side.p, sure=sure), 4),
            rationale,
            evidence=reading.deciding_first(side.index),
            signals=signals(reading.probs[side.index], side.label, balance),
        )

    @staticmethod
    def _cite(reading: Reading, side: Side, index: int | None = None) -> str:
        """Unit ``index`` (default: the side's surest) as read for ``side``: label, p, similarity and quote."""
        index = side.index if index is None else index
        unit = reading.units[index]
        return (
            f"{LABELS[side.label]} (p={reading.probs[index, side.label]:.2f}, similarity {unit.similarity:.2f}) by "
            f'({unit.item.title or unit.item.source}): "{_quote(unit.text)}"'
        )

    @staticmethod
    def _undecided(reading: Reading, support: Side, refute: Side, t: Thresholds) -> str:
        """Why no verdict: the surest sentence about the claim is not sure enough, or the sentence that would
        have decided names the claim's topic but not what it says."""
        for side, threshold in ((refute, t.refute_threshold), (support, t.support_threshold)):
            topical = side.topical
            if topical >= 0 and topical != side.index and float(reading.probs[topical, side.label]) >= threshold:
                return (
                    f"{UNDECIDED}: the sentence that would decide ({LABELS[side.label]}, "
                    f"p={reading.probs[topical, side.label]:.2f}) is on its topic but does not name "
                    f'{reading.missing(topical)}: "{_quote(reading.units[topical].text)}"'
                )
        best = max((support, refute), key=lambda s: s.p)
        if best.index < 0:
            return f"{UNDECIDED}: no sentence on its topic names its subject and what the claim says of it"
        needed = t.support_threshold if best.label == SUPPORTS else t.refute_threshold
        verb = "supports" if best.label == SUPPORTS else "refutes"
        return (
            f"{UNDECIDED}: the surest sentence about it {verb} it with p={_below(best.p, needed)}, "
            f'below the {needed:g} a verdict needs: "{_quote(reading.units[best.index].text)}"'
        )

    def assess(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        """Synchronous judgment (the async :meth:`judge` runs it in a worker thread). A claim that no passage
        covers (the coverage gate of :meth:`decide`) is answered before either model runs, since :meth:`decide`
        would read nothing they compute."""
        overlap = word_overlap(claim.text, evidence)
        if (uncovered := self.uncovered(*overlap)) is not None and any(
            len(sentence) > 1 for item in evidence for sentence in split_sentences(item.text)
        ):
            return uncovered
        return self.decide(self.read(claim, evidence, overlap))

    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        return await asyncio.to_thread(self.assess, claim, evidence)


@hookimpl
def register_verifiers(register: Callable[[Any], None]) -> None:
    register(NLIVerifier())
