"""The ``ble_advertise`` operation: a Bluetooth LE advertiser, with connection tracking when connectable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.facts.kconfig import kconfig_facts, range_of
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.radio import ble, ble_stack
from rac_fw.domains.firmware.ops.ble import payload
from rac_fw.domains.firmware.ops.ble.bonding import bond_check, espidf_bonding, zephyr_bonding
from rac_fw.domains.firmware.ops.ble.common import central_links, has_host, host_links, label, why_no_host
from rac_fw.domains.firmware.ops.ble.payload import DeviceName, HexBytes, Placement, Uuid
from rac_fw.domains.firmware.ops.ble.sources import value_source
from rac_fw.domains.firmware.plan.base import Operation, PlanModel
from rac_fw.domains.firmware.plan.escape import c_string, kconfig_string
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.rules import Given, Implies, Rule
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

IoCapabilities = Literal["none", "display_only"]


class Manufacturer(PlanModel):
    """Manufacturer-specific data: a company identifier, fixed bytes and optionally a live value."""

    company_id: int = Field(ge=0, le=0xFFFF, description="Bluetooth SIG company identifier (0xFFFF: testing).")
    data: HexBytes = ""
    value: Name | None = Field(
        default=None,
        description="A value-producing operation whose latest value (int32, little endian) follows the bytes.",
    )

    def data_bytes(self) -> int:
        return len(self.data) // 2 + (payload.VALUE_BYTES if self.value else 0)


class BleAdvertise(Operation):
    """Advertise over Bluetooth LE: device name, service UUIDs, manufacturer data, at an interval.

    Connectable advertising accepts up to ``max_connections`` centrals, reports every connection
    (peer address) and disconnection (HCI reason) on the console, keeps a reference on each
    connection while it lasts and advertises again when one ends. Legacy advertising data is at most
    31 bytes; the name may move to the scan response, or ``extended`` advertising (Bluetooth 5) may
    carry up to 251 bytes where the controller supports it. ``io_capabilities`` is what the device
    can do during pairing (``display_only``: it prints a passkey), which bounds the GATT security
    level a service may require.
    """

    op: Literal["ble_advertise"]
    device_name: DeviceName | None = None
    name_in: Placement = Field(default="advertising", description="Where the complete name goes.")
    connectable: bool = True
    service_uuids: list[Uuid] = Field(default_factory=list, max_length=8)
    manufacturer: Manufacturer | None = None
    interval_min_ms: int = Field(default=100, ge=payload.INTERVAL_MIN_MS, le=payload.INTERVAL_MAX_MS)
    interval_max_ms: int = Field(default=150, ge=payload.INTERVAL_MIN_MS, le=payload.INTERVAL_MAX_MS)
    update_ms: int | None = Field(
        default=None, ge=100, le=3_600_000, description="Refresh period of the manufacturer value (default 1000)."
    )
    extended: bool = Field(default=False, description="Use a Bluetooth 5 extended advertising set.")
    max_connections: int = Field(default=1, ge=1, le=64)
    io_capabilities: IoCapabilities = "none"
    bond: bool = Field(
        default=False,
        description="Keep pairing keys in the settings backend (Zephyr) or NVS (NimBLE) so bonded peers "
        "reconnect encrypted without pairing again.",
    )

    rules: ClassVar[tuple[Rule, ...]] = (
        Implies("update_ms refreshes manufacturer.value: name the value to send, or drop update_ms",
                Given("update_ms"), Given("manufacturer.value")),
        Implies("bonding keeps a connected peer's keys: a bonding advertiser is connectable", Given("bond"),
                Given("connectable")),
    )  # fmt: skip

    def ad_fields(self) -> list[payload.AdField]:
        placement: Placement = "advertising" if self.extended else self.name_in
        return payload.fields(
            self.device_name,
            placement,
            self.service_uuids,
            self.manufacturer.data_bytes() if self.manufacturer else None,
        )

    def budget(self) -> int:
        return payload.EXTENDED_BUDGET if self.extended else payload.LEGACY_BUDGET

    def refresh_ms(self) -> int | None:
        if self.manufacturer is None or self.manufacturer.value is None:
            return None
        return self.update_ms or 1000


# --- obligations --------------------------------------------------------------------------------
def _budget(plan: Plan, target: Target, framework: str, index: int, op: BleAdvertise) -> list[Evidence]:

    found = op.ad_fields()
    used, limit = payload.size(found, "advertising"), op.budget()
    sr_used = payload.size(found, "scan_response")
    path: Path = ["operations", index]
    evidence: list[Evidence] = []
    kind = "extended advertising" if op.extended else "legacy advertising"
    if used > limit:
        options: list[Relaxation] = []
        name = next((f for f in found if f.kind == "name" and f.where == "advertising"), None)
        if name is not None and not op.extended:
            if used - name.size <= limit and sr_used + name.size <= payload.LEGACY_BUDGET:
                options.append(
                    relax("move the name to the scan response", replace([*path, "name_in"], "scan_response"))
                )
            keep = name.data_bytes - (used - limit)
            if keep >= 1 and op.device_name is not None:
                options.append(
                    relax(
                        f"shorten the name to {keep} characters", replace([*path, "device_name"], op.device_name[:keep])
                    )
                )
        controller = ble(target)
        if (
            not op.extended
            and controller is not None
            and controller.extended_advertising
            and _realizes_extended(framework, target)
            and used <= payload.EXTENDED_BUDGET
        ):
            options.append(relax("use extended advertising (Bluetooth 5)", replace([*path, "extended"], True)))
        uuids = next((f for f in found if f.kind.startswith("uuid")), None)
        if uuids is not None and used - sum(f.size for f in found if f.kind.startswith("uuid")) <= limit:
            options.append(relax("advertise no service UUIDs", replace([*path, "service_uuids"], [])))
        evidence.append(
            violation(
                "E_BLE_ADV_BUDGET",
                f"{_label(op, index)}: the {kind} data is {used} bytes, {used - limit} over the {limit}-byte budget ("
                + ", ".join(f"{f.kind} {f.size} B" for f in found if f.where == "advertising")
                + ")",
                path,
                [_label(op, index), *(f.kind for f in found if f.where == "advertising")],
                [measure("advertising_data", used, "bytes"), measure("budget", limit, "bytes"),
                 measure("excess", used - limit, "bytes")],
                options,
            )
        )  # fmt: skip
    if sr_used > payload.LEGACY_BUDGET:
        evidence.append(
            violation(
                "E_BLE_ADV_BUDGET",
                f"{_label(op, index)}: the scan response is {sr_used} bytes, "
                f"over the {payload.LEGACY_BUDGET}-byte budget",
                [*path, "device_name"],
                [_label(op, index), "name"],
                [measure("scan_response", sr_used, "bytes"), measure("budget", payload.LEGACY_BUDGET, "bytes")],
                [relax("shorten the name", replace([*path, "device_name"], (op.device_name or "")[:20]))],
            )
        )
    return evidence


def _interval(plan: Plan, target: Target, framework: str, index: int, op: BleAdvertise) -> list[Evidence]:

    if op.interval_min_ms <= op.interval_max_ms:
        return []
    path: Path = ["operations", index]
    return [
        violation(
            "E_BLE_INTERVAL",
            f"{_label(op, index)}: the advertising interval range is empty "
            f"({op.interval_min_ms} ms minimum > {op.interval_max_ms} ms maximum)",
            [*path, "interval_min_ms"],
            [_label(op, index)],
            [measure("interval_min", op.interval_min_ms, "ms"), measure("interval_max", op.interval_max_ms, "ms")],
            [
                relax(
                    f"advertise every {op.interval_max_ms} ms", replace([*path, "interval_min_ms"], op.interval_max_ms)
                ),
                relax(f"allow up to {op.interval_min_ms} ms", replace([*path, "interval_max_ms"], op.interval_min_ms)),
            ],
        )
    ]


def _connections(plan: Plan, target: Target, framework: str, index: int, op: BleAdvertise) -> list[Evidence]:
    """Peripheral plus central links ≤ the host's connection limit (a scanner's own links included)."""
    stack = ble_stack(target, framework)
    if stack is None or host_links(plan) <= stack.max_connections:
        return []
    path: Path = ["operations", index, "max_connections"]
    keep = stack.max_connections - central_links(plan)
    options = [relax(f"accept {keep} connections", replace(path, keep))] if keep >= 1 else []
    options.append(
        relax("advertise without accepting connections", replace(["operations", index, "connectable"], False))
    )
    return [
        violation(
            "E_BLE_CONNECTIONS",
            f"{_label(op, index)}: {host_links(plan)} connections ({op.max_connections} accepted here), but the "
            f"{stack.host} host on {target.id} accepts at most {stack.max_connections} ({stack.connections_kconfig})",
            path,
            [_label(op, index), stack.connections_kconfig],
            [measure("requested", host_links(plan), "connections"),
             measure("limit", stack.max_connections, "connections")],
            options,
        )
    ]  # fmt: skip



def _single(plan: Plan, target: Target, framework: str, index: int, op: BleAdvertise) -> list[Evidence]:

    first = next(i for i, o in enumerate(plan.operations) if isinstance(o, BleAdvertise))
    if first == index:
        return []
    return [
        violation(
            "E_BLE_ADV_SETS",
            "one advertiser per plan: the device has one identity, name and connection policy",
            ["operations", index],
            [_label(op, index)],
            relaxations=[relax(f"drop this {op.op}", remove(["operations", index]))],
        )
    ]


def _value(plan: Plan, target: Target, framework: str, index: int, op: BleAdvertise) -> list[Evidence]:
    name = op.manufacturer.value if op.manufacturer else None
    return value_source(plan, name, ["operations", index, "manufacturer", "value"])


def _bond(plan: Plan, target: Target, framework: str, index: int, op: BleAdvertise) -> list[Evidence]:
    return bond_check(target, framework, index, op)


def _label(op: BleAdvertise, index: int) -> str:
    return label(op, index)


def _realizes_extended(framework: str, target: Target) -> bool:
    realization = SPEC.realization(framework)
    test = realization.features.get("extended") if realization is not None else None
    return test is not None and test(target)


# --- realizations -------------------------------------------------------------------------------
def _ad_view(op: BleAdvertise) -> dict[str, Any]:
    """The AD structures as the templates need them: bytes as C hex literals, in on-air order."""
    uuid16 = [payload.uuid_bytes(u) for u in op.service_uuids if len(u) == 4]
    uuid128 = [payload.uuid_bytes(u) for u in op.service_uuids if len(u) != 4]
    mfg = None
    if op.manufacturer is not None:
        fixed = op.manufacturer.company_id.to_bytes(2, "little") + bytes.fromhex(op.manufacturer.data)
        mfg = {
            "bytes": [f"0x{b:02x}" for b in fixed] + ["0x00"] * (payload.VALUE_BYTES if op.manufacturer.value else 0),
            "value_at": len(fixed),
        }
    return {
        "name": c_string(op.device_name) if op.device_name else None,
        "name_in": "advertising" if op.extended else op.name_in,
        "uuid16": [", ".join(f"0x{b:02x}" for b in u) for u in uuid16],
        "uuid128": [", ".join(f"0x{b:02x}" for b in u) for u in uuid128],
        "mfg": mfg,
        "used": payload.size(op.ad_fields(), "advertising"),
        "budget": op.budget(),
        "min_units": f"0x{payload.interval_units(op.interval_min_ms):04x}",
        "max_units": f"0x{payload.interval_units(op.interval_max_ms):04x}",
    }


def adv_data_limit(version: str, chained: bool) -> int:
    """Most advertising data bytes the Zephyr controller takes, with or without data chaining (Kconfig facts)."""
    facts = kconfig_facts("zephyr")
    symbol = facts.symbol("BT_CTLR_ADV_DATA_LEN_MAX", version) if facts is not None else None
    limits = range_of(symbol, frozenset({"BT_CTLR_ADV_DATA_CHAIN"} if chained else ())) if symbol else None
    return limits.max if limits is not None else payload.EXTENDED_BUDGET


def _zephyr(b: ZephyrBuilder, index: int, op: BleAdvertise) -> dict[str, Any]:
    b.app.need("ble", "CONFIG_BT", "CONFIG_BT_PERIPHERAL" if op.connectable else "CONFIG_BT_BROADCASTER")
    b.app.includes.update({"zephyr/bluetooth/bluetooth.h", "zephyr/bluetooth/hci.h", "zephyr/sys/byteorder.h"})
    if op.connectable:
        b.app.includes.update({"zephyr/bluetooth/conn.h", "zephyr/sys/atomic.h"})
        b.app.setting("ble", "CONFIG_BT_MAX_CONN", str(host_links(b.plan)))
    if op.device_name is not None:
        b.app.setting("ble", "CONFIG_BT_DEVICE_NAME", kconfig_string(op.device_name))
    if op.extended:
        b.app.need("ble", "CONFIG_BT_EXT_ADV")
        # The Zephyr link layer holds BT_CTLR_ADV_DATA_LEN_MAX bytes of advertising data: 31..191 in one
        # AUX_ADV_IND, more only with data chaining (the Kconfig facts' range; 251 without it aborts the build).
        need = max(payload.LEGACY_BUDGET, payload.size(op.ad_fields(), "advertising"))
        if adv_data_limit(b.sdk.version, chained=False) < need:
            b.app.need("ble", "CONFIG_BT_CTLR_ADV_DATA_CHAIN")
        b.app.setting("ble", "CONFIG_BT_CTLR_ADV_DATA_LEN_MAX", str(need))
    if op.io_capabilities != "none" or op.bond:
        b.app.need("ble", "CONFIG_BT_SMP")
    value = op.manufacturer.value if op.manufacturer else None
    view = _ad_view(op) | {
        "setup": True,
        "value_id": b.op_id(value) if value else None,
        "connectable": op.connectable,
        "scannable": not op.connectable and op.name_in == "scan_response" and not op.extended,
        "max_connections": op.max_connections,
        "display": op.io_capabilities == "display_only",
        # A central link (ble_scan) is the scanner's to track: count only links where this device is peripheral.
        "central": central_links(b.plan) > 0,
        "bonding": zephyr_bonding(b, index),
        "step": None,
    }
    refresh = op.refresh_ms()
    if refresh is not None:
        view["step"] = {"period_ms": refresh, "count": None}
    return view


def _espidf(b: EspIdfBuild, index: int, op: BleAdvertise) -> dict[str, Any]:
    b.requires.update({"bt", "nvs_flash"})
    b.sdkconfig.update({"CONFIG_BT_ENABLED": "y", "CONFIG_BT_NIMBLE_ENABLED": "y"})
    b.sdkconfig["CONFIG_BT_NIMBLE_MAX_CONNECTIONS"] = str(host_links(b.plan))
    if op.device_name is not None:
        b.sdkconfig["CONFIG_BT_NIMBLE_SVC_GAP_DEVICE_NAME"] = kconfig_string(op.device_name)
    if op.extended:
        # ESP-IDF components/bt/host/nimble/Kconfig.in: BT_NIMBLE_EXT_ADV (BLE 5 advertising sets; with it
        # the legacy ble_gap_adv_* calls are compiled out), one instance, data up to the 251-byte budget.
        b.sdkconfig.update({"CONFIG_BT_NIMBLE_50_FEATURE_SUPPORT": "y", "CONFIG_BT_NIMBLE_EXT_ADV": "y",
                            "CONFIG_BT_NIMBLE_MAX_EXT_ADV_INSTANCES": "1",
                            "CONFIG_BT_NIMBLE_EXT_ADV_MAX_SIZE": str(payload.EXTENDED_BUDGET)})  # fmt: skip
    services = [b.symbol(i, o) for i, o in enumerate(b.plan.operations) if o.op == "ble_gatt_service"]
    scanners = [b.symbol(i, o) for i, o in enumerate(b.plan.operations) if o.op == "ble_scan"]
    # Only BLE operations carry an LE security level (a Wi-Fi station's ``security`` is its auth mode).
    secured = [o for o in b.plan.operations if spec(o.op).family == "ble" and getattr(o, "security", 1) >= 2]
    bonding = espidf_bonding(b)
    return _ad_view(op) | {
        "value": op.manufacturer.value if op.manufacturer else None,
        "services": services,
        "scanners": scanners,
        "connectable": op.connectable,
        "scannable": not op.connectable and op.name_in == "scan_response" and not op.extended,
        "refresh_ms": op.refresh_ms(),
        "io_cap": "BLE_HS_IO_DISPLAY_ONLY" if op.io_capabilities == "display_only" else "BLE_HS_IO_NO_INPUT_OUTPUT",
        "display": op.io_capabilities == "display_only",
        "bonding": bonding or bool(secured),
        "persist": bonding,
        "mitm": any(getattr(o, "security", 1) >= 3 for o in secured),
        "sc": any(getattr(o, "security", 1) >= 4 for o in secured),
        "task": b.thread(None, b.symbol(index, op)),
    }


def _needs_extended(plan: Plan, target: Target, index: int, op: BleAdvertise) -> list[Evidence]:
    """Extended advertising only where the controller has LE Advertising Extensions (the chip facts)."""
    if not op.extended or _extended(target):
        return []
    path: Path = ["operations", index, "extended"]
    fits = payload.size(payload.fields(op.device_name, op.name_in, op.service_uuids,
                                       op.manufacturer.data_bytes() if op.manufacturer else None),
                        "advertising") <= payload.LEGACY_BUDGET  # fmt: skip
    options = [relax("use legacy advertising", replace(path, False))] if fits else []
    options.append(relax(f"drop this {op.op}", remove(["operations", index])))
    return [
        violation(
            "E_TARGET_UNSUPPORTED",
            f"{target.id}'s Bluetooth LE controller has no extended advertising (legacy PDUs only, 31 bytes)",
            path,
            [_label(op, index), target.id],
            relaxations=options,
        )
    ]


def _extended(target: Target) -> bool:
    controller = ble(target)
    return controller is not None and controller.extended_advertising


SPEC = OpSpec(
    model=BleAdvertise,
    family="ble",
    realizations={
        "zephyr": Realization(
            template="ble",
            view=_zephyr,
            available=has_host("zephyr"),
            why_unavailable=why_no_host("zephyr"),
            admits=_needs_extended,
            features={"extended": _extended},
        ),
        "espidf": Realization(
            template="ble_advertise",
            view=_espidf,
            available=has_host("espidf"),
            why_unavailable=why_no_host("espidf"),
            admits=_needs_extended,
            features={"extended": _extended},
        ),
    },
    checks=(_single, _budget, _interval, _connections, _value, _bond),
    codes=("E_BLE_ADV_BUDGET", "E_BLE_INTERVAL", "E_BLE_CONNECTIONS", "E_BLE_ADV_SETS"),
)
