"""The ``can_send`` operation: send one data frame every ``interval_ms`` on a CAN controller."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.can.bus import CODES, CanOperation, available, check, zephyr_view
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class CanSend(CanOperation):
    """Send a data frame with identifier ``id`` and payload ``data`` every ``interval_ms``.

    Each send waits at most ``timeout_ms`` for a free transmit mailbox and, being synchronous, for the
    frame to be acknowledged on the bus (another node, or the controller itself in loopback mode).
    """

    op: Literal["can_send"]
    data: list[Annotated[int, Field(ge=0, le=0xFF)]] = Field(
        default_factory=list, max_length=8, description="Payload bytes (0-255), at most 8 (classic CAN)."
    )
    interval_ms: int = Field(default=1000, ge=1, le=3_600_000)


def _zephyr(b: ZephyrBuilder, index: int, op: CanSend) -> dict[str, Any]:
    view = zephyr_view(b, index, op)
    return view | {"data": op.data, "step": {"period_ms": op.interval_ms}}


SPEC = OpSpec(
    model=CanSend,
    family="can",
    realizations={"zephyr": Realization(template="can", view=_zephyr, available=available)},
    checks=(check,),
    codes=CODES,
)
