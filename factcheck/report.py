"""The human-readable report of a checked text (``factcheck check`` without ``--format json``)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from factcheck.claimtime import time_span, year_label
from factcheck.precedents import lent_precedents
from factcheck.scoring import REPLAYED_NOTE
from factcheck.text import plural
from factcheck.types import (
    TOO_LONG_RULE,
    ClaimTime,
    ClaimVerdict,
    Deliberation,
    DeliberationStep,
    JudgedBy,
    Judgment,
    Label,
    TextVerdict,
)
from factcheck.usage import answers_from_cache

# Control characters (an ESC would let a passage or a model's text drive the terminal) and the bidirectional
# controls (they make text read otherwise than it is), which rich passes through: untrusted text loses them.
UNSHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def shown(text: object) -> str:
    """Untrusted text as the report may print it: without control characters."""
    return UNSHOWN.sub("", str(text))


LABEL_STYLES = {
    Label.TRUE: "bold green",
    Label.FALSE: "bold red",
    Label.PARTLY_TRUE: "bold yellow",
    Label.UNVERIFIED: "bold dim",
}


def _score(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.3f}"


def _judgment_line(judgment: Judgment, out: Mapping[str, str] | None = None) -> Text:
    line = Text("  • ")
    line.append(shown(judgment.agent), style="bold")
    if judgment.factuality is None:
        line.append(": abstained", style="dim")
        if judgment.error and (out or {}).get(judgment.agent):
            line.append(" (see agents above)", style="dim")  # out of the whole check: its reason is said once
        elif judgment.error:
            line.append(f" ({shown(judgment.error)})", style="red")
        elif judgment.rationale:
            line.append(f" ({shown(judgment.rationale)})", style="dim")
    else:
        verdict = "true" if judgment.factuality else "false"
        line.append(f": {verdict}", style="green" if judgment.factuality else "red")
        line.append(f", confidence {judgment.confidence:.2f}")
        if judgment.rationale:
            line.append(f"\n      {shown(judgment.rationale)}", style="dim")
    # Several passages of one document show as one citation.
    passages = Counter(
        (item.title or item.source, item.url, item.published_at, item.time_note) for item in judgment.evidence
    )
    for (title, url, dated, time_note), count in passages.items():
        line.append("\n      ↳ ")
        line.append(shown(title), style="cyan")
        if count > 1:
            line.append(f" ({plural(count, 'passage')})", style="dim")
        if time_note:
            line.append(f" (of another time: {shown(time_note)})", style="yellow")
        elif dated:
            line.append(f" (dated {dated[:10]})", style="dim")
        if url:
            line.append(f" {shown(_readable_url(url))}", style="underline blue")
    return line


def time_phrase(time: ClaimTime) -> str:
    """``1889 ("in 1889")``, ``2013-01-01 to 2013-12-31 ("last year")``: a claim's time for readers."""
    span = year_label(time.start) if time.kind == "year" else time_span(time)
    return f'{span} ("{time.phrase}")' if time.phrase else span


def _claim_block(verdict: ClaimVerdict, out: Mapping[str, str] | None = None) -> Group:
    head = Text()
    head.append(f"[{verdict.claim.id}] ", style="dim")
    head.append(str(verdict.label), style=LABEL_STYLES[verdict.label])
    head.append(f"  {_score(verdict.score)}{', weak' if verdict.strength == 'weak' else ''}  ", style="dim")
    head.append(shown(verdict.claim.text))
    if verdict.claim.attributed_to:
        who = shown(verdict.claim.attributed_to)
        said = f"\n    (attributed to {who}: the verdict is on the claim, not on who said it)"
        head.append(said, style="dim")
    elif verdict.claim.original:
        head.append(f"\n    (as written: {shown(verdict.claim.original)})", style="dim")
    if verdict.claim.time is not None:
        head.append(f"\n    (speaks of {time_phrase(verdict.claim.time)})", style="dim")
    settled = verdict.deliberation
    for note in verdict.notes:
        if settled is not None and settled.deliberated and note == REPLAYED_NOTE:
            continue  # the deliberation's own lines say it
        head.append(f"\n    note: {shown(note)}", style="yellow")
    for precedent in lent_precedents(verdict.judgments):
        quoted = f'"{clip(precedent.text, QUOTE_CHARS)}" ({shown(precedent.title)})'
        head.append(f"\n    precedent: {quoted}", style="magenta")
    lines = [head, *(_judgment_line(j, out) for j in verdict.judgments)]
    if settled is not None:
        lines.append(deliberation_block(settled))
    return Group(*lines, Text(""))


RATIONALE_CHARS = 200  # of a deliberation step's rationale or weak point; the JSON has them whole
QUOTE_CHARS = 160  # of the counter-evidence a critique presents
SKIPPED_CHARS = 300  # of a sentence not checked (the JSON keeps it whole)


def clip(text: str, length: int) -> str:
    """``text`` on one line, cut to ``length`` characters with an ellipsis."""
    flat = " ".join(shown(text).split())
    return flat if len(flat) <= length else flat[: length - 1].rstrip() + "…"


