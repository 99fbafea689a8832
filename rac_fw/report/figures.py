"""The report's figures, drawn with matplotlib and returned as inline SVG text.

Every figure is a function of data the rest of rac-fw already computed (placements, claims, verdicts,
a verified schedule): nothing here decides where a buffer goes or whether a pin conflicts, it only
draws the answers. ``svg.fonttype = none`` keeps labels as real text (searchable, small).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "font.family": "DejaVu Sans"})

CLAIMED, CONFLICT, RESERVED, FREE = "#4c78a8", "#d62728", "#bbbbbb", "#ffffff"
#: Narrowest drawn buffer, as a fraction of its region's row.
MIN_BUFFER_WIDTH = 0.14
#: Box colours of the DMA-route columns (source, controller, buffer, region): none is the conflict red.
ROUTE_COLOURS = ("#9ecae9", "#ffbf79", "#8cd17d", "#d4a6c8")
PALETTE: tuple[str, ...] = tuple(matplotlib.colors.to_hex(c) for c in plt.get_cmap("tab20")(range(20)))


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
    """One package pin as drawn: ``state`` is claimed, conflict, reserved or free."""

    name: str
    state: str
    label: str


@dataclass(frozen=True)
class Route:
    """One DMA route: a source (peripheral or buffer) through a controller to a buffer in a region."""

    source: str
    controller: str
    streams: str
    sink: str
    region: str


@dataclass(frozen=True)
class Bar:
    """One scheduled operation: machine row, job colour, start and end time."""

    machine: int
    job: int
    start: int
    end: int


def _svg(fig: Figure) -> str:
    buffer = io.StringIO()
    # No metadata block: no date (the page is reproducible) and no namespace URLs in the page.
    fig.savefig(
        buffer, format="svg", bbox_inches="tight", metadata=dict.fromkeys(("Creator", "Date", "Format", "Type"))
    )
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _size(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % (scale // 4) == 0:
            return f"{n / scale:g} {unit}"
    return f"{n} B"


def memory_map(regions: Sequence[RegionBox]) -> str:
    """One row per region (length = 100 % of the region), buffers drawn at their share of it; hatched
    rows are D-cached, and the bus masters that reach the region are listed at the right."""
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(regions) + 1.0))
    for row, region in enumerate(regions):
        y = len(regions) - 1 - row
        ax.add_patch(
            Rectangle(
                (0, y + 0.1), 1, 0.8, facecolor="#f2f2f2", edgecolor="#555555", hatch="//" if region.cacheable else None
            )
        )
        # Buffers are laid out in plan order from the region's start; one far smaller than its region
        # is widened to stay legible (its label carries the true size).
        left = 0.0
        for index, (name, size) in enumerate(region.buffers):
            width = max(size / region.size, MIN_BUFFER_WIDTH)
            ax.add_patch(Rectangle((left, y + 0.2), width, 0.6, facecolor=PALETTE[index % 20], edgecolor="black"))
            ax.text(left + width / 2, y + 0.5, f"{name} {_size(size)}", ha="center", va="center", fontsize=7)
            left += width
        cache = "D-cached" if region.cacheable else "not cached"
        ax.text(-0.01, y + 0.5, f"{region.name}  0x{region.address:08X}  {_size(region.size)}", ha="right", va="center")
        ax.text(1.01, y + 0.5, f"{region.kind}, {cache}; reached by {', '.join(region.masters) or '—'}", va="center")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, len(regions))
    ax.axis("off")
    ax.set_title("Memory map: every buffer in its region (hatched = D-cached)", loc="left")
    return _svg(fig)


def dma_reach(regions: Sequence[RegionBox], masters: Sequence[str]) -> str:
    """A master × region matrix: filled where the master reaches the region, with the cache state."""
    fig, ax = plt.subplots(figsize=(1.2 * len(masters) + 4, 0.45 * len(regions) + 1.2))
    for row, region in enumerate(regions):
        y = len(regions) - 1 - row
        for col, master in enumerate(masters):
            reach = master in region.masters
            ax.add_patch(Rectangle((col, y), 1, 1, facecolor="#59a14f" if reach else "#ffffff", edgecolor="#999999"))
            ax.text(col + 0.5, y + 0.5, "✓" if reach else "✗", ha="center", va="center", color="black")
        ax.text(-0.1, y + 0.5, region.name, ha="right", va="center")
        cache = "D-cached" if region.cacheable else "not cached"
        ax.text(len(masters) + 0.1, y + 0.5, cache, va="center", color=CONFLICT if region.cacheable else "black")
    for col, master in enumerate(masters):
        ax.text(col + 0.5, len(regions) + 0.15, master, ha="center", va="bottom", rotation=30)
    ax.set_xlim(0, len(masters))
    ax.set_ylim(0, len(regions) + 1)
    ax.axis("off")
    ax.set_title("Which bus master reaches which region", loc="left")
    return _svg(fig)


PIN_NAME = re.compile(r"^(.*?)(\d+)$")


def pinout(pins: Sequence[PinCell]) -> str:
    """The package's pins, one row per port (PA…, P0.…, GPIO), each cell coloured by its state and
    labelled with the function the plan or board gives it."""
    ports: dict[str, dict[int, PinCell]] = {}
    for pin in pins:
        match = PIN_NAME.match(pin.name)
        port, number = (match.group(1), int(match.group(2))) if match else (pin.name, 0)
        ports.setdefault(port, {})[number] = pin
    width = max((max(cells) + 1 for cells in ports.values()), default=1)
    columns = min(width, 16)
    rows: list[tuple[str, list[PinCell | None]]] = []
    for port, numbered in ports.items():
        for start in range(0, max(numbered) + 1, columns):
            rows.append((port if start == 0 else "", [numbered.get(n) for n in range(start, start + columns)]))
    fig, ax = plt.subplots(figsize=(columns * 0.85 + 1, len(rows) * 0.55 + 1.4))
    colours = {"claimed": CLAIMED, "conflict": CONFLICT, "reserved": RESERVED, "free": FREE}
    for r, (port, cells) in enumerate(rows):
        y = len(rows) - 1 - r
        ax.text(-0.1, y + 0.5, port, ha="right", va="center", fontweight="bold")
        for c, cell in enumerate(cells):
            if cell is None:
                continue
            ax.add_patch(Rectangle((c, y), 0.95, 0.9, facecolor=colours[cell.state], edgecolor="#666666"))
            text_colour = "white" if cell.state in ("claimed", "conflict") else "black"
            ax.text(c + 0.47, y + 0.62, cell.name, ha="center", va="center", fontsize=6, color=text_colour)
            if cell.label:
                ax.text(c + 0.47, y + 0.28, cell.label[:11], ha="center", va="center", fontsize=5, color=text_colour)
    for i, (state, colour) in enumerate(colours.items()):
        ax.add_patch(Rectangle((i * 3, len(rows) + 0.2), 0.5, 0.5, facecolor=colour, edgecolor="#666666"))
        ax.text(i * 3 + 0.6, len(rows) + 0.45, state, va="center")
    ax.set_xlim(-0.2, columns)
    ax.set_ylim(0, len(rows) + 1)
    ax.axis("off")
    ax.set_title("Pinout: the pins the plan claims (red = conflict, see the evidence)", loc="left")
    return _svg(fig)


def dma_routes(routes: Sequence[Route]) -> str:
    """Source → controller (stream/channel) → buffer → region, one lane per route."""
    fig, ax = plt.subplots(figsize=(11, 0.9 * len(routes) + 1.0))
    columns = ("source", "controller", "buffer", "region")
    for col, title in enumerate(columns):
        ax.text(col * 3 + 1.2, len(routes) + 0.2, title, ha="center", fontweight="bold")
    for row, route in enumerate(routes):
        y = len(routes) - 1 - row
        labels = (route.source, f"{route.controller}\n{route.streams}" if route.streams else route.controller,
                  route.sink, route.region)  # fmt: skip
        for col, label in enumerate(labels):
            ax.add_patch(Rectangle((col * 3, y + 0.1), 2.4, 0.8, facecolor=ROUTE_COLOURS[col], edgecolor="black"))
            ax.text(col * 3 + 1.2, y + 0.5, label, ha="center", va="center", fontsize=7)
            if col:
                ax.annotate("", xy=(col * 3, y + 0.5), xytext=(col * 3 - 0.6, y + 0.5), arrowprops={"arrowstyle": "->"})
    ax.set_xlim(-0.2, 11.6)
    ax.set_ylim(0, len(routes) + 1)
    ax.axis("off")
    ax.set_title("DMA routes", loc="left")
    return _svg(fig)


def gantt(bars: Sequence[Bar], machines: int, makespan: int, optimum: int | None) -> str:
    """The realized schedule: one row per machine, one colour per job, the makespan as a line."""
    fig, ax = plt.subplots(figsize=(11, 0.45 * machines + 1.4))
    for bar in bars:
        ax.broken_barh(
            [(bar.start, bar.end - bar.start)],
            (bar.machine - 0.4, 0.8),
            facecolors=PALETTE[bar.job % 20],
            edgecolor="black",
            linewidth=0.4,
        )
        if bar.end - bar.start >= makespan / 40:
            ax.text((bar.start + bar.end) / 2, bar.machine, f"J{bar.job}", ha="center", va="center", fontsize=6)
    ax.axvline(makespan, color=CONFLICT, linestyle="--")
    title = f"Realized schedule: makespan {makespan}"
    if optimum:
        ax.axvline(optimum, color="#59a14f", linestyle=":")
        title += f" (optimum {optimum}, ratio {makespan / optimum:.3f})"
    ax.set_yticks(range(machines), [f"M{m}" for m in range(machines)])
    ax.invert_yaxis()
    ax.set_xlabel("time")
    ax.set_title(title, loc="left")
    return _svg(fig)
