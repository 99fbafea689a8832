"""The ``tcp_server`` operation: listen on a port and echo what each client sends, one client at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.net import common
from rac_fw.domains.firmware.ops.net.common import Port, Timeout
from rac_fw.domains.firmware.plan.base import Operation

if TYPE_CHECKING:
    pass


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


SPEC = common.socket_spec(TcpServer, _view, period="poll_ms", setup=True)
