"""Fact checks of a typed relation bundle against the task: every name must exist and fit.

All violations are returned at once, each located at its field (``payload.relations[3].pin``) with the
objects involved and, where one exists, a relaxation patch (the closest existing name, or removing the
relation).
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import ValidationError

from rac_fw.contract import Evidence, Magnitude, Relaxation, evidence_from_validation_error
from rac_fw.domains.pcb.board import PcbTask
from rac_fw.domains.pcb.footprints import edge_rotations
from rac_fw.domains.pcb.model import PLACEMENT_KINDS, ROUTING_KINDS, PcbAction, relation_key

OPPOSITE = {"left": "right", "right": "left", "top": "bottom", "bottom": "top"}


class _Checker:
    def __init__(self, task: PcbTask):
        self.task = task
        self.evidence: list[Evidence] = []

    def _unknown(self, code: str, what: str, name: str, known: list[str], path: list[Any]) -> None:
        where = "payload." + ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in path).replace(".[", "[")
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        relax = [Relaxation(description=f"use {close[0]!r}", patch=[{"op": "replace", "path": path,
                                                                      "value": close[0]}])] if close else []
        relax.append(Relaxation(description=f"remove relations[{path[1]}]",
                                patch=[{"op": "remove", "path": path[:2]}]))
        shown = ", ".join(known[:20]) + (" …" if len(known) > 20 else "")
        self.evidence.append(Evidence(code=code, message=f"unknown {what} {name!r}; known: {shown}", location=where,
                                      objects=[name], relaxations=relax))

    def ref(self, name: str, path: list[Any]) -> bool:
        if name in self.task.parts:
            return True
        self._unknown("E_UNKNOWN_PART", "part", name, sorted(self.task.parts), path)
        return False

    def net(self, name: str, path: list[Any]) -> bool:
        if name in self.task.nets:
            return True
        self._unknown("E_UNKNOWN_NET", "net", name, sorted(self.task.nets), path)
        return False

    def pin(self, text: str, path: list[Any]) -> str | None:
        """Check ``REF.PIN``; return the pin's net (None when the pin is unknown or unconnected)."""
        ref, _, pin = text.partition(".")
        if not self.ref(ref, path):
            return None
        comp = self.task.parts[ref]
        if comp.fp.pad(pin) is None:
            self._unknown("E_UNKNOWN_PIN", f"pin of {ref}", pin, [p.name for p in comp.fp.pads], path)
            return None
        net = comp.pins.get(pin)
        if net is None:
            self.evidence.append(Evidence(code="E_PIN_UNCONNECTED", message=f"{text} is not connected to any net",
                                          location=_loc(path), objects=[text]))
        return net

    def error(self, code: str, message: str, index: int, objects: list[str], field: str | None = None) -> None:
        path: list[Any] = ["relations", index] + ([field] if field else [])
        self.evidence.append(Evidence(code=code, message=message, location=_loc(path), objects=objects,
                                      relaxations=[Relaxation(description=f"remove relations[{index}]",
                                                              patch=[{"op": "remove", "path": ["relations", index]}])]))


