"""Time per sentence of the offline ``sentence`` extractor: with its filters, and as it was before them.

"before" is the same extractor with only the ``fragment`` and ``question`` filters (what it dropped
before the check-worthiness filters existed), no attribution and no decontextualisation, so spaCy's
entity recogniser stays off as it did. Both run on the same texts in one process, alternately, each
``--repeats`` times after a warm-up; the median is reported, with the ratio.

Texts: ClaimBuster sentences of ../shared/data (train.json, then 2020_debate.tsv) grouped into
paragraphs of five, ten paragraphs a text, the way an article reaches ``factcheck check``.

``--threads N`` also times one-sentence texts (each sentence alone, as a batch of posts reaches
``factcheck batch``) extracted one after the other, then from N threads at once, as the checks a
batch or the server has in flight ask: threads waiting for the parser are parsed together
(:func:`factcheck.extractors.sentence.parse`).

    python bench/extract.py [--sentences 2000] [--repeats 3] [--threads 16]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

from factcheck.extractors.sentence import SentenceExtractor, load_pipeline
from factcheck.paths import shared_data_dir


def claimbuster(n: int) -> list[str]:
    """The first ``n`` ClaimBuster sentences."""
    path = shared_data_dir() / "claimbuster" / "data" / "two_class" / "train.json"
    return [" ".join(str(r["text"]).split()) for r in json.loads(path.read_text(encoding="utf-8"))][:n]


def texts(n: int) -> tuple[list[str], int]:
    """Article-like texts built from the first ``n`` ClaimBuster sentences, and their sentence count."""
    sentences = claimbuster(n)
    paragraphs = [" ".join(sentences[i : i + 5]) for i in range(0, len(sentences), 5)]
    return ["\n\n".join(paragraphs[i : i + 10]) for i in range(0, len(paragraphs), 10)], len(sentences)


def run(extractor: SentenceExtractor, batch: list[str]) -> float:
    started = time.perf_counter()
    for text in batch:
        extractor.extraction(text)
    return time.perf_counter() - started


def concurrent(extractor: SentenceExtractor, sentences: list[str], threads: int, repeats: int) -> None:
    """ms per one-sentence text, extracted one after the other and from ``threads`` threads at once."""
    alone, together = [], []
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeats):
            alone.append(run(extractor, sentences))
            started = time.perf_counter()
            list(pool.map(extractor.extraction, sentences))
            together.append(time.perf_counter() - started)
    ms_alone = statistics.median(alone) / len(sentences) * 1000
    ms_together = statistics.median(together) / len(sentences) * 1000
    print(f"{len(sentences)} one-sentence texts, median of {repeats} runs")
    print(f"  one after the other   {ms_alone:6.2f} ms/text")
    print(f"  {threads:2} threads at once    {ms_together:6.2f} ms/text")
    print(f"  ratio threads/one: {ms_together / ms_alone:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="also time one-sentence texts from N threads")
    args = parser.parse_args()
    batch, count = texts(args.sentences)
    load_pipeline("auto")
    extractors = {
        "before": SentenceExtractor(filters=("fragment", "question"), attribution=False, decontextualise=False),
        "filters": SentenceExtractor(),
    }
    for extractor in extractors.values():
        extractor.extraction(batch[0])  # warm up: the model and the language detector load once
    timings: dict[str, list[float]] = {name: [] for name in extractors}
    for _ in range(args.repeats):
        for name, extractor in extractors.items():
            timings[name].append(run(extractor, batch))
    medians = {name: statistics.median(values) / count * 1000 for name, values in timings.items()}
    print(f"{count} sentences in {len(batch)} texts, median of {args.repeats} runs, one process")
    for name, ms in medians.items():
        print(f"  {name:8} {ms:6.2f} ms/sentence")
    print(f"  ratio filters/before: {medians['filters'] / medians['before']:.2f}")
    if args.threads:
        concurrent(extractors["filters"], claimbuster(args.sentences), args.threads, args.repeats)


if __name__ == "__main__":
    main()
