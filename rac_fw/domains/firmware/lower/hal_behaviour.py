"""What the behaviour layer asks of the STM32 HAL builder, and how main.c hosts a behaviour.

The behaviour's C is rendered once by ``plan/behaviour`` (``sections/behaviour_hal.py`` calls it with what this
mixin gives): each operation's view (its ``outputs``), the ``<kind>_act_<action>`` macros of its template (one
HAL template holds many kinds, so :class:`KindActions` finds an action by the operation's kind), and the hooks a
template calls where an event happens (``v.hooks``: the HAL callback, an osTimer callback or a sw_irq handler).

main.c with a behaviour (``templates/hal/main.c.j2``): the loop's body becomes ``rac_ops_poll()`` (the operations'
loop work, then ``rac_poll``, which reports them **in plan order**), main() (``rac_loop`` under FreeRTOS) polls it
until every operation has reported or :meth:`HalBehaviourHost.ready_ms` has passed, then runs the behaviour,
whose waits and idle keep calling it (``templates/hal/behaviour_rt.c.j2``); ``rac_ok`` leaves "rac: done" to the
behaviour. The predicted console (``behaviour.console.hal_lines``) follows the same order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rac_fw.domains.firmware.lower import template_env
from rac_fw.domains.firmware.plan.behaviour.lowering import hook_calls, program, used_ops
from rac_fw.domains.firmware.plan.registry import spec

FRAMEWORK = "hal"
#: Added to the longest first success an operation may take before the behaviour starts without its report.
READY_MARGIN_MS = 1000


@dataclass
class KindActions:
    """The ``act_<action>`` macros of one operation kind in a template many kinds share (``ops.c.j2``), where
    they are named ``<kind>_act_<action>`` (two kinds may both have a ``read``)."""

    module: Any
    kind: str

    def __getattr__(self, name: str) -> Any:
        return getattr(self.module, f"{self.kind}_{name}")


class HalBehaviourHost:
    """Mixed into ``HalBuild``: the hooks, views and macros a behaviour renders with, and what main.c hosts."""

    plan: Any
    target: Any
    hal: Any
    views: list[dict[str, Any]]
    behaviour: str | None
    """The behaviour's C, placed in main.c after the operations' helpers (None: the plan has none)."""

    def hooks(self, index: int, event: str) -> list[str]:
        """The behaviour hooks operation ``index``'s template calls where ``event`` happens (none, or one)."""
        return hook_calls(self.plan, self.target, FRAMEWORK, index, event)

    def behaviour_uses(self, index: int) -> bool:
        """Whether the behaviour reads an output of, or acts on, operation ``index`` (its template then renders
        the helpers its ``act`` macros call, in the ``behaviour`` part)."""
        found = program(self.plan, self.target, FRAMEWORK) if self.plan.behaviour is not None else None
        return found is not None and index in used_ops(found)

    def op_module(self, index: int) -> KindActions:
        """Operation ``index``'s action macros (its template's ``<kind>_act_<action>``, taking its view)."""
        kind = self.plan.operations[index].op
        realization = spec(kind).realization(FRAMEWORK)
        assert realization is not None  # the lowering refused the plan otherwise
        module = template_env(FRAMEWORK).get_template(f"{realization.template}.c.j2").make_module({"hal": self.hal})
        return KindActions(module, kind)

    def ready_ms(self) -> int:
        """How long main() waits for the operations' reports before the behaviour starts: the longest first
        success the plan states (a timer's first expiry, a bus transfer's attempts at their timeout, a periodic
        operation's interval), plus :data:`READY_MARGIN_MS`."""
        longest = 0.0
        for op, view in zip(self.plan.operations, self.views, strict=True):
            period_s = getattr(op, "period_s", None)
            if isinstance(period_s, (int, float)):
                longest = max(longest, period_s * 1000)
            if isinstance(getattr(op, "retries", None), int) and isinstance(getattr(op, "timeout_ms", None), int):
                longest = max(longest, (op.retries + 1) * op.timeout_ms)
            longest = max(longest, float(view.get("period") or 0))
        return math.ceil(longest) + READY_MARGIN_MS
