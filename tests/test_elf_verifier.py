"""Deliberately broken artifacts are caught by the linker or the independent ELF verifier.

Each test lowers a correct plan, breaks the generated tree the way a buggy realizer (or a hand edit)
would, builds it with the real toolchain and checks that the failure names the right objects.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import require_tool

from rac_fw.domains.firmware.backends.base import BuildRequest
from rac_fw.domains.firmware.backends.gcc import GccBuilder, GccBuildResult
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower, write_artifact
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.verify.elf import verify_elf

DMA_PLAN = {
    "resources": {
        "buffers": [
            {"name": "src", "size_bytes": 64, "role": "dma_mem"},
            {"name": "dst", "size_bytes": 64, "role": "dma_mem"},
        ]
    },
    "operations": [{"op": "dma_mem2mem", "name": "copy", "src": "src", "dst": "dst"}],
}


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAC_FW_CACHE", str(tmp_path / "cache"))


def build_broken(target_id: str, tmp_path: Path, edit: dict[str, tuple[str, str]], plan: dict | None = None,
                 ) -> GccBuildResult:  # fmt: skip
    """Lower ``plan`` (default: the DMA copy), apply ``file: (old regex, new)`` edits, build."""
    require_tool("arm-none-eabi-gcc")
    lowered = lower(parse_plan(plan or DMA_PLAN), load_target(target_id), "baremetal")
    src = tmp_path / "src"
    write_artifact(lowered, src)
    for name, (pattern, replacement) in edit.items():
        path = src / name
        text, count = re.subn(pattern, replacement, path.read_text(), count=1, flags=re.S)
        assert count == 1, f"edit {pattern!r} did not apply to {name}"
        path.write_text(text)
    return GccBuilder().build(BuildRequest(src, target_id, "baremetal", tmp_path / "build"))


def test_correct_artifact_passes(tmp_path: Path) -> None:
    result = build_broken("stm32f407", tmp_path, {})
    verification = verify_elf(result.image, load_target("stm32f407"))
    assert verification.ok
    boot = [v for v in verification.verdicts if "boot address" in v.predicate or "reset vector" in v.predicate]
    assert len(boot) == 2 and all(v.passed for v in boot)


def test_dma_buffer_moved_to_ccm_on_f407(tmp_path: Path) -> None:
    result = build_broken("stm32f407", tmp_path, {"link.ld": (r"(\.dma_SRAM1 \(NOLOAD\).*?\}) > SRAM1", r"\1 > CCM")})
    assert result.ok  # the linker is happy: only the verifier knows DMA2 cannot reach CCM
    verification = verify_elf(result.image, load_target("stm32f407"))
    assert not verification.ok
    unreachable = [e for e in verification.evidence if e.code == "E_ELF_DMA_UNREACHABLE"]
    assert {e.objects[0] for e in unreachable} == {"rac_dma__DMA2__src", "rac_dma__DMA2__dst"}
    evidence = unreachable[0]
    assert evidence.objects[2:] == ["DMA2", "CCM"]
    assert re.search(r"at 0x1000[0-9a-f]{4} \(64 bytes\) lies in CCM", evidence.message)
    assert "reachable: FLASH, SRAM1, SRAM2" in evidence.message
    assert {r.description for r in evidence.relaxations} >= {
        f"place {evidence.objects[1]} in SRAM1 (resources.buffers placement)"
    }


def test_dma_buffer_moved_to_dtcm_on_h743(tmp_path: Path) -> None:
    result = build_broken(
        "stm32h743", tmp_path, {"link.ld": (r"(\.dma_AXI_SRAM \(NOLOAD\).*?\}) > AXI_SRAM", r"\1 > DTCM")}
    )
    assert result.ok
    verification = verify_elf(result.image, load_target("stm32h743"))
    unreachable = [e for e in verification.evidence if e.code == "E_ELF_DMA_UNREACHABLE"]
    assert len(unreachable) == 2
    assert all(e.objects[2:] == ["DMA1", "DTCM"] and "0x2000" in e.message for e in unreachable)
    assert "reachable: FLASH, AXI_SRAM, SRAM1, SRAM2, SRAM3, SRAM4" in unreachable[0].message


def test_dma_buffer_off_the_cache_line_on_h743(tmp_path: Path) -> None:
    result = build_broken(
        "stm32h743", tmp_path, {"link.ld": (r"\. = ALIGN\(32\);\n(\s+KEEP)", r". = ALIGN(32) + 8;\n\1")}
    )
    verification = verify_elf(result.image, load_target("stm32h743"))
    (misaligned,) = [e for e in verification.evidence if e.code == "E_ELF_DMA_ALIGNMENT"]
    assert misaligned.magnitudes[0].value == 8 and "32-byte D-cache lines" in misaligned.message


def test_misnamed_section_is_an_orphan_link_error(tmp_path: Path) -> None:
    result = build_broken(
        "stm32f407",
        tmp_path,
        # The DMA source buffer, referenced by the copy, put in a section no linker rule names.
        {"src/main.c": (r"static volatile uint8_t rac_dma__DMA2__src",
                        '__attribute__((section(".dma.sram1.src"))) static volatile uint8_t rac_dma__DMA2__src')},
    )  # fmt: skip
    assert not result.ok and result.image is None
    (orphan,) = [e for e in result.evidence if e.code == "E_ORPHAN_SECTION"]
    assert orphan.objects[0] == ".dma.sram1.src"
    assert "--orphan-handling=error" in orphan.message


def test_overfull_region_is_a_link_error(tmp_path: Path) -> None:
    plan = {"stack_bytes": 1 << 17, "operations": [{"op": "uart_print", "message": "too big"}]}
    result = build_broken("stm32f407", tmp_path, {}, plan=plan)
    assert not result.ok
    (overflow,) = [e for e in result.evidence if e.code == "E_REGION_OVERFLOW"]
    assert overflow.objects == ["SRAM1"]
    assert overflow.magnitudes[0].unit == "bytes" and overflow.magnitudes[0].value > (1 << 17) - 0x1C000


def test_vector_table_not_at_boot_address(tmp_path: Path) -> None:
    result = build_broken("stm32f407", tmp_path, {"link.ld": (r"\.isr_vector 0x08000000", ".isr_vector 0x08004000")})
    verification = verify_elf(result.image, load_target("stm32f407"))
    codes = {e.code for e in verification.evidence}
    assert {"E_ELF_VECTOR_TABLE", "E_ELF_RESET_VECTOR"} <= codes
    assert any("0x08000000" in e.message for e in verification.evidence)


def test_section_outside_every_region(tmp_path: Path) -> None:
    result = build_broken(
        "stm32f407",
        tmp_path,
        {
            "link.ld": (r"  \.heap \(NOLOAD\) :",
                        "  .rogue 0x60000000 (NOLOAD) : { KEEP(*(.rogue)) }\n  .heap (NOLOAD) :"),
            "src/main.c": (r'#include "rac.h"\n',
                           '#include "rac.h"\n'
                           '__attribute__((section(".rogue"), used)) static unsigned char rogue[16];\n'),
        },
    )  # fmt: skip
    assert result.ok, [e.message for e in result.evidence]
    verification = verify_elf(result.image, load_target("stm32f407"))
    (outside,) = [e for e in verification.evidence if e.code == "E_ELF_SECTION_OUTSIDE_REGION"]
    assert outside.objects == [".rogue", "no region"] and "0x60000000" in outside.message
