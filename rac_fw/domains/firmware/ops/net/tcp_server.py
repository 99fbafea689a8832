"""The ``tcp_server`` operation: listen on a port and echo what each client sends, one client at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.net import common
from rac_fw.domains.firmware.ops.net.common import Port, Timeout
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class TcpServer(Operation):
    """Listen on ``port``; accept one client at a time, echo what it sends (chunks of at most
    ``rx_buffer_bytes``) until it closes or stays silent for ``idle_timeout_ms``, then close it.

    Holds two sockets: the listener and the client's.
    """

    op: Literal["tcp_server"]
    port: Port
    rx_buffer_bytes: int = Field(default=256, ge=16, le=16384)
    idle_timeout_ms: Timeout = 10_000
    poll_ms: int = Field(default=100, ge=10, le=60_000, description="How often the listener is polled.")

    @property
    def sockets(self) -> int:
        return 2


def _view(op: TcpServer) -> dict[str, Any]:
    return {"port": op.port, "rx_bytes": op.rx_buffer_bytes, "timeout_ms": common.ms(op.idle_timeout_ms)}


def _zephyr(b: ZephyrBuilder, index: int, op: TcpServer) -> dict[str, Any]:
    common.zephyr_base(b, index)
    return _view(op) | {"setup": True, "step": {"period_ms": op.poll_ms, "count": None}}


def _espidf(b: EspIdfBuild, index: int, op: TcpServer) -> dict[str, Any]:
    return _view(op) | common.espidf_base(b) | {"task": b.thread(None, b.symbol(index, op))}


SPEC = OpSpec(
    model=TcpServer,
    family="net",
    realizations={
        "zephyr": Realization(template="net", view=_zephyr, available=common.available("zephyr")),
        "espidf": Realization(template="net", view=_espidf, available=common.available("espidf")),
    },
    checks=common.CHECKS,
    codes=common.CODES,
)
