"""The ``behaviour:`` block on STM32 HAL: how the HAL builder hosts it (``lower/hal_behaviour.py``).

The behaviour runs where the operations' loop runs: the super-loop in ``main()``, or the lowest-priority
``rac_loop`` thread when the plan's operations make the application a FreeRTOS one (CMSIS-RTOS2). It starts after
every operation has reported ``rac: <op> ok`` in plan order; its waits and idle keep the operations' loop work
and reports going (``templates/hal/behaviour_rt.c.j2``). Event triggers run in the publisher's HAL callback
(``HAL_GPIO_EXTI_Callback``, ``HAL_TIM_PeriodElapsedCallback``, a ``sw_irq`` handler in it.c; a ``source: kernel``
timer's osTimer callback in the timer service thread), or only queue the event there for the behaviour's thread
when a step may block (the receipt says which).

Persisted variables live in retained RAM (section ``.noinit``, at most ``checks.PERSIST_LIMITS["hal"]`` bytes):
they survive ``reset: chip`` (``HAL_NVIC_SystemReset``) and a watchdog reset, not a power cycle. The generated
tree has no linker script of its own, so its README asks the project's script for a ``(NOLOAD)`` ``.noinit``
output section outside the start-up code's zeroing, and the receipt notes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rac_fw.domains.firmware.plan.behaviour.lowering import program as compiled_program
from rac_fw.domains.firmware.plan.behaviour.lowering import render, used_ops
from rac_fw.domains.firmware.plan.behaviour.render import OpRef

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.plan.behaviour.model import Behaviour

FRAMEWORK = "hal"


def realize(b: HalBuild, value: Behaviour) -> None:
    """The behaviour's C for main.c, and the retained RAM its persisted variables need."""
    found = compiled_program(b.plan, b.target, FRAMEWORK)
    assert found is not None
    refs = {i: OpRef(b.views[i], b.op_module(i)) for i in used_ops(found)}
    b.behaviour = render(b.plan, b.target, FRAMEWORK, refs)
    b.behaviour_line_bytes = found.line_bytes
    for trigger in found.triggers:
        if trigger.kind == "event" and trigger.source_op is not None and not trigger.deferred and \
                b.views[trigger.source_op].get("os_timer"):  # fmt: skip
            b.notes.append(f"behaviour: {trigger.name}: {trigger.event} comes from an osTimer callback under "
                           "FreeRTOS: its steps run in the timer service thread, which preempts the behaviour's "
                           "thread as an interrupt would")  # fmt: skip
    kept = [v.name for v in found.variables if v.persist]
    if kept:
        b.noinit = True
        b.notes.append(f"behaviour: {', '.join(kept)} kept in retained RAM (section .noinit): the linker script "
                       "must map it outside the start-up code's zeroing (README.md)")  # fmt: skip
