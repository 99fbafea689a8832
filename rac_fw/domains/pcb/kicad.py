"""Optional cross-check with KiCad's own DRC (``pcbnew``, KiCad 6.0; Debian's ``kicad`` package).

``pcbnew`` is a module of the system Python that KiCad was built for, not of a virtualenv, so the
check runs in a subprocess of the first interpreter that can import it, with a time limit. The
exported board carries its design rules in a ``.kicad_pro`` next to it (KiCad 6 keeps rules and net
classes in the project file), written from the task's rules so both DRCs judge the same numbers.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from rac_fw.domains.pcb.board import NetClass, Rules

INTERPRETERS = (sys.executable, "/usr/bin/python3")
TIMEOUT_S = 120

_SCRIPT = """
import sys, pcbnew
ok = True
for src, dst in zip(sys.argv[1::2], sys.argv[2::2]):
    board = pcbnew.LoadBoard(src)
    unfilled = pcbnew.ZONES()
    for z in board.Zones():
        if not z.GetIsRuleArea() and not z.IsFilled():
            unfilled.append(z)
    if len(unfilled):  # the task's pours: KiCad fills them (a realized fill arrives filled and is kept)
        pcbnew.ZONE_FILLER(board).Fill(unfilled)
    ok = pcbnew.WriteDRCReport(board, dst, pcbnew.EDA_UNITS_MILLIMETRES, True) and ok
