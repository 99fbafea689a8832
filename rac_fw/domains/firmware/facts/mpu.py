"""The MPU's region rules, as data keyed by the core the chip pack names (``mpu.yaml``).

Region granularity is a property of the core's protected-memory architecture (PMSAv7 on Cortex-M3/M4/M7:
power-of-two regions of at least 32 bytes, aligned to their size), not of the chip's peripherals, so it
lives beside the cycle-counter facts rather than in every chip pack; ``Target.core.mpu`` says whether the
chip has the MPU at all.
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
class MpuRegions:
    """How an MPU region may be sized and placed."""

    architecture: str
    """The protected-memory architecture (``PMSAv7``)."""
    min_region_bytes: int
    """Smallest region the MPU can describe."""
    power_of_two: bool
    """Regions are a power of two in size and aligned to their size (so a partition rounds up)."""

    def region_bytes(self, wanted: int) -> int:
        """The region that holds ``wanted`` bytes."""
        size = max(wanted, self.min_region_bytes)
        return 1 << (size - 1).bit_length() if self.power_of_two else size


@cache
def _table() -> dict[str, MpuRegions]:
    raw = yaml.safe_load(Path(__file__).with_name("mpu.yaml").read_text(encoding="utf-8"))
    adapter = TypeAdapter(MpuRegions)
    return {arch: adapter.validate_python(entry) for arch, entry in raw.items()}


def mpu_regions(target: Target) -> MpuRegions | None:
    """The MPU region rules of the target's core, None without an MPU (or without facts for its core)."""
    return _table().get(target.core.arch) if target.core.mpu else None
