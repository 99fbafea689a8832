"""Radio facts: which radios a chip has, which protocols they speak and what their stacks accept.

A chip's radio is hardware (Bluetooth LE version and features, Wi-Fi modes, the ADC unit the radio
takes over); a stack limit (largest ATT MTU, most connections) is *configuration* the framework's
Kconfig allows, so it is recorded per framework. Obligations ask these dataclasses; none reads the
pack's ``radio`` table itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import ConfigDict, with_config

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target

_STRICT = ConfigDict(extra="forbid")


@with_config(_STRICT)
@dataclass(frozen=True)
class BleStack:
    """What one framework's Bluetooth host accepts (its Kconfig ranges), not what the chip could do."""

    host: str
    """The host stack the framework builds: ``zephyr`` (Zephyr's host) or ``nimble`` (Apache NimBLE)."""
    max_connections: int
    """Top of the connection-count Kconfig range (``BT_MAX_CONN``, ``BT_NIMBLE_MAX_CONNECTIONS``)."""
    att_mtu_max: int
    """Largest ATT MTU the host can be configured for, in bytes (the default is always 23)."""
    mtu_kconfig: str
    """The Kconfig symbol that sets the preferred ATT MTU (``BT_L2CAP_TX_MTU``, ``BT_NIMBLE_ATT_PREFERRED_MTU``)."""
    connections_kconfig: str
    """The Kconfig symbol that sets the number of connections."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Ble:
    """The chip's Bluetooth LE controller."""

    version: str
    """Core specification version the controller is qualified for (``5.0``, ``5.4``)."""
    extended_advertising: bool
    """LE Extended Advertising (5.0): advertising sets whose payload may exceed the legacy 31 bytes."""
    le_secure_connections: bool
    """LE Secure Connections pairing (ECDH P-256), required for security level 4."""
    stacks: dict[str, BleStack] = field(default_factory=dict)
    """Framework → the host stack it builds and that host's configurable limits."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Wifi:
    """The chip's Wi-Fi MAC/PHY."""

    modes: tuple[str, ...]
    """Operating modes: ``sta`` (station), ``ap`` (soft access point)."""
    bands_ghz: tuple[float, ...] = (2.4,)
    standards: tuple[str, ...] = ()
    """IEEE 802.11 amendments (``b``, ``g``, ``n``)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Radio:
    """Every radio of one chip."""

    present: bool
    protocols: tuple[str, ...] = ()
    """``ble``, ``wifi``, ``ieee802154``."""
    adc_conflict: str | None = None
    """The ADC unit the Wi-Fi radio takes while it runs (ESP32-S3: ADC2), else None."""
    ble: Ble | None = None
    wifi: Wifi | None = None


def radio(target: Target) -> Radio | None:
    """The chip's radio facts (None when the pack says it has no radio); the loader validated them."""
    found = target.radio
    return found if found is not None and found.present else None


def ble(target: Target) -> Ble | None:
    """The chip's Bluetooth LE controller, if it has one."""
    found = radio(target)
    return found.ble if found is not None and "ble" in found.protocols else None


def ble_stack(target: Target, framework: str) -> BleStack | None:
    """The Bluetooth host ``framework`` builds for this chip (None: no BLE there)."""
    controller = ble(target)
    return controller.stacks.get(framework) if controller is not None else None


def wifi(target: Target) -> Wifi | None:
    """The chip's Wi-Fi radio, if it has one."""
    found = radio(target)
    return found.wifi if found is not None and "wifi" in found.protocols else None


def blocked_adc(target: Target) -> str | None:
    """The ADC unit the Wi-Fi radio takes while it runs (ESP32-S3: ADC2), else None."""
    found = radio(target)
    return found.adc_conflict if found is not None else None
