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
    pcbnew.ZONE_FILLER(board).Fill(board.Zones())  # what the DRC dialog's "refill zones" does
    ok = pcbnew.WriteDRCReport(board, dst, pcbnew.EDA_UNITS_MILLIMETRES, True) and ok
sys.exit(0 if ok else 3)
"""


@dataclass
class KicadReport:
    """KiCad's verdict: error-severity DRC violations, unconnected items that count (routed boards),
    and unconnected items that are so by design (a placement or repair board is judged unrouted)."""

    violations: int
    unconnected: int
    details: list[str] = field(default_factory=list)
    unrouted_by_design: int = 0

    def judged(self, routed: bool) -> KicadReport:
        """This report for a board that is (``routed``) or is not meant to be routed."""
        if routed:
            return self
        return KicadReport(self.violations, 0, [d for d in self.details if not d.startswith("[unconnected_items]")],
                           self.unrouted_by_design + self.unconnected)


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


def project(rules: Rules, name: str) -> str:
    """A minimal KiCad 6 project file holding the board's design rules and its net classes (KiCad 6
    keeps both in the project file, not the board)."""
    min_drill, min_dia = rules.min_via
    doc = {
        "board": {"design_settings": {
            "rules": {"min_clearance": rules.clearance, "min_track_width": rules.min_track_width,
                      "min_via_diameter": min_dia, "min_via_annular_width": rules.min_annular_ring,
                      "min_through_hole_diameter": min_drill, "min_copper_edge_clearance": rules.edge_clearance,
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
    """Count the errors and unconnected items of a KiCad 6 DRC report (warnings are not counted)."""
    violations = unconnected = 0
    details: list[str] = []
    section = ""
    for line in text.splitlines():
        if line.startswith("** Found"):
            section = "unconnected" if "unconnected" in line else "drc" if "DRC" in line else "other"
            continue
        m = re.match(r"\[(\w+)\]: (.*)", line)
        if m:
            severity = re.search(r"Severity: (\w+)", line)
            if severity is None or severity.group(1) == "error":
                if section == "unconnected":
                    unconnected += 1
                elif section == "drc":
                    violations += 1
                details.append(line.strip())
    return KicadReport(violations, unconnected, details)


def run_drc(board: Path, routed: bool = True) -> KicadReport:
    """KiCad's DRC on ``board`` (its ``.kicad_pro`` beside it supplies the rules), pours refilled first;
    ``routed=False``: the board is not meant to be routed, so its unconnected items are by design."""
    return run_drc_many([board], routed)[0]


def run_drc_many(boards: list[Path], routed: bool = True) -> list[KicadReport]:
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
            out.append(parse_report(report.read_text(encoding="utf-8", errors="replace")).judged(routed))
        return out
