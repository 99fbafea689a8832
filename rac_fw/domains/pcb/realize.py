"""The realizer: place (if any part is movable), route (if the task is routed), tune lengths, and
write the artifact plus a receipt of what it believes it achieved (the verifier ignores the receipt).

Deterministic per seed: the placer's random stream is the only randomness; net order is fixed by the
relations (``route_priority`` first) and then by half-perimeter, ascending.
"""

from __future__ import annotations

from dataclasses import dataclass

from rac_fw.contract import Realization, Receipt, sha256_of
from rac_fw.domains.pcb import classes
from rac_fw.domains.pcb.artifact import BoardArtifact, PartPlacement, Track, Via
from rac_fw.domains.pcb.board import PcbTask, Placement
from rac_fw.domains.pcb.dfm import via_free_areas
from rac_fw.domains.pcb.meander import tune
from rac_fw.domains.pcb.model import PcbAction
from rac_fw.domains.pcb.place import PlacementResult, place
from rac_fw.domains.pcb.route import GRID, NetSpec, Router, RouteResult, segments
from rac_fw.domains.pcb.ties import Tie, exposed_pad_ties

MAX_RIPUPS = 40
RETRY_ORDERS = 3  # routing passes after the first while nets stay unrouted (each from scratch)
RETRY_FEW = 3  # … the second and third only when at most this many are (a real board missing dozens gains little)
PLACE_RETRIES = 2  # placements with derived seeds when a combined task's routing leaves nets unrouted


@dataclass
class Outcome:
    """Everything the realizer learned, kept for the receipt."""

    placement: PlacementResult | None
    routing: RouteResult | None
    lengths: dict[str, float]


def _net_specs(task: PcbTask, action: PcbAction, placements: dict[str, Placement],
               ties: list[Tie]) -> tuple[list[NetSpec], list[str]]:
    pads = task.pads_at(placements)
    tied = {(t.ref, t.pin) for t in ties}  # exposed pads, reached through their ring pins' stubs
    by_net: dict[str, list] = {}
    for p in pads:
        if p.net is not None and (p.ref, p.pin) not in tied:
            by_net.setdefault(p.net, []).append(p)
    layer_of = {ln: i for i, ln in enumerate(task.board.layer_names)}
    all_layers = tuple(range(task.board.layers))
    joined: dict[str, list[set[tuple[str, str]]]] = {}
    for key in sorted(tied):
        group = {(t.ref, t.ring_pin) for t in ties if (t.ref, t.pin) == key}
        joined.setdefault(next(t.net for t in ties if (t.ref, t.pin) == key), []).append(group)
    specs = {n: NetSpec(n, ps, all_layers, joined=joined.get(n, [])) for n, ps in by_net.items()
             if len(ps) > 1 and not (len(joined.get(n, [])) == 1 and {(p.ref, p.pin) for p in ps} <= joined[n][0])}
    priority: list[str] = []
    for rel in action.relations:
        if rel.kind == "layer_preference" and rel.net in specs:
            specs[rel.net].layers = (layer_of[rel.layer],)
            specs[rel.net].max_vias = 0
        elif rel.kind == "via_limit" and rel.net in specs:
            specs[rel.net].max_vias = rel.max
        elif rel.kind == "diff_pair" and rel.n in specs:
            specs[rel.n].couple_to = specs[rel.n].partner = rel.p
            if rel.p in specs:
                specs[rel.p].partner = rel.n
            priority += [n for n in (rel.p, rel.n) if n not in priority]
        elif rel.kind == "route_priority":
            priority = [n for n in rel.nets if n in specs and n not in priority] + priority

    def hpwl(name: str) -> float:
        ps = specs[name].pads
        return max(p.cx for p in ps) - min(p.cx for p in ps) + max(p.cy for p in ps) - min(p.cy for p in ps)
    order = [n for n in priority if n in specs] + sorted((n for n in specs if n not in priority),
                                                         key=lambda n: (len(specs[n].pads) <= 2, hpwl(n), n))
    return list(specs.values()), order


def _route(task: PcbTask, action: PcbAction, placements: dict[str, Placement], specs: list[NetSpec],
           order: list[str], ties: list[Tie]) -> tuple[Router, RouteResult]:
    via_free = [area for _, area in via_free_areas(task, placements)]
    router = Router(task, task.pads_at(placements), specs, via_free)
    names = task.board.layer_names
    for t in ties:
        router.grid.add_fixed_track(t.net, names.index(t.layer), (t.x1, t.y1, t.x2, t.y2))
    for rel in action.relations:
        if rel.kind == "keepout" and rel.nets:
            reg = task.regions[rel.region]
            for n in rel.nets:
                router.grid.block_zone(n, reg.x0, reg.y0, reg.x1, reg.y1)
    return router, router.run(order, MAX_RIPUPS)


