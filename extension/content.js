// Content script: captures the rendered text of the selection and highlights each check's claims by their spans.
// Injected on demand (activeTab) into the frame holding the selection, possibly more than once: it guards itself.
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
  // A space stands for a reference mark left out ("Berlin.<sup>4</sup>Construction" is "Berlin. Construction").
  const SEPARATORS = ["", " ", "\t", "\n", "\n\n"];
  // Displays that start and end a block (a flex or grid item's display is computed as block).
  const BLOCK_DISPLAY = /^(block|flow-root|list-item|flex|grid|table|table-row|table-row-group|table-header-group|table-footer-group|table-caption)(\s|$)/;
  const MARK_SELECTOR = "mark.factcheck-claim";
  // BIDI_CONTROLS, INVISIBLE and isWeak below repeat api.js's on purpose: this script is injected into pages
  // alone (no api.js there), so it holds its own copies; keep them the same.
  // Characters that reorder the text around them (LRM, RLM, ALM, the embeddings, overrides and isolates):
  // a claim's tooltip is shown without them, so that it cannot be made to read backwards.
  const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  // Invisible format characters (zero-width spaces and joiners, LRM and RLM, word joiners and invisible
  // operators, the byte order mark, the soft hyphen): never sent, so "Smo\u200bking" is checked as "Smoking".
  const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]/;
  // A footnote's mark: a short number or letter ("2", "[4]", "4, 7", "a", "*"), and a link to a note.
  const NOTE_TEXT = /^\[?\s*(?:\d{1,3}(?:\s*[,\u2013-]\s*\d{1,3})*|[a-z]|[*\u2020\u2021\u00a7]{1,3})\s*\]?$/i;
  const NOTE_LINK = /^#(?:cite[_-]?note|cite[_-]?ref|fn|footnote|endnote|note|ref)/i;
  // What a footnote number follows when it is not an exponent (10<sup>6</sup>): the end of a sentence or clause.
  const AFTER_PUNCTUATION = /[.!?,;:)\]"'\u201d\u2019]$/;
  const LEFT_OUT_MAX = 20; // passages of a selection listed as left out of its check (the rest are counted, not named)
  // An icon font, whose ligatures draw a word ("info", "home") as a picture (Material Icons, Font Awesome).
  const ICON_FONT = /icon|symbols|awesome|glyph/i;
  // Text whose colour is this close to its background's is hidden: a contrast ratio (WCAG 2's, from relative
  // luminance: 1 for equal colours, 21 for black on white) under 1.2, as #f0f0f0 or #fafafa text on white.
  // Light text that a reader can make out (#ddd on white is 1.36) is checked.
  const LIKE_BACKGROUND = 1.2;
  // Elements that paint a picture under or over text: a colour comparison cannot say what shows there.
  const PICTURES = new Set(["img", "picture", "video", "canvas", "svg", "iframe", "embed", "object", "input"]);

  const captures = new Map(); // check id -> its captured text and pieces (see capture), and units (see unitOffsets)
  const owner = new WeakMap(); // text node -> id of the newest check that captured it (only it may mark it)
  const nextPart = new WeakMap(); // text node -> the node split off its end (by split), to follow old offsets
  const marks = new Map(); // "<check id>\0<claim id>" -> that claim's marks, in the document or in shadow roots
  const styledRoots = new WeakSet(); // shadow roots given the highlight styles
  let highlightSheet = null; // highlight.css for shadow roots ({css, sheet}; insertCSS styles the document only)

  /** The node's parent in the rendered (flat) tree: a slotted node's slot, a shadow root's host. */
  function flatParent(node) {
    return node.assignedSlot ?? node.parentElement ?? node.parentNode?.host ?? null;
  }

  /** The children that render: an open shadow root's instead of the host's own, a slot's assigned nodes. */
  function flatChildren(element) {
    if (element.shadowRoot) return element.shadowRoot.childNodes;
    if (element.localName === "slot") {
      const assigned = element.assignedNodes();
      return assigned.length ? assigned : element.childNodes; // an empty slot shows its fallback content
    }
    return element.childNodes;
  }

  /**
   * Whether an element and its subtree are rendered as text (display:none, script, aria-hidden decoration
   * are not). Text hidden from screen readers alone (aria-hidden) that has words is what a sighted reader
   * sees: it is checked where it shows; its screen-reader copy, if any, is clipped away (see hiddenAs).
   */
  function rendered(element) {
    if (UNRENDERED.has(element.localName)) return false;
    if (element.getAttribute("aria-hidden") === "true" && decoration(element)) return false;
    return getComputedStyle(element).display !== "none";
  }

  /** Whether text hidden from screen readers is decoration: no letter or digit (★★★★☆, ›), or an icon font's ligature. */
  function decoration(element) {
    return !/[\p{L}\p{N}]/u.test(element.textContent) || ICON_FONT.test(getComputedStyle(element).fontFamily);
  }

  /**
   * Whether a computed colour is fully transparent, however it is written: `transparent`, `rgba(0, 0, 0, 0)`,
   * or an alpha of 0 in a modern colour space (`oklch(0 0 0 / 0)`, `color(srgb 0 0 0 / 0%)`), as rgba() reads it.
   */
  function transparent(color) {
    return rgba(String(color).trim())?.[3] === 0;
  }

  // A shadow's colour in a computed text-shadow ("rgb(0, 0, 0) 1px 1px 2px"): a colour function, a hex or a name.
  const shadowColor = (shadow) => /^\s*([a-z-]+\([^)]*\)|#[0-9a-f]+|[a-z]+)/i.exec(shadow)?.[1] ?? "";
  // The shadows of a computed text-shadow, split at the commas between them, not those inside a colour function.
  const shadowsOf = (shadows) => (shadows === "none" ? [] : shadows.split(/,(?![^(]*\))/));

  /** Whether a text shadow paints: some shadow of the list has a colour that is not transparent. */
  function shadowPaints(shadows) {
    return shadowsOf(shadows).some((shadow) => !transparent(shadowColor(shadow)));
  }

  /**
   * Whether an element's glyphs are painted: their fill is not transparent, or a stroke, a text shadow or
   * a background clipped to the text (gradient headings: transparent text over `background-clip: text`) shows them.
   */
  function inked(element, style) {
    if (!transparent(style.webkitTextFillColor || style.color)) return true;
    if (parseFloat(style.webkitTextStrokeWidth) > 0 && !transparent(style.webkitTextStrokeColor)) return true;
    if (shadowPaints(style.textShadow)) return true;
    for (let box = element; box && box.nodeType === Node.ELEMENT_NODE; box = flatParent(box)) {
      const boxStyle = getComputedStyle(box);
      if (boxStyle.backgroundClip === "text" || boxStyle.webkitBackgroundClip === "text") return true;
    }
    return false;
  }

  /**
   * Whether an element's own clip leaves nothing of it: a clip-path inset() of 100% (or more), a circle()
   * or ellipse() of radius 0, or the legacy clip: rect() of no area. Other shapes are taken as showing.
   */
  function clipsAll(element, style) {
    const path = style.clipPath;
    const inset = /^inset\(([^)]*)\)/.exec(path);
    if (inset) {
      const box = element.getBoundingClientRect();
      const length = (value, size) => (value.endsWith("%") ? (parseFloat(value) * size) / 100 : parseFloat(value) || 0);
      // top, right, bottom, left, repeated as for margins; a "round" corner radius does not matter.
      const [top, right = top, bottom = top, left = right] = inset[1].split(/\s+round\s/)[0].trim().split(/\s+/);
      if (length(top, box.height) + length(bottom, box.height) >= box.height) return true;
      if (length(left, box.width) + length(right, box.width) >= box.width) return true;
    }
    if (/^(circle|ellipse)\(0(px|%)?[\s)]/.test(path)) return true;
    const rect = /^rect\(([^)]*)\)/.exec(style.clip); // applies to an absolutely positioned element only
    if (rect && (style.position === "absolute" || style.position === "fixed")) {
      const [top, right, bottom, left] = rect[1].split(/[\s,]+/).map(parseFloat);
      if (bottom - top <= 0 || right - left <= 0) return true;
    }
    return false;
  }

  /** Whether an element or one of its ancestors is clipped to nothing (a clip hides the whole subtree). */
  function clippedAway(element, memo) {
    if (!memo.clipped.has(element)) {
      const parent = flatParent(element);
      const above = parent?.nodeType === Node.ELEMENT_NODE && clippedAway(parent, memo);
      memo.clipped.set(element, above || clipsAll(element, getComputedStyle(element)));
    }
    return memo.clipped.get(element);
  }

  /**
   * Why an element's own text does not show, by its style, or null when it shows: invisible, transparent
   * (opacity 0, or glyphs of no colour), in a collapsed section, of font size 0, clipped to nothing or to a
   * pixel (a screen-reader-only label), or the colour of its background. Where its text lies (off-screen,
   * in a closed accordion, scaled to nothing) is for unseen() to say. The reason is a short phrase for the
   * popup's list of what was left out.
   */
  function hiddenAs(element, memo) {
    if (!memo.hidden.has(element)) memo.hidden.set(element, hiddenWhy(element, memo));
    return memo.hidden.get(element);
  }

  function hiddenWhy(element, memo) {
    const style = getComputedStyle(element);
    // An element of display: contents (a <slot>, a framework's wrapper) has no box, which checkVisibility
    // takes as hidden: its parent's visibility is its own.
    const parent = flatParent(element);
    if (style.display === "contents") return parent?.nodeType === Node.ELEMENT_NODE ? hiddenAs(parent, memo) : null;
    // The extension's own mark (a pale background, dark text) shows what its parent shows: text marked by an
    // earlier check is as visible as it was before (light text on a dark page, inside a pale mark, included).
    if (element.matches(MARK_SELECTOR)) return parent?.nodeType === Node.ELEMENT_NODE ? hiddenAs(parent, memo) : null;
    // checkVisibility leaves content-visibility: auto alone (contentVisibilityAuto: false, its default): it
    // only puts off painting what is far from view, which a reader scrolls to.
    if (element.checkVisibility && !element.checkVisibility({ opacityProperty: true, visibilityProperty: true })) {
      // In a collapsed section (content-visibility: hidden, hidden="until-found", a closed <details>)?
      if (!element.checkVisibility()) return collapsedWhy(element);
      if (!element.checkVisibility({ visibilityProperty: true })) return "hidden: visibility: hidden";
      if (!notYetShown(element)) return "hidden: transparent (opacity: 0)";
      // Not yet shown: faded in when scrolled to (the other ways to hide it are still asked below).
    }
    if (!element.checkVisibility && style.visibility !== "visible") return "hidden: visibility: hidden";
    const box = element.getBoundingClientRect();
    const outOfFlow = style.position === "absolute" || style.position === "fixed";
    if (outOfFlow && box.width <= 1 && box.height <= 1) return "hidden: a one-pixel box (text for screen readers)";
    if (parseFloat(style.fontSize) === 0) return "hidden: font size 0";
    if (!inked(element, style)) return "hidden: transparent text";
    if (clippedAway(element, memo)) return "hidden: clipped to nothing";
    if (likeBackground(element, style, memo)) return "hidden: text the colour of its background";
    return null;
  }

  /**
   * Whether an element at opacity 0 is only not yet shown: a page that reveals its text as the reader scrolls
   * (a scroll-animation library) keeps what lies below the fold at opacity 0 until it is scrolled to, and
   * fades it in. Each box of opacity 0 around it must be such a box: one that fades in (a transition or an
   * animation on its opacity) or that lies below the viewport. A box of opacity 0 in view that never
   * fades in is hidden.
   */
  function notYetShown(element) {
    let found = false;
    for (let box = element; box?.nodeType === Node.ELEMENT_NODE; box = flatParent(box)) {
      const style = getComputedStyle(box);
      if (parseFloat(style.opacity) > 0) continue;
      found = true;
      if (!fadesIn(style) && box.getBoundingClientRect().top < innerHeight) return false;
    }
    return found;
  }

  /** Whether a style animates its opacity: an animation, or a transition of opacity (or all) that takes time. */
  function fadesIn(style) {
    if (style.animationName !== "none" && parseFloat(style.animationDuration) > 0) return true;
    const properties = style.transitionProperty.split(/,\s*/);
    const durations = style.transitionDuration.split(/,\s*/); // repeated when shorter than the properties
    return properties.some((property, index) =>
      (property === "opacity" || property === "all") && parseFloat(durations[index % durations.length]) > 0);
  }

  /** Why an element's content is collapsed (a reason, see hiddenAs), or null when it is not. */
  function collapsed(element) {
    if (element.localName === "details" && !element.open) return "hidden: collapsed section (a closed <details>)";
    if (getComputedStyle(element).contentVisibility !== "hidden") return null;
    if (element.getAttribute("hidden") === "until-found") return "hidden: collapsed section (hidden=until-found)";
    return "hidden: content-visibility: hidden";
  }

  /** The collapsed section an element is in, as a reason: the nearest collapsed ancestor's. */
  function collapsedWhy(element) {
    for (let box = flatParent(element); box?.nodeType === Node.ELEMENT_NODE; box = flatParent(box)) {
      const why = collapsed(box);
      if (why) return why;
    }
    return "hidden: collapsed section";
  }

  const colours = new Map(); // a computed colour -> [r, g, b, alpha] (0-255, alpha 0-1), or null if unread
  let palette = null; // a one-pixel canvas that reads any colour (oklch(), color(display-p3 …)) as sRGB

  /** A computed colour as [r, g, b, alpha] in sRGB, or null if it cannot be read. */
  function rgba(color) {
    if (!colours.has(color)) {
      const legacy = /^rgba?\((\d+(?:\.\d+)?), (\d+(?:\.\d+)?), (\d+(?:\.\d+)?)(?:, (\d*\.?\d+))?\)$/.exec(color);
      let value = legacy ? [+legacy[1], +legacy[2], +legacy[3], legacy[4] === undefined ? 1 : +legacy[4]] : null;
      if (!value && typeof OffscreenCanvas === "function") {
        palette ??= new OffscreenCanvas(1, 1).getContext("2d", { willReadFrequently: true });
        if (palette) {
          palette.clearRect(0, 0, 1, 1);
          palette.fillStyle = "#000"; // kept if the colour is not one the canvas reads
          palette.fillStyle = color;
          palette.fillRect(0, 0, 1, 1);
          const [r, g, b, a] = palette.getImageData(0, 0, 1, 1).data;
          value = [r, g, b, a / 255];
        }
      }
      colours.set(color, value);
    }
    return colours.get(color);
  }

  /** A colour laid over an opaque one (alpha compositing): the opaque colour seen. */
  function over([r, g, b, a], [r0, g0, b0]) {
    return [r * a + r0 * (1 - a), g * a + g0 * (1 - a), b * a + b0 * (1 - a)];
  }

  /** WCAG 2's contrast ratio of two opaque sRGB colours, from their relative luminance: 1 (equal) to 21. */
  function contrast(one, two) {
    const luminance = (rgb) => {
      const [r, g, b] = rgb.map((c) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4));
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const [light, dark] = [luminance(one), luminance(two)].sort((x, y) => y - x);
    return (light + 0.05) / (dark + 0.05);
  }

  /**
   * The page's canvas, under every background, when it is known: white. Not known (null) in a frame, whose
   * canvas shows the page around it, or under a dark colour scheme, whose canvas is dark.
   */
  function canvas(memo) {
    if (memo.canvas === undefined) {
      const schemes = `${getComputedStyle(document.documentElement).colorScheme} ${
        document.querySelector('meta[name="color-scheme"]')?.getAttribute("content") ?? ""}`;
      const known = window === window.top && !/dark/.test(schemes);
      memo.canvas = known ? [255, 255, 255] : null;
    }
    return memo.canvas;
  }

  /**
   * The colour an element's text is painted on: the first background colour up the flat tree (colours with
   * alpha laid over those below), else the page's canvas; null when that is not known: a background image
   * or gradient on the way, or a canvas not known (see canvas).
   */
  function backdrop(element, memo) {
    if (!memo.backdrop.has(element)) {
      const style = getComputedStyle(element);
      const parent = flatParent(element);
      const below = () => (parent?.nodeType === Node.ELEMENT_NODE ? backdrop(parent, memo) : canvas(memo));
      let seen;
      // No box: paints no background; the extension's own mark is not the page's background.
      if (style.display === "contents" || element.matches(MARK_SELECTOR)) seen = below();
      else if (style.backgroundImage !== "none") seen = null;
      else {
        const color = rgba(style.backgroundColor);
        if (!color) seen = null;
        else if (color[3] >= 1) seen = color.slice(0, 3);
        else {
          const under = below();
          seen = under && (color[3] > 0 ? over(color, under) : under);
        }
      }
      memo.backdrop.set(element, seen);
    }
    return memo.backdrop.get(element);
  }

  /**
   * Whether an element's text is painted in (nearly) the colour it is painted on: a contrast ratio under
   * LIKE_BACKGROUND between its colour (laid over its backdrop) and its backdrop. Whatever makes that unsure
   * keeps the text, never leaving out text a reader sees on a guess: an outline or shadow of another colour, a
   * background image or gradient under them (see backdrop), a filter or blend mode above them, an inset shadow,
   * a pseudo-element or any other box (a photo under a caption) painted where the text is. SVG text is kept.
   */
  function likeBackground(element, style, memo) {
    if (element instanceof SVGElement) return false; // an SVG text's fill, and the shapes under it, are its own
    if (transparent(style.webkitTextFillColor || style.color)) return false; // glyphs of no colour: see inked()
    if ((memo.forced ??= matchMedia("(forced-colors: active)").matches)) return false; // a high-contrast theme's own colours
    const under = backdrop(element, memo);
    if (!under) return false;
    // The glyphs' fill, outline and shadows, each like the backdrop (a transparent one is; an unread one is not).
    const like = (color) => {
      const value = rgba(color);
      return Boolean(value) && contrast(over(value, under), under) < LIKE_BACKGROUND;
    };
    if (!like(style.webkitTextFillColor || style.color)) return false;
    if (parseFloat(style.webkitTextStrokeWidth) > 0 && !like(style.webkitTextStrokeColor)) return false;
    if (!shadowsOf(style.textShadow).every((shadow) => like(shadowColor(shadow)))) return false;
    // A colour like its backdrop's: look for anything else painted there.
    const chain = [];
    let opaque = false; // below the first opaque background, nothing paints through (but a filter above it acts)
    for (let box = element; box?.nodeType === Node.ELEMENT_NODE; box = flatParent(box)) {
      const boxStyle = getComputedStyle(box);
      if (boxStyle.filter !== "none" || boxStyle.backdropFilter !== "none" || boxStyle.mixBlendMode !== "normal") return false;
      chain.push(box);
      if (opaque) continue;
      if (/inset/.test(boxStyle.boxShadow)) return false; // an inset shadow paints over the background
      for (const pseudo of ["::before", "::after"]) {
        const drawn = getComputedStyle(box, pseudo);
        if (drawn.content !== "none" && (drawn.backgroundImage !== "none" || !transparent(drawn.backgroundColor))) return false;
      }
      opaque = (rgba(boxStyle.backgroundColor)?.[3] ?? 0) >= 1;
    }
    return !paintedOver(element, chain, memo);
  }

  /**
   * Whether a box other than the element's own and its ancestors' (a picture, a background, a positioned
   * photo laid under a caption) is painted where the element's own text is.
   */
  function paintedOver(element, chain, memo) {
    const range = document.createRange();
    const rects = [];
    for (const child of element.childNodes) {
      if (child.nodeType !== Node.TEXT_NODE || !/\S/.test(child.data)) continue;
      range.selectNodeContents(child);
      rects.push(...range.getClientRects());
    }
    if (!rects.length) rects.push(element.getBoundingClientRect());
    const root = element.getRootNode();
    for (const scope of root === document ? [document] : [document, root]) {
      if (!memo.painters.has(scope)) memo.painters.set(scope, painters(scope));
    }
    const mine = new Set(chain);
    const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
      && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
    return [...memo.painters.values()].flat().some(
      (painter) => !mine.has(painter.element) && rects.some((rect) => overlap(rect, painter.box)),
    );
  }

  /** The boxes of a document or shadow root that paint something of their own: a picture, a background. */
  function painters(scope) {
    const found = [];
    for (const element of scope.querySelectorAll("*")) {
      if (!PICTURES.has(element.localName)) {
        const style = getComputedStyle(element);
        if (style.backgroundImage === "none" && transparent(style.backgroundColor)) continue;
      }
      const box = element.getBoundingClientRect();
      if (box.width > 0 && box.height > 0) found.push({ element, box });
    }
    return found;
  }

  /**
   * How an element bounds the text it contains, read once per capture: its position and transform
   * (which decide whether it contains an out-of-flow box), and the box its overflow cuts to, per axis
   * (cut: null when it cuts nothing). A hidden or clip overflow cuts; a scrolling one only when its box
   * has no area (a reader can scroll to the rest). The page's own overflow scrolls the page: never a cut.
   */
  function bounds(element, memo) {
    if (!memo.bounds.has(element)) {
      const style = getComputedStyle(element);
      const box = element.getBoundingClientRect();
      const empty = box.width <= 0 || box.height <= 0;
      const cuts = (mode) => /hidden|clip/.test(mode) || (/auto|scroll/.test(mode) && empty);
      const page = element === document.documentElement || element === document.body;
      const [x, y] = page ? [false, false] : [cuts(style.overflowX), cuts(style.overflowY)];
      memo.bounds.set(element, { position: style.position, transformed: style.transform !== "none", cut: x || y ? { x, y, box } : null });
    }
    return memo.bounds.get(element);
  }

  /**
   * How far the reader can scroll the page: the whole document, and across only the viewport when the page
   * hides its horizontal overflow (text at left: 200vw under overflow-x: hidden is out of reach). Not
   * down: a page that locks its vertical scrolling while a dialog is open still shows the article below.
   */
  function pageReach() {
    const root = document.documentElement;
    const styles = [getComputedStyle(root), ...(document.body ? [getComputedStyle(document.body)] : [])];
    const hidesX = styles.some((style) => /hidden|clip/.test(style.overflowX));
    return { width: hidesX ? root.clientWidth : root.scrollWidth, height: root.scrollHeight };
  }

  /**
   * Why the reader cannot see a piece of text at rect (viewport coordinates) whose parent is given, or null
   * when they can: the rect has an area (not font-size 0 or scale(0)), is not wholly outside the document
   * (left: -9999px, text-indent: -9999px), and no ancestor's overflow cuts it away (a max-height: 0
   * accordion). Only the boxes that contain it cut it: an absolutely positioned box escapes the overflow
   * of ancestors that are not positioned, a fixed one that of every ancestor but a transformed one.
   */
  function rectHidden(rect, parent, memo) {
    if (rect.width <= 0 || rect.height <= 0) return "hidden: no size on the page";
    const [x, y] = [rect.left + scrollX, rect.top + scrollY]; // document coordinates
    const { width, height } = (memo.reach ??= pageReach());
    if (x + rect.width <= 0 || y + rect.height <= 0 || x >= width || y >= height) return "hidden: off the page";
    let { left, top, right, bottom } = rect;
    let escape = ""; // how the box below left the normal flow: "" (it did not), "absolute" or "fixed"
    for (let element = parent; element?.nodeType === Node.ELEMENT_NODE; element = flatParent(element)) {
      const { position, transformed, cut } = bounds(element, memo);
      const contains = escape === "" || (escape === "absolute" ? position !== "static" : transformed);
      if (!contains) continue;
      if (cut?.x) [left, right] = [Math.max(left, cut.box.left), Math.min(right, cut.box.right)];
      if (cut?.y) [top, bottom] = [Math.max(top, cut.box.top), Math.min(bottom, cut.box.bottom)];
      if (right <= left || bottom <= top) return "hidden: cut off by the box around it";
      escape = position === "absolute" || position === "fixed" ? position : "";
    }
    return null;
  }

  /**
   * Why the reader cannot see characters [from, to) of a text node, by where they are laid out, or null
   * when one of the boxes of their lines is seen (rectHidden): the first box's reason. A text partly cut (a
   * one-line title ending in "…", a preview under "Read more") counts whole: a sentence is checked whole,
   * never a fragment of it.
   */
  function unseen(node, from, to, memo) {
    const range = document.createRange();
    range.setStart(node, from);
    range.setEnd(node, to);
    let why = "hidden: no size on the page";
    for (const [index, rect] of [...range.getClientRects()].entries()) {
      const hidden = rectHidden(rect, flatParent(node), memo);
      if (!hidden) return null;
      if (index === 0) why = hidden;
    }
    return why;
  }

  /**
   * Whether an element is a footnote's reference mark: a <sup> or a link whose text is a short number or
   * letter (NOTE_TEXT) that links to a note (#cite_note-4, #fn:1, role="doc-noteref"), or a <sup> of such
   * text right after a sentence's or clause's end ("two.<sup>2</sup>"; "mc<sup>2</sup>" is an exponent).
   */
  function referenceMark(element, before) {
    if (element.localName !== "sup" && element.localName !== "a") return false;
    if (!NOTE_TEXT.test(element.textContent.trim())) return false;
    const link = element.localName === "a" ? element : element.querySelector("a[href]");
    const noteRef = (node) => node?.getAttribute("role") === "doc-noteref";
    if (noteRef(element) || noteRef(link) || NOTE_LINK.test(link?.getAttribute("href") ?? "")) return true;
    return element.localName === "sup" && AFTER_PUNCTUATION.test(before);
  }

  // What a page's structure says is not its article's claims, [selector, reason]: the first that matches wins.
  // Reasons are said to the reader in the popup ("Left out of the check: … a heading").
  const PULL_QUOTE = "a pull quote: repeats the article's text";
  const COMMENTS = "a comment counter";
  // Readers' comments below an article: a comments section, a comment's microdata, an <article> inside an
  // article (HTML's way to mark a comment on it). Not left out of a selection made inside them.
  const COMMENT_SECTION = "#comments, .comments, [itemtype*=Comment], article article";
  const READER_COMMENTS = "reader comments";
  const HEADER = "a header: title, byline or date";
  const HEADINGS = "h1, h2, h3, h4, h5, h6, [role=heading]";
  const STRUCTURE = [
    [HEADINGS, "a heading"],
    ["figcaption", "a figure caption"],
    [".pullquote, .pull-quote, [role=doc-pullquote]", PULL_QUOTE],
    [
      "ins.adsbygoogle, [aria-label*=advert i], [class~=advertisement], [class~=ad-slot], [data-ad-slot], [id^=div-gpt-ad]",
      "an advertisement",
    ],
    ["[role=note], .hatnote", "a hatnote: a note about the article, not of it"],
    ["[role=doc-endnotes], [role=doc-bibliography], ol.references, .reflist", "the references"],
    ["address, .byline", "a byline"],
    [".dateline", "a dateline"],
    [COMMENT_SECTION, READER_COMMENTS],
    [".related, .related-stories, .more-stories", "teasers of other stories"],
    ["nav, [role=navigation]", "the page's navigation"],
    ["header, [role=banner]", HEADER],
    ["footer, [role=contentinfo]", "a footer"],
    ["aside, [role=complementary]", "an aside: beside the article's text"],
    [".comment-count, .comments-count", COMMENTS],
  ];
  // Elements that may repeat the article's own words (a pull quote drawn from it): left out only when they do.
  const QUOTES = "aside, blockquote, [role=complementary]";
  // The text of a whole element that is no claim: a comment counter ("Comments (3)", "12 comments") or an
  // ad's label. Read from elements with no child element (leaves).
  const COMMENT_COUNT =
    /^(?:(?:comments?|responses?|replies)\s*[:(]?\s*\d[\d,.]*\s*k?\)?|\d[\d,.]*\s*k?\s*(?:comments?|responses?|replies)|no comments|(?:leave|add|post|show|view) (?:a |all )?comments?|join the (?:discussion|conversation))$/i;
  const AD_LABEL = /^(?:advertisement|advertising|sponsored(?: content)?|anzeige|publicité)$/i;
  // The words a dateline holds beside its date ("Updated", "Published 10:42 am", "Monday", "5 min read").
  const DATELINE_WORD = new RegExp(
    "^(?:by|updated?|published|posted|modified|last|on|at|\\d+|min|mins|minutes?|read|am|pm|utc|gmt|[ecmp][sd]t|cet|cest|bst|" +
      "mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?|" +
      "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|" +
      "nov(?:ember)?|dec(?:ember)?)$",
    "i",
  );
  // A line's own elements that name its author or give its date; a comment link.
  const AUTHOR = '[rel~="author"], [itemprop~="author"]';
  const COMMENT_LINK = 'a[href$="#comments"], a[href$="#respond"], a[href$="#disqus_thread"]';

  const squeezed = (text) => String(text ?? "").replace(/\s+/g, " ").trim();
  /** A text's words only, lower case: a pull quote's words are found in the article's whatever its quotes. */
  const wordsOf = (text) => String(text ?? "").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();

  /**
   * The block an element's text is a line of (a byline's paragraph or div), within scope: the element
   * itself when it is a block; null when none is found below the scope (the scope is never left out).
   */
  function lineOf(element, scope) {
    for (let box = element; box && box !== scope; box = flatParent(box)) {
      if (box.nodeType === Node.ELEMENT_NODE && BLOCK_DISPLAY.test(getComputedStyle(box).display)) return box;
    }
    return null;
  }

  /**
   * The lines of a scope that its structure says are no claims, by what they hold: an author's name
   * (rel=author, itemprop=author), a <time>, a comment counter or link, an ad's label, with at most a
   * few other words ("By Jane Doe · Updated May 10, 2014 · Comments (3)"): element -> reason. A <time>,
   * an author's link, a counter's or an ad label's words inside a sentence are the sentence's ("revenue
   * from <a>advertising</a>.", "The post drew <a>300 comments</a> in an hour", "Die Polizei hat
   * <a>Anzeige</a> erstattet."): only a line of them is left out.
   */
  function structuralLines(scope) {
    const found = new Map();
    if (!scope?.querySelectorAll) return found;
    const tokens = []; // [element, reason]
    for (const element of scope.querySelectorAll(AUTHOR)) tokens.push([element, "a byline"]);
    for (const element of scope.querySelectorAll("time")) tokens.push([element, "a dateline"]);
    for (const element of scope.querySelectorAll(COMMENT_LINK)) tokens.push([element, COMMENTS]);
    for (const element of scope.querySelectorAll("a, button, span, div, p, li, small")) {
      if (element.childElementCount > 0) continue;
      const said = squeezed(element.textContent);
      if (said.length > 60) continue;
      if (COMMENT_COUNT.test(said)) tokens.push([element, COMMENTS]);
      else if (AD_LABEL.test(said)) tokens.push([element, "an advertisement"]);
    }
    const lines = new Map(); // line -> its tokens
    for (const [element, reason] of tokens) {
      const line = lineOf(element, scope);
      if (line) lines.set(line, [...(lines.get(line) ?? []), [element, reason]]);
    }
    for (const [line, held] of lines) {
      let rest = squeezed(line.textContent);
      for (const [element] of held) rest = rest.replace(squeezed(element.textContent), " ");
      const words = rest.match(/[\p{L}\p{N}]+/gu) ?? [];
      const sentence = words.length >= 3 && /[.!?]["'\u201d\u2019)]?$/.test(rest.trim());
      const reasons = held.map(([, reason]) => reason);
      // A counter's or an ad label's words are common words ("advertising", "Anzeige", "300 comments"): with
      // nothing of a byline or date beside them, a line of them has at most two other words ("Share · 12 comments").
      const few = reasons.some((reason) => reason === "a byline" || reason === "a dateline") ? 4 : 2;
      if (words.length > few || sentence) continue;
      if (reasons.every((reason) => reason === "a dateline") && !dateline(line, words, scope)) continue;
      // The line is its tokens and a few words ("By", "Updated", "·"): a byline first, then a date.
      found.set(line, reasons.includes("a byline") ? "a byline" : reasons[0]);
    }
    return found;
  }

  /**
   * Whether a short line holding a date (and no author) is a dateline: its other words are a dateline's
   * ("Updated", "Published", "5 min read", a weekday or month), or it lies at the top of the article, above
   * its first sentence. A table's row or a list's item with other words is data ("2020 | GDP fell 3.4%",
   * "1998: Smith elected mayor"), never a dateline.
   */
  function dateline(line, words, scope) {
    if (words.every((word) => DATELINE_WORD.test(word))) return true;
    if (line.closest("tr, li")) return false;
    for (const paragraph of scope.querySelectorAll("p")) {
      if (paragraph === line || !/[.!?]["'\u201d\u2019)]?\s*$/.test(paragraph.textContent)) continue;
      return Boolean(line.compareDocumentPosition(paragraph) & Node.DOCUMENT_POSITION_FOLLOWING); // above the first
    }
    return true;
  }

  /** A node's words as the page holds them, a space between blocks: its scripts, styles and display: none left out. */
  function passage(node) {
    if (node.nodeType === Node.TEXT_NODE) return node.data;
    if (node.nodeType !== Node.ELEMENT_NODE || UNRENDERED.has(node.localName)) return "";
    const display = getComputedStyle(node).display;
    if (display === "none") return "";
    const inner = [...flatChildren(node)].map(passage).join("");
    return /^(inline|contents)/.test(display) && node.localName !== "br" ? inner : ` ${inner} `;
  }

  /**
   * The selection's text as the reader sees it: rendered text only (hidden by style or laid out out of
   * sight: see hiddenAs and unseen), open shadow roots' text where it shows, white space collapsed as the
   * page shows it, a blank line between blocks, a line break for <br>, a tab between table cells, without
   * invisible format characters (INVISIBLE) and footnotes' reference marks (a space in their place). Each
   * character that comes from a text node remembers where (pieces: [{node, start, map}], map[i] being
   * the offset in node of the piece's i-th character), so the claims' spans can be mapped back. Text the
   * page holds in the selection that a reader cannot see is not sent, and is listed (leftOut: {reason,
   * text}, each passage once, as the outermost element that hides it), except what the page never renders
   * as text (display: none, scripts, styles, aria-hidden decoration).
   * With `structure` (the default), what the page's structure says is no claim of the article inside the
   * selection is left out too (see structural); the element the selection lies in is never left out, so
   * a reader who selects a caption alone has it checked.
   */
  function capture(range, { structure = true } = {}) {
    const pieces = [];
    const leftOut = new Map(); // "<reason>\0<text>" -> {reason, text}: what the reader sees (or the page holds) yet is not sent
    const memo = {
      hidden: new Map(), clipped: new Map(), bounds: new Map(), backdrop: new Map(), painters: new Map(), placed: new Map(),
    };
    const rangeRoot = range.commonAncestorContainer.getRootNode();
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
      // A reference mark's space: the page's own space where it has one (marked with the words around
      // it), none before punctuation ("Obesity<sup>[3]</sup>, diabetes").
      const gap = separator === " " && (space || /[.,;:!?)\]]/.test(character)) ? "" : separator;
      if (text && gap) text += gap;
      else if (text && space) push(space.node, space.offset, " ");
      separator = "";
      space = null;
      push(node, offset, character);
    };
    const separate = (next) => {
      if (SEPARATORS.indexOf(next) > SEPARATORS.indexOf(separator)) separator = next;
    };
    // A node of a shadow tree the walk entered is inside the selection as its host is (the range, in the
    // page's tree, cannot say: its boundaries are never inside a shadow tree it crosses).
    const selected = (node) => node.getRootNode() !== rangeRoot || range.intersectsNode(node);
    // Text of the selection left out of the check, listed in the popup with why (the first LEFT_OUT_MAX).
    const listed = new Set(); // the nodes left out so far: each once, however many of its texts meet it
    let unlisted = 0; // passages left out beyond the first LEFT_OUT_MAX: counted, not read
    const leaveOut = (node, reason) => {
      if (listed.has(node)) return;
      listed.add(node);
      if (leftOut.size >= LEFT_OUT_MAX) {
        if (/\S/.test(node.textContent)) unlisted++; // the cap first: passage() walks the subtree
        return;
      }
      const said = passage(node).replace(/\s+/g, " ").trim();
      if (!said) return;
      const points = [...said]; // clipped by code points: an emoji is never cut in half
      const shown = points.length > 160 ? `${points.slice(0, 159).join("")}…` : said;
      leftOut.set(`${reason}\u0000${shown}`, { reason, text: shown });
    };

    const entered = new Set(); // the elements the walk is inside
    // Read once per element (a big hidden carousel has thousands of texts under one container): the outermost
    // element found from it, and, per parent, its children with words that a reader sees.
    const outer = new Map(); // why -> Map(element -> its outermost)
    const shownChildren = new Map(); // why -> Map(parent -> its children with words that are not hidden)
    const memoOf = (maps, why) => maps.get(why) ?? maps.set(why, new Map()).get(why);
    const shownOf = (parent, why) => {
      const memoFor = memoOf(shownChildren, why);
      if (!memoFor.has(parent)) {
        memoFor.set(parent, [...flatChildren(parent)].filter((child) => child.nodeType === Node.ELEMENT_NODE
          && /\S/.test(child.textContent) && rendered(child) && why(child) === null));
      }
      return memoFor.get(parent);
    };
    // The outermost element, from a text's parent up to where the walk began, that is hidden the same way
    // (why(element) is the reason) and whose other children with words are hidden too: a passage is listed
    // once, as the element that hides it, not as each of its paragraphs.
    const outermost = (element, why, reason) => {
      const memoFor = memoOf(outer, why);
      if (memoFor.has(element)) return memoFor.get(element);
      let found = element;
      for (let parent = flatParent(found); parent && entered.has(parent) && why(parent) === reason; parent = flatParent(found)) {
        if (!shownOf(parent, why).every((child) => child === found)) break;
        found = parent;
      }
      memoFor.set(element, found);
      return found;
    };
    const styled = (element) => hiddenAs(element, memo);
    const placed = (element) => {
      if (!memo.placed.has(element)) {
        memo.placed.set(element, styled(element) ?? rectHidden(element.getBoundingClientRect(), flatParent(element), memo));
      }
      return memo.placed.get(element);
    };
    // Reasons no descendant can undo (a child's own style cannot show what these hide): once an element is
    // left out for one of them, the walk does not go on inside it.
    const FINAL = new Set(["hidden: transparent (opacity: 0)", "hidden: clipped to nothing", "hidden: off the page"]);
    let closed = null; // the element left out for a FINAL reason that the walk is leaving
    const leaveOutWhole = (element, reason) => {
      leaveOut(element, reason);
      if (FINAL.has(reason) && entered.has(element)) closed = element;
    };

    const addText = (node) => {
      const parent = flatParent(node);
      if (!parent) return;
      const from = node === range.startContainer ? range.startOffset : 0;
      const to = node === range.endContainer ? range.endOffset : node.data.length;
      const words = from < to && /\S/.test(node.data.slice(from, to));
      // Text hidden by a style a reader could be fooled by (white on white, font size 0, off the page) is
      // where an injection hides: it is listed in the popup, with why. (Text the page does not render at
      // all, display: none, a script, is not: see rendered.)
      const hidden = styled(parent);
      if (hidden) {
        if (words) leaveOutWhole(outermost(parent, styled, hidden), hidden);
        return;
      }
      if (from >= to) return;
      // White space alone is not asked: collapsed, or hanging at the end of a line, it has no box, yet it
      // still separates the words around it.
      const away = words ? unseen(node, from, to, memo) : null;
      if (away) {
        leaveOutWhole(outermost(parent, placed, away), away);
        return;
      }
      const whiteSpace = getComputedStyle(parent).whiteSpace;
      const keepSpaces = /^(pre|pre-wrap|break-spaces)$/.test(whiteSpace);
      const keepLines = keepSpaces || whiteSpace === "pre-line";
      for (let i = from; i < to; i++) {
        const character = node.data[i];
        if (INVISIBLE.test(character)) continue;
        if (character === "\n" && keepLines) write(node, i, "\n");
        else if (!keepSpaces && /[ \t\n\r\f]/.test(character)) space ??= { node, offset: i };
        else write(node, i, character);
      }
    };

    const root = range.commonAncestorContainer;
    const top = root.nodeType === Node.TEXT_NODE ? root.parentNode : root;
    const lines = structure ? structuralLines(top) : new Map();
    let selectionWords = null; // the selection's words, read once a possible pull quote is met
    // A selection made inside readers' comments is theirs to check: they are left out only around an article.
    const inComments = top.nodeType === Node.ELEMENT_NODE && Boolean(top.closest(COMMENT_SECTION));
    const standfirsts = new Map(); // an article's <header> -> its standfirst paragraphs (none: left out whole)
    const standfirstsOf = (header) => {
      if (!standfirsts.has(header)) {
        const sentence = (p) => {
          const said = squeezed(p.textContent);
          return (said.match(/[\p{L}\p{N}]+/gu) ?? []).length >= 4 && /[.!?]["'\u201d\u2019)]?$/.test(said);
        };
        const inArticle = Boolean(header.parentElement?.closest("article, main, [role=main]"));
        const kept = [...header.querySelectorAll("p")].filter(
          (p) => inArticle && sentence(p) && !lines.has(p) && !p.closest(`${HEADINGS}, address, .byline, .dateline`),
        );
        standfirsts.set(header, kept);
      }
      return standfirsts.get(header);
    };
    /**
     * Why the page's structure says an element inside the selection is no claim of the article, or null:
     * a heading, a caption, an aside, an ad, a byline, readers' comments... (STRUCTURE, structuralLines), or
     * a pull quote, an aside or block quote that repeats words the selection holds elsewhere (the repeat is
     * left out). Of an article's <header> only its title, byline and date are left out: a standfirst (a
     * paragraph of a sentence below the title) often says the article's main claim, and is checked.
     */
    const structural = (element) => {
      if (!structure || element === top) return null;
      if (lines.has(element)) return lines.get(element);
      const header = element.localName === "header" ? element : element.parentElement?.closest("header");
      if (header && header !== top && top.contains(header) && standfirstsOf(header).length) {
        const kept = standfirstsOf(header);
        if (kept.some((p) => p.contains(element))) return null; // a standfirst, or inside one
        if (kept.some((p) => element.contains(p))) {
          // Holds a standfirst: walked into, unless the structure leaves it out as a whole for another reason.
          const why = element === header ? null : STRUCTURE.find(([selector]) => element.matches(selector))?.[1];
          return why && why !== HEADER ? why : null;
        }
        return STRUCTURE.find(([selector]) => element.matches(selector))?.[1] ?? HEADER;
      }
      if (element.matches(QUOTES)) {
        const own = wordsOf(element.textContent);
        selectionWords ??= wordsOf(range.toString());
        const first = own.split(" ").length >= 4 ? selectionWords.indexOf(own) : -1;
        if (first >= 0 && selectionWords.indexOf(own, first + 1) >= 0) return PULL_QUOTE;
      }
      const why = STRUCTURE.find(([selector]) => element.matches(selector))?.[1] ?? null;
      return why === READER_COMMENTS && inComments ? null : why;
    };

    const walk = (node) => {
      if (node.nodeType === Node.TEXT_NODE) {
        if (selected(node)) addText(node);
        return;
      }
      if (node.nodeType !== Node.ELEMENT_NODE || !selected(node) || !rendered(node)) return;
      if (node.localName === "br") {
        separate(separator === "\n" || separator === "\n\n" ? "\n\n" : "\n");
        return;
      }
      if (referenceMark(node, text)) {
        separate(" ");
        return;
      }
      const style = getComputedStyle(node);
      const cell = style.display === "table-cell";
      const block = BLOCK_DISPLAY.test(style.display);
      // A floated or positioned box is out of the text's flow: showing nothing, it breaks no line around it.
      const outOfFlow = style.float !== "none" || style.position === "absolute" || style.position === "fixed";
      const why = structural(node);
      if (why) {
        // Listed where the reader sees it; a heading or a block still ends the sentence before it.
        if (!hiddenAs(node, memo)) leaveOut(node, why);
        if (!outOfFlow) separate(block || why === "a heading" ? "\n\n" : " ");
        return;
      }
      const before = { length: text.length, separator };
      if (block) separate("\n\n");
      else if (cell) separate("\t");
      // A collapsed section (hidden="until-found", content-visibility: hidden) is left out whole; a closed
      // <details> shows its summary only.
      const shut = collapsed(node);
      const summary = shut && node.localName === "details" ? [...node.children].find((c) => c.localName === "summary") : null;
      entered.add(node);
      if (shut && !summary) leaveOut(node, shut);
      else {
        for (const child of flatChildren(node)) {
          if (closed) break; // this element, or one it is inside, is left out whole
          if (shut && child !== summary) leaveOut(child, shut);
          else walk(child);
        }
      }
      entered.delete(node);
      if (closed === node) closed = null;
      if (outOfFlow && text.length === before.length) separator = before.separator;
      else if (block) separate("\n\n");
    };

    if (top instanceof ShadowRoot) top.childNodes.forEach(walk); // a selection inside one shadow root
    else walk(top);
    return { text, pieces, leftOut: [...leftOut.values()], leftOutCount: leftOut.size + unlisted };
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

  /** The character now at offset of node as it was captured (followed through its splits); undefined if gone. */
  function characterAt(node, offset) {
    while (offset >= node.length && nextPart.has(node)) {
      offset -= node.length;
      node = nextPart.get(node);
    }
    return node.isConnected && offset < node.length ? node.data[offset] : undefined;
  }

  /**
   * Whether the page still shows characters [start, end) of a check's text (UTF-16 offsets) where they were
   * captured, each the same (collapsed white space: any white space): a live blog, lazy content or a
   * single-page app may have replaced or rewritten them while the check ran.
   */
  function unchanged(captured, start, end) {
    for (const piece of captured.pieces) {
      const a = Math.max(start, piece.start);
      const b = Math.min(end, piece.start + piece.map.length);
      for (let k = a; k < b; k++) {
        const now = characterAt(piece.node, piece.map[k - piece.start]);
        const was = captured.text[k];
        if (now !== was && !(was === " " && now !== undefined && /\s/.test(now))) return false;
      }
    }
    return true;
  }

  /**
   * The UTF-16 offset of each code point of a text: the server's spans count code points (as Python does),
   * JavaScript's strings UTF-16 units, which an emoji or another astral character takes two of.
   */
  function unitOffsets(text) {
    const units = [0];
    for (const character of text) units.push(units[units.length - 1] + character.length);
    return units;
  }

  const claimKey = (checkId, claimId) => `${checkId}\u0000${claimId}`;

  /** A claim's marks still on the page. */
  function marksOf(key) {
    return (marks.get(key) ?? []).filter((mark) => mark.isConnected);
  }

  /** Remove an older check's highlight of one claim everywhere (its text stays where it is). */
  function unmark(mark) {
    const key = claimKey(mark.dataset.check, mark.dataset.claimId);
    for (const other of marksOf(key)) other.replaceWith(...other.childNodes);
    marks.delete(key);
  }

  /** Give a shadow root the highlight styles once, as the document has them. */
  function styleRoot(root) {
    if (!(root instanceof ShadowRoot) || styledRoots.has(root) || !highlightSheet) return;
    styledRoots.add(root);
    try {
      root.adoptedStyleSheets = [...root.adoptedStyleSheets, highlightSheet.sheet];
    } catch (_) {
      // A content script's sheet may be refused by the page's shadow root (Firefox's wrappers): a copy in a <style>.
      root.append(Object.assign(document.createElement("style"), { textContent: highlightSheet.css }));
    }
  }

  /** Weak as the server says (the claim's "strength"), else by the same rule: |2·score − 1| below 0.5. */
  function isWeak(claim) {
    if (claim.strength === "weak" || claim.strength === "strong") return claim.strength === "weak";
    return typeof claim.score === "number" && Math.abs(2 * claim.score - 1) < 0.5;
  }

  // The labels a server may send; anything else is shown as UNVERIFIED (a class name is never the server's text).
  const LABELS = new Set(["TRUE", "FALSE", "PARTLY TRUE", "UNVERIFIED"]);

  function style(mark, claim, first) {
    if (!claim.pending && !LABELS.has(claim.label)) claim = { ...claim, label: "UNVERIFIED" };
    const label = claim.pending ? "pending" : String(claim.label).toLowerCase().replace(/\s+/g, "-");
    mark.className = `factcheck-claim factcheck-${label}`;
    if (!claim.pending && isWeak(claim)) mark.classList.add("factcheck-weak");
    if (first) mark.classList.add("factcheck-first"); // carries the icon, once per claim
    mark.dataset.label = claim.pending ? "" : claim.label;
    const score = typeof claim.score === "number" ? ` ${claim.score.toFixed(2)}${isWeak(claim) ? ", weak" : ""}` : "";
    const text = String(claim.text ?? "").replace(BIDI_CONTROLS, "");
    // The server's caution (the evidence may not fit this page), which background.js lays on each claim.
    const caution = claim.caution ? `\n⚠ ${String(claim.caution).replace(BIDI_CONTROLS, "")}` : "";
    // Why its agents could not judge it (a language none of them reads), also laid on by background.js.
    const unread = claim.unread ? `\n${String(claim.unread).replace(BIDI_CONTROLS, "")}` : "";
    mark.title = claim.pending ? `factcheck: checking… ${text}` : `factcheck: ${claim.label}${score}: ${text}${unread}${caution}`;
  }

  /**
   * Highlight one claim of a check on its own captured text, or restyle its highlight if it has one on the
   * same span: how many marks it has, and whether the page changed there (its text is no longer what was
   * checked: then it has none, and a highlight it had is taken off). The claim's span counts code points of
   * the text sent. A check run again keeps its id (a retry, a check in parts), and its claims' ids may name
   * other text then: each mark keeps its claim's span (data-span) and the run that marked it (data-run, the
   * background's id of one runCheck), so a claim whose span differs is marked anew where it lies, and an
   * earlier run's mark of the same check in its way is taken off; the marks of one run never nest.
   */
  function highlight(checkId, claim, run = "") {
    const key = claimKey(checkId, claim.id);
    const captured = captures.get(checkId);
    if (!captured || !Array.isArray(claim.span)) return { made: 0, changed: false };
    captured.units ??= unitOffsets(captured.text);
    const [start, end] = claim.span.map((offset) => captured.units[offset]);
    if (start === undefined || end === undefined || start >= end) return { made: 0, changed: false };
    let existing = marksOf(key);
    if (!unchanged(captured, start, end)) {
      for (const mark of existing) mark.replaceWith(...mark.childNodes);
      marks.delete(key);
      return { made: 0, changed: true };
    }
    const span = claim.span.join(",");
    if (existing.length && existing[0].dataset.span !== span) {
      // The id names other text in this run (ids shifted): the old marks go, the claim is marked where it lies.
      for (const mark of existing) if (mark.isConnected) mark.replaceWith(...mark.childNodes);
      marks.delete(key);
      existing = [];
    }
    if (existing.length) {
      existing.forEach((mark, index) => {
        style(mark, claim, index === 0);
        mark.dataset.run = run;
      });
      return { made: existing.length, changed: false };
    }
    const made = [];
    for (const piece of captured.pieces) {
      const a = Math.max(start, piece.start);
      const b = Math.min(end, piece.start + piece.map.length);
      if (a >= b || !piece.node.isConnected) continue;
      const from = piece.map[a - piece.start];
      const to = piece.map[b - 1 - piece.start] + 1;
      for (const node of segments(piece.node, from, to)) {
        if (owner.get(node) !== checkId || !node.parentNode) continue; // a newer check took this text
        const old = node.parentElement?.closest(MARK_SELECTOR);
        // Overlapping claims of one run: never nest. Re-checked text (another check's, or an earlier run's of
        // this check): the newer highlight replaces the older one.
        if (old && old.dataset.check === checkId && (old.dataset.run ?? "") === run) continue;
        if (old) unmark(old);
        const mark = document.createElement("mark");
        mark.dataset.check = checkId;
        mark.dataset.claimId = String(claim.id);
        mark.dataset.span = span;
        mark.dataset.run = run;
        style(mark, claim, made.length === 0);
        node.parentNode.insertBefore(mark, node);
        mark.appendChild(node);
        styleRoot(mark.getRootNode());
        made.push(mark);
      }
    }
    if (made.length) marks.set(key, made);
    return { made: made.length, changed: false };
  }

  // Where a page says when its article was written, most specific first: {selector, attribute}.
  const DATE_SOURCES = [
    ['meta[property="article:published_time"]', "content"],
    ['meta[name="date"]', "content"],
    ['meta[itemprop="datePublished"]', "content"],
    ["article time[datetime]", "datetime"],
  ];

  /**
   * The page's main text, by its structure: its <main> (or role=main), else its article (the longest of
   * several, not one inside another), else its body. {element, part}: part names which ("main", "article",
   * "body"). Never the whole DOM: what lies around it (menus, sidebars, the footer) is not the page's text.
   */
  function mainText() {
    const shown = (element) => element.checkVisibility?.() ?? true;
    const main = [...document.querySelectorAll("main")].find(shown) ?? [...document.querySelectorAll("[role=main]")].find(shown);
    if (main) return { element: main, part: "main" };
    const articles = [...document.querySelectorAll("article")].filter((a) => shown(a) && !a.parentElement?.closest("article"));
    const longest = (a, b) => (b.textContent.length > a.textContent.length ? b : a);
    if (articles.length) return { element: articles.reduce(longest), part: "article" };
    return document.body ? { element: document.body, part: "body" } : null;
  }

  /** A calendar date (YYYY-MM-DD) from an ISO 8601 date or time, or null: the page's own words are never sent. */
  function isoDate(value) {
    const match = /^\s*(\d{4})-(\d{2})-(\d{2})(?:$|[T\s])/.exec(String(value ?? ""));
    if (!match) return null;
    const [, year, month, day] = match;
    const date = new Date(Date.UTC(+year, +month - 1, +day));
    return date.getUTCMonth() === +month - 1 && date.getUTCDate() === +day ? `${year}-${month}-${day}` : null;
  }

  /** The datePublished of the page's JSON-LD (an object, a list, or a @graph of them), or null. */
  function linkedDataDate() {
    const find = (node) => {
      if (!node || typeof node !== "object") return null;
      if (Array.isArray(node)) return node.map(find).find(Boolean) ?? null;
      return isoDate(node.datePublished) ?? find(node["@graph"]);
    };
    for (const script of document.querySelectorAll('script[type="application/ld+json"]')) {
      try {
        const found = find(JSON.parse(script.textContent));
        if (found) return found;
      } catch (_) {
        // not JSON: the next one
      }
    }
    return null;
  }

  /** The date the page says its article was written (meta tags, JSON-LD, the article's <time>), or null. */
  function pageDate() {
    for (const [selector, attribute] of DATE_SOURCES) {
      const found = isoDate(document.querySelector(selector)?.getAttribute(attribute));
      if (found) return found;
    }
    return linkedDataDate();
  }

  ext.runtime.onMessage.addListener((message, sender, reply) => {
    if (message?.type === "factcheck-capture") {
      if (message.css && !highlightSheet) {
        highlightSheet = { css: message.css, sheet: new CSSStyleSheet() };
        highlightSheet.sheet.replaceSync(message.css);
      }
      // The whole page's main text (the popup's "Check the whole page", the page's menu), or the selection.
      const main = message.page ? mainText() : null;
      const selection = window.getSelection();
      if (!main && (!selection || selection.rangeCount === 0 || selection.isCollapsed)) {
        reply({ text: "", url: location.href, title: document.title, date: pageDate() });
        return false;
      }
      const range = main ? document.createRange() : selection.getRangeAt(0);
      if (main) range.selectNodeContents(main.element);
      let { text, pieces, leftOut, leftOutCount } = capture(range);
      // All of it is what the structure leaves out (a heading or caption alone, selected with the start of
      // the next paragraph): the reader asks about it, so it is checked as it is.
      if (!/[\p{L}\p{N}]/u.test(text) && leftOut.length) {
        ({ text, pieces, leftOut, leftOutCount } = capture(range, { structure: false }));
      }
      captures.set(message.checkId, { text, pieces, units: null });
      for (const piece of pieces) owner.set(piece.node, message.checkId);
      reply({ text, url: location.href, title: document.title, date: pageDate(), leftOut, leftOutCount, part: main?.part ?? null });
    } else if (message?.type === "factcheck-highlight") {
      // The claims whose text the page no longer shows as checked are not marked: the popup says so.
      let marked = 0;
      const changed = [];
      for (const claim of message.claims) {
        const { made, changed: moved } = highlight(message.checkId, claim, String(message.run ?? ""));
        marked += made;
        if (moved) changed.push(claim.id);
      }
      reply({ marked, changed });
    } else if (message?.type === "factcheck-unmark-pending") {
      // Only the marks of the run that sent it: a cancelled run's word never strips a newer run's "…" marks
      // of the same check (a retry keeps the check's id).
      const run = String(message.run ?? "");
      for (const [key, claimMarks] of marks) {
        if (!key.startsWith(`${message.checkId}\u0000`) || !claimMarks[0]?.classList.contains("factcheck-pending")) continue;
        if ((claimMarks[0].dataset.run ?? "") !== run) continue;
        for (const mark of claimMarks) if (mark.isConnected) mark.replaceWith(...mark.childNodes);
        marks.delete(key);
      }
      reply({});
    } else if (message?.type === "factcheck-holds") {
      // The background asks after a load in the tab: is this still the document the check was captured in,
      // with the text it captured still on the page (a single-page app that re-renders keeps the script)?
      // Text the page drew again, the same, holds too, though its marks went with the nodes it replaced;
      // the address tells the background whether the app moved to another one (pushState).
      const captured = captures.get(message.checkId);
      const connected = Boolean(captured?.pieces.some((piece) => piece.node.isConnected));
      const redrawn = !connected && Boolean(captured) && stillShown(captured.text);
      reply({ holds: connected || redrawn, redrawn, url: location.href });
    }
    return false;
  });

  /** The text without white space or invisible characters, to find a captured text in the page's. */
  const squashed = (text) => String(text).replace(/[\s\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]+/g, "");

  /** Whether the page still shows a captured text somewhere (drawn again by a script: other nodes, same words). */
  function stillShown(text) {
    const wanted = squashed(text);
    return wanted.length > 0 && squashed(document.body?.innerText ?? "").includes(wanted);
  }

  /**
   * After a restore from the back/forward cache: marks of checks the tab no longer shows (the page was
   * left, so its result was dropped) are taken off, and so are a shown check's marks whose text is gone.
   */
  async function restored() {
    const checks = [...new Set([...marks.keys()].map((key) => key.split("\u0000")[0]))];
    if (!checks.length) return;
    const answer = await ext.runtime.sendMessage({ type: "factcheck-restored", checks }).catch(() => null);
    const live = new Set(Array.isArray(answer?.live) ? answer.live : []);
    for (const [key, claimMarks] of [...marks]) {
      const [checkId] = key.split("\u0000");
      const captured = captures.get(checkId);
      const gone = claimMarks.every((mark) => !mark.isConnected);
      if (live.has(checkId) && captured && !gone && claimMarks.every((mark) => stillHolds(mark))) continue;
      for (const mark of claimMarks) if (mark.isConnected) mark.replaceWith(...mark.childNodes);
      marks.delete(key);
    }
  }

  /** Whether a mark still holds text (a script may have emptied it while the page was away). */
  function stillHolds(mark) {
    return mark.isConnected && mark.textContent.trim().length > 0;
  }

  // A single-page app's move to another address (the back button's popstate; pushState, where the
  // Navigation API tells it) keeps this document: the background keeps the result and notes the change.
  const moved = () => ext.runtime.sendMessage({ type: "factcheck-page-moved" }).catch(() => {});
  addEventListener("popstate", moved);
  globalThis.navigation?.addEventListener?.("navigatesuccess", moved);
  addEventListener("pageshow", (event) => {
    if (event.persisted) restored();
  });
})();
