"""The independent static verifier catches each seeded defect, at its line, and nothing in good sources.

Every file in ``tests/bad_sources/<framework>/bad/`` carries one defect and a ``/* expect: E_CODE */``
marker on the line the evidence must point at; the rest of the file is correct, so the test also demands
that no *other* code fires (each check is specific). The ``good`` projects are realistic applications
(Zephyr ADC/GPIO/watchdog/timer, Zephyr DMA on a cached M7, ESP-IDF, STM32H7 HAL with ADC DMA, bare
metal) that must verify clean on their targets.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from rac_fw.domains.firmware.facts.model import Board, Cache, Core, Target
from rac_fw.domains.firmware.verify import sdk, static
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.domains.firmware.verify.static import CHECKS, RULES
from rac_fw.domains.firmware.verify.static.dma_cache import _evaluate
from rac_fw.domains.firmware.verify.static.preprocess import _without_cplusplus

SOURCES = Path(__file__).resolve().parent / "bad_sources"
VERIFY_PACKAGE = Path(sdk.__file__).resolve().parents[1]

#: Where each framework's main C file lives in an artifact, and the support files copied next to it.
LAYOUT: dict[str, tuple[str, dict[str, str]]] = {
    "zephyr": ("src/main.c", {"prj.conf": "prj.conf", "app.overlay": "app.overlay"}),
    "espidf": ("main/main.c", {"sdkconfig.defaults": "sdkconfig.defaults"}),
    "hal": (
        "Src/main.c",
        {"Inc/stm32h7xx_hal_conf.h": "stm32h7xx_hal_conf.h", "Src/stm32h7xx_hal_msp.c": "stm32h7xx_hal_msp.c"},
    ),
    "baremetal": ("src/main.c", {}),
}


def _target(target_id: str) -> Target:
    """Minimal fact packs: only the facts the static verifier consults (board devicetree, caches, family)."""
    m7_cache = (Cache("dcache", 16384, 32), Cache("icache", 16384, 32))
    boards = {
        "nrf52840": (
            Core("cortex-m4f", "cortex-m4", "fpv4-sp-d16", True, (), 3),
            Board(
                name="nrf52840dk",
                zephyr_board="nrf52840dk/nrf52840",
                idf_target=None,
                hal_family=None,
                dt_aliases={
                    "led0": "led_0",
                    "led1": "led_1",
                    "sw0": "button_0",
                    "pwm-led0": "pwm_led_0",
                    "watchdog0": "wdt0",
                },
                dt_node_labels=("adc", "gpio0", "uart0", "pwm0", "i2c0", "spi1", "rtc0", "wdt0"),
                dt_chosen={"zephyr,console": "uart0"},
            ),
        ),
        "stm32h743": (
            Core("cortex-m7f", "cortex-m7", "fpv5-d16", True, m7_cache, 4),
            Board(
                name="nucleo_h743zi",
                zephyr_board="nucleo_h743zi",
                idf_target=None,
                hal_family="STM32H7",
                dt_aliases={"led0": "green_led", "sw0": "user_button", "watchdog0": "iwdg"},
                dt_node_labels=("dma1", "dma2", "adc1", "usart3", "gpiob", "iwdg"),
                dt_chosen={"zephyr,console": "usart3"},
            ),
        ),
        "stm32f407": (
            Core("cortex-m4f", "cortex-m4", "fpv4-sp-d16", True, (), 4),
            Board(name="stm32f4_disco", zephyr_board="stm32f4_disco", idf_target=None, hal_family="STM32F4"),
        ),
        "esp32s3": (
            Core("xtensa-lx7", "xtensa", None, False, (), None),
            Board(name="esp32s3_devkitc", zephyr_board=None, idf_target="esp32s3", hal_family=None),
        ),
    }
    core, board = boards[target_id]
    return Target(
        id=target_id,
        name=target_id,
        vendor="test",
        family=target_id,
        core=core,
        frameworks=("zephyr",),
        memory=(),
        bus_masters=(),
        dma=(),
        clocks=(),
        pins={},
        board=board,
    )


def _project(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): p.read_text() for p in sorted(directory.rglob("*")) if p.is_file()}


@dataclass(frozen=True)
class Case:
    """One seeded defect: the bad file, the target it is judged on, and where the evidence must point."""

    framework: str
    name: str
    target: str | None = None
    function: str | None = "main"
    """Enclosing function expected in the location (None: a file-scope line)."""
    location: str | None = None
    """Expected location when it is not the marked C line (a config file)."""
    support: dict[str, str] = field(default_factory=dict)
    """Support-file overrides: artifact path → file in ``support/``."""

    @property
    def path(self) -> Path:
        return SOURCES / self.framework / "bad" / f"{self.name}.c"

    def files(self) -> dict[str, str]:
        main, supports = LAYOUT[self.framework]
        directory = SOURCES / self.framework / "support"
        files = {dest: (directory / src).read_text() for dest, src in {**supports, **self.support}.items()}
        files[main] = self.path.read_text()
        return files

    def expected(self) -> tuple[str, str]:
        lines = self.path.read_text().splitlines()
        line, code = next((i + 1, m.group(1)) for i, t in enumerate(lines) if (m := re.search(r"expect: (E_\w+)", t)))
        if self.location is not None:
            return code, self.location
        where = f"{LAYOUT[self.framework][0]}:{line}"
        return code, f"{where} in {self.function}()" if self.function else where


CASES = [
    # check 1: parsing
    Case("zephyr", "parse_error"),
    Case("zephyr", "parse_error_in_struct", function=None),
    # check 2: known APIs, arity, deprecation, foreign frameworks
    Case("zephyr", "unknown_api"),
    Case("zephyr", "wrong_arity"),
    Case("zephyr", "foreign_api"),
    Case("espidf", "unknown_api", function="app_main"),
    Case("espidf", "foreign_api", function="app_main"),
    Case("espidf", "deprecated_adc", function="app_main"),
    Case("hal", "unknown_api"),
    Case("hal", "wrong_arity"),
    Case("hal", "foreign_api"),
    Case("baremetal", "foreign_api"),
    Case("baremetal", "unknown_api"),
    # … and declared by a header the unit includes (the header model)
    Case("zephyr", "undeclared_gpio", function=None),
    Case("hal", "undeclared_module", function=None),
    Case("espidf", "undeclared_driver", function="app_main"),
    # check 3: order, prerequisites, clocks, forbidden calls, DMA cache maintenance
    Case("zephyr", "order_setup_after_read"),
    Case("zephyr", "not_ready"),
    Case("zephyr", "forbidden_wdt_disable"),
    Case("zephyr", "dma_no_flush", target="stm32h743", support={"app.overlay": "empty.overlay"}),
    Case("zephyr", "dma_no_invalidate", target="stm32h743", support={"app.overlay": "empty.overlay"}),
    Case("espidf", "order_start_before_enable", function="app_main"),
    # … Bluetooth LE, Wi-Fi and sockets (verify/sdk/<fw>/{api,rules}.d/{ble,wifi,net}.*)
    Case("zephyr", "ble_advertise_before_enable", target="nrf52840", support={"prj.conf": "prj_ble.conf"}),
    Case("zephyr", "net_send_before_connect", support={"prj.conf": "prj_net.conf"}),
    Case("espidf", "ble_services_before_port_init", function="app_main"),
    Case("espidf", "wifi_start_before_init", function="app_main"),
    Case("espidf", "net_send_before_connect", function="app_main"),
    Case("hal", "missing_init"),
    Case("hal", "helper_before_init"),
    Case("hal", "clock_not_enabled"),
    Case("hal", "gpio_clock_after_write"),
    Case("hal", "dma_no_clean", target="stm32h743"),
    # … judged per buffer: the right buffer, on the right side of the start, over the whole transfer
    Case("zephyr", "dma_one_source_uncleaned", target="stm32h743", support={"app.overlay": "empty.overlay"}),
    Case("zephyr", "dma_clean_dest_twice", target="stm32h743", support={"app.overlay": "empty.overlay"}),
    Case("zephyr", "dma_invalidate_source", target="stm32h743", support={"app.overlay": "empty.overlay"}),
    Case("zephyr", "dma_short_invalidate", target="stm32h743", support={"app.overlay": "empty.overlay"}),
    Case("hal", "dma_one_source_uncleaned", target="stm32h743"),
    Case("hal", "dma_clean_dest_twice", target="stm32h743"),
    Case("hal", "dma_invalidate_source", target="stm32h743"),
    Case("hal", "dma_short_clean", target="stm32h743"),
    # check 4: interrupt context
    Case("zephyr", "isr_sleeps", function="on_press"),
    Case("zephyr", "isr_logs", function="expiry"),
    Case("zephyr", "isr_allocates", function="alarm_cb"),
    Case("zephyr", "isr_sem_forever", function="uart_isr"),
    Case("zephyr", "isr_mutex", function="on_press"),
    Case("espidf", "isr_queue_send", function="on_edge"),
    Case("espidf", "isr_logs", function="on_alarm"),
    Case("hal", "isr_blocking", function="HAL_GPIO_EXTI_Callback"),
    Case("hal", "isr_polling_transmit", function="HAL_UART_RxCpltCallback"),
    # … also when a local macro hides the call
    Case("zephyr", "isr_macro_log", function="expiry"),
    Case("hal", "isr_macro_blocking", function="HAL_GPIO_EXTI_Callback"),
    Case("baremetal", "isr_printf", function="USART2_IRQHandler"),
    # check 5: ISR-shared state
    Case("zephyr", "shared_not_volatile", function="on_press"),
    Case("espidf", "shared_not_volatile", function="on_edge"),
    Case("hal", "shared_not_volatile", function="HAL_GPIO_EXTI_Callback"),
    Case("baremetal", "shared_not_volatile", function="SysTick_Handler"),
    # check 6: unchecked results
    Case("zephyr", "unchecked_return"),
    Case("zephyr", "overwritten_return"),
    Case("espidf", "unchecked_return", function="app_main"),
    Case("hal", "unchecked_return"),
    Case("baremetal", "unchecked_return"),
    # no unused file-scope statics (HAL and Zephyr builds are -Wall clean)
    Case("zephyr", "unused_static", function=None),
    Case("hal", "unused_static", function=None),
    # check 7: configuration consistency
    Case("zephyr", "kconfig_missing", location="prj.conf", support={"prj.conf": "prj_no_pwm.conf"}),
    Case("zephyr", "float_format", location="prj.conf"),
    Case("zephyr", "dt_alias_missing", target="nrf52840", function=None),
    Case("zephyr", "dt_io_channel_index", target="nrf52840", function=None),
    Case(
        "espidf",
        "sdkconfig_wrong_chip",
        target="esp32s3",
        location="sdkconfig.defaults",
        support={"sdkconfig.defaults": "sdkconfig_esp32.defaults"},
    ),
    Case("hal", "module_disabled", location="Inc/stm32h7xx_hal_conf.h"),
    # … periph fragments: Kconfig choices, memory slabs, the thread analyzer
    Case("zephyr", "kconfig_choice_conflict", location="prj.conf", support={"prj.conf": "prj_two_log_modes.conf"}),
    Case(
        "espidf",
        "sdkconfig_choice_conflict",
        location="sdkconfig.defaults",
        support={"sdkconfig.defaults": "sdkconfig_two_levels.defaults"},
    ),
    Case("zephyr", "slab_alloc_unchecked"),
    Case("zephyr", "isr_slab_forever", function="expiry"),
    Case("zephyr", "thread_analyzer_off", location="prj.conf"),
    Case(
        "zephyr",
        "dt_binding_property_missing",
        target="nrf52840",
        location="app.overlay:3",
        support={"app.overlay": "shtcx_no_mode.overlay"},
    ),
    Case("hal", "family_mismatch", target="stm32f407", function=None),
    # power and crypto families (verify/sdk/<fw>/rules.d/{power,crypto}.yaml)
    Case("zephyr", "power_poweroff_no_kconfig", location="prj.conf"),
    Case("zephyr", "power_runtime_get_before_enable", support={"prj.conf": "prj_pm.conf"}),
    Case("zephyr", "power_lock_put_without_get", support={"prj.conf": "prj_pm.conf"}),
    Case("zephyr", "crypto_no_init", support={"prj.conf": "prj_crypto.conf"}),
    Case("zephyr", "crypto_rand", support={"prj.conf": "prj_crypto.conf"}),
    Case("zephyr", "crypto_destroy_before_key", support={"prj.conf": "prj_crypto.conf"}),
    Case("espidf", "crypto_gcm_no_init", function="app_main"),
    Case("zephyr", "crypto_key_literal", support={"prj.conf": "prj_crypto.conf"}),
    Case("espidf", "crypto_key_literal", function="app_main"),
    # PSA Internal Trusted Storage (verify/sdk/zephyr/rules.d/its.yaml)
    Case("zephyr", "its_get_before_set", support={"prj.conf": "prj_its.conf"}),
    Case("zephyr", "its_no_crypto_init", support={"prj.conf": "prj_its.conf"}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.framework}-{c.name}")
def test_each_seeded_defect_is_caught_at_its_line_and_nothing_else_fires(case: Case) -> None:
    code, location = case.expected()
    result = verify_sources(case.files(), case.framework, _target(case.target) if case.target else None)
    assert not result.ok
    codes = {e.code for e in result.evidence}
    assert codes == {code}, [(e.code, e.location, e.message) for e in result.evidence]
    assert location in {e.location for e in result.evidence if e.code == code}
    failed = [v for v in result.verdicts if not v.passed]
    assert failed and all(isinstance(v.measured, int) and v.measured > 0 and v.limit == 0 for v in failed)
    # The failing verdict is the rule whose registered checks declare the code.
    assert all(code in {c for _, codes in REGISTRY[v.predicate] for c in codes} for v in failed)


def test_every_bad_source_is_exercised() -> None:
    on_disk = {(p.parent.parent.name, p.stem) for p in SOURCES.glob("*/bad/*.c")}
    assert on_disk == {(c.framework, c.name) for c in CASES}


GOOD = [
    ("zephyr", "good", "nrf52840"),
    ("zephyr", "good_dma", "stm32h743"),
    ("zephyr", "good_attributes", "nrf52840"),
    ("zephyr", "good_attributes", "stm32h743"),
    ("espidf", "good", "esp32s3"),
    ("hal", "good", "stm32h743"),
    ("hal", "good_cubemx", "stm32h743"),
    ("hal", "good_cubemx", None),
    ("baremetal", "good", "stm32f407"),
    ("baremetal", "good", None),
    ("baremetal", "good_semihosting", "stm32f407"),
]


@pytest.mark.parametrize(("framework", "project", "target"), GOOD)
def test_realistic_good_sources_raise_no_false_alarm(framework: str, project: str, target: str | None) -> None:
    result = verify_sources(_project(SOURCES / framework / project), framework, _target(target) if target else None)
    assert [(e.code, e.location, e.message) for e in result.evidence] == []
    expected = [r.key for r in RULES if framework in r.frameworks]
    assert [v.predicate for v in result.verdicts] == expected
    assert all(v.passed and v.measured == 0 for v in result.verdicts)


def test_good_sources_really_exercise_the_isr_and_cache_checks() -> None:
    """A clean verdict means something only if ISRs were found and cache rules applied."""
    zephyr = static.build_program(_project(SOURCES / "zephyr" / "good"), sdk.rules("zephyr"))
    assert {"button_pressed", "tick_expiry"} <= set(static.isr_functions(zephyr, sdk.rules("zephyr")))
    idf = static.build_program(_project(SOURCES / "espidf" / "good"), sdk.rules("espidf"))
    assert {"button_isr", "on_alarm"} <= set(static.isr_functions(idf, sdk.rules("espidf")))
    hal = static.build_program(_project(SOURCES / "hal" / "good"), sdk.rules("hal"))
    assert {"HAL_ADC_ConvCpltCallback", "SysTick_Handler", "DMA1_Stream0_IRQHandler"} <= set(
        static.isr_functions(hal, sdk.rules("hal"))
    )
    # Removing the clean before the ADC DMA start on the cached H743 must be caught.
    files = _project(SOURCES / "hal" / "good")
    files["Src/main.c"] = (
        files["Src/main.c"]
        .replace("    SCB_CleanDCache_by_Addr((uint32_t *)adc_buf, sizeof(adc_buf));\n", "")
        .replace("SCB_InvalidateDCache_by_Addr((uint32_t *)adc_buf, sizeof(adc_buf));", "")
    )
    codes = {e.code for e in verify_sources(files, "hal", _target("stm32h743")).evidence}
    assert codes == {"E_CACHE_INVALIDATE_MISSING"}
    # On a core without a D-cache the same sources need no maintenance.
    assert verify_sources(files, "hal", None).ok


def _mutated(framework: str, project: str, path: str, old: str, new: str) -> dict[str, str]:
    """A good project with one edit (the edit must apply: a stale test would otherwise pass vacuously)."""
    files = _project(SOURCES / framework / project)
    assert old in files[path], (path, old)
    files[path] = files[path].replace(old, new, 1)
    return files


def _findings(files: dict[str, str], framework: str, target: str | None) -> list[tuple[str, str]]:
    return [
        (e.code, e.location) for e in verify_sources(files, framework, _target(target) if target else None).evidence
    ]


def _line(files: dict[str, str], path: str, needle: str) -> int:
    return next(i + 1 for i, text in enumerate(files[path].splitlines()) if needle in text)


def test_gnu_attribute_arguments_are_neither_calls_nor_parse_errors() -> None:
    """``section(".x")``/``aligned(32)``/``alias("f")`` inside ``__attribute__((…))`` are not API calls; the
    buffers they decorate are still seen as file-scope objects; an unbalanced attribute still fails."""
    attribute_words = {"section", "aligned", "alias", "used", "weak", "noreturn", "packed"}
    for framework, project in (
        ("hal", "good_cubemx"),
        ("baremetal", "good_semihosting"),
        ("zephyr", "good_attributes"),
    ):
        program = static.build_program(_project(SOURCES / framework / project), sdk.rules(framework))
        assert not program.parse_errors, (framework, project)
        assert not attribute_words & {c.name for c in program.calls}, (framework, project)
    semihosting = static.build_program(_project(SOURCES / "baremetal" / "good_semihosting"), sdk.rules("baremetal"))
    assert {"rx_buf", "tx_buf", "ms_ticks"} <= set(semihosting.globals)
    assert semihosting.globals["ms_ticks"].volatile_or_atomic
    old = '__attribute__((section(".dma.AXI_SRAM.tx_buf"), aligned(32)));'
    files = _mutated(
        "hal", "good_cubemx", "Src/main.c", old, '__attribute__((section(".dma.AXI_SRAM.tx_buf"), aligned(32));'
    )
    assert ("E_C_PARSE", f"Src/main.c:{_line(files, 'Src/main.c', 'tx_buf[64]')}") in _findings(files, "hal", None)


def test_attribute_macros_defined_in_another_file_apply_to_every_file() -> None:
    """``APP_DMA(name)`` is defined in app.h and used in main.c: without the definition it is no attribute."""
    files = _mutated(
        "baremetal",
        "good_semihosting",
        "include/app.h",
        "#define APP_DMA(name) __attribute__",
        "#define APP_DMB(name) __attribute__",
    )
    assert "E_C_PARSE" in {code for code, _ in _findings(files, "baremetal", None)}


def test_asm_register_variables_and_semihosting_breakpoints_parse() -> None:
    """``register uint32_t r0 __asm__("r0") = …`` declares a local; a broken initializer is still an error."""
    program = static.build_program(_project(SOURCES / "baremetal" / "good_semihosting"), sdk.rules("baremetal"))
    assert {"r0", "r1", "block"} <= program.locals["app_exit"]
    files = _mutated("baremetal", "good_semihosting", "src/main.c", '__asm__("r0") = 0x20;', '__asm__("r0") = ;')
    line = _line(files, "src/main.c", "register uint32_t r0")
    assert ("E_C_PARSE", f"src/main.c:{line} in app_exit()") in _findings(files, "baremetal", None)


def test_cplusplus_guards_resolve_as_in_a_c_compiler() -> None:
    """The split ``extern "C"`` guard parses; the ``#else`` (C) branch of a ``__cplusplus`` test is kept, the
    C++ one dropped; a guard on any other macro is still judged as written (both branches)."""
    text = (SOURCES / "baremetal" / "good_semihosting" / "include" / "app.h").read_text()
    resolved = _without_cplusplus(text)
    assert resolved.count("\n") == text.count("\n")
    assert 'extern "C"' not in resolved and "[[noreturn]]" not in resolved
    assert "#define APP_NORETURN __attribute__((noreturn))" in resolved
    nested = (
        "#ifndef __cplusplus\nint c_only;\n#else\nclass X {};\n#endif\n"
        "#if defined(__cplusplus)\n}\n#elif A\nint a;\n#endif\n"
    )
    assert _without_cplusplus(nested).split("\n") == [
        "",
        "int c_only;",
        "",
        "",
        "",
        "",
        "",
        "#if A",
        "int a;",
        "#endif",
        "",
    ]
    files = _mutated("hal", "good_cubemx", "Inc/main.h", "#ifdef __cplusplus", "#ifdef USE_CPP_LINKAGE")
    assert "E_C_PARSE" in {code for code, _ in _findings(files, "hal", None)}


def test_call_order_follows_handles_through_helper_parameters() -> None:
    """A helper's parameter names the caller's object: no false E_CALL_MISSING, but using the object
    through a helper before the initializing helper runs (or never initializing it) is still caught."""
    main = "Src/main.c"
    swapped = _mutated(
        "hal",
        "good_cubemx",
        main,
        '    uart_init(&huart3, USART3);\n    memcpy(banner, "hello\\r\\n", 7);\n',
        '    memcpy(banner, "hello\\r\\n", 7);\n',
    )
    loop = "    while (1) {\n        HAL_GPIO_TogglePin"
    assert loop in swapped[main]
    swapped[main] = swapped[main].replace(loop, "    uart_init(&huart3, USART3);\n" + loop, 1)
    send_line = _line(swapped, main, "if (send(&huart3")
    console_line = _line(swapped, main, "HAL_UART_Transmit(console")
    assert _findings(swapped, "hal", None) == [
        ("E_CALL_ORDER", f"{main}:{send_line} in main()"),
    ], "the console alias is used after uart_init, only send() comes too early"
    assert console_line > _line(swapped, main, "uart_init(&huart3")
    missing = _mutated("hal", "good_cubemx", main, "    uart_init(&huart3, USART3);\n", "")
    assert sorted(_findings(missing, "hal", None)) == sorted(
        [
            ("E_CALL_MISSING", f"{main}:{_line(missing, main, 'if (send(&huart3')} in main()"),
            ("E_CALL_MISSING", f"{main}:{_line(missing, main, 'HAL_UART_Transmit(console')} in main()"),
            # uart_init has no caller left: GCC's -Wunused-function, judged as an unused static
            ("E_UNUSED_STATIC", f"{main}:{_line(missing, main, 'uart_init(UART_HandleTypeDef')}"),
        ]
    )
    zephyr = _mutated(
        "zephyr",
        "good_attributes",
        "src/main.c",
        "\twhile (1) {\n\t\tif (frame_send(console, tx_frame, sizeof(tx_frame)) < 0) {",
        "\tif (frame_send(console, tx_frame, 1) < 0) {\n\t\treturn 0;\n\t}\n"
        "\twhile (1) {\n\t\tif (frame_send(console, tx_frame, sizeof(tx_frame)) < 0) {",
    )
    zephyr["src/main.c"] = zephyr["src/main.c"].replace(
        "\tconst struct device *const console = DEVICE_DT_GET(DT_CHOSEN(zephyr_console));\n",
        "\tconst struct device *const console = DEVICE_DT_GET(DT_CHOSEN(zephyr_console));\n\n"
        "\tif (frame_send(console, rx_frame, 1) < 0) {\n\t\treturn 0;\n\t}\n",
    )
    early = _line(zephyr, "src/main.c", "frame_send(console, rx_frame, 1)")
    assert _findings(zephyr, "zephyr", "nrf52840") == [("E_CALL_ORDER", f"src/main.c:{early} in main()")]


BRIDGE = """#include "stm32h7xx_hal.h"
UART_HandleTypeDef h1;
static HAL_StatusTypeDef bridge(UART_HandleTypeDef *a, UART_HandleTypeDef *b)
{
    if (HAL_UART_Init(a) != HAL_OK) {
        return HAL_ERROR;
    }
    return HAL_UART_Transmit(b, (const uint8_t *)"x", 1, 10);
}
static HAL_StatusTypeDef backwards(UART_HandleTypeDef *a, UART_HandleTypeDef *b)
{
    if (HAL_UART_Transmit(b, (const uint8_t *)"x", 1, 10) != HAL_OK) {
        return HAL_ERROR;
    }
    return HAL_UART_Init(a);
}
int main(void)
{
    if (HAL_Init() != HAL_OK || CALLS) {
        return 1;
    }
    return 0;
}
"""


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        # backwards() is called by nobody: its handles are unknown, its own order (transmit, then init) is judged.
        ("bridge(&h1, &h1) != HAL_OK", [("E_CALL_ORDER", "Src/main.c:12 in backwards()"),
                                        ("E_UNUSED_STATIC", "Src/main.c:10")]),  # GCC: -Wunused-function
        ("bridge(&h1, &h1) != HAL_OK || backwards(&h1, &h1) != HAL_OK", []),
        ("backwards(&h1, &h1) != HAL_OK", [("E_CALL_ORDER", "Src/main.c:19 in main()"),
                                           ("E_UNUSED_STATIC", "Src/main.c:3")]),
    ],
)
def test_two_calls_inside_one_helper_call_keep_the_helpers_order(calls: str, expected: list[tuple[str, str]]) -> None:
    """Both calls resolve to the same call site in main(): their order inside the helper decides."""
    files = {"Src/main.c": BRIDGE.replace("CALLS", calls)}
    files["Inc/stm32h7xx_hal_conf.h"] = (SOURCES / "hal" / "support" / "stm32h7xx_hal_conf.h").read_text()
    assert _findings(files, "hal", None) == expected


def test_gpio_level_may_be_written_before_init_but_not_before_the_clock() -> None:
    """CubeMX's write-level-then-init is fine; no init at all, a late port clock, or a toggle first is not."""
    main = "Src/main.c"
    write = "    HAL_GPIO_WritePin(LED_GPIO_Port, LED_Pin, GPIO_PIN_RESET);\n"
    no_init = _mutated("hal", "good_cubemx", main, "    HAL_GPIO_Init(LED_GPIO_Port, &gpio);\n", "")
    assert ("E_CALL_MISSING", f"{main}:{_line(no_init, main, 'HAL_GPIO_WritePin')} in MX_GPIO_Init()") in _findings(
        no_init, "hal", None
    )
    late_clock = _mutated(
        "hal",
        "good_cubemx",
        main,
        "    __HAL_RCC_GPIOB_CLK_ENABLE();\n" + "    /* Configure GPIO pin Output Level */\n" + write,
        write + "    __HAL_RCC_GPIOB_CLK_ENABLE();\n",
    )
    assert _findings(late_clock, "hal", None) == [
        ("E_CLOCK_NOT_ENABLED", f"{main}:{_line(late_clock, main, 'HAL_GPIO_WritePin')} in MX_GPIO_Init()")
    ]
    toggle_first = _mutated(
        "hal", "good_cubemx", main, write, write.replace("WritePin", "TogglePin").replace(", GPIO_PIN_RESET", "")
    )
    assert _findings(toggle_first, "hal", None) == [
        ("E_CALL_ORDER", f"{main}:{_line(toggle_first, main, 'HAL_GPIO_TogglePin')} in MX_GPIO_Init()")
    ]


