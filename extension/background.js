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
// The popup's button when the focus is in an iframe of a site the extension may not read.
const UNREADABLE_FRAME = "cannot read the selection in this frame (a page from another site)";
const newest = new Map(); // state key -> id of the newest check started there: only it updates the popup and badge

ext.runtime.onInstalled.addListener(() => {
  ext.contextMenus.create({ id: MENU_ID, title: "Fact-check selection", contexts: ["selection"] });
});

// The menu says which frame it was opened in (0: the page itself, else an iframe): that frame holds the selection.
ext.contextMenus.onClicked.addListener((info, tab) => {
  if (info.menuItemId === MENU_ID) checkSelection(tab, info.selectionText || "", info.frameId ?? 0);
});

ext.runtime.onMessage.addListener((message, sender, reply) => {
  if (message?.type === "check-text") {
    const tabId = Number.isInteger(message.tabId) ? message.tabId : null;
    runCheck({ checkId: newCheckId(), kind: "text", text: message.text, url: null, title: null, tabId, onPage: false });
    reply({ started: true });
  } else if (message?.type === "check-selection") {
    // Answers once the selection is captured (the check goes on): the caller may change the selection then.
    // The popup's button does not know the frame (frameId absent): the frame holding a selection is found.
    const frameId = Number.isInteger(message.frameId) ? message.frameId : null;
    ext.tabs
      .get(message.tabId)
      .then((tab) => checkSelection(tab, "", frameId))
      .then(reply, (error) => reply({ error: error.message }));
    return true;
  } else if (message?.type === "retry") {
    retry(message.tabId).then(reply, (error) => reply({ error: error.message }));
    return true;
  }
  return false;
});

ext.tabs.onRemoved.addListener((tabId) => {
  newest.delete(stateKey(tabId));
  ext.storage.session.remove(stateKey(tabId));
});

// A tab that loads another page must not show the old page's result. Without the "tabs" permission the
// event carries no URL on most sites, and it also fires when an iframe loads or the URL's #fragment
// changes, so the page itself is asked: a result stays while its frame still holds the check's capture.
ext.tabs.onUpdated.addListener((tabId, changeInfo) => {
  if (changeInfo.status || changeInfo.url) forgetIfPageLeft(tabId, changeInfo.url);
});

/** The URL without its #fragment: a fragment change stays in the same document. */
function documentUrl(url) {
  return String(url ?? "").split("#")[0];
}

/** Forget a tab's selection check (state, badge) when the document it was captured in is gone. */
async function forgetIfPageLeft(tabId, changedUrl) {
  const key = stateKey(tabId);
  const state = await loadCheck(key);
  if (!state || state.kind !== "selection") return; // a pasted text belongs to no page
  let holds;
  if (state.onPage) {
    const message = { type: "factcheck-holds", checkId: state.checkId };
    holds = await ext.tabs
      .sendMessage(tabId, message, { frameId: state.frameId ?? 0 })
      .then((answer) => answer?.holds === true, () => false);
  } else {
    // No content script to ask (a browser page, a frame of another site): only a new address, where the
    // browser tells it, ends the result; an iframe's load or an ad's refresh does not.
    const now = changedUrl ?? (await ext.tabs.get(tabId).catch(() => null))?.url;
    holds = !now || !state.url || documentUrl(now) === documentUrl(state.url);
  }
  if (holds || (await loadCheck(key))?.checkId !== state.checkId) return; // still there, or a newer check began
  if (newest.get(key) === state.checkId) newest.delete(key); // a check still running stops updating the tab
  await ext.storage.session.remove(key);
  ext.action.setBadgeText({ tabId, text: "" }).catch(() => {});
  ext.action.setTitle({ tabId, title: "factcheck" }).catch(() => {});
}

/** highlight.css as text, read once: marks inside a shadow root need it there (insertCSS styles only the document). */
let highlightCss = null;
function loadHighlightCss() {
  highlightCss ??= fetch(ext.runtime.getURL("highlight.css")).then((response) => response.text()).catch(() => "");
  return highlightCss;
}

/**
 * The frame of a tab whose selection the popup's button should check: the one frame with a non-empty
 * selection, else, of several, one whose focus is not in a child frame (the page keeps an old selection
 * when the reader selects in an iframe, but its focus moves there). 0, the page itself, when none is found.
 * Null when the focus is in a frame the extension cannot read (a page from another site, without host
 * access): its selection is out of reach, and an older one elsewhere is not what the reader means.
 */
