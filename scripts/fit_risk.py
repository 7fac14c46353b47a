"""Fit the ``nli`` verifier's decision rule (issue 39) by conformal risk control on a calibration split.

A claim is FALSE only when a sentence about it refutes it with at least ``refute_threshold`` and no sentence
about it supports it with ``conflict`` or more; TRUE the other way round (``factcheck.verifiers.nli``, ``rule``).
For a fixed ``conflict``, the share of gold TRUE claims labelled FALSE can only fall as ``refute_threshold``
rises, so conformal risk control (``factcheck.eval.harm.conformal_threshold``) picks the smallest threshold
whose bound on the expected false-accusation rate is at most ``--alpha-false`` (0.05); the TRUE threshold the
same way for the myth-acceptance rate and ``--alpha-myth`` (0.10). Each is fitted on each calibration set alone
and the strictest kept, so that the bound holds for each kind of claim, not only for their mixture.
``conflict`` is the one of ``--conflicts`` that answers most calibration claims (chosen on the same split: the
bound then holds for each candidate, not for the choice; the held-out sets measure the choice). ``agree`` and
``margin`` are set by design, not fitted.

Calibration split (SciFact dev and the probe's held-out half are never read to fit; ``--plot`` only draws them):

* the SciFact train claims ``scripts/train_offline_nli.py`` holds out (77 SUPPORT / CONTRADICT claims);
* Check-COVID dev claims (SUPPORT / REFUTE) against the shipped, pre-COVID corpus;
* the calibration half of the harm probe, ``bench/probes/biomed-harm.jsonl``.

Every claim is retrieved (the ``corpus`` source as by default: hybrid, top 3) and read once; the readings are
saved under ``--out`` and every threshold is applied to the same readings.

    cd scripts && python fit_risk.py --out ../build/risk [--write-config]
    cd scripts && python fit_risk.py --out ../build/risk --plot ../docs/img/harm-risk-coverage.png

``--model DIR`` fits the rule for a candidate model folder (a retrained ``model.onnx`` beside the shipped
``nli.json``; readings are the model's, so give it its own ``--out``), and ``--measure`` then prints the harm
figures of the fitted rule on every set, the held-out ones (SciFact dev, the probe's held-out half) read only
after fitting: a retrained model is compared with the shipped one before anything is written.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from train_offline_nli import read_jsonl
from tune_relevance import DATA, readings, scifact_dev, scifact_heldout

from factcheck.eval.datasets.biomedical import read_check_covid
from factcheck.eval.harm import Outcome, conformal_threshold, harm_figures, risk_coverage
from factcheck.types import Label, strength
from factcheck.verifiers.nli import REFUTES, SHIPPED_MODEL, SUPPORTS, NLIVerifier, Reading

PROBE = Path(__file__).resolve().parent.parent / "bench" / "probes" / "biomed-harm.jsonl"
GRID = [round(0.30 + 0.01 * i, 2) for i in range(70)]  # 0.30 .. 0.99
AGREE, MARGIN = 0.5, 0.05

Labelled = list[tuple[str, bool]]


def probe_claims(split: str, path: Path = PROBE) -> Labelled:
    """The harm probe's claims of ``split`` (calibration or held-out), with their gold truth."""
    return [(str(r["claim"]), r["label"] == "TRUE") for r in read_jsonl(path) if r["split"] == split]


def covid_dev(data: Path) -> Labelled:
    """Check-COVID dev claims with a SUPPORT or REFUTE label, once each (a claim text repeats with one label)."""
    claims: dict[str, bool] = {}
    for item in read_check_covid(data, "dev").items:
        claims.setdefault(item.text.strip(), str(item.gold) == "TRUE")
    return list(claims.items())


def scores(verifier: NLIVerifier, rows: list[Reading], side: bool, conflict: float) -> list[float]:
    """Per reading, the probability the rule would act on to label it ``side`` (TRUE or FALSE) at any
    threshold, given ``conflict``; ``-inf`` where it never would (a gate abstains, no sentence about the claim,
    or the other side reaches ``conflict``)."""
    if side:
        loosest = verifier.configure(support_threshold=0.0, refute_threshold=1.0, conflict=conflict)
    else:
        loosest = verifier.configure(support_threshold=1.0, refute_threshold=0.0, conflict=conflict)
    agree, label = loosest.thresholds().agree, SUPPORTS if side else REFUTES
    return [
        reading.side(label, verifier.min_similarity, agree).p
        if loosest.decide(reading).factuality is side
        else -math.inf
        for reading in rows
    ]