def test_memoized_files_give_the_same_verdicts_as_fresh_ones() -> None:
    """Files are analysed once per content per process: re-judging, or judging an edit, stays exact."""
    target = _target("stm32h743")
    files = _project(SOURCES / "hal" / "good")
    edited = dict(files)
    edited["Src/main.c"] = edited["Src/main.c"].replace("HAL_UART_Init(&huart3)", "HAL_UART_DeInit(&huart3)")
    runs = [verify_sources(f, "hal", target) for f in (files, edited, dict(files), dict(edited))]
    assert runs[0].ok and runs[0] == runs[2]
    assert {e.code for e in runs[1].evidence} == {"E_CALL_MISSING"} and runs[1] == runs[3]


def test_concurrent_verifications_agree_with_sequential_ones() -> None:
    """The MCP server may verify from several threads: per-thread parsers, shared memo, same verdicts."""
    jobs = [(framework, _project(SOURCES / framework / project), target) for framework, project, target in GOOD]
    jobs += [(case.framework, case.files(), case.target) for case in CASES]

    def judge(job: tuple[str, dict[str, str], str | None]) -> list[tuple[str, str]]:
        return _findings(job[1], job[0], job[2])

    sequential = [judge(job) for job in jobs]
    assert any(sequential) and not all(sequential)
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(judge, jobs * 2)) == sequential * 2


