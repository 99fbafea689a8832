"""The behaviour layer rendered for ESP-IDF v5.5 (esp32s3): clean C the verifier accepts, interrupt vs deferred
contexts with the receipt saying which, persistence in NVS with every return checked, refusals with relaxations
that validate, the predicted console in the receipt, the run judge and the generated pytest-embedded file.

No ESP-IDF toolchain runs here: the generated apps are judged by the independent static verifier (API catalogs,
ISR rules, call order, Kconfig consistency) and the run judge by consoles written as the app and the ROM print them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower.espidf_pytest import in_order
from rac_fw.domains.firmware.pipeline import PlanResult, run_plan
from rac_fw.domains.firmware.plan.behaviour.console import judge
from rac_fw.domains.firmware.plan.behaviour.trace import Choice, Line, Open, Repeat
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources
from tests.test_behaviour_zephyr import SW_IRQ as ZEPHYR_SW_IRQ
from tests.test_behaviour_zephyr import _lowered, _notes, _plan

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PYTEST_FILE = "pytest_rac_fw_app.py"
#: The DevKitC board has no LED: the plans wire one (and a button) to free GPIOs.
PINS = {"pins": [{"name": "led0", "pin": "GPIO21", "function": "GPIO"},
                 {"name": "btn", "pin": "GPIO38", "function": "GPIO"}]}  # fmt: skip

#: Zephyr's software-interrupt plan on esp32s3: fired from the boot steps, counted in the handler (an LED toggled
#: there), a summary.
SW_IRQ = _plan(ZEPHYR_SW_IRQ, "esp32s3", framework="espidf", resources=PINS)

#: A button edge, a kernel and a TIMG timer, a polled input, an ADC read and a watchdog feed.
RICH: dict[str, Any] = {
    "target": "esp32s3",
    "framework": "espidf",
    "resources": PINS,
    "operations": [
        {"op": "gpio_set", "name": "led", "led": "led0"},
        {"op": "gpio_input_irq", "name": "button", "button": "btn", "edge": "falling"},
        {"op": "timer_periodic", "name": "tick", "period_ms": 100},
        {"op": "timer_periodic", "name": "hw", "period_ms": 50, "source": "TIMG0_T0"},
        {"op": "gpio_read", "name": "sw", "button": "btn", "interval_ms": 50},
        {"op": "adc_read", "name": "vin", "channel": {"pin": "GPIO1"}},
        {"op": "watchdog", "name": "wdt", "timeout_ms": 2000, "feed_interval_ms": 500},
    ],
    "behaviour": {
        "vars": [{"name": "presses", "type": "u32", "init": 0}, {"name": "mv", "type": "i32", "unit": "mV", "init": 0},
                 {"name": "ok", "type": "bool", "init": False}, {"name": "ticks", "type": "u32", "init": 0}],
        "triggers": [
            {"event": "button.edge", "do": [{"print": "press"}, {"set": {"presses": "presses + 1"}}]},
            {"event": "tick.expiry", "context": "thread", "times": 3, "do": [{"act": "led.toggle"}]},
            {"event": "hw.expiry", "times": 3, "do": [{"set": {"ticks": "ticks + 1"}}]},
            {"every": "500ms", "times": 2, "do": [
                {"act": {"op": "vin", "action": "read", "into": "mv", "ok": "ok"}}, {"act": "wdt.feed"},
                {"act": "sw.read"},
                {"if": {"cond": "sw.level", "then": [{"print": "sw on"}], "else": [{"print": "sw off"}]}},
                {"print": "mv={mv} ok={ok} presses={presses} ticks={ticks}"},
            ]},
        ],
    },
}  # fmt: skip

#: A boot counter and a byte string kept in NVS across two resets.
BOOTS: dict[str, Any] = {
    "target": "esp32s3",
    "framework": "espidf",
    "resources": PINS,
    "operations": [{"op": "gpio_set", "name": "led", "led": "led0"}],
    "behaviour": {
        "vars": [{"name": "boots", "type": "u32", "init": 0, "persist": True},
                 {"name": "tag", "type": "bytes", "size": 8, "init": {"hex": "01 02"}, "persist": True}],
        "triggers": [{"at": "boot", "do": [
            {"set": {"boots": "boots + 1", "tag": {"hex": "aa bb cc"}}},
            {"print": "boot number {boots} tag={tag}"},
            {"if": {"cond": "boots < 3", "then": [{"reset": "chip"}]}},
            {"print": "third boot reached"}]}],
    },
}  # fmt: skip


def _clean(result: PlanResult) -> dict[str, str]:
    """The app's files, which the independent verifier accepts."""
    assert result.lowered is not None
    files = dict(result.lowered.files)
    found = verify_sources(files, "espidf", load_target("esp32s3")).evidence
    assert not found, [f"{e.code} {e.location}: {e.message}" for e in found]
    return files


