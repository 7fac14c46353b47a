// Talking to the factcheck server: settings, the streamed check, and where results are kept.
// Loaded by the background (service worker in Chromium, background page in Firefox) and the pages.
"use strict";

const ext = globalThis.browser ?? globalThis.chrome;

const DEFAULT_SERVER = "http://127.0.0.1:8000";

/** "1 claim", "2 claims"; `many` where the plural is not the noun and an s. Every count a reader sees. */
function plural(count, noun, many) {
  return `${count} ${count === 1 ? noun : many ?? `${noun}s`}`;
}

/**
 * The server URL (no trailing slash) and API key from the options page, and whether a page's own date
 * (its article's publication date) is sent as the time its claims speak of (on unless turned off).
 */
async function loadSettings() {
  const stored = await ext.storage.local.get({ server: DEFAULT_SERVER, apiKey: "", usePageDate: true });
  return { server: String(stored.server).replace(/\/+$/, ""), apiKey: String(stored.apiKey), usePageDate: stored.usePageDate !== false };
}

/** The host permission pattern for a server URL: http://host/* (match patterns ignore ports). */
function originPattern(server) {
  const url = new URL(server);
  return `${url.protocol}//${url.hostname}/*`;
}

/** Where a tab's latest check is kept (null: a text checked from the popup without a tab). */
function stateKey(tabId) {
  return tabId === null || tabId === undefined ? "check:text" : `check:tab:${tabId}`;
}

/** Checks are kept for the browser session only, one per tab: a tab never shows another page's result. */
async function saveCheck(key, state) {
  await ext.storage.session.set({ [key]: state });
}

async function loadCheck(key) {
  return (await ext.storage.session.get({ [key]: null }))[key];
}

/**
 * A verdict is weak as the server says (the claim's "strength", factcheck.types.strength); a server too old to
 * say is read with the same rule: |2·score − 1| below 0.5, a score between 0.25 and 0.75.
 */
function isWeak(claim) {
  if (claim.strength === "weak" || claim.strength === "strong") return claim.strength === "weak";
  return typeof claim.score === "number" && Math.abs(2 * claim.score - 1) < 0.5;
}

/**
 * A text's label composed from its claims' labels (the server's `compose` rule, docs/scoring.md): TRUE
 * when every verified claim is TRUE, FALSE when every one is FALSE and one of them is strong (weak FALSE claims
 * alone: UNVERIFIED), PARTLY TRUE otherwise; claims no agent could judge (no score) are left out, and a text
 * with none verified is UNVERIFIED.
 */
function composeLabel(claims) {
  const verified = (claims ?? []).filter((claim) => typeof claim?.score === "number");
  const labels = new Set(verified.map((claim) => claim.label));
  if (labels.size === 0) return "UNVERIFIED";
  if (labels.size === 1 && labels.has("TRUE")) return "TRUE";
  // FALSE must be earned (the server's rule for every label rule): a strong FALSE claim, not weak ones alone.
  const strongFalse = verified.some((claim) => claim.label === "FALSE" && !isWeak(claim));
  if (labels.size === 1 && labels.has("FALSE")) return strongFalse ? "FALSE" : "UNVERIFIED";
  return "PARTLY TRUE";
}

/**
 * The label shown for a checked text, in the popup and on the badge: it never contradicts the claims.
 * A verdict labelled by the `compose` rule (its `labels`) is shown as the server sent it; another rule's
 * label (`threshold` thresholds the mean score, `probable` weighs the scores) can say TRUE of three FALSE
 * claims, so the label is composed here from the claims' instead. {label, rule, composedHere, serverLabel}.
 */
function textLabel(verdict) {
  const rule = typeof verdict?.labels === "string" && verdict.labels ? verdict.labels : null;
  if (rule === "compose") return { label: verdict.label, rule, composedHere: false, serverLabel: verdict.label };
  return { label: composeLabel(verdict?.claims), rule, composedHere: true, serverLabel: verdict?.label ?? null };
}

