"""The report's figures as inline SVG (:mod:`.svg`): memory map, DMA reach, pinout, DMA routes, Gantt.

Every figure is a function of data the rest of rac-fw already computed (placements, claims, transfers,
verdicts, a verified schedule): nothing here decides where a buffer goes or whether a pin conflicts,
it only draws the answers — to scale where there is a scale, with every label whole (wrapped, and in
a tooltip), so an engineer can read the figure without the tables.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rac_fw.report.svg import Svg, wrap

CLAIMED, CONFLICT, RESERVED, FREE = "#4c78a8", "#d62728", "#bbbbbb", "#ffffff"
REACH, OPTIMUM = "#59a14f", "#2e7d32"
#: Narrowest drawn buffer (px): a smaller share of its region is widened to this and outlined dashed.
MIN_BUFFER_PX = 4.0
#: Twenty distinguishable fills (Tableau 20), one per buffer or job.
PALETTE = ("#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728", "#ff9896", "#9467bd",
           "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f", "#c7c7c7", "#bcbd22", "#dbdb8d",
           "#17becf", "#9edae5")
HATCH = ('<pattern id="cached" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
         '<rect width="6" height="6" fill="#f2f2f2"/><line x1="0" y1="0" x2="0" y2="6" stroke="#c0c0c0" '
         'stroke-width="2"/></pattern>')


@dataclass(frozen=True)
class RegionBox:
    """A memory region as drawn: its facts and the buffers placed in it (name, bytes), in plan order."""

    name: str
    address: int
    size: int
    kind: str
    cacheable: bool
    masters: tuple[str, ...]
    buffers: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class PinCell:
    """One package pin as drawn: ``state`` is claimed, conflict, reserved or free; ``label`` says what
    uses it (for a conflict: every claim in conflict); ``detail`` is the tooltip's further text."""

    name: str
    state: str
    label: str
    detail: str = ""


@dataclass(frozen=True)
class Route:
    """One DMA transfer: data flows from ``source`` to ``sink`` through ``controller`` on ``channel``
    (stream/channel or multiplexer line), started by ``request`` (None: software, memory to memory)."""

    direction: str
    source: str
    controller: str
    channel: str
    request: str | None
    sink: str
    region: str


@dataclass(frozen=True)
class Bar:
    """One scheduled operation: machine row, job colour, start and end time, and its name."""

    machine: int
    job: int
    start: int
    end: int
    name: str = ""


@dataclass
class GanttMarks:
    """What the Gantt draws besides the bars: the optimum (if published) and the hard pairs."""

    optimum: int | None = None
    pairs: list[tuple[str, str]] = field(default_factory=list)


