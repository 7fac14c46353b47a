// Content script: captures the selection and highlights the checked claims on the page by their spans.
// Injected on demand (activeTab), possibly more than once into the same page: it guards itself.
"use strict";

(() => {
  if (globalThis.__factcheckContent) return;
  globalThis.__factcheckContent = true;
  const ext = globalThis.browser ?? globalThis.chrome;
  let pieces = []; // [{node, start, end}] text nodes of the captured selection, and their offsets in its text

  /** The selected text as the concatenation of its text nodes, remembering where each came from. */
  function capture() {
    pieces = [];
    const selection = window.getSelection();
    if (!selection || selection.rangeCount === 0) return "";
    const range = selection.getRangeAt(0);
    const root = range.commonAncestorContainer;
    const walker = document.createTreeWalker(root.nodeType === Node.TEXT_NODE ? root.parentNode : root, NodeFilter.SHOW_TEXT);
    let text = "";
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!range.intersectsNode(node)) continue;
      const from = node === range.startContainer ? range.startOffset : 0;
      const to = node === range.endContainer ? range.endOffset : node.data.length;
      if (to <= from) continue;
      pieces.push({ node, from, to, start: text.length });
      text += node.data.slice(from, to);
    }
    return text;
  }

  /** Wrap characters [start, end) of the captured text in <mark>s (one per text node crossed). */
  function mark(start, end, claim) {
    for (const piece of [...pieces].reverse()) {
      const pieceEnd = piece.start + (piece.to - piece.from);
      const a = Math.max(start, piece.start);
      const b = Math.min(end, pieceEnd);
      if (a >= b || !piece.node.isConnected) continue;
      const range = document.createRange();
      range.setStart(piece.node, piece.from + (a - piece.start));
      range.setEnd(piece.node, piece.from + (b - piece.start));
      const element = document.createElement("mark");
      element.className = `factcheck-claim factcheck-${String(claim.label).toLowerCase().replace(/\s+/g, "-")}`;
      element.dataset.claimId = claim.id;
      element.title = `${claim.label}${claim.score === null ? "" : ` (${claim.score.toFixed(2)})`}: ${claim.text}`;
      const colors = { TRUE: "#c8f7c5", FALSE: "#ffc9c9", UNVERIFIED: "#e9ecef" };
      element.style.backgroundColor = colors[claim.label] ?? "#fff3bf";
      range.surroundContents(element);
    }
  }

  ext.runtime.onMessage.addListener((message, sender, reply) => {
    if (message?.type === "factcheck-capture") {
      reply({ text: capture() });
    } else if (message?.type === "factcheck-highlight") {
      // Later spans first, so marking one never shifts the text nodes of the next.
      const claims = message.claims.filter((claim) => Array.isArray(claim.span));
      claims.sort((x, y) => y.span[0] - x.span[0]);
      for (const claim of claims) mark(claim.span[0], claim.span[1], claim);
      reply({ marked: claims.length });
    }
    return false;
  });
})();
