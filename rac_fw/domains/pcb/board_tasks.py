"""The real-board suite: tasks derived from 13 open-hardware KiCad layouts, loaded from the compact
documents ``rac-fw pcb import-board`` wrote to ``data/boards/`` (facts, land patterns, parts, derived
relations, the human layout's numbers, and each board's source and licence — never the board file).

Each document yields a routing task (every part placed as the designer placed it), a placement task
and a combined task (connectors, mounting holes and edge parts placed; the rest for the realizer), and
a repair task where two capacitors share one pin (both demanded tight).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from rac_fw.domains.pcb.board import Board, Component, NetClass, PcbTask, Placement, Region, Rules, Zone
from rac_fw.domains.pcb.footprints import footprint_from_data

BOARDS_DIR = Path(__file__).resolve().parent / "data" / "boards"
GOALS = {"routing": "route every net; every part sits where the designer placed it",
         "placement": "place the parts; connectors, mounting holes and edge parts stay where the designer put them",
         "combined": "place and route; connectors, mounting holes and edge parts stay where the designer put them",
         "repair": "repair an over-tight decoupling bundle; connectors, mounting holes and edge parts are placed"}


@cache
def board_documents() -> dict[str, dict[str, Any]]:
    """Every derived board document by board name."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(BOARDS_DIR.glob("*.json"))}


def _pts(items: list[list[float]]) -> tuple[tuple[float, float], ...]:
    return tuple((float(x), float(y)) for x, y in items)


def board_of(doc: dict[str, Any]) -> Board:
    b = doc["board"]
    r = b["rules"]
    classes = tuple(NetClass(c["name"], c["clearance"], c["track_width"], c["via_diameter"], c["via_drill"],
                             tuple(c["nets"])) for c in r["net_classes"])
    rules = Rules(r["clearance"], r["track_width"], r["via_drill"], r["via_diameter"], r["edge_clearance"],
                  r["min_annular_ring"], classes)
    zones = tuple(Zone(z["net"], tuple(z["layers"]), _pts(z["outline"]), z["priority"], z["clearance"],
                       z["min_width"], z["connect"], z["thermal_gap"], z["thermal_width"]) for z in b["pours"])
    regions = []
    for k in b["keepouts"]:
        pts = _pts(k["outline"])
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        regions.append(Region(k["name"], min(xs), min(ys), max(xs), max(ys), "keepout",
                              "rule area of the original board", pts, tuple(k["layers"]), "parts" in k["forbid"],
                              "tracks" in k["forbid"], "vias" in k["forbid"], "pours" in k["forbid"]))
    return Board(b["width"], b["height"], b["layers"], rules, tuple(regions), _pts(b["outline"]),
                 tuple(_pts(c) for c in b["cutouts"]), zones)


def tasks_of(doc: dict[str, Any]) -> list[PcbTask]:
    board = board_of(doc)
    lands = {k: footprint_from_data(k.split("#")[0], d) for k, d in doc["footprints"].items()}
    src = doc["source"]
    out = []
    for t in doc["tasks"]:
        comps = tuple(Component(ref, lands[p["fp"]].name, p["value"], dict(p["pins"]),
                                Placement(*p["at"]) if t["placed"] == "all" or p.get("anchor") else None,
                                1.0, p.get("side", "top"), lands[p["fp"]]) for ref, p in doc["parts"].items())
        movable = sum(c.fixed is None for c in comps)
        desc = (f"Real board {doc['name']} ({src['repository']}, {src['licence']}): {GOALS[t['category']]}"
                + (f" ({movable} to place)." if movable else "."))
        out.append(PcbTask(t["name"], t["category"], doc["name"], desc, board, comps, t["route"],
                           {"relations": t["relations"]}, {"relations": t["start"]} if "start" in t else None,
                           suite="boards", source=src, baseline=doc["human"]))
    return out


@cache
def board_tasks() -> dict[str, PcbTask]:
    """Every real-board task by name."""
    return {t.name: t for doc in board_documents().values() for t in tasks_of(doc)}
