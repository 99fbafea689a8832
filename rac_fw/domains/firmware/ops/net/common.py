"""What every IP operation shares: hosts, ports, bounded waits, reconnect backoff, and the obligations
that ask the network facts (the interface exists, sockets fit the stack's configuration).

A network wait is bounded unless the plan writes ``forever`` itself; the realizations turn a bound
into ``SO_RCVTIMEO`` / ``K_MSEC`` / ``pdMS_TO_TICKS`` and only ``forever`` into an unbounded wait.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, StringConstraints

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.network import NetInterface, interfaces, net_stack
from rac_fw.domains.firmware.ops.wifi.wifi_station import credentials_kconfig, plan_credentials
from rac_fw.domains.firmware.plan.base import Operation, PlanModel
from rac_fw.domains.firmware.plan.evidence import Path, add, measure, relax, replace, violation
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.model import Plan

Host = Annotated[
    str,
    StringConstraints(pattern=r"^(([0-9]{1,3}\.){3}[0-9]{1,3}|[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*)$"),
    Field(description="IPv4 address (192.0.2.10) or DNS host name (broker.example.com); never a URL or user:password."),
]  # fmt: skip

Port = Annotated[int, Field(ge=1, le=65535)]

Timeout = Annotated[
    int | Literal["forever"],
    Field(description="Milliseconds (1-600000), or 'forever' when the plan really means an unbounded wait."),
]

#: A dotted-quad IPv4 address: four octets of one to three digits, each at most 255.
IPV4 = r"^((25[0-5]|2[0-4][0-9]|[01]?[0-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|[01]?[0-9]?[0-9])$"

#: Sockets the stack keeps for itself beyond the plan's (DNS resolver, DHCP client). The lowering
#: configures the stack for exactly the sockets the plan holds plus these (NET_MAX_CONTEXTS,
#: LWIP_MAX_SOCKETS), so the socket count is configuration, not a guess.
STACK_SOCKETS = 2


class Retry(PlanModel):
    """Reconnect policy: wait ``retry_ms``, doubling up to ``retry_max_ms``; ``max_retries`` in a row (0: no limit)."""

    retry_ms: int = Field(default=1000, ge=10, le=600_000)
    retry_max_ms: int = Field(default=30_000, ge=10, le=3_600_000)
    max_retries: int = Field(default=0, ge=0, le=1000)


def is_ipv4(host: str) -> bool:
    return re.match(IPV4, host) is not None


def ms(timeout: int | str) -> int | None:
    """A timeout in milliseconds (None: forever)."""
    return None if timeout == "forever" else int(timeout)


def net_operations(plan: Plan) -> list[tuple[int, Operation]]:
    """The plan's IP operations (family ``net``)."""
    return [(i, op) for i, op in enumerate(plan.operations) if spec(op.op).family == "net"]


def sockets_needed(plan: Plan) -> int:
    """Sockets the plan's IP operations hold at once (a TCP server holds its listener and one client)."""
    return sum(int(getattr(op, "sockets", 1)) for _, op in net_operations(plan))


def station_index(plan: Plan) -> int | None:
    return next((i for i, op in enumerate(plan.operations) if op.op == "wifi_station"), None)


def interface(target: Target, framework: str) -> NetInterface | None:
    found = interfaces(target, framework)
    return found[0] if found else None


def available(framework: str) -> Any:
    """Realization availability: the board has an IP interface under ``framework``."""

    def test(target: Target) -> bool:
        return bool(interfaces(target, framework))

    return test


def why_no_interface(framework: str) -> Any:
    """The ``why_unavailable`` matching :func:`available`."""

    def why(target: Target) -> str:
        return f"{target.id} has no IP interface under {framework} (no PHY, radio or offloaded sockets on the board)"

    return why


def check_interface(plan: Plan, target: Target, framework: str, index: int, op: Operation) -> list[Evidence]:
    """The interface exists on that board (naming the targets that have one), and a Wi-Fi interface has
    its station in the plan."""

    path: Path = ["operations", index]
    found = interface(target, framework)
    if found is None:
        return []  # the support rule refuses the operation (``why_no_interface``), naming the boards with one
    if found.kind == "wifi" and station_index(plan) is None:
        return [
            violation(
                "E_NET_INTERFACE",
                f"{op.op} runs over {target.id}'s {found.name} interface, which is up only with a Wi-Fi station",
                path,
                [op.op, found.name],
                relaxations=[
                    relax("join a Wi-Fi network (wifi_station)", add(["operations", 0], {"op": "wifi_station"}))
                ],
            )
        ]
    return []


def check_retry(plan: Plan, target: Target, framework: str, index: int, op: Operation) -> list[Evidence]:

    retry = getattr(op, "retry", None)
    if retry is None or retry.retry_ms <= retry.retry_max_ms:
        return []
    path: Path = ["operations", index, "retry", "retry_max_ms"]
    return [
        violation(
            "E_NET_TIMEOUT",
            f"reconnect backoff starts at {retry.retry_ms} ms, above its {retry.retry_max_ms} ms ceiling",
            path,
            [op.name or op.op],
            [measure("retry", retry.retry_ms, "ms"), measure("retry_max", retry.retry_max_ms, "ms")],
            [relax(f"cap the backoff at {retry.retry_ms} ms", replace(path, retry.retry_ms))],
        )
    ]


