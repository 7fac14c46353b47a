"""Average the weights of fine-tuned NLI models that share their start (a "model soup"), then calibrate,
export and quantise the average like ``train_offline_nli.py train`` does.

Each input folder holds the ``trained-fp16.npz`` that ``train`` writes (every weight but the frozen word
embeddings, which come from the packed base). The temperature is fitted on the held-out pairs of the pairs
file, and the held-out metrics are written into ``nli.json``.

    python scripts/soup_nli.py build/nli-a build/nli-b --out build/nli-soup
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np
from train_offline_nli import (
    LABELS,
    build_model,
    check_onnx,
    export,
    fit_temperature,
    load_tokenizer,
    metrics,
    predict_logits,
    read_pairs,
    softmax,
)


def main(args: argparse.Namespace) -> None:
    import torch  # type: ignore[import-not-found, unused-ignore]  # training only

    started = time.perf_counter()
    torch.set_num_threads(args.threads)
    base = Path(args.base)
    model = build_model(base)
    state = model.state_dict()
    weights = [np.load(Path(folder) / "trained-fp16.npz") for folder in args.models]
    for key in weights[0].files:
        state[key] = torch.from_numpy(np.mean([w[key].astype(np.float32) for w in weights], axis=0))
    model.load_state_dict(state)
    model.eval()
    tokenizer = load_tokenizer(base, args.max_len)
    _, held = read_pairs(Path(args.pairs))
    gold = np.array([p.label for p in held])
    logits = predict_logits(model, tokenizer, held)
    temperature = fit_temperature(logits, gold)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    export(model, tokenizer, base, held, out)
    int8, per_source = check_onnx(out / "model.onnx", tokenizer, held, temperature)
    configs = [json.loads((Path(folder) / "nli.json").read_text(encoding="utf-8")) for folder in args.models]
    report = {
        **{k: configs[0][k] for k in ("labels", "max_length", "base_model")},
        "temperature": temperature,
        "soup_of": [c["hyperparameters"] for c in configs],
        "hyperparameters": configs[0]["hyperparameters"],
        "heldout": {"fp32": metrics(softmax(logits, temperature), gold), "int8": int8},
        "heldout_by_source": per_source,
        "heldout_labels": {LABELS[k]: v for k, v in sorted(Counter(gold.tolist()).items())},
        "soup_seconds": round(time.perf_counter() - started),
    }
    (out / "nli.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["heldout"]))
    print(json.dumps({k: (v["accuracy"], v["support_vs_refute_accuracy"]) for k, v in per_source.items()}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help="folders with trained-fp16.npz and nli.json")
    parser.add_argument("--base", default="build/nli-data/base")
    parser.add_argument("--pairs", default="build/nli-data/pairs.jsonl.gz")
    parser.add_argument("--out", default="build/nli-soup")
    parser.add_argument("--max-len", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    main(parser.parse_args())
