"""The ``can_receive`` operation: a receive filter on one identifier, frames collected in a message queue."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.can.bus import CODES, CanOperation, available, check, zephyr_view
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class CanReceive(CanOperation):
    """Receive the data frames whose identifier is ``id`` (bits outside ``mask`` ignored).

    The driver puts matching frames into a message queue of ``queue_depth`` frames from its receive
    interrupt (``can_add_rx_filter_msgq``); every ``interval_ms`` the application waits at most
    ``timeout_ms`` for the next one and reports its identifier, length and the count so far. A wait that
    ends without a frame is reported as a failed step (``-EAGAIN``).
    """

    op: Literal["can_receive"]
    mask: int | None = Field(
        default=None, ge=0, le=0x1FFFFFFF, description="Identifier bits that must match; None = all of them."
    )
    queue_depth: int = Field(default=4, ge=1, le=64, description="Frames the message queue holds.")
    interval_ms: int = Field(default=1000, ge=1, le=3_600_000)


def _zephyr(b: ZephyrBuilder, index: int, op: CanReceive) -> dict[str, Any]:
    view = zephyr_view(b, index, op)
    mask = f"{op.mask:#x}U" if op.mask is not None else view["id_mask"]
    return view | {"mask": mask, "depth": op.queue_depth, "step": {"period_ms": op.interval_ms}}


SPEC = OpSpec(
    model=CanReceive,
    family="can",
    realizations={"zephyr": Realization(template="can", view=_zephyr, available=available)},
    checks=(check,),
    codes=CODES,
)
