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
    """Names of the plan's operations that produce a value (``OpSpec.produces_value``)."""
    return [op.name for op in plan.operations if op.name is not None and spec(op.op).produces_value(op)]


def value_source(plan: Plan, name: str | None, path: Path, verb: str = "send") -> list[Evidence]:
    """E_UNKNOWN_RESOURCE when ``name`` is not a value-producing operation of the plan: the one rule for
    every field that prints or sends another operation's value (``log.values``, a GATT characteristic's
    ``source``, an MQTT ``value``), each refusal with the producers to use instead and dropping the value."""

    if name is None or name in producers(plan):
        return []
    found = plan.operation(name)
    options = [relax(f"{verb} the value of {p}", replace(path, p)) for p in producers(plan)[:4]]
    fix = spec(found.op).value_fix if found is not None and spec(found.op).has(Flag.VALUE) else None
    if fix is not None:
        where = next(i for i, o in enumerate(plan.operations) if o.name == name)
        options.insert(0, relax(f"set {name}'s {fix[0]} to {fix[1]}", replace(["operations", where, fix[0]], fix[1])))
    options.append(relax(f"{verb} no operation's value", remove(path)))
    why = "no operation has that name" if found is None else f"it is a {found.op}"
    if found is not None and spec(found.op).has(Flag.VALUE):
        why = f"this {found.op} produces none"
    return [
        violation(
            "E_UNKNOWN_RESOURCE",
            f"{name!r} is not a value-producing operation of the plan ({why}; values come from adc_*, gpio_read, "
            "sensor_read, bus transfers that read …)",
            path,
            [name],
            relaxations=options,
        )
    ]