def _step_lines(step: DeliberationStep) -> Text:
    line = Text(f"    {step.number}. ")
    line.append(shown(step.action), style="bold")
    if step.role:
        line.append(f" · {shown(step.role)}")
    if step.actor:
        line.append(f" ({shown(step.actor)})", style="dim")
    judgment = step.judgment
    if judgment is not None:
        if judgment.factuality is None:
            line.append(": abstained", style="dim")
        else:
            verdict = "true" if judgment.factuality else "false"
            line.append(f": {verdict}", style="green" if judgment.factuality else "red")
            line.append(f", confidence {judgment.confidence:.2f}")
    if not step.applied:
        line.append(", not applied: less sure than the answer it would overturn", style="yellow")
    elif step.replaces:
        whose = "its" if step.replaces == step.actor else f"{shown(step.replaces)}'s"
        line.append(f", in place of {whose} first answer", style="dim")
    if step.cost.calls:
        line.append(f" · {plural(step.cost.calls, 'call')}", style="dim")
    if judgment is not None:
        if judgment.rationale:
            line.append(f"\n         {clip(judgment.rationale, RATIONALE_CHARS)}", style="dim")
        if judgment.error and not step.error:
            line.append(f"\n         error: {clip(judgment.error, RATIONALE_CHARS)}", style="red")
    critique = step.critique
    if critique is not None:
        if critique.weak_point:
            line.append("\n         weak point: ")
            line.append(clip(critique.weak_point, RATIONALE_CHARS), style="dim")
        if critique.counter:
            first = critique.counter[0]
            line.append("\n         counter-evidence: ")
            line.append(clip(first.title or first.source, RATIONALE_CHARS), style="cyan")
            if first.text:
                line.append(f' "{clip(first.text, QUOTE_CHARS)}"', style="dim")
            if len(critique.counter) > 1:
                line.append(f" (+{len(critique.counter) - 1} more)", style="dim")
        for hint in critique.hints:
            line.append(f"\n         hint: {clip(hint, RATIONALE_CHARS)}", style="dim")
    query = step.query or (critique.query if critique is not None else None)
    if query:
        line.append(f"\n         query: {clip(query, RATIONALE_CHARS)}", style="dim")
    if step.evidence and judgment is None:
        line.append(f"\n         found {plural(len(step.evidence), 'passage')}", style="dim")
    if step.relied_on:
        line.append(f"\n         relied on: {shown(', '.join(step.relied_on))}", style="dim")
    if step.error:
        line.append(f"\n         error: {clip(step.error, RATIONALE_CHARS)}", style="red")
    return line


def deliberation_block(deliberation: Deliberation) -> Text:
    """How the agents settled a claim: why it was deliberated, each step and why it stopped; one line
    for a claim the policy let stand after the first round."""
    if not deliberation.deliberated:
        return Text(f"  deliberation ({shown(deliberation.policy)}): settled in the first round", style="dim")
    block = Text("  how the agents settled it", style="bold")
    block.append(f" ({shown(deliberation.policy)})", style="dim")
    if deliberation.replayed:
        block.append(" (recorded steps kept, not re-run)", style="yellow")
    block.append(f"\n    why: {shown(deliberation.gated)}", style="dim")
    for step in deliberation.steps:
        block.append("\n")
        block.append_text(_step_lines(step))
    if not deliberation.steps:
        block.append("\n    no step was taken", style="dim")
    if deliberation.stopped:
        block.append(f"\n    stopped: {shown(deliberation.stopped)}", style="dim")
    return block


STOPPED_NOTE = "agent {agent} stopped for the rest of the check: "  # the check's note (factcheck.pipeline)
FAILED_IN = re.compile(r"^\w+ failed in [^:]+: \w+: ")  # "judge failed in llm: LLMRefusedError: ", before the refusal


def out_of_check(verdict: TextVerdict) -> dict[str, str]:
    """Every agent, in order, with the reason it failed on every claim: one error (a missing key), or the
    refusal that stopped it (a rejected key: the claims in flight then failed with it, the later ones were
    skipped); "" for an agent that judged a claim, or failed for several reasons."""
    agents: dict[str, list[Judgment]] = {}
    for claim in verdict.claims:
        for judgment in claim.judgments:
            agents.setdefault(judgment.agent, []).append(judgment)
    out = {}
    for agent, judgments in agents.items():
        errors = {j.error for j in judgments}
        stopped = STOPPED_NOTE.format(agent=agent)
        refusal = next((n.removeprefix(stopped) for n in verdict.usage.notes if n.startswith(stopped)), None)
        if len(errors) == 1 and (error := errors.pop()):
            out[agent] = error
        elif refusal is not None and all(errors):  # one refusal, met by agents at different stages: said alike
            out[agent] = f"stopped: {FAILED_IN.sub('', refusal)}"
    return {agent: out.get(agent, "") for agent in agents}