def test_unknown_api_evidence_suggests_the_real_api() -> None:
    case = Case("zephyr", "unknown_api")
    evidence = verify_sources(case.files(), "zephyr", None).evidence
    assert evidence[0].objects == ["gpio_pin_write_dt"]
    assert "gpio_pin_set_dt" in evidence[0].relaxations[0].description


def test_isr_evidence_names_the_registration_and_the_isr_twin() -> None:
    evidence = verify_sources(Case("espidf", "isr_queue_send").files(), "espidf", None).evidence
    assert evidence[0].objects == ["xQueueSend", "xQueueSendFromISR"]
    assert "gpio_isr_handler_add" in evidence[0].message
    assert evidence[0].relaxations[0].description == "use xQueueSendFromISR"


def test_hostile_and_degenerate_inputs_give_evidence_not_crashes() -> None:
    unknown = verify_sources({"src/main.c": "int main(void) { return 0; }"}, "arduino", None)
    assert [e.code for e in unknown.evidence] == ["E_UNKNOWN_FRAMEWORK"]
    empty = verify_sources({"prj.conf": "CONFIG_GPIO=y\n"}, "zephyr", None)
    assert [e.code for e in empty.evidence] == ["E_NO_C_SOURCES"]
    garbage = verify_sources({"src/main.c": '\x00\x01 }}}{{ int ((( main "unterminated'}, "zephyr", None)
    assert "E_C_PARSE" in {e.code for e in garbage.evidence}
    missing_conf = verify_sources({"src/main.c": "int main(void) { return 0; }"}, "zephyr", None)
    assert [e.code for e in missing_conf.evidence] == ["E_KCONFIG_FILE_MISSING"]


