"""The observation of a PCB task: an exact, typed view of the board an agent plans against.

It lists parts (footprint, value, pin → net, and the placement of parts that are already placed),
nets with their pins, regions, layers, design rules, the footprints' pads, the unrouted connections,
and the relation vocabulary with the class table — everything needed to *name* things, nothing that
asks for a coordinate back.
"""

from __future__ import annotations

from typing import Any

from rac_fw.domains.pcb import classes
from rac_fw.domains.pcb.board import PcbTask, Region
from rac_fw.domains.pcb.footprints import Footprint, library

RELATION_VOCABULARY = {
    "board_edge": "{kind, ref, side: left|right|top|bottom, distance: tight|close|loose}",
    "place_relative": "{kind, a: REF, b: REF or REF.PIN, relation: near|left_of|right_of|above|below, distance}",
    "align": "{kind, refs: [REF, …], axis: horizontal (same y) | vertical (same x)}",
    "symmetric": "{kind, refs: [REF, REF], axis: vertical (mirror about x = width/2) | horizontal}",
    "group": "{kind, refs: [REF, …], spread: tight|close|loose}",
    "keepout": "{kind, region: REGION, refs: [REF, …], nets: [NET, …]}",
    "decouple": "{kind, cap: REF, pin: REF.PIN, distance}",
    "route_matched": "{kind, nets: [NET, …], tolerance}",
    "diff_pair": "{kind, p: NET, n: NET, tolerance}",
    "layer_preference": "{kind, net: NET, layer: one of the board's layers}",
    "via_limit": "{kind, net: NET, max: count}",
    "route_priority": "{kind, nets: [NET, …] in routing order}",
}


def requirement_text(rel: dict[str, Any]) -> str:
    """A requirement in an engineer's words, with the limit in mm — what the verifier will measure,
    not the relation to write."""
    k = rel["kind"]
    cls = rel.get("distance") or rel.get("spread") or rel.get("tolerance") or ""
    mm = classes.TABLES.get(k, {}).get(cls)
    if k == "board_edge":
        return f"{rel['ref']} sits at the {rel['side']} edge of the board (courtyard within {mm} mm of it)"
    if k == "place_relative":
        how = rel.get("relation", "near").replace("_", " ")
        return f"{rel['a']} is {how} {rel['b']} (courtyard gap at most {mm} mm)"
    if k == "decouple":
        return f"{rel['cap']} decouples pin {rel['pin']} (pad gap at most {mm} mm)"
    if k == "align":
        return f"{', '.join(rel['refs'])} line up {rel['axis']}ly (centres within {classes.ALIGN_RESIDUAL} mm)"
    if k == "symmetric":
        return (f"{' and '.join(rel['refs'])} mirror each other about the board's {rel['axis']} centre line "
                f"(within {classes.SYMMETRY_RESIDUAL} mm)")
    if k == "group":
        return f"{', '.join(rel['refs'])} stay together (every centre within {mm} mm of their centroid)"
    if k == "keepout":
        what = ", ".join([*rel.get("refs", []), *(f"net {n}" for n in rel.get("nets", []))])
        return f"nothing of {what} enters region {rel['region']}"
    if k == "route_matched":
        return f"nets {', '.join(rel['nets'])} have routed lengths within {mm} mm of each other"
    if k == "diff_pair":
        return (f"{rel['p']}/{rel['n']} run as a coupled pair (at least {classes.PAIR_COUPLING[cls]:.0%} "
                f"coupled) with lengths within {mm} mm")
    if k == "layer_preference":
        return f"net {rel['net']} stays on {rel['layer']} with no via"
    if k == "via_limit":
        return f"net {rel['net']} uses at most {rel['max']} vias"
    return f"nets {', '.join(rel['nets'])} are routed before the others"


def summary_of(t: PcbTask) -> str:
    movable = [c.ref for c in t.components if c.fixed is None]
    goal = ("place the parts and route every net" if t.route and movable else
            "route every net (parts are placed)" if t.route else "place the parts (placement is judged, not routing)")
    return (f"{t.description} Board {t.board.width}×{t.board.height} mm, {t.board.layers} layers, "
            f"{len(t.components)} parts, {len(t.nets)} nets; goal: {goal}. Submit {{relations: [...]}} over the "
            "named parts, pins, nets and regions; distances are classes (tight/close/loose), never numbers.")


