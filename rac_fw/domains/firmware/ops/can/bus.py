"""What ``can_send`` and ``can_receive`` share: the controller and bitrate fields, their obligations, and
the controller start-up the first operation on a controller performs.

Obligations (one place for both operations):

* ``E_CAN_CONTROLLER`` — the controller is not a CAN node of the board devicetree (relaxations: the ones it has).
* ``E_CAN_BITRATE`` — Zephyr's bit-timing calculation finds no timing for the bitrate from the controller's
  kernel clock (``facts/can.py``); magnitudes: the bitrate and the clock; relaxations: the nearest standard
  bitrates the clock reaches.
* ``E_CAN_CONFLICT`` — two operations set one controller to different bitrates or modes; relaxation: take the
  first operation's.
* ``E_CAN_PINS`` — the board's devicetree routes no pins to the controller (STM32F4DISCOVERY's CAN1) and the
  plan's ``devicetree.pinctrl`` gives it none; relaxation: a pin group on the free pins that carry its TX/RX.
* ``E_CAN_ID`` — an identifier above 0x7FF on a standard (11-bit) frame; relaxations: an extended frame, or the
  identifier's low 11 bits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.can import CanController, bit_timing, can_controller, can_controllers
from rac_fw.domains.firmware.facts.can import reachable_bitrates as reachable
from rac_fw.domains.firmware.facts.query import free_pins
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.clocks import plan_clocks
from rac_fw.domains.firmware.plan.evidence import add, measure, relax, replace, violation

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

CONTROLLER = "E_CAN_CONTROLLER"
BITRATE = "E_CAN_BITRATE"
CONFLICT = "E_CAN_CONFLICT"
IDENTIFIER = "E_CAN_ID"
PINS = "E_CAN_PINS"
CODES = (CONTROLLER, BITRATE, CONFLICT, IDENTIFIER, PINS)


class CanOperation(Operation):
    """Fields of every CAN operation: the controller, its nominal bitrate and mode, one identifier."""

    controller: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z][A-Za-z0-9_]{0,23}$",
        description="CAN controller (CAN2, FDCAN1, or its node label); None = the board's zephyr,canbus.",
    )
    bitrate: int = Field(default=500_000, ge=1_000, le=8_000_000, description="Nominal bitrate (bit/s).")
    mode: Literal["normal", "loopback"] = Field(
        default="normal",
        description="normal: on the bus (another node must acknowledge); loopback: the controller receives its "
        "own frames (CAN_MODE_LOOPBACK), for a bench without a second node.",
    )
    id: int = Field(ge=0, le=0x1FFFFFFF, description="Frame identifier (11-bit standard, 29-bit extended).")
    extended: bool = Field(default=False, description="29-bit identifier (CAN_FRAME_IDE).")
    timeout_ms: int = Field(ge=1, le=60_000, description="Longest wait for one frame to go out / come in (ms).")


def controller_of(target: Target, op: CanOperation) -> CanController | None:
    """The controller ``op`` names, or the board's chosen ``zephyr,canbus`` node."""
    name = op.controller or target.board.dt_chosen.get("zephyr,canbus")
    return can_controller(target, name) if name else None