def _rule_names(raw: dict[str, Any]) -> set[str]:
    """Every plain API name a rules file mentions (``^regex`` patterns excluded)."""
    names: set[str] = set()
    for rule in raw.get("order") or []:
        key = rule.get("key")
        names |= {*rule["first"], *rule["then"], *rule.get("defined_by", ()), *(key if isinstance(key, dict) else ())}
    isr, fallible, dma = raw.get("isr") or {}, raw.get("fallible") or {}, raw.get("dma_cache") or {}
    for key in ("blocking", "logs", "allocates"):
        names |= set(isr.get(key, ()))
    for key in ("registrations", "timeout_args", "unsafe"):
        names |= set(isr.get(key) or {})
    for key in ("include", "exclude", "null_on_failure"):
        names |= set(fallible.get(key, ()))
    names |= set(fallible.get("forever_args") or {})
    for key in ("start_tx", "start_rx", "start_both", "flush", "invalidate", "completion_waits"):
        names |= set(dma.get(key, ()))
    names |= set(dma.get("transfers") or {})
    if configured := dma.get("configured"):
        names |= {*configured["starts"], configured["call"]}
    kconfig = raw.get("kconfig") or {}
    names |= (
        set(raw.get("forbidden") or {}) | set(kconfig.get("by_function") or {}) | set(kconfig.get("positive") or {})
    )
    return {n for n in names if not n.startswith("^") and not n.endswith("$")}


