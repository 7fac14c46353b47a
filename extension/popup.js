// The popup: shows the current check (live, as the background updates it) and starts new ones.
"use strict";

const nodes = {
  label: document.getElementById("label"),
  score: document.getElementById("score"),
  status: document.getElementById("status"),
  claims: document.getElementById("claims"),
};

loadCurrent().then((state) => {
  if (state) renderState(state, nodes);
});

ext.storage.onChanged.addListener((changes, area) => {
  if (area === "session" && changes.current) renderState(changes.current.newValue, nodes);
});

document.getElementById("form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = document.getElementById("text").value;
  if (text.trim()) ext.runtime.sendMessage({ type: "check-text", text });
});

document.getElementById("selection").addEventListener("click", async () => {
  const [tab] = await ext.tabs.query({ active: true, currentWindow: true });
  if (tab) ext.runtime.sendMessage({ type: "check-selection", tabId: tab.id });
});
