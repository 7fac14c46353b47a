"""Deliberation gates replayed over recorded judgments, and the stage's time per claim measured offline.

**Replay** (the default). Each labelled claim's first round of judgments is rebuilt from a record
(:func:`factcheck.eval.calibrate.gate_cases`), its deliberation state computed as the pipeline computes
it (:func:`factcheck.deliberation.state_of`, the floor's leader) and every policy's pure ``gate`` run on it.
Nothing is called again: the replay says which claims each gate sends on and how good the first-round
answers of the claims it stops are. Per policy: the share of claims sent on, the first-round accuracy of
the claims stopped at round 0 (95% Wilson interval), of those sent on, and of every claim (the same scorer,
MAFC over the first round's votes, whatever the gate does). A gate is useful when what it stops is more
accurate than the whole and what it sends on less. Trust weights (which agent leads, the weighted
concentration) are learned with K-fold cross-validation over texts, so a claim's gate never reads trust
learned on it. LASE runs with ``round0 = all`` (every agent answers first, the most trusted leads), and
both LASE's ``tau_conf`` and ECMR's ``tau_confidence`` are swept.

Default input: the MAFC authors' recorded gpt-4o judgments on the 188 labelled SciFact dev claims (agents
Google, Wikipedia, LLM), read from ``../shared/data`` as ``bench/routing.py`` reads them. Those records
carry no evidence, so independence is unknown and ECMR's false-consensus trigger cannot fire; the output
says so. ``--judgments DIR/judgments.jsonl`` (``factcheck eval ... --out DIR``) replays a project run
instead, deliberated or not (a deliberated claim's first round is rebuilt from its record).

**Speed** (``--speed``): median, p95 and mean wall time per claim of ``off`` against a policy, on the first
``--claims`` SciFact dev claims (``scifact-binary``), with ``factcheck.build_checker`` and a setup of
``bench/deliberation.toml`` (default ``duo``), the judgment cache off. Both checkers are built in this one
process and run side by side, claim by claim, the order alternating; the ratios are what to read.

**Configs** (``--write-configs DIR``): writes each ``[profiles.NAME]`` of ``bench/deliberation.toml`` as a
plain ``DIR/NAME.toml`` for ``factcheck eval --config``.

    python bench/deliberation.py [--data ../shared/data] [--judgments FILE] [--folds 5] [--out bench/out]
    python bench/deliberation.py --speed [--setup duo] [--policy lase] [-o tau_lp=0.43] [--claims 100]
    python bench/deliberation.py --write-configs build/deliberation
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import statistics
import sys
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factcheck.eval.calibrate import (
    NO_EVIDENCE_NOTE,
    GateCase,
    GateOutcome,
    GateReplay,
    gate_cases,
    has_evidence,
    has_signal,
)
from factcheck.eval.mafc import judged_records
from factcheck.plugin import Deliberator
from factcheck.registry import get_deliberators
from factcheck.scoring.mafc import MAFCScorer
from factcheck.trust import Trust, fold_of_records, learn_trust

ROOT = Path(__file__).resolve().parent.parent
CONFIG = Path(__file__).with_suffix(".toml")
TAUS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0)
LP_TAUS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)  # LASE tau_lp, swept where the leaders' verifiers measured lp_min


# ---------------------------------------------------------------- replay


@dataclass(frozen=True)
class Row:
    """One line of the replay table."""

    name: str
    outcome: GateOutcome
    ci: tuple[float, float] | None  # of the stopped claims' accuracy

    def to_dict(self) -> dict[str, Any]:
        return {**self.outcome.to_dict(), "name": self.name, "stopped_accuracy_ci": self.ci}


def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """The 95% Wilson score interval of ``correct`` of ``n`` (``None`` for n = 0)."""
    if n == 0:
        return None
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def fold_trusts(records: Sequence[Mapping[str, Any]], folds: int, seed: int) -> tuple[list[int], dict[int, Trust]]:
    """Each record's fold and, per fold, the trust learned on the other folds (as ``bench/routing.py``)."""
    fold = fold_of_records(len(records), folds, seed)
    return fold, {k: learn_trust([r for i, r in enumerate(records) if fold[i] != k]) for k in range(folds)}


