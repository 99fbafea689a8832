"""A small SVG writer for the report's figures: shapes, text and tooltips, every string escaped.

Why not a plotting library: the figures are boxes, lines and labels whose geometry the report decides
(a scale axis, wrapped pin labels, a board to scale), every label must stay real text (searchable,
checked by the tests) and the core install must stay small — matplotlib alone was ~80 MB with its
dependencies. Coordinates are pixels of the figure's own ``viewBox``.
"""

from __future__ import annotations

import math
from html import escape

FONT = "system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif"


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _attrs(attrs: dict[str, object], data: dict[str, str] | None = None) -> str:
    """Attributes from keywords (``stroke_width`` → ``stroke-width``) and ``data-*`` ones from ``data``."""
    named = [(key.rstrip("_").replace("_", "-"), value) for key, value in attrs.items() if value is not None]
    named += [(f"data-{key}", value) for key, value in (data or {}).items()]
    return "".join(f' {key}="{escape(str(value), quote=True)}"' for key, value in named)


class Svg:
    """One figure: shapes and text added in drawing order, :meth:`render` gives the ``<svg>`` text."""

    def __init__(self, width: float, height: float, title: str):
        self.width, self.height, self.title = width, height, title
        self.parts: list[str] = []

    def _shape(self, tag: str, tip: str | None, attrs: dict[str, object], data: dict[str, str] | None = None) -> None:
        inner = f"<title>{escape(tip)}</title>" if tip else ""
        head = _attrs(attrs, data)
        self.parts.append(f"<{tag}{head}>{inner}</{tag}>" if inner else f"<{tag}{head}/>")

    def rect(self, x: float, y: float, w: float, h: float, fill: str = "none", stroke: str | None = "#555",
             tip: str | None = None, data: dict[str, str] | None = None, **attrs: object) -> None:
        """A rectangle; ``data`` becomes ``data-*`` attributes (what the tests and tools read back)."""
        self._shape("rect", tip, {"x": _num(x), "y": _num(y), "width": _num(max(w, 0)), "height": _num(max(h, 0)),
                                  "fill": fill, "stroke": stroke, **attrs}, data)

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str = "#555", width: float = 1,
             tip: str | None = None, data: dict[str, str] | None = None, **attrs: object) -> None:
        self._shape("line", tip, {"x1": _num(x1), "y1": _num(y1), "x2": _num(x2), "y2": _num(y2), "stroke": stroke,
                                  "stroke_width": _num(width), **attrs}, data)

    def circle(self, cx: float, cy: float, r: float, fill: str = "none", stroke: str | None = "#555",
               tip: str | None = None, data: dict[str, str] | None = None, **attrs: object) -> None:
        self._shape("circle", tip, {"cx": _num(cx), "cy": _num(cy), "r": _num(r), "fill": fill, "stroke": stroke,
                                    **attrs}, data)

    def path(self, d: str, fill: str = "none", stroke: str | None = "#555", tip: str | None = None,
             **attrs: object) -> None:
        self._shape("path", tip, {"d": d, "fill": fill, "stroke": stroke, **attrs})

    def text(self, x: float, y: float, text: str | list[str], size: float = 12, anchor: str = "start",
             fill: str = "#222", weight: str | None = None, tip: str | None = None, line_height: float = 1.15,
             data: dict[str, str] | None = None, **attrs: object) -> None:
        """A label; a list is several lines, centred vertically on ``y`` (one line: its middle at ``y``)."""
        lines = [text] if isinstance(text, str) else text
        first = y - (len(lines) - 1) * size * line_height / 2
        spans = "".join(f'<tspan x="{_num(x)}" y="{_num(first + i * size * line_height)}">{escape(line)}</tspan>'
                        for i, line in enumerate(lines))
        tip_text = f"<title>{escape(tip)}</title>" if tip else ""
        head = _attrs({"font_size": _num(size), "text_anchor": anchor, "dominant_baseline": "central", "fill": fill,
                       "font_weight": weight, **attrs}, data)
        self.parts.append(f"<text{head}>{tip_text}{spans}</text>")

    def arrow(self, x1: float, y1: float, x2: float, y2: float, stroke: str = "#333", width: float = 1.4,
              head: float = 7, data: dict[str, str] | None = None) -> None:
        """A line with a filled head at (x2, y2)."""
        angle = math.atan2(y2 - y1, x2 - x1)
        self.line(x1, y1, x2 - head * 0.8 * math.cos(angle), y2 - head * 0.8 * math.sin(angle), stroke, width,
                  data=data)
        left = (x2 - head * math.cos(angle - 0.4), y2 - head * math.sin(angle - 0.4))
        right = (x2 - head * math.cos(angle + 0.4), y2 - head * math.sin(angle + 0.4))
        self.path(f"M{_num(x2)},{_num(y2)} L{_num(left[0])},{_num(left[1])} L{_num(right[0])},{_num(right[1])} Z",
                  fill=stroke, stroke=None)

    def defs(self, markup: str) -> None:
        """Raw ``<defs>`` content (patterns), written by the figure code itself, never from data."""
        self.parts.insert(0, f"<defs>{markup}</defs>")

    def render(self) -> str:
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(self.width)}" height="{_num(self.height)}" '
                f'viewBox="0 0 {_num(self.width)} {_num(self.height)}" font-family="{escape(FONT, quote=True)}" '
                f'role="img" aria-label="{escape(self.title, quote=True)}">')
        return head + f"<title>{escape(self.title)}</title>" + "".join(self.parts) + "</svg>"


def wrap(text: str, chars: int, lines: int) -> list[str]:
    """``text`` in at most ``lines`` lines of about ``chars`` characters: broken at spaces, then after
    ``_``/``/``/``-`` inside long words; what does not fit ends in ``…`` (the caller keeps a tooltip)."""
    pieces: list[tuple[str, bool]] = []  # (piece, starts a word)
    for word in text.split():
        start = True
        while len(word) > chars:
            cut = max(word.rfind(sep, 0, chars) for sep in "_/-")
            cut = cut + 1 if cut > 0 else chars
            pieces.append((word[:cut], start))
            word, start = word[cut:], False
        pieces.append((word, start))
    out: list[str] = []
    for piece, starts in pieces:
        glue = " " if starts else ""
        if out and len(out[-1]) + len(glue) + len(piece) <= chars:
            out[-1] += glue + piece
        else:
            out.append(piece)
    if len(out) > lines:
        out = out[:lines]
        out[-1] = out[-1][: max(1, chars - 1)] + "…"
    return out
