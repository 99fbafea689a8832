"""The ``tcp_client`` operation: connect to a server, send a message, read a bounded reply, close."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.net import common
from rac_fw.domains.firmware.ops.net.common import Host, Port, Retry, Timeout
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.fields import Message

if TYPE_CHECKING:
    pass


class TcpClient(Operation):
    """Every ``interval_ms``, connect to ``host:port`` over TCP, send ``message``, read at most
    ``rx_buffer_bytes`` of reply within ``timeout_ms`` and close the socket (on every error path too).

    A failed exchange is retried after ``retry.retry_ms``, doubling up to ``retry.retry_max_ms``.
    """

    op: Literal["tcp_client"]
    host: Host
    port: Port
    message: Message
    interval_ms: int = Field(default=10_000, ge=100, le=3_600_000)
    timeout_ms: Timeout = 5000
    rx_buffer_bytes: int = Field(default=256, ge=16, le=16384)
    retry: Retry = Field(default_factory=Retry)


def view(op: Any) -> dict[str, Any]:
    """What the socket templates need of any client exchange (TCP or UDP)."""
    timeout = common.ms(op.timeout_ms)
    return {
        "host": c_string(op.host),
        "literal": common.is_ipv4(op.host),
        "port": op.port,
        "port_text": c_string(str(op.port)),
        "message": c_string(op.message) if getattr(op, "message", None) else None,
        "timeout_ms": timeout,
        "rx_bytes": getattr(op, "rx_buffer_bytes", 0),
        "retry": getattr(op, "retry", None),
    }


SPEC = common.socket_spec(TcpClient, view, period="interval_ms", setup=False)
