"""The core's cycle counter (Arm DWT CYCCNT), as data keyed by the core the chip pack names.

A cycle counter is a property of the core architecture, not of the chip's peripherals (the SVD does not
describe it; ``templates/baremetal/armv7m.h`` ships the other ARMv7-M system registers for the same
reason), so the facts live in ``cycle_counters.yaml`` beside this module, keyed by ``Target.core.arch``,
with the manuals cited there. A core without an entry has no cycle counter a plan may use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from pydantic import ConfigDict, TypeAdapter, with_config

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target


@with_config(ConfigDict(extra="forbid"))
@dataclass(frozen=True)
class CycleCounter:
    """A free-running counter of core clock cycles and the registers that start it."""

    unit: str
    """The debug unit holding it (``DWT``)."""
    ctrl: int
    """Address of the unit's control register (DWT_CTRL)."""
    counter: int
    """Address of the counter (DWT_CYCCNT)."""
    demcr: int
    """Address of the Debug Exception and Monitor Control Register, whose TRCENA bit powers the unit."""
    trcena_bit: int
    """DEMCR bit that enables the DWT (and ITM)."""
    enable_bit: int
    """Control-register bit that starts the counter (CYCCNTENA)."""
    absent_bit: int
    """Control-register bit that reads 1 when the implementation has no cycle counter (NOCYCCNT)."""
    bits: int
    """Counter width: it wraps after 2^bits cycles."""


@cache
def _table() -> dict[str, CycleCounter]:
    raw = yaml.safe_load(Path(__file__).with_name("cycle_counters.yaml").read_text(encoding="utf-8"))
    adapter = TypeAdapter(CycleCounter)
    return {arch: adapter.validate_python(entry) for arch, entry in raw.items()}


def cycle_counter(target: Target) -> CycleCounter | None:
    """The cycle counter of the target's core, None when the core has none."""
    return _table().get(target.core.arch)
