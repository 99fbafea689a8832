"""``watchdog.report_expiry``: the next boot says whether the previous reset was this watchdog's expiry.

``reset_cause`` reads the chip's reset cause on every framework (Zephyr hwinfo RESET_WATCHDOG, ESP-IDF
esp_reset_reason, STM32 HAL RCC_FLAG_<IWDG>RST, bare-metal RCC/POWER reset flags from the SVD facts) and
clears it; ``channel`` also has the expiry callback store a tagged word in ``__noinit`` RAM, only where the
chip pack says the driver runs a callback from an expiry interrupt and RAM survives the reset
(E_WATCHDOG_CALLBACK otherwise, relaxed to ``reset_cause``). The callback makes one store and no print, so
the project's own static verifier passes it (E_ISR_LOGGING when it prints: a bad source here). The
STM32F407 bare-metal image is built with arm-none-eabi-gcc and run in QEMU, whose RCC reports no
watchdog reset.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import require_tool
from seeded_kernel import seeded

from rac_fw.contract import Status
from rac_fw.domains.firmware.backends.base import BuildRequest, RunRequest
from rac_fw.domains.firmware.backends.gcc import GccBuilder
from rac_fw.domains.firmware.backends.qemu import QemuRunner
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower, write_artifact
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.domains.firmware.verify.console import plan_expectations
from rac_fw.resources import data_dir

ROOT = Path(__file__).resolve().parent
BAD = ROOT / "bad_sources"
WDT = {"op": "watchdog", "name": "wdt", "timeout_ms": 2000, "feed_interval_ms": 500}


def _plan(target: str, framework: str, mode: str, **extra: Any) -> dict[str, Any]:
    return {"target": target, "framework": framework, "operations": [{**WDT, "report_expiry": mode, **extra}]}


def _main(plan: dict[str, Any], path: str) -> str:
    return lower(parse_plan(plan), load_target(plan["target"]), plan["framework"]).files[path]


# --- facts and the obligation ------------------------------------------------------------------------


def test_chip_facts_state_the_callback_and_the_retained_ram() -> None:
    nrf = load_target("nrf52840").watchdogs["WDT"]
    assert (nrf.expiry_callback, nrf.ram_retained_on_reset) == (True, True)
    assert load_target("stm32f407").watchdogs["IWDG"].expiry_callback is False
    h7 = load_target("stm32h743").watchdogs["IWDG1"]
    assert (h7.expiry_callback, h7.ram_retained_on_reset) == (False, None)


SEEDED = [
    ("stm32f407-zephyr", _plan("stm32f407", "zephyr", "channel"),
     {"wdt", "IWDG", "expiry_callback", "ram_retained_on_reset"}),
    ("stm32h743-zephyr", _plan("stm32h743", "zephyr", "channel"), {"wdt", "IWDG1", "expiry_callback"}),
    ("esp32s3-zephyr", _plan("esp32s3", "zephyr", "channel"), {"wdt", "MWDT0", "expiry_callback"}),
    ("nrf52840-baremetal", _plan("nrf52840", "baremetal", "channel"), {"wdt", "WDT", "baremetal"}),
    ("stm32f407-hal", _plan("stm32f407", "hal", "channel"), {"wdt", "IWDG", "hal"}),
    ("esp32s3-espidf", _plan("esp32s3", "espidf", "channel"), {"wdt", "TASK_WDT", "espidf"}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "objects"), SEEDED, ids=[c[0] for c in SEEDED])
def test_a_channel_record_the_target_cannot_keep_is_refused_and_reset_cause_validates(
    case: str, plan: dict[str, Any], objects: set[str]
) -> None:
    evidence, broken = seeded(plan, "E_WATCHDOG_CALLBACK")
    assert objects <= set(evidence.objects), evidence.objects
    assert [m.unit for m in evidence.magnitudes] == ["ms"]
    patch = [{"op": "replace", "path": ["operations", 0, "report_expiry"], "value": "reset_cause"}]
    assert [r.patch for r in evidence.relaxations] == [patch]
    assert broken == []


def test_the_example_is_clean_wherever_a_watchdog_is_realized() -> None:
    example = data_dir("examples") / "watchdog_expiry.yaml"
    cells = [
        (target, framework)
        for target in ("nrf52840", "nrf52840dongle", "stm32f407", "stm32h743", "esp32s3")
        for framework in load_target(target).frameworks
    ]
    assert len(cells) == 11
    for target, framework in cells:
        result = run_plan(example, target=target, framework=framework)
        assert result.status is Status.PASS, (target, framework, [(e.code, e.message) for e in result.evidence])
    assert load_plan(example).operations[0].report_expiry == "reset_cause"  # type: ignore[union-attr]


def test_the_channel_plan_is_clean_on_nrf52840_zephyr() -> None:
    result = run_plan(ROOT / "plans" / "nrf52840_zephyr_watchdog_expiry.yaml")
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]


# --- what each framework generates ---------------------------------------------------------------------


def test_zephyr_channel_callback_stores_one_word_and_the_boot_report_reads_it() -> None:
    plan = _plan("nrf52840", "zephyr", "channel")
    main = _main(plan, "src/main.c")
    assert ".callback = app_wdt_expired," in main
    assert "static volatile uint32_t app_wdt_expired_word __noinit;" in main
    body = main.split("static void app_wdt_expired(const struct device *dev, int channel_id)\n{", 1)[1].split("}", 1)[0]
    assert "printk" not in body and body.count(";") == 2  # ARG_UNUSED(dev) and the one store
    assert "app_wdt_expired_word = APP_WDT_EXPIRED_TAG | ((uint32_t)channel_id & 0xFFU);" in body
    report = main.split("static void app_wdt_report(void)", 1)[1]
    get, clear = report.index("hwinfo_get_reset_cause(&cause)"), report.index("hwinfo_clear_reset_cause()")
    assert get < report.index("RESET_WATCHDOG") < clear
    assert '"rac: %s expired before this boot (channel %u)\\n"' in report
    assert '"rac: %s no expiry before this boot\\n"' in report
    # The report runs in main's set-up, before the watchdog is installed.
    setup = main.split("static int app_wdt_setup(void)\n{", 1)[1].split("}", 1)[0]
    assert setup.index("app_wdt_report();") < setup.index("return app_wdt_install();")
    prj = lower(parse_plan(plan), load_target("nrf52840"), "zephyr").files["prj.conf"]
    assert "CONFIG_HWINFO=y" in prj and "#include <zephyr/drivers/hwinfo.h>" in main


def test_zephyr_thread_fed_watchdog_still_reports_from_main() -> None:
    data = _plan("nrf52840", "zephyr", "reset_cause", feed_thread="feeder")
    data["resources"] = {"threads": [{"name": "feeder", "priority": 2, "stack_bytes": 1024}]}
    assert run_plan(data).status is Status.PASS
    main = _main(data, "src/main.c")
    assert ".callback = NULL," in main and "__noinit" not in main
    assert "err = app_wdt_setup();" in main.split("int main(void)", 1)[1]
    assert '"rac: %s %s before this boot\\n"' in main


def test_without_report_expiry_nothing_changes() -> None:
    plan = {"target": "nrf52840", "framework": "zephyr", "operations": [WDT]}
    files = lower(parse_plan(plan), load_target("nrf52840"), "zephyr").files
    assert "hwinfo" not in files["src/main.c"] and "CONFIG_HWINFO" not in files["prj.conf"]
    assert ".callback = NULL," in files["src/main.c"]


def test_espidf_reports_the_three_watchdog_reset_reasons() -> None:
    main = _main(_plan("esp32s3", "espidf", "reset_cause"), "main/main.c")
    assert '#include "esp_system.h"' in main
    boot = main.index('printf("rac: boot %s\\n"')
    reason = main.index("esp_reset_reason()")
    assert boot < reason < main.index("esp_task_wdt_reconfigure(")
    for name in ("ESP_RST_TASK_WDT", "ESP_RST_INT_WDT", "ESP_RST_WDT"):
        assert f"wdt_reason == {name}" in main


@pytest.mark.parametrize(("target", "flag"), [("stm32f407", "RCC_FLAG_IWDGRST"), ("stm32h743", "RCC_FLAG_IWDG1RST")])
def test_hal_reads_the_iwdg_reset_flag_then_clears_them_before_the_watchdog_starts(target: str, flag: str) -> None:
    main = _main(_plan(target, "hal", "reset_cause"), "Core/Src/main.c")
    start = main.split("int main(void)", 1)[1]
    read = start.index(f"__HAL_RCC_GET_FLAG({flag}) != 0U")
    assert start.index('rac_report("rac: boot "') < read < start.index("__HAL_RCC_CLEAR_RESET_FLAGS();")
    assert start.index("__HAL_RCC_CLEAR_RESET_FLAGS();") < start.index("MX_IWDG_Init();")
    assert 'rac_report("rac: " "wdt" " expired before this boot\\r\\n");' in start


@pytest.mark.parametrize(
    ("target", "read", "clear"),
    [
        ("stm32f407", "(RCC->CSR & RCC_CSR_WDGRSTF_Msk) != 0U", "RCC->CSR |= RCC_CSR_RMVF_Msk;"),
        ("stm32h743", "(RCC->RSR & RCC_RSR_IWDG1RSTF_Msk) != 0U", "RCC->RSR |= RCC_RSR_RMVF_Msk;"),
        ("nrf52840", "(POWER->RESETREAS & POWER_RESETREAS_DOG_Msk) != 0U",
         "POWER->RESETREAS = POWER_RESETREAS_DOG_Msk;"),
    ],
)  # fmt: skip
def test_baremetal_reset_flag_comes_from_the_svd_facts(target: str, read: str, clear: str) -> None:
    main = _main(_plan(target, "baremetal", "reset_cause"), "src/main.c")
    assert main.index(read) < main.index(clear) < main.index('rac_puts("ok ')


# --- the project's own static verifier ------------------------------------------------------------------

#: Bad source → (framework, support prj.conf for Zephyr); each carries one `/* expect: E_CODE */` marker.
VERIFIER = {
    "zephyr/watchdog_expiry_callback_prints": "watchdog_prj.conf",
    "zephyr/watchdog_reset_cause_cleared_before_read": "watchdog_prj.conf",
    "zephyr/watchdog_reset_cause_unchecked": "watchdog_prj.conf",
    "zephyr/watchdog_wakeup_cause_unchecked": "watchdog_prj.conf",
    "zephyr/watchdog_hwinfo_no_kconfig": "prj.conf",
    "hal/watchdog_reset_flags_cleared_before_read": None,
}


def _files(name: str, conf: str | None) -> tuple[str, dict[str, str], str]:
    framework, stem = name.split("/")
    text = (BAD / framework / f"{stem}.c").read_text()
    if framework == "zephyr":
        return framework, {"src/main.c": text, "prj.conf": (BAD / "zephyr" / "support" / str(conf)).read_text()}, text
    support = BAD / "hal" / "support"
    files = {
        "Src/main.c": text,
        "Inc/stm32h7xx_hal_conf.h": (support / "stm32h7xx_hal_conf.h").read_text(),
        "Src/stm32h7xx_hal_msp.c": (support / "stm32h7xx_hal_msp.c").read_text(),
    }
    return framework, files, text


@pytest.mark.parametrize("name", sorted(VERIFIER))
def test_each_watchdog_expiry_defect_is_caught_at_its_line_and_nothing_else(name: str) -> None:
    framework, files, text = _files(name, VERIFIER[name])
    line, code = next(
        (i + 1, m.group(1)) for i, t in enumerate(text.splitlines()) if (m := re.search(r"expect: (E_\w+)", t))
    )
    result = verify_sources(files, framework, None)
    assert {e.code for e in result.evidence} == {code}, [(e.code, e.location, e.message) for e in result.evidence]
    where = {e.location for e in result.evidence}
    main = next(iter(files))
    assert any(w.startswith(f"{main}:{line}") for w in where) or (code == "E_KCONFIG_MISSING" and "prj.conf" in where)


def test_every_watchdog_bad_source_is_exercised() -> None:
    on_disk = {f"{p.parent.name}/{p.stem}" for p in BAD.glob("*/watchdog_*.c")}
    assert on_disk == set(VERIFIER)


def test_the_repaired_twins_verify_clean() -> None:
    """The callback storing a word instead of printing, and clear-after-read, pass: each rule fires on its defect."""
    _, files, text = _files("zephyr/watchdog_expiry_callback_prints", "watchdog_prj.conf")
    files["src/main.c"] = text.replace(
        '\tprintk("wdt channel %d expiring\\n", channel_id); /* expect: E_ISR_LOGGING */',
        "\texpired_word = 0x57445400UL | (uint32_t)channel_id;",
    ).replace("static void expired(", "static volatile uint32_t expired_word __noinit;\n\nstatic void expired(")
    result = verify_sources(files, "zephyr", None)
    assert result.ok, [(e.code, e.location, e.message) for e in result.evidence]
    _, files, text = _files("hal/watchdog_reset_flags_cleared_before_read", None)
    files["Src/main.c"] = text.replace("    __HAL_RCC_CLEAR_RESET_FLAGS(); /* expect: E_CALL_ORDER */\n", "").replace(
        "        return 2;\n    }\n", "        return 2;\n    }\n    __HAL_RCC_CLEAR_RESET_FLAGS();\n"
    )
    result = verify_sources(files, "hal", None)
    assert result.ok, [(e.code, e.location, e.message) for e in result.evidence]


@pytest.mark.parametrize(
    ("target", "framework", "mode"),
    [("nrf52840", "zephyr", "channel"), ("stm32h743", "zephyr", "reset_cause"), ("esp32s3", "espidf", "reset_cause"),
     ("stm32f407", "hal", "reset_cause"), ("stm32h743", "hal", "reset_cause"), ("nrf52840", "baremetal", "reset_cause"),
     ("stm32h743", "baremetal", "reset_cause")],
)  # fmt: skip
def test_generated_reports_verify_clean(target: str, framework: str, mode: str) -> None:
    result = run_plan(_plan(target, framework, mode))
    assert result.status is Status.PASS, [(e.code, e.location, e.message) for e in result.evidence]


# --- built and run -------------------------------------------------------------------------------------


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_tool("arm-none-eabi-gcc")
    monkeypatch.setenv("RAC_FW_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("target", ["nrf52840", "stm32h743"])
@pytest.mark.usefixtures("tools")
def test_baremetal_report_compiles_warning_free(target: str, tmp_path: Path) -> None:
    src = tmp_path / "src"
    write_artifact(lower(parse_plan(_plan(target, "baremetal", "reset_cause")), load_target(target), "baremetal"), src)
    result = GccBuilder().build(BuildRequest(src, target, "baremetal", tmp_path / "build"))
    assert result.ok and result.image is not None, [e.message for e in result.evidence]


@pytest.mark.usefixtures("tools")
def test_stm32f407_baremetal_in_qemu_reports_no_expiry_then_runs(tmp_path: Path) -> None:
    require_tool("qemu-system-arm")
    plan = load_plan(ROOT / "plans" / "stm32f407_baremetal_watchdog_expiry.yaml")
    src = tmp_path / "src"
    write_artifact(lower(plan, load_target("stm32f407"), "baremetal"), src)
    built = GccBuilder().build(BuildRequest(src, "stm32f407", "baremetal", tmp_path / "build"))
    assert built.ok and built.image is not None, [e.message for e in built.evidence]
    expect = plan_expectations(plan, "USART2")
    ran = QemuRunner().run(RunRequest(built.image, "stm32f407", expect, 10.0, tmp_path / "r"))
    assert ran.ok, (ran.output, [e.message for e in ran.evidence])
    # QEMU 7.2's netduinoplus2 RCC reads CSR as 0: no watchdog reset flag, so the 'no expiry' line.
    assert ran.output.splitlines() == [
        "rac: boot stm32f407",
        "rac: wdt no expiry before this boot",
        "rac: wdt ok IWDG timeout_ms=2000.0 divider=16 reload=3999 feed_ms=500",
        "rac: done",
    ]