// Bidirectional controls: ALM (U+061C), LRM and RLM (U+200E, U+200F), the embeddings and overrides
// (U+202A to U+202E) and the isolates (U+2066 to U+2069). "\u202Egnp.exe" shows as "exe.png": a title
// or a claim holding them could read otherwise than it is.
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Untrusted text as it may be shown: a string, without bidirectional controls. */
function plain(text) {
  return String(text).replace(BIDI_CONTROLS, "");
}

// An agent's error when it cannot read the text's language (factcheck.language.refusal):
// "the text is German (de); the nli verifier reads English only".
const LANGUAGE_REFUSAL = /^the text is (.+?)(?: \([\w-]+\))?; the (.+?) reads (.+)$/;

/**
 * Why a text is UNVERIFIED when its agents cannot read its language, from their judgments' errors: "German
 * text: no agent here reads German (the nli verifier reads English only)". Null when no agent said so.
 */
function unreadLanguage(verdict) {
  const judgments = (verdict?.claims ?? []).flatMap((claim) => (Array.isArray(claim?.judgments) ? claim.judgments : []));
  const refusals = judgments.map((judgment) => LANGUAGE_REFUSAL.exec(plain(judgment?.error ?? ""))).filter(Boolean);
  if (!refusals.length) return null;
  const language = refusals[0][1];
  const readers = [...new Set(refusals.map(([, , component, reads]) => `the ${component} reads ${reads}`))].join("; ");
  if (refusals.length === judgments.length) return `${language} text: no agent here reads ${language} (${readers}).`;
  return `${language} text: some agents here do not read ${language} (${readers}) and abstained.`;
}

/** A readable error for a server's non-2xx answer, read from its JSON body when it has one. */
async function answerError(response) {
  return (await refusal(response)).message;
}

/**
 * A server's non-2xx answer as an Error: its readable message, its `status`, and for a 413 the server's
 * `maxTextChars` (the longest text it takes, in code points: its `max_text_chars` field, else read from the
 * message "... over the limit of 20000"; null when it says neither, as a proxy's 413 does not).
 */
async function refusal(response) {
  let body = null;
  try {
    body = await response.json();
  } catch (_) {
    // not JSON: keep the status
  }
  let message = (typeof body?.error === "string" && body.error) || response.statusText || "no reason given";
  let maxTextChars = null;
  if (response.status === 413) {
    const said = Number.isInteger(body?.max_text_chars) ? body.max_text_chars : Number(/over the limit of (\d+)/.exec(message)?.[1]);
    maxTextChars = Number.isInteger(said) && said > 0 ? said : null;
  }
  if (response.status === 401) message += " (check the API key in the options)";
  if (response.status === 413) message += maxTextChars ? " (select a shorter text, or check it in parts)" : " (select a shorter text)";
  return Object.assign(new Error(`the server answered ${response.status}: ${message}`), { status: response.status, maxTextChars });
}

/** How many Unicode code points a text has: what the server counts (its limit, its claims' spans). */
function codePoints(text) {
  let count = 0;
  for (const _ of String(text)) count++;
  return count;
}

