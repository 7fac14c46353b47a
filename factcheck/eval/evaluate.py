"""Record once, score many: check a dataset into ``judgments.jsonl``, then score that
one file with every requested scorer and label rule.

A killed run resumes: texts whose id is already in ``judgments.jsonl`` are not
checked again (a half-written last line is dropped).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from factcheck.agent import Agent
from factcheck.build import split_scoring_options
from factcheck.errors import ConfigError, InputError
from factcheck.eval.datasets import Dataset, EvalItem
from factcheck.eval.metrics import (
    accuracy,
    bootstrap_ci,
    confusion_matrix,
    expected_calibration_error,
    macro_f1,
    per_class,
)
from factcheck.pipeline import Checker
from factcheck.resume import AppendLog
from factcheck.scoring import rescore
from factcheck.sources.given import GivenSource
from factcheck.types import Claim, ClaimVerdict, Evidence, Judgment, Label, TextVerdict, Usage

JUDGMENTS = "judgments.jsonl"


@dataclass(frozen=True)
class ScorerSpec:
    """A scorer with its own options, written ``name`` or ``name:key=value:key=value``."""

    name: str
    options: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> ScorerSpec:
        name, *pairs = text.strip().split(":")
        options = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep:
                raise ConfigError(f"scorer {text!r}: options look like name:key=value")
            # "," separates scorers, so a list inside one scorer's option is written with ";"
            options[key.strip()] = value.strip().replace(";", ",")
        return cls(name.strip(), options)

    def __str__(self) -> str:
        return ":".join([self.name, *(f"{k}={v}" for k, v in self.options.items())])


def parse_specs(text: str) -> list[ScorerSpec]:
    """``"mafc,average:remap=false"`` -> specs."""
    return [ScorerSpec.parse(part) for part in text.split(",") if part.strip()]


# ---- checking -------------------------------------------------------------------------------


def item_claims(item: EvalItem) -> list[Claim]:
    """The dataset's own claims, with their spans in the text where they occur verbatim."""
    claims = []
    for number, gold in enumerate(item.claims, 1):
        start = item.text.find(gold.text)
        span = (start, start + len(gold.text)) if start >= 0 else None
        claims.append(Claim(f"c{number}", gold.text, span))
    return claims


def record(item: EvalItem, verdict: TextVerdict) -> dict[str, Any]:
    """The project's JSON for a checked text, with the item's id, gold label and claim gold labels."""
    data = {"id": item.id, "gold": str(item.gold), **verdict.to_dict()}
    if len(item.claims) == len(verdict.claims):
        for claim, gold in zip(data["claims"], item.claims, strict=True):
            claim["gold"] = str(gold.label) if gold.label is not None else None
    return data


def given_evidence_checker(dataset: Dataset, checker: Checker) -> Checker:
    """A checker whose agents judge each claim against its gold evidence (the verifiers alone)."""
    if not dataset.has_evidence:
        raise ConfigError(f"dataset {dataset.name} carries no gold evidence: use --mode retrieve")
    # Keyed by claim text: a text that recurs with other gold evidence gets all of it.
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for item in dataset.items:
        for claim in item.claims:
            known = evidence.get(claim.text, ())
            evidence[claim.text] = known + tuple(e for e in claim.evidence if e not in known)
    source = GivenSource(evidence=evidence)
    verifiers = {agent.verifier.name: agent.verifier for agent in checker.agents}
    agents = [Agent(f"given+{name}", source, verifier) for name, verifier in verifiers.items()]
    return checker.with_agents(agents)


def item_checker(checker: Checker, item: EvalItem) -> Checker:
    """``checker`` with each given-evidence agent holding only ``item``'s gold evidence.

    VitaminC pairs one claim text with the sentence before and after a revision, with opposite
    labels: each item must be judged against its own evidence, not every passage given for that text.
    """
    if not any(isinstance(agent.source, GivenSource) for agent in checker.agents):
        return checker
    own = GivenSource(evidence={claim.text: claim.evidence for claim in item.claims})
    agents = tuple(
        replace(agent, source=own) if isinstance(agent.source, GivenSource) else agent for agent in checker.agents
    )
    return checker.with_agents(agents)


