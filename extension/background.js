// Background: the "Fact-check selection" menu, running checks, the toolbar badge, and telling the page what to highlight.
"use strict";

if (typeof importScripts === "function") importScripts("api.js"); // Chromium's service worker; Firefox lists it

const MENU_ID = "factcheck-selection";
const PAGE_MENU_ID = "factcheck-page"; // the page's own menu (no selection): its main text
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
// A whole-page check where no script may run (a browser page, the web store) or the page shows no text.
const UNREADABLE_PAGE = "cannot read this page's text (a browser page, or one the extension may not read)";
const EMPTY_PAGE = "the page's main text is empty: nothing to check";
/** Checks of text on the page: marked there, kept while the page holds it ("text" is pasted: no page). */
const ON_PAGE = new Set(["selection", "page"]);
const newest = new Map(); // state key -> id of the newest check started there: only it updates the popup and badge
const running = new Map(); // state key -> Set of {checkId, controller, text, frameId, onPage}: requests to cancel

/** Why a request was cancelled: not an error of the check, and nothing is shown for it. */
class CheckCancelled extends Error {}

/**
 * Cancel the requests running for a tab (a closed tab, a page left) or those of them `which` picks (a newer
 * check's): each connection closes, so the server stops that check and spends no more paid calls on it.
 */
function cancelChecks(key, why, which = () => true) {
  for (const request of running.get(key) ?? []) {
    if (!which(request)) continue;
    running.get(key).delete(request);
    request.controller.abort(new CheckCancelled(why));
  }
}

/**
 * Whether a newer check makes an older one of its tab useless: the popup and badge show only the newest, so
 * an older check is worth finishing only for its marks on the page, and not when the newer one's text takes
 * them over (a check of the same selection again, or of one holding it). Two checks of different
 * paragraphs of a page both go on, each marking its own.
 */
function supersedes(newer, older) {
  return !older.onPage || (newer.onPage && newer.frameId === older.frameId && newer.text.includes(older.text));
}

ext.runtime.onInstalled.addListener(() => {
  ext.contextMenus.create({ id: MENU_ID, title: "Fact-check selection", contexts: ["selection"] });
  ext.contextMenus.create({ id: PAGE_MENU_ID, title: "Fact-check the whole page", contexts: ["page"] });
});

// The menu says which frame it was opened in (0: the page itself, else an iframe): that frame holds the selection.
ext.contextMenus.onClicked.addListener((info, tab) => {
  if (info.menuItemId === MENU_ID) checkSelection(tab, info.selectionText || "", info.frameId ?? 0);
  else if (info.menuItemId === PAGE_MENU_ID) checkSelection(tab, "", 0, { page: true }); // the top page's text
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
  } else if (message?.type === "check-page") {
    // The popup's "Check the whole page": the tab's page (never an iframe's), its main text.
    ext.tabs
      .get(message.tabId)
      .then((tab) => checkSelection(tab, "", 0, { page: true }))
      .then(reply, (error) => reply({ error: error.message }));
    return true;
  } else if (message?.type === "retry") {
    retry(message.tabId).then(reply, (error) => reply({ error: error.message }));
    return true;
  } else if (message?.type === "check-parts") {
    checkInParts(message.tabId).then(reply, (error) => reply({ error: error.message }));
    return true;
  } else if (message?.type === "correct") {
    // Only ever sent by the popup's "Send correction" button: the reader's own click on one claim.
    correct(message).then(reply, (error) => reply({ ok: false, status: 0, message: error.message }));
    return true;
  } else if (message?.type === "factcheck-page-moved" && Number.isInteger(sender.tab?.id)) {
    forgetIfPageLeft(sender.tab.id); // a single-page app's new address: the result stays, with a note
  } else if (message?.type === "factcheck-restored" && Number.isInteger(sender.tab?.id)) {
    // A page back from the back/forward cache asks which of its checks the tab still shows.
    liveChecks(sender.tab.id, sender.frameId ?? 0).then((live) => reply({ live }), () => reply({ live: [] }));
    return true;
  }
  return false;
});