def _route_board(task: PcbTask, action: PcbAction, placements: dict[str, Placement]
                 ) -> tuple[Router, RouteResult, list[Tie]]:
    """Route at fixed placements: a first pass, then passes from scratch with the failed nets first
    and the rest reordered, keeping the pass that leaves the fewest nets unrouted."""
    ties = exposed_pad_ties(task, placements)
    specs, order = _net_specs(task, action, placements, ties)
    router, routing = _route(task, action, placements, specs, order, ties)
    for variant in range(RETRY_ORDERS):  # after the first retry only while few nets are left over
        if not routing.failed or (variant and len(routing.failed) > RETRY_FEW):
            break
        first = sorted(routing.failed)
        rest = [n for n in order if n not in first]
        rest = [rest, rest[::-1], rest[len(rest) // 2:] + rest[:len(rest) // 2]][variant]
        retry, again = _route(task, action, placements, specs, first + rest, ties)
        if len(again.failed) < len(routing.failed):
            router, routing = retry, again
    return router, routing, ties


def _tune(router: Router, action: PcbAction) -> tuple[dict[str, float], int]:
    """Couple pairs and tune lengths; return the lengths and how many groups stay out of tolerance."""
    lengths: dict[str, float] = {}
    missed = 0
    for rel in action.relations:
        if rel.kind == "route_matched":
            nets, tol = list(rel.nets), classes.LENGTH_TOLERANCE[rel.tolerance]
        elif rel.kind == "diff_pair":
            router.couple(rel.p, rel.n)
            nets, tol = [rel.p, rel.n], classes.LENGTH_TOLERANCE[rel.tolerance]
        else:
            continue
        tuned = tune(router, nets, tol)
        lengths.update(tuned)
        missed += len(tuned) > 1 and max(tuned.values()) - min(tuned.values()) > tol
    return lengths, missed


def _misses(placement: PlacementResult | None, routing: RouteResult, untuned: int) -> tuple[int, int, int]:
    placed = 0 if placement is None else len(placement.hard_violations) + len(placement.relation_violations)
    return placed, len(routing.failed), untuned


def realize_board(task: PcbTask, action: PcbAction, seed: int) -> tuple[BoardArtifact, Outcome]:
    placement = None
    if any(c.fixed is None for c in task.components):
        placement = place(task, action, seed)
        placements = placement.placements
    else:
        placements = {c.ref: c.fixed for c in task.components if c.fixed is not None}
    tracks: list[Track] = []
    vias: list[Via] = []
    routing = None
    lengths: dict[str, float] = {}
    if task.route:
        router, routing, ties = _route_board(task, action, placements)
        lengths, untuned = _tune(router, action)
        for k in range(1, PLACE_RETRIES + 1):  # a placement that boxes a pin in: place again (derived seed)
            if placement is None or not (routing.failed or untuned):
                break
            other = place(task, action, seed + 7919 * k)
            o_router, o_routing, o_ties = _route_board(task, action, other.placements)
            o_lengths, o_untuned = _tune(o_router, action)
            if _misses(other, o_routing, o_untuned) < _misses(placement, routing, untuned):
                placement, placements = other, other.placements
                router, routing, ties, lengths, untuned = o_router, o_routing, o_ties, o_lengths, o_untuned
        names = task.board.layer_names
        r = task.board.rules
        tracks += [Track(net=t.net, layer=t.layer, x1=t.x1, y1=t.y1, x2=t.x2, y2=t.y2, width=r.track_width)
                   for t in ties]
        for net in sorted(routing.routes):
            route = routing.routes[net]
            for layer, (x1, y1, x2, y2) in segments(route):
                tracks.append(Track(net=net, layer=names[layer], x1=x1, y1=y1, x2=x2, y2=y2, width=r.track_width))
            for iy, ix in route.vias():
                vias.append(Via(net=net, x=ix * GRID, y=iy * GRID, drill=r.via_drill, diameter=r.via_diameter))
    artifact = BoardArtifact(
        placements={ref: PartPlacement(x=p.x, y=p.y, rot=p.rot) for ref, p in sorted(placements.items())},
        tracks=tracks, vias=vias)
    return artifact, Outcome(placement, routing, lengths)


def realize(task: PcbTask, action: PcbAction, seed: int) -> Realization:
    artifact, out = realize_board(task, action, seed)
    notes: list[str] = []
    ok = True
    if out.placement is not None:
        notes.append(f"placement: {out.placement.moves} annealing moves, cost {out.placement.cost:.3f}")
        for label in out.placement.hard_violations:
            notes.append(f"placement illegal: {label}")
        for idx, excess in sorted(out.placement.relation_violations.items()):
            notes.append(f"relations[{idx}] missed by {excess:.2f} mm")
        ok = not out.placement.hard_violations and not out.placement.relation_violations
    if out.routing is not None:
        notes.append(f"routing: {len(out.routing.routes)} nets routed, {out.routing.ripups} rip-ups")
        for net, why in sorted(out.routing.failed.items()):
            notes.append(f"net {net} unrouted: {why}")
        ok = ok and not out.routing.failed
    data = artifact.model_dump(mode="json")
    receipt = Receipt(realized=[f"{r.kind} #{i}" for i, r in enumerate(action.relations)], claims_success=ok,
                      notes=notes)
    return Realization(artifact=data, artifact_hash=sha256_of(data), receipt=receipt, seed=seed)