def agents_line(verdict: TextVerdict) -> Text:
    """Which agents ran, and which were skipped and why (a missing key, every call failing); agents
    out for the same reason share it (one rejected key stops every agent that asks its model)."""
    line = Text("agents: ", style="dim")
    groups: dict[tuple[str, str], list[str]] = {}  # (why it is out, or "" and its name) -> its agents, in order
    for agent, reason in out_of_check(verdict).items():
        groups.setdefault((reason, "" if reason else agent), []).append(agent)
    for number, ((reason, _), agents) in enumerate(groups.items()):
        line.append(", " if number else "")
        if reason:
            line.append(", ".join(map(shown, agents)), style="red")
            line.append(f" ({shown(reason)})", style="dim")
        else:
            line.append(shown(agents[0]), style="bold")
    return line


def judged_by_line(judged: JudgedBy) -> Text:
    """``Judged by: profile offline · corpus (corpus search, nli verifier) over SciFact abstracts (...)``."""
    line = Text("Judged by: ", style="dim")
    line.append(f"profile {judged.profile}" if judged.profile else "agents given without a profile")
    for number, agent in enumerate(judged.agents):
        line.append(" · " if number == 0 else ", ")
        line.append(agent.name, style="bold")
        line.append(f" ({agent.source} search, {agent.verifier} verifier)", style="dim")
        if agent.corpus:
            line.append(f" over {agent.corpus}")
    return line


# Why a text can yield no claim: extractors skip questions, fragments, opinions... (docs/extraction.md).
NO_CLAIMS_NOTE = (
    "no claim found: questions and fragments are not checked, nor opinions, predictions or headings "
    "(each skipped sentence is listed below), so no agent was asked"
)


def render(verdict: TextVerdict, console: Console) -> None:
    """Print the label and score, then every claim with each agent's verdict and evidence."""
    summary = Table.grid(padding=(0, 2))
    summary.add_row(
        Text(str(verdict.label), style=LABEL_STYLES[verdict.label]),
        Text(f"score {_score(verdict.score)}{', weak' if verdict.strength == 'weak' else ''}"),
        Text(f"{verdict.decided} · scorer {verdict.scorer} · labels {verdict.labels}", style="dim"),
    )
    console.print(Panel(summary, title="factcheck", expand=False))
    if verdict.judged_by is not None:  # beside the label: what judged it, and what that cannot judge
        console.print(judged_by_line(verdict.judged_by))
        if verdict.judged_by.caution:
            console.print(Text(f"caution: {verdict.judged_by.caution}", style="yellow"))
    if verdict.claims:
        console.print(agents_line(verdict))
    else:  # no agent ran, so there are none to name: say why instead
        console.print(Text(f"note: {NO_CLAIMS_NOTE}", style="yellow"))
    said = {agent: reason for agent, reason in out_of_check(verdict).items() if reason}
    for note in verdict.usage.notes:
        if not any(note.startswith(STOPPED_NOTE.format(agent=agent)) for agent in said):  # the agents line says it
            console.print(Text(f"note: {note}", style="yellow"))
    for claim in verdict.claims:
        console.print(_claim_block(claim, said))
    if verdict.skipped:
        console.print(skipped_block(verdict))
    console.print(usage_line(verdict))


def skipped_block(verdict: TextVerdict) -> Text:
    """The sentences not checked, each with the rule that skipped it (``factcheck extract`` says more)."""
    block = Text(f"not checked: {plural(len(verdict.skipped), 'sentence')}", style="dim")
    for skipped in verdict.skipped:
        block.append("\n  • ")
        block.append(f"[{skipped.rule}] ", style="yellow")
        block.append(clip(skipped.text, SKIPPED_CHARS), style="dim")  # a run-on text of 40,000 characters
        if skipped.rule == TOO_LONG_RULE:  # the other rules' names say why; this one's length is worth a number
            block.append(f"\n    {shown(skipped.reason)}", style="dim")
    return block


def usage_line(verdict: TextVerdict) -> Text:
    """What the check cost."""
    u = verdict.usage
    hits = answers_from_cache(u)  # loading the corpus's index is no answer read from the cache
    # "~": some calls' tokens (and cost) are estimates, because the server reported none.
    approx = "~" if u.estimated_llm_calls else ""
    parts = [
        plural(u.llm_calls, "LLM call"),
        approx + plural(u.prompt_tokens + u.completion_tokens, "token"),
        plural(u.search_calls, "search", "searches"),
    ]
    if u.estimated_llm_calls:
        calls = "1 call's" if u.estimated_llm_calls == 1 else f"{u.estimated_llm_calls} calls'"
        parts.append(f"{calls} tokens estimated")
    parts += [f"{approx}${u.cost_usd:.4f}", plural(hits, "cache hit"), f"{u.wall_s.get('total', 0.0):.1f} s"]
    return Text("usage: " + ", ".join(parts), style="dim")


def _readable_url(url: str) -> str:
    """A passage's address as the report shows it: a local corpus file by its name alone (a report is
    handed on, and the folder it was read from is nobody else's business), any other URL as it is."""
    if url.startswith("file://"):
        return url.rstrip("/").rsplit("/", 1)[-1]
    return url
