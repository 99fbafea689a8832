"""The ``ble_scan`` operation: a Bluetooth LE observer that may act as a central on a matching peripheral."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, StringConstraints

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.radio import ble_stack
from rac_fw.domains.firmware.ops.ble import payload
from rac_fw.domains.firmware.ops.ble.bonding import bond_check, espidf_bonding, zephyr_bonding
from rac_fw.domains.firmware.ops.ble.common import (
    central_links,
    has_host,
    host_links,
    label,
    peripheral_links,
    why_no_host,
)
from rac_fw.domains.firmware.ops.ble.payload import DeviceName, HexBytes, Uuid
from rac_fw.domains.firmware.plan.base import Operation, PlanModel
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.evidence import (
    UNUSED,
    Path,
    add,
    measure,
    relax,
    remove,
    replace,
    unused_field,
    violation,
)
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: The controller counts scan timing in 0.625 ms units (Core Vol 4 Part E §7.8.10 LE Set Scan
#: Parameters): interval and window 0x0004..0x4000, i.e. 2.5 ms .. 10.24 s, window ≤ interval.
UNIT_MS = 0.625
UNITS_MIN = 0x0004
UNITS_MAX = 0x4000
#: ATT_MTU of a fresh connection: a write the central sends before any MTU exchange carries MTU − 3.
DEFAULT_ATT_MTU = 23

Address = Annotated[
    str,
    StringConstraints(pattern=r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$"),
    Field(description="A Bluetooth device address, most significant byte first (``c0:11:22:33:44:55``)."),
]


def units(ms: float) -> float:
    """A scan time in the controller's 0.625 ms units (not rounded: the obligation judges the remainder)."""
    return ms / UNIT_MS


class ScanFilter(PlanModel):
    """Which advertisers match: every field given must match within one report (the advertising data or
    the scan response, which arrive separately); an empty filter matches every device."""

    name: DeviceName | None = Field(default=None, description="Complete or shortened local name, exactly.")
    uuid: Uuid | None = Field(default=None, description="A service UUID the advertiser lists (16 or 128 bit).")
    address: Address | None = Field(default=None, description="The advertiser's device address.")

    def empty(self) -> bool:
        return self.name is None and self.uuid is None and self.address is None


class PeerAccess(PlanModel):
    """What the central does on the matched peripheral once connected: discover, then read/write/subscribe."""

    service: Uuid = Field(description="Primary service to discover (by UUID).")
    characteristic: Uuid = Field(description="Characteristic inside that service (by UUID).")
    action: Literal["read", "write", "subscribe"] = "read"
    value: HexBytes = Field(default="", description="Bytes a ``write`` sends (hex pairs).")
    indicate: bool = Field(default=False, description="``subscribe`` to indications instead of notifications.")


class BleScan(Operation):
    """Scan for Bluetooth LE advertisers, report those that match, and optionally connect to one.

    ``active`` scanning asks every advertiser for its scan response (where names often live);
    passive scanning only listens. The controller listens for ``window_ms`` of every
    ``interval_ms`` (both 2.5 ms .. 10.24 s in 0.625 ms steps; the window can not exceed the
    interval). With ``connect`` the first matching advertiser is connected (scanning stops while the
    connection is made and resumes when it ends), its address and the disconnect reason are
    reported, and ``peer`` names the service and characteristic to discover and read, write or
    subscribe to.
    """

    op: Literal["ble_scan"]
    active: bool = False
    interval_ms: float = Field(default=60.0, gt=0, le=60_000, description="Scan interval in ms (0.625 ms steps).")
    window_ms: float = Field(default=30.0, gt=0, le=60_000, description="Scan window in ms (0.625 ms steps).")
    filter: ScanFilter = Field(default_factory=ScanFilter)
    connect: bool = Field(default=False, description="Connect to the first matching advertiser (central role).")
    peer: PeerAccess | None = None
    max_connections: int = Field(default=1, ge=1, le=1, description="Peripherals connected at once (one).")
    security: Literal[1, 2, 3, 4] = Field(
        default=1,
        description="Security level the central asks for once connected (2: encrypted, Just Works pairing; the "
        "central has no IO capabilities, so 3 and 4 are out of reach); the peer access waits for it.",
    )
    bond: bool = Field(default=False, description="Keep pairing keys across resets (see ble_advertise.bond).")


# --- obligations --------------------------------------------------------------------------------
def _peer_value(plan: Plan, target: Target, framework: str, index: int, op: BleScan) -> list[Evidence]:
    """A peer's ``value`` is what a ``write`` sends: with another action it would do nothing."""
    if op.peer is None or op.peer.action == "write":
        return []
    return unused_field(op.peer, ["operations", index, "peer", "value"], f"a {op.peer.action} sends no bytes")