ext.tabs.onRemoved.addListener(async (tabId) => {
  cancelChecks(stateKey(tabId), "the tab was closed");
  running.delete(stateKey(tabId));
  newest.delete(stateKey(tabId));
  const state = await loadCheck(stateKey(tabId));
  if (state) pageChanges.delete(state.checkId); // its note goes with the tab
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

/** The checks of a tab's frame whose marks belong there still: the one the tab shows, and those running. */
async function liveChecks(tabId, frameId) {
  const key = stateKey(tabId);
  const state = await loadCheck(key);
  const live = [...(running.get(key) ?? [])].filter((request) => request.frameId === frameId).map((request) => request.checkId);
  if (ON_PAGE.has(state?.kind) && (state.frameId ?? 0) === frameId) live.push(state.checkId);
  return live;
}

// Check id -> how the page changed since it was captured ({why, url}): laid on the tab's state, also by a
// check still running (its next save would otherwise take the note off).
const pageChanges = new Map();

/** Note on a tab's result that its page changed (a new address, its text drawn again), once per change. */
async function notePageChanged(key, state, change) {
  const before = state.pageChanged;
  if (before && before.why === change.why && before.url === change.url) return;
  pageChanges.set(state.checkId, change);
  await saveCheck(key, { ...state, pageChanged: change });
}

/**
 * Forget a tab's selection check (state, badge) when the document it was captured in is gone. One that
 * stays (a single-page app moved to another address, or drew the checked text again) keeps its result,
 * with a note that the page changed since.
 */
async function forgetIfPageLeft(tabId, changedUrl) {
  const key = stateKey(tabId);
  const state = await loadCheck(key);
  if (!state || !ON_PAGE.has(state.kind)) return; // a pasted text belongs to no page
  let holds;
  if (state.onPage) {
    const message = { type: "factcheck-holds", checkId: state.checkId };
    const answer = await ext.tabs.sendMessage(tabId, message, { frameId: state.frameId ?? 0 }).catch(() => null);
    holds = answer?.holds === true;
    const now = typeof answer?.url === "string" ? answer.url : null;
    let change = null;
    if (holds && now && state.url && documentUrl(now) !== documentUrl(state.url)) change = { why: "new address", url: now };
    else if (holds && answer.redrawn) change = { why: "the checked text was drawn again, so it is no longer marked", url: null };
    const current = await loadCheck(key);
    if (change && current?.checkId === state.checkId) await notePageChanged(key, current, change);
  } else {
    // No content script to ask (a browser page, a frame of another site): only a new address, where the
    // browser tells it, ends the result; an iframe's load or an ad's refresh does not.
    const now = changedUrl ?? (await ext.tabs.get(tabId).catch(() => null))?.url;
    holds = !now || !state.url || documentUrl(now) === documentUrl(state.url);
  }
  if (holds || (await loadCheck(key))?.checkId !== state.checkId) return; // still there, or a newer check began
  if (newest.get(key) === state.checkId) newest.delete(key); // a check still running stops updating the tab
  pageChanges.delete(state.checkId);
  cancelChecks(key, "the page was left"); // its other checks, of the same document, too
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
 * is checked without highlighting. With `page`, the frame's main text instead of its selection (the whole
 * page, read by its structure: see content.js mainText), checked and marked as a selection is.
 */
async function checkSelection(tab, menuText, frameId, { page = false } = {}) {
  const checkId = newCheckId();
  const kind = page ? "page" : "selection";
  let captured = null;
  let frame = frameId ?? 0;
  try {
    if (frameId === null) frame = await selectedFrame(tab.id);
    if (frame === null) {
      const { url = null, title = null } = tab;
      runCheck({ checkId, kind, text: "", url, title, tabId: tab.id, onPage: false, refused: UNREADABLE_FRAME });
      return { checkId, text: "", frameId: null, error: UNREADABLE_FRAME };
    }
    const target = { tabId: tab.id, frameIds: [frame] };
    await ext.scripting.executeScript({ target, files: ["content.js"] });
    await ext.scripting.insertCSS({ target, files: ["highlight.css"] }).catch(() => {});
    const message = { type: "factcheck-capture", checkId, css: await loadHighlightCss(), page };
    captured = await ext.tabs.sendMessage(tab.id, message, { frameId: frame });
  } catch (_) {
    captured = null;
  }
  const onPage = Boolean(captured?.text?.trim());
  const text = onPage ? captured.text : menuText;
  const url = captured?.url || tab.url || null;
  const title = captured?.title || tab.title || null;
  const pageDate = typeof captured?.date === "string" ? captured.date : null; // the article's own date
  const leftOut = onPage && Array.isArray(captured.leftOut) ? captured.leftOut : []; // [{reason, text}]: not sent
  // How many passages were left out: the list above holds the first 20 of them.
  const leftOutCount = onPage && Number.isInteger(captured.leftOutCount) ? captured.leftOutCount : leftOut.length;
  const refused = page && !onPage ? (captured ? EMPTY_PAGE : UNREADABLE_PAGE) : null;
  runCheck({ checkId, kind, text, url, title, tabId: tab.id, frameId: frame, onPage, pageDate, leftOut, leftOutCount, refused });
  return { checkId, text, frameId: frame };
}

/**
 * Check a tab's last text again (the popup's Retry): a check in parts that failed, from the part that
 * failed on (the parts done are kept, never asked for again); after a verdict with claims not checked (the
 * server's deadline cut it), only those claims, merged into the same result; after an error before any
 * verdict, the same text.
 */
async function retry(tabId) {
  const state = await loadCheck(stateKey(tabId));
  if (!state?.text?.trim()) return { error: "nothing to retry" };
  if (state.status === "checking") return { error: "a check is running in this tab" }; // a second click
  const inParts = state.inParts;
  if (inParts && state.status === "error") {
    const from = Number.isInteger(inParts.done) ? inParts.done : 0;
    const kept = from > 0 && state.verdict
      ? { claims: state.claims.slice(0, inParts.claims), verdict: state.verdict, checkedBy: state.checkedBy ?? null }
      : null;
    const parts = { limit: inParts.limit, spans: textParts(state.text, inParts.limit), from: kept ? from : 0, kept };
    return { checkId: rerun(tabId, state, parts) };
  }
  if (state.verdict && state.claims.some((claim) => claim.unchecked)) {
    retryRest(tabId, state);
    return { checkId: state.checkId };
  }
  return { checkId: rerun(tabId, state) };
}

/**
 * Check the claims a result left not checked, merged into it: as many as fit under the server's limit (known
 * for a check in parts: the claims of several parts may not fit in one text) a request, one after another
 * while the tab still shows the result and each request ends with a verdict.
 */
async function retryRest(tabId, state) {
  const key = stateKey(tabId);
  const tried = new Set(); // ids of the claims sent
  const limit = state.inParts?.limit ?? Infinity;
  for (let current = state; ; ) {
    const rest = restOf(current.claims, limit, tried);
    if (!rest.segments.length) return;
    for (const segment of rest.segments) tried.add(current.claims[segment.index].id);
    await runCheck(current, current, rest);
    current = await loadCheck(key);
    if (current?.checkId !== state.checkId || current.status !== "done") return; // a newer check, or an error
  }
}

/**
 * Check a tab's last text in parts, after the server refused it as too long (413): parts under its limit,
 * one request after another, in the same check, merged into one result.
 */
async function checkInParts(tabId) {
  const state = await loadCheck(stateKey(tabId));
  const limit = state?.tooLong?.limit ?? state?.inParts?.limit;
  if (!state?.text?.trim() || !limit) return { error: "nothing to check in parts" };
  if (state.status === "checking") return { error: "a check is running in this tab" }; // a second click
  const parts = { limit, spans: textParts(state.text, limit) };
  return { checkId: rerun(tabId, state, parts), parts: parts.spans.length };
}

/**
 * Run a tab's last check again from its start, whole or in `parts`: its id the check's id. A check of text
 * on the page (a selection, the whole page) keeps its id: the page holds its capture under that id, so the
 * claims are marked on the text captured the first time, and the page answers that it still holds it (a
 * page that was left has no result to run again). A pasted text gets a new id.
 */
function rerun(tabId, state, parts = null) {
  const { checkId, kind, text, url, title, frameId, onPage, pageDate = null, leftOut = [], leftOutCount = null } = state;
  const again = ON_PAGE.has(kind) ? checkId : newCheckId();
  runCheck({ checkId: again, kind, text, url, title, tabId, frameId, onPage, pageDate, leftOut, leftOutCount, parts });
  return again;
}

/** Whether two results' {server, key digest} are the same server and key. */
function sameChecker(one, other) {
  return Boolean(one && other && one.server === other.server && one.key === other.key);
}

/**
 * Send the reader's correction of one claim of the tab's result to the server (POST /v1/feedback): the
 * result cut down to that claim, the ruling and the note. Refused when the tab shows another check by now, or
 * when the options now name another server or key than the one that gave the verdict (state.checkedBy).
 */
async function correct({ tabId, checkId, claimId, label, note }) {
  const state = await loadCheck(stateKey(tabId));
  const claim = state?.checkId === checkId && state.verdict ? state.claims.find((each) => each.id === claimId) : null;
  if (!claim || claim.pending || claim.unchecked) return { ok: false, status: 0, message: "this claim's verdict is no longer shown" };
  if (!["TRUE", "FALSE"].includes(label)) return { ok: false, status: 0, message: "choose TRUE or FALSE" };
  // A correction goes to the server that gave the verdict, with the key it was checked with.
  const settings = await loadSettings();
  const by = state.checkedBy;
  const refuse = (message) => ({ ok: false, status: 0, message: `${message}: check again to correct` });
  if (!by) return refuse("this result came from more than one server or API key");
  if (by.server !== settings.server) return refuse("the options now name another server");
  if (by.key !== (await keyDigest(settings.apiKey))) return refuse("the options now hold another API key");
  // The checked text as the server gave it (factcheck/1), with this claim alone: what it keeps with the correction.
  const { claims: _, ...verdict } = state.verdict;
  const { pending: _p, unchecked: _u, deliberating: _d, ...checked } = claim;
  const result = { ...verdict, schema: verdict.schema ?? "factcheck/1", text: state.text, claims: [checked] };
  if (state.url && /^https?:/.test(state.url)) result.url = state.url;
  return sendCorrection({ result, claim: claimId, label, note: String(note ?? "").trim().slice(0, 2000) }, settings);
}

/** What the popup says when a result is too large for the browser's session storage, and what it shows instead. */
const TOO_LARGE = "the result is too large to keep in the browser's session";

/**
 * Save a check's state for the popup. The browser's session storage holds 10 MB for all tabs: a result over
 * it (a whole page's claims, each with its evidence) is saved without the evidence passages, else without
 * its claims (the label and notes only), with a note saying so; never left unsaved, as "checking" forever.
 */
async function keepState(key, state) {
  const copy = structuredClone(state);
  try {
    await saveCheck(key, copy);
    return;
  } catch (_) {
    // over the quota: smaller, below
  }
  const bare = (claim) => ({
    ...claim,
    deliberation: undefined,
    judgments: (claim.judgments ?? []).map((judgment) => ({ ...judgment, evidence: [] })),
  });
  const lighter = { ...copy, claims: copy.claims.map(bare), notes: [...copy.notes, `${TOO_LARGE}: showing it without the evidence passages`] };
  if (lighter.verdict) lighter.verdict = { ...lighter.verdict, claims: lighter.claims };
  try {
    await saveCheck(key, lighter);
    return;
  } catch (_) {
    // still over: the label and notes alone
  }
  const least = { ...copy, claims: [], notes: [...copy.notes, `${TOO_LARGE}: showing its label only (check a shorter selection to see its claims)`] };
  if (least.verdict) least.verdict = { ...least.verdict, claims: [], skipped: [] };
  await saveCheck(key, least).catch(() => {});
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
    // What the label stands on, and why a text in a language no agent reads is UNVERIFIED, as the popup says.
    const claims = state.verdict?.claims ?? [];
    const verified = claims.filter((claim) => typeof claim.score === "number").length;
    const unread = unreadLanguage(state.verdict);
    const decided = claims.length ? ` (${verified} of ${plural(claims.length, "claim")} verified)` : "";
    title = plain(`factcheck: ${label}${decided}${unread ? `\n${unread}` : ""}${caution ? `\n* ${caution}` : ""}`);
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

/** A whole page's text over the server's limit (its 413), in words: how long it is, and what to do instead. */
function pageTooLong(text) {
  const length = [...text].length.toLocaleString("en");
  return (
    `the page's main text is ${length} characters, more than the server accepts (it answered 413): ` +
    "check it in parts, select a part of the page and check the selection, or raise the server's --max-text-chars"
  );
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

/** A claim of a verdict as kept: one the server did not reach ("checked": false) is not checked, not a verdict. */
function keptClaim(claim) {
  return claim?.checked === false ? { ...claim, pending: false, unchecked: true } : claim;
}

/**
 * What Retry sends for the claims a check did not reach: their texts, a paragraph each, and where each
 * one's text lies in it ({index: the claim's place in the result, start, end}).
 */
function restOf(claims, limit = Infinity, skip = new Set()) {
  const segments = [];
  let text = "";
  claims.forEach((claim, index) => {
    if (!claim.unchecked || skip.has(claim.id)) return;
    // As many as fit under the server's limit (the first always goes): the others are for a later request.
    if (segments.length && codePoints(text) + 2 + codePoints(claim.text) > limit) return;
    if (text) text += "\n\n";
    // In code points, as the server's spans count them (an emoji is one).
    const start = codePoints(text);
    segments.push({ index, start, end: start + codePoints(claim.text) });
    text += claim.text;
  });
  return { text, segments };
}

/** The segment of the rest a claim found in it belongs to: by its span, else by its text. */
function segmentOf(rest, claim) {
  const start = Array.isArray(claim?.span) ? claim.span[0] : null;
  if (Number.isInteger(start)) return rest.segments.find((segment) => segment.start <= start && start < segment.end) ?? null;
  const points = [...rest.text];
  return rest.segments.find((segment) => points.slice(segment.start, segment.end).join("").includes(claim?.text ?? "\0")) ?? null;
}

/**
 * A claim of the rest's check laid over the claim it rechecks (`original`): the original's id, and its span
 * moved back onto the text first checked (the original's own, where its text is not the page's as is).
 */
function mergedClaim(claim, original, segment) {
  let span = original.span;
  const [start, end] = Array.isArray(claim.span) ? claim.span : [];
  const verbatim = Array.isArray(span) && span[1] - span[0] === codePoints(original.text);
  if (verbatim && Number.isInteger(start) && Number.isInteger(end) && end <= segment.end) {
    span = [span[0] + start - segment.start, span[0] + end - segment.start];
  }
  return keptClaim({ ...claim, id: original.id, span });
}

/**
 * A text too long for the server cut into parts of at most `limit` code points, each ending where the text
 * allows the best break: a paragraph, else a line, else a sentence, else a space, else (one unbroken run
 * longer than the limit) anywhere. [[start, end], ...] in code points, blank parts left out.
 */
function textParts(text, limit) {
  const points = [...text];
  const breaks = [/\n\s*\n\s*$/, /\n\s*$/, /[.!?…][)\]"'”’»]*\s+$/, /\s$/];
  /** The last place from `least` on where a break of `kind` ends (the part ends after its whitespace), or 0. */
  const lastBreak = (start, length, kind, least) => {
    for (let cut = length; cut >= least; cut--) {
      const next = points[start + cut];
      if (next !== undefined && /\s/.test(next)) continue;
      if (kind.test(points.slice(start + Math.max(0, cut - 8), start + cut).join(""))) return cut;
    }
    return 0;
  };
  const spans = [];
  let start = 0;
  while (start < points.length) {
    let end = Math.min(points.length, start + limit);
    if (end < points.length) {
      const length = end - start;
      // The best kind of break in the window's second half (no tiny parts), else any break, else a hard cut.
      const cut =
        breaks.reduce((found, kind) => found || lastBreak(start, length, kind, Math.ceil(length / 2)), 0) ||
        breaks.reduce((found, kind) => found || lastBreak(start, length, kind, 1), 0);
      if (cut) end = start + cut;
    }
    if (points.slice(start, end).join("").trim()) spans.push([start, end]);
    start = end;
  }
  return spans;
}

/** A claim of one part's check, on the whole text: its span moved by the part's start, its id the result's. */
function partClaim(claim, start, id) {
  const span = Array.isArray(claim?.span) ? claim.span.map((at) => at + start) : null;
  return keptClaim({ ...claim, id, span });
}

/**
 * Run one check request for a tab, keeping the tab's state as its events come. With `previous` (a result
 * whose claims were not all checked), only those claims are sent, and their verdicts merged into it. With
 * `parts` ({limit, spans}: textParts of a text too long for the server), one request per part, one after
 * another, their claims moved onto the whole text and merged into one result.
 */
async function runCheck(
  {
    checkId, kind, text, url, title, tabId, frameId = 0, onPage, refused = null, pageDate = null, leftOut = [],
    leftOutCount = null, parts = null,
  },
  previous = null,
  restGiven = null,
) {
  const key = stateKey(tabId);
  newest.set(key, checkId);
  // The server and key this check is run with, read once: every request of it goes there, and the result
  // keeps which (the key as a digest) so that a correction goes to the server that gave the verdict.
  const settingsRead = loadSettings();
  const controller = new AbortController();
  // This run of the check: its marks on the page carry it, so a run cancelled later takes off its own alone.
  const run = crypto.randomUUID();
  const request = { checkId, controller, text: previous ? previous.text : text, frameId, onPage };
  cancelChecks(key, "a newer check started in this tab", (older) => supersedes(request, older));
  if (!running.has(key)) running.set(key, new Set());
  running.get(key).add(request);
  const rest = previous ? (restGiven ?? restOf(previous.claims)) : null;
  const places = []; // the rest's claim index -> the index of the claim it rechecks (null: a further part)
  const state = previous
    ? { ...structuredClone(previous), status: "checking", error: null, at: Date.now() }
    : {
        checkId, kind, status: "checking", text, url, title, tabId, frameId, onPage,
        claims: [], verdict: null, error: null, notes: [], at: Date.now(),
        unmarked: [], // ids of claims whose text the page changed while the check ran: listed, not marked
        pageDate, // the date the page gives its article (YYYY-MM-DD), or null
        leftOut, // the selection's text not sent, with why ([{reason, text}], from the page's content script)
        leftOutCount: leftOutCount ?? leftOut.length, // how many passages were left out (leftOut lists the first 20)
        // The date sent as when the text was written: the page's, unless the options turn that off.
        date: pageDate && (await settingsRead).usePageDate ? pageDate : null,
        // A check in parts: the server's limit, how many parts, and the part being checked (null once done).
        inParts: parts ? { limit: parts.limit, count: parts.spans.length, part: null } : null,
      };
  // A check in parts resumed after an error: the claims and verdict of the parts done before it.
  if (parts?.kept) state.claims = structuredClone(parts.kept.claims);
  const settings = await settingsRead;
  const checkedBy = { server: settings.server, key: await keyDigest(settings.apiKey) };
  // A result of two servers or keys (the options changed before a retry) is no one server's: null.
  const before = previous ?? (parts?.kept ? parts.kept : null);
  state.checkedBy = before && !sameChecker(before.checkedBy, checkedBy) ? null : checkedBy;
  // The state is saved for the popup at most one save at a time: events that come during a save are saved
  // together once it ends (the latest state), so a whole page's many events do not copy the state each; the
  // badge follows every event at once. A promise of publish() resolves once the state it saw is saved.
  let saving = null;
  let dirty = false;
  const flush = async () => {
    try {
      while (dirty && newest.get(key) === checkId) {
        dirty = false;
        await keepState(key, state);
      }
    } finally {
      saving = null; // at once when the loop ends: a publish() from now on starts a new save
    }
  };
  const publish = () => {
    if (newest.get(key) !== checkId) return Promise.resolve(); // a newer check in this tab owns the popup and badge
    if (pageChanges.has(checkId)) state.pageChanged = pageChanges.get(checkId);
    showBadge(tabId, state);
    dirty = true;
    saving ??= flush();
    return saving;
  };
  // Highlights go on regardless: an older check still marks its own text (the page keeps each check's capture).
  // The page answers which claims it left unmarked because their text changed; the popup says so.
  const highlight = (claims) => {
    if (!onPage) return;
    ext.tabs
      .sendMessage(tabId, { type: "factcheck-highlight", checkId, run, claims }, { frameId })
      .then((answer) => {
        const changed = (Array.isArray(answer?.changed) ? answer.changed : []).filter((id) => !state.unmarked.includes(id));
        if (!changed.length) return;
        state.unmarked.push(...changed);
        publish();
      })
      .catch(() => {});
  };
  await publish();
  if (!text || !text.trim()) {
    state.status = "error";
    state.error = refused ?? "nothing selected: select some text on the page first";
    await publish();
    return;
  }
  /** The rest's verdict laid over the previous result: its claims merged, the label composed from them. */
  const merge = (found) => {
    const parts = new Map(); // index of a rechecked claim -> its further parts (a claim split in two)
    found.forEach((claim, index) => {
      const segment = segmentOf(rest, claim);
      if (!segment) return;
      const original = previous.claims[segment.index];
      if (places[index] === segment.index) state.claims[segment.index] = mergedClaim(claim, original, segment);
      else parts.set(segment.index, [...(parts.get(segment.index) ?? []), mergedClaim(claim, original, segment)]);
    });
    const claims = state.claims.flatMap((claim, index) =>
      [claim, ...(parts.get(index) ?? []).map((part, n) => ({ ...part, id: `${claim.id}.${n + 2}` }))],
    );
    return claims;
  };
  const mergedVerdict = (claims, data, base = previous.verdict) => ({
    ...base,
    claims,
    // The text's label is composed from its claims' (the server's score of a text checked in parts is not known).
    label: composeLabel(claims),
    labels: "compose",
    score: null,
    partial: claims.some((claim) => claim.unchecked),
    notes: [...(base.notes ?? []), ...(data?.notes ?? []), ...(data?.usage?.notes ?? [])],
  });
  let part = null; // the part being checked: {number, start, base (its first claim's place in the result), done}
  let partsVerdict = parts?.kept ? { ...structuredClone(parts.kept.verdict), claims: state.claims } : null; // the parts' verdicts so far, merged
  /** A part's verdict merged into those before it: the first gives the text's fields (its whole text). */
  const mergePart = (data) => {
    const { claims: _, usage: _usage, notes: _notes, skipped = [], ...fields } = data;
    const base = partsVerdict ?? { ...fields, text, skipped: [], notes: [] };
    const moved = (Array.isArray(skipped) ? skipped : []).map((sentence) => ({
      ...sentence,
      span: Array.isArray(sentence?.span) ? sentence.span.map((at) => at + part.start) : null,
    }));
    partsVerdict = { ...mergedVerdict(state.claims, data, base), skipped: [...base.skipped, ...moved], parts: part.number };
  };
  // A verdict's claims as they are marked: a claim not reached is not marked as a verdict; each mark's tooltip
  // carries the server's caution too, and why its agents could not read it: a reader who only hovers sees both.
  const verdictMarks = (claims, data) =>
    claims
      .filter((claim) => !claim.unchecked)
      .map((claim) => ({ ...claim, caution: cautionOf(data), unread: unreadLanguage({ claims: [claim] }) }));
  const onEvent = (name, data) => {
    if (part && Number.isInteger(data?.index)) {
      // A part's claim by its place in the part: its place in the result, and (a verdict) its span on the whole text.
      const index = part.base + data.index;
      data = { ...data, index, ...(data.claim ? { claim: partClaim(data.claim, part.start, `c${index + 1}`) } : {}) };
    }
    if (Array.isArray(data?.notes)) state.notes.push(...data.notes);
    if (part && name === "claims") {
      // Each part's claims follow those of the parts before, numbered on: c1, c2, ... across the parts.
      part.base = state.claims.length;
      state.claims.push(...data.claims.map((claim, n) => ({ ...partClaim(claim, part.start, `c${part.base + n + 1}`), pending: true })));
      highlight(state.claims.slice(part.base));
    } else if (part && name === "verdict") {
      const claims = data.claims.map((claim, n) => partClaim(claim, part.start, `c${part.base + n + 1}`));
      state.claims.splice(part.base, state.claims.length - part.base, ...claims);
      mergePart(data);
      part.done = true;
      highlight(verdictMarks(claims, data));
    } else if (rest && name === "claims") {
      // The claims rechecked show as "…" again; the first claim found in each one's text takes its place.
      data.claims.forEach((claim, index) => {
        const segment = segmentOf(rest, claim);
        const first = segment && !places.includes(segment.index);
        places[index] = first ? segment.index : null;
        if (first) state.claims[segment.index] = { ...state.claims[segment.index], pending: true, unchecked: false };
      });
      highlight(state.claims.filter((claim) => claim.pending));
    } else if (rest && name === "claim") {
      const place = places[data.index];
      if (Number.isInteger(place)) {
        const segment = rest.segments.find((each) => each.index === place);
        state.claims[place] = mergedClaim(data.claim, previous.claims[place], segment);
        if (!state.claims[place].unchecked) highlight([state.claims[place]]);
      }
    } else if (rest && name === "verdict") {
      state.claims = merge(data.claims);
      state.verdict = mergedVerdict(state.claims, data);
      state.status = "done";
      highlight(state.claims.filter((claim) => !claim.unchecked));
    } else if (name === "claims") {
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
      state.claims[data.index] = keptClaim(data.claim);
      if (!state.claims[data.index].unchecked) highlight([data.claim]);
    } else if (name === "verdict") {
      state.claims = data.claims.map(keptClaim);
      state.verdict = { ...data, claims: state.claims };
      state.status = "done";
      highlight(verdictMarks(state.claims, data));
    } else if (name === "error") {
      state.status = "error";
      state.error = data.error;
    }
    publish();
  };
  try {
    const date = state.date ?? null;
    if (parts) {
      // One part after another, in the same check; a cancelled check (its signal) starts no further part.
      const points = [...text];
      for (const [index, [start, end]] of parts.spans.entries()) {
        if (index < (parts.from ?? 0)) continue; // done before an error: kept
        // A newer check in the tab owns the popup and badge: no further part is worth its paid calls.
        if (newest.get(key) !== checkId) controller.abort(new CheckCancelled("a newer check started in this tab"));
        if (controller.signal.aborted) break;
        part = { number: index + 1, start, base: state.claims.length, done: false };
        state.inParts.part = part.number;
        await publish();
        await streamCheck({ text: points.slice(start, end).join(""), url, title, date }, onEvent, controller.signal, settings);
        if (state.status === "error") break;
        if (!part.done) throw new ConnectionLost("the server closed the stream before the verdict");
      }
      if (state.status === "checking") {
        state.verdict = partsVerdict;
        state.status = "done";
        state.inParts.part = null;
      }
    } else {
      const sent = rest ? { text: rest.text, url, title, date } : { text, url, title, date };
      await streamCheck(sent, onEvent, controller.signal, settings);
      if (state.status === "checking") throw new ConnectionLost("the server closed the stream before the verdict");
    }
  } catch (error) {
    state.status = "error";
    state.error = error instanceof ConnectionLost ? connectionLost(state, error.message) : error.message;
    if (kind === "page" && error.status === 413) state.error = pageTooLong(text);
    // Too long for the server: the popup offers the same text in parts under the limit its 413 gave.
    const split = error?.status === 413 && error.maxTextChars && !rest ? textParts(text, error.maxTextChars).length : 0;
    if (split > 1) state.tooLong = { limit: error.maxTextChars, parts: split };
  } finally {
    if (part && state.status === "error") state.error = `part ${part.number} of ${parts.spans.length}: ${state.error}`;
    running.get(key)?.delete(request);
  }
  const unmarkPending = () => {
    if (onPage) ext.tabs.sendMessage(tabId, { type: "factcheck-unmark-pending", checkId, run }, { frameId }).catch(() => {});
  };
  if (controller.signal.aborted) {
    // Cancelled (the tab closed, its page left, a newer check began): the tab's state is another's now.
    // Its claims still marked "…" on a page that is still there lose that mark.
    unmarkPending();
    return;
  }
  if (state.status === "error") {
    // Claims that will never get a verdict are shown as not checked (never "…" forever) and lose their
    // "checking" highlight; the finished ones keep their verdicts and marks.
    state.claims = state.claims.map((claim) => (claim.pending ? { ...claim, pending: false, unchecked: true } : claim));
    if (previous) state.verdict = mergedVerdict(state.claims, null); // what the rest's check got to is kept
    if (part && partsVerdict) {
      // The parts done are kept, with the failed part's claims checked so far: Retry goes on from that part.
      state.verdict = mergedVerdict(state.claims, null, partsVerdict);
      state.inParts.done = part.number - 1;
      state.inParts.claims = part.base;
    }
  }
  if (state.claims.some((claim) => claim.unchecked)) unmarkPending();
  await publish();
}
