"""The ``log`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_format, c_string
from rac_fw.domains.firmware.plan.evidence import Path, relax, remove, violation
from rac_fw.domains.firmware.plan.fields import Message, Name
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class Log(Operation):
    """Print ``message`` followed by ``name=value`` for each operation named in ``values``.

    Values come from value-producing operations (adc_*, gpio_read, sensor_read, i2c_transfer,
    spi_transfer). ``in_isr_of`` would log from inside that operation's interrupt handler, which is
    blocking and forbidden (E_ISR_BLOCKING); log from a handoff thread instead.
    """

    op: Literal["log"]
    message: Message
    values: list[Name] = Field(default_factory=list, max_length=8)
    level: Literal["dbg", "inf", "wrn", "err"] = "inf"
    interval_ms: int | None = Field(default=None, ge=1, le=3_600_000, description="Repeat period, or once.")
    in_isr_of: Name | None = Field(default=None, description="Operation whose ISR would run this log.")


def _zephyr(b: ZephyrBuilder, index: int, op: Log) -> dict[str, Any]:
    if op.in_isr_of is not None:
        raise b.refuse(
            [
                Evidence(
                    code="E_ISR_BLOCKING",
                    message="logging from interrupt context is not generated; log from a thread",
                    location=f"operations[{index}].in_isr_of",
                    objects=[op.in_isr_of],
                    relaxations=[
                        Relaxation(
                            description="log from the main loop",
                            patch=[{"op": "remove", "path": ["operations", index, "in_isr_of"]}],
                        )
                    ],
                )
            ]
        )
    b.app.includes.add("zephyr/logging/log.h")
    values = []
    for name in op.values:
        oid = b.op_id(name)
        if oid is None:
            raise b.unsupported(f"operations[{index}].values", f"no operation named {name!r}", [name], [])
        b.app.includes.add("zephyr/sys/atomic.h")
        values.append({"label": c_string(name), "id": oid})
    # The value formats are the tool's own text; the names travel as escaped %s arguments.
    fmt = '"' + " %s=%ld" * len(values) + '"' if values else ""
    return {
        "macro": {"dbg": "LOG_DBG", "inf": "LOG_INF", "wrn": "LOG_WRN", "err": "LOG_ERR"}[op.level],
        "message": c_format(op.message),
        "format": fmt,
        "values": values,
        "step": {"period_ms": op.interval_ms},
    }


def _espidf(b: EspIdfBuild, index: int, op: Log) -> dict[str, Any]:
    producing = [v for v in op.values if (o := b.plan.operation(v)) is not None and spec(o.op).produces_value(o)]
    return {
        "format": c_format(op.message),
        "fields": [(c_format(f" {v}="), v) for v in producing],
        "macro": {"dbg": "ESP_LOGD", "inf": "ESP_LOGI", "wrn": "ESP_LOGW", "err": "ESP_LOGE"}[op.level],
        "task": b.thread(None, b.symbol(index, op)),
    }


def _hal(b: HalBuild, index: int, op: Log) -> dict[str, Any]:
    view = b.base_view(index, op)
    view["uart"] = b.uart(None, None, f"operations[{index}]")
    view["format"] = c_format(op.message)
    names = [v for v in op.values if (o := b.plan.operation(v)) is not None and spec(o.op).produces_value(o)]
    view["fields"] = [(c_format(f" {name}="), name) for name in names]
    # Sized for the longest text: every value printed as a 32-bit "%ld" (11 characters with sign).
    view["text_bytes"] = len(op.message) + sum(len(f" {n}=") + 11 for n in names) + len("\r\n") + 1
    return view


def _not_in_an_isr(plan: Plan, target: Target, framework: str, index: int, op: Log) -> list[Evidence]:
    """E_ISR_BLOCKING: logging takes locks and may block or allocate, so never inside an interrupt handler."""
    if op.in_isr_of is None:
        return []
    path: Path = ["operations", index, "in_isr_of"]
    return [
        violation(
            "E_ISR_BLOCKING",
            f"logging inside {op.in_isr_of}'s interrupt handler can block and allocate; "
            "log from a thread fed by an isr_handoff",
            path,
            [op.in_isr_of, op.name or op.op],
            relaxations=[relax("log from thread context", remove(path))],
        )
    ]

def _names(plan: Plan, target: Target, framework: str, index: int, op: Log) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE: each value names a value-producing operation, ``in_isr_of`` an interrupt-context one."""
    from rac_fw.domains.firmware.obligations.references import References  # runs after the plan model exists
    from rac_fw.domains.firmware.ops.ble.sources import value_source
    from rac_fw.domains.firmware.plan.model import ISR_OPERATIONS

    refs = References(plan, target, framework)
    base: Path = ["operations", index]
    found = [e for j, name in enumerate(op.values) for e in value_source(plan, name, [*base, "values", j], "print")]
    if op.in_isr_of is not None:
        refs.operation(op.in_isr_of, [*base, "in_isr_of"], ISR_OPERATIONS, "an interrupt-context")
    return found + refs.found

SPEC = OpSpec(
    model=Log,
    family="log",
    flags=frozenset(),
    realizations={
        "zephyr": Realization(template="log", view=_zephyr),
        "espidf": Realization(template="log", view=_espidf),
        "hal": Realization(template="ops", view=_hal),
    },
    checks=(_not_in_an_isr, _names),
    codes=("E_ISR_BLOCKING", "E_UNKNOWN_RESOURCE"),
)
