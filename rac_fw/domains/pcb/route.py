"""Grid router: A* on a 0.25 mm grid per copper layer, 8-neighbour moves (45° segments), through vias,
rip-up and reroute (length tuning is :mod:`meander`'s).

Clearance is kept by *exact* distance masks: a cell is closed to a net when the distance from its
centre to any other net's copper is below ``clearance + track_width/2 + margin``, where the margin
covers the worst dip of a 45° step between two open cells (so every segment between open cells is
legal, not just its end points). Vias are checked with their own threshold on every layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely import Polygon

from rac_fw.domains.pcb.board import Board, PcbTask
from rac_fw.domains.pcb.dfm import is_smd
from rac_fw.domains.pcb.footprints import PlacedPad
from rac_fw.domains.pcb.kernels import astar_flat

GRID = 0.25
SQRT2 = math.sqrt(2.0)
Cell = tuple[int, int, int]  # (layer, iy, ix)
VIA_COST = 10.0
BEND_COST = 0.3  # per turn, in grid steps
LANE = 1.0  # mm of escape lane reserved in front of an elongated pad
LANE_COST = 1.0  # per cell of another net's lane
RIP_PENALTY = 40.0
MAX_EXPANSIONS = 200_000


@dataclass
class NetRoute:
    """A net's copper: cell paths (one per connection), and the vias where a path changes layer."""

    paths: list[list[Cell]] = field(default_factory=list)

    def vias(self) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for path in self.paths:
            for a, b in zip(path, path[1:], strict=False):
                if a[0] != b[0] and (a[1], a[2]) not in out:
                    out.append((a[1], a[2]))
        return out

    def length(self) -> float:
        total = 0.0
        for path in self.paths:
            for a, b in zip(path, path[1:], strict=False):
                if a[0] == b[0]:
                    total += GRID * (SQRT2 if a[1] != b[1] and a[2] != b[2] else 1.0)
        return total


@dataclass
class NetSpec:
    name: str
    pads: list[PlacedPad]
    layers: tuple[int, ...]  # layers this net may use
    max_vias: int | None = None
    couple_to: str | None = None  # route next to this net (differential pair)
    partner: str | None = None  # the other half of its differential pair (either half)
    joined: list[set[tuple[str, str]]] = field(default_factory=list)  # (ref, pin) groups already joined by copper


def _dist_rect(xs: np.ndarray, ys: np.ndarray, cx: float, cy: float, hw: float, hh: float) -> np.ndarray:
    dx = np.maximum(np.abs(xs - cx) - hw, 0.0)
    dy = np.maximum(np.abs(ys - cy) - hh, 0.0)
    return np.hypot(dx, dy)


