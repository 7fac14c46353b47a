"""Draw the sample extension's icons (extension/icons/icon-<size>.png): a check mark on a blue tile.

Run once after changing the design; the PNGs are committed. Needs Pillow (``pip install pillow``).
Drawn at 8x and scaled down, so the small sizes are anti-aliased.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

SIZES = (16, 32, 48, 128)
OUT = Path(__file__).resolve().parent.parent / "extension" / "icons"


def draw(size: int) -> Image.Image:
    """One icon of ``size`` pixels square."""
    big = size * 8
    image = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    pen = ImageDraw.Draw(image)
    pen.rounded_rectangle((0, 0, big - 1, big - 1), radius=big // 5, fill=(25, 113, 194, 255))
    # The check mark, as a thick polyline with round joints.
    points = [(0.24 * big, 0.52 * big), (0.43 * big, 0.71 * big), (0.78 * big, 0.30 * big)]
    width = max(int(0.13 * big), 1)
    pen.line(points, fill=(255, 255, 255, 255), width=width, joint="curve")
    for x, y in (points[0], points[-1]):
        pen.ellipse((x - width / 2, y - width / 2, x + width / 2, y + width / 2), fill=(255, 255, 255, 255))
    return image.resize((size, size), Image.Resampling.LANCZOS)


def main() -> None:
    """Write every size."""
    OUT.mkdir(parents=True, exist_ok=True)
    for size in SIZES:
        draw(size).save(OUT / f"icon-{size}.png", optimize=True)


if __name__ == "__main__":
    main()
