"""A field naming the value-producing operation whose latest value an operation sends (BLE, MQTT)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.plan.evidence import Path, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import Flag

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.model import Plan


def producers(plan: Plan) -> list[str]:
    """Names of the plan's value-producing operations."""
    return [op.name for op in plan.operations if op.name is not None and spec(op.op).has(Flag.VALUE)]


def value_source(plan: Plan, name: str | None, path: Path) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE when ``name`` is not a value-producing operation of the plan."""

    if name is None or name in producers(plan):
        return []
    options = [relax(f"send the value of {p}", replace(path, p)) for p in producers(plan)[:4]]
    options.append(relax("send no operation's value", remove(path)))
    return [
        violation(
            "E_UNKNOWN_RESOURCE",
            f"{name!r} is not a value-producing operation of the plan (values come from adc_*, gpio_read, "
            "sensor_read …)",
            path,
            [name],
            relaxations=options,
        )
    ]
