"""``factcheck eval`` and ``factcheck import-mafc``: the commands; what they run is :mod:`factcheck.eval`'s
(:mod:`~factcheck.eval.evaluate`: check a dataset once, score it many ways)."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn
from rich.table import Table

from factcheck.build import DELIBERATION_PREFIX, build_checker, fingerprint, policy_options, split_options
from factcheck.cli.flags import (
    CheckerFlags,
    HelpOption,
    agents_flag,
    config_flag,
    corpus_flag,
    deliberation_flag,
    endpoint_flags,
    llm_base_url_flag,
    llm_model_flag,
    memory_flag,
    no_cache_flag,
    options_flag,
    profile_flag,
    registered,
    scoring_options,
    scoring_trust_flag,
    settings_from_flags,
)
from factcheck.cli.interrupted import keeps
from factcheck.cli.keys import require_keys
from factcheck.config import Settings
from factcheck.errors import ConfigError, InputError
from factcheck.eval.datasets import Dataset, EvalItem, load_dataset
from factcheck.eval.evaluate import (
    JUDGMENTS,
    attach_gold,
    check_items,
    check_specs,
    cost_per_claim,
    given_evidence_checker,
    parse_specs,
    replay_records,
    score_rows,
)
from factcheck.eval.metrics import false_consensus_rate
from factcheck.eval.report import write_plots, write_report
from factcheck.jsonl import read_records
from factcheck.options import parse_option_pairs
from factcheck.paths import SHARED_DATA_ENV, shared_data_dir
from factcheck.pipeline import Checker
from factcheck.registry import get_registry
from factcheck.resume import guard_settings, read_done
from factcheck.text import plural
from factcheck.trust import claim_cases

DEFAULT_SCORERS = "mafc,mafc:bounds=reference,average,average:remap=false,normsum,majority"


data_dir_flag = click.option(
    "--data-dir",
    cls=HelpOption,
    type=click.Path(file_okay=False, path_type=Path),
    default_text=f"${SHARED_DATA_ENV}, else ../shared/data beside the working directory or this checkout",
    help="The shared evaluation data folder.",
)


@click.command(name="eval", short_help="Check a dataset once, then compare every scorer on it.")
@click.argument("dataset")
@data_dir_flag
@click.option(
    "--dataset-option",
    "dataset_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Reader option, e.g. seed=3 or size=150 (scifact-mixed-random), split=test (liar, fm2, check-covid), "
    "part=synthetic (vitaminc), rounds=3 (anli).",
)
@profile_flag
@config_flag
@corpus_flag
@click.option(
    "--mode",
    type=click.Choice(["retrieve", "given"]),
    default="retrieve",
    show_default=True,
    help="retrieve: agents search for evidence; given: verifiers judge each claim's gold evidence.",
)
@click.option("--extract", is_flag=True, help="Split texts with the claim extractor instead of the dataset's claims.")
@click.option(
    "--scorers",
    cls=HelpOption,
    names=registered("scorers"),
    default=DEFAULT_SCORERS,
    show_default=True,
    help="Comma list of scorers ({names}); a scorer may carry options: average:remap=false.",
)
@click.option(
    "--labels",
    "label_rules",
    cls=HelpOption,
    names=registered("label_rules"),
    default="threshold",
    show_default=True,
    help="Comma list of label rules ({names}).",
)
@options_flag(
    "Option for every scorer or label rule that has it, and for the deliberation policy when it has it; "
    "deliberation.KEY=VALUE is the policy's alone (repeatable)."
)
@deliberation_flag
@memory_flag
@agents_flag
@click.option(
    "--judgments",
    type=click.Path(exists=True, path_type=Path),
    help="Score these recorded checks (project JSON lines) instead of checking.",
)
@click.option(
    "--replay",
    type=click.Path(exists=True, path_type=Path),
    help="Build each text from claim judgments recorded in this file (matched by claim text), "
    "e.g. the MAFC authors' for scifact-mixed-random.",
)
@click.option(
    "--out",
    cls=HelpOption,
    type=click.Path(path_type=Path),
    default_text="factcheck-eval/DATASET",
    help="Output folder; a run resumes there only with the same settings.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Check only the first N texts.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True, help="Texts checked at once.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap resampling.")
@llm_base_url_flag
@llm_model_flag
@endpoint_flags
@no_cache_flag
@click.option(
    "--independence",
    type=click.Choice(["off", "merge"]),
    default="off",
    show_default=True,
    help="merge: agreeing agents citing near-duplicate evidence count once when the judgments are scored "
    "(each scorer's rows; the recorded judgments are kept whole).",
)
@scoring_trust_flag
def eval_command(
    dataset: str,
    data_dir: Path | None,
    dataset_options: tuple[str, ...],
    profile: str | None,
    config: Path | None,
    corpus: Path | None,
    mode: str,
    extract: bool,
    scorers: str,
    label_rules: str,
    options: tuple[str, ...],
    deliberation: str | None,
    memory_path: Path | None,
    agent_names: str | None,
    judgments: Path | None,
    replay: Path | None,
    out: Path | None,
    limit: int | None,
    concurrency: int,
    seed: int,
    llm_base_url: str | None,
    llm_model: str | None,
    serper_url: str | None,
    serpapi_url: str | None,
    wikipedia_url: str | None,
    wikidata_url: str | None,
    no_cache: bool,
    independence: str,
    trust_file: Path | None,
) -> None:
    """Evaluate on DATASET: check its texts once into judgments.jsonl, then score them with
    every scorer x label rule and write report.md, report.json and plots."""
    # Every argument is checked before the data is read or a text is checked: a typo in
    # --scorers must not wait for (or be hidden by) a missing data folder or an hour's run.
    if judgments is not None and replay is not None:
        raise ConfigError("give --judgments or --replay, not both")
    specs, rules = parse_specs(scorers), [r.strip() for r in label_rules.split(",") if r.strip()]
    if not specs or not rules:
        raise ConfigError("give at least one scorer (--scorers) and one label rule (--labels)")
    pairs = scoring_options(options, trust_file)
    scoring = {k: v for k, v in pairs.items() if not k.startswith(DELIBERATION_PREFIX)}
    check_specs(specs, rules, scoring)
    reader_options = parse_option_pairs(dataset_options)
    settings = None
    if judgments is None and replay is None:
        # The checker check and batch build; --independence is applied when scoring, not while checking.
        asked = CheckerFlags(
            config=config,
            profile=profile,
            corpus=corpus,
            llm_base_url=llm_base_url,
            llm_model=llm_model,
            no_cache=no_cache,
            independence="off",
            serper_url=serper_url,
            serpapi_url=serpapi_url,
            wikipedia_url=wikipedia_url,
            wikidata_url=wikidata_url,
            deliberation=deliberation,
            memory_path=memory_path,
            agent_names=agent_names,
            trust_file=trust_file if agent_names else None,  # the recommended team's file, not a routing option
        )
        settings = settings_from_flags(asked)
        settings = with_policy_options(settings, pairs)
    else:
        flags = (("--deliberation", deliberation), ("--memory", memory_path), ("--agents", agent_names))
        given = [flag for flag, value in flags if value is not None]
        if given:
            raise ConfigError(f"{given[0]} applies when checking: recorded judgments are scored as they were")

    if settings is not None:
        check_memory(settings, dataset, mode)
    data = load_dataset(dataset, data_dir or shared_data_dir(), **reader_options)
    items = data.items[:limit] if limit else data.items
    out = out or Path("factcheck-eval") / dataset
    out.mkdir(parents=True, exist_ok=True)
    err = Console(stderr=True)

    if judgments is not None:
        records = attach_gold((r for _, r in read_records(judgments)), data)
        source = str(judgments)
    elif replay is not None:
        records = replay_records(items, (r for _, r in read_records(replay)))
        source = f"claims replayed from {replay}"
        with (out / JUDGMENTS).open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    else:
        assert settings is not None  # checking: built above, before the data was read
        checker = build_checker(settings)
        if mode == "given":
            checker = given_evidence_checker(data, checker)
        require_keys(checker)
        records = _check(data, items, out, settings, checker, mode, extract, concurrency, err)
        source = str(out / JUDGMENTS)
    if not records:
        raise InputError("no texts to score")

    rows, claim_scores = score_rows(
        records,
        data.labels,
        specs,
        rules,
        scoring,
        seed=seed,
        independence=0.5 if independence == "merge" else None,
    )
    cost = cost_per_claim(records)
    cases = claim_cases(records)
    summary: dict[str, Any] = {
        "dataset": dataset,
        "description": data.description,
        "texts": len(records),
        "mode": "recorded judgments" if judgments or replay else mode,
        "judgments": source,
        "classes": [str(c) for c in data.labels],
        "cost_per_claim": cost,
        # ECMR: of the claims where every agent agreed with confidence >= 0.7, the share that were wrong
        "false_consensus_rate": false_consensus_rate([(j, truth) for _, j, truth in cases]) if cases else None,
        "command": "factcheck " + shlex.join(sys.argv[1:])
        if sys.argv[1:2] == ["eval"]
        else f"factcheck eval {dataset}",
    }
    written = write_report(out, summary, rows) + write_plots(out, rows, claim_scores)
    _print_table(dataset, rows, len(records), cost)
    err.print(f"wrote {', '.join(str(p) for p in written)}")


def with_policy_options(settings: Settings, pairs: dict[str, str]) -> Settings:
    """``settings`` with the ``-o`` pairs its deliberation policy has (``deliberation.KEY``, or a key it
    declares; the others are the scorers'); ConfigError for a ``deliberation.KEY`` it does not have."""
    policy = get_registry().get("deliberators", settings.deliberation)
    _, theirs, unknown = split_options(pairs, (), policy)
    prefixed = [k.removeprefix(DELIBERATION_PREFIX) for k in unknown if k.startswith(DELIBERATION_PREFIX)]
    if prefixed:
        known = ", ".join(sorted(policy_options(policy))) if policy.active else f"none: deliberation is {policy.name}"
        raise ConfigError(
            f"unknown deliberation option {', '.join(prefixed)} for policy {policy.name!r} (options: {known})"
        )
    return settings.with_overrides(deliberation_options=theirs)


def _check(
    data: Dataset,
    items: Sequence[EvalItem],
    out: Path,
    settings: Settings,
    checker: Checker,
    mode: str,
    extract: bool,
    concurrency: int,
    err: Console,
) -> list[dict[str, Any]]:
    """Check the items not yet in ``out/judgments.jsonl`` (with a progress bar); every record of ``items``."""
    # Judgments are recorded once and scored many ways: the scorer and label rule are not part of them.
    # The given-evidence agents stand for the settings' own (mode says which).
    printed = fingerprint(settings, checker.agents if mode == "given" else None)
    fingerprint_ = {k: v for k, v in printed.items() if k not in ("scorer", "labels")}
    recorded = {"dataset": data.name, "mode": mode, "extract": extract, **fingerprint_}
    guard_settings(out / "run.json", recorded, out / JUDGMENTS, "use another --out or delete the folder")
    path = out / JUDGMENTS
    done = read_done(path)
    todo = [item for item in items if item.id not in done]
    finished = len(items) - len(todo)
    keeps(lambda: f"{path} keeps {finished} of {plural(len(items), 'text')}; run the same command again to continue")

    def done_one(progress: Progress, task: TaskID) -> None:
        nonlocal finished
        finished += 1
        progress.advance(task)

    if todo:
        columns = (TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=err, transient=True) as progress:
            task = progress.add_task("check", total=len(todo))
            asyncio.run(
                check_items(
                    todo,
                    checker,
                    path,
                    extract=extract,
                    concurrency=concurrency,
                    on_done=lambda: done_one(progress, task),
                )
            )
    wanted = {item.id for item in items}
    return attach_gold((r for _, r in read_records(path) if str(r.get("id")) in wanted), data)


def _print_table(dataset: str, rows: Any, texts: int, cost: dict[str, float]) -> None:
    table = Table(title=f"{dataset}: {plural(texts, 'text')}")
    for column in ("scorer", "labels", "accuracy [95% CI]", "macro-F1", "abstain", "ECE"):
        table.add_column(column, no_wrap=True)
    for row in rows:
        m = row.metrics
        table.add_row(
            row.scorer,
            row.labels,
            f"{m['accuracy']:.3f} [{m['accuracy_ci'][0]:.3f}, {m['accuracy_ci'][1]:.3f}]",
            f"{m['macro_f1']:.3f}",
            f"{m['abstention']:.1%}",
            "" if m["ece"] is None else f"{m['ece']:.3f}",
        )
    console = Console(width=None if sys.stdout.isatty() else 120)  # piped: do not squeeze the table to 80
    console.print(table)
    console.print(
        f"per claim: {cost['llm_calls']:.2f} LLM calls, {cost['tokens']:.0f} tokens, "
        f"{cost['search_calls']:.2f} search calls, {cost['source_calls']:.2f} source calls, "
        f"{cost.get('agent_calls', 0):.2f} agent calls, {cost.get('passages', 0):.1f} passages read, "
        f"{cost.get('deliberated', 0):.1%} deliberated, {cost['seconds']:.3f} s"
    )


@click.command(name="import-mafc", short_help="Write the MAFC authors' saved judgments as project JSON lines.")
@click.argument("out_dir", type=click.Path(path_type=Path))
@data_dir_flag
def import_mafc(out_dir: Path, data_dir: Path | None) -> None:
    """Write the MAFC authors' saved gpt-4o judgments as project JSON lines
    (OUT_DIR/scifact-binary.jsonl, OUT_DIR/scifact-mixed.jsonl) for --judgments."""
    from factcheck.eval import mafc

    for path, count in mafc.write_all(data_dir or shared_data_dir(), out_dir):
        click.echo(f"wrote {plural(count, 'text')} to {path}")


def check_memory(settings: Settings, dataset: str, mode: str) -> None:
    """Refuse an experience memory where it would mislead: with ``--mode given`` (the agents read the gold
    evidence, and precedents are none of it), or holding the gold labels of the dataset evaluated
    (``factcheck memory import`` of its own run: each claim would be lent its own answer)."""
    from factcheck.memory.settings import memory_settings
    from factcheck.memory.store import MemoryStore

    memory = memory_settings(settings.memory)
    if not memory.enabled:
        return
    if mode == "given":
        raise ConfigError("--memory applies with --mode retrieve: with given evidence the agents read only the gold")
    gold = f"gold:{dataset}"
    if any(c.reviewer == gold for c in MemoryStore(memory.path or "").corrections()):
        raise ConfigError(
            f"the memory {memory.path} holds the gold labels of {dataset} ({gold}): evaluating against it would "
            "lend each claim its own answer; use a memory without them (factcheck memory list shows who ruled)"
        )
