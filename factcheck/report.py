"""The human-readable report of a checked text (``factcheck check`` without ``--format json``)."""

from __future__ import annotations

from collections import Counter

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from factcheck.types import ClaimTime, ClaimVerdict, JudgedBy, Judgment, Label, TextVerdict
from factcheck.usage import answers_from_cache

LABEL_STYLES = {
    Label.TRUE: "bold green",
    Label.FALSE: "bold red",
    Label.PARTLY_TRUE: "bold yellow",
    Label.UNVERIFIED: "bold dim",
}


def _score(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.3f}"


def _judgment_line(judgment: Judgment) -> Text:
    line = Text("  • ")
    line.append(judgment.agent, style="bold")
    if judgment.factuality is None:
        line.append(": abstained", style="dim")
        if judgment.error:
            line.append(f" ({judgment.error})", style="red")
        elif judgment.rationale:
            line.append(f" ({judgment.rationale})", style="dim")
    else:
        verdict = "true" if judgment.factuality else "false"
        line.append(f": {verdict}", style="green" if judgment.factuality else "red")
        line.append(f", confidence {judgment.confidence:.2f}")
        if judgment.rationale:
            line.append(f"\n      {judgment.rationale}", style="dim")
    # Several passages of one document show as one citation.
    passages = Counter(
        (item.title or item.source, item.url, item.published_at, item.time_note) for item in judgment.evidence
    )
    for (title, url, dated, time_note), count in passages.items():
        line.append("\n      ↳ ")
        line.append(title, style="cyan")
        if count > 1:
            line.append(f" ({count} passages)", style="dim")
        if time_note:
            line.append(f" (of another time: {time_note})", style="yellow")
        elif dated:
            line.append(f" (dated {dated[:10]})", style="dim")
        if url:
            line.append(f" {url}", style="underline blue")
    return line


def time_phrase(time: ClaimTime) -> str:
    """``1889 ("in 1889")``, ``2013-01-01 to 2013-12-31 ("last year")``: a claim's time for readers."""
    span = time.start if time.start == time.end else f"{time.start} to {time.end}"
    if time.kind == "year":
        span = time.start[:4]
    return f'{span} ("{time.phrase}")' if time.phrase else span


def _claim_block(verdict: ClaimVerdict) -> Group:
    head = Text()
    head.append(f"[{verdict.claim.id}] ", style="dim")
    head.append(str(verdict.label), style=LABEL_STYLES[verdict.label])
    head.append(f"  {_score(verdict.score)}{', weak' if verdict.strength == 'weak' else ''}  ", style="dim")
    head.append(verdict.claim.text)
    if verdict.claim.attributed_to:
        said = f"\n    (what {verdict.claim.attributed_to} says: the verdict is on the claim, not on who said it)"
        head.append(said, style="dim")
    elif verdict.claim.original:
        head.append(f"\n    (as written: {verdict.claim.original})", style="dim")
    if verdict.claim.time is not None:
        head.append(f"\n    (speaks of {time_phrase(verdict.claim.time)})", style="dim")
    for note in verdict.notes:
        head.append(f"\n    note: {note}", style="yellow")
    return Group(head, *(_judgment_line(j) for j in verdict.judgments), Text(""))


def agents_line(verdict: TextVerdict) -> Text:
    """Which agents ran, and which were skipped and why (a missing key, every call failing)."""
    line = Text("agents: ", style="dim")
    agents: dict[str, list[Judgment]] = {}
    for claim in verdict.claims:
        for judgment in claim.judgments:
            agents.setdefault(judgment.agent, []).append(judgment)
    for number, (agent, judgments) in enumerate(agents.items()):
        line.append(", " if number else "")
        errors = {j.error for j in judgments if j.error}
        if len(errors) == 1 and all(j.error for j in judgments):
            line.append(agent, style="red")
            line.append(f" ({errors.pop()})", style="dim")
        else:
            line.append(agent, style="bold")
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


def plural(count: int, noun: str) -> str:
    """``1 claim``, ``2 claims``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def render(verdict: TextVerdict, console: Console) -> None:
    """Print the label and score, then every claim with each agent's verdict and evidence."""
    summary = Table.grid(padding=(0, 2))
    summary.add_row(
        Text(str(verdict.label), style=LABEL_STYLES[verdict.label]),
        Text(f"score {_score(verdict.score)}{', weak' if verdict.strength == 'weak' else ''}"),
        Text(
            f"{plural(len(verdict.claims), 'claim')} · scorer {verdict.scorer} · labels {verdict.labels}", style="dim"
        ),
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
    for note in verdict.usage.notes:
        console.print(Text(f"note: {note}", style="yellow"))
    for claim in verdict.claims:
        console.print(_claim_block(claim))
    if verdict.skipped:
        console.print(skipped_block(verdict))
    console.print(usage_line(verdict))


def skipped_block(verdict: TextVerdict) -> Text:
    """The sentences not checked, each with the rule that skipped it (``factcheck extract`` says more)."""
    block = Text(f"not checked: {plural(len(verdict.skipped), 'sentence')}", style="dim")
    for skipped in verdict.skipped:
        block.append("\n  • ")
        block.append(f"[{skipped.rule}] ", style="yellow")
        block.append(skipped.text, style="dim")
    return block


def usage_line(verdict: TextVerdict) -> Text:
    """What the check cost."""
    u = verdict.usage
    hits = answers_from_cache(u)  # loading the corpus's index is no answer read from the cache
    # "~": some calls' tokens (and cost) are estimates, because the server reported none.
    approx = "~" if u.estimated_llm_calls else ""
    parts = [
        f"{u.llm_calls} LLM calls",
        f"{approx}{u.prompt_tokens + u.completion_tokens} tokens",
        f"{u.search_calls} searches",
    ]
    if u.estimated_llm_calls:
        parts.append(f"{u.estimated_llm_calls} calls' tokens estimated")
    parts += [f"{approx}${u.cost_usd:.4f}", plural(hits, "cache hit"), f"{u.wall_s.get('total', 0.0):.1f} s"]
    return Text("usage: " + ", ".join(parts), style="dim")