def _loc(path: list[Any]) -> str:
    out = "payload"
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def check_action(task: PcbTask, payload: dict[str, Any]) -> tuple[PcbAction | None, list[Evidence]]:
    """Parse and fact-check ``payload``; return the typed action only when there is no violation."""
    try:
        action = PcbAction.model_validate(payload)
    except ValidationError as exc:
        return None, evidence_from_validation_error(exc, prefix="payload")
    c = _Checker(task)
    edges: dict[str, tuple[str, int]] = {}
    layers: dict[str, tuple[str, int]] = {}
    for i, rel in enumerate(action.relations):
        base: list[Any] = ["relations", i]
        refs: list[tuple[str, str]] = []
        moved = _refs_of(rel, task) if rel.kind in PLACEMENT_KINDS else []
        if moved and all(task.parts[r].fixed is not None for r in moved):
            c.error("E_FIXED_PART", f"relations[{i}] ({rel.kind}) only names parts that are already placed in this "
                    "task; placement relations need a movable part", i, moved)
        if rel.kind in ROUTING_KINDS and not task.route:
            c.error("E_NOT_ROUTED", f"relations[{i}] ({rel.kind}) is a routing relation but this task is judged on "
                    "placement only", i, [])
        if rel.kind == "board_edge":
            refs = [(rel.ref, "ref")]
            if rel.ref in edges and edges[rel.ref][0] == OPPOSITE[rel.side]:
                c.error("E_EDGE_CONFLICT", f"{rel.ref} cannot sit at both the {rel.side} and the "
                        f"{edges[rel.ref][0]} edge (relations[{edges[rel.ref][1]}])", i, [rel.ref], "side")
            edges[rel.ref] = (rel.side, i)
        elif rel.kind == "place_relative":
            refs = [(rel.a, "a")]
            if "." in rel.b:
                c.pin(rel.b, base + ["b"])
                if rel.b.partition(".")[0] == rel.a:
                    c.error("E_SELF_RELATION", f"{rel.a} cannot be placed relative to its own pin", i, [rel.a], "b")
            else:
                refs.append((rel.b, "b"))
                if rel.b == rel.a:
                    c.error("E_SELF_RELATION", f"{rel.a} cannot be placed relative to itself", i, [rel.a], "b")
        elif rel.kind in ("align", "symmetric", "group", "keepout"):
            refs = [(r, f"refs.{j}") for j, r in enumerate(rel.refs)]
            dupes = sorted({r for r in rel.refs if rel.refs.count(r) > 1})
            if dupes:
                c.error("E_DUPLICATE", f"relations[{i}] lists {dupes} more than once", i, dupes, "refs")
        elif rel.kind == "decouple":
            refs = [(rel.cap, "cap")]
            net = c.pin(rel.pin, base + ["pin"])
            if net is not None and rel.cap in task.parts and net not in task.parts[rel.cap].pins.values():
                c.error("E_DECOUPLE_NET", f"{rel.cap} has no pad on net {net!r} of {rel.pin}, so it cannot decouple "
                        "that pin", i, [rel.cap, rel.pin], "cap")
        for name, field in refs:
            path = base + [int(p) if p.isdigit() else p for p in field.split(".")]
            c.ref(name, path)
        if rel.kind == "keepout":
            if rel.region not in task.regions:
                c._unknown("E_UNKNOWN_REGION", "region", rel.region, sorted(task.regions), base + ["region"])
            for j, n in enumerate(rel.nets):
                c.net(n, base + ["nets", j])
            if not rel.refs and not rel.nets:
                c.error("E_EMPTY_RELATION", f"relations[{i}] keeps nothing out: name refs or nets", i, [])
        elif rel.kind in ("route_matched", "route_priority"):
            for j, n in enumerate(rel.nets):
                c.net(n, base + ["nets", j])
        elif rel.kind == "diff_pair":
            c.net(rel.p, base + ["p"])
            c.net(rel.n, base + ["n"])
            if rel.p == rel.n:
                c.error("E_SELF_RELATION", f"a pair needs two nets, got {rel.p!r} twice", i, [rel.p], "n")
        elif rel.kind in ("layer_preference", "via_limit"):
            c.net(rel.net, base + ["net"])
            if rel.kind == "layer_preference":
                if rel.layer not in task.board.layer_names:
                    c._unknown("E_UNKNOWN_LAYER", "layer", rel.layer, list(task.board.layer_names), base + ["layer"])
                elif rel.net in layers and layers[rel.net][0] != rel.layer:
                    c.error("E_LAYER_CONFLICT", f"net {rel.net} is already preferred on {layers[rel.net][0]} "
                            f"(relations[{layers[rel.net][1]}])", i, [rel.net], "layer")
                elif rel.net in task.nets and (away := sorted({
                        lay for ref, pin in task.nets[rel.net] for lays in [task.pad_layers(ref, pin)]
                        if rel.layer not in lays for lay in lays})):
                    c.error("E_LAYER_UNREACHABLE", f"net {rel.net} has surface-mount pads on "
                            f"{', '.join(away)}, so it cannot run on {rel.layer} alone (a layer preference "
                            "allows no via)", i, [rel.net, rel.layer], "layer")
                layers[rel.net] = (rel.layer, i)
    if not c.evidence:
        c.evidence += edge_capacity(task, action)
    return (None if c.evidence else action), c.evidence


