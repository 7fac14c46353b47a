// Options: the server URL and API key, kept in extension storage, and the host permission for the server.
"use strict";

const form = document.getElementById("form");
const server = document.getElementById("server");
const apiKey = document.getElementById("apiKey");
const status = document.getElementById("status");

loadSettings().then((settings) => {
  server.value = settings.server;
  apiKey.value = settings.apiKey;
});

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  let pattern;
  try {
    pattern = originPattern(server.value);
  } catch (_) {
    status.textContent = "The server URL is not a valid URL.";
    return;
  }
  // A server elsewhere than this computer needs its host permission. The request must be the first
  // thing this click does (browsers only let a user gesture ask); one already granted asks nothing.
  const granted = await ext.permissions.request({ origins: [pattern] });
  await ext.storage.local.set({ server: server.value.trim(), apiKey: apiKey.value.trim() });
  status.textContent = granted ? "Saved." : "Saved, but without permission to reach the server the checks will fail.";
});

document.getElementById("test").addEventListener("click", async () => {
  const settings = await loadSettings();
  try {
    const response = await fetch(`${settings.server}/v1/components`, {
      headers: settings.apiKey ? { Authorization: `Bearer ${settings.apiKey}` } : {},
    });
    const body = await response.json();
    status.textContent = response.ok
      ? `Connected: default profile ${body.default_profile}.`
      : `The server answered ${response.status}: ${body.error}`;
  } catch (error) {
    status.textContent = `Cannot reach ${settings.server}: ${error.message}`;
  }
});