def size_text(n: int) -> str:
    """``1 KiB``, ``1.5 MiB``, ``300 B``: binary units where they are exact to a quarter."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % (scale // 4) == 0:
            return f"{n / scale:g} {unit}"
    if n >= 1 << 10:
        return f"{n / 1024:.1f} KiB"
    return f"{n} B"


# --- memory map -----------------------------------------------------------------------------------


def memory_map(regions: Sequence[RegionBox]) -> str:
    """One bar per region, its length the region's size on a log₂ axis (labelled in KiB/MiB); inside
    it each buffer at its share of the region, linearly, in plan order from the region's start — a
    buffer under ``MIN_BUFFER_PX`` is widened to it and outlined dashed (its label keeps the true size)."""
    sizes = [r.size for r in regions if r.size > 0] or [1024]
    low = 2 ** (math.floor(math.log2(min(sizes))) - 1)
    high = 2 ** math.ceil(math.log2(max(sizes)))
    left, length, row_h, top = 250.0, 470.0, 50.0, 62.0
    fig = Svg(left + length + 290, top + row_h * len(regions) + 16,
              "Memory map: region sizes on a log scale, buffers to scale inside their region")
    fig.defs(HATCH)

    def x_of(size: int) -> float:
        return left + length * (math.log2(size) - math.log2(low)) / (math.log2(high) - math.log2(low))

    fig.text(8, 14, "Memory map — bar length: region size (log₂ scale); inside a bar: buffers to scale "
             "(share of the region), hatched = D-cached", size=13, weight="bold")
    fig.line(left, 40, left + length, 40, "#333")
    exponents = list(range(math.ceil(math.log2(low)), int(math.log2(high)) + 1))
    labelled = set(exponents[::-1][:: 1 if len(exponents) <= 8 else 2])
    for exponent in exponents:
        x = x_of(2**exponent)
        fig.line(x, 36, x, top + row_h * len(regions) - 6, "#e3e3e3", 1)
        fig.line(x, 36, x, 44, "#333", 1)
        if exponent in labelled:
            fig.text(x, 28, size_text(2**exponent), size=10, anchor="middle", fill="#333")
    fig.text(left + length + 8, 40, "region size", size=10, fill="#555")
    for row, region in enumerate(regions):
        y = top + row * row_h
        end = x_of(max(region.size, 1))
        fill = "url(#cached)" if region.cacheable else "#f7f7f7"
        fig.rect(left, y, end - left, 18, fill=fill, stroke="#555",
                 tip=f"{region.name}: {size_text(region.size)} at 0x{region.address:08X}",
                 data={"region": region.name, "bytes": str(region.size)})
        fig.text(left - 8, y + 9, region.name, size=12, anchor="end", weight="bold")
        fig.text(left - 8, y + 27, f"0x{region.address:08X} · {size_text(region.size)}", size=10, anchor="end",
                 fill="#555")
        cursor = 0
        notes = []
        for index, (name, size) in enumerate(region.buffers):
            share = size / region.size if region.size else 1.0
            bx = left + (end - left) * cursor / max(region.size, 1)
            true_w = (end - left) * share
            enlarged = true_w < MIN_BUFFER_PX
            colour = PALETTE[index % len(PALETTE)]
            fig.rect(bx, y + 2, max(true_w, MIN_BUFFER_PX), 14, fill=colour, stroke="#000",
                     stroke_dasharray="2,1" if enlarged else None,
                     tip=f"{name}: {size_text(size)} = {share:.2%} of {region.name}"
                     + (" (drawn wider than to scale)" if enlarged else ""),
                     data={"buffer": name, "bytes": str(size), "region-bytes": str(region.size)})
            notes.append((colour, f"{name} {size_text(size)} ({share:.1%})"))
            cursor += size
        x = left
        for colour, note in notes:
            fig.rect(x, y + 23, 8, 8, fill=colour, stroke="#000")
            fig.text(x + 11, y + 27, note, size=10)
            x += 11 + 6.2 * len(note) + 12
        cache = "D-cached" if region.cacheable else "not cached"
        masters = ", ".join(region.masters) or "—"
        fig.text(left + length + 12, y + 9, [f"{region.kind}, {cache}"], size=11)
        fig.text(left + length + 12, y + 27, wrap(f"reached by {masters}", 44, 1), size=10, fill="#555",
                 tip=f"reached by {masters}")
    return fig.render()


# --- DMA reach ------------------------------------------------------------------------------------


def dma_reach(regions: Sequence[RegionBox], masters: Sequence[str]) -> str:
    """A master × region matrix: filled where the master reaches the region, with the cache state."""
    left, cell_w, cell_h, top = 150.0, 78.0, 26.0, 66.0
    fig = Svg(left + cell_w * len(masters) + 120, top + cell_h * len(regions) + 12,
              "Which bus master reaches which memory region")
    fig.text(8, 14, "DMA reach — ✓ the bus master reaches the region", size=13, weight="bold")
    for col, master in enumerate(masters):
        fig.text(left + col * cell_w + cell_w / 2, top - 14, wrap(master, 11, 2), size=11, anchor="middle",
                 weight="bold", tip=master)
    for row, region in enumerate(regions):
        y = top + row * cell_h
        fig.text(left - 8, y + cell_h / 2, region.name, size=11, anchor="end")
        for col, master in enumerate(masters):
            reach = master in region.masters
            fig.rect(left + col * cell_w, y, cell_w, cell_h, fill=REACH if reach else FREE, stroke="#999",
                     tip=f"{master} {'reaches' if reach else 'does not reach'} {region.name}")
            fig.text(left + col * cell_w + cell_w / 2, y + cell_h / 2, "✓" if reach else "✗", size=12,
                     anchor="middle", fill="#fff" if reach else "#888")
        cache = "D-cached" if region.cacheable else "not cached"
        fig.text(left + len(masters) * cell_w + 10, y + cell_h / 2, cache, size=11,
                 fill=CONFLICT if region.cacheable else "#222")
    return fig.render()


# --- pinout ---------------------------------------------------------------------------------------

PIN_NAME = re.compile(r"^(.*?)(\d+)$")
PIN_COLOURS = {"claimed": CLAIMED, "conflict": CONFLICT, "reserved": RESERVED, "free": FREE}
#: Pins per row, and a cell's size: wide enough for four lines of a 15-character label.
PIN_COLUMNS, PIN_W, PIN_H, PIN_LINES = 12, 92.0, 66.0, 4


def pinout(pins: Sequence[PinCell]) -> str:
    """The package's pins, one row per port (PA…, P0.…, GPIO), each cell coloured by its state and
    labelled in full (wrapped; the tooltip repeats it with any detail) with what uses it — for a
    conflict, every claim in conflict."""
    ports: dict[str, dict[int, PinCell]] = {}
    others: list[PinCell] = []
    for pin in pins:
        match = PIN_NAME.match(pin.name)
        if match:
            ports.setdefault(match.group(1), {})[int(match.group(2))] = pin
        else:
            others.append(pin)
    if others:  # names without a trailing pin number (PC2_C): one row of their own
        ports["other"] = dict(enumerate(others))
    rows: list[tuple[str, list[PinCell | None]]] = []
    for port, numbered in ports.items():
        for start in range(0, max(numbered) + 1, PIN_COLUMNS):
            cells = [numbered.get(n) for n in range(start, start + PIN_COLUMNS)]
            if any(cells):
                rows.append((port if start == 0 else "", cells))
    left, top = 44.0, 58.0
    fig = Svg(left + PIN_COLUMNS * PIN_W + 8, top + len(rows) * PIN_H + 8,
              "Pinout: what the plan and the board use each pin for")
    fig.text(8, 14, "Pinout — red: a conflict (the cell names every claim on the pin; see the evidence)",
             size=13, weight="bold")
    for i, (state, colour) in enumerate(PIN_COLOURS.items()):
        fig.rect(8 + i * 110, 32, 14, 14, fill=colour, stroke="#666")
        fig.text(26 + i * 110, 39, state, size=11)
    for r, (port, cells) in enumerate(rows):
        y = top + r * PIN_H
        fig.text(left - 6, y + PIN_H / 2, port, size=12, anchor="end", weight="bold")
        for c, cell in enumerate(cells):
            if cell is None:
                continue
            x = left + c * PIN_W
            ink = "#fff" if cell.state in ("claimed", "conflict") else "#222"
            tip = f"{cell.name}: {cell.state}" + (f" — {cell.label}" if cell.label else "") + (
                f". {cell.detail}" if cell.detail else "")
            fig.rect(x + 1, y + 1, PIN_W - 3, PIN_H - 3, fill=PIN_COLOURS[cell.state], stroke="#666", tip=tip,
                     data={"pin": cell.name, "state": cell.state, "label": cell.label})
            fig.text(x + PIN_W / 2, y + 10, cell.name, size=10, anchor="middle", fill=ink, weight="bold", tip=tip)
            if cell.label:
                fig.text(x + PIN_W / 2, y + 39, wrap(cell.label, 15, PIN_LINES), size=8.5, anchor="middle", fill=ink,
                         tip=tip)
    return fig.render()


# --- DMA routes -----------------------------------------------------------------------------------


def dma_routes(routes: Sequence[Route]) -> str:
    """One lane per transfer: source → DMA controller (channel, request) → sink, its region at the
    right; the arrows point the way the data moves and say which way that is."""
    columns = (("from", 20.0), ("DMA controller", 350.0), ("to", 680.0), ("placed in", 910.0))
    box_w, lane_h, top = 200.0, 78.0, 52.0
    fig = Svg(1130, top + lane_h * len(routes) + 8, "DMA routes: source, controller, channel, request, sink")
    fig.text(8, 14, "DMA routes — data moves along the arrows", size=13, weight="bold")
    for title, x in columns:
        fig.text(x + box_w / 2, 38, title, size=12, anchor="middle", weight="bold")
    for row, route in enumerate(routes):
        y = top + row * lane_h
        request = route.request or "software (memory to memory)"
        source_kind, sink_kind = (part.strip() for part in route.direction.split("→"))
        boxes = (("#9ecae9", [*wrap(route.source, 30, 2), f"({source_kind})"]),
                 ("#ffbf79", [route.controller, route.channel, *wrap(f"request {request}", 30, 2)]),
                 ("#8cd17d", [*wrap(route.sink, 30, 2), f"({sink_kind})"]),
                 ("#d4a6c8", wrap(route.region, 30, 3)))
        for (title, x), (colour, lines) in zip(columns, boxes, strict=True):
            fig.rect(x, y, box_w, lane_h - 18, fill=colour, stroke="#333", tip=f"{title}: " + " · ".join(lines))
            fig.text(x + box_w / 2, y + (lane_h - 18) / 2, lines, size=11, anchor="middle")
        mid = y + (lane_h - 18) / 2
        fig.arrow(columns[0][1] + box_w, mid, columns[1][1], mid)
        fig.arrow(columns[1][1] + box_w, mid, columns[2][1], mid)
        for a, b in ((0, 1), (1, 2)):
            fig.text((columns[a][1] + box_w + columns[b][1]) / 2, mid - 11, route.direction, size=10, anchor="middle",
                     fill="#555")
        fig.line(columns[2][1] + box_w, mid, columns[3][1], mid, "#999", 1, stroke_dasharray="3,3")
    return fig.render()


# --- Gantt ----------------------------------------------------------------------------------------


def _ticks(end: int, count: int = 10) -> list[int]:
    raw = end / count
    step = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    step = next(m * step for m in (1, 2, 5, 10) if m * step >= raw)
    return list(range(0, end + 1, int(step)))


def gantt(bars: Sequence[Bar], machines: int, makespan: int, marks: GanttMarks) -> str:
    """The realized schedule: one row per machine, one colour per job, a time axis; the makespan and the
    optimum as lines and the hard pairs as arrows from the end of one operation to the start of the
    other, all in the legend."""
    left, width, row_h, top = 60.0, 860.0, 26.0, 50.0
    jobs = sorted({b.job for b in bars})
    legend_rows = 2 + math.ceil(len(jobs) / 12)
    height = top + machines * row_h + 40 + legend_rows * 20
    ratio = f", {makespan / marks.optimum:.3f} × the optimum" if marks.optimum else ""
    fig = Svg(left + width + 30, height, f"Realized schedule: makespan {makespan}{ratio}")
    fig.text(8, 14, f"Realized schedule: makespan {makespan}" + (f" (optimum {marks.optimum}{ratio})"
                                                                  if marks.optimum else ""), size=13, weight="bold")
    end = max(makespan, marks.optimum or 0)
    scale = width / max(end, 1)
    axis_y = top + machines * row_h + 4
    for tick in _ticks(end):
        x = left + tick * scale
        fig.line(x, top - 4, x, axis_y, "#eee", 1)
        fig.text(x, axis_y + 12, str(tick), size=10, anchor="middle", fill="#333")
    fig.text(left + width / 2, axis_y + 28, "time", size=11, anchor="middle")
    for m in range(machines):
        fig.text(left - 8, top + m * row_h + row_h / 2, f"M{m}", size=11, anchor="end")
    where = {b.name: b for b in bars if b.name}
    for bar in bars:
        x, y = left + bar.start * scale, top + bar.machine * row_h + 3
        w = (bar.end - bar.start) * scale
        fig.rect(x, y, w, row_h - 6, fill=PALETTE[bar.job % len(PALETTE)], stroke="#000", stroke_width=0.4,
                 tip=f"{bar.name or f'J{bar.job}'} on M{bar.machine}: {bar.start}–{bar.end}")
        if w >= 22:
            fig.text(x + w / 2, y + (row_h - 6) / 2, f"J{bar.job}", size=9, anchor="middle")
    span_x = left + makespan * scale
    fig.line(span_x, top - 8, span_x, axis_y, CONFLICT, 2, stroke_dasharray="6,3", tip=f"makespan {makespan}")
    if marks.optimum:
        opt_x = left + marks.optimum * scale
        fig.line(opt_x, top - 8, opt_x, axis_y, OPTIMUM, 2, stroke_dasharray="2,2",
                 tip=f"published optimum {marks.optimum}")
    for a, b in marks.pairs:
        if a in where and b in where:
            first, then = where[a], where[b]
            fig.arrow(left + first.end * scale, top + first.machine * row_h + row_h / 2,
                      left + then.start * scale, top + then.machine * row_h + row_h / 2, stroke="#000", width=1.6,
                      data={"pair": f"{a}>{b}"})
            fig.circle(left + first.end * scale, top + first.machine * row_h + row_h / 2, 3, fill="#000",
                       tip=f"hard pair: {a} ends before {b} starts")
    ly = axis_y + 46
    fig.line(left, ly, left + 30, ly, CONFLICT, 2, stroke_dasharray="6,3")
    fig.text(left + 36, ly, f"makespan {makespan} (verified)", size=11)
    x = left + 260
    if marks.optimum:
        fig.line(x, ly, x + 30, ly, OPTIMUM, 2, stroke_dasharray="2,2")
        fig.text(x + 36, ly, f"published optimum {marks.optimum}", size=11)
        x += 260
    fig.arrow(x, ly, x + 30, ly, stroke="#000", width=1.6)
    pairs = "; ".join(f"{a} → {b}" for a, b in marks.pairs) or "none"
    fig.text(x + 36, ly, f"hard pair (end → start): {pairs}", size=11)
    for i, job in enumerate(jobs):
        jx, jy = left + (i % 12) * 72, ly + 20 + (i // 12) * 20
        fig.rect(jx, jy - 6, 12, 12, fill=PALETTE[job % len(PALETTE)], stroke="#000", stroke_width=0.4)
        fig.text(jx + 16, jy, f"job J{job}", size=10)
    return fig.render()
