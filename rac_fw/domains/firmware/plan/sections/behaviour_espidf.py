"""The ``behaviour:`` block on ESP-IDF: how the ESP-IDF builder hosts it, and what ESP-IDF refuses of it.

The behaviour runs in ``app_main``'s task after every operation's set-up (``templates/espidf/main/main.c.j2``),
pinned to CPU0 (``CONFIG_ESP_MAIN_TASK_AFFINITY_CPU0``) like the interrupts app_main allocates (the GPIO ISR
service, gptimers, the software interrupt) and esp_timer's (``CONFIG_ESP_TIMER_ISR_AFFINITY_CPU0``, its
default): an interrupt handler and the behaviour's task never run at once, as ``behaviour/contexts.py``
assumes, and ``portENTER_CRITICAL_SAFE`` keeps the other core out of shared state. Its primitives are
``templates/espidf/behaviour_rt.c.j2``.

Where a hook runs from flash, its interrupt must be held off while the flash cache is off (NVS writes):
- the hooks themselves are declared ``IRAM_ATTR`` by the publishers' templates, so a deferred trigger (the
  hook only queues the event) is IRAM-safe anywhere;
- steps that run in the interrupt handler are compiled to flash: the GPIO ISR service and the software
  interrupt are allocated without ``ESP_INTR_FLAG_IRAM`` (held off while the cache is off), a gptimer is made
  so by leaving ``CONFIG_GPTIMER_ISR_CACHE_SAFE`` unset, but esp_timer's ISR is always IRAM-resident on
  these chips (``CONFIG_ESP_TIMER_IN_IRAM`` can be turned off only with ``SPI_FLASH_AUTO_SUSPEND``,
  components/esp_timer/Kconfig v5.5.5) and calls ISR-dispatched callbacks directly: steps in an esp_timer
  interrupt are refused (deferred, or on a gptimer, they are realized).

Persisted variables are NVS blobs keyed by the variable's name in namespace ``rac_b``: NVS keys hold at most
15 characters (``NVS_KEY_NAME_MAX_SIZE`` 16 with the terminator, components/nvs_flash/include/nvs.h).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.domains.firmware.plan.behaviour.contexts import _path
from rac_fw.domains.firmware.plan.behaviour.lowering import compiled, render, used_ops
from rac_fw.domains.firmware.plan.behaviour.lowering import program as compiled_program
from rac_fw.domains.firmware.plan.behaviour.model import Behaviour
from rac_fw.domains.firmware.plan.behaviour.render import OpRef
from rac_fw.domains.firmware.plan.evidence import relax, replace, violation

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.plan.behaviour import ir

FRAMEWORK = "espidf"
#: components/nvs_flash/include/nvs.h (v5.5.5): NVS_KEY_NAME_MAX_SIZE 16, the terminator included.
NVS_KEY_CHARS = 15


def _in_isr(found: ir.Program) -> list[ir.Trigger]:
    """Event triggers whose steps run in the publisher's interrupt handler (not deferred to the task)."""
    return [t for t in found.triggers if t.kind == "event" and t.context == "isr" and not t.deferred]


def realize(b: EspIdfBuild, value: Behaviour) -> None:
    """The behaviour's C and what main.c hosts around it: the persisted variables' NVS session and flush, the
    components and options it needs."""
    found = compiled_program(b.plan, b.target, FRAMEWORK)
    assert found is not None
    refs = {i: OpRef(b.views[i], b.op_module(i)) for i in used_ops(found)}
    persisted = [v for v in found.variables if v.persist]
    b.behaviour = {"c": render(b.plan, b.target, FRAMEWORK, refs), "persisted": persisted}
    b.requires.add("esp_timer")  # esp_timer_get_time: the behaviour's millisecond clock
    if persisted:
        b.requires.add("nvs_flash")
    # The behaviour's task is app_main's: on CPU0, where its interrupts are allocated (the module docstring).
    b.sdkconfig["CONFIG_ESP_MAIN_TASK_AFFINITY_CPU0"] = "y"
    hooked = [b.plan.operations[t.source_op] for t in _in_isr(found) if t.source_op is not None]
    if any(getattr(op, "espidf_service", None) == "gptimer" for op in hooked):  # a timer on a TIMG instance
        # Steps compiled to flash run in the gptimer's handler: it must be held off while the cache is off.
        b.sdkconfig["CONFIG_GPTIMER_ISR_CACHE_SAFE"] = "n"


def check(plan: Any, target: Any, framework: str, value: Behaviour) -> list[Evidence]:
    """What ESP-IDF refuses of a behaviour the core accepted: steps in esp_timer's interrupt, NVS keys too long."""
    if framework != FRAMEWORK:
        return []
    found, _ = compiled(plan, target, framework)
    if found is None:
        return []
    return _esp_timer_steps(plan, target, found) + _nvs_keys(value)


def _esp_timer_steps(plan: Any, target: Any, found: ir.Program) -> list[Evidence]:
    out = []
    used = {getattr(op, "source", None) for op in plan.operations}
    free = [name for name, t in sorted((target.timers or {}).items()) if t.kind == "general" and name not in used]
    for trigger in _in_isr(found):
        assert trigger.source_op is not None
        op = plan.operations[trigger.source_op]
        if getattr(op, "espidf_service", None) != "esp_timer":  # only timers have one (ops/timer)
            continue
        path = _path(trigger.path)
        fixes = [relax("run its steps in the behaviour's task (the interrupt only queues the expiry)",
                       replace([*path, "context"], "thread"))]
        fixes += [relax(f"time it with the gptimer {free[0]}", replace(["operations", trigger.source_op, "source"],
                                                                         free[0]))] if free else []
        out.append(violation(
            "E_TARGET_UNSUPPORTED", f"trigger {trigger.name} runs its steps in {op.name or op.op}'s esp_timer "
            "interrupt, which ESP-IDF keeps running while the flash cache is off (CONFIG_ESP_TIMER_IN_IRAM): steps "
            "compiled to flash cannot run there", [*path, "context"], [trigger.name, op.name or op.op, "esp_timer"],
            relaxations=fixes))  # fmt: skip
    return out


def _nvs_keys(value: Behaviour) -> list[Evidence]:
    out = []
    for index, var in enumerate(value.vars):
        if var.persist and len(var.name) > NVS_KEY_CHARS:
            path: list[str | int] = ["behaviour", "vars", index, "persist"]
            out.append(violation(
                "E_BEHAVIOUR_PERSIST", f"{var.name} is persisted as an NVS blob keyed by its name, and NVS keys "
                f"hold at most {NVS_KEY_CHARS} characters ({len(var.name)} here)", path, [var.name],
                relaxations=[relax(f"do not persist {var.name}", replace(path, False))]))  # fmt: skip
    return out