@pytest.mark.parametrize("framework", sdk.FRAMEWORKS)
def test_rules_only_name_apis_the_catalog_declares(framework: str) -> None:
    """A typo in a rule would silently disable it: every API a rule names must exist in the catalog."""
    known: set[str] = set(sdk.stdlib().names)
    for catalog in sdk.all_catalogs(framework):
        known |= set(catalog.entries)
    raw = sdk.rules(framework).raw
    mentioned = _rule_names(dict(raw))
    assert mentioned, framework
    assert sorted(mentioned - known) == []


def test_catalogs_carry_real_signatures_and_their_sources() -> None:
    h7, f4 = sdk.catalog("hal", "STM32H7"), sdk.catalog("hal", "STM32F4")
    for catalog in (h7, f4):
        transmit = catalog.get("HAL_UART_Transmit")
        assert transmit is not None and transmit.returns == "HAL_StatusTypeDef" and len(transmit.params) == 4
        assert catalog.get("__HAL_RCC_GPIOA_CLK_ENABLE") is not None
        assert catalog.get("NVIC_EnableIRQ") is not None and catalog.sources
    assert h7.get("SCB_CleanDCache_by_Addr") is not None and f4.get("SCB_CleanDCache_by_Addr") is None
    assert h7.get("HAL_PWREx_ConfigSupply") is not None and f4.get("HAL_PWREx_ConfigSupply") is None
    zephyr = sdk.catalog("zephyr")
    setup = zephyr.get("adc_channel_setup_dt")
    assert setup is not None and setup.header == "zephyr/drivers/adc.h" and setup.accepts(1) and not setup.accepts(2)
    assert zephyr.get("LOG_INF") is not None and zephyr.get("LOG_INF").accepts(5)  # type: ignore[union-attr]
    idf = sdk.catalog("espidf")
    assert idf.version.startswith("ESP-IDF v5")
    assert idf.get("xQueueSendFromISR") is not None and idf.get("adc_oneshot_read") is not None
    assert idf.get("adc1_get_raw") is not None and idf.get("adc1_get_raw").deprecated  # type: ignore[union-attr]
    assert all(c.version and c.sources for f in sdk.FRAMEWORKS for c in sdk.all_catalogs(f))