def replay_rows(
    cases: Sequence[GateCase],
    fold: Sequence[int],
    trusts: Mapping[int, Trust],
    weighting: str = "log_odds",
    policies: Mapping[str, Deliberator] | None = None,
) -> list[Row]:
    """Every policy's gate over ``cases``: off, lase (round0 all), ecmr and always, then the sweeps."""
    registered = dict(policies) if policies is not None else get_deliberators()

    def alpha_of(case: GateCase) -> dict[str, float]:
        trust = trusts[fold[case.record]]
        return {a: trust.weight(a, weighting) for a in case.agents}

    scorer = MAFCScorer()
    rows: list[Row] = []

    def add(name: str, replay: GateReplay, policy: Deliberator) -> None:
        outcome = replay.outcome(name, policy)
        rows.append(Row(name, outcome, wilson(outcome.stopped_correct, outcome.stopped)))

    lase, ecmr = registered["lase"].configure(round0="all"), registered["ecmr"]
    lase_replay = GateReplay(cases, lase, alpha_of, scorer)
    ecmr_replay = GateReplay(cases, ecmr, alpha_of, scorer)
    if "off" in registered:
        add("off", lase_replay, registered["off"])
    add(f"lase (round0=all, tau_conf={lase.options()['tau_conf']:g})", lase_replay, lase)
    add(f"ecmr (tau_confidence={ecmr.options()['tau_confidence']:g})", ecmr_replay, ecmr)
    add("always (every claim)", lase_replay, lase.configure(always=True))
    for tau in TAUS:
        add(f"lase tau_conf={tau:g}", lase_replay, lase.configure(tau_conf=tau))
    if has_signal(cases):
        for tau in LP_TAUS:
            add(f"lase tau_lp={tau:g}", lase_replay, lase.configure(tau_lp=tau))
    for tau in TAUS:
        add(f"ecmr tau_confidence={tau:g}", ecmr_replay, ecmr.configure(tau_confidence=tau))
    return rows


