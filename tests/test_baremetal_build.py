"""The baremetal framework end to end up to the ELF: lower → arm-none-eabi-gcc (-Werror) → verify_elf."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import require_tool

from rac_fw.domains.firmware.backends import get_backend, select_builder
from rac_fw.domains.firmware.backends.base import BuildRequest
from rac_fw.domains.firmware.backends.gcc import GccBuildResult
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import LoweringError, lower, write_artifact
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.placement import placement
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.plan.matrix import realizes
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.plan.registry import specs
from rac_fw.domains.firmware.verify.elf import verify_elf
from rac_fw.resources import data_dir

CORTEX_M = ("stm32f407", "stm32h743", "nrf52840")
#: Examples that must build bare-metal on all three Cortex-M targets (the test fails if one drops out).
PORTABLE = {"uart_hello", "uart_echo", "gpio_blink"}


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh build cache per test, so every build here really runs the compiler."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RAC_FW_CACHE", str(cache))
    return cache


def build_plan(plan: Plan, target_id: str, out: Path) -> GccBuildResult:
    """Lower ``plan`` for ``target_id`` into ``out/src`` and build it into ``out/build``."""
    require_tool("arm-none-eabi-gcc")
    lowered = lower(plan, load_target(target_id), "baremetal")
    write_artifact(lowered, out / "src")
    result = get_backend("gcc").build(BuildRequest(out / "src", target_id, "baremetal", out / "build"))
    assert isinstance(result, GccBuildResult)
    return result


def operation_matrix(target_id: str) -> dict[str, Any]:
    """Every bare-metal operation the target supports, with resources taken from its facts."""
    timer = {"stm32f407": "TIM2", "stm32h743": "TIM2", "nrf52840": "TIMER1"}[target_id]
    timer2 = {"stm32f407": "TIM3", "stm32h743": "TIM3", "nrf52840": "TIMER2"}[target_id]
    analog = {"stm32f407": "PA1", "stm32h743": "PA0", "nrf52840": "P0.03"}[target_id]
    ops: list[dict[str, Any]] = [
        {"op": "gpio_blink", "name": "beat", "led": "led0", "period_ms": 10},
        {"op": "uart_print", "name": "hello", "message": 'he said "hi" at 100% ??= \\ done'},
        {"op": "uart_rx_irq", "name": "rx", "ring_bytes": 48, "echo": True},
        {"op": "timer_periodic", "name": "tick", "period_ms": 5, "source": "systick"},
        {"op": "timer_periodic", "name": "hw_tick", "period_us": 2500, "source": timer},
        {"op": "timer_oneshot", "name": "once", "period_ms": 3, "source": timer2},
        {"op": "adc_read", "name": "vin", "channel": {"pin": analog}},
        {"op": "watchdog", "name": "wdt", "timeout_ms": 1000, "feed_interval_ms": 200},
    ]
    resources: dict[str, Any] = {}
    if realizes("baremetal", "dma_mem2mem", load_target(target_id)):
        resources["buffers"] = [
            {"name": "src", "size_bytes": 100, "role": "dma_mem"},
            {"name": "dst", "size_bytes": 100, "role": "dma_mem"},
        ]
        ops.append({"op": "dma_mem2mem", "name": "copy", "src": "src", "dst": "dst"})
    return {"target": target_id, "framework": "baremetal", "resources": resources, "operations": ops}


def test_every_baremetal_example_builds_for_every_cortex_m_target(tmp_path: Path) -> None:
    supported = {s.kind for s in specs() if s.realization("baremetal") is not None}
    built: dict[str, set[str]] = {}
    for path in sorted(data_dir("examples").glob("*.yaml")):
        plan = load_plan(path)
        if not all(op.op in supported for op in plan.operations):
            continue
        for target_id in CORTEX_M:
            target = load_target(target_id)
            retargeted = plan.model_copy(update={"target": target_id, "framework": "baremetal"})
            if check(retargeted, target, "baremetal"):
                continue  # the obligations reject it for this chip (pin, DMA…): evidence, not a build
            result = build_plan(retargeted, target_id, tmp_path / path.stem / target_id)
            assert result.ok, (path.name, target_id, [e.message for e in result.evidence])
            verification = verify_elf(result.image, target)
            assert verification.ok, (path.name, target_id, [e.message for e in verification.evidence])
            flash = [r for r in result.regions if r.kind == "flash"]
            assert flash and flash[0].used > 1000 and all(r.used <= r.size for r in result.regions)
            built.setdefault(path.stem, set()).add(target_id)
    for name in PORTABLE:
        assert built.get(name) == set(CORTEX_M), f"{name} built only for {built.get(name)}"
    assert {"stm32f407", "stm32h743"} <= built.get("dma_h7_cache", set())


@pytest.mark.parametrize("target_id", CORTEX_M)
def test_operation_matrix_builds_and_verifies(target_id: str, tmp_path: Path) -> None:
    plan = parse_plan(operation_matrix(target_id))
    target = load_target(target_id)
    assert check(plan, target, "baremetal") == []
    result = build_plan(plan, target_id, tmp_path)
    assert result.ok, [e.message for e in result.evidence]
    assert not result.cached
    verification = verify_elf(result.image, target)
    assert verification.ok, [e.message for e in verification.evidence]
    dma_verdicts = [v for v in verification.verdicts if "rac_dma__" in v.predicate]
    assert dma_verdicts, "no DMA buffer was recognised in the ELF"
    main_c = (tmp_path / "src" / "src" / "main.c").read_text()
    # The plan's message reaches C only as an escaped, trigraph-free literal of its exact bytes (the bare-metal
    # runtime writes it character by character: data, not a printf format, so '%' stays single).
    assert r'"he said \"hi\" at 100% ?\?= \\ done"' in main_c
    memory = (tmp_path / "build" / "memory.json").read_text()
    assert '"region"' in memory


def test_dma_buffers_follow_placement_and_cache_line(tmp_path: Path) -> None:
    plan = parse_plan(operation_matrix("stm32h743"))
    result = build_plan(plan, "stm32h743", tmp_path)
    verification = verify_elf(result.image, load_target("stm32h743"))
    aligned = [v for v in verification.verdicts if "32-byte cache lines" in v.predicate]
    assert len(aligned) == 2 and all(v.passed for v in aligned)
    # 100-byte buffers are padded to whole 32-byte lines (128) so maintenance never touches neighbours.
    assert all(v.measured.endswith("128 bytes") for v in aligned)
    regions = placement(plan, load_target("stm32h743"))
    placed = [v for v in verification.verdicts if "lies in a region" in v.predicate]
    assert {v.predicate.split()[0] for v in placed} == {"rac_dma__DMA1__src", "rac_dma__DMA1__dst"}
    assert all(f"({regions['src']})" in str(v.measured) and v.passed for v in placed)
    assert f".dma_{regions['src']} (NOLOAD)" in (tmp_path / "src" / "link.ld").read_text()


def test_cache_hit_skips_the_compiler(tmp_path: Path) -> None:
    plan = parse_plan({"operations": [{"op": "uart_print", "message": "cached"}]})
    first = build_plan(plan, "stm32f407", tmp_path / "a")
    second = build_plan(plan, "stm32f407", tmp_path / "b")
    assert first.ok and second.ok and not first.cached and second.cached
    assert first.cache_key == second.cache_key
    assert second.image.read_bytes() == first.image.read_bytes()
    assert second.log is None  # no compiler run, no log
    changed = build_plan(parse_plan({"operations": [{"op": "uart_print", "message": "changed"}]}), "stm32f407",
                         tmp_path / "c")  # fmt: skip
    assert not changed.cached and changed.cache_key != first.cache_key


def test_lowering_is_deterministic_and_facts_driven() -> None:
    plan = parse_plan(operation_matrix("stm32f407"))
    target = load_target("stm32f407")
    one, two = lower(plan, target, "baremetal"), lower(plan, target, "baremetal")
    assert one.artifact_hash == two.artifact_hash
    main_c = one.files["src/main.c"]
    assert "USART2->BRR = 139U;" in main_c  # 16 MHz APB1 / 115200 (facts), RM0090 Table 136
    assert "RCC->APB1ENR |= RCC_APB1ENR_USART2EN_Msk;" in main_c
    assert "AF7" in main_c  # PA2 USART2_TX from the pin facts
    assert "DMA2->" in main_c and "DMA1->" not in main_c  # memory-to-memory needs DMA2 on the F4
    assert "IWDG->PR = 1U;" in main_c and "IWDG->RLR = 3999U;" in main_c


def test_supports_follows_the_facts() -> None:
    assert realizes("baremetal", "dma_mem2mem", load_target("stm32f407"))
    assert not realizes("baremetal", "dma_mem2mem", load_target("nrf52840"))  # EasyDMA has no m2m
    assert not realizes("baremetal", "uart_print", load_target("esp32s3"))  # not a Cortex-M
    assert not realizes("baremetal", "i2c_transfer", load_target("stm32f407"))
    assert select_builder("auto", "baremetal").name == "gcc"


def test_unrealizable_requests_are_located_evidence() -> None:
    target = load_target("stm32f407")
    sub_ms = {"operations": [{"op": "timer_periodic", "period_us": 1500, "source": "systick"}]}
    with pytest.raises(LoweringError) as raised:
        lower(parse_plan(sub_ms), target, "baremetal")
    (evidence,) = raised.value.evidence
    assert evidence.code == "E_TARGET_UNSUPPORTED" and evidence.location == "operations[0]"
    assert "whole number of ms" in evidence.message and evidence.objects == ["timer_periodic", "stm32f407"]
    twice = {
        "operations": [
            {"op": "timer_periodic", "period_ms": 5, "source": "TIM2"},
            {"op": "timer_oneshot", "period_ms": 5, "source": "TIM2"},
        ]
    }
    with pytest.raises(LoweringError, match="TIM2 is already used by timer_periodic0") as raised:
        lower(parse_plan(twice), target, "baremetal")
    assert raised.value.evidence[0].location == "operations[1]"


def test_extreme_periods_stay_bounded_and_compile(tmp_path: Path) -> None:
    """Day-long timers and hour-long blinks: 32-bit budgets never overflow, the self-test stays short."""
    plan = parse_plan(
        {
            "operations": [
                {"op": "gpio_blink", "name": "slow", "led": "led0", "period_ms": 3_600_000},
                {"op": "timer_periodic", "name": "daily", "period_ms": 86_400_000, "source": "TIM2"},
                {"op": "timer_periodic", "name": "second", "period_ms": 1000, "source": "systick"},
                {"op": "watchdog", "name": "wdt", "timeout_ms": 32_000, "feed_interval_ms": 10_000},
            ]
        }
    )
    result = build_plan(plan, "stm32f407", tmp_path)
    assert result.ok, [e.message for e in result.evidence]
    main_c = (tmp_path / "src" / "src" / "main.c").read_text()
    assert "rac_delay_ms(100U);" in main_c  # the blink self-test does not wait half an hour
    assert 'rac_puts("ok armed source=TIM2 period_us=86400000000");' in main_c
    assert "op2_fired >= 1U" in main_c  # a 1 s period: one awaited fire keeps the test under 2 s


def test_a_console_baud_the_lowering_cannot_set_comes_with_a_relaxation_that_works() -> None:
    """Validation lets 1 Mbaud through (the USART can do it), but the bare-metal console is fixed at the
    board's rate: the refusal names the field and the value that works, and applying it passes."""
    from rac_fw.contract import apply_patch
    from rac_fw.domains.firmware.pipeline import run_plan

    plan = {"target": "stm32f407", "operations": [{"op": "uart_print", "message": "x", "baud": 1_000_000}]}
    refused = run_plan(plan, framework="baremetal")
    assert refused.status.value == "invalid"
    (evidence,) = refused.evidence
    assert evidence.code == "E_TARGET_UNSUPPORTED" and evidence.location == "operations[0]"
    fixed = apply_patch(plan, evidence.relaxations[0].patch)
    assert fixed["operations"][0]["baud"] == 115200
    assert run_plan(fixed, framework="baremetal").status.value == "pass"
