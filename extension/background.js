// Background: the "Fact-check selection" menu, running checks, and telling the page what to highlight.
"use strict";

if (typeof importScripts === "function") importScripts("api.js"); // Chromium's service worker; Firefox lists it

const MENU_ID = "factcheck-selection";
const BADGES = { TRUE: "T", FALSE: "F", "PARTLY TRUE": "PT", UNVERIFIED: "?" };

ext.runtime.onInstalled.addListener(() => {
  ext.contextMenus.create({ id: MENU_ID, title: "Fact-check selection", contexts: ["selection"] });
});

ext.contextMenus.onClicked.addListener((info, tab) => {
  if (info.menuItemId === MENU_ID) checkSelection(tab, info.selectionText || "");
});

ext.runtime.onMessage.addListener((message, sender, reply) => {
  if (message?.type === "check-text") {
    runCheck({ text: message.text, url: null, title: null, tabId: null });
    reply({ started: true });
  } else if (message?.type === "check-selection") {
    ext.tabs.get(message.tabId).then((tab) => checkSelection(tab, ""));
    reply({ started: true });
  }
  return false;
});

/**
 * Check what is selected in a tab. The content script reads the selection itself, so the claims'
 * spans (offsets in that text) can be mapped back onto the page; where it cannot run (a browser
 * page), the menu's selection text is checked without highlighting.
 */
async function checkSelection(tab, menuText) {
  let captured = null;
  try {
    await ext.scripting.executeScript({ target: { tabId: tab.id }, files: ["content.js"] });
    captured = await ext.tabs.sendMessage(tab.id, { type: "factcheck-capture" });
  } catch (_) {
    captured = null;
  }
  const text = captured?.text?.trim() ? captured.text : menuText;
  await runCheck({ text, url: tab.url, title: tab.title, tabId: captured?.text ? tab.id : null });
}

async function runCheck({ text, url, title, tabId }) {
  const state = { status: "checking", text, url, title, claims: [], verdict: null, error: null, at: Date.now() };
  await saveCurrent(state);
  if (!text || !text.trim()) {
    await saveCurrent({ ...state, status: "error", error: "nothing selected" });
    return;
  }
  try {
    await streamCheck({ text, url, title }, (name, data) => {
      if (name === "claims") state.claims = data.claims.map((claim) => ({ ...claim, pending: true }));
      else if (name === "claim") state.claims[data.index] = data.claim;
      else if (name === "verdict") {
        state.verdict = data;
        state.claims = data.claims;
        state.status = "done";
      } else if (name === "error") {
        state.status = "error";
        state.error = data.error;
      }
      saveCurrent({ ...state });
    });
    if (state.status === "checking") throw new Error("the server closed the stream before the verdict");
  } catch (error) {
    state.status = "error";
    state.error = error.message;
  }
  await saveCurrent({ ...state });
  if (state.verdict && tabId !== null) {
    ext.action.setBadgeText({ tabId, text: BADGES[state.verdict.label] ?? "" });
    ext.tabs.sendMessage(tabId, { type: "factcheck-highlight", claims: state.verdict.claims }).catch(() => {});
  }
}