#: What the verifier may never import: the lowering and the obligations would let the code under judgement
#: vouch for itself. The plan model and an op's model are allowed only where the console expectations read
#: the plan's operations.
FORBIDDEN_IMPORTS = ("rac_fw.domains.firmware.lower", "rac_fw.domains.firmware.obligations")
PLAN_IMPORTS = {"console.py": {"rac_fw.domains.firmware.ops.uart.uart_print", "rac_fw.domains.firmware.plan.model"}}


def test_verifier_modules_never_import_the_lowering_nor_the_obligations() -> None:
    """Every module under ``verify/`` (static package, config, elf, console, sdk) is read, not a list."""
    owned = sorted(VERIFY_PACKAGE.rglob("*.py"))
    assert {"elf.py", "console.py", "config.py", "artifact.py", "registry.py", "context.py"} <= {p.name for p in owned}
    for path in owned:
        package = ".".join(("rac_fw", *path.relative_to(VERIFY_PACKAGE.parents[3]).parent.parts[1:]))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level:  # relative: resolve against the module's package
                    module = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + [module])
                names = [module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                assert not name.startswith(FORBIDDEN_IMPORTS), (path, name)
                if name.startswith(("rac_fw.domains.firmware.plan", "rac_fw.domains.firmware.ops")):
                    assert name in PLAN_IMPORTS.get(path.name, set()), (path, name)
    script = (
        "import sys\n"
        "from rac_fw.domains.firmware.verify.artifact import verify_sources\n"
        "verify_sources({'src/main.c': 'int main(void) { return 0; }', 'prj.conf': ''}, 'zephyr', None)\n"
        f"print(sorted(m for m in sys.modules if m.startswith({FORBIDDEN_IMPORTS!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


#: The check registry, pinned: rule key → (check, codes it may emit), in verdict order. A check that stops
#: registering (a module no longer imported) or a new code must show up here.
REGISTRY = {
    "c_parses": [("check_parse", ("E_C_PARSE",))],
    "sdk_apis_known": [("known_apis", ("E_API_ARITY", "E_DEPRECATED_API", "E_UNKNOWN_API"))],
    "sdk_identifiers_declared": [
        ("check_declared", ("E_UNDECLARED",)),
        ("check_release_headers", ("E_HEADER_RELEASE",)),
    ],
    "no_foreign_framework_api": [("foreign_apis", ("E_FOREIGN_API",))],
    "call_order": [
        ("check_clocks", ("E_CLOCK_NOT_ENABLED",)),
        ("check_order", ("E_CALL_MISSING", "E_CALL_ORDER")),
        ("check_forbidden", ("E_FORBIDDEN_CALL",)),
        ("check_released", ("E_HANDLE_LEAK",)),
        ("check_secret_literals", ("E_SECRET_LITERAL",)),
    ],
    "dma_cache_maintenance": [
        ("check_dma_cache", ("E_CACHE_FLUSH_MISSING", "E_CACHE_INVALIDATE_MISSING", "E_CACHE_ORDER", "E_CACHE_RANGE"))
    ],
    "isr_context_safe": [("check_isr", ("E_ISR_ALLOCATION", "E_ISR_BLOCKING", "E_ISR_LOGGING", "E_ISR_UNSAFE_CALL"))],
    "isr_shared_state_volatile": [("check_shared_state", ("E_ISR_SHARED_NOT_VOLATILE",))],
    "return_values_checked": [("check_returns", ("E_UNCHECKED_RETURN",))],
    "no_unused_statics": [("check_unused_statics", ("E_UNUSED_STATIC",))],
    "kconfig_consistent": [
        ("check_kconfig", ("E_KCONFIG_CONFLICT", "E_KCONFIG_FILE_MISSING", "E_KCONFIG_MISSING", "E_SDKCONFIG_TARGET")),
        (
            "check_kconfig_lines",
            ("E_KCONFIG_SYNTAX", "E_KCONFIG_UNKNOWN", "E_KCONFIG_TYPE", "E_KCONFIG_RANGE", "E_KCONFIG_DEPENDS",
             "E_SDKCONFIG_RENAMED"),
        ),
    ],
    "devicetree_consistent": [
        (
            "check_devicetree",
            ("E_DT_LABEL_UNKNOWN", "E_DT_NODE_MISSING", "E_DT_PINCTRL_INVALID", "E_DT_PROPERTY_MISSING"),
        ),
        ("check_overlays_with_dtc", ("E_DT_SYNTAX", "E_DT_DUPLICATE_PROPERTY")),
    ],
    "hal_conf_consistent": [
        ("check_hal_conf", ("E_HAL_CONF_MISSING", "E_HAL_FAMILY_MISMATCH", "E_HAL_MODULE_DISABLED"))
    ],
}


def test_check_registry_is_pinned() -> None:
    import rac_fw.domains.firmware.verify.artifact  # noqa: F401  (registers every check)

    assert [r.key for r in RULES] == list(REGISTRY)
    registered = {key: [(c.name, c.codes) for c in CHECKS if c.rule == key] for key in REGISTRY}
    assert registered == REGISTRY
    assert len(CHECKS) == sum(len(v) for v in REGISTRY.values())


def _codes(files: dict[str, str], framework: str, target: Target | None) -> list[str]:
    return sorted(e.code for e in verify_sources(files, framework, target).evidence)


def test_dma_cache_maintenance_is_judged_per_buffer() -> None:
    """The right buffer, on its side of the start, over the whole transfer; exemptions stay per buffer."""
    main, h7 = "src/main.c", _target("stm32h743")
    invalidate = "ret = sys_cache_data_invd_range(dst_buf, sizeof(dst_buf));"
    flush = "ret = sys_cache_data_flush_range(src_buf, sizeof(src_buf));"
    assert _codes(_project(SOURCES / "zephyr" / "good_dma"), "zephyr", h7) == []
    # sizeof another object (an int: 4 bytes) against a BUF_SIZE (macro: 64) byte block.
    short = _mutated(
        "zephyr", "good_dma", main, invalidate, invalidate.replace("sizeof(dst_buf)", "sizeof(dma_status)")
    )
    assert _findings(short, "zephyr", "stm32h743") == [
        ("E_CACHE_RANGE", f"{main}:{_line(short, main, 'dma_start(')} in main()")
    ]
    # Sizes that cannot be compared statically are not judged.
    unknown = _mutated("zephyr", "good_dma", main, invalidate, invalidate.replace("sizeof(dst_buf)", "(size_t)ret"))
    assert _codes(unknown, "zephyr", h7) == []
    # Invalidated before the wait, or read before the invalidate: not on the completion path.
    wait = "\tif (k_sem_take(&dma_done"
    early = _mutated("zephyr", "good_dma", main, wait, f"\t{invalidate}\n{wait}")
    early[main] = early[main].replace(
        f"\t{invalidate}\n\tif (ret < 0 && ret != -ENOTSUP) {{\n\t\treturn 0;\n\t}}\n\tprintk", "\tprintk"
    )
    assert _codes(early, "zephyr", h7) == ["E_CACHE_ORDER"]
    read = _mutated("zephyr", "good_dma", main, f"\t{invalidate}", f"\tdma_status = dst_buf[0];\n\t{invalidate}")
    assert _codes(read, "zephyr", h7) == ["E_CACHE_ORDER"]
    # __nocache exempts the buffer it decorates, not its neighbour.
    nocache = _mutated("zephyr", "good_dma", main, "dst_buf[BUF_SIZE] __aligned(32)", "dst_buf[BUF_SIZE] __nocache")
    nocache[main] = nocache[main].replace(invalidate, "ret = 0;")
    nocache["prj.conf"] += "CONFIG_NOCACHE_MEMORY=y\n"
    assert _codes(nocache, "zephyr", h7) == []
    nocache[main] = nocache[main].replace(flush, "ret = 0;")
    assert _codes(nocache, "zephyr", h7) == ["E_CACHE_FLUSH_MISSING"]


HELPER_CLEAN = """#include "stm32h7xx_hal.h"
DMA_HandleTypeDef hdma;
ALIGN_32BYTES(static uint8_t src[64]) SRC_SECTION;
ALIGN_32BYTES(static uint8_t dst[64]);
static void clean(void *buffer, int32_t bytes)
{
    SCB_CleanDCache_by_Addr(buffer, bytes);
}
int main(void)
{
    if (HAL_Init() != HAL_OK || HAL_DMA_Init(&hdma) != HAL_OK) {
        return 1;
    }
    clean(CLEANED, 64);
    if (HAL_DMA_Start(&hdma, (uint32_t)src, (uint32_t)dst, sizeof(src)) != HAL_OK) {
        return 1;
    }
    if (HAL_DMA_PollForTransfer(&hdma, HAL_DMA_FULL_TRANSFER, 10) != HAL_OK) {
        return 1;
    }
    SCB_InvalidateDCache_by_Addr(dst, sizeof(dst));
    return dst[0];
}
"""


@pytest.mark.parametrize(
    ("cleaned", "section", "expected"),
    [
        ("src", "", []),
        ("dst", "", ["E_CACHE_FLUSH_MISSING"]),
        # A section in a region the target does not cache (the H743's DTCM) needs no maintenance.
        ("dst", '__attribute__((section(".dma.DTCM.src")))', []),
        ("dst", '__attribute__((section(".dma.AXI_SRAM.src")))', ["E_CACHE_FLUSH_MISSING"]),
    ],
)
def test_cleaning_through_a_helper_names_the_callers_buffer(cleaned: str, section: str, expected: list[str]) -> None:
    from rac_fw.domains.firmware.facts.load import load_target

    main = HELPER_CLEAN.replace("CLEANED", cleaned).replace("SRC_SECTION", section)
    files = {
        "Src/main.c": main,
        "Inc/stm32h7xx_hal_conf.h": (SOURCES / "hal" / "support" / "stm32h7xx_hal_conf.h").read_text(),
    }
    assert _codes(files, "hal", load_target("stm32h743")) == expected


MACROS = """#include <zephyr/kernel.h>
#include <zephyr/drivers/gpio.h>
#include <zephyr/sys/printk.h>
#include "app.h"

static const struct gpio_dt_spec led = GPIO_DT_SPEC_GET(DT_ALIAS(led0), gpios);

static void expiry(struct k_timer *timer)
{
	TOGGLE(SAY("x"));
}

K_TIMER_DEFINE(tick, expiry, NULL);

int main(void)
{
	if (!gpio_is_ready_dt(&led) || CONFIGURE(&led) < 0) {
		return 0;
	}
	CONFIGURE(&led);
	k_timer_start(&tick, K_MSEC(100), K_MSEC(100));
	return 0;
}
"""

APP_H = """#define SAY(text) printk(#text)
#define NAP k_msleep(1)
#define TOGGLE(why) do { (void)(why); NAP; } while (0)
#define CONFIGURE(spec) gpio_pin_configure_dt(spec, GPIO_OUTPUT_INACTIVE)
"""


def test_local_macros_are_expanded_for_call_analysis() -> None:
    """Macros defined in the artifact (in another file too, nested, object- and function-like) are expanded
    at their use: the calls their bodies make are judged there; calls in arguments are not doubled."""
    files = {"src/main.c": MACROS, "src/app.h": APP_H, "prj.conf": "CONFIG_GPIO=y\n"}
    program = static.build_program(files, sdk.rules("zephyr"))
    expanded = sorted((c.name, c.macro, c.line) for c in program.calls if c.macro)
    assert expanded == [
        ("gpio_pin_configure_dt", "CONFIGURE", 17),
        ("gpio_pin_configure_dt", "CONFIGURE", 20),
        ("k_msleep", "TOGGLE", 10),
        ("printk", "SAY", 10),
    ]
    found = verify_sources(files, "zephyr", _target("nrf52840")).evidence
    assert sorted((e.code, e.location) for e in found) == [
        ("E_ISR_BLOCKING", "src/main.c:10 in expiry()"),
        ("E_ISR_LOGGING", "src/main.c:10 in expiry()"),
        ("E_UNCHECKED_RETURN", "src/main.c:20 in main()"),
    ]
    assert "through macro CONFIGURE" in next(e.message for e in found if e.code == "E_UNCHECKED_RETURN")
    configure = next(c for c in program.calls if c.macro == "CONFIGURE")
    assert configure.arg_text(1) == "GPIO_OUTPUT_INACTIVE" and static.object_key(configure.arg_node(0)) == "led"


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("sizeof(words)", 32),
        ("sizeof words", 32),
        ("(int32_t)sizeof(halves)", 32),
        ("sizeof(halves[0]) * 3", 6),
        ("N - 1", 31),
        ("(size_t)(N)", 32),
        ("1 << 4", 16),
        ("010", 8),
        ("sizeof(uint32_t)", 4),
        ("sizeof(struct frame)", None),
        ("len", None),
        ("09", None),
    ],
)
def test_transfer_and_range_sizes_evaluate_only_when_constant(expression: str, value: int | None) -> None:
    """Range sizes compare with transfer lengths only when both are constants the artifact defines."""
    source = "#define N (2 * 16U)\nstatic unsigned int words[N / 4];\nstatic uint16_t halves[0x10];\n"
    program = static.build_program({"src/main.c": source}, sdk.rules("zephyr"))
    assert _evaluate(program, "main", expression) == value


