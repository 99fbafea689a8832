"""The plan-level ``network:`` block: how the board's IP interface gets its IPv4 address and DNS servers.

One block for the whole application, because the address belongs to the interface, not to any
operation: ``dhcp`` (a DHCPv4 client leases it) or ``static`` (``address``/``netmask``/``gateway``
written here), and up to two DNS servers that replace the ones DHCP would hand out.

Zephyr: ``prj.conf`` through the net config library (``subsys/net/lib/config/Kconfig``:
``NET_CONFIG_SETTINGS``, ``NET_CONFIG_MY_IPV4_ADDR``/``_NETMASK``/``_GW`` and the bounded start-up wait
``NET_CONFIG_INIT_TIMEOUT``; not ``NET_CONFIG_NEED_IPV4``, which would hold boot until an address arrives,
and a Wi-Fi interface gets one only after the station joins, in ``main``, zephyrproject-rtos/zephyr 009e4dafa7da) and
``NET_DHCPV4``; DNS servers through ``DNS_SERVER_IP_ADDRESSES``/``DNS_SERVER1``/``DNS_SERVER2``
(``subsys/net/lib/dns/Kconfig``). ESP-IDF: the Wi-Fi station's ``esp_netif`` stops its DHCP client and
takes the static address and DNS servers (``esp_netif_dhcpc_stop``, ``esp_netif_set_ip_info``,
``esp_netif_set_dns_info``; components/esp_netif/include/esp_netif.h, espressif/esp-idf 02da1d5807ee).

Obligations (``E_NET_ADDRESS``): every address is a unicast IPv4 address, the netmask is contiguous,
the gateway and the address share the subnet and differ, the address is neither the network nor the
broadcast address. ``E_NET_INTERFACE``: the interface exists on that target and lets the application
choose its address (native_sim's offloaded sockets use the host's address, which the host owns), and a
Wi-Fi interface has its station in the plan. A board with no interface under the framework is
``E_TARGET_UNSUPPORTED`` naming the boards that have one.
"""

from __future__ import annotations

import ipaddress
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field, StringConstraints

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.network import interfaces
from rac_fw.domains.firmware.plan.base import PlanModel
from rac_fw.domains.firmware.plan.escape import kconfig_string
from rac_fw.domains.firmware.plan.evidence import Path, add, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.registry import flagged
from rac_fw.domains.firmware.plan.rules import Absent, Given, Implies, OneOf, Rule
from rac_fw.domains.firmware.plan.spec import Flag, SectionSpec

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

Ipv4 = Annotated[
    str,
    StringConstraints(pattern=r"^([0-9]{1,3}\.){3}[0-9]{1,3}$"),
    Field(description="Dotted-quad IPv4 address, e.g. 192.0.2.20."),
]

ADDRESS = "E_NET_ADDRESS"
INTERFACE = "E_NET_INTERFACE"


class Network(PlanModel):
    """How the board's IP interface is brought up: its IPv4 address (DHCP or static) and DNS servers.

    ``ipv4: dhcp`` leases the address from a DHCPv4 server; ``ipv4: static`` sets ``address``,
    ``netmask`` and ``gateway`` (all three required). ``dns`` lists at most two DNS servers (primary,
    backup); under DHCP they are used beside the lease's (ESP-IDF keeps one, as its fallback server).
    ``up_timeout_s`` bounds how long start-up waits for the network (Zephyr's net config library; seconds).
    """

    ipv4: Literal["dhcp", "static"] = "dhcp"
    address: Ipv4 | None = None
    netmask: Ipv4 | None = None
    gateway: Ipv4 | None = None
    dns: list[Ipv4] = Field(default_factory=list, max_length=2, description="DNS servers (primary, backup).")
    up_timeout_s: int = Field(default=30, ge=1, le=600, description="Seconds start-up waits for an address.")

    rules: ClassVar[tuple[Rule, ...]] = (
        Implies("a static address needs address, netmask and gateway", OneOf("ipv4", ("static",)),
                Given("address", "netmask", "gateway")),
        Implies("ipv4: dhcp leases the address; drop address, netmask and gateway or set ipv4: static",
                OneOf("ipv4", ("dhcp",)), Absent("address", "netmask", "gateway")),
    )  # fmt: skip


def _path(*parts: str | int) -> Path:
    return ["network", *parts]


def _octets_ok(text: str) -> bool:
    return all(int(p) <= 255 for p in text.split("."))