async def check_items(
    items: Sequence[EvalItem],
    checker: Checker,
    out: Path,
    *,
    extract: bool = False,
    concurrency: int = 4,
    on_done: Callable[[], None] = lambda: None,
) -> None:
    """Check each item not yet in ``out`` and append its record, one line per text, as soon as it is done."""
    limit = asyncio.Semaphore(concurrency)
    with AppendLog(out) as log:

        async def one(item: EvalItem) -> None:
            async with limit:
                claims = None if extract else item_claims(item)
                verdict = await item_checker(checker, item).acheck(item.text, claims, as_of=item.as_of)
            log.write(record(item, verdict))
            on_done()

        await asyncio.gather(*(one(item) for item in items))


def replay_records(items: Sequence[EvalItem], judged: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records for ``items`` built from claim judgments recorded elsewhere, matched by claim text.

    Fresh combinations of already-judged claims (``scifact-mixed-random`` from the MAFC
    authors' SciFact judgments) are scored without checking anything again.
    """
    by_claim: dict[str, tuple[Judgment, ...]] = {}
    for data in judged:
        for verdict in TextVerdict.from_dict(data).claims:
            by_claim.setdefault(verdict.claim.text, verdict.judgments)
    records = []
    for item in items:
        judged_claims = []
        for claim in item_claims(item):
            if claim.text not in by_claim:
                raise InputError(f"no recorded judgments for claim {claim.text!r} of {item.id}")
            judged_claims.append(ClaimVerdict(claim, by_claim[claim.text]))
        records.append(record(item, TextVerdict(text=item.text, claims=tuple(judged_claims))))
    return records


# ---- scoring --------------------------------------------------------------------------------


def attach_gold(records: Iterable[dict[str, Any]], dataset: Dataset | None) -> list[dict[str, Any]]:
    """Give each record a ``gold`` label: its own, else the dataset's by id, else by exact text;
    the records in the dataset's order (those it does not hold last, by id).

    ``judgments.jsonl`` holds texts in the order they finished; the bootstrap resamples by
    position, so only a fixed order makes its intervals the same from run to run.
    """
    items = dataset.items if dataset else ()
    position = {item.id: number for number, item in enumerate(items)}
    by_id = {item.id: item for item in items}
    # Records may name an item by the dataset's own key: a SciFact dev id, a row index.
    for item in items:
        for key in ("scifact_dev_id", "row"):
            if key in item.meta:
                by_id.setdefault(str(item.meta[key]), item)
    by_text = {item.text: item for item in items}
    keyed = []
    for number, data in enumerate(records, 1):
        found = by_id.get(str(data.get("id"))) or by_text.get(str(data.get("text")))
        if data.get("gold") is None:
            if found is None:
                raise InputError(f"judgments line {number}: no 'gold' field and no dataset item with its id or text")
            data = {**data, "gold": str(found.gold)}
        keyed.append(((position[found.id] if found else len(items), str(data.get("id", ""))), data))
    keyed.sort(key=lambda pair: pair[0])  # stable: records of one text keep their order
    return [data for _, data in keyed]


@dataclass(frozen=True)
class Row:
    """The metrics of one scorer x label rule on one dataset."""

    scorer: str
    labels: str
    metrics: dict[str, Any]


def _scoring_options(spec: ScorerSpec, options: Mapping[str, str], levels: int) -> dict[str, Any]:
    merged: dict[str, Any] = dict(options)
    if levels == 2 and "thresholds" not in merged:
        merged["thresholds"] = "0.5"  # binary datasets: a text is TRUE above 0.5, as in the paper
    merged.update(spec.options)
    return merged


ClaimScores = dict[str, tuple[list[float], list[bool]]]


def score_rows(
    records: Sequence[dict[str, Any]],
    classes: Sequence[Label],
    specs: Sequence[ScorerSpec],
    rules: Sequence[str],
    options: Mapping[str, str],
    *,
    seed: int = 0,
    independence: float | None = None,
) -> tuple[list[Row], ClaimScores]:
    """Re-score the records with every scorer x label rule; the metrics of each, and each
    scorer's claim scores with the claims' gold outcomes (for calibration plots). With
    ``independence``, agreeing agents citing near-duplicate evidence are merged first."""
    verdicts = [TextVerdict.from_dict(r) for r in records]
    if independence is not None:
        from factcheck.independence import apply_independence

        verdicts = [apply_independence(v, independence) for v in verdicts]
    gold = [Label.parse(r["gold"]) for r in records]
    strangers = sorted({str(g) for g in gold} - {str(c) for c in classes})
    if strangers:
        raise InputError(
            f"gold labels {', '.join(strangers)} are not classes of this dataset ({', '.join(map(str, classes))}): "
            "are these judgments from another dataset?"
        )
    levels = 2 if Label.PARTLY_TRUE not in classes else 3
    rows: list[Row] = []
    claim_scores: ClaimScores = {}
    for spec in specs:
        for rule_name in rules:
            scorer, rule = resolve_scoring_lenient(spec, rule_name, _scoring_options(spec, options, levels))
            rescored = [rescore(v, scorer, rule) for v in verdicts]
            metrics = text_metrics(gold, [v.label for v in rescored], classes, seed=seed)
            scores, outcomes = claim_outcomes(records, rescored)
            probabilities = bool(scores) and all(0.0 <= s <= 1.0 for s in scores)
            metrics["ece"] = expected_calibration_error(scores, outcomes) if probabilities else None
            if probabilities:
                claim_scores[str(spec)] = (scores, outcomes)
            rows.append(Row(str(spec), rule_name, metrics))
    return rows, claim_scores


def check_specs(specs: Sequence[ScorerSpec], rules: Sequence[str], options: Mapping[str, str]) -> None:
    """Raise ConfigError for an unknown scorer, label rule or option, or a bad option value,
    as scoring would, but before any text is checked."""
    for spec in specs:
        for rule in rules:
            resolve_scoring_lenient(spec, rule, _scoring_options(spec, options, levels=3))


def resolve_scoring_lenient(spec: ScorerSpec, rule: str, options: dict[str, Any]) -> tuple[Any, Any]:
    """Like resolve_scoring, but global options that neither component has are ignored:
    ``--option bounds=reference`` applies to mafc and is meaningless, not wrong, for majority."""
    from factcheck.registry import get_registry

    registry = get_registry()
    scorer, label_rule = registry.get("scorers", spec.name), registry.get("label_rules", rule)
    known = set(scorer.options()) | set(label_rule.options())
    unknown = set(spec.options) - known
    if unknown:
        raise ConfigError(f"scorer {spec}: unknown option {', '.join(sorted(unknown))}")
    return split_scoring_options({k: v for k, v in options.items() if k in known}, scorer, label_rule)


def text_metrics(
    gold: Sequence[Label], predicted: Sequence[Label], classes: Sequence[Label], *, seed: int = 0
) -> dict[str, Any]:
    """Accuracy and F1 with bootstrap CIs, macro and weighted P/R/F1, per-class recall, confusion, abstention."""
    scores = per_class(gold, predicted, classes)
    n = len(gold)
    columns, matrix = confusion_matrix(gold, predicted, classes)
    return {
        "n": n,
        "accuracy": accuracy(gold, predicted),
        "accuracy_ci": bootstrap_ci(gold, predicted, accuracy, seed=seed),
        "macro_precision": sum(s.precision for s in scores.values()) / len(classes),
        "macro_recall": sum(s.recall for s in scores.values()) / len(classes),
        "macro_f1": macro_f1(gold, predicted, classes),
        "macro_f1_ci": bootstrap_ci(gold, predicted, lambda g, p: macro_f1(g, p, classes), seed=seed),
        "weighted_precision": sum(s.precision * s.support for s in scores.values()) / n,
        "weighted_recall": sum(s.recall * s.support for s in scores.values()) / n,
        "weighted_f1": sum(s.f1 * s.support for s in scores.values()) / n,
        "recall": {str(c): s.recall for c, s in scores.items()},
        "confusion": {"rows": [str(c) for c in classes], "columns": [str(c) for c in columns], "matrix": matrix},
        "abstention": sum(p == Label.UNVERIFIED for p in predicted) / n,
    }


def claim_outcomes(
    records: Sequence[dict[str, Any]], rescored: Sequence[TextVerdict]
) -> tuple[list[float], list[bool]]:
    """Scores of the claims that have a TRUE / FALSE gold label (``gold`` inside the claim) and those labels."""
    scores, outcomes = [], []
    for data, verdict in zip(records, rescored, strict=True):
        for raw, claim in zip(data.get("claims", []), verdict.claims, strict=False):
            gold = raw.get("gold") if isinstance(raw, dict) else None
            if gold in ("TRUE", "FALSE") and claim.score is not None:
                scores.append(claim.score)
                outcomes.append(gold == "TRUE")
    return scores, outcomes


AGENT_CALL_PREFIXES = ("source:", "verifier:")  # the usage calls that are agent calls (cost_per_claim)
STEP_PREFIX = "deliberation:"  # one usage call per deliberation step, by action (deliberation:challenge, ...)
PASSAGE_PAIRS = "nli:pairs"  # the (claim, passage) pairs the nli verifier judged (factcheck.verifiers.nli)


def _deliberation(claim: Any) -> Mapping[str, Any] | None:
    deliberation = claim.get("deliberation") if isinstance(claim, Mapping) else None
    return deliberation if isinstance(deliberation, Mapping) else None


def _deliberated(claim: Any) -> bool:
    """True when a recorded claim's deliberation gate sent it on past the first round (``gated`` set)."""
    deliberation = _deliberation(claim)
    return deliberation is not None and deliberation.get("gated") is not None


def _model_role_calls(claim: Any) -> int:
    """The model calls of a recorded claim's deliberation steps, where the model played the roles
    (``roles = "llm"``); 0 for verifier roles, whose retrievals and readings usage counts as
    ``source:*`` / ``verifier:*`` already."""
    deliberation = _deliberation(claim)
    if deliberation is None or (deliberation.get("options") or {}).get("roles") != "llm":
        return 0
    steps = deliberation.get("steps") or []
    return sum(int((s.get("cost") or {}).get("llm_calls") or 0) for s in steps if isinstance(s, Mapping))


def cost_per_claim(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Mean LLM calls, tokens, search calls, source calls and seconds per claim, from each record's usage.

    Also, per claim: ``agent_calls``, the agents' retrievals and readings (usage calls ``source:*`` and
    ``verifier:*``, deliberation's own included) plus the model calls of deliberation steps the model
    played (``roles = "llm"``); ``passages``, the claim-passage pairs the nli verifier judged
    (``nli:pairs``, deliberation's re-readings included; 0 where no verifier counts them, e.g.
    ``lexical`` or ``llm``); ``deliberation_steps``, the deliberation steps taken (usage calls
    ``deliberation:*``); and ``deliberated``, the share of claims whose deliberation gate sent them on
    past the first round. Records without deliberation count 0 for the last two.
    """
    count = sum(len(r.get("claims", [])) for r in records)
    claims = count or 1
    usages = [Usage.from_dict(r.get("usage")) for r in records]
    recorded = [c for r in records for c in r.get("claims", [])]

    def calls(*prefixes: str) -> int:
        return sum(n for u in usages for k, n in u.calls.items() if k.startswith(prefixes))

    return {
        "claims": float(count),
        "llm_calls": sum(u.llm_calls for u in usages) / claims,
        "tokens": sum(u.prompt_tokens + u.completion_tokens for u in usages) / claims,
        "search_calls": sum(u.search_calls for u in usages) / claims,
        "source_calls": calls("source:") / claims,
        "agent_calls": (calls(*AGENT_CALL_PREFIXES) + sum(_model_role_calls(c) for c in recorded)) / claims,
        "passages": sum(u.calls.get(PASSAGE_PAIRS, 0) for u in usages) / claims,
        "deliberation_steps": calls(STEP_PREFIX) / claims,
        "deliberated": sum(_deliberated(c) for c in recorded) / claims,
        "cost_usd": sum(u.cost_usd for u in usages) / claims,
        "seconds": sum(u.wall_s.get("total", 0.0) for u in usages) / claims,
    }