async function selectedFrame(tabId) {
  let found;
  try {
    found = await ext.scripting.executeScript({
      target: { tabId, allFrames: true },
      func: () => {
        // Where this frame is, as the indices of its windows from the top (readable across sites), and
        // which of its child frames holds its focus, if one does.
        const path = [];
        for (let w = window; w.parent !== w; w = w.parent) {
          let index = 0;
          while (index < w.parent.length && w.parent[index] !== w) index++;
          path.unshift(index);
        }
        const active = document.activeElement;
        let child = null;
        if (active instanceof HTMLIFrameElement || active instanceof HTMLFrameElement) {
          for (let index = 0; index < window.length; index++) if (window[index] === active.contentWindow) child = index;
        }
        return { selected: Boolean(getSelection()?.toString().trim()), focusInChild: child !== null, child, path: path.join("/") };
      },
    });
  } catch (_) {
    return 0;
  }
  // Follow the focus down from the page: a frame it enters that answered no script cannot be read.
  const byPath = new Map(found.map((frame) => [frame.result?.path, frame]));
  for (let frame = byPath.get(""); Number.isInteger(frame?.result?.child); ) {
    const path = frame.result.path ? `${frame.result.path}/${frame.result.child}` : String(frame.result.child);
    frame = byPath.get(path);
    if (!frame) return null;
  }
  const selected = found.filter((frame) => frame.result?.selected);
  return (selected.find((frame) => !frame.result.focusInChild) ?? selected[0])?.frameId ?? 0;
}

