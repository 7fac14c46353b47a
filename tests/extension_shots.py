"""Screenshots of what a reader sees outside the popup: a mark's tooltip and the toolbar badge.

Headless Chromium draws neither a native tooltip (an element's ``title``) nor the toolbar, so a shot shows
them as the extension set them: the badge's own text, colour and tooltip read back from ``chrome.action``,
and the mark's own ``title``, each drawn in a box over the page (a toolbar strip at the top, the tooltip
under the mark). Nothing is invented: every word and colour in the boxes is read from the browser.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.test_extension import Extension

# Draws the boxes; arguments: the badge {text, color: [r, g, b, a], title}, the marks' selector, which of them.
_OVERLAY = r"""
const [badge, selector, which] = arguments;
const layer = document.createElement("div");
layer.id = "factcheck-shot";
layer.style.cssText = "position:absolute;left:0;top:0;width:100%;z-index:2147483647;pointer-events:none;"
  + "font:12px system-ui,sans-serif;";
const bar = document.createElement("div");
bar.style.cssText = "position:fixed;top:0;left:0;right:0;height:30px;background:#dee1e6;border-bottom:1px solid #bbb;"
  + "display:flex;justify-content:flex-end;align-items:center;padding-right:10px;box-sizing:border-box;";
const icon = document.createElement("div");
icon.style.cssText = "position:relative;width:20px;height:20px;border-radius:4px;background:#1c7ed6;";
const chip = document.createElement("div");
const [r, g, b, a] = badge.color;
chip.textContent = badge.text;
chip.style.cssText = `position:absolute;right:-6px;bottom:-6px;padding:0 3px;border-radius:3px;color:#fff;`
  + `font:bold 10px system-ui,sans-serif;background:rgba(${r},${g},${b},${a / 255});`;
icon.append(chip);
bar.append(icon);
const tip = (text, left, top, right) => {
  const box = document.createElement("div");
  box.textContent = text;
  box.style.cssText = "position:absolute;max-width:270px;white-space:pre-wrap;background:#fff;color:#222;"
    + "border:1px solid #999;box-shadow:0 2px 4px rgba(0,0,0,.25);padding:3px 6px;"
    + (right === undefined ? `left:${left}px;` : `right:${right}px;`) + `top:${top}px;`;
  return box;
};
layer.append(bar);
let below = 36; // the page moves down under the toolbar strip and the badge's tooltip while the shot is taken
if (badge.title) {
  const shown = tip(badge.title, 0, 34, 8);
  shown.style.position = "fixed";
  layer.append(shown);
}
document.documentElement.append(layer);
below += layer.lastChild === bar ? 0 : layer.lastChild.getBoundingClientRect().height + 6;
document.documentElement.dataset.factcheckShotPadding = document.documentElement.style.paddingTop;
document.documentElement.style.paddingTop = `${below}px`;
const mark = selector ? [...document.querySelectorAll(selector)].at(which) : null;
if (mark) {
  const box = mark.getBoundingClientRect();
  layer.append(tip(mark.title, Math.max(4, box.left + scrollX), box.bottom + scrollY + 4));
}
return Boolean(mark);
"""


def page_shot(
    ext: Extension,
    handle: str,
    tab: int,
    path: Path,
    mark: str | None = None,
    which: int = 0,
    size: tuple[int, int] = (640, 480),
) -> None:
    """Save a shot of the page in ``handle`` with the tab's badge (and its tooltip) and, for ``mark`` (a CSS
    selector of marks), the tooltip of the ``which``-th mark it finds (-1: the last) under that mark; the
    boxes are taken off again after."""
    badge: dict[str, Any] = ext.call(
        "const tabId = args[0]; return {text: await chrome.action.getBadgeText({tabId}),"
        " color: await chrome.action.getBadgeBackgroundColor({tabId}), title: await chrome.action.getTitle({tabId})};",
        tab,
    )
    browser = ext.browser
    browser.switch_to.window(handle)
    browser.set_window_size(*size)
    try:
        found = browser.execute_script(_OVERLAY, badge, mark, which)
        assert found or mark is None, f"no mark {mark!r} on the page to show the tooltip of"
        browser.save_screenshot(str(path))
    finally:
        browser.execute_script(
            "document.getElementById('factcheck-shot')?.remove();"
            "const root = document.documentElement; root.style.paddingTop = root.dataset.factcheckShotPadding ?? '';"
            "delete root.dataset.factcheckShotPadding;"
        )
        browser.set_window_size(480, 1000)
    assert path.stat().st_size > 5_000


def popup_shot(browser: Any, path: Path, down_to: str = "claims", width: int = 480) -> None:
    """Save a shot of the popup open in ``browser``, from its top down to the bottom of the element of id
    ``down_to`` (the claims, say: the legend below is left out)."""
    bottom = browser.execute_script(
        "return document.getElementById(arguments[0]).getBoundingClientRect().bottom", down_to
    )
    browser.set_window_size(width, int(bottom) + 150)  # the window's frame takes some of its height
    try:
        browser.save_screenshot(str(path))
    finally:
        browser.set_window_size(480, 1000)
    assert path.stat().st_size > 5_000
