"""``cycle_timing``: the core's cycle counter (bare metal: DWT from the core facts; Zephyr: its timing API),
never trusted blindly.

The counter's registers come from ``facts/cycle_counters.yaml`` (DWT on Cortex-M3/M4/M7); cores without
one are not offered the realization. The wrap obligation is seeded with its relaxation validated. The
generated source builds with -Wall -Wextra -Werror for each Cortex-M target, and under QEMU 7.2
(netduinoplus2), which does not model the DWT, the firmware's self-check reports the counter as not
counting instead of printing a time.
"""

from __future__ import annotations

from pathlib import Path

from conftest import require_tool
from seeded_kernel import seeded

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.timing import cycle_counter
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.domains.firmware.plan.matrix import frameworks_for
from rac_fw.resources import data_dir

EXAMPLE = data_dir("examples") / "timing_cycles.yaml"
TIMING = {"op": "cycle_timing", "name": "t", "iterations": 10, "samples": 4}


def test_the_counter_is_a_core_fact() -> None:
    f407 = cycle_counter(load_target("stm32f407"))
    assert f407 is not None and (f407.ctrl, f407.counter, f407.demcr) == (0xE0001000, 0xE0001004, 0xE000EDFC)
    assert cycle_counter(load_target("esp32s3")) is None
    assert set(frameworks_for("cycle_timing", load_target("stm32h743"))) == {"zephyr", "baremetal"}
    assert frameworks_for("cycle_timing", load_target("esp32s3")) == []


def test_a_deadline_beyond_one_wrap_is_refused_and_the_longest_that_fits_validates() -> None:
    # 2^32 cycles at nRF52840's 64 MHz: 67 108 864 µs.
    plan = {"target": "nrf52840", "framework": "baremetal", "operations": [{**TIMING, "deadline_us": 70_000_000}]}
    evidence, broken = seeded(plan, "E_CYCLE_COUNTER_WRAP")
    assert {"t", "DWT"} <= set(evidence.objects) and broken == []
    assert {(m.name, m.value) for m in evidence.magnitudes} == {("deadline", 70_000_000), ("wrap", 67_108_864)}


def test_every_cortex_m_build_is_warning_free(tmp_path: Path) -> None:
    require_tool("arm-none-eabi-gcc")
    for target in ("stm32f407", "stm32h743", "nrf52840"):
        result = run_plan(EXAMPLE, target=target, framework="baremetal", out_dir=tmp_path / target, build="gcc")
        assert result.status is Status.PASS, (target, [(e.code, e.message[:300]) for e in result.evidence])
        main = (tmp_path / target / "src" / "main.c").read_text()
        assert "(*(volatile uint32_t *)0xE0001004UL)" in main and "|= 1UL << 24; /* TRCENA" in main
        assert "FAIL cycle counter does not count" in main


def test_qemu_does_not_model_the_dwt_and_the_firmware_says_so(tmp_path: Path) -> None:
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    result = run_plan(EXAMPLE, out_dir=tmp_path, build="gcc", run="qemu")
    assert result.status is not Status.PASS
    console = (tmp_path / "console.log").read_text()
    assert "rac: boot stm32f407" in console
    assert "rac: loop_1000 FAIL cycle counter does not count" in console
    assert "min_cycles=" not in console


def test_zephyr_times_with_the_timing_api_and_enables_it() -> None:
    files = lower(load_plan(EXAMPLE), load_target("stm32f407"), "zephyr").files
    main = files["src/main.c"]
    assert "CONFIG_TIMING_FUNCTIONS=y" in files["prj.conf"].splitlines()
    step = main[main.index("static int app_loop_1000_step(void)") :]
    step = step[: step.index("\n}\n")]
    order = [step.index(s) for s in ("timing_init();", "timing_start();", "timing_counter_get();", "timing_stop();")]
    assert order == sorted(order)
    assert "timing_cycles_get(&start, &end)" in step and "return -ENOTSUP;" in step
    assert "timing_cycles_to_ns(cycles) > 2000000ULL" in step
