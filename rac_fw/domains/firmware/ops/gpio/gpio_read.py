"""The ``gpio_read`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Action, Flag, OpSpec, Output, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class GpioRead(Operation):
    """Poll a button's logical level (active level already accounted for) every ``interval_ms``."""

    op: Literal["gpio_read"]
    button: Name = Field(description="Board button (name or label such as sw0) or a declared GPIO pin.")
    interval_ms: int = Field(default=100, ge=1, le=3_600_000, description="Polling period.")


def _zephyr(b: ZephyrBuilder, index: int, op: GpioRead) -> dict[str, Any]:
    oid = b.ids[index]
    b.app.includes.add("zephyr/sys/atomic.h")
    return {
        "id": oid,
        "spec": b.gpio_spec("button", op.button, f"operations.{index}.button", "button", oid),
        "setup": True,
        "step": {"period_ms": op.interval_ms},
        "outputs": {"level": f"(atomic_get(&{oid}_value) != 0)"},
    }


def _espidf(b: EspIdfBuild, index: int, op: GpioRead) -> dict[str, Any]:
    gpio, active_low = b.io(op.button, "button", f"operations[{index}]")
    sym = b.symbol(index, op)
    return {"gpio": gpio, "active_low": active_low, "pull": "up" if active_low else "down",
            "task": b.thread(None, sym), "outputs": {"level": f"(value_{sym} != 0)"}}  # fmt: skip


def _hal(b: HalBuild, index: int, op: GpioRead) -> dict[str, Any]:
    view = b.base_view(index, op)
    b.input_view(view, op.button, None, f"operations[{index}]")
    view["outputs"] = {"level": f"(value_{view['sym']} != 0)"}  # polled before the op reports, so before the behaviour
    return view


#: What a behaviour reads (``button.level``) and asks (``act: button.read``). On Zephyr main() polls it once
#: before the behaviour starts, so ``level`` holds a value from the start; on ESP-IDF app_main waits for its
#: task's first poll (its report) before the behaviour starts.
OUTPUTS = {"level": Output("bool", "The input's logical level at its last poll (true = active).")}
ACTIONS = {"read": Action("Poll the input now and refresh `level`.", updates=("level",), fails=True)}


SPEC = OpSpec(
    model=GpioRead,
    family="gpio",
    flags=frozenset({Flag.VALUE}),
    endpoints={"button": "button"},
    outputs=OUTPUTS,
    actions=ACTIONS,
    realizations={
        "zephyr": Realization(template="gpio", view=_zephyr, quiet=True,
                              behaviour=frozenset({"output:level", "action:read"})),
        "espidf": Realization(template="gpio", view=_espidf, quiet=True,
                              behaviour=frozenset({"output:level", "action:read"})),
        "hal": Realization(template="ops", view=_hal, quiet=True, behaviour=frozenset({"output:level", "action:read"})),
    },
)