def _address_problems(net: Network) -> list[Evidence]:
    """Each address is a real IPv4 address; a static one is a unicast host of the gateway's subnet."""
    found: list[Evidence] = []
    fields = [(f, getattr(net, f)) for f in ("address", "netmask", "gateway") if getattr(net, f) is not None]
    fields += [(f"dns[{i}]", d) for i, d in enumerate(net.dns)]
    bad = [(f, v) for f, v in fields if not _octets_ok(v)]
    for name, value in bad:
        if name.startswith("dns["):
            location = _path("dns", int(name[4:-1]))
            options = [relax(f"drop DNS server {value}", remove(location))]
        else:
            location = _path(name)
            options = [relax("lease the address from DHCP", replace(_path("ipv4"), "dhcp"),
                             *(remove(_path(f)) for f in ("address", "netmask", "gateway")))]  # fmt: skip
        message = f"{value!r} is not an IPv4 address (an octet is above 255)"
        found.append(violation(ADDRESS, message, location, [value], relaxations=options))
    if bad or net.ipv4 != "static" or net.address is None or net.netmask is None or net.gateway is None:
        return found
    try:
        subnet = ipaddress.IPv4Network(f"{net.address}/{net.netmask}", strict=False)
    except ValueError:
        return [
            violation(
                ADDRESS,
                f"netmask {net.netmask} is not contiguous (its one bits must come first)",
                _path("netmask"),
                [net.netmask],
                relaxations=[relax("use a /24 netmask", replace(_path("netmask"), "255.255.255.0"))],
            )
        ]
    host = ipaddress.IPv4Address(net.address)
    gateway = ipaddress.IPv4Address(net.gateway)
    lease = relax("lease the address from DHCP", replace(_path("ipv4"), "dhcp"),
                  *(remove(_path(f)) for f in ("address", "netmask", "gateway")))  # fmt: skip

    def spare(*taken: ipaddress.IPv4Address) -> ipaddress.IPv4Address | None:
        """The subnet's first usable unicast host address that is none of ``taken`` (nor the interface's)."""
        candidates = itertools.islice(subnet.hosts(), len(taken) + 2)
        usable = (h for h in candidates if not (h.is_multicast or h.is_loopback or h.is_unspecified))
        return next((h for h in usable if h not in (*taken, host)), None)

    unusable = host.is_multicast or host.is_loopback or host.is_unspecified or host == subnet.broadcast_address
    if unusable or (subnet.prefixlen < 31 and host == subnet.network_address):
        other = spare(gateway)
        found.append(
            violation(
                ADDRESS,
                f"{net.address} cannot be a host address on {subnet} (network, broadcast, loopback or multicast)",
                _path("address"),
                [net.address, str(subnet)],
                relaxations=[relax(f"use {other}", replace(_path("address"), str(other)))]
                if other is not None
                else [lease],
            )
        )
    if gateway not in subnet or gateway == host:
        other = spare(host)
        why = (
            f"gateway {net.gateway} is outside the interface's subnet {subnet}: the stack cannot reach it"
            if gateway not in subnet
            else f"the gateway and the interface both have {net.address}"
        )
        found.append(
            violation(
                ADDRESS,
                why,
                _path("gateway"),
                [net.gateway, str(subnet)],
                relaxations=[relax(f"use {other} as the gateway", replace(_path("gateway"), str(other)))]
                if other is not None
                else [lease],
            )
        )
    return found


def _interface(plan: Plan, target: Target, framework: str, net: Network) -> list[Evidence]:
    """The interface lets the application choose its address, and a Wi-Fi one has its station."""
    found = interfaces(target, framework)
    if not found:
        return []  # the block's availability answers E_TARGET_UNSUPPORTED with the boards that have one
    first = found[0]
    if net.ipv4 not in first.ipv4:
        ways = [m for m in first.ipv4 if m in ("dhcp", "static")]
        options = [relax(f"use ipv4: {m}", replace(_path("ipv4"), m)) for m in ways]
        return [
            violation(
                INTERFACE,
                f"{target.id}'s {first.name} interface under {framework} cannot take a {net.ipv4} address "
                f"(it offers {', '.join(first.ipv4)}: {first.notes or first.kind})",
                _path("ipv4"),
                [first.name, net.ipv4],
                relaxations=options or [relax("drop the network block", remove(["network"]))],
            )
        ]
    stations = flagged(Flag.WIFI_RADIO)
    if first.kind == "wifi" and not any(op.op in stations for op in plan.operations):
        station = min(stations)
        return [
            violation(
                INTERFACE,
                f"{target.id}'s {first.name} interface is up only with a Wi-Fi station",
                ["network"],
                [first.name],
                relaxations=[relax(f"join a Wi-Fi network ({station})", add(["operations", 0], {"op": station}))],
            )
        ]
    return []


