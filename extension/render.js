// Rendering a check for people. Everything from the server (claims, rationales, evidence titles, texts
// and URLs, notes) is untrusted text: it is put in the page with textContent, never as HTML, without
// the characters that reorder text (see plain), each string in an element of its own direction.
"use strict";

const IDLE_MESSAGE =
  'No check in this tab yet. Select text on the page and choose "Fact-check selection", or paste a text below.';

/**
 * An element holding text. The text loses its bidirectional controls, and the element takes its direction
 * from its own text (dir="auto"), so a right-to-left title neither runs into nor reorders what follows it.
 */
function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) {
    node.textContent = plain(text);
    node.dir = "auto";
  }
  return node;
}

function formatScore(score) {
  return typeof score === "number" ? score.toFixed(2) : "–";
}

function clip(text, length) {
  const points = [...text]; // by code points: an emoji is never cut in half
  return points.length <= length ? text : `${points.slice(0, length - 1).join("")}…`;
}

/** The URL if it is http(s), else null (javascript: and data: URLs are never links). */
function safeUrl(url) {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
  } catch (_) {
    return null;
  }
}

/** An evidence document's name: a link when its URL is http(s), else text. */
function sourceName(evidence) {
  const name = evidence.title || evidence.url || evidence.source;
  const url = safeUrl(evidence.url);
  if (!url) return element("span", "source-name", name);
  const link = element("a", "source-name", name);
  link.href = url;
  link.target = "_blank";
  link.rel = "noopener noreferrer";
  return link;
}

/**
 * The sentences a rationale may quote ("..." of at least 12 characters), without a trailing ellipsis:
 * first from its first quotation mark to its last (a quoted sentence may hold quotation marks), then each
 * shortest quoted piece (a rationale quoting several).
 */
function quotedSentences(rationale) {
  const text = String(rationale ?? "");
  const whole = text.match(/"(.{12,})"/s);
  const pieces = [...text.matchAll(/"([^"]{12,})"/g)].map((match) => match[1]);
  return [...(whole ? [whole[1]] : []), ...pieces].map((quote) => quote.replace(/(\.\.\.|…)$/, "").trim());
}

/**
 * The passage that decided a judgment: the one holding the sentence its rationale quotes, else (for a
 * verdict) the first, which verifiers put first. {evidence, at, length}: where the quote is in its text.
 */
function decidingPassage(judgment) {
  const evidence = (judgment.evidence ?? []).filter((item) => typeof item?.text === "string" && item.text);
  for (const quote of quotedSentences(judgment.rationale)) {
    for (const item of evidence) {
      const at = item.text.indexOf(quote);
      if (at >= 0) return { evidence: item, at, length: quote.length };
    }
  }
  if (judgment.factuality !== null && judgment.factuality !== undefined && evidence.length) {
    return { evidence: evidence[0], at: -1, length: 0 };
  }
  return null;
}

/** The deciding passage's text around its quoted sentence, the sentence marked; its document named. */
function passageBlock(found) {
  const box = element("div", "passage");
  const source = element("div", "passage-source", "Deciding passage, from ");
  source.append(sourceName(found.evidence));
  const quote = element("blockquote", "passage-text");
  const text = found.evidence.text;
  if (found.at < 0) {
    quote.textContent = plain(clip(text, 320));
  } else {
    const from = Math.max(0, found.at - 160);
    const to = Math.min(text.length, found.at + found.length + 160);
    quote.append(
      plain(`${from > 0 ? "…" : ""}${text.slice(from, found.at)}`),
      element("mark", "quote", text.slice(found.at, found.at + found.length)),
      plain(`${text.slice(found.at + found.length, to)}${to < text.length ? "…" : ""}`),
    );
  }
  quote.dir = "auto";
  box.append(source, quote);
  return box;
}

/** When a claim speaks of, from its time: "2013", "2019-01-01 to 2020-12-31", with the words that said so. */
function timeSpan(time) {
  const start = String(time.start ?? "");
  const end = String(time.end ?? start);
  const span = time.kind === "year" ? start.slice(0, 4) : start === end ? start : `${start} to ${end}`;
  return time.phrase ? `${span} ("${time.phrase}")` : span;
}