def _connections(t: PcbTask) -> list[dict[str, Any]]:
    return [{"net": net, "pins": [f"{r}.{p}" for r, p in pins]} for net, pins in sorted(t.nets.items())
            if len(pins) > 1]


def _region(r: Region) -> dict[str, Any]:
    out: dict[str, Any] = {"name": r.name, "kind": r.kind, "rect_mm": [r.x0, r.y0, r.x1, r.y1], "about": r.description}
    if r.kind == "keepout":
        out["forbids"] = [k for k, v in (("parts", r.no_parts), ("tracks", r.no_tracks), ("vias", r.no_vias),
                                         ("pours", r.no_pours)) if v]
        out["layers"] = list(r.layers) or "all copper"
    return out


def _board(t: PcbTask) -> dict[str, Any]:
    b = t.board
    out: dict[str, Any] = {"width_mm": b.width, "height_mm": b.height, "layers": list(b.layer_names),
                           "rules": b.rules.as_dict()}
    if b.outline:
        out["outline_mm"] = [list(p) for p in b.outline]
        out["area_mm2"] = round(b.area, 2)
    if b.cutouts:
        out["cutouts"] = len(b.cutouts)
    if b.zones:
        out["pours"] = [{"net": z.net, "layers": list(z.layers), "priority": z.priority, "clearance_mm": z.clearance,
                         "connect": z.connect} for z in b.zones]
    return out


def _footprint(fp: Footprint) -> dict[str, Any]:
    return {"description": fp.description, "attr": fp.attr, "pads": fp.pin_names, "front": fp.front}


def observation_data(t: PcbTask) -> dict[str, Any]:
    fps = {c.footprint: c.fp for c in t.components}
    data: dict[str, Any] = {
        "category": t.category,
        "board": _board(t),
        "regions": [_region(r) for r in t.board.regions],
        "parts": [{"ref": c.ref, "footprint": c.footprint, "value": c.value, "pins": dict(c.pins),
                   **({"side": c.side} if c.side != "top" else {}),
                   "placed": None if c.fixed is None else {"x_mm": c.fixed.x, "y_mm": c.fixed.y, "rot": c.fixed.rot}}
                  for c in t.components],
        "requirements": [requirement_text(r) for r in t.requirements],
        "nets": _connections(t),
        "footprints": {name: _footprint(fp) for name, fp in sorted(fps.items())},
        "copper": {"tracks": 0, "vias": 0},
        "unrouted": _connections(t) if t.route else [],
        "drc": [],
        "relations": RELATION_VOCABULARY,
        "classes_mm": {k: dict(v) for k, v in classes.TABLES.items()},
    }
    if t.start is not None:
        data["start_bundle"] = t.start
        data["note"] = "repair task: start from start_bundle; it does not pass as it stands"
    return data


def detail_of(t: PcbTask, detail: str) -> dict[str, Any]:
    """Depth on one part (pads with offsets), net (pins), region or footprint."""
    if detail in t.parts:
        c = t.parts[detail]
        return {"ref": c.ref, "footprint": c.footprint, "value": c.value, "side": c.side,
                "pads": [{"pin": p.name, "net": c.pins.get(p.name), "offset_mm": [p.dx, p.dy], "size_mm": [p.w, p.h],
                          "shape": p.shape, "kind": p.kind, "drill_mm": p.drill or None} for p in c.fp.pads]}
    if detail in t.nets:
        return {"net": detail, "pins": [f"{r}.{p}" for r, p in t.nets[detail]]}
    if detail in t.regions:
        r = t.regions[detail]
        return {"region": r.name, "kind": r.kind, "rect_mm": [r.x0, r.y0, r.x1, r.y1], "about": r.description}
    named = {c.footprint: c.fp for c in t.components}
    if detail in named or detail in library():
        fp = named.get(detail) or library()[detail]
        return {"footprint": fp.name, "description": fp.description, "attr": fp.attr,
                "courtyard_mm": list(fp.extent()),
                "pads": [{"pin": p.name, "offset_mm": [p.dx, p.dy], "size_mm": [p.w, p.h], "shape": p.shape,
                          "kind": p.kind} for p in fp.pads]}
    raise LookupError(f"{detail!r} names no part, net, region or footprint of {t.name}")
