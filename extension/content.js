// Content script: captures the rendered text of the selection and highlights each check's claims by their spans.
// Injected on demand (activeTab), possibly more than once into the same page: it guards itself.
"use strict";

(() => {
  if (globalThis.__factcheckContent) return;
  globalThis.__factcheckContent = true;
  const ext = globalThis.browser ?? globalThis.chrome;

  // Elements whose text the reader never sees as page text (and svg's tooltip <title>, <desc>).
  const UNRENDERED = new Set([
    "script", "style", "template", "noscript", "textarea", "select", "option", "iframe", "object",
    "canvas", "video", "audio", "head", "title", "desc", "meta", "link",
  ]);
  // Separators between blocks, weakest first: the strongest one pending between two pieces of text wins.
  // A blank line between blocks lets the server's sentence splitter end a claim at a heading or list item.
  const SEPARATORS = ["", "\t", "\n", "\n\n"];
  // Displays that start and end a block (a flex or grid item's display is computed as block).
  const BLOCK_DISPLAY = /^(block|flow-root|list-item|flex|grid|table|table-row|table-row-group|table-header-group|table-footer-group|table-caption)(\s|$)/;
  const MARK_SELECTOR = "mark.factcheck-claim";

  const captures = new Map(); // check id -> pieces of its captured text (see capture)
  const owner = new WeakMap(); // text node -> id of the newest check that captured it (only it may mark it)
  const nextPart = new WeakMap(); // text node -> the node split off its end (by split), to follow old offsets

  /** Whether an element and its subtree are rendered as text (display:none, script, aria-hidden are not). */
  function rendered(element) {
    if (UNRENDERED.has(element.localName)) return false;
    if (element.getAttribute("aria-hidden") === "true") return false; // decoration, or a copy for screen readers
    return getComputedStyle(element).display !== "none";
  }

  /** Whether an element's own text shows: not invisible, transparent or clipped away (a screen-reader-only label). */
  function visible(element, cache) {
    if (!cache.has(element)) {
      let shows = element.checkVisibility
        ? element.checkVisibility({ opacityProperty: true, visibilityProperty: true })
        : getComputedStyle(element).visibility === "visible";
      if (shows) {
        const style = getComputedStyle(element);
        const box = element.getBoundingClientRect();
        const outOfFlow = style.position === "absolute" || style.position === "fixed";
        if (outOfFlow && box.width <= 1 && box.height <= 1) shows = false;
      }
      cache.set(element, shows);
    }
    return cache.get(element);
  }

  /**
   * The selection's text as the reader sees it: rendered text only, white space collapsed as the page
   * shows it, a blank line between blocks, a line break for <br>, a tab between table cells. Each
   * character that comes from a text node remembers where (pieces: [{node, start, map}], map[i] being
   * the offset in node of the piece's i-th character), so the claims' spans can be mapped back.
   */
  function capture(range) {
    const pieces = [];
    const cache = new Map();
    let text = "";
    let separator = "";
    let space = null; // a collapsed run of white space not yet written: {node, offset}

    const push = (node, offset, character) => {
      let piece = pieces[pieces.length - 1];
      if (!piece || piece.node !== node) pieces.push((piece = { node, start: text.length, map: [] }));
      piece.map.push(offset);
      text += character;
    };
    const write = (node, offset, character) => {
      if (text && separator) text += separator;
      else if (text && space) push(space.node, space.offset, " ");
      separator = "";
      space = null;
      push(node, offset, character);
    };
    const separate = (next) => {
      if (SEPARATORS.indexOf(next) > SEPARATORS.indexOf(separator)) separator = next;
    };

    const addText = (node) => {
      const parent = node.parentElement;
      if (!parent || !visible(parent, cache)) return;
      const from = node === range.startContainer ? range.startOffset : 0;
      const to = node === range.endContainer ? range.endOffset : node.data.length;
      const whiteSpace = getComputedStyle(parent).whiteSpace;
      const keepSpaces = /^(pre|pre-wrap|break-spaces)$/.test(whiteSpace);
      const keepLines = keepSpaces || whiteSpace === "pre-line";
      for (let i = from; i < to; i++) {
        const character = node.data[i];
        if (character === "\n" && keepLines) write(node, i, "\n");
        else if (!keepSpaces && /[ \t\n\r\f]/.test(character)) space ??= { node, offset: i };
        else write(node, i, character);
      }
    };

    const walk = (node) => {
      if (node.nodeType === Node.TEXT_NODE) {
        if (range.intersectsNode(node)) addText(node);
        return;
      }
      if (node.nodeType !== Node.ELEMENT_NODE || !range.intersectsNode(node) || !rendered(node)) return;
      if (node.localName === "br") {
        separate(separator === "\n" || separator === "\n\n" ? "\n\n" : "\n");
        return;
      }
      const display = getComputedStyle(node).display;
      const cell = display === "table-cell";
      const block = BLOCK_DISPLAY.test(display);
      if (block) separate("\n\n");
      else if (cell) separate("\t");
      for (const child of node.childNodes) walk(child);
      if (block) separate("\n\n");
    };

    const root = range.commonAncestorContainer;
    walk(root.nodeType === Node.TEXT_NODE ? root.parentNode : root);
    return { text, pieces };
  }

  /** Split a text node at offset; the tail is remembered as the head's next part, with the same owner. */
  function split(node, offset) {
    const tail = node.splitText(offset);
    if (nextPart.has(node)) nextPart.set(tail, nextPart.get(node));
    nextPart.set(node, tail);
    if (owner.has(node)) owner.set(tail, owner.get(node));
    return tail;
  }

  /** The text nodes that now hold characters [from, to) of node as it was captured, split to fit exactly. */
  function segments(node, from, to) {
    let offset = from;
    while (offset >= node.length && nextPart.has(node)) {
      offset -= node.length;
      node = nextPart.get(node);
    }
    const found = [];
    let remaining = to - from;
    while (node && remaining > 0 && offset < node.length) {
      if (offset > 0) {
        node = split(node, offset);
        offset = 0;
      }
      if (node.length > remaining) split(node, remaining);
      found.push(node);
      remaining -= node.length;
      node = nextPart.get(node);
    }
    return found;
  }

  const claimKey = (mark) => `${mark.dataset.check}\u0000${mark.dataset.claimId}`;

  /** Remove an older check's highlight of one claim everywhere (its text stays where it is). */
  function unmark(mark) {
    const key = claimKey(mark);
    for (const other of document.querySelectorAll(MARK_SELECTOR)) {
      if (claimKey(other) === key) other.replaceWith(...other.childNodes);
    }
  }

  /** How sure a claim is: 0 at score 0.5 (undecided), 1 at 0 or 1. Below 0.5 the verdict is weak. */
  function isWeak(claim) {
    return typeof claim.score === "number" && Math.abs(2 * claim.score - 1) < 0.5;
  }

  function style(mark, claim, first) {
    const label = claim.pending ? "pending" : String(claim.label).toLowerCase().replace(/\s+/g, "-");
    mark.className = `factcheck-claim factcheck-${label}`;
    if (!claim.pending && isWeak(claim)) mark.classList.add("factcheck-weak");
    if (first) mark.classList.add("factcheck-first"); // carries the icon, once per claim
    mark.dataset.label = claim.pending ? "" : claim.label;
    const score = typeof claim.score === "number" ? ` ${claim.score.toFixed(2)}${isWeak(claim) ? ", weak" : ""}` : "";
    mark.title = claim.pending ? `factcheck: checking… ${claim.text}` : `factcheck: ${claim.label}${score}: ${claim.text}`;
  }

  /** Highlight one claim of a check on its own captured text, or restyle its highlight if it has one. */
  function highlight(checkId, claim) {
    const selector = `${MARK_SELECTOR}[data-check="${CSS.escape(checkId)}"][data-claim-id="${CSS.escape(String(claim.id))}"]`;
    const existing = document.querySelectorAll(selector);
    if (existing.length) {
      existing.forEach((mark, index) => style(mark, claim, index === 0));
      return existing.length;
    }
    const pieces = captures.get(checkId);
    if (!pieces || !Array.isArray(claim.span)) return 0;
    const [start, end] = claim.span;
    let marked = 0;
    for (const piece of pieces) {
      const a = Math.max(start, piece.start);
      const b = Math.min(end, piece.start + piece.map.length);
      if (a >= b || !piece.node.isConnected) continue;
      const from = piece.map[a - piece.start];
      const to = piece.map[b - 1 - piece.start] + 1;
      for (const node of segments(piece.node, from, to)) {
        if (owner.get(node) !== checkId || !node.parentNode) continue; // a newer check took this text
        const old = node.parentElement?.closest(MARK_SELECTOR);
        if (old && old.dataset.check === checkId) continue; // overlapping claims of one check: never nest
        if (old) unmark(old); // re-checked text: the newer check's highlight replaces the older one
        const mark = document.createElement("mark");
        mark.dataset.check = checkId;
        mark.dataset.claimId = String(claim.id);
        style(mark, claim, marked === 0);
        node.parentNode.insertBefore(mark, node);
        mark.appendChild(node);
        marked++;
      }
    }
    return marked;
  }

  ext.runtime.onMessage.addListener((message, sender, reply) => {
    if (message?.type === "factcheck-capture") {
      const selection = window.getSelection();
      if (!selection || selection.rangeCount === 0 || selection.isCollapsed) {
        reply({ text: "", url: location.href, title: document.title });
        return false;
      }
      const { text, pieces } = capture(selection.getRangeAt(0));
      captures.set(message.checkId, pieces);
      for (const piece of pieces) owner.set(piece.node, message.checkId);
      reply({ text, url: location.href, title: document.title });
    } else if (message?.type === "factcheck-highlight") {
      let marked = 0;
      for (const claim of message.claims) marked += highlight(message.checkId, claim);
      reply({ marked });
    } else if (message?.type === "factcheck-unmark-pending") {
      const selector = `${MARK_SELECTOR}.factcheck-pending[data-check="${CSS.escape(message.checkId)}"]`;
      for (const mark of document.querySelectorAll(selector)) mark.replaceWith(...mark.childNodes);
      reply({});
    }
    return false;
  });
})();