/** The documents a judgment cites, each once, with how many of its passages were retrieved, their date,
 * and a mark when that date is far from the time the claim speaks of (docs/time.md). */
function evidenceList(evidence) {
  const documents = new Map();
  for (const item of evidence) {
    const key = `${safeUrl(item.url) ?? ""}\u0000${item.title || item.url || item.source}\u0000${item.published_at ?? ""}`;
    if (documents.has(key)) documents.get(key).count++;
    else documents.set(key, { item, count: 1 });
  }
  const list = element("ul", "evidence");
  for (const { item, count } of documents.values()) {
    const entry = element("li");
    entry.append(sourceName(item));
    if (count > 1) entry.append(element("span", "count", ` · ${count} passages`));
    if (item.published_at) entry.append(element("span", "dated", ` · dated ${String(item.published_at).slice(0, 10)}`));
    if (item.time_note) entry.append(element("span", "time-note", ` · of another time: ${item.time_note}`));
    list.append(entry);
  }
  return list;
}

// A precedent passage of the experience memory (factcheck.precedents): the ``memory`` source, its url
// ``factcheck-memory:<id>/<label>``, its text the corrected claim, its title who ruled it what and when.
const PRECEDENT_URL = /^factcheck-memory:(\d+)\/(TRUE|FALSE)$/;
const PRECEDENT_TITLE = /^Precedent \d+: (.+?) ruled it (?:TRUE|FALSE) on \S+?(?:, noting: "(.*)")?$/s;

/** {id, label} of a precedent passage; null for any other passage. */
function precedentOf(evidence) {
  const match = evidence?.source === "memory" ? PRECEDENT_URL.exec(String(evidence.url ?? "")) : null;
  return match ? { id: Number(match[1]), label: match[2] } : null;
}

/**
 * The precedents that bear on a claim: the deciding passage of each judgment that gave a verdict from a
 * precedent (factcheck.precedents.lent_precedents, what the CLI's report shows under the claim), each
 * with the judgment it lent. A precedent an agent found but that lent nothing (too far in meaning, an
 * abstention) bears on nothing and is not shown.
 */
function lentPrecedents(judgments) {
  const lent = new Map();
  for (const judgment of judgments) {
    if (!judgment || judgment.factuality === null || judgment.factuality === undefined) continue;
    const found = decidingPassage(judgment);
    const case_ = found ? precedentOf(found.evidence) : null;
    if (case_ && !lent.has(case_.id)) lent.set(case_.id, { evidence: found.evidence, case_, judgment });
  }
  return [...lent.values()];
}

/**
 * A reviewer's earlier correction, shown as what it is: the corrected claim, its ruling, who ruled it and
 * when, the reviewer's note, and what it lent this claim through which agent.
 */
function precedentBlock({ evidence, case_, judgment }) {
  const box = element("div", "precedent");
  box.dataset.label = case_.label;
  const title = PRECEDENT_TITLE.exec(plain(evidence.title ?? ""));
  const who = title ? title[1] : "a reviewer";
  box.append(element("div", "precedent-head", "A reviewer's earlier correction"));
  box.append(element("blockquote", "precedent-claim", clip(plain(evidence.text ?? ""), 240)));
  const day = String(evidence.published_at ?? "").slice(0, 10);
  box.append(element("div", "precedent-ruling", `Ruled ${case_.label} by ${who}${day ? ` on ${day}` : ""}`));
  if (title?.[2]) box.append(element("div", "precedent-note", `Noting: “${clip(title[2], 240)}”`));
  const lent = judgment.factuality ? "TRUE" : "FALSE";
  box.append(
    element("div", "precedent-lent", `Lends this claim ${lent} through the ${judgment.agent} agent (${formatScore(judgment.confidence)})`),
  );
  return box;
}