def test_undeclared_evidence_names_the_identifier_and_the_header_to_include() -> None:
    case = next(c for c in CASES if c.name == "undeclared_gpio")
    evidence = verify_sources(case.files(), "zephyr", None).evidence
    assert [e.objects for e in evidence] == [["gpio_dt_spec", "zephyr/drivers/gpio.h"]]
    fixes = [r.description for r in evidence[0].relaxations]
    assert fixes == ["add #include <zephyr/drivers/gpio.h> to src/main.c"]
    # With the include the same file is clean: the gpio calls and the devicetree macros are all visible.
    fixed = case.files()
    fixed["src/main.c"] = fixed["src/main.c"].replace(
        "#include <zephyr/kernel.h>", "#include <zephyr/kernel.h>\n#include <zephyr/drivers/gpio.h>"
    )
    assert _codes(fixed, "zephyr", None) == []
    # A type the unit defines itself needs no SDK header.
    own = {"src/main.c": "struct uart_config { int baud; };\nstatic struct uart_config cfg;\n"}
    own["src/main.c"] += "int main(void) { return cfg.baud; }\n"
    assert _codes({**own, "prj.conf": ""}, "zephyr", None) == []


def test_header_model_facts_come_from_the_real_headers() -> None:
    """Spot checks of the harvested facts (declaring header, include edges, the HAL conf stand-in)."""
    zephyr, idf, h7 = sdk.header_model("zephyr"), sdk.header_model("espidf"), sdk.header_model("hal", "STM32H7")
    assert zephyr is not None and idf is not None and h7 is not None
    assert zephyr.types["gpio_dt_spec"] == "zephyr/drivers/gpio.h"
    assert "zephyr/device.h" in zephyr.includes["zephyr/drivers/gpio.h"]
    assert "zephyr/kernel.h" in zephyr.includes["zephyr/device.h"]
    assert h7.types["UART_HandleTypeDef"] == "stm32h7xx_hal_uart.h"
    assert h7.stand_ins == {"stm32h7xx_hal_conf.h": "stm32h7xx_hal_conf_template.h"}
    assert "stm32h7xx_hal_uart.h" in h7.includes["stm32h7xx_hal_conf_template.h"]
    assert idf.types["gpio_config_t"] == "driver/gpio.h"
    assert "freertos/projdefs.h" in idf.includes["freertos/FreeRTOS.h"]
    assert sdk.header_model("baremetal") is None