def _single(plan: Plan, target: Target, framework: str, index: int, op: BleScan) -> list[Evidence]:
    """The host runs one scanner: a second one would restart it with other parameters."""
    first = next(i for i, o in enumerate(plan.operations) if isinstance(o, BleScan))
    if first == index:
        return []
    return [
        violation(
            "E_BLE_SCANNERS",
            "one scanner per plan: the controller scans with one set of parameters at a time",
            ["operations", index],
            [label(op, index)],
            relaxations=[relax(f"drop this {op.op}", remove(["operations", index]))],
        )
    ]


def _timing(plan: Plan, target: Target, framework: str, index: int, op: BleScan) -> list[Evidence]:
    """Interval and window in range and on the 0.625 ms grid; the window no longer than the interval."""
    path: Path = ["operations", index]
    found: list[Evidence] = []
    for field in ("interval_ms", "window_ms"):
        ms: float = getattr(op, field)
        count = units(ms)
        whole = min(max(round(count), UNITS_MIN), UNITS_MAX)
        if UNITS_MIN <= count <= UNITS_MAX and abs(count - round(count)) < 1e-9:
            continue
        fixed = whole * UNIT_MS
        found.append(
            violation(
                "E_BLE_INTERVAL",
                f"{label(op, index)}: {field} {ms:g} ms is {count:g} units of 0.625 ms; the controller takes a whole "
                f"number of units from {UNITS_MIN} to {UNITS_MAX} (0x{UNITS_MIN:04x}-0x{UNITS_MAX:04x}: 2.5 ms .. "
                "10.24 s)",
                [*path, field],
                [label(op, index), field],
                [measure(field.removesuffix("_ms"), ms, "ms"), measure("units", count, "0.625 ms"),
                 measure("units_min", UNITS_MIN, "0.625 ms"), measure("units_max", UNITS_MAX, "0.625 ms")],
                [relax(f"use {fixed:g} ms ({whole} units)", replace([*path, field], fixed))],
            )
        )  # fmt: skip
    if op.window_ms > op.interval_ms:
        found.append(
            violation(
                "E_BLE_SCAN_WINDOW",
                f"{label(op, index)}: the scan window ({op.window_ms:g} ms, {units(op.window_ms):g} units) is longer "
                f"than the scan interval ({op.interval_ms:g} ms, {units(op.interval_ms):g} units)",
                [*path, "window_ms"],
                [label(op, index), "window_ms", "interval_ms"],
                [measure("window", op.window_ms, "ms"), measure("interval", op.interval_ms, "ms"),
                 measure("window_units", units(op.window_ms), "0.625 ms"),
                 measure("interval_units", units(op.interval_ms), "0.625 ms")],
                [relax(f"listen the whole interval ({op.interval_ms:g} ms)",
                       replace([*path, "window_ms"], op.interval_ms)),
                 relax(f"scan every {op.window_ms:g} ms", replace([*path, "interval_ms"], op.window_ms))],
            )
        )  # fmt: skip
    return found


def _central(plan: Plan, target: Target, framework: str, index: int, op: BleScan) -> list[Evidence]:
    """A connection needs a filter (else the central connects to whatever advertises first); a peer
    access needs the connection; a write needs bytes that fit one ATT PDU at the default MTU."""
    path: Path = ["operations", index]
    found: list[Evidence] = []
    if op.connect and op.filter.empty():
        options: list[Relaxation] = [relax("only scan (do not connect)", replace([*path, "connect"], False))]
        if op.peer is not None:
            options.insert(0, relax(f"connect to advertisers of service {op.peer.service}",
                                    add([*path, "filter", "uuid"], op.peer.service)))  # fmt: skip
        found.append(
            violation(
                "E_BLE_SCAN_FILTER",
                f"{label(op, index)} connects on match but matches every advertiser (no name, UUID or address)",
                [*path, "filter"],
                [label(op, index), "filter"],
                relaxations=options,
            )
        )
    peer = op.peer
    if peer is None:
        return found
    if not op.connect:
        options = [relax("drop the peer access", remove([*path, "peer"]))]
        if not op.filter.empty():
            options.insert(0, relax("connect to the matching advertiser", replace([*path, "connect"], True)))
        found.append(
            violation(
                "E_BLE_PEER",
                f"{label(op, index)}: peer {peer.action} needs a connection, but connect is false",
                [*path, "peer"],
                [label(op, index), "peer"],
                relaxations=options,
            )
        )
    size = len(peer.value) // 2
    room = DEFAULT_ATT_MTU - 3
    if peer.action == "write" and size == 0:
        found.append(
            violation(
                "E_BLE_PEER",
                f"{label(op, index)}: peer write with no bytes to write (value)",
                [*path, "peer", "value"],
                [label(op, index), "value"],
                relaxations=[relax("read the characteristic instead", replace([*path, "peer", "action"], "read")),
                             relax("write one zero byte", replace([*path, "peer", "value"], "00"))],
            )
        )  # fmt: skip
    if peer.action == "write" and size > room:
        found.append(
            violation(
                "E_BLE_MTU",
                f"{label(op, index)}: a {size}-byte write does not fit one ATT PDU at the default MTU "
                f"{DEFAULT_ATT_MTU} ({room} bytes after the 3-byte header)",
                [*path, "peer", "value"],
                [label(op, index), "value"],
                [
                    measure("value", size, "bytes"),
                    measure("room", room, "bytes"),
                    measure("mtu", DEFAULT_ATT_MTU, "bytes"),
                ],
                [relax(f"write the first {room} bytes", replace([*path, "peer", "value"], peer.value[: 2 * room]))],
            )
        )
    return found


