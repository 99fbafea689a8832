"""Persist a record in the application's flash storage area (erase-then-program)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation


class FlashStore(Operation):
    """Program ``size_bytes`` at ``offset_bytes`` inside the storage area the tool reserves in flash.

    ``offset_bytes`` is relative to that area (not an address). Both must be multiples of the flash
    program unit, and an erase covers whole pages/sectors (E_FLASH_ALIGNMENT).
    """

    op: Literal["flash_store"]
    size_bytes: int = Field(ge=1, le=65_536, description="Record length in bytes.")
    offset_bytes: int = Field(default=0, ge=0, le=1 << 20, description="Offset inside the storage area.")
    erase: bool = Field(default=True, description="Erase the page(s) covering the record first.")