function judgmentItem(judgment) {
  const abstained = judgment.factuality === null || judgment.factuality === undefined;
  const item = element("li", "judgment");
  item.dataset.verdict = abstained ? "abstained" : String(judgment.factuality);
  const said = abstained ? "abstained" : `${judgment.factuality ? "true" : "false"} (${formatScore(judgment.confidence)})`;
  item.append(element("span", "agent", judgment.agent), document.createTextNode(`: ${said}`)); // our words and a number
  if (judgment.rationale) item.append(element("span", "rationale", judgment.rationale));
  if (judgment.error) item.append(element("span", "error", judgment.error));
  // A precedent is no document: it is shown above, as a reviewer's correction, where it bears on the claim.
  const documents = { ...judgment, evidence: (judgment.evidence ?? []).filter((e) => !precedentOf(e)) };
  const deciding = decidingPassage(judgment);
  if (deciding && precedentOf(deciding.evidence)) item.append(element("span", "step-detail", "By a reviewer's earlier correction (above)"));
  else if (deciding) item.append(passageBlock(deciding));
  if (documents.evidence.length) item.append(evidenceList(documents.evidence));
  return item;
}

/** A count in words: "1 call", "2 calls". */
function count(n, noun) {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** A deliberation step's ruling in our words: "false (0.80)", "abstained". */
function ruling(judgment) {
  if (judgment.factuality === null || judgment.factuality === undefined) return "abstained";
  return `${judgment.factuality ? "true" : "false"} (${formatScore(judgment.confidence)})`;
}

/**
 * One step of a deliberation ({number, action, role, actor, judgment, critique, query, evidence, relied_on,
 * replaces, cost, error}): what it did, who did it, and what it said; every string from the server as text.
 */
/** A passage's identity across a verdict: its URL and text (factcheck.deliberation's seen_key). */
function passageKey(evidence) {
  return `${String(evidence?.url ?? "")}\u0000${String(evidence?.text ?? "")}`;
}

/**
 * The claim's evidence, by passageKey: what its agents read (their judgments, and those a step replaced) and
 * what the deliberation's steps found (new passages, counter-evidence); not what a step's ruling cites.
 */
function claimPassages(claim, steps) {
  const ruled = new Set(steps.filter((s) => s.judgment).map((s) => JSON.stringify(s.judgment)));
  const judgments = [...(claim?.judgments ?? []), ...(claim?.deliberation?.replaced ?? [])].filter(
    (j) => j && typeof j === "object" && !ruled.has(JSON.stringify(j)),
  );
  const passages = [
    ...judgments.flatMap((j) => (Array.isArray(j.evidence) ? j.evidence : [])),
    ...steps.flatMap((s) => [...(Array.isArray(s.evidence) ? s.evidence : []), ...(Array.isArray(s.critique?.counter) ? s.critique.counter : [])]),
  ];
  return new Set(passages.filter((e) => e && typeof e === "object").map(passageKey));
}

/**
 * The passage a step's ruling used: its deciding passage, only when it is one of the claim's passages (a
 * ruling citing a passage the claim never had shows none rather than an unrelated one). Null otherwise.
 */
function stepPassage(step, passages) {
  const judgment = step.judgment && typeof step.judgment === "object" ? step.judgment : null;
  const found = judgment ? decidingPassage(judgment) : null;
  if (!found || !passages.has(passageKey(found.evidence))) return null;
  const box = element("div", "step-passage");
  const source = element("div", "passage-source", "Used the passage, from ");
  source.append(sourceName(found.evidence));
  box.append(source, element("blockquote", "passage-text", clip(plain(found.evidence.text), 240)));
  return box;
}

/** Whether two steps say the same: the same actor and action and the same ruling (verdict or none). */
function sameStep(a, b) {
  const verdict = (step) => (step.judgment && typeof step.judgment === "object" ? String(step.judgment.factuality ?? null) : "none");
  return a.actor === b.actor && a.action === b.action && verdict(a) === verdict(b);
}

/** The steps once each: a run of consecutive steps that say the same is its last step, with how many. */
function distinctSteps(steps) {
  const runs = [];
  for (const step of steps) {
    const last = runs[runs.length - 1];
    if (last && sameStep(last.step, step)) runs[runs.length - 1] = { step, times: last.times + 1 };
    else runs.push({ step, times: 1 });
  }
  return runs;
}

function deliberationStep(step, times = 1, passages = new Set()) {
  const item = element("li", "step");
  item.dataset.action = String(step.action ?? "");
  const head = element("div", "step-head");
  head.append(element("span", "step-action", step.action ?? "step"));
  if (step.role) head.append(element("span", "step-role", ` · ${step.role}`));
  if (step.actor) head.append(element("span", "step-actor", ` (${step.actor})`));
  const judgment = step.judgment && typeof step.judgment === "object" ? step.judgment : null;
  if (judgment) head.append(document.createTextNode(`: ${ruling(judgment)}`)); // our words and a number
  if (step.applied === false) {
    head.append(element("span", "step-detail", ", not applied: less sure than the answer it would overturn"));
  } else if (step.replaces) {
    const whose = step.replaces === step.actor ? "its" : `${step.replaces}'s`;
    head.append(element("span", "step-detail", `, in place of ${whose} first answer`));
  }
  const calls = step.cost?.calls;
  if (Number.isInteger(calls) && calls > 0) head.append(element("span", "step-detail", ` · ${count(calls, "call")}`));
  if (times > 1) head.append(element("span", "step-times", ` · ${times} times alike`));
  item.append(head);
  if (judgment?.rationale) item.append(element("span", "rationale", clip(plain(judgment.rationale), 300)));
  const used = stepPassage(step, passages);
  if (used) item.append(used);
  const critique = step.critique && typeof step.critique === "object" ? step.critique : null;
  if (critique?.weak_point) item.append(element("span", "weak-point", `Weak point: ${clip(plain(critique.weak_point), 300)}`));
  const counter = (Array.isArray(critique?.counter) ? critique.counter : []).filter((e) => e && typeof e === "object");
  if (counter.length) {
    const box = element("div", "counter");
    const source = element("div", "passage-source", "Counter-evidence, from ");
    source.append(sourceName(counter[0]));
    if (counter.length > 1) source.append(element("span", "count", ` · ${counter.length - 1} more`));
    box.append(source);
    if (typeof counter[0].text === "string" && counter[0].text) {
      box.append(element("blockquote", "passage-text", clip(plain(counter[0].text), 240)));
    }
    item.append(box);
  }
  for (const hint of Array.isArray(critique?.hints) ? critique.hints : []) {
    item.append(element("span", "hint", `Hint: ${clip(plain(hint), 300)}`));
  }
  const query = step.query || critique?.query;
  if (query) item.append(element("span", "step-detail", `Searched: ${clip(plain(query), 200)}`));
  const found = Array.isArray(step.evidence) ? step.evidence.length : 0;
  if (found && !judgment) item.append(element("span", "step-detail", `Found ${count(found, "passage")}`));
  if (Array.isArray(step.relied_on) && step.relied_on.length) {
    item.append(element("span", "step-detail", `Relied on: ${step.relied_on.map(String).join(", ")}`));
  }
  if (step.error) item.append(element("span", "error", step.error));
  return item;
}

/**
 * How the agents settled a claim (claim.deliberation, factcheck.types.Deliberation): collapsed, why the
 * claim was deliberated, each step and why it stopped; one line for a claim settled in the first round;
 * nothing for a claim without one (no policy ran, an older server).
 */
function deliberationBlock(deliberation, claim = null) {
  if (!deliberation || typeof deliberation !== "object") return null;
  const policy = deliberation.policy ? ` (${deliberation.policy})` : "";
  const steps = (Array.isArray(deliberation.steps) ? deliberation.steps : []).filter((s) => s && typeof s === "object");
  // A deliberation that took no step (none gated, or gated and stopped at once) settled in the first round.
  if (deliberation.gated === null || deliberation.gated === undefined || !steps.length) {
    return element("div", "deliberation-none", `Deliberation${policy}: settled in the first round`);
  }
  const runs = distinctSteps(steps);
  const passages = claimPassages(claim, steps);
  const details = element("details", "deliberation");
  details.append(element("summary", null, `How the agents settled it${policy}: ${count(runs.length, "step")}`));
  details.append(element("div", "deliberation-why", `Why: ${deliberation.gated}`));
  if (deliberation.replayed) details.append(element("div", "deliberation-replayed", "Recorded steps kept, not re-run"));
  const list = element("ol", "steps");
  for (const { step, times } of runs) list.append(deliberationStep(step, times, passages));
  details.append(list);
  if (deliberation.stopped) details.append(element("div", "deliberation-stopped", `Stopped: ${deliberation.stopped}`));
  return details;
}

/** A claim still being checked whose deliberation has begun: its last step, from the stream (background.js). */
function deliberatingText(progress) {
  const policy = progress.policy ? ` (${progress.policy})` : "";
  const step = Number.isInteger(progress.number) ? ` step ${progress.number}` : "";
  const action = progress.action ? `: ${progress.action}` : "";
  return `Deliberating${policy}…${step}${action}`;
}

/** One claim: label, text and score, and (collapsed) each agent's verdict with its evidence. */
function claimItem(claim) {
  const item = element("li", "claim");
  item.dataset.claimId = claim.id;
  // A claim is "…" while it is being checked, NOT CHECKED when the check stopped before its verdict.
  const judged = !claim.pending && !claim.unchecked;
  const weak = judged && isWeak(claim);
  item.dataset.weak = String(weak);
  const head = element("div", "claim-head");
  const shown = claim.pending ? "…" : claim.unchecked ? "NOT CHECKED" : claim.label;
  const label = element("span", "label", shown);
  label.dataset.label = claim.pending ? "" : shown;
  label.dataset.weak = String(weak);
  head.append(label, element("span", "claim-text", claim.text));
  if (judged) head.append(element("span", "score", formatScore(claim.score)));
  if (weak) head.append(element("span", "strength", "weak"));
  item.append(head);
  if (claim.time && typeof claim.time === "object") item.append(element("div", "claim-time", `Speaks of ${timeSpan(claim.time)}`));
  if (judged && Array.isArray(claim.judgments)) item.append(...lentPrecedents(claim.judgments).map(precedentBlock));
  if (claim.judgments?.length) {
    const details = element("details", "why");
    const passages = (judgment) => (judgment.evidence ?? []).filter((e) => !precedentOf(e)).length;
    const documents = claim.judgments.reduce((n, judgment) => n + passages(judgment), 0);
    const agents = claim.judgments.length;
    details.append(
      element("summary", null, `Why: ${agents} agent${agents === 1 ? "" : "s"}, ${documents} passage${documents === 1 ? "" : "s"}`),
    );
    const list = element("ul", "judgments");
    for (const judgment of claim.judgments) list.append(judgmentItem(judgment));
    details.append(list);
    item.append(details);
  }
  const settled = judged ? deliberationBlock(claim.deliberation, claim) : null;
  if (settled) item.append(settled);
  if (claim.pending && claim.deliberating && typeof claim.deliberating === "object") {
    item.append(element("div", "deliberating", deliberatingText(claim.deliberating)));
  }
  return item;
}

/** One note as text: a string as it is; an object by its text, message or note field, else its fields. */
function noteText(note) {
  if (note === null || note === undefined) return "";
  if (typeof note !== "object") return String(note);
  for (const field of ["text", "message", "note"]) if (typeof note[field] === "string") return note[field];
  return Object.entries(note)
    .map(([key, value]) => `${key}: ${typeof value === "object" ? JSON.stringify(value) : value}`)
    .join("; ");
}

function notesOf(holder) {
  const found = [];
  for (const notes of [holder?.notes, holder?.usage?.notes]) if (Array.isArray(notes)) found.push(...notes);
  return found;
}

/**
 * Every note the server sent (the events', the verdict's and its usage's, each claim's), each once:
 * [claim text or null, note], a claim's note under the start of its claim.
 */
function collectNotes(state) {
  const lines = new Map();
  const add = (note, claim = null) => {
    const line = noteText(note).trim();
    if (line) lines.set(`${claim ?? ""}\u0000${line}`, [claim, line]);
  };
  for (const note of state?.notes ?? []) add(note);
  for (const note of notesOf(state?.verdict)) add(note);
  for (const claim of state?.claims ?? []) {
    for (const note of notesOf(claim)) add(note, clip(String(claim.text ?? claim.id), 60));
  }
  return [...lines.values()];
}

/** A note as a list item: the claim's text and the note, each a run of its own direction. */
function noteItem([claim, note]) {
  const item = element("li");
  item.dir = "auto";
  if (claim !== null) item.append(element("bdi", "run", claim), ": ");
  item.append(element("bdi", "run", note));
  return item;
}

/**
 * Which page or text a result belongs to, and the start of the text checked: two lists of runs, our words
 * as strings and each untrusted run (a title, a host, the text) as an element of its own direction, so an
 * Arabic title neither reorders the host after it nor is reordered by our words.
 */
function describe(state) {
  const excerpt = ["“", element("bdi", "run", clip(String(state.text ?? "").replace(/\s+/g, " ").trim(), 90)), "”"];
  if (state.kind === "text") return [["Pasted text"], excerpt];
  const where = [state.kind === "page" ? "Whole page (its main text)" : state.frameId ? "Selection in a frame" : "Selection"];
  if (state.title) where.push(" on “", element("bdi", "run", clip(plain(state.title), 60)), "”");
  try {
    if (state.url) where.push(" (", element("bdi", "run", new URL(state.url).host || state.url), ")");
  } catch (_) {
    // not a URL: the title says enough
  }
  return [where, excerpt];
}

// The compose rule in words (composeLabel in api.js), for the legend.
const COMPOSE_RULE =
  "TRUE when every verified claim is TRUE, FALSE when every one is FALSE and one is strong (weak ones alone: UNVERIFIED), " +
  "PARTLY TRUE when some are TRUE and some FALSE; UNVERIFIED claims are left out (none verified: UNVERIFIED), and a " +
  "text with any is at most weak.";

/** The rule the server labelled a text by, in words: "the “threshold” rule". */
function ruleName(shown) {
  return shown.rule ? `the “${plain(shown.rule)}” rule` : "a rule it did not name (an older server)";
}

/** How this text's label was composed, in words: by the server's compose rule, or here, and why. */
function compositionText(shown) {
  if (!shown) return `A text's label is composed from its claims' labels: ${COMPOSE_RULE}`;
  if (!shown.composedHere) return `This text's label was composed by the server's “compose” rule from its claims' labels: ${COMPOSE_RULE}`;
  return (
    `This text's label was composed here from its claims' labels: ${COMPOSE_RULE} The server labelled it ` +
    `${plain(shown.serverLabel ?? "nothing")} by ${ruleName(shown)}, which is not shown: another rule can contradict ` +
    "the claims (thresholding the mean score can call a text of FALSE claims TRUE)."
  );
}

// What the docs advise for web pages (docs/extension.md, "Which server for web pages").
const WEB_ADVICE = "For general web pages, run the server with --profile wiki (keyless) or --profile paper (with keys).";

/** A corpus as a reader should see it: its name, or a file's name for a path on the server. */
function corpusName(corpus) {
  const name = String(corpus);
  return /^(\/|[A-Za-z]:\\)/.test(name) ? name.split(/[\\/]/).filter(Boolean).pop() ?? name : name;
}

/**
 * Who judged, from the verdict's judged_by ({profile, agents: [{name, source, verifier, corpus, domain}],
 * caution}): "Judged by: offline profile, corpus SciFact abstracts (…)", an agent with no corpus by its
 * source and verifier ("wikipedia (nli)"). Null when the server does not say (an older server).
 */
function judgedByText(judgedBy) {
  if (!judgedBy || typeof judgedBy !== "object") return null;
  const agents = (Array.isArray(judgedBy.agents) ? judgedBy.agents : []).map((agent) =>
    agent?.corpus
      ? `corpus ${corpusName(agent.corpus)}`
      : [agent?.source || agent?.name, agent?.verifier && `(${agent.verifier})`].filter(Boolean).join(" "),
  );
  const parts = [judgedBy.profile ? `${judgedBy.profile} profile` : null, ...new Set(agents.filter(Boolean))].filter(Boolean);
  return parts.length ? `Judged by: ${parts.join(", ")}` : null;
}

// Said under a claim whose text the page changed while it was checked (background.js: state.unmarked).
const PAGE_CHANGED = "The page changed here; not marked.";

/** A claim's item with the note that it is not marked when the page changed its text during the check. */
function withPageNote(item, claim, state) {
  if (Array.isArray(state?.unmarked) && state.unmarked.includes(claim.id)) {
    item.dataset.unmarked = "true";
    item.append(element("div", "page-changed", PAGE_CHANGED));
  }
  return item;
}

/**
 * The sentences the server skipped (verdict.skipped: {text, span, rule, reason}), in the section given:
 * each one's text, the rule that skipped it and why. Hidden when there are none.
 */
function renderSkipped(verdict, section) {
  if (!section) return;
  const skipped = (Array.isArray(verdict?.skipped) ? verdict.skipped : []).filter((s) => s && typeof s === "object");
  section.hidden = skipped.length === 0;
  const list = element("ul", "skipped-list");
  for (const sentence of skipped) {
    const item = element("li", "skipped-sentence");
    item.dataset.rule = plain(sentence.rule ?? "");
    const why = `${sentence.rule || "skipped"}${sentence.reason ? `: ${sentence.reason}` : ""}`;
    item.append(element("span", "skipped-text", `“${clip(plain(sentence.text ?? ""), 160)}”`), element("span", "skipped-why", why));
    list.append(item);
  }
  const heading = element("h2", null, `Not checked: ${plural(skipped.length, "sentence")} skipped`);
  section.replaceChildren(...(skipped.length ? [heading, list] : []));
}

/**
 * The selection's text left out of the check by the page (state.leftOut: {reason, text}, from content.js),
 * in the section given, grouped by why: text the page hides from its readers, and text the page's
 * structure says is no claim. Hidden when nothing was left out.
 */
function renderLeftOut(state, section) {
  if (!section) return;
  const leftOut = (Array.isArray(state?.leftOut) ? state.leftOut : []).filter((each) => each && typeof each === "object");
  section.hidden = leftOut.length === 0;
  const list = element("ul", "left-out-list");
  for (const passage of leftOut) {
    const item = element("li", "left-out-passage");
    item.dataset.reason = plain(passage.reason ?? "");
    item.append(element("span", "left-out-text", `“${clip(plain(passage.text ?? ""), 160)}”`), element("span", "left-out-why", plain(passage.reason ?? "")));
    list.append(item);
  }
  const whole = state?.kind === "page" ? "the page" : "the selection";
  // More were left out than listed (the page lists the first 20): all are counted.
  const count = Number.isInteger(state?.leftOutCount) && state.leftOutCount > leftOut.length ? state.leftOutCount : leftOut.length;
  const first = count > leftOut.length ? ` (the first ${leftOut.length} listed)` : "";
  const heading = element("h2", null, `Left out of the check: ${plural(count, "passage")} of ${whole}${first}`);
  section.replaceChildren(...(leftOut.length ? [heading, list] : []));
}

/** Show a check state (see background.js runCheck) in the popup's elements. */
function renderState(state, nodes) {
  const verdict = state?.verdict;
  const shown = verdict ? textLabel(verdict) : null;
  nodes.label.textContent = shown ? plain(shown.label) : "–";
  nodes.label.dataset.label = shown ? shown.label : "";
  // A TRUE or FALSE text is weak when one of its verified claims is (the text is as sure as its least sure
  // claim) or when one of its claims could not be verified (what it says is then only partly known).
  const claims = verdict?.claims ?? [];
  const verified = claims.filter((claim) => typeof claim.score === "number");
  const weakClaim = verified.some((claim) => isWeak(claim)) || verified.length < claims.length;
  const weak = Boolean(shown) && ["TRUE", "FALSE"].includes(shown.label) && weakClaim;
  nodes.label.dataset.weak = String(weak);
  nodes.score.textContent = verdict ? `score ${formatScore(verdict.score)}` : "";
  nodes.strength.textContent = weak ? "weak" : "";
  // The server's label, when it differs from the one shown, is said, with the rule that gave it.
  const overruled = Boolean(shown?.composedHere) && shown.serverLabel !== shown.label;
  nodes.labelRule.hidden = !overruled;
  nodes.labelRule.textContent = overruled
    ? `Composed here from the claims' labels: the server said ${plain(shown.serverLabel ?? "nothing")} by ${ruleName(shown)}.`
    : "";
  // What the label stands on: "2 of 3 claims verified, 1 sentence skipped." (factcheck.types.decided).
  const skipped = Array.isArray(verdict?.skipped) ? verdict.skipped.length : 0;
  const counts = `${verified.length} of ${plural(claims.length, "claim")} verified` +
    (skipped ? `, ${plural(skipped, "sentence")} skipped` : "");
  const decided = claims.length || skipped ? ` ${counts}.` : "";
  nodes.composition.textContent = compositionText(shown) + (verdict ? decided : "");
  // The same words as the CLI's header, under the label: what it stands on.
  nodes.decided.hidden = !(verdict && decided);
  nodes.decided.textContent = verdict && decided ? counts : "";
  // A text in a language its agents do not read: the reason for its UNVERIFIED, beside it.
  const unread = verdict ? unreadLanguage(verdict) : null;
  nodes.unread.hidden = !unread;
  nodes.unread.textContent = unread ?? "";
  const judged = judgedByText(verdict?.judged_by);
  nodes.judged.hidden = !judged;
  nodes.judged.textContent = judged ? plain(judged) : "";
  // The server's caution (a corpus of one domain), with the docs' advice when it does not give it.
  const caution = verdict?.judged_by?.caution;
  nodes.caution.hidden = !caution;
  nodes.caution.textContent = caution ? plain(/--profile wiki/.test(caution) ? caution : `${caution} ${WEB_ADVICE}`) : "";
  nodes.claims.replaceChildren(...(state?.claims ?? []).map((claim) => withPageNote(claimItem(claim), claim, state)));
  renderSkipped(verdict, document.getElementById("skipped"));
  renderLeftOut(state, document.getElementById("left-out"));
  nodes.status.dataset.state = state?.status ?? "idle";
  const notes = collectNotes(state);
  nodes.notes.hidden = notes.length === 0;
  nodes.notesList.replaceChildren(...notes.map(noteItem));
  nodes.context.hidden = !state;
  // After an error, the same text can be checked again (a server back up, a key fixed); after a verdict
  // with claims the server did not reach (its deadline), those claims alone (background.js retry).
  const unchecked = (state?.claims ?? []).filter((claim) => claim.unchecked).length;
  const rest = Boolean(state?.verdict) && unchecked > 0;
  nodes.retry.textContent = rest ? `Retry: check the ${plural(unchecked, "claim")} not checked` : "Retry: check the same text again";
  nodes.retry.hidden = !((state?.status === "error" || rest) && String(state.text ?? "").trim());
  nodes.retry.disabled = nodes.retry.hidden; // enabled again only by a check that ended in an error
  if (!state) {
    nodes.status.textContent = IDLE_MESSAGE;
    return;
  }
  const [where, excerpt] = describe(state);
  const line = (className, runs) => {
    const node = element("span", className);
    node.append(...runs);
    return node;
  };
  nodes.context.replaceChildren(line("where", where), line("excerpt", excerpt));
  if (state.status === "error") nodes.status.textContent = `Error: ${plain(state.error)}`;
  else if (state.status === "checking") {
    const done = state.claims.filter((claim) => !claim.pending).length;
    nodes.status.textContent = state.claims.length ? `Checking… ${done} of ${plural(state.claims.length, "claim")} done` : "Checking…";
  } else if (unchecked) {
    // "12 of 50 checked": the claims the server's deadline came before are not checked, not verdicts.
    const why = verdict?.partial ? "the server's deadline stopped the check before" : "not checked:";
    nodes.status.textContent =
      `${state.claims.length - unchecked} of ${state.claims.length} checked: ${why} the other ${plural(unchecked, "claim")}`;
  } else {
    nodes.status.textContent = `${state.claims.length} claim${state.claims.length === 1 ? "" : "s"} checked`;
  }
}
