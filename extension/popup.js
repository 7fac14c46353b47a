// The popup: shows the check of the tab it was opened on (live, as the background updates it) and starts new ones.
"use strict";

const nodes = {
  label: document.getElementById("label"),
  score: document.getElementById("score"),
  strength: document.getElementById("strength"),
  context: document.getElementById("context"),
  status: document.getElementById("status"),
  notes: document.getElementById("notes"),
  notesList: document.getElementById("notes-list"),
  claims: document.getElementById("claims"),
  labelRule: document.getElementById("label-rule"),
  caution: document.getElementById("caution"),
  judged: document.getElementById("judged"),
  composition: document.getElementById("composition"),
  decided: document.getElementById("decided"),
  unread: document.getElementById("unread"),
  retry: document.getElementById("retry"),
};
const legend = document.getElementById("legend");

/** The tab this popup is about: ?tab=<id> (the popup opened as a page), else the active tab. */
async function popupTab() {
  const asked = Number.parseInt(new URLSearchParams(location.search).get("tab") ?? "", 10);
  if (Number.isInteger(asked)) return asked;
  const [tab] = await ext.tabs.query({ active: true, currentWindow: true });
  return tab?.id ?? null;
}

const pageNodes = { date: document.getElementById("page-date"), changed: document.getElementById("page-changed") };

/**
 * The page's side of a result: the date its claims were read as of when the page gave one (or why the page's
 * date was not used), and a note when the page changed after the check (a new address, its text re-rendered).
 */
function renderPage(state) {
  const dated = typeof state?.pageDate === "string" && state.pageDate;
  pageNodes.date.hidden = !dated;
  if (dated) {
    pageNodes.date.textContent = state.date
      ? `Page dated ${state.pageDate} (from the page): its claims' times are read as of then.`
      : `Page dated ${state.pageDate} (from the page), not used: the options turn the page's date off, so the claims are read as of today.`;
  }
  // {why, url}: the address, the page's to choose, is a run of its own direction (never reorders our words).
  const changed = state?.pageChanged && typeof state.pageChanged === "object" ? state.pageChanged : null;
  pageNodes.changed.hidden = !changed;
  pageNodes.changed.replaceChildren();
  if (changed) {
    const url = Object.assign(document.createElement("bdi"), { textContent: String(changed.url ?? "") });
    const why = String(changed.why ?? "");
    pageNodes.changed.append(`The page changed since this check (${why}`, ...(changed.url ? [": ", url] : []), ").");
  }
}

function render(state, tabId) {
  renderState(state, nodes);
  renderPage(state);
  renderParts(state, nodes, tabId); // controls.js
  renderCorrections(state, tabId);
}

const ready = popupTab().then(async (tabId) => {
  const key = stateKey(tabId);
  await correctionsReady; // whether "Correct this" is offered, before the first rendering
  render(await loadCheck(key), tabId);
  document.body.dataset.ready = "true"; // rendered once (tests wait for it)
  ext.storage.onChanged.addListener((changes, area) => {
    if (area === "session" && changes[key]) render(changes[key].newValue ?? null, tabId);
  });
  return tabId;
});

// The legend stays open until the reader closes it, and stays closed after.
ext.storage.local.get({ legendClosed: false }).then(({ legendClosed }) => {
  legend.open = !legendClosed;
  legend.addEventListener("toggle", () => ext.storage.local.set({ legendClosed: !legend.open }));
});

document.getElementById("form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = document.getElementById("text").value;
  if (text.trim()) ext.runtime.sendMessage({ type: "check-text", text, tabId: await ready });
});

document.getElementById("selection").addEventListener("click", async () => {
  const tabId = await ready;
  if (tabId !== null) ext.runtime.sendMessage({ type: "check-selection", tabId });
});

// The page's main text (its <main>, else its article, else its body), checked and marked as a selection is.
document.getElementById("page").addEventListener("click", async () => {
  const tabId = await ready;
  if (tabId !== null) ext.runtime.sendMessage({ type: "check-page", tabId });
});

// After an error: the same text (for a selection, the same capture, marked again) is checked once more.
// One click, one check: the button stays disabled until the check it started is rendered (renderState).
nodes.retry.addEventListener("click", async () => {
  nodes.retry.disabled = true;
  ext.runtime.sendMessage({ type: "retry", tabId: await ready });
});
