"""What the behaviour layer asks of the Zephyr builder, and how main() hosts a behaviour.

The behaviour's C is rendered once by ``plan/behaviour`` (``sections/behaviour.py`` calls it with the views
collected here); this module only gives it what Zephyr knows: each operation's view (its ``outputs``), the
Jinja module of its template (the ``act_<action>`` macros), the hooks a template calls where an event
happens, and main()'s shape with a behaviour: every operation reports in **plan order** (``rac: <label> ok``
after its set-up, its one-shot step or the first run of its periodic step), so the predicted trace
(``behaviour.console.zephyr_lines``) follows from the plan alone; then ``rac_behaviour_run()``. The periodic
steps continue from the behaviour's idle hook (``rac_ops_poll``) and after it ends (``rac_ops_forever``).
"""

from __future__ import annotations

import re
from typing import Any

from rac_fw.domains.firmware.lower.zephyr.core import family
from rac_fw.domains.firmware.ops.storage.area import zephyr_flash_writer
from rac_fw.domains.firmware.plan.behaviour.console import predicted
from rac_fw.domains.firmware.plan.behaviour.lowering import hook_calls, program, used_ops
from rac_fw.domains.firmware.plan.behaviour.trace import exact_lines

FRAMEWORK = "zephyr"
_LEADING = re.compile(r"^(?: {4})+", re.M)


def tabs(text: str) -> str:
    """The behaviour's C (4-space indents, as ``templates/behaviour`` writes it) with Zephyr's tab indents."""
    return _LEADING.sub(lambda m: "\t" * (len(m.group(0)) // 4), text)


class BehaviourHost:
    """Mixed into the Zephyr builder: the views, modules and hooks a behaviour renders with."""

    plan: Any
    target: Any
    env: Any
    app: Any
    ids: dict[int, str]
    views: dict[int, dict[str, Any]]
    """Operation index → the view its template rendered with (``view["outputs"]`` for a behaviour)."""
    behaviour: str | None
    """The behaviour's C, placed in main.c after the operations' globals (None: the plan has none)."""

    def hooks(self, index: int, event: str) -> list[str]:
        """The behaviour hooks operation ``index``'s template calls where ``event`` happens (none, or one)."""
        return hook_calls(self.plan, self.target, FRAMEWORK, index, event)

    def behaviour_uses(self, index: int) -> bool:
        """Whether the plan's behaviour reads an output of, or acts on, operation ``index`` (its template
        then renders the helpers its ``act_<action>`` macros call)."""
        found = program(self.plan, self.target, FRAMEWORK) if self.plan.behaviour is not None else None
        return found is not None and index in used_ops(found)

    def op_module(self, index: int) -> Any:
        """The Jinja module of operation ``index``'s template (its ``act_<action>`` macros take the view)."""
        view = self.views.get(index)
        if view is None:
            return None
        return self.env.get_template(f"{family(self.plan.operations[index].op)}.c.j2").module

    def keep_in_settings(self, sectors: int) -> None:
        """Kconfig for persisted variables kept as settings (``templates/zephyr/behaviour_rt.c.j2``): the NVS
        backend on storage_partition, one sector per erase block (a ``settings_value`` sized it already)."""
        self.app.includes.add("zephyr/settings/settings.h")
        zephyr_flash_writer(self, "behaviour")
        self.app.need("behaviour", "CONFIG_NVS", "CONFIG_SETTINGS", "CONFIG_SETTINGS_NVS")
        if "CONFIG_SETTINGS_NVS_SECTOR_COUNT" not in self.app.settings:
            self.app.setting("behaviour", "CONFIG_SETTINGS_NVS_SECTOR_SIZE_MULT", "1")
            self.app.setting("behaviour", "CONFIG_SETTINGS_NVS_SECTOR_COUNT", str(sectors))

    def reboots(self) -> None:
        """Kconfig for ``reset: chip`` (``sys_reboot``): the reboot API, and no kernel boot banner, so the console
        after a reset is the app's own from its ``rac: boot`` line on (the predicted trace spans resets)."""
        self.app.includes.add("zephyr/sys/reboot.h")
        self.app.need("behaviour", "CONFIG_REBOOT")
        self.app.setting("behaviour", "CONFIG_BOOT_BANNER", "n")

    def predicted_lines(self) -> list[str] | None:
        """The behaviour's predicted console, line by line, when it is one fixed sequence (twister's ordered
        console harness then checks it); None without a behaviour or where the prediction leaves lines open."""
        if self.plan.behaviour is None:
            return None
        guess = predicted(self.plan, self.target, FRAMEWORK)
        return exact_lines(guess.items) if guess is not None else None

    def report_views(self, once: list[dict[str, str]], steps: list[Any]) -> list[dict[str, Any]]:
        """Every operation's report in plan order, for main() with a behaviour: ``after`` (set-up only),
        ``once`` (its one-shot step) or ``periodic`` (the first run of its step; ``count``: runs in all)."""
        once_ids = {s["id"] for s in once}
        periodic = {s.id: s for s in steps}
        out: list[dict[str, Any]] = []
        for index in sorted(self.views):
            view = self.views[index]
            oid = view["id"]
            kind = "once" if oid in once_ids else "periodic" if oid in periodic else "after"
            count = periodic[oid].count if oid in periodic else None
            out.append({"id": oid, "tag": view["tag"], "kind": kind, "count": count})
        return out
