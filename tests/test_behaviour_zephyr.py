"""The behaviour layer rendered for Zephyr: clean C on every Zephyr board, the Kconfig it needs, interrupt vs
deferred contexts, persistence in settings, the predicted console in the receipt and in twister's sample.yaml.

No Zephyr tree can be fetched here, so the generated apps are judged by the independent static verifier (API
catalogs, ISR rules, Kconfig consistency) and by the run judge on consoles written as the app prints them.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.ops.bus.i2c_transfer import RETRY_PAUSE_MS
from rac_fw.domains.firmware.pipeline import PlanResult, run_plan
from rac_fw.domains.firmware.plan.behaviour.console import judge
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: What the bus behaviour prints: the bytes read are not determined by the plan, their format is.
PRINTED = "^id=(?:[0-9a-f]{2})* ok=(?:true|false) back=(?:[0-9a-f]{2})*$"
ZEPHYR_TARGETS = ("nrf52840", "stm32f407", "stm32h743", "native_sim", "nrf52840dongle")

#: Software interrupts fired from the boot steps and counted in the handler, an LED toggled there.
SW_IRQ: dict[str, Any] = {
    "framework": "zephyr",
    "operations": [{"op": "gpio_set", "name": "led", "led": "led0"}, {"op": "sw_irq", "name": "soft"}],
    "behaviour": {
        "vars": [{"name": "hits", "type": "u32", "init": 0}],
        "triggers": [
            {"at": "boot", "do": [{"repeat": {"times": 5, "do": [{"act": "soft.fire"}]}}, {"print": "hits={hits}"}]},
            {"event": "soft.irq", "times": 5, "do": [{"set": {"hits": "hits + 1"}}, {"act": "led.toggle"}]},
        ],
    },
}

#: A boot counter kept in settings, a button edge, a timer, a polled input, an ADC read and a watchdog feed.
RICH: dict[str, Any] = {
    "framework": "zephyr",
    "operations": [
        {"op": "gpio_set", "name": "led", "led": "led0"},
        {"op": "gpio_input_irq", "name": "button", "button": "sw0", "edge": "falling"},
        {"op": "timer_periodic", "name": "tick", "period_ms": 100},
        {"op": "gpio_read", "name": "sw", "button": "sw1", "interval_ms": 50},
        {"op": "adc_read", "name": "vin", "channel": {"path": "zephyr_user", "channel_index": 0}},
        {"op": "watchdog", "name": "wdt", "timeout_ms": 2000, "feed_interval_ms": 500},
    ],
    "behaviour": {
        "vars": [
            {"name": "boots", "type": "u32", "init": 0, "persist": True},
            {"name": "presses", "type": "u32", "init": 0},
            {"name": "mv", "type": "i32", "unit": "mV", "init": 0},
        ],
        "triggers": [
            {"at": "boot", "do": [{"set": {"boots": "boots + 1"}}, {"print": "boot {boots}"}]},
            {"event": "button.edge", "do": [{"print": "press"}, {"set": {"presses": "presses + 1"}}]},
            {"event": "tick.expiry", "times": 3, "do": [{"act": "led.toggle"}]},
            {"every": "500ms", "times": 2, "do": [
                {"act": {"op": "vin", "action": "read", "into": "mv"}}, {"act": "wdt.feed"},
                {"if": {"cond": "sw.level", "then": [{"print": "sw on"}], "else": [{"print": "sw off"}]}},
                {"print": "mv={mv} presses={presses}"},
            ]},
        ],
    },
}  # fmt: skip


def _plan(base: dict[str, Any], target: str, **changes: Any) -> dict[str, Any]:
    plan = copy.deepcopy(base)
    plan["target"] = target
    plan.update(changes)
    return plan


def _lowered(plan: dict[str, Any] | Path, **kw: Any) -> PlanResult:
    result = run_plan(plan, **kw)
    assert result.status is Status.PASS, [f"{e.code} {e.location}: {e.message}" for e in result.evidence]
    assert result.lowered is not None
    return result


def _notes(result: PlanResult) -> list[str]:
    assert result.lowered is not None
    return list(result.lowered.receipt.notes)


@pytest.mark.parametrize("target", ZEPHYR_TARGETS)
def test_counter_example_lowers_clean_on_every_zephyr_board(target: str) -> None:
    result = _lowered(EXAMPLES / "behaviour_counter.yaml", target=target, framework="zephyr")
    assert result.lowered is not None
    files = result.lowered.files
    verdicts = verify_sources(files, "zephyr", load_target(target))
    assert not verdicts.evidence, [f"{e.code} {e.location}: {e.message}" for e in verdicts.evidence]
    main = files["src/main.c"]
    # main reports the operation, then hands over to the behaviour, which prints "rac: done" itself.
    assert main.index('rac_ok("led")') < main.index("rac_behaviour_run();")
    assert "rac_reported" not in main and "posix_exit(code)" in main
    trace = result.lowered.receipt.trace
    assert trace is not None and [t["line"] for t in trace[1:3]] == ["^rac: led ok$", "^item 0$"]
    sample = yaml.safe_load(files["sample.yaml"])["common"]["harness_config"]
    assert sample["ordered"] is True and sample["regex"] == [t["line"] for t in trace]


@pytest.mark.parametrize("target", ("nrf52840", "native_sim"))
def test_sw_irq_fires_through_irq_offload_and_runs_its_trigger_in_the_interrupt(target: str) -> None:
    result = _lowered(_plan(SW_IRQ, target))
    assert result.lowered is not None
    files = result.lowered.files
    main = files["src/main.c"]
    assert "CONFIG_IRQ_OFFLOAD=y" in files["prj.conf"] and "CONFIG_TEST=y" in files["prj.conf"]  # depends on TEST
    assert "irq_offload(app_soft_isr, NULL);" in main and "#include <zephyr/irq_offload.h>" in main
    # No step of the irq trigger blocks: its hook calls the trigger function in the interrupt.
    hook = re.search(r"void rac_b_on_soft__irq\(void\)\n\{(.*?)\n\}", main, re.S)
    assert hook is not None and "rac_t1_t1();" in hook.group(1) and "_since[" not in hook.group(1)
    assert any("t1: runs in the interrupt handler of irq" in n for n in _notes(result))
    assert any("variable hits is shared" in n for n in _notes(result))
    lines = [t["line"] for t in result.lowered.receipt.trace or []]
    assert lines == ["^rac: boot\\b.*$", "^rac: led ok$", "^rac: soft ok$", "^hits=5$", "^rac: done$"]


def test_the_verifier_judges_the_irq_offload_routine_as_an_interrupt() -> None:
    result = _lowered(_plan(SW_IRQ, "native_sim"))
    assert result.lowered is not None
    files = dict(result.lowered.files)
    routine = "\tARG_UNUSED(param);\n"
    files["src/main.c"] = files["src/main.c"].replace(routine, routine + "\tk_msleep(1);\n", 1)
    found = verify_sources(files, "zephyr", load_target("native_sim")).evidence
    assert [e.code for e in found] == ["E_ISR_BLOCKING"] and "app_soft_isr" in (found[0].location or "")


def test_a_blocking_step_moves_the_event_to_the_thread_and_the_receipt_says_so() -> None:
    plan = _plan(SW_IRQ, "nrf52840")
    plan["behaviour"]["triggers"][1]["do"].insert(0, {"print": "irq"})
    result = _lowered(plan)
    assert result.lowered is not None
    main = result.lowered.files["src/main.c"]
    hook = re.search(r"void rac_b_on_soft__irq\(void\)\n\{(.*?)\n\}", main, re.S)
    assert hook is not None and "rac_t1_t1_since[tail] = rac_b_now;" in hook.group(1)
    assert "rac_t1_t1();" not in hook.group(1)
    assert any("its steps run in the behaviour's thread" in n and "print" in n for n in _notes(result))


@pytest.mark.parametrize(("target", "sectors"), [("nrf52840", 8), ("native_sim", 4), ("nrf52840dongle", 4)])
def test_a_persisted_variable_is_a_setting_with_the_kconfig_it_needs(target: str, sectors: int) -> None:
    plan = _plan(RICH, target, operations=RICH["operations"][:1])
    plan["behaviour"]["triggers"] = plan["behaviour"]["triggers"][:1]
    plan["behaviour"]["vars"] = plan["behaviour"]["vars"][:1]
    result = _lowered(plan)
    assert result.lowered is not None
    files = result.lowered.files
    prj = files["prj.conf"]
    for symbol in ("CONFIG_SETTINGS=y", "CONFIG_SETTINGS_NVS=y", "CONFIG_NVS=y", "CONFIG_FLASH_MAP=y",
                   f"CONFIG_SETTINGS_NVS_SECTOR_COUNT={sectors}"):  # fmt: skip
        assert symbol in prj, symbol
    main = files["src/main.c"]
    assert 'settings_load_subtree_direct("rac_b", rac_v0_boots_restore, NULL)' in main
    assert 'settings_save_one("rac_b/boots", &value, sizeof(value))' in main
    assert "(void)k_work_submit(&rac_v0_boots_save_work);" in main
    assert main.index("settings_load_subtree_direct") < main.index("rac_t0_t0();\n\trac_b_exit(0);")
    assert not verify_sources(files, "zephyr", load_target(target)).evidence


def test_events_outputs_and_actions_render_in_their_contexts() -> None:
    result = _lowered(_plan(RICH, "nrf52840"))
    assert result.lowered is not None
    files = result.lowered.files
    assert "CONFIG_ADC=y" in files["prj.conf"] and "CONFIG_WATCHDOG=y" in files["prj.conf"]
    main = files["src/main.c"]
    # The edge trigger prints, so the GPIO callback only queues it; the timer's toggle runs in its expiry.
    assert any("t1: edge is raised in an interrupt" in n for n in _notes(result))
    assert any("t2: runs in the interrupt handler of expiry" in n for n in _notes(result))
    assert "rac_b_on_button__edge();" in main and "rac_b_on_tick__expiry();" in main
    assert "(void)app_vin_sample();" in main and "(void)app_wdt_feed_now();" in main
    assert "(atomic_get(&app_sw_value) != 0)" in main
    assert "printk(\"vin\" \"[%u]" not in main  # with a behaviour the ADC prints no value lines


def test_persisting_where_zephyr_has_no_storage_partition_is_refused_with_working_relaxations() -> None:
    plan = _plan(RICH, "stm32f407")
    plan["operations"] = [plan["operations"][0]]
    plan["behaviour"]["triggers"] = plan["behaviour"]["triggers"][:1]
    plan["behaviour"]["vars"] = plan["behaviour"]["vars"][:1]
    result = run_plan(plan)
    assert result.status is Status.INVALID
    refusal = next(e for e in result.evidence if e.code == "E_PARTITION_MISSING")
    assert refusal.location is not None and "behaviour.vars[0].persist" in refusal.location
    fixes = {r.description: r for r in refusal.relaxations}
    assert set(fixes) == {"use framework baremetal", "use framework hal", "do not persist boots"}
    for fix in fixes.values():
        assert run_plan(fix.apply(plan)).status is Status.PASS, fix.description


def test_persisting_where_the_storage_blocks_do_not_suit_nvs_is_refused() -> None:
    plan = _plan(RICH, "stm32h743", operations=RICH["operations"][:1])
    plan["behaviour"]["triggers"] = plan["behaviour"]["triggers"][:1]
    plan["behaviour"]["vars"] = plan["behaviour"]["vars"][:1]
    result = run_plan(plan)
    refusal = next(e for e in result.evidence if e.code == "E_BEHAVIOUR_PERSIST")
    assert "1 erase block(s) of 131072 bytes" in refusal.message
    assert run_plan(refusal.relaxations[0].apply(plan)).status is Status.PASS


def test_persisting_beside_an_operation_with_its_own_file_system_is_refused() -> None:
    plan = _plan(RICH, "nrf52840")
    plan["operations"].append({"op": "kv_record", "name": "rec", "key": "rec", "value_bytes": 16})
    result = run_plan(plan)
    shared = [e for e in result.evidence if e.code == "E_PARTITION_SHARED"]
    assert result.status is Status.INVALID and shared
    assert run_plan(shared[0].relaxations[0].apply(plan)).status is Status.PASS


def test_bus_transfers_send_the_payload_and_read_into_a_variable() -> None:
    plan = {
        "target": "stm32h743", "framework": "zephyr",
        "resources": {"devices": [
            {"name": "flash_chip", "bus": "spi", "controller": "SPI1", "chip_select": "PD14", "frequency_hz": 1000000},
            {"name": "tmp102", "bus": "i2c", "controller": "I2C1", "address": 0x48, "frequency_hz": 100000}]},
        "operations": [
            {"op": "spi_transfer", "name": "jedec", "device": "flash_chip", "register_index": 0x9F, "read_bytes": 3},
            {"op": "i2c_transfer", "name": "temp", "device": "tmp102", "register_index": 1, "write_bytes": 2,
             "read_bytes": 2}],
        "behaviour": {
            "vars": [{"name": "id", "type": "bytes", "size": 3}, {"name": "back", "type": "bytes", "size": 2},
                     {"name": "ok", "type": "bool", "init": False}],
            "triggers": [{"at": "boot", "do": [
                {"act": {"op": "jedec", "action": "transfer", "into": "id", "ok": "ok"}},
                {"act": {"op": "temp", "action": "transfer", "args": {"tx": {"hex": "60 a0"}}, "into": "back"}},
                {"print": "id={id} ok={ok} back={back}"}]}],
        },
    }  # fmt: skip
    result = _lowered(plan)
    assert result.lowered is not None
    main = result.lowered.files["src/main.c"]
    assert "rac_v2_ok = app_jedec_transfer(NULL, 0U);" in main
    assert "(void)app_temp_transfer((const uint8_t[]){0x60U, 0xa0U}, 2U);" in main
    assert "rac_b_copy(rac_v0_id, &rac_v0_id_len, 3U, app_jedec_in, app_jedec_in_len);" in main
    # Zephyr's I2C calls take no timeout (the plan's timeout_ms is unrealized there): attempts are spaced by the
    # retry pause, as the periodic step's are.
    helper = re.search(r"static bool app_temp_transfer\(.*?\n\}", main, re.S)
    assert helper is not None and f"k_msleep({RETRY_PAUSE_MS});" in helper.group(0)
    assert not verify_sources(dict(result.lowered.files), "zephyr", load_target("stm32h743")).evidence
    lines = [t["line"] for t in result.lowered.receipt.trace or []]
    assert lines[3:] == [PRINTED, "^rac: done$"]


def test_an_operation_that_prints_makes_the_trace_admit_other_lines() -> None:
    quiet = _plan(SW_IRQ, "native_sim")
    loud = _plan(SW_IRQ, "native_sim")
    loud["operations"].append({"op": "uart_print", "name": "hello", "message": "hello", "repeat_interval_ms": 300})
    quiet_result, loud_result = _lowered(quiet), _lowered(loud)
    assert loud_result.lowered is not None
    sample = yaml.safe_load(loud_result.lowered.files["sample.yaml"])["common"]["harness_config"]
    assert sample["ordered"] is False and "^rac: hello ok\\b" in sample["regex"]
    console = ["*** Booting Zephyr OS build v4.1.0 ***", "rac: boot native_sim", "rac: led ok", "rac: soft ok",
               "hits=5", "rac: done"]  # fmt: skip
    noisy = console[:4] + ["hello", "rac: hello ok", "hello"] + console[4:]
    for result, transcript, passed in ((quiet_result, console, True), (quiet_result, noisy, False),
                                       (loud_result, noisy, True)):  # fmt: skip
        plan = parse_plan(quiet if result is quiet_result else loud)
        verdicts, _ = judge(plan, load_target("native_sim"), "zephyr", "\n".join(transcript))
        assert verdicts and verdicts[0].passed is passed, (transcript, verdicts)
    wrong = console[:4] + ["hits=4", "rac: done"]
    verdicts, evidence = judge(parse_plan(quiet), load_target("native_sim"), "zephyr", "\n".join(wrong))
    assert not verdicts[0].passed and evidence


def test_plans_without_a_behaviour_keep_zephyr_main_as_it_was() -> None:
    result = _lowered(EXAMPLES / "gpio_blink.yaml", target="native_sim", framework="zephyr")
    assert result.lowered is not None
    main = result.lowered.files["src/main.c"]
    assert "rac_behaviour_run" not in main and "rac_reported" in main and "rac_ops_poll" not in main
    sample = yaml.safe_load(result.lowered.files["sample.yaml"])["common"]["harness_config"]
    assert sample["ordered"] is False and sample["regex"][-1] == "^rac: done$"


def test_a_reset_reboots_the_board_and_the_predicted_console_spans_the_resets() -> None:
    result = _lowered(EXAMPLES / "behaviour_boot_counter.yaml", target="nrf52840", framework="zephyr")
    assert result.lowered is not None
    files = result.lowered.files
    assert "CONFIG_REBOOT=y" in files["prj.conf"] and "CONFIG_BOOT_BANNER=n" in files["prj.conf"]
    main = files["src/main.c"]
    assert "(void)k_work_queue_drain(&k_sys_work_q, false);\n\t\tsys_reboot(SYS_REBOOT_COLD);" in main
    regex = yaml.safe_load(files["sample.yaml"])["common"]["harness_config"]["regex"]
    assert regex.count("^rac: boot\\b.*$") == 3 and regex[-3:] == ["^boot number 3$", "^third boot reached$",
                                                                   "^rac: done$"]  # fmt: skip
    refused = run_plan(EXAMPLES / "behaviour_boot_counter.yaml", target="native_sim", framework="zephyr")
    reset = next(e for e in refused.evidence if e.code == "E_TARGET_UNSUPPORTED")
    assert "sys_reboot" in reset.message and "nrf52840" in reset.message and reset.relaxations


def test_a_persisted_value_larger_than_one_setting_is_refused() -> None:
    plan = _plan(RICH, "nrf52840", operations=RICH["operations"][:1])
    plan["behaviour"]["vars"] = [{"name": "blob", "type": "bytes", "size": 255, "persist": True}]
    plan["behaviour"]["triggers"] = [{"at": "boot", "do": [{"set": {"blob": {"fill": 7, "size": 255}}},
                                                           {"print": "{blob[0]}"}]}]  # fmt: skip
    result = run_plan(plan)
    refusal = next(e for e in result.evidence if e.code == "E_BEHAVIOUR_PERSIST")
    assert "SETTINGS_MAX_VAL_LEN" in refusal.message
    assert run_plan(refusal.relaxations[0].apply(plan)).status is Status.PASS
