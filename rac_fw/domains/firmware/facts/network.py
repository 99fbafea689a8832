"""Network facts: the IP interfaces a board has under each framework and the stack's configurable limits.

An interface is a board fact *per framework*: native_sim under Zephyr reaches the host's network
through offloaded sockets, the ESP32-S3 DevKitC through its Wi-Fi station, an STM32F407 Discovery
board through nothing (no PHY on the board). Socket counts are Kconfig settings of the framework's
stack. Obligations and lowerings ask these dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pydantic import ConfigDict, with_config

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target

_STRICT = ConfigDict(extra="forbid")

InterfaceKind = Literal["wifi", "ethernet", "offloaded", "tap"]
Ipv4Mode = Literal["dhcp", "static", "host"]


@with_config(_STRICT)
@dataclass(frozen=True)
class NetInterface:
    """One IP interface the board offers under one framework."""

    name: str
    kind: InterfaceKind
    """``wifi`` (needs the Wi-Fi station up), ``ethernet``, ``offloaded`` (the host's sockets, native_sim),
    ``tap`` (a host TAP device)."""
    ipv4: tuple[Ipv4Mode, ...]
    """How the interface may get its IPv4 address: ``dhcp``, ``static``, ``host`` (the host's stack owns it)."""
    kconfig: tuple[str, ...] = ()
    """Kconfig symbols (without ``CONFIG_``) that bring the interface's driver in (Zephyr)."""
    heap_bytes: int = 0
    """System heap the interface's driver allocates from (``CONFIG_HEAP_MEM_POOL_SIZE``; 0: none)."""
    notes: str = ""


@with_config(_STRICT)
@dataclass(frozen=True)
class NetStack:
    """The configurable limits of one framework's IP stack."""

    sockets_kconfig: str
    """The Kconfig symbol that sizes the socket table (``NET_MAX_CONTEXTS``, ``LWIP_MAX_SOCKETS``)."""
    sockets_default: int
    """Its default: what an application gets without setting it."""
    sockets_max: int | None = None
    """Top of its Kconfig range (None: the symbol has no range; RAM bounds it)."""
    tls_credentials_kconfig: str | None = None
    """The Kconfig symbol that sizes the TLS credential store (``TLS_MAX_CREDENTIALS_NUMBER``; None: the
    stack keeps no tagged store, as esp-tls, whose clients take their certificates directly)."""
    tls_credentials_default: int | None = None
    """Its default: how many credentials an application can register without setting it."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Network:
    """The board's IP networking: its interfaces and each framework's stack limits."""

    interfaces: dict[str, tuple[NetInterface, ...]] = field(default_factory=dict)
    """Framework → the board's interfaces under it (first = default)."""
    stacks: dict[str, NetStack] = field(default_factory=dict)


def network(target: Target) -> Network:
    """The board's network facts (empty when the pack describes none); the loader validated them."""
    return target.network if target.network is not None else Network()


def interfaces(target: Target, framework: str) -> tuple[NetInterface, ...]:
    """The IP interfaces of the board under ``framework`` (empty: no IP networking there)."""
    return network(target).interfaces.get(framework, ())


def net_stack(target: Target, framework: str) -> NetStack | None:
    return network(target).stacks.get(framework)
