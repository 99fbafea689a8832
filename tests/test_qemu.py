"""Bare-metal STM32F407 images in qemu-system-arm (netduinoplus2): console verdicts and semihosting exit."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest
from conftest import require_tool

from rac_fw.domains.firmware.backends import select_runner
from rac_fw.domains.firmware.backends.base import BuildRequest, RunRequest
from rac_fw.domains.firmware.backends.gcc import GccBuilder
from rac_fw.domains.firmware.backends.qemu import QemuRunner, machine_for, qemu_command
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower, write_artifact
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.verify.console import plan_expectations
from rac_fw.resources import data_dir

HOSTILE = 'quote " back \\ 100% %% %s ??= end'
QEMU_PLAN = {
    "operations": [
        {"op": "gpio_blink", "name": "beat", "led": "led0", "period_ms": 20},
        {"op": "uart_print", "name": "hello", "message": HOSTILE},
        {"op": "uart_rx_irq", "name": "rx", "ring_bytes": 32, "echo": True},
        {"op": "timer_periodic", "name": "tick", "period_ms": 5, "source": "systick"},
        {"op": "timer_oneshot", "name": "once", "period_ms": 7, "source": "systick"},
        {"op": "watchdog", "name": "wdt", "timeout_ms": 1000, "feed_interval_ms": 200},
    ]
}


@pytest.fixture(autouse=True)
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    monkeypatch.setenv("RAC_FW_CACHE", str(tmp_path / "cache"))


def build(plan: Plan, tmp_path: Path, edit: tuple[str, str] | None = None) -> Path:
    src = tmp_path / "src"
    write_artifact(lower(plan, load_target("stm32f407"), "baremetal"), src)
    if edit is not None:
        main = src / "src" / "main.c"
        text = main.read_text()
        assert edit[0] in text, f"edit {edit[0]!r} does not apply"
        main.write_text(text.replace(*edit, 1))
    result = GccBuilder().build(BuildRequest(src, "stm32f407", "baremetal", tmp_path / "build"))
    assert result.ok and result.image is not None, [e.message for e in result.evidence]
    return result.image


def test_console_is_wired_to_the_board_uart() -> None:
    machine, index = machine_for(load_target("stm32f407"))
    assert (machine.machine, index) == ("netduinoplus2", 1)  # console USART2 = QEMU serial1


def test_operations_run_and_meet_their_expectations(tmp_path: Path) -> None:
    plan = parse_plan(QEMU_PLAN)
    image = build(plan, tmp_path)
    expect = plan_expectations(plan, "USART2")
    ran = QemuRunner().run(RunRequest(image, "stm32f407", expect, 10.0, tmp_path / "run"), console_input=b"ping\n")
    assert ran.ok, (ran.output, [e.message for e in ran.evidence])
    lines = ran.output.splitlines()
    assert lines[0] == "rac: boot stm32f407" and lines[-1] == "rac: done"
    assert HOSTILE in lines  # printed byte for byte: escaped in C as data
    assert "ping" in lines and "rac: rx ok ring=32 received=5" in lines
    assert "rac: tick ok fired=3 source=systick period_us=5000" in lines
    assert "rac: once ok fired=1 source=systick period_us=7000" in lines
    assert re.search(r"^rac: wdt ok IWDG timeout_ms=1000\.0 divider=8 reload=3999", ran.output, re.M)
    exit_verdict = ran.verdicts[-1]
    assert exit_verdict.passed and exit_verdict.measured == 0
    assert (tmp_path / "run" / "console.log").read_text().startswith("rac: boot")
    assert ran.duration_s < 5


def test_unemulated_dma_ends_in_a_bounded_reported_timeout(tmp_path: Path) -> None:
    """QEMU 7.2 has no STM32F4 DMA model: the completion poll must give up, report, and exit."""
    plan = parse_plan(
        {
            "resources": {"buffers": [{"name": "src", "size_bytes": 32, "role": "dma_mem"},
                                      {"name": "dst", "size_bytes": 32, "role": "dma_mem"}]},
            "operations": [{"op": "dma_mem2mem", "name": "copy", "src": "src", "dst": "dst"}],
        }
    )  # fmt: skip
    image = build(plan, tmp_path)
    ran = QemuRunner().run(RunRequest(image, "stm32f407", plan_expectations(plan, "USART2"), 10.0, tmp_path / "r"))
    assert not ran.ok and ran.duration_s < 5
    (forbidden,) = [e for e in ran.evidence if e.code == "E_CONSOLE_FORBIDDEN"]
    assert "rac: copy FAIL timeout waiting for DMA2 ST0 transfer complete" in forbidden.message


def test_hung_firmware_is_killed_at_the_deadline(tmp_path: Path) -> None:
    plan = parse_plan({"operations": [{"op": "uart_print", "name": "hello", "message": "then hang"}]})
    image = build(plan, tmp_path, edit=('    rac_puts("rac: done\\r\\n");', "    for (;;) {\n    }"))
    started = time.monotonic()
    ran = QemuRunner().run(RunRequest(image, "stm32f407", plan_expectations(plan, "USART2"), 1.0, tmp_path / "r"))
    assert time.monotonic() - started < 3.0
    assert not ran.ok
    assert {e.code for e in ran.evidence} == {"E_CONSOLE_EXPECTATION", "E_RUN_TIMEOUT"}
    assert ran.verdicts[-1].measured == "killed at the deadline"
    assert "then hang" in ran.output


def test_target_without_a_qemu_model_is_evidence(tmp_path: Path) -> None:
    ran = QemuRunner().run(RunRequest(tmp_path / "missing.elf", "nrf52840", (), 1.0, tmp_path))
    assert not ran.ok and ran.evidence[0].code == "E_RUN_NO_IMAGE"
    image = build(parse_plan({"operations": [{"op": "uart_print", "message": "x"}]}), tmp_path)
    ran = select_runner("qemu").run(RunRequest(image, "nrf52840", (), 1.0, tmp_path))
    assert ran.evidence[0].code == "E_QEMU_NO_MACHINE" and "nrf52840" in ran.evidence[0].message


def test_uart_example_through_the_pipeline(tmp_path: Path) -> None:
    """What `rac-fw plan examples/uart_hello.yaml --framework baremetal --build gcc --run qemu` runs."""
    result = run_plan(data_dir("examples") / "uart_hello.yaml", target="stm32f407", framework="baremetal",
                      out_dir=tmp_path / "out", build="gcc", run="qemu", run_timeout_s=10.0)  # fmt: skip
    assert result.status.value == "pass", [e.message for e in result.evidence]
    console = [v for v in result.verdicts if v.predicate.startswith("console")]
    assert console and all(v.passed for v in console)
    assert any(v.measured == "hello from rac-fw" for v in console)


def test_fault_is_reported_and_fails_the_run(tmp_path: Path) -> None:
    plan = parse_plan({"operations": [{"op": "uart_print", "name": "hello", "message": "before the fault"}]})
    # A write to an unmapped address: a precise BusFault, escalated to HardFault (BusFault not enabled).
    fault = ('    rac_puts("rac: done\\r\\n");', "    *(volatile uint32_t *)0xFFFFFFF0UL = 1U;")
    image = build(plan, tmp_path, edit=fault)
    ran = QemuRunner().run(RunRequest(image, "stm32f407", plan_expectations(plan, "USART2"), 5.0, tmp_path / "r"))
    assert not ran.ok
    assert re.search(r"^rac: hardfault FAULT pc=\d+ cfsr=\d+$", ran.output, re.M)
    assert [e.code for e in ran.evidence][0] == "E_CONSOLE_FORBIDDEN"


def test_without_semihosting_the_firmware_carries_on(tmp_path: Path) -> None:
    """As on a board without a debugger: the exit BKPT is stepped over and the main loop runs."""
    plan = parse_plan(
        {"operations": [{"op": "uart_print", "name": "tick", "message": "again", "repeat_interval_ms": 20}]}
    )
    image = build(plan, tmp_path)
    machine, index = machine_for(load_target("stm32f407"))
    command = qemu_command(image, machine, index)
    at = command.index("-semihosting-config")
    del command[at : at + 2]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL) as qemu:
        try:
            output, _ = qemu.communicate(timeout=1.5)
        except subprocess.TimeoutExpired:
            qemu.kill()
            output, _ = qemu.communicate()
    lines = output.decode().splitlines()
    assert "rac: done" in lines and "FAULT" not in output.decode()
    assert lines[lines.index("rac: done") + 1 :].count("again") >= 2