def _hook(main: str, name: str) -> str:
    found = re.search(rf"void {name}\(void\)\n\{{(.*?)\n\}}", main, re.S)
    assert found is not None, name
    return found.group(1)


def _predicted(files: dict[str, str]) -> tuple[list[str], int]:
    """PREDICTED and TIMEOUT_S of the generated pytest file (which must be valid Python)."""
    tree = ast.parse(files[PYTEST_FILE])
    values = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
              if isinstance(t, ast.Name)}  # fmt: skip
    return ast.literal_eval(values["PREDICTED"]), ast.literal_eval(values["TIMEOUT_S"])


@pytest.mark.parametrize("example", ["behaviour_counter.yaml", "behaviour_boot_counter.yaml"])
def test_behaviour_examples_lower_clean_on_esp32s3(example: str) -> None:
    plan = load_plan(EXAMPLES / example).model_dump(mode="json", exclude_none=True)
    plan.update(target="esp32s3", framework="espidf", resources=PINS)
    files = _clean(_lowered(plan))
    main = files["main/main.c"]
    # app_main reports the operation in plan order, then runs the behaviour, which prints "rac: done" itself.
    assert main.index('rac_ok("led");') < main.index("rac_await(0U, 1000U);") < main.index("rac_behaviour_run();")
    assert 'printf("rac: done\\n")' not in main and 'ESP_LOGI(TAG, "started' not in main
    assert "CONFIG_ESP_MAIN_TASK_AFFINITY_CPU0=y" in files["sdkconfig.defaults"]


def test_sw_irq_is_the_cores_software_interrupt_and_its_trigger_runs_in_the_handler() -> None:
    result = _lowered(SW_IRQ)
    files = _clean(result)
    main = files["main/main.c"]
    assert "esp_intr_alloc(ETS_INTERNAL_SW0_INTR_SOURCE, ESP_INTR_FLAG_LEVEL1, soft_isr, NULL, NULL)" in main
    assert '#include "xtensa_api.h"' in main and "xt_set_intset(1U << 7);" in main
    assert "xt_set_intclear(1U << 7);\n    rac_b_on_soft__irq();" in main
    # No step of the irq trigger blocks: its hook (declared in IRAM) calls the trigger function in the interrupt.
    assert "void IRAM_ATTR rac_b_on_soft__irq(void);" in main
    hook = _hook(main, "rac_b_on_soft__irq")
    assert "rac_t1_t1();" in hook and "_since[" not in hook
    assert any("t1: runs in the interrupt handler of irq" in n for n in _notes(result))
    assert result.lowered is not None
    lines = [t["line"] for t in result.lowered.receipt.trace or []]
    assert lines == ["^rac: boot\\b.*$", "^rac: led ok$", "^rac: soft ok$", "^hits=5$", "^rac: done$"]
    assert _predicted(files)[0] == [line[:-1] + "\\r?$" for line in lines]


def test_a_blocking_step_moves_the_event_to_the_task_and_the_receipt_says_so() -> None:
    plan = _plan(SW_IRQ, "esp32s3")
    plan["behaviour"]["triggers"][1]["do"].insert(0, {"print": "irq"})
    result = _lowered(plan)
    main = _clean(result)["main/main.c"]
    hook = _hook(main, "rac_b_on_soft__irq")
    assert "rac_t1_t1_since[tail] = rac_b_now;" in hook and "rac_t1_t1();" not in hook
    assert any("its steps run in the behaviour's thread" in n and "print" in n for n in _notes(result))


