"""Named resources a plan declares once and operations refer to by name."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from rac_fw.domains.firmware.plan.base import PlanModel
from rac_fw.domains.firmware.plan.fields import FactName, Name, PeripheralName, PinName, SignalName


class Buffer(PlanModel):
    """A statically allocated RAM buffer. DMA buffers are placed by ``placement``."""

    name: Name
    size_bytes: int = Field(ge=1, le=1 << 20, description="Buffer length in bytes.")
    role: Literal["dma_rx", "dma_tx", "dma_mem", "scratch"] = Field(
        description="dma_rx: a peripheral writes it by DMA; dma_tx: DMA reads it to a peripheral; "
        "dma_mem: source/destination of a memory-to-memory DMA copy; scratch: CPU-only."
    )
    dma: FactName | None = Field(
        default=None,
        description="DMA controller (e.g. DMA1, BDMA, GDMA) or bus master that accesses the buffer; "
        "omitted = the controller chosen by the operation that uses it.",
    )
    element_bytes: Literal[1, 2, 4] = Field(
        default=1, description="Size of one DMA item (ADC samples are 2); transfer count = size/element."
    )
    placement: FactName | None = Field(
        default=None,
        description="Memory region to pin the buffer to (e.g. SRAM1); omitted = the tool decides.",
    )


class PinUse(PlanModel):
    """A pin the plan claims, with the signal it must carry."""

    name: Name
    pin: PinName
    function: SignalName = Field(
        default="GPIO",
        description="Signal the pin carries: GPIO, or a peripheral signal such as USART2_TX, SPI1_SCK, "
        "TIM1_CH1, ADC1_IN3 (the tool derives the alternate function / mux setting).",
    )


class Device(PlanModel):
    """An external chip on a bus: I2C (7-bit device address) or SPI (chip-select pin)."""

    name: Name
    bus: Literal["i2c", "spi"]
    controller: PeripheralName = Field(description="Bus controller instance, e.g. I2C1, SPI2, TWIM0.")
    address: int | None = Field(
        default=None, ge=0, le=0x7F, description="7-bit I2C device address on the bus (I2C only)."
    )
    chip_select: PinName | None = Field(default=None, description="Chip-select GPIO (SPI only).")
    frequency_hz: int = Field(default=100_000, ge=1_000, le=50_000_000, description="Bus clock for this device in Hz.")

    @model_validator(mode="after")
    def _bus_fields(self) -> Device:
        if self.bus == "i2c" and (self.address is None or self.chip_select is not None):
            raise ValueError("an i2c device needs 'address' (7-bit) and no 'chip_select'")
        if self.bus == "spi" and (self.chip_select is None or self.address is not None):
            raise ValueError("an spi device needs 'chip_select' and no 'address'")
        return self


class Thread(PlanModel):
    """An application thread/task with its scheduling priority and stack."""

    name: Name
    priority: int = Field(
        ge=-16,
        le=31,
        description="Priority in the framework's numbering (Zephyr: lower = more urgent, negative = "
        "cooperative; FreeRTOS/ESP-IDF: higher = more urgent).",
    )
    stack_bytes: int = Field(ge=128, le=1 << 18, description="Stack size in bytes.")


class Resources(PlanModel):
    """Everything operations may refer to by name."""

    buffers: list[Buffer] = Field(default_factory=list, max_length=32)
    pins: list[PinUse] = Field(default_factory=list, max_length=64)
    devices: list[Device] = Field(default_factory=list, max_length=16)
    threads: list[Thread] = Field(default_factory=list, max_length=16)