function newCheckId() {
  return globalThis.crypto?.randomUUID?.() ?? `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

/**
 * Check what is selected in a frame of a tab (frameId: 0 for the page, null to find the frame holding a
 * selection). The content script, injected into that frame only, reads the selection's rendered text
 * itself, keyed by the check's id, so the claims' spans (offsets in that text) can be mapped back onto
 * the frame; where it cannot run (a browser page, a frame of another site), the menu's selection text
 * is checked without highlighting.
 */
async function checkSelection(tab, menuText, frameId) {
  const checkId = newCheckId();
  let captured = null;
  let frame = frameId ?? 0;
  try {
    if (frameId === null) frame = await selectedFrame(tab.id);
    if (frame === null) {
      const { url = null, title = null } = tab;
      runCheck({ checkId, kind: "selection", text: "", url, title, tabId: tab.id, onPage: false, refused: UNREADABLE_FRAME });
      return { checkId, text: "", frameId: null, error: UNREADABLE_FRAME };
    }
    const target = { tabId: tab.id, frameIds: [frame] };
    await ext.scripting.executeScript({ target, files: ["content.js"] });
    await ext.scripting.insertCSS({ target, files: ["highlight.css"] }).catch(() => {});
    const message = { type: "factcheck-capture", checkId, css: await loadHighlightCss() };
    captured = await ext.tabs.sendMessage(tab.id, message, { frameId: frame });
  } catch (_) {
    captured = null;
  }
  const onPage = Boolean(captured?.text?.trim());
  const text = onPage ? captured.text : menuText;
  const url = captured?.url || tab.url || null;
  const title = captured?.title || tab.title || null;
  runCheck({ checkId, kind: "selection", text, url, title, tabId: tab.id, frameId: frame, onPage });
  return { checkId, text, frameId: frame };
}

/**
 * Check a tab's last text again after an error (the popup's Retry): the same text, and for a selection
 * the same check id, so the claims are marked on the text captured the first time (the page still holds
 * it: a page that was left has no result to retry).
 */
async function retry(tabId) {
  const state = await loadCheck(stateKey(tabId));
  if (!state?.text?.trim()) return { error: "nothing to retry" };
  if (state.status === "checking") return { error: "a check is running in this tab" }; // a second click
  const { checkId, kind, text, url, title, frameId, onPage } = state;
  runCheck({ checkId: kind === "selection" ? checkId : newCheckId(), kind, text, url, title, tabId, frameId, onPage });
  return { checkId };
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
    const label = textLabel(state.verdict).label; // composed from the claims: never T for false claims
    const caution = cautionOf(state.verdict);
    // A caution (the evidence may not fit the page) marks the label with an asterisk, as a footnote does:
    // "T*", never "T!" (a red "!" is an error); the tooltip gives the footnote.
    text = BADGES[label] ? `${BADGES[label]}${caution ? "*" : ""}` : "";
    color = BADGE_COLORS[label] ?? BADGE_COLORS.UNVERIFIED;
    title = `factcheck: ${label}${caution ? `\n* ${caution}` : ""}`;
  }
  // The tab may be gone by the time a check ends.
  ext.action.setBadgeText({ tabId, text }).catch(() => {});
  ext.action.setBadgeBackgroundColor({ tabId, color }).catch(() => {});
  ext.action.setTitle({ tabId, title }).catch(() => {});
}

/** The server's caution about a verdict (its judged_by.caution: the evidence may not fit the page), or null. */
function cautionOf(verdict) {
  const caution = verdict?.judged_by?.caution;
  return typeof caution === "string" && caution.trim() ? caution.trim() : null;
}

/** What a lost connection means for a check, in words: how far it got, and what is kept. */
function connectionLost(state, reason) {
  const done = state.claims.filter((claim) => !claim.pending).length;
  const total = state.claims.length;
  const cause = reason ? ` (${reason})` : "";
  if (!total) return `the connection to the server was lost before it sent the claims${cause}`;
  const kept = done ? `: the ${done} checked ${done === 1 ? "is" : "are"} kept, ` : ": ";
  const rest = total - done;
  return (
    `the connection to the server was lost after ${done} of ${plural(total, "claim")}${cause}${kept}` +
    `the other ${rest} ${rest === 1 ? "was" : "were"} not checked`
  );
}

async function runCheck({ checkId, kind, text, url, title, tabId, frameId = 0, onPage, refused = null }) {
  const key = stateKey(tabId);
  newest.set(key, checkId);
  const state = {
    checkId, kind, status: "checking", text, url, title, tabId, frameId, onPage,
    claims: [], verdict: null, error: null, notes: [], at: Date.now(),
  };
  const publish = () => {
    if (newest.get(key) !== checkId) return Promise.resolve(); // a newer check in this tab owns the popup and badge
    showBadge(tabId, state);
    return saveCheck(key, structuredClone(state));
  };
  // Highlights go on regardless: an older check still marks its own text (the page keeps each check's capture).
  const highlight = (claims) => {
    if (onPage) ext.tabs.sendMessage(tabId, { type: "factcheck-highlight", checkId, claims }, { frameId }).catch(() => {});
  };
  await publish();
  if (!text || !text.trim()) {
    state.status = "error";
    state.error = refused ?? "nothing selected: select some text on the page first";
    await publish();
    return;
  }
  try {
    await streamCheck({ text, url, title }, (name, data) => {
      if (Array.isArray(data?.notes)) state.notes.push(...data.notes);
      if (name === "claims") {
        state.claims = data.claims.map((claim) => ({ ...claim, pending: true }));
        highlight(state.claims);
      } else if (name === "deliberation") {
        // A step of a claim's deliberation, before its verdict: shown as progress on the pending claim only.
        const claim = Number.isInteger(data?.index) ? state.claims[data.index] : null;
        if (claim?.pending) {
          const step = data.step ?? {};
          claim.deliberating = {
            policy: String(data.policy ?? ""),
            number: Number.isInteger(step.number) ? step.number : null,
            action: String(step.action ?? ""),
          };
        }
      } else if (name === "claim") {
        state.claims[data.index] = data.claim;
        highlight([data.claim]);
      } else if (name === "verdict") {
        state.verdict = data;
        state.claims = data.claims;
        state.status = "done";
        // Each mark's tooltip carries the caution too: a reader who only hovers sees it.
        const caution = cautionOf(data);
        highlight(caution ? data.claims.map((claim) => ({ ...claim, caution })) : data.claims);
      } else if (name === "error") {
        state.status = "error";
        state.error = data.error;
      }
      publish();
    });
    if (state.status === "checking") throw new ConnectionLost("the server closed the stream before the verdict");
  } catch (error) {
    state.status = "error";
    state.error = error instanceof ConnectionLost ? connectionLost(state, error.message) : error.message;
  }
  if (state.status === "error") {
    // Claims that will never get a verdict are shown as not checked (never "…" forever) and lose their
    // "checking" highlight; the finished ones keep their verdicts and marks.
    state.claims = state.claims.map((claim) => (claim.pending ? { ...claim, pending: false, unchecked: true } : claim));
    if (onPage) ext.tabs.sendMessage(tabId, { type: "factcheck-unmark-pending", checkId }, { frameId }).catch(() => {});
  }
  await publish();
}