/** A digest of an API key (its SHA-256's first 8 bytes, hex): what is kept of a key beside a result, never the key. */
async function keyDigest(apiKey) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(apiKey ?? ""));
  return [...new Uint8Array(digest).slice(0, 8)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Where a key's refusal to send corrections is kept: its server and a digest of the key (never the key). */
async function correctorId(server, apiKey) {
  return `${server} ${await keyDigest(apiKey)}`;
}

// How long a correction waits for the server's answer: the popup's "Sending…" never stays.
const FEEDBACK_TIMEOUT_MS = 30_000;

/**
 * Whether the popup offers "Correct this": only where the options hold a key (the server takes corrections
 * from a key's holder alone) and that server has not refused this key's corrections (403) before.
 */
async function correctionsOffered() {
  const { server, apiKey } = await loadSettings();
  if (!apiKey) return false;
  const { correctionsRefused } = await ext.storage.local.get({ correctionsRefused: [] });
  return !correctionsRefused.includes(await correctorId(server, apiKey));
}

/**
 * POST a correction ({result, claim, label, note}: docs/server.md, POST /v1/feedback) with the options' key
 * (`settings`, else those saved): {ok, lent} when the server stored it; {ok: false, status, message} when it
 * did not or gave no answer in FEEDBACK_TIMEOUT_MS, a 403 (this key may not send corrections) remembered for
 * this server and key, so the popup stops offering it.
 */
async function sendCorrection(body, settings = null) {
  const { server, apiKey } = settings ?? (await loadSettings());
  if (!apiKey) return { ok: false, status: 0, message: "no API key in the options: the server takes corrections from a key's holder only" };
  let response;
  try {
    response = await fetch(`${server}/v1/feedback`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${apiKey}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(FEEDBACK_TIMEOUT_MS),
    });
  } catch (error) {
    if (error?.name === "TimeoutError") {
      return { ok: false, status: 0, message: `${server} gave no answer in ${FEEDBACK_TIMEOUT_MS / 1000} s: try again later` };
    }
    return { ok: false, status: 0, message: `cannot reach ${server} (${error.message})` };
  }
  if (!response.ok) {
    const error = await refusal(response);
    if (response.status === 403) {
      const id = await correctorId(server, apiKey);
      const { correctionsRefused } = await ext.storage.local.get({ correctionsRefused: [] });
      if (!correctionsRefused.includes(id)) await ext.storage.local.set({ correctionsRefused: [...correctionsRefused, id] });
    }
    return { ok: false, status: response.status, message: error.message };
  }
  const stored = await response.json().catch(() => ({}));
  return { ok: true, status: response.status, lent: stored?.lent !== false };
}

/** GET /v1/components with the given settings (typed, not necessarily saved): a line saying what happened. */
async function testConnection({ server, apiKey }) {
  let response;
  try {
    response = await fetch(`${server}/v1/components`, { headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {} });
  } catch (error) {
    return { ok: false, message: `Cannot reach ${server}: ${error.message}` };
  }
  if (!response.ok) return { ok: false, message: `Not connected: ${await answerError(response)}` };
  const body = await response.json();
  return { ok: true, message: `Connected: default profile ${body.default_profile}.` };
}

/**
 * The stream broke after the server had answered: the connection was lost (the server stopped, a proxy
 * cut it) or the server ended the stream before its verdict. The caller says how far the check got.
 */
class ConnectionLost extends Error {}

/**
 * POST the text (with its page's URL, title and date, when known) to /v1/check/stream and call onEvent(name, data) for each Server-Sent Event
 * (claims, claim, verdict, error). Resolves when the stream ends; rejects with a readable Error, a
 * ConnectionLost once the events had begun. `signal` (an AbortController's) cancels the request: the
 * connection is closed, so the server stops the check and spends no more calls on it; the promise
 * then rejects with the signal's reason. `settings` ({server, apiKey}): those the check was started with, else
 * those saved.
 */
async function streamCheck({ text, url, title, date = null }, onEvent, signal, settings = null) {
  const { server, apiKey } = settings ?? (await loadSettings());
  const body = { text };
  if (url && /^https?:/.test(url)) body.url = url;
  if (title) body.title = title.slice(0, 1000);
  if (date) body.date = date; // when the text was written: the server resolves "last year" against it
  let response;
  try {
    response = await fetch(`${server}/v1/check/stream`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new Error(`cannot reach ${server} (${error.message}): is the server running? Check its URL in the options`);
  }
  if (!response.ok) throw await refusal(response); // a 413 says the longest text the server takes
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw new ConnectionLost(error.message); // Chromium's "network error": a reset or a cut chunked body
    }
    const { value, done } = chunk;
    buffer += decoder.decode(value ?? new Uint8Array(), { stream: !done });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
    if (done) return;
  }
}
