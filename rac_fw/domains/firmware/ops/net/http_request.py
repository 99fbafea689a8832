"""The ``http_request`` operation: an HTTP/1.1 (or, with ``tls``, HTTPS) request whose response a callback takes.

Zephyr: a socket (``IPPROTO_TLS_1_2`` with the named credentials' security tag and the host name for
SNI and verification when ``tls`` is set), then ``http_client_req(sock, &req, timeout, user_data)`` with
``req.response`` as the response callback and ``recv_buf`` as the bounded receive buffer
(include/zephyr/net/http/client.h, zephyrproject-rtos/zephyr 1fe6ec5f7fca: the callback returns ``int``
there). ESP-IDF: ``esp_http_client_init`` with an ``event_handler`` that takes ``HTTP_EVENT_ON_DATA``,
``esp_http_client_perform`` and ``esp_http_client_cleanup`` on every path
(components/esp_http_client/include/esp_http_client.h, espressif/esp-idf 002189cd1a2b), over the global
CA store the ``tls_credentials`` operation filled.

Obligations: the ``tls`` field names a ``tls_credentials`` operation that holds a CA (``E_NET_TLS_REF``);
the request head and body fit ``buffer_bytes`` — ESP-IDF's transmit buffer holds the whole head, and one
bound keeps plans portable (``E_NET_BUFFER`` with both byte counts); the buffer counts in the RAM budget
(``ram``); on Zephyr an HTTPS exchange has the main stack it needs (``E_NET_STACK``); the interface
exists; waits are bounded unless the plan writes ``forever``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field, StringConstraints

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.ops.net import common
from rac_fw.domains.firmware.ops.net.common import Host, Port, Retry, Timeout
from rac_fw.domains.firmware.ops.net.tls_credentials import TlsCredentials, tls_operations
from rac_fw.domains.firmware.ops.wifi.wifi_station import kconfig_name
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.evidence import Path, add, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Message, Name
from rac_fw.domains.firmware.plan.rules import Given, Implies, OneOf, Rule
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: RFC 3986 §3.3/§3.4 (origin-form, RFC 9112 §3.2.1): an absolute path of pchar segments, then an optional
#: query of pchar, '/' and '?'; '%' only as a percent-encoded octet.
_PCHAR = r"[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2}"
UrlPath = Annotated[
    str,
    StringConstraints(pattern=rf"^(/({_PCHAR})*)+(\?({_PCHAR}|[/?])*)?$", max_length=256),
    Field(description="Request target: an absolute path with an optional query (/api/v1/status?id=3)."),
]

Method = Literal["GET", "POST", "PUT", "DELETE"]

TLS_REF = "E_NET_TLS_REF"

#: Zephyr's ``enum http_method`` member (http/method.h) and ESP-IDF's ``esp_http_client_method_t``.
ZEPHYR_METHOD = {"GET": "HTTP_GET", "POST": "HTTP_POST", "PUT": "HTTP_PUT", "DELETE": "HTTP_DELETE"}
IDF_METHOD = {"GET": "HTTP_METHOD_GET", "POST": "HTTP_METHOD_POST", "PUT": "HTTP_METHOD_PUT",
              "DELETE": "HTTP_METHOD_DELETE"}  # fmt: skip
CONTENT_TYPE = "text/plain"
#: Task stack an HTTPS exchange needs on ESP-IDF: the TLS handshake runs in the calling task (ESP-IDF's
#: examples/protocols/esp_http_client starts its HTTPS task with 8192 bytes).
TLS_TASK_STACK_BYTES = 8192
#: Main-thread stack an HTTPS exchange needs on Zephyr, where the steps run in main: Zephyr's HTTPS client
#: sample (samples/net/sockets/http_client/overlay-tls.conf, zephyrproject-rtos/zephyr 3de45ee86b17) sets 3072.
ZEPHYR_TLS_MAIN_STACK_BYTES = 3072


class HttpRequest(Operation):
    """Every ``interval_ms``, send ``method`` ``path`` to ``host`` over HTTP/1.1 and take the response in a callback.

    With ``tls`` (the name of a ``tls_credentials`` operation) the request is HTTPS: the server is
    authenticated with that operation's CA and the host name. ``body`` is the text payload of a POST or
    PUT (``text/plain``). ``buffer_bytes`` bounds the receive buffer the callback reads from (and, on
    ESP-IDF, the transmit buffer). ``timeout_ms`` bounds the whole exchange (milliseconds, or
    ``forever``). The status code is logged; a status of 400 or above counts as a failure and is retried
    after ``retry.retry_ms``, doubling up to ``retry.retry_max_ms``.
    """

    op: Literal["http_request"]
    host: Host
    port: Port | None = Field(default=None, description="TCP port; omitted = 443 with tls, 80 without.")
    path: UrlPath = "/"
    method: Method = "GET"
    body: Message | None = None
    tls: Name | None = Field(default=None, description="Name of the tls_credentials operation (HTTPS).")
    timeout_ms: Timeout = 10_000
    interval_ms: int = Field(default=60_000, ge=1000, le=86_400_000)
    buffer_bytes: int = Field(default=1024, ge=256, le=16384)
    retry: Retry = Field(default_factory=Retry)

    rules: ClassVar[tuple[Rule, ...]] = (
        Implies("only a POST or PUT request carries a body", Given("body"), OneOf("method", ("POST", "PUT"))),
    )

    @property
    def port_number(self) -> int:
        return self.port if self.port is not None else (443 if self.tls else 80)

    def head_bytes(self) -> int:
        """Bytes of the request line and headers the client writes (RFC 9112 §3, §5): the request line,
        ``Host``, and for a body ``Content-Type`` and ``Content-Length``, each ending in CRLF, then CRLF."""
        lines = [f"{self.method} {self.path} HTTP/1.1", f"Host: {self.host}:{self.port_number}"]
        if self.body is not None:
            lines += [f"Content-Type: {CONTENT_TYPE}", f"Content-Length: {len(self.body)}"]
        return sum(len(line) + 2 for line in lines) + 2

    def message_bytes(self) -> int:
        return self.head_bytes() + (len(self.body) if self.body is not None else 0)


def _tls(plan: Plan, target: Target, framework: str, index: int, op: HttpRequest) -> list[Evidence]:
    """``tls`` names a ``tls_credentials`` operation with a CA (the server must be authenticated)."""
    if op.tls is None:
        return []
    named = [o for _, o in tls_operations(plan) if o.name == op.tls]
    if named and named[0].ca is not None:
        return []
    path: Path = ["operations", index, "tls"]
    with_ca = [o.name for _, o in tls_operations(plan) if o.ca is not None and o.name]
    options = [relax(f"use {name}'s credentials", replace(path, name)) for name in with_ca]
    if named:
        where = plan.operations.index(named[0])
        options.append(relax(f"give {op.tls} a CA credential", add(["operations", where, "ca"], f"{op.tls}_ca")))
        why = f"{op.tls} holds no CA certificate, so the server cannot be authenticated"
    else:
        options.append(
            relax(
                f"register a CA under a new tls_credentials operation {op.tls}",
                add(["operations", -1], {"op": "tls_credentials", "name": op.tls, "ca": f"{op.tls}_ca",
                                         "sec_tag": 1 + max([o.sec_tag for _, o in tls_operations(plan)] or [0])}),
            )
        )  # fmt: skip
        why = f"no tls_credentials operation is named {op.tls}"
    options.append(relax("send the request over plain HTTP", remove(path)))
    return [violation(TLS_REF, f"{op.name or op.op}: {why}", path, [op.name or op.op, op.tls], relaxations=options)]


def _stack(plan: Plan, target: Target, framework: str, index: int, op: HttpRequest) -> list[Evidence]:
    """On Zephyr the TLS handshake runs on main's stack, which the plan sizes (``stack_bytes``)."""
    if framework != "zephyr" or op.tls is None or plan.stack_bytes >= ZEPHYR_TLS_MAIN_STACK_BYTES:
        return []
    need = ZEPHYR_TLS_MAIN_STACK_BYTES
    return [
        violation(
            "E_NET_STACK",
            f"{op.name or op.op}'s TLS handshake runs on the main thread, whose {plan.stack_bytes}-byte stack is "
            f"below the {need} bytes an HTTPS exchange takes",
            ["stack_bytes"],
            [op.name or op.op, "stack_bytes"],
            [measure("stack", plan.stack_bytes, "bytes"), measure("needed", need, "bytes")],
            [relax(f"give the main thread {need} bytes of stack", replace(["stack_bytes"], need))],
        )
    ]


