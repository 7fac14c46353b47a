// The popup's controls for a result: "Check in N parts" after the server refused a text as too long (413),
// the progress of a check in parts, and "Correct this" under each checked claim, where the options hold a
// key that may send corrections (POST /v1/feedback, sent by the background; never without the reader's click).
"use strict";

/**
 * After a 413, the same text in parts under the server's limit (background.js checkInParts): the button says
 * how many. Retry is hidden then (the same text again would be refused again). While a check in parts runs,
 * the status says which part; once it is done, in how many parts it was checked; after an error in a part,
 * Retry says it goes on from that part.
 */
function renderParts(state, nodes, tabId) {
  const button = document.getElementById("parts");
  const tooLong = state?.status === "error" && state.tooLong && String(state.text ?? "").trim() ? state.tooLong : null;
  button.hidden = !tooLong;
  button.disabled = !tooLong; // enabled again only by a result that offers it (one click, one check)
  if (tooLong) {
    button.textContent = `Check in ${tooLong.parts} parts`;
    button.title = `The server takes at most ${tooLong.limit} characters a check: the same text, split at its paragraphs or sentences, checked part after part`;
    button.onclick = () => {
      button.disabled = true;
      ext.runtime.sendMessage({ type: "check-parts", tabId });
    };
    nodes.retry.hidden = true;
    nodes.retry.disabled = true;
  }
  const inParts = state?.inParts && typeof state.inParts === "object" ? state.inParts : null;
  if (!inParts) return;
  if (state.status === "checking" && Number.isInteger(inParts.part)) {
    const done = state.claims.filter((claim) => !claim.pending).length;
    const claims = state.claims.length ? `: ${done} of ${plural(state.claims.length, "claim")} done` : "";
    nodes.status.textContent = `Checking part ${inParts.part} of ${inParts.count}…${claims}`;
  } else if (state.status === "done") {
    nodes.status.textContent += ` (in ${plural(inParts.count, "part")})`;
  } else if (state.status === "error" && Number.isInteger(inParts.done) && inParts.done > 0) {
    // The parts done are kept: Retry goes on from the part that failed (background.js retry).
    nodes.retry.textContent = `Retry: check from part ${inParts.done + 1} of ${inParts.count}`;
  }
}

// Whether "Correct this" is offered (correctionsOffered in api.js: a key, not refused), and each claim's
// correction as the reader left it in this popup ("<check id> <claim id>" -> {open, label, note, said, sent}).
const corrections = { offered: false, drafts: new Map() };

const correctionsReady = correctionsOffered().then(
  (offered) => (corrections.offered = offered),
  () => (corrections.offered = false),
);

/** "Correct this" under each claim with a verdict, once the check is over; the said line of a claim tried. */
function renderCorrections(state, tabId) {
  if (!state?.verdict || state.status === "checking") return;
  for (const item of document.querySelectorAll("#claims > li.claim")) {
    const claim = state.claims.find((each) => each.id === item.dataset.claimId);
    if (!claim || claim.pending || claim.unchecked) continue;
    const key = `${state.checkId} ${claim.id}`;
    if (corrections.offered || corrections.drafts.get(key)?.said) item.append(correctionBox(state, claim, tabId, key));
  }
}

/** One claim's correction: the button, the form it opens (the ruling, a note, Send), and one line said. */
function correctionBox(state, claim, tabId, key) {
  const draft = corrections.drafts.get(key) ?? { open: false, label: null, note: "", said: null, sent: false, sending: false };
  corrections.drafts.set(key, draft);
  const box = element("div", "correct");
  box.dataset.key = key;
  // Drawn again where it is now (the claims may have been drawn again since this box was).
  const shown = () => [...document.querySelectorAll("#claims .correct")].find((each) => each.dataset.key === key);
  const again = () => shown()?.replaceWith(correctionBox(state, claim, tabId, key));
  if (corrections.offered && !draft.sent) {
    const open = element("button", "correct-open", draft.open ? "Cancel the correction" : "Correct this");
    open.type = "button";
    open.setAttribute("aria-expanded", String(draft.open));
    open.addEventListener("click", () => {
      draft.open = !draft.open;
      draft.said = null;
      again();
    });
    box.append(open);
  }
  if (corrections.offered && !draft.sent && draft.open) {
    const form = element("fieldset", "correct-form");
    form.append(element("legend", null, "This claim is"));
    for (const label of ["TRUE", "FALSE"]) {
      const choice = element("label", "correct-ruling");
      const input = document.createElement("input");
      Object.assign(input, { type: "radio", name: `ruling-${key}`, value: label, checked: draft.label === label });
      input.addEventListener("change", () => {
        draft.label = label;
        send.disabled = draft.sending;
      });
      choice.append(input, ` ${label}`);
      form.append(choice);
    }
    const note = document.createElement("input");
    Object.assign(note, { type: "text", className: "correct-note", maxLength: 2000, value: draft.note });
    note.placeholder = "A short note: why (kept with the correction)";
    note.setAttribute("aria-label", "Note");
    note.addEventListener("input", () => (draft.note = note.value));
    const send = element("button", "correct-send", draft.sending ? "Sending…" : "Send correction");
    send.type = "button";
    send.disabled = !draft.label || draft.sending;
    // The one place a correction leaves the browser: this button's click, the ruling chosen.
    send.addEventListener("click", async () => {
      if (!draft.label || draft.sending) return;
      draft.sending = true;
      draft.said = null;
      again();
      const message = { type: "correct", tabId, checkId: state.checkId, claimId: claim.id, label: draft.label, note: draft.note };
      const answer = await ext.runtime.sendMessage(message).catch((error) => ({ ok: false, status: 0, message: error.message }));
      draft.sending = false;
      if (answer?.ok) {
        draft.sent = true;
        draft.said = {
          ok: true,
          text: answer.lent
            ? "Correction sent: later checks of this claim use it."
            : "Correction sent and kept: later checks use it once enough reviewers agree on this claim's label.",
        };
      } else if (answer?.status === 403) {
        // The server takes no corrections from this key: said here, and offered no more (for this server and key).
        corrections.offered = false;
        draft.said = { ok: false, text: `This key may not send corrections: ${answer.message}.` };
        for (const other of document.querySelectorAll("#claims .correct")) if (other.dataset.key !== key) other.remove();
      } else {
        draft.said = { ok: false, text: `Not sent: ${answer?.message ?? "no answer"}.` };
      }
      again();
    });
    form.append(note, send);
    box.append(form);
  }
  if (draft.said) {
    const said = element("p", "correct-said", draft.said.text);
    said.dataset.state = draft.said.ok ? "ok" : "error";
    said.setAttribute("role", "status");
    box.append(said);
  }
  return box;
}
