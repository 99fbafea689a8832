"""The lowering state one plan is built with: names, templates, thread parts and ISR handoffs.

``BuilderCore`` holds what every step shares: the plan, the target facts, the collected
:class:`~.model.AppModel`, the Jinja macros of ``templates/zephyr/`` and the C names given to
operations (always ``app_``-prefixed, so no plan name can collide with a Zephyr symbol).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.bind import BoundPlan
from rac_fw.domains.firmware.facts.query import dt_labels
from rac_fw.domains.firmware.facts.sdk import SdkRelease, release
from rac_fw.domains.firmware.lower import LoweringError, template_env
from rac_fw.domains.firmware.lower.zephyr.model import (
    C_PREFIX,
    AppModel,
    ThreadPart,
    alias_macro,
    dt_property,
    unsupported,
)
from rac_fw.domains.firmware.ops.handoff.isr_handoff import IsrHandoff
from rac_fw.domains.firmware.plan.cstring import c_string_literal
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import Flag


def family(kind: str) -> str:
    """The template file (``templates/zephyr/<family>.c.j2``) whose macro renders operation ``kind``."""
    realization = spec(kind).realization("zephyr")
    return realization.template if realization is not None else ""


class BuilderCore:
    """Shared state and naming for one lowering run."""

    def __init__(self, bound: BoundPlan, app: AppModel) -> None:
        self.bound, self.plan, self.target, self.app = bound, bound.plan, bound.target, app
        self.env = template_env("zephyr")
        self.board = self.target.board.zephyr_board or ""
        written_for = release(self.target, "zephyr")
        assert written_for is not None, "facts/sdk.yaml describes Zephyr releases"
        self.sdk: SdkRelease = written_for
        """The Zephyr release the app is written for: templates read its names (``v.sdk.name(…)``) and C forms."""
        self.labels = dt_labels(self.target)
        # Every generated identifier carries the ``app_`` prefix so no plan name can collide with a
        # Zephyr symbol (an operation named ``wdt`` must not define ``wdt_setup``).
        self.current = 0
        """Index of the operation being lowered (thread parts are named after it)."""
        self.ids: dict[int, str] = {
            i: C_PREFIX + (op.name or f"{op.op}{i}") for i, op in enumerate(self.plan.operations)
        }
        self.views: dict[int, dict[str, Any]] = {}
        """Operation index → its rendered view (a behaviour reads ``outputs`` and calls ``act_*`` with it)."""
        self.behaviour: str | None = None
        """The behaviour's C (``sections/behaviour.py``), placed in main.c after the operations' globals."""

    # --- what op specs' Zephyr view functions call beyond the views' own helpers ------------------
    @staticmethod
    def c_name(plan_name: str) -> str:
        """The C identifier of a plan-named object (lock, buffer): prefixed so it never hits a Zephyr symbol."""
        return C_PREFIX + plan_name

    @staticmethod
    def dt_property(name: str) -> str:
        return dt_property(name)

    @staticmethod
    def alias_macro(alias: str) -> str:
        return alias_macro(alias)

    @staticmethod
    def unsupported(location: str, message: str, objects: list[str], relax: list[Relaxation]) -> LoweringError:
        """The error for a plan detail Zephyr cannot realize on this board, with its relaxations."""
        return unsupported(location, message, objects, relax)

    @staticmethod
    def refuse(evidence: list[Evidence]) -> LoweringError:
        """A lowering error carrying ``evidence`` as it is (another code than E_TARGET_UNSUPPORTED)."""
        return LoweringError(evidence)

    def op_id(self, name: str) -> str | None:
        """C identifier prefix of the operation named ``name`` (None when no such operation)."""
        return next((self.ids[i] for i, op in enumerate(self.plan.operations) if op.name == name), None)

    def macro(self, family: str, name: str) -> Callable[..., str] | None:
        module = self.env.get_template(f"{family}.c.j2").module
        found = getattr(module, name, None)
        return found if callable(found) else None

    def name_view(self, view: dict[str, Any], index: int) -> dict[str, Any]:
        """Give a view its C identifier prefix and its printable tag (a C literal of the plan name)."""
        view.setdefault("id", self.ids[index])
        view.setdefault("tag", c_string_literal(view["id"].removeprefix(C_PREFIX)))
        view.setdefault("index", index)
        view.setdefault("sdk", self.sdk)
        return view

    def thread_part(self, family: str, op_name: str, view: dict[str, Any], feeds: bool = False) -> ThreadPart:
        self.name_view(view, self.current)
        body = self.macro(family, f"{op_name}_thread")
        prologue = self.macro(family, f"{op_name}_prologue")
        return ThreadPart(
            op_id=view["id"],
            prologue=prologue(view).strip("\n") if prologue else "",
            body=body(view).strip("\n") if body else "",
            feeds_watchdog=feeds,
        )

    def handoffs(self, index: int) -> list[dict[str, Any]]:
        """The handoff views whose source is operation ``index`` (posted from its ISR)."""
        name = self.plan.operations[index].name
        if name is None:
            return []
        return [
            {"id": self.ids[i], "mechanism": o.mechanism}
            for i, o in enumerate(self.plan.operations)
            if isinstance(o, IsrHandoff) and o.source == name
        ]

    def source_kind(self, name: str) -> str:
        """How a handoff thread treats its source: ``rx_ring`` (drain the bytes the ISR put in
        ``<source>_ring``) for receive operations, else the source's template family."""
        op = self.plan.operation(name)
        if op is None:
            return ""
        if spec(op.op).has(Flag.RX_RING):
            return "rx_ring"
        return family(op.op)

    # gpio ---------------------------------------------------------------------------------------