def check_heap(plan: Plan, target: Target, framework: str, index: int, op: Operation) -> list[Evidence]:
    """Zephyr's getaddrinfo allocates its results from the heap: a host name needs one."""

    host = getattr(op, "host", None)
    if framework != "zephyr" or host is None or is_ipv4(host) or plan.heap_bytes >= RESOLVER_HEAP_BYTES:
        return []
    return [
        violation(
            "E_NET_HEAP",
            f"resolving {host!r} allocates from the system heap, which is {plan.heap_bytes} bytes",
            ["heap_bytes"],
            [op.name or op.op, "heap_bytes"],
            [measure("heap", plan.heap_bytes, "bytes"), measure("needed", RESOLVER_HEAP_BYTES, "bytes")],
            [relax(f"give the heap {RESOLVER_HEAP_BYTES} bytes", replace(["heap_bytes"], RESOLVER_HEAP_BYTES))],
        )
    ]


#: System heap the Zephyr resolver's result list needs (zsock_getaddrinfo allocates it).
RESOLVER_HEAP_BYTES = 4096

CHECKS = (check_interface, check_retry, check_heap)
CODES = ("E_NET_INTERFACE", "E_NET_TIMEOUT", "E_NET_HEAP")


def credentials_file(plan: Plan, *, zephyr: bool) -> str:
    """The Kconfig file declaring every credential the plan names (Zephyr's app ``Kconfig`` sources
    Zephyr's own first; ESP-IDF's ``main/Kconfig.projbuild`` is a fragment). Every operation that names a
    credential writes the same text, so the order they are lowered in does not matter."""
    body = credentials_kconfig(plan_credentials(plan), "rac-fw credentials")
    return 'source "Kconfig.zephyr"\n\n' + body if zephyr else body


def zephyr_base(b: Any, index: int) -> None:
    """Kconfig and headers every Zephyr IP operation needs; the interface's driver from the facts."""
    found = interface(b.target, "zephyr")
    kconfig = [f"CONFIG_{k}" for k in (found.kconfig if found else ())]
    if found is not None:  # a driver that allocates its sockets (native_sim's offloaded sockets) needs a heap
        b.app.heap_at_least(found.heap_bytes)
    # SO_RCVTIMEO/SO_SNDTIMEO need their net_context support (subsys/net/ip/Kconfig).
    b.app.need("net", "CONFIG_NETWORKING", "CONFIG_NET_IPV4", "CONFIG_NET_SOCKETS", "CONFIG_NET_TCP",
               "CONFIG_NET_UDP", "CONFIG_NET_CONTEXT_RCVTIMEO", "CONFIG_NET_CONTEXT_SNDTIMEO", *kconfig)  # fmt: skip
    stack = net_stack(b.target, "zephyr")
    if stack is not None:
        count = str(max(stack.sockets_default, sockets_needed(b.plan) + STACK_SOCKETS))
        b.app.setting("net", f"CONFIG_{stack.sockets_kconfig}", count)
        b.app.setting("net", "CONFIG_NET_MAX_CONN", count)
    b.app.includes.update({"zephyr/net/socket.h", "string.h", "errno.h"})


def espidf_base(b: Any) -> dict[str, Any]:
    """Components every ESP-IDF IP operation needs, and the station whose got-IP event it waits for."""
    b.requires.update({"lwip", "esp_netif"})
    station = station_index(b.plan)
    stack = net_stack(b.target, "espidf")
    if stack is not None:
        b.sdkconfig[f"CONFIG_{stack.sockets_kconfig}"] = str(
            max(stack.sockets_default, sockets_needed(b.plan) + STACK_SOCKETS)
        )
    sym = b.symbol(station, b.plan.operations[station]) if station is not None else None
    return {"station": sym}


def socket_spec(model: type[Operation], view: Callable[[Any], dict[str, Any]], *, period: str, setup: bool) -> OpSpec:
    """The spec the socket operations share: on Zephyr a step every ``period`` (a field, ms) after an
    optional setup, on ESP-IDF a task of its own; both only where the board has an interface."""

    def zephyr(b: Any, index: int, op: Any) -> dict[str, Any]:
        zephyr_base(b, index)
        return view(op) | {"setup": setup, "step": {"period_ms": getattr(op, period), "count": None}}

    def espidf(b: Any, index: int, op: Any) -> dict[str, Any]:
        return view(op) | espidf_base(b) | {"task": b.thread(None, b.symbol(index, op))}

    return OpSpec(
        model=model,
        family="net",
        realizations={
            "zephyr": Realization(
                template="net", view=zephyr, available=available("zephyr"), why_unavailable=why_no_interface("zephyr")
            ),
            "espidf": Realization(
                template="net", view=espidf, available=available("espidf"), why_unavailable=why_no_interface("espidf")
            ),
        },
        checks=CHECKS,
        codes=CODES,
    )