def _lease_dns(framework: str, net: Network) -> list[Evidence]:
    """ESP-IDF replaces the main and backup DNS servers with the lease's; only the fallback one stays
    the plan's (esp_netif.h, ``esp_netif_set_dns_info``), so a DHCP interface keeps one server of its own."""
    if framework != "espidf" or net.ipv4 != "dhcp" or len(net.dns) <= 1:
        return []
    return [
        violation(
            INTERFACE,
            f"under DHCP, ESP-IDF keeps one DNS server of the plan's (the fallback; the lease sets main and "
            f"backup), and the block names {len(net.dns)}",
            _path("dns"),
            net.dns,
            relaxations=[relax(f"keep {net.dns[0]} as the fallback server", remove(_path("dns", 1)))],
        )
    ]


def check(plan: Plan, target: Target, framework: str, net: Network) -> list[Evidence]:
    return _address_problems(net) + _interface(plan, target, framework, net) + _lease_dns(framework, net)


def _has_interface(framework: str) -> Callable[[Target], bool]:
    def test(target: Target) -> bool:
        return bool(interfaces(target, framework))

    return test


def _zephyr(b: ZephyrBuilder, net: Network) -> None:
    family = "network"
    b.app.need(family, "CONFIG_NETWORKING", "CONFIG_NET_IPV4", "CONFIG_NET_CONFIG_SETTINGS")
    b.app.setting(family, "CONFIG_NET_CONFIG_INIT_TIMEOUT", str(net.up_timeout_s))
    if net.ipv4 == "dhcp":
        b.app.need(family, "CONFIG_NET_DHCPV4")
    else:
        b.app.setting(family, "CONFIG_NET_DHCPV4", "n")
        b.app.setting(family, "CONFIG_NET_CONFIG_MY_IPV4_ADDR", kconfig_string(str(net.address)))
        b.app.setting(family, "CONFIG_NET_CONFIG_MY_IPV4_NETMASK", kconfig_string(str(net.netmask)))
        b.app.setting(family, "CONFIG_NET_CONFIG_MY_IPV4_GW", kconfig_string(str(net.gateway)))
    if net.dns:
        b.app.need(family, "CONFIG_DNS_RESOLVER", "CONFIG_DNS_SERVER_IP_ADDRESSES")
        for i, server in enumerate(net.dns, start=1):
            b.app.setting(family, f"CONFIG_DNS_SERVER{i}", kconfig_string(str(server)))


def leases_address(plan: Plan) -> bool:
    """Whether the interface takes its address from DHCP (no block, or ``ipv4: dhcp``): the Wi-Fi station
    starts its DHCP client only then."""
    net: Network | None = getattr(plan, "network", None)
    return net is None or net.ipv4 == "dhcp"


def espidf_static(plan: Plan) -> dict[str, Any] | None:
    """What the Wi-Fi station's template applies to its ``esp_netif`` right after creating it (None: DHCP
    with the lease's DNS servers, esp_netif's default)."""
    net: Network | None = getattr(plan, "network", None)
    if net is None or (net.ipv4 == "dhcp" and not net.dns):
        return None
    return {
        "static": net.ipv4 == "static",
        "address": octets(net.address) if net.address else None,
        "netmask": octets(net.netmask) if net.netmask else None,
        "gateway": octets(net.gateway) if net.gateway else None,
        "dns": [octets(d) for d in net.dns],
        "dns_kinds": ["ESP_NETIF_DNS_MAIN", "ESP_NETIF_DNS_BACKUP"]
        if net.ipv4 == "static"
        else ["ESP_NETIF_DNS_FALLBACK"],
    }


def octets(text: str) -> str:
    """``192.0.2.20`` as the argument list of ``ESP_IP4TOADDR`` (``192, 0, 2, 20``)."""
    return ", ".join(text.split("."))


def _espidf(b: EspIdfBuild, net: Network) -> None:
    b.requires.add("esp_netif")


SECTION = SectionSpec(
    name="network",
    model=Network,
    family="net",
    realizations={"zephyr": _zephyr, "espidf": _espidf},
    available={"zephyr": _has_interface("zephyr"), "espidf": _has_interface("espidf")},
    checks=(check,),
    codes=(ADDRESS, INTERFACE),
)
