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

const ready = popupTab().then(async (tabId) => {
  const key = stateKey(tabId);
  renderState(await loadCheck(key), nodes);
  document.body.dataset.ready = "true"; // rendered once (tests wait for it)
  ext.storage.onChanged.addListener((changes, area) => {
    if (area === "session" && changes[key]) renderState(changes[key].newValue ?? null, nodes);
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

// After an error: the same text (for a selection, the same capture, marked again) is checked once more.
// One click, one check: the button stays disabled until the check it started is rendered (renderState).
nodes.retry.addEventListener("click", async () => {
  nodes.retry.disabled = true;
  ext.runtime.sendMessage({ type: "retry", tabId: await ready });
});
