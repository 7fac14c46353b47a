// Options: the server URL and API key, kept in extension storage, the host permission for the server, and
// whether a page's own date is sent as when its text was written.
"use strict";

const form = document.getElementById("form");
const server = document.getElementById("server");
const apiKey = document.getElementById("apiKey");
const usePageDate = document.getElementById("usePageDate");
const status = document.getElementById("status");

/** Replace the status line: `state` is ok, error, busy or unsaved (a stale "Connected" never stays). */
function say(message, state) {
  status.textContent = message;
  status.dataset.state = state;
}

/** What is typed now: {server, apiKey, pattern}, or null (and an error shown) for an invalid URL. */
function typed() {
  const value = server.value.trim().replace(/\/+$/, "");
  try {
    if (!/^https?:$/.test(new URL(value).protocol)) throw new Error("not http(s)");
    return { server: value, apiKey: apiKey.value.trim(), pattern: originPattern(value) };
  } catch (_) {
    say("The server URL is not a valid http(s) URL: nothing was saved or tested.", "error");
    return null;
  }
}

loadSettings().then((settings) => {
  server.value = settings.server;
  apiKey.value = settings.apiKey;
  usePageDate.checked = settings.usePageDate;
});

// The page's date is no secret and needs no permission: saved as soon as it is changed.
usePageDate.addEventListener("change", async () => {
  await ext.storage.local.set({ usePageDate: usePageDate.checked });
  say(usePageDate.checked ? "Saved: the page's date is used." : "Saved: the page's date is not used (claims are read as of today).", "ok");
});

for (const input of [server, apiKey]) {
  input.addEventListener("input", () => say("Changed, not saved yet.", "unsaved"));
}

// The browser's own check of the URL field (type=url) blocks the submit; say so rather than keep an old line.
server.addEventListener("invalid", () => say("The server URL is not a valid URL: nothing was saved.", "error"));

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const settings = typed();
  if (!settings) return;
  say("Saving…", "busy");
  try {
    // A server elsewhere than this computer needs its host permission. The request must be the first
    // thing this click does (browsers only let a user gesture ask); one already granted asks nothing.
    const granted = await ext.permissions.request({ origins: [settings.pattern] });
    // Saving is the reader's word that the server's keys may have changed: a key refused corrections (403)
    // before is offered "Correct this" again, and told anew if the server still refuses it.
    await ext.storage.local.set({ server: settings.server, apiKey: settings.apiKey, correctionsRefused: [] });
    if (granted) say("Saved.", "ok");
    else say("Saved, but without permission to reach the server the checks will fail.", "error");
  } catch (error) {
    say(`Not saved: ${error.message}`, "error");
  }
});

// Tests what is typed, saved or not: the point is to find out before saving.
document.getElementById("test").addEventListener("click", async () => {
  const settings = typed();
  if (!settings) return;
  say(`Testing ${settings.server}…`, "busy");
  try {
    await ext.permissions.request({ origins: [settings.pattern] }); // a remote server's, as Save asks
  } catch (_) {
    // the fetch below says what is wrong
  }
  const saved = await loadSettings();
  const unsaved = saved.server !== settings.server || saved.apiKey !== settings.apiKey;
  const result = await testConnection(settings);
  const note = unsaved ? " (these settings are not saved yet)" : "";
  say(`${result.message}${note}`, result.ok ? "ok" : "error");
});