def _edge_distance(board: Board, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Distance of each grid point to the board edge (0 outside the outline or inside a cut-out)."""
    if not board.outline and not board.cutouts:
        return np.minimum(np.minimum(xs, board.width - xs), np.minimum(ys, board.height - ys))
    shape = Polygon(board.outline_points(), holes=[list(c) for c in board.cutouts])
    dist = shapely.distance(shape.boundary, shapely.points(xs.ravel(), ys.ravel())).reshape(xs.shape)
    return np.where(shapely.contains_xy(shape, xs, ys), dist, 0.0)


def _dist_seg(xs: np.ndarray, ys: np.ndarray, x1: float, y1: float, x2: float, y2: float) -> np.ndarray:
    vx, vy = x2 - x1, y2 - y1
    ll = vx * vx + vy * vy
    if ll == 0:
        return np.hypot(xs - x1, ys - y1)
    t = np.clip(((xs - x1) * vx + (ys - y1) * vy) / ll, 0.0, 1.0)
    return np.hypot(xs - (x1 + t * vx), ys - (y1 + t * vy))


class Grid:
    """Occupancy of one board: fixed obstacles, and per-net clearance masks counted per cell."""

    def __init__(self, task: PcbTask, pads: list[PlacedPad], via_free: list[Polygon]):
        b, r = task.board, task.board.rules
        self.task, self.rules = task, r
        self.nl = b.layers
        self.nx = int(round(b.width / GRID)) + 1
        self.ny = int(round(b.height / GRID)) + 1
        self.hw, self.rv = r.track_width / 2, r.via_diameter / 2
        d = r.clearance + self.hw
        self.margin = math.sqrt(d * d + (GRID * SQRT2 / 2) ** 2) - d + 1e-3
        ys, xs = np.mgrid[0:self.ny, 0:self.nx]
        self.xs, self.ys = xs * GRID, ys * GRID
        edge = _edge_distance(b, self.xs, self.ys)
        fixed = edge < r.edge_clearance + self.hw + self.margin
        fixed_v = edge < r.edge_clearance + self.rv + 1e-3
        self.fixed = np.broadcast_to(fixed, (self.nl, self.ny, self.nx)).copy()
        for reg in b.regions:
            if reg.kind == "keepout":
                dist = _dist_rect(self.xs, self.ys, (reg.x0 + reg.x1) / 2, (reg.y0 + reg.y1) / 2,
                                  (reg.x1 - reg.x0) / 2, (reg.y1 - reg.y0) / 2)
                if reg.no_tracks:
                    for layer, name in enumerate(b.layer_names):
                        if not reg.layers or name in reg.layers:
                            self.fixed[layer] |= dist < self.hw + self.margin
                if reg.no_vias:
                    fixed_v |= dist < self.rv + 1e-3
        self.fixed_v = fixed_v
        self._close_vias(pads, via_free)
        self.lanes = np.zeros((self.nl, self.ny, self.nx), np.float32)
        self.lane_own: dict[str, list[tuple[int, slice, slice, np.ndarray]]] = {}
        self._escape_lanes(pads)
        self.cnt_t = np.zeros((self.nl, self.ny, self.nx), np.int16)  # nets whose copper closes a track cell
        self.cnt_v = np.zeros((self.nl, self.ny, self.nx), np.int16)  # … closes a via centre
        self.cnt_pad = np.zeros((self.nl, self.ny, self.nx), np.int16)  # pads only (cannot be ripped up)
        self.own: dict[str, list[tuple[int, slice, slice, np.ndarray, np.ndarray, bool]]] = {}
        self.net_block: dict[str, np.ndarray] = {}  # zone keepouts per net (from keepout relations)
        self.history = np.zeros((self.nl, self.ny, self.nx), np.float32)
        names = b.layer_names
        for p in pads:  # an unconnected pad (or a bare hole) is an obstacle to every net: it gets a net of its own
            owner = p.net if p.net is not None else f"<unconnected {p.ref}.{p.pin}>"
            for layer in (names.index(n) for n in p.on(names)):
                self._add_shape(owner, layer, ("pad", p), pad=True)

    def _close_vias(self, pads: list[PlacedPad], via_free: list[Polygon]) -> None:
        """DFM (:mod:`dfm`): no via's copper on a surface-mount pad (its own net's too) nor inside an
        exposed-pad part's pad ring."""
        for p in pads:
            if not is_smd(p):
                continue
            x0, y0, x1, y1 = p.bbox()
            sy, sx = self._window(x0, y0, x1, y1, self.rv)
            xs, ys = self.xs[sy, sx], self.ys[sy, sx]
            if p.round:
                dist = np.maximum(np.hypot(xs - p.cx, ys - p.cy) - p.w / 2, 0.0)
            else:
                dist = _dist_rect(xs, ys, (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2)
            self.fixed_v[sy, sx] |= dist < self.rv + 1e-3
        for area in via_free:
            x0, y0, x1, y1 = area.bounds
            sy, sx = self._window(x0, y0, x1, y1, self.rv)
            xs, ys = self.xs[sy, sx], self.ys[sy, sx]
            dist = shapely.distance(area, shapely.points(xs.ravel(), ys.ravel())).reshape(xs.shape)
            self.fixed_v[sy, sx] |= dist < self.rv + 1e-3

    def _escape_lanes(self, pads: list[PlacedPad]) -> None:
        """A soft reservation in front of each elongated SMD pad of a routed net (fine-pitch IC and
        connector pins): ``LANE`` mm straight out of both ends along the pad's axis. Other nets pay
        ``LANE_COST`` per cell that would crowd the lane, so a net leaving a pin row does not jog across
        its neighbour's exit (the pair half routed first used to box the other in)."""
        names = self.task.board.layer_names
        nets = {p.net for p in pads if p.net is not None}
        reach = self.rules.clearance + 2 * self.hw + self.margin
        for p in pads:
            if p.net not in nets or not is_smd(p) or p.tilt or max(p.w, p.h) < 2 * min(p.w, p.h):
                continue
            layer = names.index(p.on(names)[0])
            along_x = p.w > p.h
            half = (p.w if along_x else p.h) / 2
            for sgn in (1, -1):
                x1, y1 = (p.cx + sgn * half, p.cy) if along_x else (p.cx, p.cy + sgn * half)
                x2, y2 = (x1 + sgn * LANE, y1) if along_x else (x1, y1 + sgn * LANE)
                sy, sx = self._window(min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2), reach)
                mask = _dist_seg(self.xs[sy, sx], self.ys[sy, sx], x1, y1, x2, y2) < reach
                self.lanes[layer, sy, sx] += mask
                self.lane_own.setdefault(p.net, []).append((layer, sy, sx, mask))

    def lane_penalty(self, nets: tuple[str, ...]) -> np.ndarray:
        """Cost of crowding escape lanes other than those of ``nets`` (a net, and its pair partner:
        a pair's halves leave their pins side by side)."""
        own = np.zeros_like(self.lanes)
        for layer, sy, sx, mask in (item for n in nets for item in self.lane_own.get(n, [])):
            own[layer, sy, sx] += mask
        return np.clip(self.lanes - own, 0, 1) * LANE_COST

    # --- masks -----------------------------------------------------------------------------------
    def _window(self, x0: float, y0: float, x1: float, y1: float, reach: float) -> tuple[slice, slice]:
        ix0 = max(0, int(math.floor((x0 - reach) / GRID)))
        ix1 = min(self.nx, int(math.ceil((x1 + reach) / GRID)) + 1)
        iy0 = max(0, int(math.floor((y0 - reach) / GRID)))
        iy1 = min(self.ny, int(math.ceil((y1 + reach) / GRID)) + 1)
        return slice(iy0, iy1), slice(ix0, ix1)

    def _add_shape(self, net: str, layer: int, shape: tuple, pad: bool = False) -> None:
        r = self.rules
        kind = shape[0]
        reach = r.clearance + self.hw + self.rv + r.via_diameter + self.margin
        if kind == "pad":
            p: PlacedPad = shape[1]
            x0, y0, x1, y1 = p.bbox()  # rounded corners and tilted pads: their bounding box (conservative)
            sy, sx = self._window(x0, y0, x1, y1, reach)
            xs, ys = self.xs[sy, sx], self.ys[sy, sx]
            if p.round:
                dist = np.maximum(np.hypot(xs - p.cx, ys - p.cy) - p.w / 2, 0.0)
            else:
                dist = _dist_rect(xs, ys, (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2)
            copper = 0.0
        elif kind == "seg":
            _, x1, y1, x2, y2 = shape
            sy, sx = self._window(min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2), reach)
            dist = _dist_seg(self.xs[sy, sx], self.ys[sy, sx], x1, y1, x2, y2)
            copper = self.hw
        else:  # via
            _, x, y = shape
            sy, sx = self._window(x, y, x, y, reach)
            dist = np.hypot(self.xs[sy, sx] - x, self.ys[sy, sx] - y)
            copper = self.rv
        mt = dist < r.clearance + self.hw + copper + self.margin
        mv = dist < r.clearance + self.rv + copper + 1e-3
        self.cnt_t[layer, sy, sx] += mt
        self.cnt_v[layer, sy, sx] += mv
        if pad:
            self.cnt_pad[layer, sy, sx] += mt
        self.own.setdefault(net, []).append((layer, sy, sx, mt, mv, pad))

    def add_fixed_track(self, net: str, layer: int, seg: tuple[float, float, float, float]) -> None:
        """Copper laid before routing (an exposed-pad tie): an obstacle to other nets, never ripped up."""
        self._add_shape(net, layer, ("seg", *seg), pad=True)

    def add_route(self, net: str, route: NetRoute) -> None:
        for layer, (x1, y1, x2, y2) in segments(route):
            self._add_shape(net, layer, ("seg", x1, y1, x2, y2))
        for iy, ix in route.vias():
            for layer in range(self.nl):
                self._add_shape(net, layer, ("via", ix * GRID, iy * GRID))

    def remove_route(self, net: str) -> None:
        keep: list[tuple[int, slice, slice, np.ndarray, np.ndarray, bool]] = []
        for layer, sy, sx, mt, mv, pad in self.own.get(net, []):
            if pad:
                keep.append((layer, sy, sx, mt, mv, pad))
            else:
                self.cnt_t[layer, sy, sx] -= mt
                self.cnt_v[layer, sy, sx] -= mv
        self.own[net] = keep

    def own_counts(self, net: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ot = np.zeros_like(self.cnt_t)
        ov = np.zeros_like(self.cnt_v)
        op = np.zeros_like(self.cnt_pad)
        for layer, sy, sx, mt, mv, pad in self.own.get(net, []):
            ot[layer, sy, sx] += mt
            ov[layer, sy, sx] += mv
            if pad:
                op[layer, sy, sx] += mt
        return ot, ov, op

    def block_zone(self, net: str, x0: float, y0: float, x1: float, y1: float) -> None:
        dist = _dist_rect(self.xs, self.ys, (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2)
        cur = self.net_block.get(net, np.zeros((self.ny, self.nx), bool))
        self.net_block[net] = cur | (dist < self.rv + 1e-3)

    # --- search ------------------------------------------------------------------------------------
    def cells_in_pad(self, p: PlacedPad) -> list[tuple[int, int]]:
        """Grid cells where a track end lies wholly inside the pad (its terminal cells)."""
        hw, hh = p.w / 2 - self.hw, p.h / 2 - self.hw
        if p.round or p.tilt:  # a tilted pad: the square inside its inscribed circle
            hw = hh = (min(p.w, p.h) / 2 - self.hw) / SQRT2
        out = []
        for iy in range(int(math.ceil((p.cy - hh) / GRID - 1e-9)), int(math.floor((p.cy + hh) / GRID + 1e-9)) + 1):
            for ix in range(int(math.ceil((p.cx - hw) / GRID - 1e-9)),
                            int(math.floor((p.cx + hw) / GRID + 1e-9)) + 1):
                if 0 <= ix < self.nx and 0 <= iy < self.ny:
                    out.append((iy, ix))
        return out


def segments(route: NetRoute) -> list[tuple[int, tuple[float, float, float, float]]]:
    """Merge collinear steps of each path into straight segments: (layer, (x1, y1, x2, y2))."""
    out: list[tuple[int, tuple[float, float, float, float]]] = []
    for path in route.paths:
        i = 0
        while i < len(path) - 1:
            a, b = path[i], path[i + 1]
            if a[0] != b[0]:
                i += 1
                continue
            d = (b[1] - a[1], b[2] - a[2])
            j = i + 1
            while j < len(path) - 1 and path[j + 1][0] == a[0] and (path[j + 1][1] - path[j][1],
                                                                      path[j + 1][2] - path[j][2]) == d:
                j += 1
            e = path[j]
            out.append((a[0], (a[2] * GRID, a[1] * GRID, e[2] * GRID, e[1] * GRID)))
            i = j
    return out


def astar(grid: Grid, sources: set[Cell], targets: set[Cell], open_t: np.ndarray, open_v: np.ndarray,
          penalty: np.ndarray | None, layers: tuple[int, ...], allow_vias: bool,
          bonus: np.ndarray | None) -> list[Cell] | None:
    """Cheapest path from any source cell to any target cell over open cells (compiled kernel)."""
    nx, ny, nl = grid.nx, grid.ny, grid.nl
    plane = nx * ny
    src = np.array(sorted(c[0] * plane + c[1] * nx + c[2] for c in sources), np.int64)
    tmask = np.zeros(nl * plane, np.uint8)
    for c in targets:
        tmask[c[0] * plane + c[1] * nx + c[2]] = 1
    box = np.array([min(c[2] for c in targets), max(c[2] for c in targets), min(c[1] for c in targets),
                    max(c[1] for c in targets)], np.int64)
    empty = np.empty(0, np.float64)
    flat = astar_flat(open_t, open_v, empty if bonus is None else bonus.ravel().astype(np.float64),
                      empty if penalty is None else penalty.ravel().astype(np.float64),
                      np.array(layers, np.int64), allow_vias, VIA_COST, BEND_COST, nx, ny, nl, src, tmask, box,
                      MAX_EXPANSIONS)
    if flat.size == 0:
        return None
    return [(int(k // plane), int(k % plane // nx), int(k % nx)) for k in flat]


@dataclass
class RouteResult:
    routes: dict[str, NetRoute]
    failed: dict[str, str]  # net → reason
    ripups: int


class Router:
    def __init__(self, task: PcbTask, pads: list[PlacedPad], specs: list[NetSpec], via_free: list[Polygon]):
        self.grid = Grid(task, pads, via_free)
        self.specs = {s.name: s for s in specs}
        self.routes: dict[str, NetRoute] = {}

    def open_masks(self, spec: NetSpec, soft: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        g = self.grid
        ot, ov, op = g.own_counts(spec.name)
        others_t = g.cnt_t - ot
        others_pad = g.cnt_pad - op
        closed = g.fixed | ((others_pad if soft else others_t) > 0)
        allowed = np.zeros(g.nl, bool)
        allowed[list(spec.layers)] = True
        closed |= ~allowed[:, None, None]
        via_closed = g.fixed_v | ((g.cnt_v - ov) > 0).any(axis=0)
        if spec.name in g.net_block:
            closed |= g.net_block[spec.name][None]
            via_closed |= g.net_block[spec.name]
        partner = () if spec.partner is None else (spec.partner,)
        penalty = g.lane_penalty((spec.name, *partner)) + g.history
        if soft:
            penalty += np.where((others_t - others_pad) > 0, RIP_PENALTY, 0.0)
        return (~closed).astype(np.uint8).ravel(), (~via_closed).astype(np.uint8).ravel(), penalty

    def _bonus(self, spec: NetSpec) -> np.ndarray | None:
        if spec.couple_to is None or spec.couple_to not in self.routes:
            return None
        g = self.grid
        band = np.full((g.nl, g.ny, g.nx), 2.0)
        for layer, (x1, y1, x2, y2) in segments(self.routes[spec.couple_to]):
            d = _dist_seg(g.xs, g.ys, x1, y1, x2, y2)
            band[:, d < 0.75] = 1.0  # broadside, on the other layers
            band[layer][d <= 0.3] = 2.0  # same layer: beside the track, not on it
        return band

    def route_net(self, spec: NetSpec, soft: bool = False) -> NetRoute | None:
        g = self.grid
        open_t, open_v, penalty = self.open_masks(spec, soft)
        bonus = self._bonus(spec)
        pads = sorted(spec.pads, key=lambda p: (p.ref, p.pin))
        terms: list[set[Cell]] = []
        groups: dict[int, int] = {}  # joined group → its index in terms
        names = self.grid.task.board.layer_names
        for p in pads:
            layers = tuple(x for x in (names.index(n) for n in p.on(names)) if x in spec.layers)
            cells = {(layer, iy, ix) for layer in layers for iy, ix in g.cells_in_pad(p)}
            group = next((k for k, members in enumerate(spec.joined) if (p.ref, p.pin) in members), None)
            if not cells and group is None:
                return None
            if group is not None and group in groups:  # already joined copper: one terminal
                terms[groups[group]] |= cells
                continue
            if group is not None:
                groups[group] = len(terms)
            terms.append(cells)
        tree = set(terms[0])
        remaining = terms[1:]
        route = NetRoute()
        allow_vias = spec.max_vias != 0 and len(spec.layers) > 1
        while remaining:
            sample = list(tree)[:64]

            def near(cells: set[Cell], sample: list[Cell] = sample) -> float:
                c = next(iter(cells))
                return min(abs(c[1] - t[1]) + abs(c[2] - t[2]) for t in sample)
            remaining.sort(key=near)
            target = remaining.pop(0)
            if tree & target:
                tree |= target
                continue
            path = astar(g, tree, target, open_t, open_v, penalty, spec.layers, allow_vias, bonus)
            if path is None:
                return None
            route.paths.append(path)
            tree |= set(path) | target
        if spec.max_vias is not None and len(route.vias()) > spec.max_vias:
            return None
        return route

    def blockers(self, spec: NetSpec, path_route: NetRoute) -> set[str]:
        """Nets whose copper closes a cell of ``path_route`` (found by the soft pass)."""
        g = self.grid
        cells = {c for p in path_route.paths for c in p}
        out = set()
        for net, items in g.own.items():
            if net == spec.name or net not in self.routes:
                continue
            for layer, sy, sx, mt, _, pad in items:
                if pad:
                    continue
                if any(c[0] == layer and sy.start <= c[1] < sy.stop and sx.start <= c[2] < sx.stop
                       and mt[c[1] - sy.start, c[2] - sx.start] for c in cells):
                    out.add(net)
                    break
        return out

    def run(self, order: list[str], max_ripups: int) -> RouteResult:
        queue = list(order)
        failed: dict[str, str] = {}
        ripped: dict[str, int] = {}
        ripups = 0
        guard = 0
        while queue and guard < 6 * len(order) + 10:
            guard += 1
            name = queue.pop(0)
            spec = self.specs[name]
            route = self.route_net(spec)
            if route is not None:
                self.routes[name] = route
                self.grid.add_route(name, route)
                failed.pop(name, None)
                continue
            soft = self.route_net(spec, soft=True) if ripups < max_ripups else None
            victims = self.blockers(spec, soft) if soft is not None else set()
            victims = {v for v in victims if ripped.get(v, 0) < 3}
            if not victims:
                failed[name] = "no path: pads or keepouts enclose a terminal" if soft is None else "blocked"
                continue
            for v in sorted(victims):
                self.grid.remove_route(v)
                del self.routes[v]
                ripped[v] = ripped.get(v, 0) + 1
                ripups += 1
                queue.append(v)
            for p in soft.paths if soft is not None else []:
                for c in p:
                    self.grid.history[c] += 0.5
            queue.insert(0, name)
        for name in queue:
            failed.setdefault(name, "rip-up budget spent")
        return RouteResult(self.routes, failed, ripups)

    def couple(self, p: str, n: str) -> bool:
        """Re-route ``n`` along the final copper of ``p`` (rip-ups may have moved ``p`` after ``n`` was
        routed); the old route stays when the coupled one does not fit."""
        if p not in self.routes or n not in self.routes:
            return False
        old = self.routes.pop(n)
        self.grid.remove_route(n)
        spec = self.specs[n]
        spec.couple_to = p
        history, self.grid.history = self.grid.history, np.zeros_like(self.grid.history)
        new = self.route_net(spec)  # congestion history is for negotiation, not for hugging a partner
        self.grid.history = history
        chosen = new if new is not None else old
        self.routes[n] = chosen
        self.grid.add_route(n, chosen)
        return new is not None