def _along(task: PcbTask, ref: str, side: str) -> float:
    """The least length of edge ``side`` that part ``ref`` covers at a rotation where it meets that edge."""
    x0, y0, x1, y1 = task.parts[ref].fp.extent()
    w, h = x1 - x0, y1 - y0
    horizontal = side in ("top", "bottom")
    return min((w if rot % 180 == 0 else h) if horizontal else (h if rot % 180 == 0 else w)
               for rot in edge_rotations(task.parts[ref].fp, side))


def _edge_length(task: PcbTask, side: str) -> float:
    return task.board.width if side in ("top", "bottom") else task.board.height


def edge_capacity(task: PcbTask, action: PcbAction) -> list[Evidence]:
    """``board_edge`` relations that ask more of one edge than it is long (the parts side by side at the
    rotations the relation allows), refused before placement: the placer would push a part past the
    outline. Relaxations move one part to an edge with room, or drop its relation (each clears that
    edge) — never a relation the task requires."""
    required = {relation_key(r) for r in task.requirements}
    sides: dict[str, list[tuple[int, str]]] = {}
    for i, rel in enumerate(action.relations):
        if rel.kind == "board_edge" and task.parts[rel.ref].fixed is None and \
                rel.ref not in (r for _, r in sides.get(rel.side, [])):  # a part stated twice takes its room once
            sides.setdefault(rel.side, []).append((i, rel.ref))
    used = {side: sum(_along(task, ref, side) for _, ref in rels) for side, rels in sides.items()}
    out: list[Evidence] = []
    for side, rels in sorted(sides.items()):
        length = _edge_length(task, side)
        if used[side] <= length + 1e-9:
            continue
        relax: list[Relaxation] = []
        for i, ref in reversed(rels):
            if relation_key(action.relations[i].model_dump(mode="json")) in required:
                continue
            own = {r.side for j, r in enumerate(action.relations) if r.kind == "board_edge" and r.ref == ref and j != i}
            for other in ("top", "bottom", "left", "right"):
                if other == side or OPPOSITE[other] in own or other in own:
                    continue
                if used.get(other, 0.0) + _along(task, ref, other) <= _edge_length(task, other) + 1e-9:
                    relax.append(Relaxation(
                        description=f"relations[{i}]: put {ref} at the {other} edge instead",
                        patch=[{"op": "replace", "path": ["relations", i, "side"], "value": other}]))
            relax.append(Relaxation(description=f"remove relations[{i}] (board_edge {ref})",
                                    patch=[{"op": "remove", "path": ["relations", i]}]))
        names = [f"relations[{i}] board_edge({ref})" for i, ref in rels]
        need = "needs" if len(rels) == 1 else "need"
        out.append(Evidence(
            code="E_EDGE_INFEASIBLE", location=f"payload.relations[{rels[-1][0]}].side", objects=names,
            message=f"{', '.join(ref for _, ref in rels)} {need} {used[side]:.1f} mm of the {side} edge side by side "
            f"(at the rotations board_edge allows), but it is {length:.1f} mm long",
            magnitudes=[Magnitude(name="edge length short", value=round(used[side] - length, 3), unit="mm")],
            relaxations=relax))
    return out


def _refs_of(rel: Any, task: PcbTask) -> list[str]:
    """The known parts a placement relation moves (unknown names are reported elsewhere)."""
    if rel.kind == "board_edge":
        names = [rel.ref]
    elif rel.kind == "place_relative":
        names = [rel.a] + ([] if "." in rel.b else [rel.b])
    elif rel.kind == "decouple":
        names = [rel.cap]
    else:
        names = list(rel.refs)
    return [n for n in names if n in task.parts]
