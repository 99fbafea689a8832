"""CAN controllers of a board and the bit timing their Zephyr drivers can reach (``can.yaml``).

A bitrate is only settable when Zephyr's own calculation finds a timing for it: the controller's kernel
clock must divide into a whole number of time quanta per bit for some prescaler, with TSEG1 and TSEG2
inside the driver's limits and the sample point within 50 ‰ of the one Zephyr picks for that bitrate
(``can_set_bitrate`` → ``can_calc_timing``, drivers/can/can_common.c: 75 % above 800 kbit/s, 80 % above
500 kbit/s, else 87.5 %). :func:`bit_timing` repeats that calculation on the facts, so a plan whose
bitrate the driver would refuse with ``-ERANGE``/``-EINVAL`` at run time is refused before lowering.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target

#: Zephyr's CONFIG_CAN_SAMPLE_POINT_MARGIN default (permille) that can_set_bitrate accepts.
SAMPLE_POINT_MARGIN = 50
SYNC_SEG = 1


@dataclass(frozen=True)
class CanController:
    """One CAN controller node of the board devicetree and its driver's nominal timing limits."""

    instance: str
    """The chip's peripheral name (``CAN2``, ``FDCAN1``); pins carry ``<instance>_TX``/``_RX``."""
    node: str
    compatible: str
    tseg1: tuple[int, int]
    """prop_seg + phase_seg1 range, in time quanta."""
    tseg2: tuple[int, int]
    """phase_seg2 range, in time quanta."""
    prescaler: tuple[int, int]
    max_bitrate: int
    """Highest nominal bitrate the driver accepts (bit/s)."""
    kconfig: str
    clock: str | None = None
    """The chip clock domain feeding it (``APB1``: ask ``plan.clocks.plan_clocks``), or None when
    ``clock_hz`` states it."""
    clock_hz: int | None = None
    board_pins: dict[str, str] = field(default_factory=dict, hash=False)
    """Role → pin the board DTS routes to the controller (empty: the plan must give a pin group)."""
    virtual: bool = False
    """A software controller (native_sim loopback): frames loop back in memory, there is no bus timing."""


@cache
def _table() -> dict[str, tuple[CanController, ...]]:
    raw: dict[str, list[dict[str, Any]]] = yaml.safe_load(
        Path(__file__).with_name("can.yaml").read_text(encoding="utf-8")
    )
    return {board: tuple(_controller(entry) for entry in rows) for board, rows in raw.items()}


def _controller(entry: dict[str, Any]) -> CanController:
    ranges = {k: tuple(v) for k, v in entry.items() if isinstance(v, list)}
    return CanController(**(entry | ranges))


def can_controllers(target: Target) -> tuple[CanController, ...]:
    """The CAN controllers the board's devicetree defines, in the data file's order."""
    return _table().get(target.id, ())


def can_controller(target: Target, name: str) -> CanController | None:
    """The controller a plan names by instance (``CAN2``) or node label (``can2``)."""
    key = name.lower()
    return next((c for c in can_controllers(target) if key in (c.instance.lower(), c.node)), None)


def sample_point(bitrate: int) -> int:
    """The sample point (permille) Zephyr's can_set_bitrate aims at for ``bitrate``."""
    return 750 if bitrate > 800_000 else 800 if bitrate > 500_000 else 875


@dataclass(frozen=True)
class BitTiming:
    """A timing Zephyr's calculation would choose: prescaler and segments in time quanta."""

    prescaler: int
    tseg1: int
    tseg2: int
    sample_point: int
    """Achieved sample point, permille."""
    error: int
    """Distance from the aimed sample point, permille."""

    @property
    def quanta(self) -> int:
        return SYNC_SEG + self.tseg1 + self.tseg2


def _segments(ts: int, sp: int, c: CanController) -> tuple[int, int] | None:
    """update_sampling_pnt: TSEG2 from the sample point, clamped, TSEG1 the rest (None: no fit)."""
    ts2 = min(max(ts - (ts * sp) // 1000, c.tseg2[0]), c.tseg2[1])
    ts1 = ts - SYNC_SEG - ts2
    if ts1 > c.tseg1[1]:
        ts1 = c.tseg1[1]
        ts2 = ts - SYNC_SEG - ts1
        if ts2 > c.tseg2[1]:
            return None
    elif ts1 < c.tseg1[0]:
        ts1 = c.tseg1[0]
        ts2 = ts - ts1
        if ts2 < c.tseg2[0]:
            return None
    return ts1, ts2


def bit_timing(controller: CanController, clock: int, bitrate: int) -> BitTiming | None:
    """The timing can_calc_timing finds for ``bitrate`` from a ``clock`` Hz kernel clock, or None when the
    driver would refuse the bitrate (no whole number of quanta, segments out of range, sample point off)."""
    if bitrate <= 0 or bitrate > controller.max_bitrate:
        return None
    sp = sample_point(bitrate)
    ts_max = SYNC_SEG + controller.tseg1[1] + controller.tseg2[1]
    best: BitTiming | None = None
    for prescaler in range(max(clock // (ts_max * bitrate), 1), controller.prescaler[1] + 1):
        if prescaler < controller.prescaler[0] or clock % (prescaler * bitrate):
            continue
        ts = clock // (prescaler * bitrate)
        segments = _segments(ts, sp, controller)
        if segments is None:
            continue
        achieved = (SYNC_SEG + segments[0]) * 1000 // ts
        error = abs(achieved - sp)
        if best is None or error < best.error:
            best = BitTiming(prescaler, segments[0], segments[1], achieved, error)
        if error == 0:
            break
    return best if best is not None and best.error <= SAMPLE_POINT_MARGIN else None


#: Bitrates CAN networks use (CiA 102 / CiA 301 table of standard rates), offered as relaxations.
STANDARD_BITRATES = (10_000, 20_000, 50_000, 100_000, 125_000, 250_000, 500_000, 800_000, 1_000_000)


def reachable_bitrates(controller: CanController, clock: int, near: int) -> list[int]:
    """The standard bitrates the controller reaches from ``clock``, nearest to ``near`` first."""
    reach = [r for r in STANDARD_BITRATES if bit_timing(controller, clock, r) is not None]
    return sorted(reach, key=lambda r: abs(r - near))