def strictest(
    verifier: NLIVerifier, sets: dict[str, tuple[list[Reading], list[bool]]], side: bool, conflict: float, alpha: float
) -> float | None:
    """The strictest of the thresholds conformal risk control picks on each calibration set alone, so that the
    bound holds for each kind of claim, not only for their mixture (where the many claims the corpus has nothing
    on would dilute the errors on the claims it has). ``None`` when one set has no safe threshold."""
    grid = [g for g in GRID if g >= conflict]
    chosen = []
    for name, (rows, gold) in sets.items():
        harmed = [score for score, g in zip(scores(verifier, rows, side, conflict), gold, strict=True) if g != side]
        threshold = conformal_threshold(harmed, alpha, grid)
        verdict = "TRUE" if side else "FALSE"
        print(f"  {verdict} threshold on {name} ({len(harmed)} claims that can be harmed): {threshold}")
        if threshold is None:
            return None
        chosen.append(threshold)
    return max(chosen)


def fit(
    verifier: NLIVerifier, sets: dict[str, tuple[list[Reading], list[bool]]], args: argparse.Namespace
) -> dict[str, Any]:
    rows = [r for readings_, _ in sets.values() for r in readings_]
    candidates = []
    for conflict in [float(c) for c in args.conflicts.split(",")]:
        print(f"conflict {conflict}:")
        refute_threshold = strictest(verifier, sets, False, conflict, args.alpha_false)
        support_threshold = strictest(verifier, sets, True, conflict, args.alpha_myth)
        if refute_threshold is None or support_threshold is None:
            print("  no safe threshold")
            continue
        chosen = verifier.configure(
            support_threshold=support_threshold,
            refute_threshold=refute_threshold,
            conflict=conflict,
            agree=AGREE,
            margin=MARGIN,
        )
        answered = sum(chosen.decide(r).factuality is not None for r in rows)
        print(
            f"  refute_threshold {refute_threshold}, support_threshold {support_threshold}, "
            f"answered {answered}/{len(rows)}"
        )
        candidates.append((answered, -conflict, chosen))
    if not candidates:
        raise SystemExit("no conflict level gave safe thresholds: more calibration claims are needed")
    _, _, best = max(candidates, key=lambda c: (c[0], c[1]))
    t = best.thresholds()
    counts = {name: len(r) for name, (r, _) in sets.items()}
    return {
        "support_threshold": t.support_threshold,
        "refute_threshold": t.refute_threshold,
        "conflict": t.conflict,
        "agree": t.agree,
        "margin": t.margin,
        "method": (
            "conformal risk control (Angelopoulos et al., ICLR 2024), per side, the strictest over the calibration sets"
        ),
        "alpha": {"false_accusation": args.alpha_false, "myth_acceptance": args.alpha_myth},
        "calibration": counts,
        "note": (
            "fitted with scripts/fit_risk.py on "
            + ", ".join(f"{n} {name}" for name, n in counts.items())
            + f" claims; conflict chosen among {args.conflicts} by claims answered; agree {AGREE} and margin "
            f"{MARGIN} by design"
        ),
    }


def curve(verifier: NLIVerifier, rows: list[Reading], gold: list[bool]) -> list[tuple[float, float]]:
    """The risk-coverage curve of the rule with one threshold for both sides swept from loose to strict: the
    loosest reading of each claim (the rule at thresholds of ``conflict``), its deciding probability ranked."""
    t = verifier.thresholds()
    loose = verifier.configure(support_threshold=t.conflict, refute_threshold=t.conflict)
    answered = []
    for reading, g in zip(rows, gold, strict=True):
        assessment = loose.decide(reading)
        if assessment.factuality is not None:
            label = SUPPORTS if assessment.factuality else REFUTES
            p = reading.side(label, verifier.min_similarity, t.agree).p
            answered.append((g, bool(assessment.factuality), p))
    return risk_coverage(answered, len(rows))