sys.exit(0 if ok else 3)
"""


@dataclass
class Entry:
    """One item of KiCad's report: its kind (``clearance``, ``unconnected_items`` …), message, severity
    and the objects it names (``Pad 1 [GND] of U1 on F.Cu``, ``Footprint R19``, ``Track [GND] …``)."""

    section: str  # drc | unconnected | other
    kind: str
    message: str
    severity: str
    items: list[str] = field(default_factory=list)

    def line(self) -> str:
        return f"[{self.kind}]: {self.message}" + "".join(f" | {i}" for i in self.items)

    def parts(self) -> set[str] | None:
        """The parts the objects belong to, the board outline aside (None when one is copper of no
        part: a track, a via, a pour)."""
        refs = set()
        for item in self.items:
            if item.endswith("on Edge.Cuts"):
                continue
            m = re.match(r"(?:Footprint (\S+)$|.*\bpad\b.* of (\S+)(?: on \S+)?$)", item, re.I)
            if m is None:
                return None
            refs.add(m.group(1) or m.group(2))
        return refs


@dataclass
class KicadReport:
    """KiCad's verdict, error severity only: DRC violations and unconnected items that count, and apart
    from them the unconnected items that are so by design (a placement or repair board is judged
    unrouted) and the violations between parts the task itself placed (``given``: a real board's
    layout as its designer left it)."""

    violations: int
    unconnected: int
    details: list[str] = field(default_factory=list)
    unrouted_by_design: int = 0
    given: int = 0
    entries: list[Entry] = field(default_factory=list, repr=False)

    def judged(self, routed: bool, placed: set[str] | frozenset[str] = frozenset()) -> KicadReport:
        """This report for a board that is (``routed``) or is not meant to be routed, whose parts
        ``placed`` the task fixed."""
        out = KicadReport(0, 0, [], self.unrouted_by_design, self.given, self.entries)
        for e in self.entries:
            refs = e.parts()
            if e.section == "unconnected" and not routed:
                out.unrouted_by_design += 1
            elif e.section == "drc" and refs is not None and refs and refs <= placed:
                out.given += 1
            elif e.section in ("drc", "unconnected"):
                out.violations += e.section == "drc"
                out.unconnected += e.section == "unconnected"
                out.details.append(e.line())
        return out


@cache
def interpreter() -> str | None:
    """The first interpreter that imports ``pcbnew`` (None: KiCad is not installed)."""
    for exe in dict.fromkeys(INTERPRETERS):
        try:
            done = subprocess.run([exe, "-c", "import pcbnew"], capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return exe
    return None


def available() -> bool:
    return interpreter() is not None


def _net_class(c: NetClass) -> dict[str, object]:
    return {"name": c.name, "clearance": c.clearance, "track_width": c.track_width, "via_diameter": c.via_diameter,
            "via_drill": c.via_drill, "microvia_diameter": 0.3, "microvia_drill": 0.1, "diff_pair_gap": 0.25,
            "diff_pair_via_gap": 0.25, "diff_pair_width": c.track_width, "bus_width": 12, "wire_width": 6,
            "line_style": 0, "pcb_color": "rgba(0, 0, 0, 0.000)", "schematic_color": "rgba(0, 0, 0, 0.000)",
            "nets": list(c.nets)}


def project(rules: Rules, name: str, min_hole: float | None = None) -> str:
    """A minimal KiCad 6 project file holding the board's design rules and its net classes (KiCad 6
    keeps both in the project file, not the board). KiCad's hole minimum covers pads too: ``min_hole``
    lowers it to the smallest land-pattern hole (a pattern's holes are its library's business)."""
    min_drill, min_dia = rules.min_via
    doc = {
        "board": {"design_settings": {
            "rules": {"min_clearance": rules.clearance, "min_track_width": rules.min_track_width,
                      "min_via_diameter": min_dia, "min_via_annular_width": rules.min_annular_ring,
                      "min_through_hole_diameter": min(min_drill, min_hole or min_drill),
                      "min_copper_edge_clearance": rules.edge_clearance,
                      "min_hole_to_hole": 0.25, "min_hole_clearance": rules.clearance, "min_microvia_diameter": 0.2,
                      "min_microvia_drill": 0.1, "min_silk_clearance": 0.0},
            "rule_severities": {"silk_overlap": "ignore", "silk_over_copper": "ignore", "silk_edge_clearance": "ignore",
                                "missing_courtyard": "ignore", "text_height": "ignore", "text_thickness": "ignore"}}},
        "net_settings": {"classes": [_net_class(c) for c in (rules.default_class, *rules.net_classes)],
                         "meta": {"version": 2}},
        "meta": {"filename": f"{name}.kicad_pro", "version": 1},
    }
    return json.dumps(doc, indent=2) + "\n"


def parse_report(text: str) -> KicadReport:
    """The error-severity entries of a KiCad 6 DRC report (warnings are not counted)."""
    entries: list[Entry] = []
    section = ""
    for line in text.splitlines():
        if line.startswith("** Found"):
            section = "unconnected" if "unconnected" in line else "drc" if "DRC" in line else "other"
        elif m := re.match(r"\[(\w+)\]: (.*)", line):
            entries.append(Entry(section, m.group(1), m.group(2).strip(), "error"))
        elif entries and (sev := re.search(r"Severity: (\w+)", line)):
            entries[-1].severity = sev.group(1)
        elif entries and (item := re.match(r"\s+@\([^)]*\): (.*)", line)):
            entries[-1].items.append(item.group(1).strip())
    errors = [e for e in entries if e.severity == "error"]
    return KicadReport(sum(e.section == "drc" for e in errors), sum(e.section == "unconnected" for e in errors),
                       [e.line() for e in errors if e.section in ("drc", "unconnected")], entries=errors)


def run_drc(board: Path, routed: bool = True, placed: set[str] | frozenset[str] = frozenset()) -> KicadReport:
    """KiCad's DRC on ``board`` (its ``.kicad_pro`` beside it supplies the rules), unfilled pours filled
    first; ``routed=False``: the board is not meant to be routed, so its unconnected items are by
    design; violations among the ``placed`` parts (the task fixed them) are counted apart."""
    return run_drc_many([board], routed, placed)[0]


def run_drc_many(boards: list[Path], routed: bool = True,
                 placed: set[str] | frozenset[str] = frozenset()) -> list[KicadReport]:
    """KiCad's DRC on several boards in one KiCad process (loading pcbnew takes seconds)."""
    exe = interpreter()
    if exe is None:
        raise RuntimeError("KiCad's pcbnew module is not importable")
    with tempfile.TemporaryDirectory(prefix="rac-fw-kicad-") as tmp:
        reports = [Path(tmp) / f"drc{i}.rpt" for i in range(len(boards))]
        args = [str(p) for pair in zip(boards, reports, strict=True) for p in pair]
        done = subprocess.run([exe, "-c", _SCRIPT, *args], capture_output=True, text=True,
                              timeout=TIMEOUT_S * max(1, len(boards)), check=False)
        out = []
        for board, report in zip(boards, reports, strict=True):
            if not report.is_file():
                raise RuntimeError(f"KiCad DRC wrote no report for {board} (exit {done.returncode}): "
                                   f"{done.stderr.strip()[-300:]}")
            out.append(parse_report(report.read_text(encoding="utf-8", errors="replace")).judged(routed, placed))
        return out
