"""The ``ble_gatt_service`` operation: a primary GATT service whose characteristics read, write and notify."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.facts.kconfig import minimum
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.radio import ble, ble_stack
from rac_fw.domains.firmware.ops.ble import payload
from rac_fw.domains.firmware.ops.ble.ble_advertise import BleAdvertise
from rac_fw.domains.firmware.ops.ble.common import has_host, no_radio
from rac_fw.domains.firmware.ops.ble.payload import Uuid
from rac_fw.domains.firmware.ops.ble.sources import producers, value_source
from rac_fw.domains.firmware.plan.base import Operation, PlanModel
from rac_fw.domains.firmware.plan.cstring import c_string_literal
from rac_fw.domains.firmware.plan.evidence import Path, add, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: ATT_MTU every connection starts with (Core Vol 3 Part F §3.2.8); a notification carries MTU − 3.
DEFAULT_ATT_MTU = 23
ATT_HEADER_BYTES = 3


class Characteristic(PlanModel):
    """One characteristic: a value a central may read, write or subscribe to."""

    name: Name
    uuid: Uuid
    read: bool = True
    write: bool = Field(default=False, description="Centrals may write; each write is stored and logged.")
    notify: bool = Field(default=False, description="Notify subscribers every notify_ms with the source's value.")
    indicate: bool = Field(
        default=False,
        description="Indicate the source's value every notify_ms to subscribers (acknowledged: one in flight per "
        "characteristic, the next waits for the peer's confirmation).",
    )
    ccc: bool = Field(default=True, description="Client Characteristic Configuration descriptor (subscriptions).")
    source: Name | None = Field(
        default=None, description="A value-producing operation whose latest value (int32 LE) is the value."
    )
    length_bytes: int = Field(default=4, ge=1, le=512, description="Value length when no source gives it.")

    def value_bytes(self) -> int:
        return payload.VALUE_BYTES if self.source else self.length_bytes


class BleGattService(Operation):
    """A primary GATT service with characteristics (read, write, notify or indicate with a CCC descriptor).

    A characteristic with a ``source`` serves that operation's latest value; with ``notify`` it is
    sent to every subscribed central each ``notify_ms``. ``security`` is the level a central must
    reach to access it: 1 open, 2 encrypted (Just Works pairing), 3 authenticated (MITM: the
    advertiser must be able to display a passkey), 4 authenticated LE Secure Connections. ``mtu`` is
    the ATT MTU the device asks for; a value must fit in MTU − 3 bytes to go in one notification.
    """

    op: Literal["ble_gatt_service"]
    uuid: Uuid
    characteristics: list[Characteristic] = Field(min_length=1, max_length=8)
    security: Literal[1, 2, 3, 4] = 1
    mtu: int = Field(default=DEFAULT_ATT_MTU, ge=DEFAULT_ATT_MTU, le=527)
    notify_ms: int = Field(default=1000, ge=10, le=3_600_000)

    @model_validator(mode="after")
    def _unique(self) -> BleGattService:
        names = [c.name for c in self.characteristics]
        if len(set(names)) != len(names):
            raise ValueError("characteristic names must be unique within the service")
        return self


def _label(op: BleGattService, index: int) -> str:
    return op.name or f"operations[{index}]"


def _advertiser(plan: Plan) -> tuple[int, BleAdvertise] | None:
    return next(((i, o) for i, o in enumerate(plan.operations) if isinstance(o, BleAdvertise)), None)


# --- obligations --------------------------------------------------------------------------------
def _mtu(plan: Plan, target: Target, framework: str, index: int, op: BleGattService) -> list[Evidence]:

    stack = ble_stack(target, framework)
    found: list[Evidence] = []
    path: Path = ["operations", index]
    top = stack.att_mtu_max if stack is not None else op.mtu
    if stack is not None and op.mtu > stack.att_mtu_max:
        found.append(
            violation(
                "E_BLE_MTU",
                f"{_label(op, index)}: ATT MTU {op.mtu} bytes, the {stack.host} host allows {stack.att_mtu_max}",
                [*path, "mtu"],
                [_label(op, index), stack.mtu_kconfig],
                [measure("mtu", op.mtu, "bytes"), measure("limit", stack.att_mtu_max, "bytes")],
                [relax(f"ask for an ATT MTU of {stack.att_mtu_max}", replace([*path, "mtu"], stack.att_mtu_max))],
            )
        )
    room = op.mtu - ATT_HEADER_BYTES
    for j, ch in enumerate(op.characteristics):
        size = ch.value_bytes()
        if size <= room:
            continue
        where: Path = [*path, "characteristics", j]
        options: list[Relaxation] = []
        if size + ATT_HEADER_BYTES <= top:
            options.append(
                relax(
                    f"ask for an ATT MTU of {size + ATT_HEADER_BYTES}", replace([*path, "mtu"], size + ATT_HEADER_BYTES)
                )
            )
        if ch.source is None:
            options.append(relax(f"shorten the value to {room} bytes", replace([*where, "length_bytes"], room)))
        found.append(
            violation(
                "E_BLE_MTU",
                f"{_label(op, index)}.{ch.name}: a {size}-byte value does not fit one ATT PDU at MTU {op.mtu} "
                f"({room} bytes after the 3-byte header)",
                where,
                [_label(op, index), ch.name],
                [measure("value", size, "bytes"), measure("room", room, "bytes"), measure("mtu", op.mtu, "bytes")],
                options,
            )
        )  # fmt: skip
    return found


def _notify(plan: Plan, target: Target, framework: str, index: int, op: BleGattService) -> list[Evidence]:
    """Notify and indicate need a CCC descriptor (the peer subscribes there) and a value source."""
    found: list[Evidence] = []
    for j, ch in enumerate(op.characteristics):
        where: Path = ["operations", index, "characteristics", j]
        pushes = [k for k in ("notify", "indicate") if getattr(ch, k)]
        stop = [relax(f"do not {k}", replace([*where, k], False)) for k in pushes]
        if pushes and not ch.ccc:
            found.append(
                violation(
                    "E_BLE_CCC",
                    f"{_label(op, index)}.{ch.name} {' and '.join(pushes)} but has no CCC descriptor: no central "
                    "can subscribe",
                    [*where, "ccc"],
                    [_label(op, index), ch.name, *pushes],
                    relaxations=[relax("add the CCC descriptor", replace([*where, "ccc"], True)), *stop],
                )
            )
        if pushes and ch.source is None:
            options = [
                relax(f"{pushes[0]} the value of {p}", replace([*where, "source"], p)) for p in producers(plan)[:3]
            ]
            found.append(
                violation(
                    "E_BLE_NOTIFY_SOURCE",
                    f"{_label(op, index)}.{ch.name} {' and '.join(pushes)}, but no operation's value drives it "
                    "(source)",
                    [*where, "source"],
                    [_label(op, index), ch.name],
                    relaxations=[*options, *stop],
                )
            )
        found += value_source(plan, ch.source, [*where, "source"])
        if not (ch.read or ch.write or pushes):
            found.append(
                violation(
                    "E_BLE_CHARACTERISTIC",
                    f"{_label(op, index)}.{ch.name} can be neither read, written, notified nor indicated",
                    where,
                    [ch.name],
                    relaxations=[relax("make it readable", replace([*where, "read"], True))],
                )
            )
    return found


def _radio(plan: Plan, target: Target, framework: str, index: int, op: BleGattService) -> list[Evidence]:
    return no_radio(target, index, op)


def _security(plan: Plan, target: Target, framework: str, index: int, op: BleGattService) -> list[Evidence]:

    found: list[Evidence] = []
    if ble(target) is None:  # _radio answers: no advertiser could run here either
        return found
    advertiser = _advertiser(plan)
    path: Path = ["operations", index, "security"]
    if advertiser is None or not advertiser[1].connectable:
        options = [relax("drop this service", remove(["operations", index]))]
        if advertiser is None:
            options.insert(0, relax("advertise connectably", add(["operations", -1], {"op": "ble_advertise"})))
        else:
            options.insert(0, relax("make the advertiser connectable",
                                    replace(["operations", advertiser[0], "connectable"], True)))  # fmt: skip
        found.append(
            violation(
                "E_BLE_NO_ADVERTISER",
                f"{_label(op, index)}: no central can reach a GATT service without connectable advertising",
                ["operations", index],
                [_label(op, index)],
                relaxations=options,
            )
        )
        return found
    a_index, adv = advertiser
    if op.security >= 3 and adv.io_capabilities == "none":
        found.append(
            violation(
                "E_BLE_SECURITY",
                f"{_label(op, index)}: security level {op.security} needs authenticated pairing (MITM), but the "
                "device has no IO capabilities (Just Works reaches level 2 only)",
                path,
                [_label(op, index), "io_capabilities"],
                [measure("security_level", op.security, "level"), measure("reachable", 2, "level")],
                [
                    relax("let the device display a passkey",
                          replace(["operations", a_index, "io_capabilities"], "display_only")),
                    relax("require encryption only (level 2)", replace(path, 2)),
                ],
            )
        )  # fmt: skip
    controller = ble(target)
    if op.security == 4 and controller is not None and not controller.le_secure_connections:
        found.append(
            violation(
                "E_BLE_SECURITY",
                f"{_label(op, index)}: level 4 needs LE Secure Connections, which {target.id}'s controller lacks",
                path,
                [_label(op, index), target.id],
                relaxations=[relax("require authenticated legacy pairing (level 3)", replace(path, 3))],
            )
        )
    return found


# --- realizations -------------------------------------------------------------------------------
def _uuid_c(uuid: str) -> dict[str, str]:
    if len(uuid) == 4:
        return {"zephyr": f"BT_UUID_DECLARE_16(0x{uuid})", "nimble": f"BLE_UUID16_DECLARE(0x{uuid})"}
    parts = uuid.split("-")
    encode = ", ".join(f"0x{p}" for p in parts[:4]) + f", 0x{parts[4]}ULL"
    nimble = ", ".join(f"0x{b:02x}" for b in payload.uuid_bytes(uuid))
    return {"zephyr": f"BT_UUID_DECLARE_128(BT_UUID_128_ENCODE({encode}))", "nimble": f"BLE_UUID128_DECLARE({nimble})"}


def _characteristics(op: BleGattService) -> list[dict[str, Any]]:
    views = []
    attr = 1  # attribute 0 is the primary service declaration
    for ch in op.characteristics:
        views.append(
            {
                "name": ch.name,
                "label": c_string_literal(ch.name),
                "uuid": _uuid_c(ch.uuid),
                "read": ch.read,
                "write": ch.write,
                "notify": ch.notify,
                "indicate": ch.indicate,
                "ccc": ch.ccc and (ch.notify or ch.indicate),
                "source": ch.source,
                "size": ch.value_bytes(),
                "value_attr": attr + 1,
            }
        )
        attr += 2 + (1 if ch.ccc and (ch.notify or ch.indicate) else 0)
    return views


def _perm(level: int, access: str) -> str:
    if level >= 3:
        return f"BT_GATT_PERM_{access}_AUTHEN"
    return f"BT_GATT_PERM_{access}_ENCRYPT" if level == 2 else f"BT_GATT_PERM_{access}"


def _zephyr(b: ZephyrBuilder, index: int, op: BleGattService) -> dict[str, Any]:
    b.app.need("ble", "CONFIG_BT", "CONFIG_BT_PERIPHERAL")
    b.app.includes.update({"zephyr/bluetooth/gatt.h", "zephyr/bluetooth/uuid.h", "zephyr/sys/byteorder.h",
                           "zephyr/sys/atomic.h", "string.h"})  # fmt: skip
    if op.security >= 2:
        b.app.need("ble", "CONFIG_BT_SMP")
    if op.security == 4:
        b.app.need("ble", "CONFIG_BT_SMP_SC_ONLY")
    if op.mtu > DEFAULT_ATT_MTU:
        stack = ble_stack(b.target, "zephyr")
        mtu_symbol = stack.mtu_kconfig if stack else "BT_L2CAP_TX_MTU"
        # L2CAP PDUs carry the ATT MTU plus a 4-byte header; with SMP, Zephyr's Kconfig raises the floor of both
        # (BT_L2CAP_TX_MTU >= 65, BT_BUF_ACL_RX_SIZE >= 69: LE Secure Connections pairing PDUs), a value below
        # it aborts the build, so the smallest legal value at least as large as the plan's is written.
        on = frozenset({s.removeprefix("CONFIG_") for s in b.app.kconfig})
        pdu = op.mtu + 4
        for symbol, value in ((mtu_symbol, op.mtu), ("BT_BUF_ACL_RX_SIZE", pdu), ("BT_BUF_ACL_TX_SIZE", pdu)):
            b.app.setting("ble", f"CONFIG_{symbol}", str(max(value, minimum("zephyr", b.sdk.version, symbol, on))))
    chars = _characteristics(op)
    for ch in chars:
        ch["value_id"] = b.op_id(ch["source"]) if ch["source"] else None
        ch["read_perm"] = _perm(op.security, "READ")
        ch["write_perm"] = _perm(op.security, "WRITE")
    view: dict[str, Any] = {"uuid": _uuid_c(op.uuid)["zephyr"], "chars": chars, "setup": False, "step": None}
    if any(ch["notify"] or ch["indicate"] for ch in chars):
        view["step"] = {"period_ms": op.notify_ms, "count": None}
    return view


def _espidf(b: EspIdfBuild, index: int, op: BleGattService) -> dict[str, Any]:
    b.requires.update({"bt"})
    if op.mtu > DEFAULT_ATT_MTU:
        b.sdkconfig["CONFIG_BT_NIMBLE_ATT_PREFERRED_MTU"] = str(op.mtu)
    flags = {1: "", 2: "_ENC", 3: "_AUTHEN", 4: "_AUTHEN"}[op.security]
    chars = _characteristics(op)
    for ch in chars:
        parts = []
        if ch["read"]:
            parts += ["BLE_GATT_CHR_F_READ"] + ([f"BLE_GATT_CHR_F_READ{flags}"] if flags else [])
        if ch["write"]:
            parts += ["BLE_GATT_CHR_F_WRITE"] + ([f"BLE_GATT_CHR_F_WRITE{flags}"] if flags else [])
        if ch["notify"]:
            parts.append("BLE_GATT_CHR_F_NOTIFY")
        if ch["indicate"]:
            parts.append("BLE_GATT_CHR_F_INDICATE")
        ch["flags"] = " | ".join(parts)
    return {
        "uuid": _uuid_c(op.uuid)["nimble"],
        "chars": chars,
        "notify": any(ch["notify"] or ch["indicate"] for ch in chars),
        "notify_ms": op.notify_ms,
        "task": b.thread(None, b.symbol(index, op)),
    }


SPEC = OpSpec(
    model=BleGattService,
    family="ble",
    realizations={
        "zephyr": Realization(template="ble", view=_zephyr, available=has_host("zephyr")),
        "espidf": Realization(template="ble_gatt", view=_espidf, available=has_host("espidf")),
    },
    checks=(_radio, _mtu, _notify, _security),
    codes=("E_BLE_MTU", "E_BLE_CCC", "E_BLE_NOTIFY_SOURCE", "E_BLE_CHARACTERISTIC", "E_BLE_SECURITY",
           "E_BLE_NO_ADVERTISER"),
)  # fmt: skip