def test_the_verifier_judges_the_hooks_an_interrupt_calls() -> None:
    files = _clean(_lowered(SW_IRQ))
    # A wait slipped into the trigger the software interrupt runs is a wait in interrupt context.
    files["main/main.c"] = files["main/main.c"].replace("        rac_t1_t1();\n", "        rac_t1_t1();\n"
                                                        "        vTaskDelay(1);\n", 1)  # fmt: skip
    assert "rac_t1_t1();\n        vTaskDelay(1);" in files["main/main.c"]  # the seed took
    found = verify_sources(files, "espidf", load_target("esp32s3")).evidence
    assert [e.code for e in found] == ["E_ISR_BLOCKING"] and "rac_b_on_soft__irq" in found[0].message


def test_events_outputs_and_actions_render_in_their_contexts() -> None:
    result = _lowered(RICH)
    files = _clean(result)
    main = files["main/main.c"]
    notes = _notes(result)
    # The edge trigger prints: the GPIO handler only queues it. The kernel timer is deferred as the plan asks;
    # the TIMG timer's count runs in its handler, which is then held off while the flash cache is off.
    assert any("t0: edge is raised in an interrupt" in n for n in notes)
    assert any("t1: expiry is raised in an interrupt" in n for n in notes)
    assert any("t2: runs in the interrupt handler of expiry" in n for n in notes)
    assert "# CONFIG_GPTIMER_ISR_CACHE_SAFE is not set" in files["sdkconfig.defaults"]
    for hook in ("rac_b_on_button__edge", "rac_b_on_tick__expiry", "rac_b_on_hw__expiry"):
        assert f"void IRAM_ATTR {hook}(void);" in main and f"    {hook}();" in main
    assert "rac_v2_ok = vin_sample();" in main and "rac_v1_mv = (int32_t)(vin_mv);" in main
    assert "(void)(esp_task_wdt_reset_user(wdt_user) == ESP_OK);" in main
    assert 'ESP_ERROR_CHECK(esp_task_wdt_add_user("wdt", &wdt_user));' in main
    assert "value_sw = gpio_get_level(GPIO_NUM_38) ^ 0;" in main and "((value_sw != 0))" in main
    assert "(void)led_drive(-1);" in main and "CONFIG_GPIO_CTRL_FUNC_IN_IRAM=y" in files["sdkconfig.defaults"]
    # Every quiet operation's report is awaited in plan order before the behaviour starts.
    awaited = [int(i) for i in re.findall(r"rac_await\((\d+)U, 1000U\);", main)]
    assert awaited == list(range(len(RICH["operations"])))


def test_steps_in_an_esp_timer_interrupt_are_refused_with_relaxations_that_validate() -> None:
    plan = _plan(RICH, "esp32s3")
    del plan["behaviour"]["triggers"][1]["context"]
    result = run_plan(plan)
    assert result.status is Status.INVALID
    refusal = next(e for e in result.evidence if e.code == "E_TARGET_UNSUPPORTED")
    assert "esp_timer" in refusal.message and "behaviour.triggers[1].context" in (refusal.location or "")
    fixes = {r.description: r for r in refusal.relaxations}
    assert set(fixes) == {"run its steps in the behaviour's task (the interrupt only queues the expiry)",
                          "time it with the gptimer TIMG0_T1"}  # fmt: skip
    for fix in fixes.values():
        assert run_plan(fix.apply(plan)).status is Status.PASS, fix.description


def test_persisted_variables_live_in_nvs_with_every_return_checked() -> None:
    result = _lowered(BOOTS)
    files = _clean(result)  # return_values_checked and call_order included
    main = files["main/main.c"]
    assert "nvs_flash" in files["main/CMakeLists.txt"] and '#include "nvs.h"' in main
    assert 'err = nvs_open("rac_b", NVS_READWRITE, handle);' in main
    assert 'err = nvs_set_blob(handle, "boots", &value, sizeof(value));' in main
    assert 'err = nvs_get_blob(handle, "tag", value, &length);' in main
    assert main.count("err = nvs_commit(handle);") == 2
    for call in re.findall(r"^\s*(?:\(void\))?(nvs_\w+)\(", main, re.M):
        assert call == "nvs_close", call  # every other NVS call's result is tested
    # A set only marks the value changed; the task writes it before it resets the chip (and at its waits).
    assert "rac_v0_boots_changed = true;" in main and "rac_idf_flush();\n        esp_restart();" in main
    assert main.index("rac_v0_boots_load();") < main.index("rac_t0_t0();\n    rac_b_exit(0);")
    assert result.lowered is not None
    trace = [t.get("line") or t.get("open") for t in result.lowered.receipt.trace or []]
    assert trace.count("^rac: boot\\b.*$") == 3
    assert trace.count("the ROM's and the bootloader's lines after the reset") == 2


