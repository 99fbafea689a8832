"""Constrained scalar types shared by every plan model: identifiers, pin and peripheral names, text.

The patterns are deliberately narrow: an identifier can become a C symbol, a devicetree label or a
Kconfig fragment after lowering, so nothing outside these alphabets may enter the plan.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

#: A plan-local name (buffer, pin role, device, thread, lock, operation): a lowercase C identifier.
Name = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}$"),
    Field(description="Plan-local identifier: lowercase letter, then lowercase letters, digits, '_'; ≤ 32."),
]

#: A physical pin in the target's own naming: ``PA9`` (STM32), ``P0.13`` (nRF), ``GPIO4`` (ESP32).
PinName = Annotated[
    str,
    StringConstraints(pattern=r"^(P[A-K](1[0-5]|[0-9])(_C)?|P[01]\.[0-3][0-9]|GPIO[0-9]{1,2})$"),
    Field(
        description="Pin in the target's naming: PA9 / PK15 (STM32; PC2_C is an STM32H7 analog-switch pad), "
        "P0.13 (nRF52), GPIO4 (ESP32)."
    ),
]

#: A peripheral instance as the chip's SVD names it: ``USART2``, ``ADC1``, ``TIM3``, ``TWIM0``.
PeripheralName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{1,15}$"),
    Field(description="Peripheral instance as named in the chip's SVD, e.g. USART2, ADC1, TIM3, SPIM1."),
]

#: A pin signal: ``USART1_TX``, ``TIM1_CH1``, ``ADC1_IN3``, ``GPIO``.
SignalName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{1,31}$"),
    Field(description="Signal a pin carries, e.g. USART1_TX, SPI1_SCK, TIM1_CH1, ADC1_IN3, or GPIO."),
]

#: A memory region or bus master as the target facts name them (``SRAM1``, ``DTCM``, ``dma1``).
FactName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,31}$"),
    Field(description="A name taken from the target facts (memory region, DMA controller, bus master)."),
]

#: A short printable-ASCII text (message to print). Escaped by the escaping layer (``plan.escape``) when emitted.
Message = Annotated[
    str,
    StringConstraints(pattern=r"^[\x20-\x7e]{1,120}$"),
    Field(description="Printable ASCII text, 1-120 characters; emitted into C only as an escaped literal."),
]

#: Interrupt priority in the framework's own numbering (0 = most urgent on Cortex-M).
IrqPriority = Annotated[
    int,
    Field(
        ge=0,
        le=15,
        description="Interrupt priority as the framework numbers it (Cortex-M: 0 most urgent; ESP-IDF: "
        "interrupt level 1-3). Checked against the RTOS syscall / zero-latency threshold.",
    ),
]