def test_config_fragments_and_overlays_are_read_by_the_fields_parsers() -> None:
    """kconfiglib reads the fragment (quoting, escapes, ``is not set``); tree-sitter-devicetree the overlay."""
    from rac_fw.domains.firmware.verify.config import parse_kconfig, parse_overlays

    conf = parse_kconfig('CONFIG_GPIO=y\n# CONFIG_LOG is not set\nCONFIG_NAME="a \\"b\\""\nCONFIG_SIZE=1024\n')
    assert conf == {"GPIO": "y", "LOG": "n", "NAME": 'a "b"', "SIZE": "1024"}
    overlay = parse_overlays(
        {
            "app.overlay": (
                "#include <zephyr/dt-bindings/adc/adc.h>\n"
                "/ {\n\taliases { my-led = &led_a; };\n\tchosen { zephyr,console = &uart0; };\n"
                "\tzephyr,user { io-channels = <&adc 0>, <&adc 1>; out-gpios = <&gpio0 13 0>; };\n"
                "\tleds { led_a: led_0 { gpios = <&gpio0 14 0>; }; };\n};\n"
                "&adc { /* a comment with &fake */ status = \"okay\";\n"
                "\tch0: channel@0 { reg = <0>;\n"
                "\t\tzephyr,acquisition-time = <ADC_ACQ_TIME(ADC_ACQ_TIME_MICROSECONDS, 10)>; };\n};\n"
            )
        }
    )
    assert overlay.aliases == {"my_led": "led_a"} and overlay.chosen == {"zephyr_console"}
    assert overlay.labels == {"led_a", "ch0"}
    assert overlay.zephyr_user == {"io-channels": 2, "out-gpios": 1}
    assert ("adc", "app.overlay:8") in overlay.references and all(label != "fake" for label, _ in overlay.references)