def test_an_nvs_key_longer_than_nvs_allows_is_refused() -> None:
    plan = _plan(BOOTS, "esp32s3")
    plan["behaviour"]["vars"][1]["name"] = "a_rather_long_tag"
    plan["behaviour"]["triggers"][0]["do"] = [{"set": {"boots": "boots + 1"}},
                                              {"print": "boot {boots} tag={a_rather_long_tag}"}]  # fmt: skip
    result = run_plan(plan)
    refusal = next(e for e in result.evidence if e.code == "E_BEHAVIOUR_PERSIST")
    assert "at most 15 characters" in refusal.message and "behaviour.vars[1].persist" in (refusal.location or "")
    assert run_plan(refusal.relaxations[0].apply(plan)).status is Status.PASS


def test_the_run_judge_admits_the_rom_and_bootloader_between_resets() -> None:
    plan, target = parse_plan(BOOTS, "esp32s3"), load_target("esp32s3")
    rom = ["ESP-ROM:esp32s3-20210327", "rst:0xc (RTC_SW_CPU_RST),boot:0x8 (SPI_FAST_FLASH_BOOT)",
           "I (31) boot: ESP-IDF v5.5.5 2nd stage bootloader", "I (291) main_task: Calling app_main()"]  # fmt: skip
    runs = [["rac: boot esp32s3", "rac: led ok", f"boot number {n} tag=aabbcc"] for n in (1, 2, 3)]
    console = [*rom, *runs[0], *rom, *runs[1], *rom, *runs[2], "third boot reached", "rac: done"]
    verdicts, _ = judge(plan, target, "espidf", "\n".join(console))
    assert verdicts and verdicts[0].passed, verdicts
    skipped = [*rom, *runs[0], *rom, *runs[2], "third boot reached", "rac: done"]
    verdicts, evidence = judge(plan, target, "espidf", "\n".join(skipped))
    assert not verdicts[0].passed and evidence


def test_the_pytest_file_waits_for_the_predicted_lines_in_order() -> None:
    files = _clean(_lowered(BOOTS))
    predicted, timeout = _predicted(files)
    assert predicted[:3] == ["^rac: boot\\b.*\\r?$", "^rac: led ok\\r?$", "^boot number 1 tag=aabbcc\\r?$"]
    assert predicted[-2:] == ["^third boot reached\\r?$", "^rac: done\\r?$"] and timeout >= 60
    assert "re.compile(line.encode('utf-8'), re.MULTILINE)" in files[PYTEST_FILE]
    assert "run on an erased flash (pytest-embedded-serial-esp's `--erase-all y`)" in files[PYTEST_FILE]
    console = "\r\n".join(["ESP-ROM:esp32s3", "rac: boot esp32s3", "rac: led ok", "boot number 1 tag=aabbcc",
                           "ESP-ROM:esp32s3", "rac: boot esp32s3", "rac: led ok", "boot number 2 tag=aabbcc",
                           "I (300) boot: bootloader", "rac: boot esp32s3", "rac: led ok",
                           "boot number 3 tag=aabbcc", "third boot reached", "rac: done", ""]).encode()  # fmt: skip
    at = 0
    for line in predicted:  # as dut.expect searches: forward from the previous match
        found = re.compile(line.encode(), re.MULTILINE).search(console, at)
        assert found is not None, line
        at = found.end()


def test_a_trace_becomes_lines_a_forward_search_can_wait_for() -> None:
    items = [Line("^a$"), Open("anything"), Repeat((Line("^t$"),), 2, 5), Choice(((Line("^x$"),), (Line("^y$"),))),
             Choice(((Line("^p$"),), ())), Line("^z$")]  # fmt: skip
    assert in_order(items) == ["^a\\r?$", "^t\\r?$", "^t\\r?$", "(?:^x\\r?$|^y\\r?$)", "^z\\r?$"]


