"""The ``udp_send`` operation: send a datagram every interval and, optionally, wait for the reply."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.net import common
from rac_fw.domains.firmware.ops.net.common import Host, Port, Timeout
from rac_fw.domains.firmware.ops.net.tcp_client import view
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Message

if TYPE_CHECKING:
    pass


class UdpSend(Operation):
    """Every ``interval_ms``, send ``message`` as one UDP datagram to ``host:port``; with ``reply``,
    wait at most ``timeout_ms`` for one datagram back (at most ``rx_buffer_bytes``) and report its size."""

    op: Literal["udp_send"]
    host: Host
    port: Port
    message: Message
    interval_ms: int = Field(default=1000, ge=10, le=3_600_000)
    reply: bool = False
    timeout_ms: Timeout = 1000
    rx_buffer_bytes: int = Field(default=128, ge=16, le=1472, description="At most one Ethernet-MTU datagram.")


SPEC = common.socket_spec(UdpSend, view, period="interval_ms", setup=False)