def check(plan: Plan, target: Target, framework: str, index: int, op: CanOperation) -> list[Evidence]:
    """Controller, identifier, bitrate against the kernel clock, and agreement with the other CAN operations."""
    where: list[str | int] = ["operations", index]
    label = op.name or op.op
    controller = controller_of(target, op)
    if controller is None:
        known = [c.instance for c in can_controllers(target)]
        return [
            violation(
                CONTROLLER,
                f"{op.controller or 'zephyr,canbus'} is not a CAN controller of {target.board.name}; "
                f"it has {', '.join(known) or 'none'}",
                [*where, "controller"],
                [label, op.controller or "zephyr,canbus", target.board.name],
                relaxations=[relax(f"use {k}", replace([*where, "controller"], k)) for k in known[:3]],
            )
        ]
    found: list[Evidence] = _pins(plan, target, index, op, controller)
    if controller.virtual and op.mode != "loopback":
        # drivers/can/can_loopback.c delivers a sent frame to the filters only in CAN_MODE_LOOPBACK: in normal
        # mode every receive times out (Zephyr 3.7.1 native_sim build, run by hand).
        found.append(
            violation(
                CONTROLLER,
                f"{label}: {controller.instance} is a software controller with no bus; it delivers frames only in "
                "loopback mode, so in normal mode nothing is ever received",
                [*where, "mode"],
                [label, controller.instance, op.mode],
                relaxations=[relax(f"run {controller.instance} in loopback mode", *[
                    replace(["operations", i, "mode"], "loopback") for i, o in enumerate(plan.operations)
                    if isinstance(o, CanOperation) and controller_of(target, o) == controller
                ])],
            )
        )
    if op.id > 0x7FF and not op.extended:
        found.append(
            violation(
                IDENTIFIER,
                f"{label}: identifier {op.id:#x} needs 29 bits; a standard frame carries 11 (at most 0x7ff)",
                [*where, "id"],
                [label, f"{op.id:#x}"],
                [measure("identifier", op.id, "id")],
                [
                    relax("send an extended (29-bit) frame", replace([*where, "extended"], True)),
                    relax(f"use identifier {op.id & 0x7FF:#x}", replace([*where, "id"], op.id & 0x7FF)),
                ],
            )
        )
    # A core_clock request re-divides the bus clocks: the bxCAN kernel clock is then its APB1.
    clock = plan_clocks(plan, target, framework).hz(controller.clock) if controller.clock else controller.clock_hz
    if clock is not None and bit_timing(controller, clock, op.bitrate) is None:
        options = reachable(controller, clock, op.bitrate)[:3]
        found.append(
            violation(
                BITRATE,
                f"{controller.instance} cannot run at {op.bitrate} bit/s from its {clock / 1e6:g} MHz kernel clock"
                f"{f' ({controller.clock} as the plan runs it)' if controller.clock else ''}: "
                f"no prescaler gives a whole number of time quanta with the segments in range and the sample "
                f"point within 5 % (Zephyr can_set_bitrate)",
                [*where, "bitrate"],
                [label, controller.instance],
                [measure("bitrate", op.bitrate, "bit/s"), measure("kernel_clock", clock, "Hz")],
                [relax(f"run at {r} bit/s", replace([*where, "bitrate"], r)) for r in options],
            )
        )
    first = next(
        (i for i, o in enumerate(plan.operations) if isinstance(o, CanOperation) and controller_of(target, o)
         == controller),
        index,
    )  # fmt: skip
    lead = plan.operations[first]
    if first != index and isinstance(lead, CanOperation):
        for field in ("bitrate", "mode"):
            if getattr(lead, field) != getattr(op, field):
                found.append(
                    violation(
                        CONFLICT,
                        f"{label} sets {controller.instance} to {field} {getattr(op, field)}; operations[{first}] "
                        f"already runs it at {getattr(lead, field)}",
                        [*where, field],
                        [label, controller.instance, field],
                        relaxations=[
                            relax(f"use {getattr(lead, field)}", replace([*where, field], getattr(lead, field)))
                        ],
                    )
                )
    return found


def _pins(plan: Plan, target: Target, index: int, op: CanOperation, controller: CanController) -> list[Evidence]:
    """A physical controller needs pins: the board's, or a pin group in the plan's devicetree block."""
    if controller.virtual or controller.board_pins:
        return []
    if plan.devicetree is not None and plan.devicetree.group_of(controller.instance) is not None:
        return []
    taken = {p.pin for p in plan.resources.pins}
    pins: dict[str, str] = {}
    for role in ("tx", "rx"):
        near = pins.get("tx")  # RX on the TX pin's port when it can be: the pair stays on one connector
        free = free_pins(target, taken | set(pins.values()), f"{controller.instance}_{role.upper()}", near=near)
        if free:
            pins[role] = free[0].name
    group = {"peripheral": controller.instance, "pins": pins}
    patch = (
        add(["devicetree", "pinctrl", -1], group)
        if plan.devicetree is not None
        else add(["devicetree"], {"pinctrl": [group]})
    )
    return [
        violation(
            PINS,
            f"the {target.board.name} devicetree routes no pins to {controller.instance} and the plan's devicetree "
            "block gives it no pin group",
            ["operations", index, "controller"],
            [op.name or op.op, controller.instance],
            relaxations=[relax(f"route {controller.instance} TX/RX to {pins.get('tx')}/{pins.get('rx')}", patch)]
            if len(pins) == 2
            else [],
        )
    ]


def available(target: Target) -> bool:
    """The board's devicetree has a CAN controller."""
    return bool(can_controllers(target))


def zephyr_view(b: ZephyrBuilder, index: int, op: CanOperation) -> dict[str, Any]:
    """The controller node, whether this operation starts it (the first on it), and the frame's flags."""
    controller = controller_of(b.target, op)
    if controller is None:  # the obligation refused this plan
        raise b.unsupported(f"operations[{index}].controller", "no CAN controller", [op.controller or ""], [])
    first = next(
        i for i, o in enumerate(b.plan.operations) if isinstance(o, CanOperation) and controller_of(b.target, o)
        == controller
    )  # fmt: skip
    b.app.okay(controller.node)
    b.app.includes.add("zephyr/drivers/can.h")
    b.app.need("can", "CONFIG_CAN", controller.kconfig)
    return {
        "node": controller.node,
        "ctrl": f"{b.ids[first]}_can",
        "starts": first == index,
        "bitrate": op.bitrate,
        # A software controller has no bus timing to set (can_loopback's set_timing ignores it).
        "set_bitrate": not controller.virtual,
        "mode": "CAN_MODE_LOOPBACK" if op.mode == "loopback" else "CAN_MODE_NORMAL",
        "frame_id": op.id,
        "flags": "CAN_FRAME_IDE" if op.extended else "0",
        "id_mask": "CAN_EXT_ID_MASK" if op.extended else "CAN_STD_ID_MASK",
        "timeout_ms": op.timeout_ms,
        "setup": True,
    }