def _connections(plan: Plan, target: Target, framework: str, index: int, op: BleScan) -> list[Evidence]:
    """Peripheral plus central connections ≤ the host's configurable limit (the controller's links)."""
    stack = ble_stack(target, framework)
    if stack is None or not op.connect or host_links(plan) <= stack.max_connections:
        return []
    adv = next(
        (i for i, o in enumerate(plan.operations) if o.op == "ble_advertise" and getattr(o, "connectable", False)), None
    )
    options = [relax("only scan (do not connect)", replace(["operations", index, "connect"], False))]
    keep = stack.max_connections - central_links(plan)
    if adv is not None and keep >= 1:
        options.insert(0, relax(f"let the advertiser accept {keep} connections",
                                replace(["operations", adv, "max_connections"], keep)))  # fmt: skip
    return [
        violation(
            "E_BLE_CONNECTIONS",
            f"{label(op, index)}: {peripheral_links(plan)} peripheral + {central_links(plan)} central connections, "
            f"but the {stack.host} host on {target.id} holds at most {stack.max_connections} "
            f"({stack.connections_kconfig})",
            ["operations", index, "connect"],
            [label(op, index), stack.connections_kconfig],
            [measure("requested", host_links(plan), "connections"),
             measure("limit", stack.max_connections, "connections")],
            options,
        )
    ]  # fmt: skip


def _bond(plan: Plan, target: Target, framework: str, index: int, op: BleScan) -> list[Evidence]:
    return bond_check(target, framework, index, op)


def _security(plan: Plan, target: Target, framework: str, index: int, op: BleScan) -> list[Evidence]:
    """The central pairs Just Works (no IO capabilities): level 2 at most; a bond needs a pairing."""
    path: Path = ["operations", index, "security"]
    found: list[Evidence] = []
    if op.security >= 3:
        found.append(
            violation(
                "E_BLE_SECURITY",
                f"{label(op, index)}: security level {op.security} needs authenticated pairing (MITM), but the "
                "central has no IO capabilities (Just Works reaches level 2 only)",
                path,
                [label(op, index), "security"],
                [measure("security_level", op.security, "level"), measure("reachable", 2, "level")],
                [relax("require encryption only (level 2)", replace(path, 2))],
            )
        )
    if op.security >= 2 and not op.connect:
        found.append(
            violation(
                "E_BLE_PEER",
                f"{label(op, index)}: security level {op.security} is asked of a connection, but connect is false",
                path,
                [label(op, index), "security"],
                relaxations=[relax("ask for no security", replace(path, 1))],
            )
        )
    if op.bond and op.connect and op.security < 2:
        found.append(
            violation(
                "E_BLE_BOND_PAIRING",
                f"{label(op, index)}: bond keeps pairing keys, but the central never pairs (security level 1)",
                ["operations", index, "bond"],
                [label(op, index), "bond", "security"],
                relaxations=[relax("pair with encryption (level 2)", replace(path, 2)),
                             relax("do not bond", replace(["operations", index, "bond"], False))],
            )
        )  # fmt: skip
    return found


