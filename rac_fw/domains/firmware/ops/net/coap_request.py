"""The ``coap_request`` operation: a confirmable CoAP request over UDP and its response (RFC 7252).

Zephyr only: ``coap_packet_init`` (version 1, CON, token, method code, ``coap_next_id()``),
``coap_packet_append_option(COAP_OPTION_URI_PATH)`` per path segment, the payload marker and payload,
``zsock_send``, a bounded ``zsock_recv``, then ``coap_packet_parse`` and ``coap_header_get_code`` of the
response (include/zephyr/net/coap.h, zephyrproject-rtos/zephyr 001e12e36e04). ESP-IDF v5 ships no CoAP
component (the libcoap port left components/coap for the component registry as ``espressif/coap``, an
external dependency), so the operation has no ESP-IDF realization and ESP-IDF plans get
``E_TARGET_UNSUPPORTED`` naming the frameworks that have one.

Obligations: the token is at most 8 bytes (RFC 7252 §3: TKL 9-15 are reserved; ``E_NET_COAP_TOKEN``);
each Uri-Path segment is at most 255 bytes (§5.10.1) and the whole request fits ``buffer_bytes``
(``E_NET_BUFFER`` with the byte count); the wait for the response is bounded unless ``forever``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field, StringConstraints

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.ops.net import common
from rac_fw.domains.firmware.ops.net.common import Host, Port, Retry, Timeout
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Message
from rac_fw.domains.firmware.plan.rules import Given, Implies, OneOf, Rule
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

Resource = Annotated[
    str,
    StringConstraints(pattern=r"^(/[A-Za-z0-9._~!$&'()*+,;=:@%-]{1,255})+$"),
    Field(description="Resource path, one or more /segments (/sensors/temp); each segment one Uri-Path option."),
]

#: RFC 7252 §3: the Token Length field is 0-8; 9-15 are reserved (a message format error).
TOKEN_MAX = 8
#: RFC 7252 §3: 4-byte header, then the token, options, the 0xFF payload marker and the payload.
HEADER_BYTES = 4
#: Zephyr's ``enum coap_method`` members (coap.h).
METHOD = {"GET": "COAP_METHOD_GET", "POST": "COAP_METHOD_POST", "PUT": "COAP_METHOD_PUT",
          "DELETE": "COAP_METHOD_DELETE"}  # fmt: skip

TOKEN = "E_NET_COAP_TOKEN"


class CoapRequest(Operation):
    """Every ``interval_ms``, send a confirmable CoAP ``method`` for ``resource`` on ``host:port`` (UDP) and
    wait at most ``timeout_ms`` for the response, logging its code (2.xx is success).

    ``token_bytes`` is the token length (0-8 bytes, RFC 7252 §3) that matches the response to the
    request; ``payload`` is the text body of a POST or PUT; ``buffer_bytes`` bounds the request and the
    response buffers. A failed exchange is retried after ``retry.retry_ms``, doubling up to ``retry.retry_max_ms``.
    """

    op: Literal["coap_request"]
    host: Host
    port: Port = 5683
    resource: Resource
    method: Literal["GET", "POST", "PUT", "DELETE"] = "GET"
    payload: Message | None = None
    token_bytes: int = Field(default=4, ge=0, le=255, description="Token length in bytes (0-8, RFC 7252 §3).")
    timeout_ms: Timeout = 2000
    interval_ms: int = Field(default=10_000, ge=100, le=86_400_000)
    buffer_bytes: int = Field(default=256, ge=64, le=1152, description="At most one CoAP-over-UDP message (§4.6).")
    retry: Retry = Field(default_factory=Retry)

    rules: ClassVar[tuple[Rule, ...]] = (
        Implies("only a CoAP POST or PUT carries a payload", Given("payload"), OneOf("method", ("POST", "PUT"))),
    )

    def segments(self) -> list[str]:
        return self.resource.strip("/").split("/")

    def request_bytes(self) -> int:
        """Header, token, one Uri-Path option per segment (1 header byte, +1 or +2 extended length) and
        the payload with its marker (RFC 7252 §3.1)."""
        options = sum(1 + (1 if 13 <= len(s) < 269 else 2 if len(s) >= 269 else 0) + len(s) for s in self.segments())
        body = 1 + len(self.payload) if self.payload else 0
        return HEADER_BYTES + min(self.token_bytes, TOKEN_MAX) + options + body


def _token(plan: Plan, target: Target, framework: str, index: int, op: CoapRequest) -> list[Evidence]:
    if op.token_bytes <= TOKEN_MAX:
        return []
    path: Path = ["operations", index, "token_bytes"]
    return [
        violation(
            TOKEN,
            f"a {op.token_bytes}-byte CoAP token does not exist: RFC 7252 §3 allows 0 to {TOKEN_MAX} bytes "
            "(token lengths 9-15 are a message format error)",
            path,
            [op.name or op.op],
            [measure("token", op.token_bytes, "bytes"), measure("max", TOKEN_MAX, "bytes")],
            [relax(f"use a {n}-byte token", replace(path, n)) for n in (TOKEN_MAX, 4)],
        )
    ]


def _buffer(plan: Plan, target: Target, framework: str, index: int, op: CoapRequest) -> list[Evidence]:
    size = op.request_bytes()
    if size <= op.buffer_bytes:
        return []
    path: Path = ["operations", index, "buffer_bytes"]
    return [
        violation(
            "E_NET_BUFFER",
            f"the CoAP {op.method} {op.resource} is {size} bytes but the message buffer holds {op.buffer_bytes}",
            path,
            [op.name or op.op, op.resource],
            [measure("message", size, "bytes"), measure("buffer", op.buffer_bytes, "bytes")],
            [relax(f"give the client {size} bytes of buffer", replace(path, size))],
        )
    ]


def _ram(op: CoapRequest) -> tuple[int, str]:
    return 2 * op.buffer_bytes, "buffer_bytes"


def _relief(op: CoapRequest, excess: int) -> int | None:
    smaller = op.buffer_bytes - -(-excess // 2)
    return smaller if smaller >= max(64, op.request_bytes()) else None


def _zephyr(b: ZephyrBuilder, index: int, op: CoapRequest) -> dict[str, Any]:
    common.zephyr_base(b, index)
    b.app.need("net", "CONFIG_COAP")
    b.app.includes.add("zephyr/net/coap.h")
    return {
        "host": c_string(op.host),
        "literal": common.is_ipv4(op.host),
        "port": op.port,
        "port_text": c_string(str(op.port)),
        "segments": [c_string(s) for s in op.segments()],
        "method": METHOD[op.method],
        "payload": c_string(op.payload) if op.payload is not None else None,
        "token_bytes": op.token_bytes,
        "timeout_ms": common.ms(op.timeout_ms),
        "buffer": op.buffer_bytes,
        "retry": op.retry,
        "setup": False,
        "step": {"period_ms": op.interval_ms, "count": None},
    }


SPEC = OpSpec(
    model=CoapRequest,
    family="net",
    realizations={"zephyr": Realization(template="net_app", view=_zephyr, available=common.available("zephyr"),
            why_unavailable=common.why_no_interface("zephyr"),
        )},
    checks=(*common.CHECKS, _token, _buffer),
    codes=(*common.CODES, TOKEN, "E_NET_BUFFER"),
    ram=_ram,
    ram_relief=_relief,
)