def _buffer(plan: Plan, target: Target, framework: str, index: int, op: HttpRequest) -> list[Evidence]:
    message = op.message_bytes()
    if message <= op.buffer_bytes:
        return []
    path: Path = ["operations", index, "buffer_bytes"]
    return [
        violation(
            "E_NET_BUFFER",
            f"the {op.method} request to {op.host}{op.path} is {message} bytes ({op.head_bytes()}-byte head"
            f"{f', {len(op.body)}-byte body' if op.body else ''}) but the client buffer holds {op.buffer_bytes}",
            path,
            [op.name or op.op, op.host],
            [measure("message", message, "bytes"), measure("buffer", op.buffer_bytes, "bytes")],
            [relax(f"give the client {message} bytes of buffer", replace(path, message))],
        )
    ]


def _ram(op: HttpRequest) -> tuple[int, str]:
    return op.buffer_bytes, "buffer_bytes"


def _relief(op: HttpRequest, excess: int) -> int | None:
    smaller = op.buffer_bytes - excess
    return smaller if smaller >= max(256, op.message_bytes()) else None


def _view(b: Any, index: int, op: HttpRequest, tls: TlsCredentials | None) -> dict[str, Any]:
    scheme = "https" if op.tls else "http"
    return {
        "host": c_string(op.host),
        "literal": common.is_ipv4(op.host),
        "port": op.port_number,
        "port_text": c_string(str(op.port_number)),
        "path": c_string(op.path),
        "url": c_string(f"{scheme}://{op.host}:{op.port_number}{op.path}"),
        "body": c_string(op.body) if op.body is not None else None,
        "content_type": c_string(CONTENT_TYPE),
        "timeout_ms": common.ms(op.timeout_ms),
        "buffer": op.buffer_bytes,
        "retry": op.retry,
        "sec_tag": tls.sec_tag if tls else None,
        "client_cert": f"CONFIG_{kconfig_name(tls.certificate)}" if tls and tls.certificate else None,
        "client_key": f"CONFIG_{kconfig_name(tls.private_key)}" if tls and tls.private_key else None,
    }


