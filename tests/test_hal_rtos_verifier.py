"""The static verifier knows CMSIS-RTOS2 on the STM32 HAL: one bad source per new rule.

Each file ``tests/bad_sources/hal/rtos/<name>.c`` is ``good.c`` with one line changed and a
``/* expect: E_CODE */`` marker where the evidence must point; nothing else may fire, and ``good.c`` is
clean. The facts are ``verify/sdk/hal/api.d/rtos.json`` (every function of CMSIS_6 ``cmsis_os2.h``),
``headers.d/rtos.json`` (its types), and the judgements ``rules.d/rtos.yaml`` (kernel initialized before
any object is created, threads created before the kernel starts, no waiting or mutex in an ISR, every
id and status tested), shared by every HAL family's catalog.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rac_fw.domains.firmware.verify import sdk
from rac_fw.domains.firmware.verify.artifact import verify_sources

SOURCES = Path(__file__).resolve().parent / "bad_sources" / "hal"
BAD = sorted(p.stem for p in (SOURCES / "rtos").glob("*.c") if p.stem != "good")


def _files(name: str) -> dict[str, str]:
    support = SOURCES / "support"
    return {
        "Src/main.c": (SOURCES / "rtos" / f"{name}.c").read_text(),
        "Inc/stm32h7xx_hal_conf.h": (support / "stm32h7xx_hal_conf.h").read_text(),
        "Src/stm32h7xx_hal_msp.c": (support / "stm32h7xx_hal_msp.c").read_text(),
    }


@pytest.mark.parametrize("name", BAD)
def test_each_rtos_defect_is_caught_at_its_line(name: str) -> None:
    files = _files(name)
    lines = files["Src/main.c"].splitlines()
    code, line = next((m.group(1), i + 1) for i, t in enumerate(lines) if (m := re.search(r"expect: (E_\w+)", t)))
    result = verify_sources(files, "hal", None)
    assert {e.code for e in result.evidence} == {code}, [(e.code, e.location, e.message) for e in result.evidence]
    assert any(e.location and e.location.startswith(f"Src/main.c:{line}") for e in result.evidence)


def test_the_good_source_is_clean() -> None:
    result = verify_sources(_files("good"), "hal", None)
    assert [(e.code, e.location, e.message) for e in result.evidence] == []


def test_every_rule_has_its_bad_source() -> None:
    assert set(BAD) == {"create_before_init", "start_before_threads", "isr_wait", "isr_delay", "isr_mutex",
                        "unchecked_new", "v1_api"}  # fmt: skip


def test_both_hal_families_share_the_harvested_rtos_catalog() -> None:
    """The CMSIS-RTOS2 fragment joins every HAL variant's catalog, with the header's real signatures."""
    for variant in sdk.catalog_variants("hal"):
        catalog = sdk.catalog("hal", variant)
        entry = catalog.get("osMessageQueuePut")
        assert entry is not None and entry.header == "cmsis_os2.h"
        assert entry.params == (
            "osMessageQueueId_t mq_id",
            "const void *msg_ptr",
            "uint8_t msg_prio",
            "uint32_t timeout",
        )
        assert "osThreadCreate" not in catalog  # CMSIS-RTOS v1: not in cmsis_os2.h
        assert any(s.get("repository") == "ARM-software/CMSIS_6" for s in catalog.sources if isinstance(s, dict))
