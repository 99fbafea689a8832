"""The ``semaphore`` operation: a counting or binary semaphore signalling between threads."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import hal_rtos
from rac_fw.domains.firmware.ops.events.react import acting_on
from rac_fw.domains.firmware.ops.kernel import Timeout, timeout_expr, unknown_threads
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_format
from rac_fw.domains.firmware.plan.evidence import add, measure, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class Semaphore(Operation):
    """``taker`` waits on a semaphore that ``giver`` gives every ``give_period_ms`` (and reactions give).

    ``limit`` 1 makes it binary (gives beyond the limit are lost), more makes it counting. The wait
    lasts ``take_timeout_ms`` (ms) or ``forever``: the plan says which. A semaphore nothing gives
    (no giver, no ``react`` with action give, initial 0) is E_SEMAPHORE_NEVER_GIVEN; an ``initial``
    count above ``limit`` is E_SEMAPHORE_COUNT. Its value is the number of successful takes.
    """

    op: Literal["semaphore"]
    taker: Name = Field(description="Thread that takes (resources.threads).")
    giver: Name | None = Field(default=None, description="Thread that gives periodically; None = reactions only.")
    give_period_ms: int = Field(default=100, ge=1, le=3_600_000, description="How often the giver gives.")
    limit: int = Field(default=1, ge=1, le=65_535, description="Maximum count (1 = binary).")
    initial: int = Field(default=0, ge=0, le=65_535, description="Count at start.")
    take_timeout_ms: Timeout


def _reaction_givers(plan: Plan, name: str | None) -> list[int]:
    return acting_on(plan, "give", name)


def _check(plan: Plan, target: Target, framework: str, index: int, op: Semaphore) -> list[Evidence]:

    label = op.name or f"operations[{index}]"
    base: list[str | int] = ["operations", index]
    uses = [(op.taker, [*base, "taker"])] + ([(op.giver, [*base, "giver"])] if op.giver else [])
    found = unknown_threads(plan, framework, uses)
    if op.initial > op.limit:
        found.append(
            violation(
                "E_SEMAPHORE_COUNT",
                f"{label} starts at {op.initial}, above its limit {op.limit}",
                [*base, "initial"],
                [label],
                [measure("initial", op.initial, "count"), measure("limit", op.limit, "count")],
                [
                    relax(f"start at the limit {op.limit}", replace([*base, "initial"], op.limit)),
                    relax(f"raise the limit to {op.initial}", replace([*base, "limit"], op.initial)),
                ],
            )
        )
    if op.giver is None and op.initial == 0 and not _reaction_givers(plan, op.name):
        others = [t.name for t in plan.resources.threads if t.name != op.taker]
        options = [relax(f"let {t} give every {op.give_period_ms} ms", replace([*base, "giver"], t)) for t in others]
        if not others:
            new = {"name": f"{op.taker}_giver", "priority": 5, "stack_bytes": 1024}
            options.append(
                relax(
                    f"declare thread {new['name']} and let it give",
                    add(["resources", "threads", -1], new),
                    replace([*base, "giver"], new["name"]),
                )
            )
        wait = "forever" if op.take_timeout_ms == "forever" else f"{op.take_timeout_ms} ms at a time"
        found.append(
            violation(
                "E_SEMAPHORE_NEVER_GIVEN",
                f"{label} starts at 0 and nothing gives it (no giver thread, no react with action give): "
                f"{op.taker} would wait {wait} for nothing",
                [*base, "giver"],
                [label, op.taker],
                relaxations=options,
            )
        )
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: Semaphore) -> dict[str, Any]:
    b.app.includes.add("zephyr/sys/atomic.h")
    view: dict[str, Any] = {
        "id": b.ids[index],
        "limit": op.limit,
        "initial": op.initial,
        "period_ms": op.give_period_ms,
        "timeout": timeout_expr(op.take_timeout_ms),
        "forever": op.take_timeout_ms == "forever",
        "given_by_reactions": bool(_reaction_givers(b.plan, op.name)),
        "giver": op.giver,
        "message": c_format(f"{op.name or b.ids[index]}: take failed ") + ' "(%d)\\n"',
    }
    view["thread_parts"] = [(op.taker, b.thread_part("kernel", "semaphore_take", view))]
    if op.giver is not None:
        view["thread_parts"].append((op.giver, b.thread_part("kernel", "semaphore_give", view)))
    return view


def _espidf(b: EspIdfBuild, index: int, op: Semaphore) -> dict[str, Any]:
    sym = b.symbol(index, op)
    timeout = op.take_timeout_ms
    view: dict[str, Any] = {
        "limit": op.limit,
        "initial": op.initial,
        "period_ms": op.give_period_ms,
        "ticks": "portMAX_DELAY" if timeout == "forever" else f"pdMS_TO_TICKS({timeout})",
        "forever": timeout == "forever",
        "taker": b.thread(op.taker, f"{op.taker}_{sym}"),
        "giver": b.thread(op.giver, f"{op.giver}_{sym}") if op.giver is not None else None,
    }
    return view


def _hal(b: HalBuild, index: int, op: Semaphore) -> dict[str, Any]:
    view = b.base_view(index, op)
    where = f"operations[{index}]"
    b.kernel_object("queue")
    view.update(
        limit=op.limit,
        initial=op.initial,
        period=b.ticks(op.give_period_ms),
        wait=b.wait(op.take_timeout_ms),
        forever=op.take_timeout_ms == "forever",
        taker=b.thread(op.taker, f"{op.taker}_{view['sym']}", where),
        giver=b.thread(op.giver, f"{op.giver}_{view['sym']}", where) if op.giver is not None else None,
    )
    return view


SPEC = OpSpec(
    model=Semaphore,
    family="kernel",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="kernel", view=_zephyr),
        "espidf": Realization(template="kernel", view=_espidf),
        "hal": Realization(template="rtos", view=_hal, available=hal_rtos, quiet=True),
    },
    checks=(_check,),
    codes=("E_SEMAPHORE_COUNT", "E_SEMAPHORE_NEVER_GIVEN", "E_UNKNOWN_RESOURCE"),
)
