"""The ``dns_resolve`` operation: resolve a host name to an IPv4 address within a bounded time.

Zephyr: ``dns_get_addr_info(query, DNS_QUERY_TYPE_A, &id, cb, user_data, timeout)`` — the resolver
itself gives up after ``timeout`` ms (``SYS_FOREVER_MS`` only when the plan writes ``forever``) and
calls back with ``DNS_EAI_CANCELED`` (include/zephyr/net/dns_resolve.h, zephyrproject-rtos/zephyr
010a7e376587); the step waits on a semaphore for the callback's end-of-results, a little longer than
the resolver's own bound, so it never waits unbounded. ESP-IDF: lwIP's ``dns_gethostbyname`` started
in the TCP/IP thread through ``esp_netif_tcpip_exec`` (lwip/dns.h, espressif/esp-lwip 40a4ed36cda3;
esp_netif.h, espressif/esp-idf 02da1d5807ee), and the task waits on a semaphore for at most the
timeout (lwIP's blocking ``getaddrinfo`` takes no timeout).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.ops.net import common
from rac_fw.domains.firmware.ops.net.common import Host, Timeout
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, replace, violation
from rac_fw.domains.firmware.plan.rules import Matches, Never, Rule
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: Zephyr's resolver name limit without ``DNS_RESOLVER_MAX_NAME_LEN`` set is 20 (dns_resolve.h
#: ``DNS_MAX_NAME_SIZE``); the lowering sets the Kconfig to the longest name the plan resolves.
ZEPHYR_NAME_DEFAULT = 20

#: Extra wait past the resolver's own timeout for its final callback (ms).
CALLBACK_SLACK_MS = 500


class DnsResolve(Operation):
    """Every ``interval_ms``, resolve ``host`` (a DNS name) to an IPv4 address and report it.

    ``timeout_ms`` bounds each lookup (milliseconds); ``forever`` is an unbounded lookup, allowed only
    because the plan says so. A failed or timed-out lookup is reported and retried at the next interval.
    """

    op: Literal["dns_resolve"]
    host: Host
    timeout_ms: Timeout = 5000
    interval_ms: int = Field(default=60_000, ge=1000, le=86_400_000)

    @property
    def sockets(self) -> int:
        """The resolver's sockets are the stack's own (``common.STACK_SOCKETS``), not this operation's."""
        return 0

    rules: ClassVar[tuple[Rule, ...]] = (
        Never("host is already an IPv4 address: there is nothing to resolve", Matches("host", common.IPV4)),
    )


def _bounded(plan: Plan, target: Target, framework: str, index: int, op: DnsResolve) -> list[Evidence]:
    """A lookup wait shorter than the resolve interval, so lookups never pile up."""
    timeout = common.ms(op.timeout_ms)
    if timeout is None or timeout < op.interval_ms:
        return []
    path: Path = ["operations", index, "timeout_ms"]
    return [
        violation(
            "E_NET_TIMEOUT",
            f"a {timeout} ms lookup of {op.host!r} cannot finish before the next one starts ({op.interval_ms} ms)",
            path,
            [op.name or op.op, op.host],
            [measure("timeout", timeout, "ms"), measure("interval", op.interval_ms, "ms")],
            [relax(f"bound the lookup at {op.interval_ms // 2} ms", replace(path, op.interval_ms // 2))],
        )
    ]


def _view(b: Any, index: int, op: DnsResolve) -> dict[str, Any]:
    return {"host": c_string(op.host), "timeout_ms": common.ms(op.timeout_ms), "slack_ms": CALLBACK_SLACK_MS}


def _zephyr(b: ZephyrBuilder, index: int, op: DnsResolve) -> dict[str, Any]:
    common.zephyr_base(b, index)
    b.app.need("net", "CONFIG_DNS_RESOLVER")
    longest = max(len(o.host) for o in b.plan.operations if isinstance(o, DnsResolve))
    if longest > ZEPHYR_NAME_DEFAULT:
        b.app.setting("net", "CONFIG_DNS_RESOLVER_MAX_NAME_LEN", str(longest))
    b.app.includes.update({"zephyr/net/dns_resolve.h", "zephyr/net/net_ip.h"})
    return _view(b, index, op) | {"setup": False, "step": {"period_ms": op.interval_ms, "count": None}}


def _espidf(b: EspIdfBuild, index: int, op: DnsResolve) -> dict[str, Any]:
    return _view(b, index, op) | common.espidf_base(b) | {"task": b.thread(None, b.symbol(index, op)), "retry": None}


SPEC = OpSpec(
    model=DnsResolve,
    family="net",
    realizations={
        "zephyr": Realization(template="net_app", view=_zephyr, available=common.available("zephyr"),
            why_unavailable=common.why_no_interface("zephyr"),
        ),
        "espidf": Realization(template="net_app", view=_espidf, available=common.available("espidf"),
            why_unavailable=common.why_no_interface("espidf"),
        ),
    },
    checks=(common.check_interface, _bounded),
    codes=common.CODES,
)
