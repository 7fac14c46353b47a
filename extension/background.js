// Background: the "Fact-check selection" menu, running checks, the toolbar badge, and telling the page what to highlight.
"use strict";

if (typeof importScripts === "function") importScripts("api.js"); // Chromium's service worker; Firefox lists it

const MENU_ID = "factcheck-selection";
const BADGES = { TRUE: "T", FALSE: "F", "PARTLY TRUE": "PT", UNVERIFIED: "?" };
const BADGE_COLORS = {
  TRUE: "#2b8a3e",
  FALSE: "#c92a2a",
  "PARTLY TRUE": "#e67700",
  UNVERIFIED: "#495057",
  checking: "#1971c2",
  error: "#c92a2a",
};
const newest = new Map(); // state key -> id of the newest check started there: only it updates the popup and badge

ext.runtime.onInstalled.addListener(() => {
  ext.contextMenus.create({ id: MENU_ID, title: "Fact-check selection", contexts: ["selection"] });
});

ext.contextMenus.onClicked.addListener((info, tab) => {
  if (info.menuItemId === MENU_ID) checkSelection(tab, info.selectionText || "");
});

ext.runtime.onMessage.addListener((message, sender, reply) => {
  if (message?.type === "check-text") {
    const tabId = Number.isInteger(message.tabId) ? message.tabId : null;
    runCheck({ checkId: newCheckId(), kind: "text", text: message.text, url: null, title: null, tabId, onPage: false });
    reply({ started: true });
  } else if (message?.type === "check-selection") {
    // Answers once the selection is captured (the check goes on): the caller may change the selection then.
    ext.tabs
      .get(message.tabId)
      .then((tab) => checkSelection(tab, ""))
      .then(reply, (error) => reply({ error: error.message }));
    return true;
  }
  return false;
});

ext.tabs.onRemoved.addListener((tabId) => {
  newest.delete(stateKey(tabId));
  ext.storage.session.remove(stateKey(tabId));
});

function newCheckId() {
  return globalThis.crypto?.randomUUID?.() ?? `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

/**
 * Check what is selected in a tab. The content script reads the selection's rendered text itself,
 * keyed by the check's id, so the claims' spans (offsets in that text) can be mapped back onto the
 * page; where it cannot run (a browser page), the menu's selection text is checked without highlighting.
 */
async function checkSelection(tab, menuText) {
  const checkId = newCheckId();
  let captured = null;
  try {
    await ext.scripting.executeScript({ target: { tabId: tab.id }, files: ["content.js"] });
    await ext.scripting.insertCSS({ target: { tabId: tab.id }, files: ["highlight.css"] }).catch(() => {});
    captured = await ext.tabs.sendMessage(tab.id, { type: "factcheck-capture", checkId });
  } catch (_) {
    captured = null;
  }
  const onPage = Boolean(captured?.text?.trim());
  const text = onPage ? captured.text : menuText;
  const url = captured?.url || tab.url || null;
  const title = captured?.title || tab.title || null;
  runCheck({ checkId, kind: "selection", text, url, title, tabId: tab.id, onPage });
  return { checkId, text };
}

/** The toolbar badge of a tab: progress while checking, the label when done, "!" on an error. */
function showBadge(tabId, state) {
  if (tabId === null) return;
  let text;
  let color;
  let title = "factcheck";
  if (state.status === "checking") {
    const done = state.claims.filter((claim) => !claim.pending).length;
    text = state.claims.length && state.claims.length < 100 ? `${done}/${state.claims.length}` : "…";
    color = BADGE_COLORS.checking;
    title = "factcheck: checking…";
  } else if (state.status === "error") {
    text = "!";
    color = BADGE_COLORS.error;
    title = `factcheck: error: ${state.error}`;
  } else {
    const label = state.verdict?.label;
    text = BADGES[label] ?? "";
    color = BADGE_COLORS[label] ?? BADGE_COLORS.UNVERIFIED;
    title = `factcheck: ${label}`;
  }
  // The tab may be gone by the time a check ends.
  ext.action.setBadgeText({ tabId, text }).catch(() => {});
  ext.action.setBadgeBackgroundColor({ tabId, color }).catch(() => {});
  ext.action.setTitle({ tabId, title }).catch(() => {});
}

async function runCheck({ checkId, kind, text, url, title, tabId, onPage }) {
  const key = stateKey(tabId);
  newest.set(key, checkId);
  const state = { checkId, kind, status: "checking", text, url, title, tabId, claims: [], verdict: null, error: null, notes: [], at: Date.now() };
  const publish = () => {
    if (newest.get(key) !== checkId) return Promise.resolve(); // a newer check in this tab owns the popup and badge
    showBadge(tabId, state);
    return saveCheck(key, structuredClone(state));
  };
  // Highlights go on regardless: an older check still marks its own text (the page keeps each check's capture).
  const highlight = (claims) => {
    if (onPage) ext.tabs.sendMessage(tabId, { type: "factcheck-highlight", checkId, claims }).catch(() => {});
  };
  await publish();
  if (!text || !text.trim()) {
    state.status = "error";
    state.error = "nothing selected: select some text on the page first";
    await publish();
    return;
  }
  try {
    await streamCheck({ text, url, title }, (name, data) => {
      if (Array.isArray(data?.notes)) state.notes.push(...data.notes);
      if (name === "claims") {
        state.claims = data.claims.map((claim) => ({ ...claim, pending: true }));
        highlight(state.claims);
      } else if (name === "claim") {
        state.claims[data.index] = data.claim;
        highlight([data.claim]);
      } else if (name === "verdict") {
        state.verdict = data;
        state.claims = data.claims;
        state.status = "done";
        highlight(data.claims);
      } else if (name === "error") {
        state.status = "error";
        state.error = data.error;
      }
      publish();
    });
    if (state.status === "checking") throw new Error("the server closed the stream before the verdict");
  } catch (error) {
    state.status = "error";
    state.error = error.message;
  }
  if (state.status === "error" && onPage) {
    // Claims that will never get a verdict lose their "checking" highlight.
    ext.tabs.sendMessage(tabId, { type: "factcheck-unmark-pending", checkId }).catch(() => {});
  }
  await publish();
}