def plot(verifier: NLIVerifier, sets: dict[str, tuple[list[Reading], list[bool]]], path: Path) -> None:
    """Each set's risk-coverage curve, with the shipped rule's point on it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6.6, 4.4))
    for name, (rows, gold) in sets.items():
        points = curve(verifier, rows, gold)
        line = axes.plot([c for c, _ in points], [r for _, r in points], label=name, linewidth=1.2)[0]
        decided = [(verifier.decide(r).factuality, g) for r, g in zip(rows, gold, strict=True)]
        answered = [(f, g) for f, g in decided if f is not None]
        if answered:
            risk = sum(f != g for f, g in answered) / len(answered)
            axes.plot([len(answered) / len(rows)], [risk], "o", color=line.get_color())
    axes.set_xlabel("coverage (share of claims given TRUE or FALSE)")
    axes.set_ylabel("risk (share of those verdicts wrong)")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 0.6)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, title="dot: the shipped rule", title_fontsize=8)
    axes.set_title("Offline default (today's model): risk against coverage")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    print(f"wrote {path}")


def measure(verifier: NLIVerifier, sets: dict[str, tuple[list[Reading], list[bool]]]) -> None:
    """The harm figures of ``verifier``'s rule on each set, as one agent's verdict (its score 0.5 +/- confidence
    / 2, as the MAFC score gives one agent): what ``bench/harm.py`` prints end to end, from the saved readings."""
    for name, (rows, gold) in sets.items():
        outcomes = []
        for reading, truth in zip(rows, gold, strict=True):
            decided = verifier.decide(reading)
            if decided.factuality is None:
                outcomes.append(Outcome(truth, Label.UNVERIFIED))
                continue
            score = 0.5 + (decided.confidence if decided.factuality else -decided.confidence) / 2
            outcomes.append(Outcome(truth, Label.TRUE if decided.factuality else Label.FALSE, strength(score)))
        f = harm_figures(outcomes)
        print(
            f"{name:24s} {f.claims:4d} claims: coverage {f.coverage:.3f}, selective accuracy "
            f"{f.selective_accuracy:.3f} ({f.right}/{f.answered}), false accusation {f.false_accusation:.3f} "
            f"({f.accused}/{f.gold_true}), myth acceptance {f.myth_acceptance:.3f} ({f.accepted}/{f.gold_false}), "
            f"strong wrong {f.strong_wrong}"
        )


def main(args: argparse.Namespace) -> None:
    config = json.loads((SHIPPED_MODEL / "nli.json").read_text(encoding="utf-8"))
    verifier = NLIVerifier(model=str(args.model) if args.model else None)
    named = {
        "SciFact train held-out": ("scifact-heldout", [(c, bool(g)) for c, g in scifact_heldout(args.data, config)]),
        "Check-COVID dev": ("covid-dev-labelled", covid_dev(args.data)),
    }
    if PROBE.exists():
        named["probe calibration"] = ("probe-calibration", probe_claims("calibration"))
    sets = {}
    for name, (key, claims) in named.items():
        rows = readings(key, [(c, g) for c, g in claims], args.out, verifier)
        sets[name] = ([replace(r, claim=c) for r, (c, _) in zip(rows, claims, strict=True)], [g for _, g in claims])
    if args.plot:
        # The held-out sets are read here only to be drawn, after the rule was fitted.
        shown = {"SciFact dev (held out)": ("scifact-dev", [(c, bool(g)) for c, g in scifact_dev(args.data)])}
        shown["probe held-out"] = ("probe-heldout", probe_claims("held-out"))
        drawn = dict(sets)
        for name, (key, claims) in shown.items():
            rows = readings(key, [(c, g) for c, g in claims], args.out, verifier)
            drawn[name] = (
                [replace(r, claim=c) for r, (c, _) in zip(rows, claims, strict=True)],
                [g for _, g in claims],
            )
        plot(verifier, drawn, args.plot)
        return
    decision = fit(verifier, sets, args)
    print(json.dumps(decision, indent=2))
    if args.measure:
        fitted = verifier.configure(
            **{name: decision[name] for name in ("support_threshold", "refute_threshold")},
            **{name: decision[name] for name in ("conflict", "agree", "margin")},
        )
        held = {
            "SciFact dev (held out)": ("scifact-dev", [(c, bool(g)) for c, g in scifact_dev(args.data)]),
            "probe held-out": ("probe-heldout", probe_claims("held-out")),
        }
        for name, (key, claims) in held.items():
            rows = readings(key, [(c, g) for c, g in claims], args.out, verifier)
            sets[name] = ([replace(r, claim=c) for r, (c, _) in zip(rows, claims, strict=True)], [g for _, g in claims])
        measure(fitted, sets)
    if args.write_config:
        path = (args.model or SHIPPED_MODEL) / "nli.json"
        config["decision"] = decision
        path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        print(f"wrote the decision rule into {path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("build/risk"))
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--alpha-false", type=float, default=0.05, help="false-accusation rate bound")
    parser.add_argument("--alpha-myth", type=float, default=0.10, help="myth-acceptance rate bound")
    parser.add_argument("--conflicts", default="0.2,0.3,0.4,0.5")
    parser.add_argument("--write-config", action="store_true", help="write the fitted rule into the model's nli.json")
    parser.add_argument("--model", type=Path, help="a candidate model folder (default: the shipped model)")
    parser.add_argument("--measure", action="store_true", help="then print the harm figures on every set")
    parser.add_argument("--plot", type=Path, help="draw the risk-coverage curves (no fitting) to this PNG")
    main(parser.parse_args())
