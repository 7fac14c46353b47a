"""Throughput and latency of the offline NLI verifier, measured side by side in one run.

1. Pairs per second of the shipped int8 model at several batch sizes (and of the
   fp32 export beside it, when ``--fp32`` names one), on the same pairs.
2. End to end per claim, cache off, two ways side by side on the same claims: the offline default
   (hybrid retrieval over the shipped corpus, then ``nli`` reading the sentences closest in meaning,
   with windows) and the reading before issue 26 on today's code (BM25, every sentence read, no
   windows, no similarity gate): median and p95 latency, pairs classified per claim, and the
   process's peak memory.

    python bench/nli.py [--claims 100] [--batch-sizes 1,8,32,64] [--fp32 build/nli/model-fp32.onnx] [--model FOLDER]

``--model`` measures another model folder (an older model, say) in place of the shipped one. ``--vs FOLDER``
measures a second model beside it on the same pairs and claims (the default reading, and with
``--vs-read N`` sentences read per claim): pairs per second and the end-to-end median, as ratios.

    python bench/nli.py --claims 100 --vs build/e5-run1 --vs-read 6
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from factcheck import Agent, Claim
from factcheck.build import build_checker
from factcheck.sources.corpus import CorpusSource
from factcheck.text import split_sentences
from factcheck.verifiers.nli import SHIPPED_MODEL, NLIModel, NLIVerifier

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def claims(n: int) -> list[str]:
    path = DATA / "ito_mafc" / "scifact_single_dev188.jsonl"
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line)["claim"] for line in handle][:n]


def pairs_per_second(model: NLIModel, pairs: list[tuple[str, str]], batch_size: int) -> float:
    model.probabilities(pairs[:batch_size], batch_size)  # warm up
    start = time.perf_counter()
    model.probabilities(pairs, batch_size)
    return len(pairs) / (time.perf_counter() - start)


def fp32_folder(onnx: Path) -> Path:
    """A model folder around an fp32 export, with the shipped tokenizer and settings."""
    folder = Path(tempfile.mkdtemp(prefix="nli-fp32-"))
    shutil.copy(onnx, folder / "model.onnx")
    for name in ("tokenizer.json", "nli.json"):
        shutil.copy(SHIPPED_MODEL / name, folder / name)
    return folder


WAYS = {
    "default (hybrid + closest sentences)": (CorpusSource(), {}),
    "before issue 26 (BM25, every sentence)": (
        CorpusSource(retrieval="bm25"),
        {"read_sentences": 48, "windows": 0, "min_similarity": -1.0},
    ),
}


async def end_to_end(
    texts: list[str], model: Path, source: CorpusSource, options: dict[str, object]
) -> tuple[list[float], list[int]]:
    verifier = NLIVerifier(model=str(model)).configure(**options)
    checker = build_checker(agents=[Agent("corpus", source, verifier)], cache={"enabled": False})
    await checker.acheck(texts[0])  # index and model loaded once, outside the timing
    latencies, sentences = [], []
    for text in texts:
        start = time.perf_counter()
        verdict = await checker.acheck(text)
        latencies.append(time.perf_counter() - start)
        sentences.append(verdict.usage.calls.get("nli:pairs", 0))
    return latencies, sentences


def main(args: argparse.Namespace) -> None:
    texts = claims(args.claims)
    pairs = [
        (text, sentence)
        for text in texts
        for item in CorpusSource().search(Claim("bench", text))
        for sentence in split_sentences(item.text)
    ][:256]
    models = {"int8": NLIModel(args.model)}
    if args.fp32:
        models["fp32"] = NLIModel(fp32_folder(args.fp32))
    if args.vs:
        models["vs"] = NLIModel(args.vs)
    sizes = [int(s) for s in args.batch_sizes.split(",")]
    print(f"pairs/s on {len(pairs)} (claim, sentence) pairs")
    print(f"{'model':<16}" + "".join(f"{f'batch {s}':>11}" for s in sizes))
    rates: dict[str, list[float]] = {}
    for name, model in models.items():
        rates[name] = [pairs_per_second(model, pairs, s) for s in sizes]
        print(f"{name:<16}" + "".join(f"{r:>11.0f}" for r in rates[name]))
    for other in ("fp32", "vs"):
        if other in rates:
            ratio = [a / b for a, b in zip(rates["int8"], rates[other], strict=True)]
            print(f"{'int8 / ' + other:<16}" + "".join(f"{r:>10.2f}x" for r in ratio))
    print(f"\nend to end over {len(texts)} SciFact dev claims (top 3 passages + nli, cache off), per claim:")
    medians = []
    ways = [(way, args.model, source, options) for way, (source, options) in WAYS.items()]
    if args.vs:
        default = WAYS["default (hybrid + closest sentences)"]
        ways = [*ways[:1], (f"--vs {args.vs.name}", args.vs, *default)]
        if args.vs_read:
            ways.append((f"--vs, {args.vs_read} sentences read", args.vs, default[0], {"read_sentences": args.vs_read}))
    for way, model, source, options in ways:
        latencies, pairs_read = asyncio.run(end_to_end(texts, model, source, options))
        ms = sorted(1000 * t for t in latencies)
        p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
        medians.append(statistics.median(ms))
        print(
            f"  {way:<40} median {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms, "
            f"{statistics.mean(pairs_read):.1f} pairs classified"
        )
    others = [way for way, *_ in ways[1:]]
    for way, median in zip(others, medians[1:], strict=True):
        print(f"  {way} / default: {median / medians[0]:.2f}x the median")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory {peak_mb:.0f} MB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", type=int, default=100)
    parser.add_argument("--batch-sizes", default="1,8,32,64")
    parser.add_argument("--model", type=Path, default=SHIPPED_MODEL, help="the int8 model folder to measure")
    parser.add_argument("--fp32", type=Path, help="an fp32 ONNX export to compare with (build/nli/model-fp32.onnx)")
    parser.add_argument("--vs", type=Path, help="a second model folder, measured beside --model")
    parser.add_argument("--vs-read", type=int, default=0, help="also the --vs model reading this many sentences")
    main(parser.parse_args())
