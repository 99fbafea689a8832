"""Memory obligations: RAM budget per region and stack floors.

E_RAM_BUDGET: what the plan places in a region (buffers from ``placement``; in the default RAM also
the framework's own RAM, the Wi-Fi stack, thread and main stacks and the heap) must fit its size.
Under a devicetree framework a region whose node spans others (``MemoryRegion.dt_covers``: Zephyr's
STM32F407 ``sram0`` = SRAM1 + SRAM2) is one budget of their summed size.
E_STACK_SIZE: thread stacks below what the framework's own calls need.
"""

from __future__ import annotations

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.obligations.frameworks import FRAMEWORKS, MIN_MAIN_STACK_BYTES, WIFI_RAM_BYTES
from rac_fw.domains.firmware.obligations.radio import wifi_station_index
from rac_fw.domains.firmware.placement import buffer_controller, buffer_regions, default_ram, placement
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, replace, violation
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.plan.registry import section_values, spec


def _stacks(plan: Plan, framework: str) -> list[Evidence]:
    rules = FRAMEWORKS[framework]
    found: list[Evidence] = []
    floors: list[tuple[Path, str, int, int]] = [(["stack_bytes"], "main", plan.stack_bytes, MIN_MAIN_STACK_BYTES)]
    if rules.threads:
        floors += [
            (["resources", "threads", i, "stack_bytes"], t.name, t.stack_bytes, rules.min_thread_stack_bytes)
            for i, t in enumerate(plan.resources.threads)
        ]
    for path, name, size, floor in floors:
        if size < floor:
            found.append(
                violation(
                    "E_STACK_SIZE",
                    f"stack of {name} is {size} bytes; {framework} needs at least {floor}",
                    path,
                    [name],
                    [measure("stack", size, "bytes"), measure("minimum", floor, "bytes")],
                    [relax(f"give {name} {floor} bytes of stack", replace(path, floor))],
                )
            )
    return found


