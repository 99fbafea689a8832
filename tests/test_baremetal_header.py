"""The generated device header compiles, and offsetof/base/field macros equal the SVD facts."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import require_tool

from rac_fw.domains.firmware.facts.load import load_target, peripheral
from rac_fw.domains.firmware.lower.baremetal.header import SCS_END, SCS_START, c_ident, device_header
from rac_fw.resources import data_dir

#: Layouts sampled per target (every register of each, so gaps, unions and arrays are all covered).
SAMPLES = {
    "stm32f407": ["USART1", "GPIOA", "RCC", "ADC1", "DMA2", "TIM2", "IWDG"],
    "stm32h743": ["USART1", "GPIOA", "RCC", "ADC3", "DMA1", "TIM2", "IWDG"],
    "nrf52840": ["UARTE0", "P0", "SAADC", "TIMER0", "WDT", "CLOCK"],
}
_ARRAY = re.compile(r"^(\w+)\[(\d+)\]$")


def _asserts(target_id: str) -> list[str]:
    lines: list[str] = []
    target = load_target(target_id)
    for name in SAMPLES[target_id]:
        layout = peripheral(target_id, name)
        assert layout.registers, f"{name} has no registers in the facts"
        for reg in layout.registers:
            match = _ARRAY.match(reg.name)
            member = f"{c_ident(match[1])}[{match[2]}]" if match else c_ident(reg.name)
            lines.append(f'_Static_assert(offsetof({name}_Type, {member}) == {reg.offset}U, "{name}.{reg.name}");')
            if reg.fields and not match:
                fld = reg.fields[-1]
                mask = ((1 << fld.width) - 1) << fld.lsb
                lines.append(
                    f"_Static_assert({name}_{c_ident(reg.name)}_{c_ident(fld.name)}_Msk == {mask}UL, "
                    f'"{name}.{reg.name}.{fld.name}");'
                )
    for inst in [p for p in target.peripherals.values() if not SCS_START <= p.base < SCS_END][:60]:
        lines.append(f'_Static_assert({c_ident(inst.name)}_BASE == {inst.base}UL, "{inst.name} base");')
    return lines


@pytest.mark.parametrize("target_id", sorted(SAMPLES))
def test_header_offsets_match_svd_facts(target_id: str, tmp_path: Path) -> None:
    gcc = require_tool("arm-none-eabi-gcc")
    (tmp_path / "device.h").write_text(device_header(load_target(target_id)))
    (tmp_path / "armv7m.h").write_text((data_dir("templates") / "baremetal" / "armv7m.h").read_text())
    checks = _asserts(target_id)
    source = tmp_path / "check.c"
    source.write_text(
        '#include <stddef.h>\n#include "armv7m.h"\n#include "device.h"\n'
        + "\n".join(checks)
        + '\n_Static_assert(offsetof(SCB_Type, CPACR) == 0x88U, "CPACR");\n'
        + '_Static_assert(offsetof(NVIC_Type, IPR) == 0x300U, "NVIC IPR");\n'
        + "int rac_irq_count(void) { return (int)RAC_IRQ_COUNT; }\n"
    )
    proc = subprocess.run(
        [gcc, "-mcpu=cortex-m4", "-mthumb", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-c", str(source),
         "-o", str(tmp_path / "check.o")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(checks) > 100


def test_header_irq_enum_and_unions() -> None:
    header = device_header(load_target("stm32f407"))
    assert "    USART2_IRQn = 38," in header
    assert "DMA2_Stream0_IRQn = 56," in header
    # Timer capture/compare input and output views share an offset: an anonymous union.
    union = r"union \{ /\* 0x018 \*/\n\s+volatile uint32_t CCMR1_Input;\n\s+volatile uint32_t CCMR1_Output;"
    assert re.search(union, header)
    nrf = device_header(load_target("nrf52840"))
    assert "volatile uint32_t PIN_CNF[32]; /* 0x700 */" in nrf
    # Core peripherals come from armv7m.h, never from the SVD (no duplicate SCB/NVIC definitions).
    assert "#define SCB " not in header and "#define NVIC " not in header
