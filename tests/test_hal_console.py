"""STM32 HAL apps speak the rac: console protocol on the board's console UART.

Every example is lowered on every HAL target where it validates and realizes; the generated ``main.c`` is
parsed (top-level functions and their bodies) to show that the lines it can print are exactly
``rac: boot <target>``, one ``rac: <label> ok`` per operation and ``rac: done``, the labels the bare-metal
run is judged by (``verify.console.plan_expectations``), and that nothing prints from an interrupt.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.lower import LoweringError, lower
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.verify.console import operation_label, plan_expectations
from rac_fw.resources import data_dir

EXAMPLES = sorted(data_dir("examples").glob("*.yaml"))
#: HAL plans beyond the examples (operations no example runs on a HAL target: async UART, DMA chains, RNG…).
HAL_PLANS = sorted((Path(__file__).parent / "plans").glob("*_hal*.yaml"))
HAL_TARGETS = [t for t in target_ids() if "hal" in load_target(t).frameworks]
#: A top-level C function definition: its name, then its body up to the closing brace in column 0.
_FUNCTION = re.compile(r"^[A-Za-z_][\w \*]*?\b(\w+)\(([^;{]*?)\)\n\{\n(.*?)^\}", re.M | re.S)
# rac_ok_text: an operation whose line carries what it read back (core_clock: "rac: cpu ok core=168MHz").
_OK_CALL = re.compile(r'\brac_ok(?:_text)?\("([^"]+)", (true, value_\w+|false, 0|rac_\w+_text)\);')

#: Operations neither the examples nor tests/plans run on a HAL target, as small plans of their own
#: (a Stop sleep woken by the board button, the RNG, an input interrupt, a periodic ADC, a main-loop watchdog).
INLINE = {
    "inline-stop-random": {"operations": [
        {"op": "sleep", "name": "nap", "state": "stop", "wake": ["gpio"], "button": "sw0"},
        {"op": "random", "name": "salt", "length_bytes": 16}, {"op": "gpio_set", "led": "led0"}]},
    "inline-irq-adc-watchdog": {"operations": [
        {"op": "gpio_input_irq", "name": "edges", "button": "sw0", "edge": "rising", "debounce_ms": 20},
        {"op": "adc_periodic", "name": "vin", "channel": {"pin": "PA1"}, "interval_ms": 100},
        {"op": "watchdog", "name": "wdt", "timeout_ms": 2000, "feed_interval_ms": 500,
         "reset_behaviour": "reset_soc"}]},
    "inline-standby": {"operations": [
        {"op": "gpio_set", "led": "led0"},
        {"op": "sleep", "name": "off", "state": "standby", "wake": ["gpio"], "button": "sw0", "resume": "restart"}]},
}  # fmt: skip


def _plan(source: str, target_id: str) -> Plan:
    if source in INLINE:
        return parse_plan({"target": target_id, "framework": "hal", **INLINE[source]})
    return load_plan(Path(source)).model_copy(update={"target": target_id, "framework": "hal"})


def _functions(source: str) -> dict[str, str]:
    return {m.group(1): m.group(3) for m in _FUNCTION.finditer(source)}


def _cells() -> list[tuple[str, str, dict[str, str]]]:
    cells = []
    for source in [*map(str, EXAMPLES), *map(str, HAL_PLANS), *INLINE]:
        for target_id in HAL_TARGETS:
            target = load_target(target_id)
            plan = _plan(source, target_id)
            if check(plan, target, "hal"):
                continue
            try:
                files = lower(plan, target, "hal").files
            except LoweringError:
                continue  # valid in general, not realizable here: evidence, not an app
            cells.append((source, target_id, files))
    return cells


CELLS = _cells()


def test_enough_hal_cells_are_checked() -> None:
    assert len(CELLS) >= 20 and {t for _, t, _ in CELLS} == set(HAL_TARGETS)


@pytest.mark.parametrize(("example", "target_id", "files"), CELLS, ids=[f"{Path(e).name}@{t}" for e, t, _ in CELLS])
def test_main_c_prints_boot_one_line_per_operation_and_done(
    example: str, target_id: str, files: dict[str, str]
) -> None:
    plan = _plan(example, target_id)
    target = load_target(target_id)
    assert target.board.console is not None
    main = files["Core/Src/main.c"]
    functions = _functions(main)
    console = target.board.console.uart
    handle = f"h{console.lower()}"

    # The console UART is initialized and its pins are set up, whatever the plan's own UARTs are.
    assert f"MX_{console}_Init();" in functions["main"]
    assert f"UART_HandleTypeDef {handle};" in main
    msp = next(text for path, text in files.items() if path.endswith("_hal_msp.c"))
    assert f"{console}_TX" in msp or f"AF7_{console}" in msp
    conf = next(text for path, text in files.items() if path.endswith("_hal_conf.h"))
    assert "#define HAL_UART_MODULE_ENABLED" in conf

    # The only transmitter of protocol lines: bounded (a busy console retried within the bound), result checked.
    report = functions["rac_report"]
    assert f"HAL_UART_Transmit(&{handle}, (const uint8_t *)line, (uint16_t)strlen(line), UART_TX_TIMEOUT_MS);" in report
    assert "HAL_GetTick() - start < UART_TX_TIMEOUT_MS" in report and "if (status != HAL_OK)" in report
    boot = functions["main"].split("rac_user_init();")[0]
    assert boot.rstrip().endswith(f'rac_report("rac: boot " "{target_id}" "\\r\\n");'), example
    assert boot.index(f"MX_{console}_Init();") < boot.index("rac_report(")
    if plan.behaviour is None:
        assert f"if (rac_reported == {len(plan.operations)}U) {{" in functions["rac_ok"]
        assert 'rac_report("rac: done\\r\\n");' in functions["rac_ok"]
    else:  # the behaviour prints "rac: done" (tests/test_behaviour_hal.py)
        assert "rac: done" not in functions["rac_ok"] and "rac_behaviour_run();" in main

    # One report per operation, printed by rac_poll, which the loop (super-loop main or the rac_loop thread) calls.
    reported = [m.group(1) for m in _OK_CALL.finditer(functions["rac_poll"])]
    labels = [operation_label(i, op.op, op.name) for i, op in enumerate(plan.operations)]
    assert reported == labels, example
    assert len(_OK_CALL.findall(main)) == len(labels)
    if plan.behaviour is None:
        loop = functions["rac_loop"] if "rac_loop" in functions else functions["main"].split("    for (;;) {", 1)[1]
        assert "rac_poll();" in loop
    else:  # the loop's body is rac_ops_poll, which the behaviour's waits and idle call too
        assert "rac_poll();" in functions["rac_ops_poll"] and "rac_ops_poll();" in functions["rac_b_idle"]
    expected = plan_expectations(plan, console)
    for label in labels:
        assert any(re.search(p, f"rac: {label} ok") for p in expected if p.startswith("^rac: "))

    # Each operation's flag is set somewhere outside its declaration, and nothing prints from an interrupt
    # handler, callback or thread other than the loop.
    for index, op in enumerate(plan.operations):
        sym = op.name or f"{op.op}_{index}"
        assert re.search(rf"\brac_{sym}_ok = (true|!|{sym}_)", main), (example, sym)
    for name, body in functions.items():
        if name in ("main", "rac_loop", "rac_ok", "rac_ok_text", "rac_poll", "rac_report", "rac_ops_poll",
                    "rac_b_emit"):  # fmt: skip
            continue
        assert not re.search(r"\brac_(ok|poll|report)\(", body), (example, name)