def _credentials(b: Any, op: HttpRequest) -> TlsCredentials | None:
    return next((o for _, o in tls_operations(b.plan) if o.name == op.tls), None)


def _zephyr(b: ZephyrBuilder, index: int, op: HttpRequest) -> dict[str, Any]:
    common.zephyr_base(b, index)
    b.app.need("net", "CONFIG_HTTP_CLIENT")
    b.app.includes.add("zephyr/net/http/client.h")
    view = _view(b, index, op, _credentials(b, op))
    view["method"] = ZEPHYR_METHOD[op.method]
    return view | {"setup": False, "step": {"period_ms": op.interval_ms, "count": None}}


def _espidf(b: EspIdfBuild, index: int, op: HttpRequest) -> dict[str, Any]:
    b.requires.add("esp_http_client")
    if op.tls:
        b.requires.add("esp-tls")
    view = _view(b, index, op, _credentials(b, op)) | common.espidf_base(b)
    view["method"] = IDF_METHOD[op.method]
    task = b.thread(None, b.symbol(index, op))
    if op.tls:  # the mbed TLS handshake runs on this task's stack
        task["stack"] = max(task["stack"], TLS_TASK_STACK_BYTES)
    return view | {"task": task}


SPEC = OpSpec(
    model=HttpRequest,
    family="net",
    realizations={
        "zephyr": Realization(template="net_app", view=_zephyr, available=common.available("zephyr"),
            why_unavailable=common.why_no_interface("zephyr"),
        ),
        "espidf": Realization(template="net_app", view=_espidf, available=common.available("espidf"),
            why_unavailable=common.why_no_interface("espidf"),
        ),
    },
    checks=(*common.CHECKS, _tls, _stack, _buffer),
    codes=(*common.CODES, TLS_REF, "E_NET_STACK", "E_NET_BUFFER"),
    ram=_ram,
    ram_relief=_relief,
)
