"""The ESP-IDF v5 lowering for the ESP32-S3: file set, facts-derived numbers, ISR/DMA rules, escaping.

Each plan is validated by the obligations first (a lowering only ever sees valid plans), then lowered
and judged both by direct assertions on the generated text and by the independent static verifier.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pytest

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import LoweringError, lower
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.plan.escape import c_format
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.plan.matrix import realizes
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.resources import data_dir

TARGET = load_target("esp32s3")

#: Nearly the whole catalog on one chip (pins chosen free of flash/PSRAM/USB/strapping on the N8R8 module).
FULL_PLAN = {
    "target": "esp32s3",
    "resources": {
        "pins": [
            {"name": "led", "pin": "GPIO4"},
            {"name": "sda", "pin": "GPIO8", "function": "I2C0_SDA"},
            {"name": "scl", "pin": "GPIO9", "function": "I2C0_SCL"},
            {"name": "u1tx", "pin": "GPIO17", "function": "UART1_TX"},
            {"name": "u1rx", "pin": "GPIO18", "function": "UART1_RX"},
        ],
        "buffers": [
            {"name": "src_buf", "size_bytes": 256, "role": "dma_mem"},
            {"name": "dst_buf", "size_bytes": 256, "role": "dma_mem"},
        ],
        "devices": [{"name": "imu", "bus": "i2c", "controller": "I2C0", "address": 0x68, "frequency_hz": 400000}],
        "threads": [
            {"name": "worker", "priority": 5, "stack_bytes": 4096},
            {"name": "feeder", "priority": 2, "stack_bytes": 2048},
            {"name": "producer", "priority": 4, "stack_bytes": 3072},
            {"name": "consumer", "priority": 6, "stack_bytes": 3072},
        ],
    },
    "operations": [
        {"op": "gpio_input_irq", "name": "button", "button": "boot", "edge": "falling", "debounce_ms": 30},
        {"op": "isr_handoff", "source": "button", "mechanism": "msgq", "thread": "worker", "depth": 4},
        {"op": "uart_print", "message": "hello", "repeat_interval_ms": 1000},
        {"op": "uart_line_read", "uart": "UART1", "max_line": 64, "timeout_ms": 5000},
        {"op": "i2c_transfer", "name": "whoami", "device": "imu", "register_index": 0x75, "interval_ms": 1000},
        {"op": "adc_periodic", "name": "pot", "channel": {"pin": "GPIO2"}, "interval_ms": 200},
        {"op": "pwm_fade", "output": "led", "period_us": 50, "step_percent": 5, "interval_ms": 20},
        {"op": "timer_periodic", "name": "tick", "period_ms": 10},
        {"op": "isr_handoff", "source": "tick", "mechanism": "ring_atomic", "thread": "worker", "depth": 8},
        {"op": "watchdog", "timeout_ms": 3500, "feed_interval_ms": 1000, "feed_thread": "feeder"},
        {"op": "dma_mem2mem", "name": "copy", "src": "src_buf", "dst": "dst_buf"},
        {"op": "producer_consumer", "producer": "producer", "consumer": "consumer", "queue_depth": 8, "item_bytes": 16},
        {"op": "lock_order", "locks": ["state", "bus"], "threads": ["worker", "producer"]},
        {"op": "log", "message": "values", "values": ["pot", "whoami"], "interval_ms": 1000},
    ],
}


def _only(*operations: dict) -> dict:
    """The full plan's resources (but its threads, which only the full plan's operations name) with
    ``operations`` alone."""
    resources = {k: v for k, v in FULL_PLAN["resources"].items() if k != "threads"}
    return dict(FULL_PLAN, resources=resources, operations=list(operations))


def _valid(data: dict) -> Plan:
    plan = parse_plan(data, "test")
    evidence = check(plan, TARGET, "espidf")
    assert evidence == [], [f"{e.code} {e.location}: {e.message}" for e in evidence]
    return plan


@pytest.fixture(scope="module")
def full() -> dict[str, str]:
    return lower(_valid(FULL_PLAN), TARGET, "espidf").files


def _functions(source: str) -> dict[str, str]:
    """Top-level C function name → body text (the generated code puts braces on their own lines)."""
    found = {}
    for match in re.finditer(r"^[a-zA-Z][^\n;]*?\b(\w+)\(([^)]*)\)\n\{\n(.*?)^\}", source, re.M | re.S):
        found[match.group(1)] = match.group(3)
    return found


def test_file_set_components_and_sdkconfig(full: dict[str, str]) -> None:
    assert set(full) == {"CMakeLists.txt", "main/CMakeLists.txt", "main/main.c", "sdkconfig.defaults", "README.md",
                         "pytest_rac_fw_app.py"}
    assert "project.cmake" in full["CMakeLists.txt"]
    requires = re.search(r"REQUIRES ([^)]*)\)", full["main/CMakeLists.txt"])
    assert requires is not None
    components = set(requires.group(1).split())
    # Every driver header main.c includes must come with the component that provides it.
    provider = {
        "driver/gpio.h": "esp_driver_gpio", "driver/uart.h": "esp_driver_uart",
        "driver/i2c_master.h": "esp_driver_i2c", "esp_adc/adc_oneshot.h": "esp_adc",
        "driver/ledc.h": "esp_driver_ledc", "driver/gptimer.h": "esp_driver_gptimer",
        "esp_async_memcpy.h": "esp_hw_support", "esp_heap_caps.h": "heap",
    }  # fmt: skip
    included = set(re.findall(r'#include "([^"]+)"', full["main/main.c"]))
    for header, component in provider.items():
        if header in included:
            assert component in components, (header, component)
    options = dict(
        line.split("=", 1) for line in full["sdkconfig.defaults"].splitlines() if line and not line.startswith("#")
    )
    assert options["CONFIG_IDF_TARGET"] == f'"{TARGET.board.idf_target}"'
    assert options["CONFIG_ESP_TASK_WDT_TIMEOUT_S"] == str(math.ceil(3500 / 1000))
    assert options["CONFIG_ESP_TASK_WDT_PANIC"] == "y"
    assert options["CONFIG_FREERTOS_HZ"] == "1000"
    assert "delete" in full["README.md"].lower() and "sdkconfig" in full["README.md"]


def test_watchdog_timeout_and_feed(full: dict[str, str]) -> None:
    main = full["main/main.c"]
    assert ".timeout_ms = 3500," in main and ".trigger_panic = true," in main
    assert "esp_task_wdt_reconfigure(" in main and "esp_task_wdt_add(NULL)" in main
    assert "esp_task_wdt_reset()" in main and "esp_task_wdt_deinit" not in main
    assert "vTaskDelay(pdMS_TO_TICKS(1000))" in _functions(main)["feeder_task"]


@pytest.mark.parametrize("period_us", [50, 1000, 20000])
def test_ledc_resolution_derived_from_clock_facts(period_us: int) -> None:
    plan = _only({"op": "pwm_fixed", "output": "led", "period_us": period_us, "duty_percent": 25})
    main = lower(_valid(plan), TARGET, "espidf").files["main/main.c"]
    assert TARGET.pwm is not None
    ledc = TARGET.pwm.units["LEDC"]
    assert ledc.max_resolution_bits is not None and ledc.clock_hz is not None
    freq = round(1_000_000 / period_us)
    bits = min(ledc.max_resolution_bits, math.floor(math.log2(ledc.clock_hz / freq)))
    assert f".freq_hz = {freq}," in main
    assert f".duty_resolution = LEDC_TIMER_{bits}_BIT," in main
    assert f".duty = {round(0.25 * (1 << bits))}," in main


def test_isr_bodies_are_iram_nonblocking_and_yield(full: dict[str, str]) -> None:
    main = full["main/main.c"]
    functions = _functions(main)
    isrs = re.findall(r"IRAM_ATTR (\w+)\(", main)
    assert {"button_isr", "tick_on_alarm", "copy_on_done"} <= set(isrs)
    for name in isrs:
        body = functions[name]
        assert not re.search(r"ESP_LOG|printf|vTaskDelay|malloc|xQueueSend\(|xSemaphoreTake", body), name
    assert "xQueueSendFromISR(" in functions["button_isr"] and "portYIELD_FROM_ISR(woken)" in functions["button_isr"]
    # The kernel timer is esp_timer with ISR dispatch: its callback asks the dispatcher to yield.
    assert (
        "vTaskNotifyGiveFromISR(" in functions["tick_on_alarm"]
        and "esp_timer_isr_dispatch_need_yield();" in functions["tick_on_alarm"]
    )
    # State the ISRs write and tasks read is volatile or atomic.
    assert "static volatile uint32_t button_events;" in main and "static volatile uint32_t tick_events;" in main
    assert re.search(r"static atomic_uint_fast32_t isr_handoff_8_head;", main)


def test_dma_buffers_come_from_dma_capable_memory(full: dict[str, str]) -> None:
    main = full["main/main.c"]
    for name in ("src_buf", "dst_buf"):
        assert f"{name} = heap_caps_malloc({name.upper()}_BYTES, MALLOC_CAP_DMA | MALLOC_CAP_INTERNAL);" in main
        assert f"if ({name} == NULL)" in main
    assert "esp_async_memcpy(copy_driver, dst_buf, src_buf, 256U, copy_on_done, NULL)" in main


def test_chosen_gpio_numbers_match_the_plan_and_board(full: dict[str, str]) -> None:
    main = full["main/main.c"]
    boot = next(b for b in TARGET.board.buttons if b.name == "BOOT")
    assert f"gpio_isr_handler_add(GPIO_NUM_{boot.pin[4:]}, button_isr, NULL)" in main
    assert ".sda_io_num = GPIO_NUM_8," in main and ".scl_io_num = GPIO_NUM_9," in main
    assert "uart_set_pin(UART_NUM_1, 17, 18," in main
    # GPIO2 is ADC1 channel 1 in the pin facts.
    channel = re.match(r"ADC(\d)_CH(\d+)", TARGET.pins["GPIO2"].analog[0])
    assert channel is not None
    assert f"adc_oneshot_config_channel(adc{channel[1]}_handle, ADC_CHANNEL_{channel[2]}," in main
    assert "adc_cali_create_scheme_curve_fitting(" in main and "adc_cali_raw_to_voltage(" in main


def test_hostile_strings_reach_c_only_escaped() -> None:
    hostile = 'a"b\\c %s %n */ ??= end'
    plan = _only({"op": "uart_print", "message": hostile}, {"op": "log", "message": hostile})
    main = lower(_valid(plan), TARGET, "espidf").files["main/main.c"]
    assert c_format(hostile + "\n") in main and c_format(hostile) in main
    assert hostile not in main and "%s %n" not in main


def test_verifier_gives_a_clean_verdict(full: dict[str, str]) -> None:
    verification = verify_sources(full, "espidf", TARGET)
    assert verification.ok, [f"{e.code} {e.location}: {e.message}" for e in verification.evidence]


def test_same_plan_same_bytes() -> None:
    first = lower(_valid(FULL_PLAN), TARGET, "espidf")
    second = lower(_valid(FULL_PLAN), TARGET, "espidf")
    assert first.files == second.files and first.artifact_hash == second.artifact_hash


def test_supports_and_unsupported_operations() -> None:
    assert realizes("espidf", "gpio_blink", TARGET) and realizes("espidf", "isr_handoff", TARGET)
    assert not realizes("espidf", "sensor_read", TARGET)
    assert not realizes("espidf", "gpio_blink", load_target("stm32h743"))  # no IDF target on that board
    plan = parse_plan(
        {"target": "esp32s3", "operations": [{"op": "sensor_read", "device": "die_temp", "channel": "die_temp"}]}
    )
    assert any(e.code == "E_TARGET_UNSUPPORTED" for e in check(plan, TARGET, "espidf"))
    with pytest.raises(LoweringError) as raised:
        lower(plan, TARGET, "espidf")
    assert raised.value.evidence[0].code == "E_TARGET_UNSUPPORTED"


def test_one_reader_per_uart() -> None:
    plan = dict(
        FULL_PLAN,
        operations=[
            {"op": "uart_rx_irq", "uart": "UART1", "ring_bytes": 128},
            {"op": "uart_line_read", "uart": "UART1", "max_line": 32},
        ],
    )
    with pytest.raises(LoweringError) as raised:
        lower(parse_plan(plan), TARGET, "espidf")
    assert raised.value.evidence[0].location == "operations[1]"


def test_kernel_timers_are_esp_timer_and_timg_timers_gptimer() -> None:
    """``source: kernel`` is the esp_timer service the schema names (ISR dispatch keeps the callback in ISR
    context for its handoff); a TIMG instance is a gptimer."""
    plan = Plan.model_validate(
        {
            "target": "esp32s3",
            "resources": {"threads": [{"name": "worker", "stack_bytes": 4096, "priority": 5}]},
            "operations": [
                {"op": "timer_periodic", "name": "tick", "period_ms": 100},
                {"op": "timer_oneshot", "name": "once", "period_ms": 500, "source": "TIMG0_T0"},
                {"op": "isr_handoff", "source": "tick", "thread": "worker", "mechanism": "semaphore"},
            ],
        }
    )
    files = lower(plan, TARGET, "espidf").files
    main = files["main/main.c"]
    assert "#include \"esp_timer.h\"" in main and ".dispatch_method = ESP_TIMER_ISR" in main
    assert "esp_timer_start_periodic(tick_timer, 100000ULL)" in main and "esp_timer_isr_dispatch_need_yield()" in main
    assert "gptimer_new_timer(&once_cfg, &once_timer)" in main
    assert "CONFIG_ESP_TIMER_SUPPORTS_ISR_DISPATCH_METHOD=y" in files["sdkconfig.defaults"]
    assert "esp_timer" in files["main/CMakeLists.txt"]


def _apps() -> list[tuple[str, Plan, dict[str, str]]]:
    """Every ESP-IDF app of the example matrix (each example retargeted to the ESP32-S3) and the full plan."""
    apps = [("full", _valid(FULL_PLAN), {})]
    for path in sorted(data_dir("examples").glob("*.yaml")):
        plan = load_plan(path).model_copy(update={"target": "esp32s3", "framework": "espidf"})
        if plan.behaviour is None and not check(plan, TARGET, "espidf"):  # behaviour apps: test_behaviour_espidf
            apps.append((path.stem, plan, {}))
    return [(name, plan, lower(plan, TARGET, "espidf").files) for name, plan, _ in apps]


def _printed(main: str) -> tuple[str, list[str], str]:
    """The console lines main.c prints, read from its C: the boot line, one ok line per rac_ok() call
    site, the done line (printf's formats applied to their literal arguments)."""
    boot = re.search(r'printf\("rac: boot %s\\n", "([^"]+)"\);', main)
    assert boot is not None
    assert 'printf("rac: %s ok\\n", label);' in main and 'printf("rac: done\\n");' in main
    labels = re.findall(r'\brac_ok\("([^"]+)"\);', main)
    return f"rac: boot {boot.group(1)}", [f"rac: {label} ok" for label in labels], "rac: done"


def test_esp_idf_apps_print_the_rac_lines_once_per_operation() -> None:
    """Like the Zephyr apps: the boot line first in app_main, every operation reports once (never from an
    ISR), and rac_ok prints "rac: done" when the count reaches the number of operations."""
    checked = 0
    for name, plan, files in _apps():
        main = files["main/main.c"]
        body = main[main.index("void app_main(void)\n{\n") :]
        assert body.index('printf("rac: boot %s\\n", "esp32s3");') < body.index("rac_user_init();"), name
        boot, oks, done = _printed(main)
        labels = [op.name or f"{op.op}{i}" for i, op in enumerate(plan.operations)]
        assert sorted(oks) == sorted(f"rac: {label} ok" for label in labels), name
        assert f"+ 1U == {len(plan.operations)}U)" in main, name
        functions = _functions(main)
        for isr in re.findall(r"IRAM_ATTR (\w+)\(", main):
            assert "rac_ok(" not in functions[isr], (name, isr)
        checked += 1
    assert checked >= 6


def test_pytest_embedded_test_is_valid_python_whose_regexes_match_the_printed_lines(tmp_path: Path) -> None:
    """``pytest_rac_fw_app.py`` (Espressif's example-test shape: ``@pytest.mark.esp32s3``, ``dut.expect``)
    compiles, and its patterns match exactly the lines main.c prints, with LF or CRLF endings."""
    for name, _plan, files in _apps():
        source = files["pytest_rac_fw_app.py"]
        compile(source, "pytest_rac_fw_app.py", "exec")
        tree = ast.parse(source)
        constants = {
            node.targets[0].id: ast.literal_eval(node.value)
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        }
        (test,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
        marks = {ast.unparse(d) for d in test.decorator_list}
        assert {f"pytest.mark.{TARGET.board.idf_target}", "pytest.mark.generic"} <= marks, name
        assert [a.annotation and ast.unparse(a.annotation) for a in test.args.args] == ["IdfDut"]
        assert ast.unparse(test).count("dut.expect(") == 3
        boot, oks, done = _printed(files["main/main.c"])
        for ending in ("\n", "\r\n"):
            assert re.search(constants["BOOT"], boot + ending), name
            assert re.search(constants["DONE"], done + ending) and not re.search(constants["OK"], done + ending)
            assert not re.search(constants["OK"], boot + ending)
            reported = [re.search(constants["OK"], line + ending).group(1) for line in oks]  # type: ignore[union-attr]
            assert sorted(reported) == sorted(constants["OPERATIONS"]), name
        assert len(constants["OPERATIONS"]) == len(oks)
