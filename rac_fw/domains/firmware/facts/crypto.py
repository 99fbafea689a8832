"""Cryptography on a chip: its accelerator blocks and, per framework, the backend that serves the API.

Two layers, because they differ: the *hardware* (the nRF52840's CryptoCell-310, the ESP32-S3's AES,
SHA, RSA, HMAC and DS blocks, STM32 CRYP/HASH/RNG) is derived from the pack's SVD peripherals — an
accelerator is present only when its peripheral instance is — minus the instances a part's SVD shares
with a sibling that has them (the STM32F407 SVD describes CRYP and HASH, which only the F415/F417
have). The *backend* is what a framework's crypto API runs on for that chip (upstream Zephyr's PSA
Crypto is mbedTLS in software on every board here; ESP-IDF's mbedTLS uses the AES/SHA/MPI blocks;
the STM32Cube HAL offers only the blocks present), with the algorithms it provides.

The data is the ``crypto:`` table of each chip pack (``targets/chips/<chip>/chip.yaml``), with the
sources cited per entry, validated into ``Target.crypto`` when the pack loads.
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
class Accelerator:
    """A cryptographic hardware block."""

    name: str
    """The block's name in the reference manual (``CryptoCell-310``, ``AES``, ``RNG``)."""
    peripheral: str
    """The SVD peripheral instance that is the block: present in the pack's peripherals or absent."""
    algorithms: tuple[str, ...]
    """Algorithms the block computes (plan vocabulary: ``sha256``, ``aes-gcm``, ``random``…)."""
    clock: str | None = None
    """The kernel clock the block runs from, where it needs one the bus clock is not (STM32 RNG: ``PLL48CK``
    on the F4, ``HSI48`` on the H7): a ``Target.clocks`` name, or an oscillator (``oscillator``)."""
    oscillator: bool = False
    """The ``clock`` is an oscillator off at reset that the code must start (HAL ``RCC_OSCILLATORTYPE_<clock>``)."""
    source: str = ""


@with_config(_STRICT)
@dataclass(frozen=True)
class Backend:
    """What a framework's crypto API runs on for this chip."""

    framework: str
    name: str
    api: str
    """``psa`` (PSA Crypto API, ``psa/crypto.h``), ``mbedtls`` (mbedTLS 3.x classic API), ``hal`` or
    ``registers`` (bare metal: the block's registers from the SVD facts)."""
    algorithms: tuple[str, ...]
    accelerators: tuple[str, ...] = ()
    """Names of the accelerators the backend drives (empty: software)."""
    source: str = ""


@with_config(_STRICT)
@dataclass(frozen=True)
class CryptoFacts:
    accelerators: tuple[Accelerator, ...] = ()
    """Every block the chip family's SVD can describe; filtered by :func:`accelerators`."""
    not_on_part: dict[str, str] = field(default_factory=dict)
    """SVD peripheral → why this part lacks it although its SVD describes it (a shared-family SVD)."""
    backends: tuple[Backend, ...] = ()
    source: str = ""

    def backend(self, framework: str) -> Backend | None:
        return next((b for b in self.backends if b.framework == framework), None)


#: Key sizes in bits each key type accepts (FIPS 197 for AES; HMAC keys are byte strings, RFC 2104
#: recommends at least the hash output length: 256 bits for SHA-256, at most one 512-bit block).
KEY_BITS: dict[str, tuple[int, ...]] = {
    "aes": (128, 192, 256),
    "hmac": (256, 384, 512),
    "derive": (128, 192, 256, 384, 512),
}


def crypto(target: Target) -> CryptoFacts | None:
    """The crypto facts of ``target`` (None when its chip pack has none)."""
    return target.crypto


def accelerators(target: Target) -> list[Accelerator]:
    """The accelerator blocks this part has: its SVD describes the peripheral and the part is not a
    sibling without it."""
    facts = crypto(target)
    if facts is None:
        return []
    return [
        a for a in facts.accelerators if a.peripheral in target.peripherals and a.peripheral not in facts.not_on_part
    ]


def backend(target: Target, framework: str) -> Backend | None:
    """The backend ``framework`` uses on ``target`` (None: the framework offers no crypto API there)."""
    facts = crypto(target)
    return None if facts is None else facts.backend(framework)
