"""Named resources a plan declares once and operations refer to by name."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

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


class I2cDevice(PlanModel):
    """An external chip on an I2C bus, answering at a 7-bit device address."""

    name: Name
    bus: Literal["i2c"]
    controller: PeripheralName = Field(description="Bus controller instance, e.g. I2C1, TWIM0.")
    address: int = Field(ge=0, le=0x7F, description="7-bit I2C device address on the bus.")
    frequency_hz: int = Field(default=100_000, ge=1_000, le=50_000_000, description="Bus clock for this device in Hz.")

    @property
    def chip_select(self) -> None:
        """An I2C device is selected by its address: it has no chip-select pin."""
        return None


class SpiDevice(PlanModel):
    """An external chip on an SPI bus, selected by its chip-select pin."""

    name: Name
    bus: Literal["spi"]
    controller: PeripheralName = Field(description="Bus controller instance, e.g. SPI2, SPIM1.")
    chip_select: PinName = Field(description="Chip-select GPIO (driven low to select the device).")
    frequency_hz: int = Field(default=100_000, ge=1_000, le=50_000_000, description="Bus clock for this device in Hz.")

    @property
    def address(self) -> None:
        """An SPI device is selected by its chip-select pin: it has no bus address."""
        return None


#: An external chip on a bus; the schema says per bus what it needs (I2C: ``address``, SPI: ``chip_select``).
Device = Annotated[I2cDevice | SpiDevice, Field(discriminator="bus")]


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


class Key(PlanModel):
    """A secret key, named here and referred to by name: its material is created on the device (inside
    the crypto service where the framework has one) and never appears in the plan or the generated C."""

    name: Name
    type: Literal["aes", "hmac", "derive"] = Field(
        description="aes: block-cipher key; hmac: message-authentication key; derive: HKDF input key material."
    )
    bits: int = Field(ge=8, le=4096, description="Key length in bits (AES: 128/192/256; HMAC-SHA-256: 256-512).")
    usage: list[Literal["encrypt", "decrypt", "sign", "verify", "derive"]] = Field(
        min_length=1, max_length=5, description="What the key may be used for (its policy); anything else is refused."
    )


class Resources(PlanModel):
    """Everything operations may refer to by name."""

    buffers: list[Buffer] = Field(default_factory=list, max_length=32)
    pins: list[PinUse] = Field(default_factory=list, max_length=64)
    devices: list[Device] = Field(default_factory=list, max_length=16)
    threads: list[Thread] = Field(default_factory=list, max_length=16)
    keys: list[Key] = Field(default_factory=list, max_length=8)
