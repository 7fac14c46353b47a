// Rendering a check for people. Everything from the server (claims, rationales, evidence titles and
// URLs) is untrusted text: it is put in the page with textContent, never as HTML.
"use strict";

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function formatScore(score) {
  return typeof score === "number" ? score.toFixed(2) : "–";
}

/** A link only for http(s) URLs; anything else (javascript:, data:) is shown as plain text. */
function evidenceItem(evidence) {
  const item = element("li");
  const name = evidence.title || evidence.url || evidence.source;
  let safe = null;
  try {
    const url = new URL(evidence.url);
    if (url.protocol === "http:" || url.protocol === "https:") safe = url.href;
  } catch (_) {
    safe = null;
  }
  if (safe) {
    const link = element("a", null, name);
    link.href = safe;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    item.append(link);
  } else {
    item.append(element("span", null, name));
  }
  return item;
}

function judgmentItem(judgment) {
  const verdict = judgment.factuality === null ? "abstained" : String(judgment.factuality);
  const item = element("li", "judgment");
  item.dataset.verdict = verdict;
  const said = judgment.factuality === null ? "abstained" : `${judgment.factuality ? "true" : "false"} (${formatScore(judgment.confidence)})`;
  item.append(element("span", "agent", judgment.agent), document.createTextNode(`: ${said}`));
  if (judgment.rationale) item.append(element("span", "rationale", judgment.rationale));
  if (judgment.error) item.append(element("span", "error", judgment.error));
  if (judgment.evidence?.length) {
    const list = element("ul", "evidence");
    for (const evidence of judgment.evidence) list.append(evidenceItem(evidence));
    item.append(list);
  }
  return item;
}

/** One claim: its label and score, then each agent's verdict with its evidence. */
function claimItem(claim) {
  const item = element("li", "claim");
  item.dataset.claimId = claim.id;
  const head = element("div", "claim-head");
  const label = element("span", "label", claim.pending ? "…" : claim.label);
  label.dataset.label = claim.pending ? "" : claim.label;
  head.append(label, element("span", "claim-text", claim.text));
  if (!claim.pending) head.append(element("span", "score", formatScore(claim.score)));
  item.append(head);
  if (claim.judgments?.length) {
    const list = element("ul", "judgments");
    for (const judgment of claim.judgments) list.append(judgmentItem(judgment));
    item.append(list);
  }
  return item;
}

/** Show a check state (see background.js runCheck) in the popup's elements. */
function renderState(state, nodes) {
  const verdict = state?.verdict;
  nodes.label.textContent = verdict ? verdict.label : "–";
  nodes.label.dataset.label = verdict ? verdict.label : "";
  nodes.score.textContent = verdict ? `score ${formatScore(verdict.score)}` : "";
  nodes.claims.replaceChildren(...(state?.claims ?? []).map(claimItem));
  nodes.status.dataset.state = state?.status ?? "idle";
  if (!state) return;
  if (state.status === "error") nodes.status.textContent = `Error: ${state.error}`;
  else if (state.status === "checking") {
    const done = state.claims.filter((claim) => !claim.pending).length;
    nodes.status.textContent = state.claims.length ? `Checking… ${done} of ${state.claims.length} claims done` : "Checking…";
  } else {
    const partial = verdict?.partial ? " (partial: the server's deadline cut the check short)" : "";
    nodes.status.textContent = `${state.claims.length} claim${state.claims.length === 1 ? "" : "s"} checked${partial}`;
  }
}