# --- realizations -------------------------------------------------------------------------------
def _uuid_view(uuid: str) -> dict[str, Any]:
    """A UUID as both hosts declare it statically, plus its on-air bytes for matching AD fields."""
    on_air = ", ".join(f"0x{b:02x}" for b in payload.uuid_bytes(uuid))
    if len(uuid) == 4:
        return {"bits": 16, "bytes": on_air, "size": 2, "zephyr": f"BT_UUID_INIT_16(0x{uuid})",
                "ztype": "bt_uuid_16", "nimble": f"BLE_UUID16_INIT(0x{uuid})", "ntype": "ble_uuid16_t"}  # fmt: skip
    parts = uuid.split("-")
    encode = ", ".join(f"0x{p}" for p in parts[:4]) + f", 0x{parts[4]}ULL"
    return {"bits": 128, "bytes": on_air, "size": 16, "zephyr": f"BT_UUID_INIT_128(BT_UUID_128_ENCODE({encode}))",
            "ztype": "bt_uuid_128", "nimble": f"BLE_UUID128_INIT({on_air})", "ntype": "ble_uuid128_t"}  # fmt: skip


def _view(op: BleScan) -> dict[str, Any]:
    address = op.filter.address
    peer = op.peer
    return {
        "active": op.active,
        "interval": f"0x{round(units(op.interval_ms)):04x}",
        "window": f"0x{round(units(op.window_ms)):04x}",
        "name": c_string(op.filter.name) if op.filter.name else None,
        "uuid": _uuid_view(op.filter.uuid) if op.filter.uuid else None,
        "address": ", ".join(f"0x{b}" for b in reversed(address.split(":"))) if address else None,
        "connect": op.connect,
        "security": op.security,
        "peer": None if peer is None else {
            "action": peer.action,
            "service": _uuid_view(peer.service),
            "characteristic": _uuid_view(peer.characteristic),
            "value": [f"0x{peer.value[i:i + 2]}" for i in range(0, len(peer.value), 2)],
            "indicate": peer.indicate,
        },
    }  # fmt: skip


def _zephyr(b: ZephyrBuilder, index: int, op: BleScan) -> dict[str, Any]:
    b.app.need("ble", "CONFIG_BT", "CONFIG_BT_OBSERVER")
    b.app.includes.update({"zephyr/bluetooth/bluetooth.h", "zephyr/bluetooth/hci.h", "zephyr/bluetooth/addr.h",
                           "zephyr/net_buf.h", "string.h"})  # fmt: skip
    if op.connect:
        b.app.need("ble", "CONFIG_BT_CENTRAL")
        b.app.setting("ble", "CONFIG_BT_MAX_CONN", str(host_links(b.plan)))
        b.app.includes.update({"zephyr/bluetooth/conn.h", "zephyr/sys/atomic.h"})
    if op.security >= 2:
        b.app.need("ble", "CONFIG_BT_SMP")
    if op.peer is not None:
        b.app.need("ble", "CONFIG_BT_GATT_CLIENT")
        b.app.includes.update({"zephyr/bluetooth/gatt.h", "zephyr/bluetooth/uuid.h"})
    return _view(op) | {"setup": True, "step": None, "bonding": zephyr_bonding(b, index)}


def _espidf(b: EspIdfBuild, index: int, op: BleScan) -> dict[str, Any]:
    b.requires.update({"bt", "nvs_flash"})
    b.sdkconfig.update({"CONFIG_BT_ENABLED": "y", "CONFIG_BT_NIMBLE_ENABLED": "y",
                        "CONFIG_BT_NIMBLE_ROLE_OBSERVER": "y"})  # fmt: skip
    if op.connect:
        b.sdkconfig["CONFIG_BT_NIMBLE_ROLE_CENTRAL"] = "y"
        b.sdkconfig["CONFIG_BT_NIMBLE_MAX_CONNECTIONS"] = str(host_links(b.plan))
    advertiser = next((o for o in b.plan.operations if o.op == "ble_advertise"), None)
    return _view(op) | {
        # The advertiser brings the host up and starts this scanner from its sync callback.
        "owns_host": advertiser is None,
        # With extended advertising configured NimBLE reports every advertisement as an EXT_DISC event.
        "ext": advertiser is not None and bool(getattr(advertiser, "extended", False)),
        "bonding": espidf_bonding(b),
    }


SPEC = OpSpec(
    model=BleScan,
    family="ble",
    realizations={
        "zephyr": Realization(
            template="ble_scan", view=_zephyr, available=has_host("zephyr"), why_unavailable=why_no_host("zephyr")
        ),
        "espidf": Realization(
            template="ble_scan", view=_espidf, available=has_host("espidf"), why_unavailable=why_no_host("espidf")
        ),
    },
    checks=(_single, _timing, _central, _connections, _bond, _security, _peer_value),
    codes=("E_BLE_SCANNERS", "E_BLE_SCAN_WINDOW", "E_BLE_SCAN_FILTER", "E_BLE_PEER", "E_BLE_BOND_PAIRING", UNUSED),
)
