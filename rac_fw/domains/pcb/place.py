"""Placement that honours the relations: seeded simulated annealing on a 0.25 mm grid, then
legalization (overlaps, board containment and keepouts repaired by a bounded ring search).

The cost is a sum of *terms*, each over a few parts, so a move re-evaluates only the terms of the
part it moved. Hard terms (overlap, outside the board, inside a keepout) weigh far more than relation
terms, which weigh more than wirelength (half-perimeter per net, to keep nets routable). The
realizer's own measurements here are rectangle arithmetic; the verifier measures independently.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from rac_fw.domains.pcb import classes
from rac_fw.domains.pcb.board import PcbTask, Placement
from rac_fw.domains.pcb.footprints import Footprint, courtyard, edge_rotations, placed_pads
from rac_fw.domains.pcb.model import PcbAction

GRID = 0.25
W_HARD = 200.0
W_REL = 40.0
FACING = 0.1  # weight of a decoupling cap facing its pin, against a relation's (a preference, not a rule)
W_WIRE = 0.05
MAX_RESTARTS = 4  # two while a hard term or relation is missed, up to four while only a soft goal is
Rect = tuple[float, float, float, float]


def rect_gap(a: Rect, b: Rect) -> float:
    """Euclidean gap between two rectangles (0 when they touch or overlap)."""
    dx = max(0.0, a[0] - b[2], b[0] - a[2])
    dy = max(0.0, a[1] - b[3], b[1] - a[3])
    return math.hypot(dx, dy)


def rect_overlap(a: Rect, b: Rect) -> float:
    """Penetration depth: the smaller of the x and y overlaps (0 when apart)."""
    ox = min(a[2], b[2]) - max(a[0], b[0])
    oy = min(a[3], b[3]) - max(a[1], b[1])
    return max(0.0, min(ox, oy))


def _soft(v: float) -> float:
    return v + v * v if v > 0 else 0.0


@dataclass
class Term:
    """One cost term over ``parts`` (refs); ``hard`` terms must be zero for a legal placement."""

    parts: tuple[str, ...]
    fn: Callable[[], float]
    label: str
    hard: bool
    relation: int | None = None  # index of the relation it measures
    value: float = 0.0
    goal: bool = False  # a soft aim worth another restart when missed (e.g. a pair's pins crossed)


@dataclass
class PlacementResult:
    placements: dict[str, Placement]
    hard_violations: list[str]
    relation_violations: dict[int, float]  # relation index → excess in mm (realizer's own estimate)
    cost: float
    goals_missed: list[str]
    moves: int
    notes: list[str] = field(default_factory=list)


class Placer:
    def __init__(self, task: PcbTask, action: PcbAction, seed: int):
        self.task, self.action, self.rng = task, action, random.Random(seed)
        self.board = task.board
        self.fps: dict[str, Footprint] = {c.ref: c.fp for c in task.components}
        self.movable = [c.ref for c in task.components if c.fixed is None]
        self.both_sides = {c.ref for c in task.components if any(p.kind in ("thru_hole", "np_thru_hole")
                                                                    for p in self.fps[c.ref].pads)}
        self.pos: dict[str, list[int]] = {}  # movable ref → [ix, iy, rot]
        self.fixed: dict[str, Placement] = {c.ref: c.fixed for c in task.components if c.fixed is not None}
        self.rot_allowed: dict[str, list[int]] = {}  # board_edge: facing the edge, or a row along it
        for rel in action.relations:
            if rel.kind == "board_edge":
                self.rot_allowed[rel.ref] = edge_rotations(self.fps[rel.ref], rel.side)
        self._tables()
        self._courts: dict[str, Rect] = {}
        self.mirror: dict[str, tuple[str, str]] = {}  # ref → (partner, axis) of a symmetric relation
        for rel in action.relations:
            if rel.kind == "symmetric" and all(task.parts[r].fixed is None for r in rel.refs):
                first, second = rel.refs
                self.mirror[first], self.mirror[second] = (second, rel.axis), (first, rel.axis)
        self.terms: list[Term] = []
        self.by_part: dict[str, list[int]] = {}
        self._build_terms()

    # --- geometry of the current state (offset tables per rotation: the cost kernel's hot path) ---------
    def _tables(self) -> None:
        self.court_off: dict[str, dict[int, Rect]] = {}
        self.pad_off: dict[str, dict[int, dict[str, tuple[Rect, float]]]] = {}
        for ref, fp in self.fps.items():
            side = self.task.parts[ref].side
            self.court_off[ref] = {r: courtyard(fp, 0.0, 0.0, r, side) for r in (0, 90, 180, 270)}
            self.pad_off[ref] = {}
            for r in (0, 90, 180, 270):
                self.pad_off[ref][r] = {pd.pin: pd.core() for pd in placed_pads(ref, fp, 0.0, 0.0, r, {}, side)
                                        if pd.pin}
        # fixed parts keep their exact position and angle (a real board's need not be on the grid)
        self.fixed_court = {ref: self.task.courtyard_of(ref, p) for ref, p in self.fixed.items()}
        self.fixed_pad = {ref: {pd.pin: pd.core() for pd in placed_pads(ref, self.fps[ref], p.x, p.y, p.rot, {},
                                                                           self.task.parts[ref].side) if pd.pin}
                          for ref, p in self.fixed.items()}

    def place(self, ref: str) -> Placement:
        if ref in self.fixed:
            return self.fixed[ref]
        ix, iy, rot = self.pos[ref]
        return Placement(ix * GRID, iy * GRID, rot)

    def centre(self, ref: str) -> tuple[float, float]:
        if ref in self.fixed:
            return self.fixed[ref].x, self.fixed[ref].y
        p = self.pos[ref]
        return p[0] * GRID, p[1] * GRID

    def court(self, ref: str) -> Rect:
        if ref in self.fixed_court:
            return self.fixed_court[ref]
        rect = self._courts.get(ref)
        if rect is None:
            ix, iy, rot = self.pos[ref]
            x, y = ix * GRID, iy * GRID
            o = self.court_off[ref][rot]
            rect = self._courts[ref] = (x + o[0], y + o[1], x + o[2], y + o[3])
        return rect

    def move(self, ref: str, value: list[int]) -> None:
        self.pos[ref] = value
        self._courts.pop(ref, None)

    def pad_core(self, ref: str, pin: str) -> tuple[Rect, float]:
        """The pad as (rectangle, radius): its gap to another is ``rect_gap`` less both radii."""
        if ref in self.fixed_pad:
            return self.fixed_pad[ref][pin]
        ix, iy, rot = self.pos[ref]
        x, y = ix * GRID, iy * GRID
        (x0, y0, x1, y1), r = self.pad_off[ref][rot][pin]
        return (x + x0, y + y0, x + x1, y + y1), r

    def pad(self, ref: str, pin: str) -> Rect:
        """The pad's bounding box."""
        (x0, y0, x1, y1), r = self.pad_core(ref, pin)
        return x0 - r, y0 - r, x1 + r, y1 + r

    def pad_gap(self, a: tuple[Rect, float], b: tuple[Rect, float]) -> float:
        return max(0.0, rect_gap(a[0], b[0]) - a[1] - b[1])

    # --- terms ------------------------------------------------------------------------------------
    def _add(self, parts: tuple[str, ...], fn: Callable[[], float], label: str, hard: bool,
             relation: int | None = None, goal: bool = False) -> None:
        idx = len(self.terms)
        self.terms.append(Term(parts, fn, label, hard, relation, goal=goal))
        for r in parts:
            self.by_part.setdefault(r, []).append(idx)

    def _build_terms(self) -> None:
        task, b = self.task, self.board
        refs = [c.ref for c in task.components]
        inset = max(0.0, b.rules.edge_clearance - 0.25) + 0.05
        for i, a in enumerate(refs):
            for c in refs[i + 1:]:
                # courtyards meet on one side; a through-hole part's leads occupy both
                meet = task.parts[a].side == task.parts[c].side or a in self.both_sides or c in self.both_sides
                if (a in self.movable or c in self.movable) and meet:
                    self._add((a, c), partial(self._pair_overlap, a, c), f"{a} overlaps {c}", True)
        for r in self.movable:
            def outside(r: str = r) -> float:
                x0, y0, x1, y1 = self.court(r)
                return (max(0.0, inset - x0) + max(0.0, inset - y0) + max(0.0, x1 - (b.width - inset))
                        + max(0.0, y1 - (b.height - inset)))
            self._add((r,), outside, f"{r} outside the board", True)
            for reg in b.regions:
                if reg.kind == "keepout" and reg.no_parts:
                    box = (reg.x0, reg.y0, reg.x1, reg.y1)
                    self._add((r,), partial(self._box_overlap, r, box), f"{r} inside keepout {reg.name}", True)
        for idx, rel in enumerate(self.action.relations):
            self._relation_term(idx, rel)
        for net, members in task.nets.items():
            parts = tuple(sorted({m[0] for m in members}))
            if len(members) > 1 and any(p in self.movable for p in parts):
                self._add(parts, partial(self._wire, members), f"wire {net}", False)

    def _pair_overlap(self, a: str, c: str) -> float:
        return rect_overlap(self.court(a), self.court(c))

    def _box_overlap(self, ref: str, box: Rect) -> float:
        return rect_overlap(self.court(ref), box)

    def _pads_in_box(self, ref: str, pins: tuple[str, ...], box: Rect) -> float:
        """Copper of a kept-out net inside the region (a touching pad counts a little, to push it clear)."""
        return sum(rect_overlap(self.pad(ref, p), box) + (rect_gap(self.pad(ref, p), box) == 0) * 0.1 for p in pins)

    def _centre_of(self, ref: str, pin: str) -> tuple[float, float]:
        x0, y0, x1, y1 = self.pad(ref, pin)
        return (x0 + x1) / 2, (y0 + y1) / 2

    def _pair_crossing(self, p: tuple[tuple[str, str], ...], n: tuple[tuple[str, str], ...]) -> float:
        """1 when the straight lines of a pair's two halves cross (the pins are in opposite order, so
        one half must change layer and the pair cannot stay coupled), else 0."""
        (a1, a2), (b1, b2) = (self._centre_of(*p[0]), self._centre_of(*p[1])), (self._centre_of(*n[0]),
                                                                              self._centre_of(*n[1]))

        def side(o: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
            return (q[0] - o[0]) * (r[1] - o[1]) - (q[1] - o[1]) * (r[0] - o[0])
        crosses = side(a1, a2, b1) * side(a1, a2, b2) < 0 and side(b1, b2, a1) * side(b1, b2, a2) < 0
        return 1.0 if crosses else 0.0

    def _wire(self, members: list[tuple[str, str]]) -> float:
        return W_WIRE / W_REL * self._hpwl(members)

    def _hpwl(self, members: list[tuple[str, str]]) -> float:
        xs, ys = [], []
        for ref, pin in members:
            x0, y0, x1, y1 = self.pad(ref, pin)
            xs.append(x0 + x1)
            ys.append(y0 + y1)
        return ((max(xs) - min(xs)) + (max(ys) - min(ys))) / 2

    def _relation_term(self, idx: int, rel: Any) -> None:
        b = self.board
        kind = rel.kind
        if kind == "board_edge":
            ref, side, limit = rel.ref, rel.side, classes.EDGE_GAP[rel.distance]

            def edge(ref: str = ref, side: str = side, limit: float = limit) -> float:
                x0, y0, x1, y1 = self.court(ref)
                gap = {"left": x0, "top": y0, "right": b.width - x1, "bottom": b.height - y1}[side]
                return max(0.0, gap - limit)
            self._add((ref,), edge, f"relations[{idx}] board_edge", False, idx)
        elif kind == "place_relative":
            a, target, how = rel.a, rel.b, rel.relation
            limit = classes.NEAR_GAP[rel.distance]
            bref, _, bpin = target.partition(".")

            def rel_fn(a: str = a, bref: str = bref, bpin: str = bpin, how: str = how, limit: float = limit) -> float:
                ra = self.court(a)
                rb = self.pad(bref, bpin) if bpin else self.court(bref)
                gap = self.pad_gap((ra, 0.0), self.pad_core(bref, bpin)) if bpin else rect_gap(ra, rb)
                v = max(0.0, gap - limit)
                if how == "left_of":
                    v += max(0.0, ra[2] - rb[0])
                elif how == "right_of":
                    v += max(0.0, rb[2] - ra[0])
                elif how == "above":
                    v += max(0.0, ra[3] - rb[1])
                elif how == "below":
                    v += max(0.0, rb[3] - ra[1])
                return v
            self._add((a, bref), rel_fn, f"relations[{idx}] place_relative", False, idx)
        elif kind == "decouple":
            cap, (iref, _, ipin) = rel.cap, rel.pin.partition(".")
            net = self.task.parts[iref].pins[ipin]
            cap_pins = [p for p, n in self.task.parts[cap].pins.items() if n == net]
            limit = classes.DECOUPLE_GAP[rel.distance]

            def dec(cap: str = cap, iref: str = iref, ipin: str = ipin, limit: float = limit) -> float:
                target = self.pad_core(iref, ipin)
                return max(0.0, min(self.pad_gap(self.pad_core(cap, p), target) for p in cap_pins) - limit)
            self._add((cap, iref), dec, f"relations[{idx}] decouple", False, idx)
            others = [p for p, n in self.task.parts[cap].pins.items() if n != net]
            if others and self.task.route:  # routed boards: the cap's pad on the pin's net faces the pin
                # (turned the other way, its other pad boxes the pin in and the router cannot reach it)
                def faces(cap: str = cap, iref: str = iref, ipin: str = ipin, others: list[str] = others) -> float:
                    target = self.pad_core(iref, ipin)
                    on = min(self.pad_gap(self.pad_core(cap, p), target) for p in cap_pins)
                    return FACING * max(0.0, on - min(self.pad_gap(self.pad_core(cap, p), target) for p in others))
                self._add((cap, iref), faces, f"{cap} turned away from {rel.pin}", False, goal=True)
        elif kind == "align":
            refs, axis = tuple(rel.refs), rel.axis
            k = 1 if axis == "horizontal" else 0

            def align(refs: tuple[str, ...] = refs, k: int = k) -> float:
                vals = [self.centre(r)[k] for r in refs]
                return max(vals) - min(vals)
            self._add(refs, align, f"relations[{idx}] align", False, idx)
        elif kind == "symmetric":
            (a, c), axis = rel.refs, rel.axis

            def sym(a: str = a, c: str = c, axis: str = axis) -> float:
                (xa, ya), (xc, yc) = self.centre(a), self.centre(c)
                if axis == "vertical":
                    return abs(xa + xc - b.width) + abs(ya - yc)
                return abs(ya + yc - b.height) + abs(xa - xc)
            self._add((a, c), sym, f"relations[{idx}] symmetric", False, idx)
        elif kind == "group":
            refs, limit = tuple(rel.refs), classes.GROUP_SPREAD[rel.spread]

            def group(refs: tuple[str, ...] = refs, limit: float = limit) -> float:
                pts = [self.centre(r) for r in refs]
                cx = sum(p[0] for p in pts) / len(pts)
                cy = sum(p[1] for p in pts) / len(pts)
                return max(0.0, max(math.hypot(p[0] - cx, p[1] - cy) for p in pts) - limit)
            self._add(refs, group, f"relations[{idx}] group", False, idx)
        elif kind == "diff_pair":
            pins_p, pins_n = self.task.nets.get(rel.p, []), self.task.nets.get(rel.n, [])
            if len(pins_p) == 2 and len(pins_n) == 2:
                parts = tuple(sorted({r for r, _ in pins_p + pins_n}))
                self._add(parts, partial(self._pair_crossing, tuple(pins_p), tuple(pins_n)),
                          f"pair {rel.p}/{rel.n} pins crossed", False, goal=True)
        elif kind == "keepout":
            reg = self.task.regions[rel.region]
            box = (reg.x0, reg.y0, reg.x1, reg.y1)
            nets = set(rel.nets)
            for ref in rel.refs:
                self._add((ref,), partial(self._box_overlap, ref, box), f"relations[{idx}] keepout", False, idx)
            for c in self.task.components:
                pins = [p for p, n in c.pins.items() if n in nets]
                if pins:
                    self._add((c.ref,), partial(self._pads_in_box, c.ref, tuple(pins), box),
                              f"relations[{idx}] keepout", False, idx)

    # --- cost ---------------------------------------------------------------------------------------
    def _eval(self, t: Term) -> float:
        v = t.fn()
        return (W_HARD if t.hard else W_REL) * _soft(v) if t.relation is not None or t.hard else W_REL * v

    def total(self) -> float:
        s = 0.0
        for t in self.terms:
            t.value = self._eval(t)
            s += t.value
        return s

    def _local(self, ref: str) -> float:
        return sum(self.terms[i].value for i in self.by_part.get(ref, ()))

    def _reeval(self, refs: tuple[str, ...]) -> float:
        seen: set[int] = set()
        s = 0.0
        for r in refs:
            for i in self.by_part.get(r, ()):
                if i not in seen:
                    seen.add(i)
                    old = self.terms[i].value
                    self.terms[i].value = self._eval(self.terms[i])
                    s += self.terms[i].value - old
        return s

    # --- search -------------------------------------------------------------------------------------
    def _rots(self, ref: str) -> list[int]:
        return self.rot_allowed.get(ref, [0, 90, 180, 270])

    def initial(self) -> None:
        nx, ny = round(self.board.width / GRID), round(self.board.height / GRID)
        for r in self.movable:
            self.move(r, [self.rng.randrange(4, nx - 4), self.rng.randrange(4, ny - 4), self._rots(r)[0]])

    def start_from(self, placements: dict[str, Placement]) -> None:
        """Start at given positions (snapped to the grid) instead of random ones."""
        for r in self.movable:
            p = placements[r]
            rot = int(p.rot) if p.rot in self._rots(r) else self._rots(r)[0]
            self.move(r, [round(p.x / GRID), round(p.y / GRID), rot])

    def anneal(self, moves: int) -> tuple[float, int]:
        cost = self.total()
        if not self.movable:
            return cost, 0
        nx, ny = round(self.board.width / GRID), round(self.board.height / GRID)
        t0, t1 = 30.0, 0.01
        span0 = max(nx, ny) / 2
        for k in range(moves):
            frac = k / moves
            temp = t0 * (t1 / t0) ** frac
            span = max(1, int(span0 * (1 - frac) ** 2))
            r = self.rng.choice(self.movable)
            old = list(self.pos[r])
            u = self.rng.random()
            saved = {r: old}
            if u < 0.1 and len(self._rots(r)) > 1:
                self.move(r, [old[0], old[1], self.rng.choice(self._rots(r))])
            elif u < 0.15:
                other = self.rng.choice(self.movable)
                if other == r or self.fps[other].name != self.fps[r].name:
                    continue
                saved[other] = list(self.pos[other])
                self.move(r, [*saved[other][:2], old[2]])
                self.move(other, [*old[:2], saved[other][2]])
            else:
                self.move(r, [min(nx, max(0, old[0] + self.rng.randint(-span, span))),
                              min(ny, max(0, old[1] + self.rng.randint(-span, span))), old[2]])
            if len(saved) == 1 and r in self.mirror:
                partner, axis = self.mirror[r]
                saved[partner] = list(self.pos[partner])
                ix, iy, _ = self.pos[r]
                mx, my = (nx - ix, iy) if axis == "vertical" else (ix, ny - iy)
                self.move(partner, [mx, my, saved[partner][2]])
            parts = tuple(saved)
            delta = self._reeval(parts)
            if delta <= 0 or self.rng.random() < math.exp(-delta / temp):
                cost += delta
            else:
                for ref, value in saved.items():
                    self.move(ref, value)
                self._reeval(parts)
        return self.total(), moves

    def _unhappy(self, ref: str) -> bool:
        return any(self.terms[i].value > 1e-9 and (self.terms[i].hard or self.terms[i].relation is not None)
                   for i in self.by_part.get(ref, ()))

    def polish(self, radius: int = 8) -> None:
        """Greedy square search for each part with an unmet hard or relation term: move it to the best
        nearby grid position (legalizes, and settles the residuals the annealer left)."""
        for _ in range(3):
            improved = False
            for r in self.movable:
                if not self._unhappy(r):
                    continue
                best = self._local(r)
                best_pos = list(self.pos[r])
                ox, oy, _ = best_pos
                for rot in self._rots(r):
                    for dx in range(-radius, radius + 1):
                        for dy in range(-radius, radius + 1):
                            self.move(r, [ox + dx, oy + dy, rot])
                            self._reeval((r,))
                            v = self._local(r)
                            if v < best - 1e-9:
                                best, best_pos, improved = v, list(self.pos[r]), True
                self.move(r, best_pos)
                self._reeval((r,))
            if not improved:
                break

    def result(self, moves: int) -> PlacementResult:
        cost = self.total()
        hard = [t.label for t in self.terms if t.hard and t.fn() > 1e-9]
        rel: dict[int, float] = {}
        for t in self.terms:
            if t.relation is not None:
                v = t.fn()
                if v > 1e-6:
                    rel[t.relation] = max(rel.get(t.relation, 0.0), v)
        goals = [t.label for t in self.terms if t.goal and t.fn() > 0]
        return PlacementResult({r: self.place(r) for r in [*self.fixed, *self.pos]}, hard, rel, cost, goals, moves)


def legalize(task: PcbTask, placements: dict[str, Placement], seed: int = 0) -> PlacementResult:
    """Keep the given positions and repair only what is illegal (overlap, outside, keepout): the
    "preserve-legal coordinates" baseline of the robustness study."""
    placer = Placer(task, PcbAction(relations=[]), seed)
    placer.start_from(placements)
    placer.total()
    placer.polish(radius=12)
    return placer.result(0)


def place(task: PcbTask, action: PcbAction, seed: int) -> PlacementResult:
    """Seeded placement: the best of up to ``MAX_RESTARTS`` annealing runs, each polished by the ring search."""
    best: PlacementResult | None = None
    n = len([c for c in task.components if c.fixed is None])
    for restart in range(MAX_RESTARTS):
        placer = Placer(task, action, seed * 7919 + restart)
        placer.initial()
        _, moves = placer.anneal(min(5000, 1000 + 350 * n))
        placer.polish()
        res = placer.result(moves)
        key = (len(res.hard_violations), len(res.relation_violations), len(res.goals_missed), res.cost)
        if best is None or key < (len(best.hard_violations), len(best.relation_violations), len(best.goals_missed),
                                  best.cost):
            best = res
        if not res.hard_violations and not res.relation_violations and not res.goals_missed:
            break
        if restart >= 1 and (best.hard_violations or best.relation_violations):
            break  # nothing legal after two tries: report the misses rather than keep searching
    assert best is not None
    return best
