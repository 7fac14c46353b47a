"""The evaluation report: ``report.json``, ``report.md`` and PNG plots."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from factcheck.eval.evaluate import ClaimScores, Row

# Accuracy (and F1) the MAFC paper reports, keyed by the scorer spec that reproduces its setting
# (the authors' reference bounds, their unmapped average) with the paper's threshold labels.
PAPER: dict[str, dict[str, dict[str, float]]] = {
    "scifact-binary": {
        "mafc:bounds=reference": {"accuracy": 0.79},
        "average:remap=false": {"accuracy": 0.65},
        "normsum": {"accuracy": 0.76},
        "SelfCheckGPT (single LLM)": {"accuracy": 0.72},
    },
    "scifact-mixed": {
        "mafc:bounds=reference": {"accuracy": 0.97},
        "average:remap=false": {"accuracy": 0.55},
        "normsum": {"accuracy": 0.91},
        "SelfCheckGPT (single LLM)": {"accuracy": 0.57},
    },
    "fever-binary": {"mafc:bounds=reference": {"accuracy": 0.68, "macro_f1": 0.66}},
}


def paper_value(dataset: str, row: Row, metric: str) -> float | None:
    """The paper's number for this row's setting, if it published one (threshold labels only)."""
    if row.labels != "threshold":
        return None
    return PAPER.get(dataset, {}).get(row.scorer, {}).get(metric)


def _paper(dataset: str, row: Row) -> str:
    accuracy, f1 = paper_value(dataset, row, "accuracy"), paper_value(dataset, row, "macro_f1")
    return _opt(accuracy) + (f" (F1 {f1:.2f})" if f1 is not None else "")


def _ci(value: float, ci: Sequence[float]) -> str:
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _opt(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def markdown(summary: Mapping[str, Any], rows: Sequence[Row]) -> str:
    """The report as a Markdown page: one table of scorer x label rule, then cost and notes."""
    dataset = summary["dataset"]
    lines = [
        f"# {dataset}",
        "",
        f"{summary['description']}",
        "",
        f"- texts: {summary['texts']}; mode: {summary['mode']}; judgments: `{summary['judgments']}`",
        f"- command: `{summary['command']}`",
        "",
        "| scorer | labels | accuracy [95% CI] | macro-F1 [95% CI] | weighted F1 | "
        + " | ".join(f"recall {c}" for c in summary["classes"])
        + " | abstain | ECE | paper acc |",
        "|---|---|---|---|---|" + "---|" * len(summary["classes"]) + "---|---|---|",
    ]
    for row in rows:
        m = row.metrics
        recalls = " | ".join(f"{m['recall'][c]:.3f}" for c in summary["classes"])
        lines.append(
            f"| {row.scorer} | {row.labels} | {_ci(m['accuracy'], m['accuracy_ci'])} | "
            f"{_ci(m['macro_f1'], m['macro_f1_ci'])} | {m['weighted_f1']:.3f} | {recalls} | "
            f"{m['abstention']:.1%} | {_opt(m['ece'])} | {_paper(dataset, row)} |"
        )
    cost = summary["cost_per_claim"]
    lines += [
        "",
        f"Per claim ({cost['claims']:.0f} claims): {cost['llm_calls']:.2f} LLM calls, {cost['tokens']:.0f} tokens, "
        f"{cost['search_calls']:.2f} search calls, {cost['source_calls']:.2f} source calls, "
        f"{cost.get('agent_calls', 0):.2f} agent calls, {cost.get('passages', 0):.1f} passages read, "
        f"{cost.get('deliberated', 0):.1%} deliberated, ${cost['cost_usd']:.5f}, {cost['seconds']:.3f} s.",
    ]
    if summary.get("false_consensus_rate") is not None:
        lines += [
            "",
            f"False-consensus rate (claims where every agent agreed with confidence >= 0.7, share wrong): "
            f"{summary['false_consensus_rate']:.3f}.",
        ]
    others = [name for name in PAPER.get(dataset, {}) if name not in {r.scorer for r in rows}]
    if others:
        notes = ", ".join(f"{name} {PAPER[dataset][name]['accuracy']:.2f}" for name in others)
        lines += ["", f"Paper, settings not scored here: {notes}."]
    lines += [
        "",
        "Abstentions (UNVERIFIED texts) count as wrong. CIs: 1000 bootstrap resamples of texts. "
        "ECE: claim scores read as P(TRUE) against the claims' gold labels, 10 bins.",
    ]
    return "\n".join(lines) + "\n"


def write_report(out: Path, summary: Mapping[str, Any], rows: Sequence[Row]) -> list[Path]:
    """Write report.json, report.md and (if matplotlib is installed) the plots; the paths written."""
    data = {**summary, "rows": [{"scorer": r.scorer, "labels": r.labels, **r.metrics} for r in rows]}
    data["paper"] = PAPER.get(str(summary["dataset"]), {})
    written = [out / "report.json", out / "report.md"]
    written[0].write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    written[1].write_text(markdown(summary, rows), encoding="utf-8")
    return written


def write_plots(out: Path, rows: Sequence[Row], claim_scores: ClaimScores) -> list[Path]:
    """Confusion matrices, a reliability diagram and score histograms per gold label, as PNG.

    ``claim_scores`` maps a scorer to its claim scores and the claims' gold outcomes. Needs
    matplotlib (``pip install '.[eval]'`` in a checkout); without it, no plot is written.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    from factcheck.eval.metrics import reliability

    written = []
    columns = min(3, len(rows))
    grid_rows = (len(rows) + columns - 1) // columns
    fig, axes = plt.subplots(grid_rows, columns, figsize=(4 * columns, 3.6 * grid_rows), squeeze=False)
    for ax, row in zip(axes.flat, rows, strict=False):
        confusion = row.metrics["confusion"]
        ax.imshow(confusion["matrix"], cmap="Blues")
        ax.set_xticks(range(len(confusion["columns"])), confusion["columns"], fontsize=7)
        ax.set_yticks(range(len(confusion["rows"])), confusion["rows"], fontsize=7)
        for i, values in enumerate(confusion["matrix"]):
            for j, value in enumerate(values):
                ax.text(j, i, str(value), ha="center", va="center", fontsize=8)
        ax.set_title(f"{row.scorer} / {row.labels}", fontsize=8)
        ax.set_xlabel("predicted", fontsize=7)
        ax.set_ylabel("gold", fontsize=7)
    for ax in list(axes.flat)[len(rows) :]:
        ax.axis("off")
    fig.tight_layout()
    written.append(out / "confusion.png")
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)

    scored = {name: pair for name, pair in claim_scores.items() if pair[0]}
    if scored:
        fig, ax = plt.subplots(figsize=(5, 5))
        ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
        for name, (scores, outcomes) in scored.items():
            points = reliability(scores, outcomes)
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=name)
        ax.set_xlabel("claim score (read as P(TRUE))")
        ax.set_ylabel("share of claims gold TRUE")
        ax.legend(fontsize=7)
        fig.tight_layout()
        written.append(out / "reliability.png")
        fig.savefig(written[-1], dpi=110)
        plt.close(fig)

        fig, axes = plt.subplots(1, len(scored), figsize=(3.6 * len(scored), 3), squeeze=False)
        for ax, (name, (scores, outcomes)) in zip(axes.flat, scored.items(), strict=True):
            ax.hist([s for s, o in zip(scores, outcomes, strict=True) if o], bins=20, alpha=0.6, label="gold TRUE")
            ax.hist([s for s, o in zip(scores, outcomes, strict=True) if not o], bins=20, alpha=0.6, label="gold FALSE")
            ax.set_title(name, fontsize=8)
            ax.legend(fontsize=7)
        fig.tight_layout()
        written.append(out / "histograms.png")
        fig.savefig(written[-1], dpi=110)
        plt.close(fig)
    return written
