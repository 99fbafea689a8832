"""What an advertisement costs: the AD structures a ``ble_advertise`` puts on air and their byte counts.

Bluetooth Core 5.x Vol 3 Part C §11: advertising and scan-response data are sequences of AD
structures, each one length byte, one type byte and its data; a legacy PDU carries at most 31 bytes
of them, an extended advertising set (Vol 6 Part B §2.3.4) up to 251 in one AUX_ADV_IND. The
obligations and every realization count the same structures from here, so the byte count in the
evidence is the byte count the radio sends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

#: Legacy advertising (and scan response) data budget in bytes.
LEGACY_BUDGET = 31
#: Extended advertising data in one AUX_ADV_IND (the controller's ``BT_CTLR_ADV_DATA_LEN_MAX`` top).
EXTENDED_BUDGET = 251
#: Advertising interval limits (Core Vol 6 Part B §4.4.2.2.1): 20 ms .. 10.24 s, in 0.625 ms units.
INTERVAL_MIN_MS = 20
INTERVAL_MAX_MS = 10240
#: Bytes a value-carrying manufacturer field appends (the producing operation's int32, little endian).
VALUE_BYTES = 4

Uuid = Annotated[
    str,
    StringConstraints(pattern=r"^([0-9a-f]{4}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$"),
    Field(description="A 16-bit UUID as 4 lower-case hex digits (``180f``) or a 128-bit UUID in canonical form."),
]

HexBytes = Annotated[
    str,
    StringConstraints(pattern=r"^([0-9a-f]{2}){0,64}$"),
    Field(description="Bytes as lower-case hex pairs (``0102ff``), at most 64 bytes."),
]

DeviceName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9 _.-]{1,29}$"),
    Field(description="GAP device name: letters, digits, space, '_', '.', '-'; 1-29 characters."),
]

Placement = Literal["advertising", "scan_response"]


@dataclass(frozen=True)
class AdField:
    """One AD structure: what it is and how many bytes it occupies (length + type + data)."""

    kind: str
    """``flags``, ``name``, ``uuid16``, ``uuid128``, ``manufacturer``."""
    data_bytes: int
    where: Placement

    @property
    def size(self) -> int:
        return 2 + self.data_bytes


def uuid_bytes(uuid: str) -> bytes:
    """A UUID's bytes as they go on air (little endian)."""
    return bytes.fromhex(re.sub("-", "", uuid))[::-1]


def fields(
    name: str | None,
    name_in: Placement,
    uuids: list[str],
    manufacturer_bytes: int | None,
) -> list[AdField]:
    """The AD structures of an advertisement in on-air order (flags first)."""
    found = [AdField("flags", 1, "advertising")]
    if name is not None:
        found.append(AdField("name", len(name), name_in))
    short = [u for u in uuids if len(u) == 4]
    long = [u for u in uuids if len(u) != 4]
    if short:
        found.append(AdField("uuid16", 2 * len(short), "advertising"))
    if long:
        found.append(AdField("uuid128", 16 * len(long), "advertising"))
    if manufacturer_bytes is not None:
        found.append(AdField("manufacturer", 2 + manufacturer_bytes, "advertising"))
    return found


def size(found: list[AdField], where: Placement) -> int:
    """Bytes of the advertising (or scan response) data."""
    return sum(f.size for f in found if f.where == where)


def interval_units(ms: int) -> int:
    """An advertising interval in the controller's 0.625 ms units."""
    return ms * 1000 // 625