def budget_pools(target: Target, framework: str) -> dict[str, tuple[str, int]]:
    """Region name → (the region whose budget it counts against, that budget's size in bytes).

    A devicetree framework allocates from memory *nodes*, so regions a node covers pool with it;
    other frameworks (linker scripts written from the facts) keep every region separate.
    """
    pools = {r.name: (r.name, r.size) for r in target.memory}
    if not FRAMEWORKS[framework].devicetree:
        return pools
    for region in (r for r in target.memory if r.dt_covers):
        covered = [c for name in region.dt_covers if (c := target.region(name)) is not None]
        size = region.size + sum(c.size for c in covered)
        for member in (region, *covered):
            pools[member.name] = (region.name, size)
    return pools


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Stack floors, then every region's (or devicetree pool's) load against its size."""
    if framework not in FRAMEWORKS:
        return []
    found = _stacks(plan, framework)
    rules = FRAMEWORKS[framework]
    home = default_ram(target)
    places = placement(plan, target)
    pools = budget_pools(target, framework)
    load: dict[str, list[tuple[str, int, Path]]] = {}
    for i, buffer in enumerate(plan.resources.buffers):
        where = places.get(buffer.name)
        if where:
            pool = pools.get(where, (where, 0))[0]
            load.setdefault(pool, []).append((buffer.name, buffer.size_bytes, ["resources", "buffers", i]))
    if home is not None:
        fixed: list[tuple[str, int, Path]] = [
            ("framework", rules.ram_overhead_bytes, []),
            ("main_stack", plan.stack_bytes, ["stack_bytes"]),
            ("heap", plan.heap_bytes, ["heap_bytes"]),
        ]
        fixed += [
            (t.name, t.stack_bytes, ["resources", "threads", i, "stack_bytes"])
            for i, t in enumerate(plan.resources.threads)
        ]
        for i, op in enumerate(plan.operations):
            ram = spec(op.op).ram_for(framework)[0]
            if ram is not None:
                size, sized_by = ram(op)
                fixed.append((op.name or f"operations[{i}]", size, ["operations", i, sized_by]))
        for section, value in section_values(plan):
            if section.ram is not None:
                fixed.append((section.name, section.ram(plan, target, framework, value), [section.name]))
        station = wifi_station_index(plan)
        if station is not None:
            fixed.append(("wifi", WIFI_RAM_BYTES, ["operations", station]))
        load.setdefault(pools[home.name][0], []).extend(fixed)
    for region_name, items in load.items():
        region = target.region(region_name)
        if region is None:
            continue
        budget = pools[region.name][1]
        used = sum(size for _, size, _ in items)
        if used <= budget:
            continue
        excess = used - budget
        spans = "+".join((region.name, *region.dt_covers)) if budget != region.size else region.name
        found.append(
            violation(
                "E_RAM_BUDGET",
                f"{spans} holds {used} bytes of plan data but has {budget}",
                _biggest(items),
                [region.name] + [name for name, size, path in items if path and size],
                [
                    measure("needed", used, "bytes"),
                    measure("available", budget, "bytes"),
                    measure("excess", excess, "bytes"),
                ],
                _budget_fixes(plan, target, framework, region_name, items, excess, places, pools),
            )
        )
    return found


def _biggest(items: list[tuple[str, int, Path]]) -> Path:
    movable = [item for item in items if item[2]]
    return max(movable, key=lambda item: item[1])[2] if movable else []


def _budget_fixes(
    plan: Plan,
    target: Target,
    framework: str,
    region: str,
    items: list[tuple[str, int, Path]],
    excess: int,
    places: dict[str, str],
    pools: dict[str, tuple[str, int]],
) -> list[Relaxation]:
    fixes: list[Relaxation] = []
    for _, _, path in items:
        if len(path) == 3 and path[0] == "operations" and isinstance(path[1], int):
            op = plan.operations[path[1]]
            relief = spec(op.op).ram_for(framework)[1]
            value = relief(op, excess) if relief is not None else None
            if value is not None:
                fixes.append(relax(f"set {op.name or op.op}'s {path[2]} to {value}", replace(path, value)))
    if plan.heap_bytes >= excess and any(name == "heap" for name, _, _ in items):
        fixes.append(relax(f"shrink the heap by {excess} bytes", replace(["heap_bytes"], plan.heap_bytes - excess)))
    used: dict[str, int] = {}
    for name, where in places.items():
        buffer = plan.buffer(name)
        used[where] = used.get(where, 0) + (buffer.size_bytes if buffer else 0)
    ours = [
        (i, buffer)
        for i, buffer in sorted(enumerate(plan.resources.buffers), key=lambda item: -item[1].size_bytes)
        if pools.get(places.get(buffer.name, ""), ("", 0))[0] == region
    ]
    # Move the largest buffers out, each to a region its DMA master reaches with room left, until the
    # excess is gone: one relaxation, however many buffers that takes (moving one of three that all
    # overflow would not repair the plan).
    moves: list[tuple[int, str, str]] = []
    moved = 0
    for i, buffer in ours:
        if moved >= excess:
            break
        controller = buffer_controller(plan, target, buffer.name)
        for other in buffer_regions(target, controller.master if controller else None):
            if pools[other.name][0] != region and other.size - used.get(other.name, 0) >= buffer.size_bytes:
                used[other.name] = used.get(other.name, 0) + buffer.size_bytes
                moves.append((i, buffer.name, other.name))
                moved += buffer.size_bytes
                break
    if moves and moved >= excess:
        fixes.append(
            relax(
                "move " + ", ".join(f"{name} to {where}" for _, name, where in moves),
                *(replace(["resources", "buffers", i, "placement"], where) for i, _, where in moves),
            )
        )
    for i, buffer in ours:
        if buffer.size_bytes > excess:
            fixes.append(
                relax(
                    f"shrink {buffer.name} by {excess} bytes",
                    replace(["resources", "buffers", i, "size_bytes"], buffer.size_bytes - excess),
                )
            )
    return fixes