def _acc(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_rows(rows: Sequence[Row]) -> None:
    header = (
        f"{'policy':<36} {'sent on':>8} {'stopped':>7}  {'stopped acc [95% CI]':<23} {'sent-on acc':>11} "
        f"{'all claims':>10}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        o = row.outcome
        ci = f" [{row.ci[0]:.3f}, {row.ci[1]:.3f}]" if row.ci is not None else ""
        print(
            f"{row.name:<36} {o.share:>8.1%} {o.stopped:>7}  {_acc(o.stopped_accuracy) + ci:<23} "
            f"{_acc(o.sent_accuracy):>11} {o.accuracy:>10.3f}"
        )


def replay_main(args: argparse.Namespace) -> int:
    records, source = judged_records(args.judgments or None, args.data)
    cases = gate_cases(records)
    if not cases:
        print("no claims with a TRUE / FALSE gold label", file=sys.stderr)
        return 1
    agents = list(dict.fromkeys(a for c in cases for a in c.agents))
    fold, trusts = fold_trusts(records, args.folds, args.seed)
    lase = get_deliberators()["lase"]
    leaders = sorted(
        {lase.lead(c.agents, {a: trusts[fold[c.record]].weight(a, args.weighting) for a in c.agents}) for c in cases}
    )
    print(f"data: {source}: {len(cases)} labelled claims, agents {', '.join(agents)}")
    print(f"trust: learned on the other folds ({args.folds}-fold CV by text, seed {args.seed}), {args.weighting}")
    print(f"LASE leader (the most trusted agent, per fold): {', '.join(leaders)}")
    print("scorer: mafc over the first round's votes; 'sent on' = the share of claims the gate deliberates")
    if not has_evidence(cases):
        print(f"note: {NO_EVIDENCE_NOTE}")
    print()
    rows = replay_rows(cases, fold, trusts, args.weighting)
    print_rows(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "deliberation-replay.json"
    path.write_text(json.dumps([row.to_dict() for row in rows], indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {path}")
    return 0


# ---------------------------------------------------------------- setups


def load_setups(path: Path = CONFIG) -> dict[str, dict[str, Any]]:
    """The ``[profiles.NAME]`` tables of ``path``, each a factcheck.toml body."""
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    profiles = data.get("profiles")
    if not isinstance(profiles, dict) or not profiles:
        raise SystemExit(f"{path}: no [profiles.NAME] tables")
    return {str(name): dict(table) for name, table in profiles.items()}


def _key(key: str) -> str:
    bare = key.replace("_", "").replace("-", "").isalnum() and key.isascii()
    return key if bare else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(str(k))} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def dump_toml(table: Mapping[str, Any], prefix: str = "") -> str:
    """``table`` as TOML: its scalars (and inline tables under ``verifier_options``), then its sub-tables."""
    lines = []
    nested = {}
    for key, value in table.items():
        if isinstance(value, Mapping) and key != "verifier_options":
            nested[key] = value
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    text = "\n".join(lines) + ("\n" if lines else "")
    for key, value in nested.items():
        name = f"{prefix}.{_key(key)}" if prefix else _key(key)
        body = dump_toml(value, name)
        scalars = any(not isinstance(v, Mapping) or k == "verifier_options" for k, v in value.items())
        text += ("\n" if text else "") + (f"[{name}]\n" if scalars or not value else "") + body
    return text


def write_configs(folder: Path, path: Path = CONFIG) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, table in load_setups(path).items():
        out = folder / f"{name}.toml"
        header = f"# the {name!r} setup of {path.name} (written by bench/deliberation.py --write-configs)\n"
        out.write_text(header + dump_toml(table), encoding="utf-8")
        written.append(out)
    return written


# ---------------------------------------------------------------- speed


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    low, high = math.floor(k), math.ceil(k)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def speed_main(args: argparse.Namespace) -> int:
    os.environ.setdefault("FACTCHECK_LOAD_PLUGINS", "")  # the built-ins only
    from factcheck.build import build_checker
    from factcheck.config import settings_from_mapping
    from factcheck.eval.datasets import load_dataset
    from factcheck.eval.evaluate import cost_per_claim, item_claims
    from factcheck.options import parse_option_pairs

    setups = load_setups(args.config)
    if args.setup not in setups:
        raise SystemExit(f"no setup {args.setup!r} in {args.config} (setups: {', '.join(setups)})")
    settings = settings_from_mapping(setups[args.setup], f"{args.config} [profiles.{args.setup}]")
    settings = settings.with_overrides(cache={"enabled": False}, corpus=args.corpus)
    policies = get_deliberators()
    if args.policy not in policies:
        raise SystemExit(f"no deliberation policy {args.policy!r} (registered: {', '.join(policies)})")
    options = parse_option_pairs(args.option)
    policy = policies[args.policy].configure(**options)
    arms = {
        "off": build_checker(settings, deliberation=policies["off"]),
        args.policy: build_checker(settings, deliberation=policy),
    }
    items = load_dataset("scifact-binary", args.data).items[: args.claims + args.warmup]
    warm, timed = items[: args.warmup], items[args.warmup :]
    for item in warm:  # loads the index, the embedder and the model in each checker, untimed
        for checker in arms.values():
            checker.check(item.text, claims=item_claims(item))
    seconds: dict[str, list[float]] = {name: [] for name in arms}
    records: dict[str, list[dict[str, Any]]] = {name: [] for name in arms}
    right: dict[str, int] = dict.fromkeys(arms, 0)
    names = list(arms)
    for i, item in enumerate(timed):
        claims = item_claims(item)
        for name in names if i % 2 == 0 else names[::-1]:  # alternate which runs first
            started = time.perf_counter()
            verdict = arms[name].check(item.text, claims=claims)
            seconds[name].append((time.perf_counter() - started) / max(1, len(claims)))
            records[name].append(verdict.to_dict())
            right[name] += sum(
                str(c.label) == str(gold.label) for c, gold in zip(verdict.claims, item.claims, strict=False)
            )

    n = len(timed)
    agents = ", ".join(a.name for a in settings.resolved_agents())
    print(
        f"setup {args.setup} ({agents}), {n} SciFact dev claims (scifact-binary, after {len(warm)} untimed), "
        "judgment cache off, both checkers in this process, claim by claim, order alternating"
    )
    print(f"policy: {policy.name} {json.dumps({k: v for k, v in policy.options().items() if k != 'name'})}")
    print()
    header = (
        f"{'arm':<10} {'median ms':>9} {'p95 ms':>8} {'mean ms':>8} {'agent calls':>11} {'passages':>8} "
        f"{'deliberated':>11} {'accuracy':>8}"
    )
    print(header)
    print("-" * len(header))
    stats: dict[str, dict[str, float]] = {}
    for name in arms:
        values = seconds[name]
        cost = cost_per_claim(records[name])
        stats[name] = {
            "median": statistics.median(values),
            "p95": _percentile(values, 0.95),
            "mean": statistics.fmean(values),
            "agent_calls": cost["agent_calls"],
            "passages": cost["passages"],
            "deliberated": cost["deliberated"],
            "accuracy": right[name] / n if n else 0.0,
        }
        s = stats[name]
        print(
            f"{name:<10} {s['median'] * 1e3:>9.1f} {s['p95'] * 1e3:>8.1f} {s['mean'] * 1e3:>8.1f} "
            f"{s['agent_calls']:>11.2f} {s['passages']:>8.2f} {s['deliberated']:>11.1%} {s['accuracy']:>8.3f}"
        )
    base, on = stats["off"], stats[args.policy]

    def ratio(key: str) -> str:
        return f"{on[key] / base[key]:.2f}x" if base[key] else "-"

    print()
    print(
        f"{args.policy} / off: median {ratio('median')}, p95 {ratio('p95')}, mean {ratio('mean')}, "
        f"agent calls {ratio('agent_calls')}, passages {ratio('passages')}"
    )
    target = "under" if on["median"] < 0.25 else "NOT under"
    print(f"median time per claim with {args.policy}: {on['median'] * 1e3:.1f} ms, {target} the 250 ms target")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "deliberation-speed.json"
    path.write_text(json.dumps({"setup": args.setup, "claims": n, "arms": stats}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data", help="shared data folder")
    parser.add_argument("--out", type=Path, default=Path("bench/out"), help="folder for the JSON results")
    parser.add_argument("--judgments", type=Path, help="replay this judgments.jsonl instead of the MAFC authors'")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--weighting", choices=("log_odds", "pamas"), default="log_odds")
    parser.add_argument("--speed", action="store_true", help="time off against --policy instead of replaying")
    parser.add_argument("--config", type=Path, default=CONFIG, help="the setups file (default: %(default)s)")
    parser.add_argument("--setup", default="duo", help="--speed: the setup of --config (default: %(default)s)")
    parser.add_argument("--policy", default="lase", help="--speed: the policy timed against off (%(default)s)")
    parser.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE", help="--policy option")
    parser.add_argument("--claims", type=int, default=100, help="--speed: claims timed (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=3, help="--speed: claims run first, untimed")
    parser.add_argument("--corpus", type=Path, help="--speed: point every corpus agent at this collection")
    parser.add_argument("--write-configs", type=Path, metavar="DIR", help="write each setup as DIR/NAME.toml")
    args = parser.parse_args(argv)

    print("$ " + shlex.join(["python", *(sys.argv if argv is None else ["bench/deliberation.py", *argv])]))
    if args.write_configs:
        for path in write_configs(args.write_configs, args.config):
            print(f"wrote {path}")
        return 0
    return speed_main(args) if args.speed else replay_main(args)


if __name__ == "__main__":
    raise SystemExit(main())