def test_a_sw_irq_priority_the_core_lacks_is_refused() -> None:
    plan = _plan(SW_IRQ, "esp32s3")
    plan["operations"][1]["irq_priority"] = 2
    result = run_plan(plan)
    refusal = next(e for e in result.evidence if e.code == "E_TARGET_UNSUPPORTED")
    assert "fixed levels 1, 3" in refusal.message
    fixed = refusal.relaxations[1].apply(plan)
    files = _clean(_lowered(fixed))
    assert "esp_intr_alloc(ETS_INTERNAL_SW1_INTR_SOURCE, ESP_INTR_FLAG_LEVEL3" in files["main/main.c"]


def test_plans_without_a_behaviour_keep_app_main_and_the_pytest_file_as_they_were() -> None:
    result = _lowered(EXAMPLES / "events_espidf_reactions.yaml")
    assert result.lowered is not None
    files = result.lowered.files
    main = files["main/main.c"]
    assert "rac_behaviour_run" not in main and "rac_await" not in main and "rac_labels" not in main
    assert "static atomic_uint rac_reported;" in main and 'ESP_LOGI(TAG, "started' in main
    assert "PREDICTED" not in files[PYTEST_FILE] and "OPERATIONS = " in files[PYTEST_FILE]


#: A flash read over SPI (command, then a 3-byte address from the payload) and a write-only I2C register update,
#: each through the behaviour's own buffers.
BUS: dict[str, Any] = {
    "target": "esp32s3", "framework": "espidf",
    "resources": {"devices": [
        {"name": "flash_chip", "bus": "spi", "controller": "SPI2", "chip_select": "GPIO10", "frequency_hz": 1000000},
        {"name": "dac", "bus": "i2c", "controller": "I2C0", "address": 0x60, "frequency_hz": 400000}]},
    "operations": [
        {"op": "spi_transfer", "name": "flash", "device": "flash_chip", "register_index": 0x03, "write_bytes": 3,
         "read_bytes": 4},
        {"op": "i2c_transfer", "name": "level", "device": "dac", "register_index": 0x40, "write_bytes": 2,
         "read_bytes": 0, "interval_ms": 500}],
    "behaviour": {
        "vars": [{"name": "page", "type": "bytes", "size": 4}, {"name": "set", "type": "bool", "init": False}],
        "triggers": [{"at": "boot", "do": [
            {"act": {"op": "flash", "action": "transfer", "args": {"tx": {"hex": "00 10 00"}}, "into": "page"}},
            {"act": {"op": "level", "action": "transfer", "args": {"tx": {"hex": "0f ff"}}, "ok": "set"}},
            {"print": "page={page} set={set}"}]}],
    },
}  # fmt: skip


def test_bus_transfers_send_the_payload_and_read_into_a_variable() -> None:
    main = _clean(_lowered(BUS))["main/main.c"]
    assert "(void)flash_transfer((const uint8_t[]){0x00U, 0x10U, 0x00U}, 3U);" in main
    assert "rac_b_copy(rac_v0_page, &rac_v0_page_len, 4U, flash_in, flash_in_len);" in main
    assert "out[1U + i] = i < length ? data[i] : 0U;" in main and "flash_in[i] = back[1U + i];" in main
    assert "rac_v1_set = level_transfer((const uint8_t[]){0x0fU, 0xffU}, 2U);" in main
    assert "i2c_master_transmit(dac_dev, out, 1U + count, 100) == ESP_OK" in main
    # Each transfer reports after its first attempts: app_main waits as long as they may take.
    assert "rac_await(0U, 1300U);" in main and "rac_await(1U, 1300U);" in main


def test_a_behaviour_transfer_beside_periodic_spi_transfers_is_refused() -> None:
    plan = _plan(BUS, "esp32s3")
    plan["operations"][0]["interval_ms"] = 200
    result = run_plan(plan)
    refusal = next(e for e in result.evidence if e.code == "E_TARGET_UNSUPPORTED")
    assert "SPI master driver" in refusal.message and "operations[0].interval_ms" in (refusal.location or "")
    assert run_plan(refusal.relaxations[0].apply(plan)).status is Status.PASS
