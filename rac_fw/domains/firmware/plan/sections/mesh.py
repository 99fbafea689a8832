"""The plan-level ``mesh:`` block: the device is a Bluetooth Mesh node with a Generic OnOff Server on a board LED.

One block for the whole application, because a mesh node is one identity on the radio (its device UUID,
its composition, its provisioning state kept in the settings backend), not an operation among others.
The composition is fixed and minimal: one element (location 0) holding the Configuration Server, the
Health Server and a Generic OnOff Server whose Set/Set Unacknowledged messages switch ``led`` (Get and
Set answer with the OnOff Status). Provisioning uses no output OOB (Just Works from the provisioner's
side); the unprovisioned-device UUID is the chip's hardware ID read at run time (``uuid: hwinfo``,
``hwinfo_get_device_id``) or 16 fixed bytes written in the plan.

Zephyr 4.1: ``prj.conf`` gets ``BT``, ``BT_OBSERVER``/``BT_BROADCASTER`` (BT_MESH depends on both),
``BT_MESH``, the chosen bearers (``BT_MESH_PB_ADV``, ``BT_MESH_PB_GATT`` with ``BT_PERIPHERAL``),
``BT_MESH_RELAY``, and persistence through ``BT_SETTINGS``/``SETTINGS``/``NVS`` on the flash map; the C
(``templates/zephyr/mesh.c.j2``) follows include/zephyr/bluetooth/mesh/{main,access,cfg_srv,health_srv}.h
(the 4.x const-model API; sources cited in ``verify/sdk/zephyr/api.d/mesh.json``).

``rac: mesh ok <uuid>`` is printed when ``bt_mesh_init`` and ``bt_mesh_prov_enable`` have succeeded (or
when stored provisioning data was restored): the node is then on the air and provisionable. Waiting for
the provisioning itself would make the boot line depend on a provisioner being in range, which no
build check, emulator or bench run can promise; ``rac: mesh provisioned 0x<addr>`` follows when it happens.

Obligations: a chip without a Bluetooth LE radio (or whose radio the framework has no mesh stack for)
is ``E_TARGET_UNSUPPORTED`` naming the targets that have one; the LED is a board LED or a declared pin
(``E_UNKNOWN_RESOURCE``); a connectable ``ble_advertise`` would share the node's identity and
connection policy with a GATT peripheral the mesh stack does not know about (``E_MESH_ADVERTISER``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import Field, StringConstraints

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import board_led
from rac_fw.domains.firmware.facts.radio import ble_stack
from rac_fw.domains.firmware.plan.base import PlanModel
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.evidence import relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.rules import AnyOf, Rule
from rac_fw.domains.firmware.plan.spec import SectionSpec

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

ADVERTISER = "E_MESH_ADVERTISER"
UNKNOWN = "E_UNKNOWN_RESOURCE"

DeviceUuid = Annotated[
    str,
    StringConstraints(pattern=r"^(hwinfo|[0-9a-fA-F]{32})$"),
    Field(description="hwinfo (the chip's hardware ID, read at run time) or 16 bytes as 32 hex digits."),
]


class Mesh(PlanModel):
    """A Bluetooth Mesh node: Configuration, Health and Generic OnOff servers on one element.

    ``led`` is the board LED (or declared GPIO pin) the Generic OnOff Server switches. ``uuid`` is the
    unprovisioned-device UUID: ``hwinfo`` derives it from the chip's hardware ID, or give 32 hex digits.
    ``pb_adv``/``pb_gatt`` choose the provisioning bearers (at least one); ``relay`` lets the node
    retransmit others' messages. Provisioning data survives resets (settings backend on flash).
    """

    led: Name
    uuid: DeviceUuid = "hwinfo"
    pb_adv: bool = Field(default=True, description="Provision over the advertising bearer (PB-ADV).")
    pb_gatt: bool = Field(default=False, description="Provision over a GATT connection (PB-GATT).")
    relay: bool = Field(default=True, description="Relay other nodes' network PDUs.")

    rules: ClassVar[tuple[Rule, ...]] = (
        AnyOf("a node needs a provisioning bearer: set pb_adv or pb_gatt", ("pb_adv", "pb_gatt")),
    )


def _led(plan: Plan, target: Target, framework: str, mesh: Mesh) -> list[Evidence]:
    """The LED is a board LED or a declared pin (the binder resolves it the same way)."""
    if plan.pin_use(mesh.led) is not None or board_led(target, mesh.led) is not None:
        return []
    choices = [item.dt_label or item.name for item in target.board.leds]
    return [
        violation(
            UNKNOWN,
            f"mesh.led {mesh.led!r} is neither a board LED of {target.id} ({', '.join(choices) or 'none'}) "
            "nor a declared pin",
            ["mesh", "led"],
            [mesh.led, target.id],
            relaxations=[relax(f"use board LED {c}", replace(["mesh", "led"], c)) for c in choices[:3]]
            or [relax("drop the mesh block", remove(["mesh"]))],
        )
    ]


def _advertiser(plan: Plan, target: Target, framework: str, mesh: Mesh) -> list[Evidence]:
    """A connectable advertiser is a second GATT identity beside the node's own (its proxy/PB-GATT
    advertising and connection accounting belong to the mesh stack): refused rather than guessed at."""
    found = []
    for index, op in enumerate(plan.operations):
        if spec(op.op).family == "ble" and getattr(op, "connectable", False):  # an advertiser taking connections
            label = op.name or f"operations[{index}]"
            found.append(
                violation(
                    ADVERTISER,
                    f"{label} advertises connectably beside the mesh node: the device would show two identities "
                    "and the mesh stack would not own its connections",
                    ["operations", index],
                    [label, "mesh"],
                    relaxations=[relax("drop the advertiser", remove(["operations", index]))],
                )
            )
    return found


def _has_mesh(target: Target) -> bool:
    """Zephyr's mesh stack runs over its own Bluetooth LE host: the chip's radio has one."""
    stack = ble_stack(target, "zephyr")
    return stack is not None and stack.host == "zephyr"


def _why_not(target: Target) -> str:
    others = [t for t in target_ids() if _has_mesh(load_target(t))]
    return (
        f"a mesh node needs a Bluetooth LE radio with Zephyr's host; {target.id} has none here "
        f"(targets with one: {', '.join(others) or 'none'})"
    )


def uuid_bytes(mesh: Mesh) -> list[str] | None:
    """The fixed UUID as C byte literals, in the order written (None: derived from hwinfo)."""
    if mesh.uuid == "hwinfo":
        return None
    return [f"0x{b:02x}" for b in bytes.fromhex(mesh.uuid)]


def _zephyr(b: ZephyrBuilder, mesh: Mesh) -> None:
    family = "mesh"
    b.app.need(family, "CONFIG_BT", "CONFIG_BT_OBSERVER", "CONFIG_BT_BROADCASTER", "CONFIG_BT_MESH",
               "CONFIG_BT_SETTINGS", "CONFIG_SETTINGS", "CONFIG_FLASH", "CONFIG_FLASH_MAP", "CONFIG_NVS")  # fmt: skip
    if mesh.pb_adv:
        b.app.need(family, "CONFIG_BT_MESH_PB_ADV")
    else:
        b.app.setting(family, "CONFIG_BT_MESH_PB_ADV", "n")
    if mesh.pb_gatt:
        b.app.need(family, "CONFIG_BT_MESH_PB_GATT", "CONFIG_BT_PERIPHERAL")
    b.app.setting(family, "CONFIG_BT_MESH_RELAY", "y" if mesh.relay else "n")
    if mesh.uuid == "hwinfo":
        b.app.need(family, "CONFIG_HWINFO")
        b.app.includes.add("zephyr/drivers/hwinfo.h")
    b.app.includes.update({"zephyr/bluetooth/bluetooth.h", "zephyr/bluetooth/mesh.h", "zephyr/settings/settings.h"})
    oid = "rac_mesh"
    view: dict[str, Any] = {
        "id": oid,
        "tag": c_string("mesh"),
        "led": b.gpio_spec("led", mesh.led, "mesh.led", "led", oid),
        "uuid": uuid_bytes(mesh),
        "led_name": c_string(mesh.led),
        "bearers": " | ".join(
            b for b, on in (("BT_MESH_PROV_ADV", mesh.pb_adv), ("BT_MESH_PROV_GATT", mesh.pb_gatt)) if on
        ),
    }
    render = b.macro("mesh", "mesh_node")
    if render is None:
        raise LookupError("templates/zephyr/mesh.c.j2 has no macro mesh_node")
    b.app.globals.append(render(view).strip("\n"))
    b.app.setups.append({"id": oid, "tag": view["tag"]})
    b.app.realized.append(f"mesh node (Configuration, Health, Generic OnOff servers) on LED {mesh.led}")


SECTION = SectionSpec(
    name="mesh",
    model=Mesh,
    family="ble",
    realizations={"zephyr": _zephyr},
    available={"zephyr": _has_mesh},
    endpoints={"led": "led"},
    why_not=_why_not,
    checks=(_led, _advertiser),
    codes=(ADVERTISER,),
)
