"""The Plan: target, named resources, memory budget and a list of typed operations.

``operations`` is a discriminated union on ``op`` over every op spec the registry finds; each model
lives in its op module (``ops/<family>/<op>.py``) with a docstring stating its meaning.
``Plan.model_json_schema()`` is what ``rac-fw schema firmware`` publishes to agents.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal, Union, get_args

from pydantic import Field, ModelWrapValidatorHandler, PrivateAttr, StringConstraints, model_validator

from rac_fw.domains.firmware.plan.base import Operation, PlanModel
from rac_fw.domains.firmware.plan.behaviour.model import Behaviour
from rac_fw.domains.firmware.plan.registry import flagged, sections, specs
from rac_fw.domains.firmware.plan.resources import Buffer, Device, PinUse, Resources, Thread
from rac_fw.domains.firmware.plan.rules import AnyOf, Rule
from rac_fw.domains.firmware.plan.sections.bootloader import Bootloader
from rac_fw.domains.firmware.plan.sections.config import Config
from rac_fw.domains.firmware.plan.sections.devicetree import Devicetree
from rac_fw.domains.firmware.plan.sections.mesh import Mesh
from rac_fw.domains.firmware.plan.sections.network import Network
from rac_fw.domains.firmware.plan.spec import Flag

#: Every operation model, in catalog order (from the op registry).
OPERATION_MODELS: tuple[type[Operation], ...] = tuple(s.model for s in specs())
#: Every operation kind (the ``op`` values), in catalog order.
OPERATION_KINDS: tuple[str, ...] = tuple(s.kind for s in specs())


def op_kind(model: type[Operation]) -> str:
    """The literal ``op`` value of an operation model (``GpioBlink`` → ``gpio_blink``)."""
    return str(get_args(model.model_fields["op"].annotation)[0])


if TYPE_CHECKING:
    AnyOperation = Operation
else:
    # The discriminated union of every registered model: pydantic picks the model by ``op``.
    AnyOperation = Annotated[Union[OPERATION_MODELS], Field(discriminator="op")]  # noqa: UP007

#: Operations whose callback runs in interrupt context (an ``isr_handoff`` may name them as source).
ISR_OPERATIONS = flagged(Flag.ISR_CONTEXT)
#: Operations that produce a value a ``log`` may print.
VALUE_OPERATIONS = flagged(Flag.VALUE)

TargetId = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
Framework = Literal["zephyr", "espidf", "hal", "baremetal"]


class Plan(PlanModel):
    """A firmware plan: what to run on which target, over which named resources.

    Lowering derives every API call, Kconfig symbol, devicetree node, register value, DMA placement and
    cache operation from these fields plus the target facts; the plan itself never holds any of them.
    """

    #: A plan does something: at least one operation or one plan-level block (the section registry says which
    #: fields are blocks, so a new block counts without changing this rule).
    rules: ClassVar[tuple[Rule, ...]] = (
        AnyOf(f"a plan needs at least one operation or one plan-level block ({', '.join(s.name for s in sections())})",
              ("operations", *(s.name for s in sections()))),
    )  # fmt: skip

    target: TargetId | None = Field(
        default=None,
        description="Target id (rac-fw targets list). When submitted as an action the action's task is "
        "the target; this field must then be absent or equal to it.",
    )
    board: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,47}$")] | None = Field(
        default=None, description="Board name, for reference; the target pack fixes the board."
    )
    framework: Framework | None = Field(
        default=None, description="Lowering framework; None = the target's default (first in its facts)."
    )
    resources: Resources = Field(default_factory=Resources)
    heap_bytes: int = Field(default=0, ge=0, le=1 << 22, description="System heap size in bytes.")
    stack_bytes: int = Field(default=2048, ge=256, le=1 << 18, description="Main thread stack in bytes.")
    wifi: bool = Field(
        default=False,
        description="Shorthand for a wifi_station operation with its defaults (credentials wifi_ssid and "
        "wifi_psk from configuration), appended on load (the flag then reads false). Declare the operation "
        "instead to set its fields.",
    )
    bootloader: Bootloader | None = None
    operations: list[AnyOperation] = Field(
        default_factory=list,
        max_length=64,
        description="What the firmware does. May be empty only when a plan-level block (bootloader, config, …) "
        "is the plan's content.",
    )
    config: Config | None = None
    devicetree: Devicetree | None = None
    network: Network | None = None
    mesh: Mesh | None = None
    behaviour: Behaviour | None = Field(
        default=None,
        description="What the application does: variables, triggers (at boot, every PERIOD, on an operation's "
        "event, when a condition turns true) and their steps (docs/BEHAVIOUR.md). The tool predicts its console "
        "trace and checks a run against it.",
    )

    _shorthand: int | None = PrivateAttr(default=None)
    """The position of the station ``wifi: true`` appended (None: the plan declared its operations itself)."""

    @model_validator(mode="wrap")
    @classmethod
    def _wifi_shorthand(cls, data: object, handler: ModelWrapValidatorHandler[Plan]) -> Plan:
        """``wifi: true`` becomes a ``wifi_station`` operation (the flag once did nothing), and the plan remembers
        where (:attr:`shorthand`), so what is said about the plan can be said about the document its author wrote."""
        operations = data.get("operations", []) if isinstance(data, dict) else None
        if not isinstance(data, dict) or data.get("wifi") is not True or not isinstance(operations, list):
            return handler(data)
        station = min(flagged(Flag.WIFI_RADIO))
        if any(isinstance(o, dict) and o.get("op") in flagged(Flag.WIFI_RADIO) for o in operations):
            raise ValueError(f"wifi: true is the shorthand for a {station} operation: drop it when declaring one")
        # Normalized: the station is the truth from here on, so the parsed plan round-trips.
        plan = handler({**data, "wifi": False, "operations": [*operations, {"op": station}]})
        plan._shorthand = len(operations)
        return plan

    @property
    def shorthand(self) -> int | None:
        """The position of the operation ``wifi: true`` stands for, if the plan was written with it."""
        return self._shorthand

    # --- look-ups used by obligations and lowerings ----------------------------------------------
    def buffer(self, name: str) -> Buffer | None:
        return next((b for b in self.resources.buffers if b.name == name), None)

    def pin_use(self, name: str) -> PinUse | None:
        return next((p for p in self.resources.pins if p.name == name), None)

    def device(self, name: str) -> Device | None:
        return next((d for d in self.resources.devices if d.name == name), None)

    def thread(self, name: str) -> Thread | None:
        return next((t for t in self.resources.threads if t.name == name), None)

    def operation(self, name: str) -> Operation | None:
        return next((o for o in self.operations if o.name == name), None)

    def indexed(self, *ops: str) -> Iterator[tuple[int, Operation]]:
        """``(index, operation)`` for operations whose ``op`` is one of ``ops`` (all when empty)."""
        for index, operation in enumerate(self.operations):
            if not ops or operation.op in ops:
                yield index, operation
