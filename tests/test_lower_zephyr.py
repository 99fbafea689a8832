"""The Zephyr lowering: what the generated app contains, per target, read back from the files.

The C is parsed with tree-sitter (after blanking the attribute macros the C preprocessor would expand:
``__aligned(n)``, section tags) so assertions are about calls inside named functions, not about text.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tree_sitter
import tree_sitter_c

from rac_fw.contract import apply_patch
from rac_fw.domains.firmware.facts.chip import Dmamux
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.lower import (
    MANIFEST_NAME,
    LoweringError,
    frameworks,
    lower,
    write_artifact,
)
from rac_fw.domains.firmware.lower.zephyr import ZEPHYR_VERSION
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.plan.escape import c_format
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.plan.matrix import realizes
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.resources import data_dir

EXAMPLES = data_dir("examples")
_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_c.language()))
_ATTRIBUTES = re.compile(r"__aligned\(\d+\)|Z_GENERIC_SECTION\((?:[^()]|\([^()]*(?:\([^()]*\))*[^()]*\))*\)|__nocache")


def _lowered(example: str, target: str) -> dict[str, str]:
    return lower(load_plan(EXAMPLES / example), load_target(target), "zephyr").files


def _tree(source: str) -> tree_sitter.Node:
    root = _PARSER.parse(_ATTRIBUTES.sub(" ", source).encode()).root_node
    assert not root.has_error, "generated C does not parse"
    return root


def _walk(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _functions(source: str) -> dict[str, tree_sitter.Node]:
    """Function name → body node."""
    out: dict[str, tree_sitter.Node] = {}
    for node in _walk(_tree(source)):
        if node.type == "function_definition":
            declarator = node.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            assert declarator is not None
            name = declarator.child_by_field_name("declarator")
            assert name is not None and name.text is not None
            body = node.child_by_field_name("body")
            assert body is not None
            out[name.text.decode()] = body
    return out


def _calls(body: tree_sitter.Node) -> list[str]:
    """Names of the functions/macros called in ``body``, in source order."""
    names = []
    for node in _walk(body):
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            if function is not None and function.text is not None:
                names.append(function.text.decode())
    return names


def _source(node: tree_sitter.Node) -> str:
    return node.text.decode() if node.text is not None else ""


def _kconfig(prj: str) -> set[str]:
    return {line.split("=", 1)[0] for line in prj.splitlines() if line.startswith("CONFIG_")}


def test_zephyr_is_registered_with_a_recorded_version() -> None:
    assert "zephyr" in frameworks()
    version_file = (data_dir("templates") / "zephyr" / "VERSION").read_text()
    assert version_file.startswith(f"Zephyr {ZEPHYR_VERSION}")
    for template in (data_dir("templates") / "zephyr").glob("*.j2"):
        assert f"Zephyr {ZEPHYR_VERSION}" in template.read_text(), f"{template.name} does not record its version"


def test_adc_dt_on_nrf52840_reads_the_devicetree_channel_in_a_loop() -> None:
    files = _lowered("adc_dt.yaml", "nrf52840")
    assert set(files) == {"CMakeLists.txt", "prj.conf", "boards/nrf52840dk_nrf52840.overlay", "src/main.c", "README.md",
                          "sample.yaml"}
    assert "find_package(Zephyr" in files["CMakeLists.txt"]
    main = files["src/main.c"]
    assert "ADC_DT_SPEC_GET_BY_IDX(DT_PATH(zephyr_user), 0)" in main
    functions = _functions(main)
    setup, step = _calls(functions["app_vin_setup"]), _calls(functions["app_vin_step"])
    assert setup.index("adc_is_ready_dt") < setup.index("adc_channel_setup_dt")
    assert step.index("adc_sequence_init_dt") < step.index("adc_read_dt") < step.index("adc_raw_to_millivolts_dt")
    # Every fallible ADC call's result is compared before use.
    assert len(re.findall(r"err = adc_(?:read|raw_to_millivolts|sequence_init)_dt\(", main)) == 3
    assert main.count("if (err < 0)") >= 4
    # main: setup checked, then one loop that calls the step and sleeps the plan's interval.
    main_calls = _calls(functions["main"])
    assert main_calls.index("app_vin_setup") < main_calls.index("app_vin_step") < main_calls.index("k_msleep")
    assert "k_msleep(1000);" in main and "for (;;)" in main
    overlay = files["boards/nrf52840dk_nrf52840.overlay"]
    assert "io-channels = <&adc 0>;" in overlay
    assert re.search(r"zephyr,input-positive = <NRF_SAADC_AIN\d>;", overlay)
    assert "#include <zephyr/dt-bindings/adc/nrf-saadc.h>" in overlay
    assert _kconfig(files["prj.conf"]) == {"CONFIG_ADC", "CONFIG_MAIN_STACK_SIZE"}


def test_adc_dt_retargeted_to_stm32h743_uses_the_hardware_channel_and_its_analog_pin() -> None:
    target = load_target("stm32h743")
    files = _lowered("adc_dt.yaml", "stm32h743")
    overlay = files["boards/nucleo_h743zi.overlay"]
    match = re.search(r"io-channels = <&adc(\d) (\d+)>;", overlay)
    assert match, overlay
    unit, channel = match.groups()
    assert f"reg = <{channel}>;" in overlay
    pinctrl = re.search(rf"pinctrl-0 = <&adc{unit}_inp{channel}_p([a-k])(\d+)>;", overlay)
    assert pinctrl, overlay
    pin = target.pins[f"P{pinctrl.group(1).upper()}{pinctrl.group(2)}"]
    assert f"ADC{unit}_INP{channel}" in pin.analog and not pin.reserved
    assert "NRF_SAADC" not in overlay
    assert "ADC_DT_SPEC_GET_BY_IDX(DT_PATH(zephyr_user), 0)" in files["src/main.c"]


def test_dma_on_stm32h743_cleans_before_start_and_invalidates_after_completion() -> None:
    files = _lowered("dma_h7_cache.yaml", "stm32h743")
    main = files["src/main.c"]
    step = _calls(_functions(main)["app_copy_step"])
    first_flush = step.index("sys_cache_data_flush_range")
    assert first_flush < step.index("dma_config") < step.index("dma_start")
    assert step.index("dma_start") < step.index("k_sem_take") < step.index("sys_cache_data_invd_range")
    assert step.index("sys_cache_data_invd_range") < step.index("memcmp")
    for buffer in ("app_copy_src", "app_copy_dst"):
        declared = re.search(rf"static uint8_t {buffer}\[(\d+)\] __aligned\((\d+)\)", main)
        assert declared, main
        size, align = map(int, declared.groups())
        assert align == 32 and size % 32 == 0 and size >= 1024
    assert "CONFIG_CACHE_MANAGEMENT" in _kconfig(files["prj.conf"])
    assert "&dma1 {" in files["boards/nucleo_h743zi.overlay"]


def test_dma_on_an_uncached_core_has_no_cache_maintenance() -> None:
    files = _lowered("dma_h7_cache.yaml", "stm32f407")
    assert "sys_cache_data" not in files["src/main.c"]
    assert "CONFIG_CACHE_MANAGEMENT" not in _kconfig(files["prj.conf"])
    assert "&dma2 {" in files["boards/stm32f4_disco.overlay"], "DMA1 of the F4 cannot copy memory to memory"


def test_isr_bodies_never_block_log_or_allocate() -> None:
    forbidden = {"printk", "k_msleep", "k_sleep", "k_malloc", "k_free", "k_mutex_lock", "LOG_INF", "LOG_ERR"}
    for example, isr, post in (
        ("gpio_button.yaml", "app_button_isr", "app_press_post"),
        ("timer_handoff.yaml", "app_tick_expiry", "app_tick_queue_post"),
        ("uart_echo.yaml", "app_console_rx_isr", None),
        ("isr_ring.yaml", "app_edges_isr", "app_edge_ring_post"),
    ):
        main = _lowered(example, "stm32h743")["src/main.c"]
        functions = _functions(main)
        called = _calls(functions[isr])
        assert not forbidden & set(called), (example, called)
        if post is not None:
            assert post in called
            post_calls = _calls(functions[post])
            assert not forbidden & set(post_calls)
            assert "K_FOREVER" not in _source(functions[post])
        # State the ISR shares with threads is atomic_t.
        for name in re.findall(r"atomic_\w+\(&(\w+)", _source(functions[isr])):
            assert re.search(rf"static atomic_t {name} =", main), name


def test_threads_get_the_plans_priorities_and_stacks_and_locks_are_mutexes() -> None:
    plan = load_plan(EXAMPLES / "threading.yaml")
    main = lower(plan, load_target("nrf52840"), "zephyr").files["src/main.c"]
    for thread in plan.resources.threads:
        match = re.search(
            rf"K_THREAD_DEFINE\(app_{thread.name}_tid, (\d+), app_{thread.name}_entry, "
            rf"NULL, NULL, NULL,\s+(-?\d+), 0, 0\);",
            main,
        )
        assert match, thread.name
        assert (int(match.group(1)), int(match.group(2))) == (thread.stack_bytes, thread.priority)
    assert "K_MUTEX_DEFINE(app_state_lock);" in main and "K_MUTEX_DEFINE(app_journal_lock);" in main
    body = _source(_functions(main)["app_fast_entry"])
    # Two locks in one fixed order, released in reverse.
    order = [m.group(0) for m in re.finditer(r"k_mutex_(?:lock|unlock)\(&app_(?:state|journal)_lock", body)]
    transfer = order[2:]  # the first pair is the shared-state update
    assert transfer == [
        "k_mutex_lock(&app_state_lock",
        "k_mutex_lock(&app_journal_lock",
        "k_mutex_unlock(&app_journal_lock",
        "k_mutex_unlock(&app_state_lock",
    ]


def test_uart_rx_needs_exactly_its_kconfig_symbols() -> None:
    files = _lowered("uart_echo.yaml", "nrf52840")
    assert _kconfig(files["prj.conf"]) == {
        "CONFIG_SERIAL",
        "CONFIG_UART_INTERRUPT_DRIVEN",
        "CONFIG_RING_BUFFER",
        "CONFIG_MAIN_STACK_SIZE",
    }
    assert "RING_BUF_DECLARE(app_console_rx_ring, 64);" in files["src/main.c"]


def test_hostile_message_reaches_c_only_as_an_escaped_literal() -> None:
    message = 'x"); system("rm -rf /"); /* %s %n ??/ \\'
    plan = parse_plan({"target": "stm32h743", "operations": [{"op": "uart_print", "message": message}]})
    main = lower(plan, load_target("stm32h743"), "zephyr").files["src/main.c"]
    literal = c_format(message)
    assert literal in main
    assert message not in main
    strings = [n.text.decode() for n in _walk(_tree(main)) if n.type == "string_literal" and n.text]
    assert literal in strings


def test_plan_names_cannot_collide_with_zephyr_symbols() -> None:
    plan = parse_plan(
        {
            "target": "nrf52840",
            "operations": [{"op": "watchdog", "name": "wdt", "timeout_ms": 2000, "feed_interval_ms": 500}],
        }
    )
    main = lower(plan, load_target("nrf52840"), "zephyr").files["src/main.c"]
    defined = set(_functions(main))
    assert "wdt_setup" not in defined and "app_wdt_setup" in defined
    assert "wdt_setup" in _calls(_functions(main)["app_wdt_install"])


def test_supports_is_decided_from_the_facts() -> None:
    nrf, native, h7 = load_target("nrf52840"), load_target("native_sim"), load_target("stm32h743")
    assert realizes("zephyr", "gpio_blink", native) and realizes("zephyr", "adc_periodic", native)
    assert not realizes("zephyr", "pwm_fade", native), "native_sim has no PWM node"
    assert not realizes("zephyr", "dma_mem2mem", nrf), "EasyDMA cannot copy memory to memory"
    assert realizes("zephyr", "dma_mem2mem", h7) and realizes("zephyr", "watchdog", h7)
    f4 = load_target("stm32f407")
    assert realizes("zephyr", "dma_periph_rx", nrf), "UARTE0 receives through its own EasyDMA"
    assert realizes("zephyr", "dma_periph_rx", f4), "the facts map USART2_RX to a DMA1 stream and channel"
    assert not realizes("zephyr", "dma_periph_rx", _without_rx_route(h7)), "no request route known: not guessed"
    hal_only = dataclasses.replace(h7, frameworks=("hal",))
    assert not realizes("zephyr", "gpio_blink", hal_only), "a target whose facts list no Zephyr support"


def test_unsupported_detail_is_evidence_whose_relaxation_fixes_the_plan() -> None:
    data = {"target": "stm32h743", "operations": [{"op": "timer_periodic", "period_ms": 10, "source": "TIM2"}]}
    with pytest.raises(LoweringError) as caught:
        lower(parse_plan(data), load_target("stm32h743"), "zephyr")
    evidence = caught.value.evidence[0]
    assert evidence.code == "E_TARGET_UNSUPPORTED" and evidence.location == "operations[0].source"
    fixed = apply_patch(data, evidence.relaxations[0].patch)
    main = lower(parse_plan(fixed), load_target("stm32h743"), "zephyr").files["src/main.c"]
    assert "k_timer_start(&app_timer_periodic0_timer, K_MSEC(10), K_MSEC(10));" in main


def test_lowering_is_deterministic_and_written_with_hashes(tmp_path: Path) -> None:
    plan = load_plan(EXAMPLES / "sensor_node.yaml")
    first = lower(plan, load_target("nrf52840"), "zephyr")
    second = lower(plan, load_target("nrf52840"), "zephyr")
    assert first.files == second.files and first.artifact_hash == second.artifact_hash
    manifest = write_artifact(first, tmp_path)
    for entry in manifest["files"]:
        data = (tmp_path / entry["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"] and len(data) == entry["bytes"]
    assert (tmp_path / MANIFEST_NAME).is_file()
    # Re-writing the same directory for another board removes the first board's overlay.
    write_artifact(lower(plan, load_target("stm32h743"), "zephyr"), tmp_path)
    assert not (tmp_path / "boards/nrf52840dk_nrf52840.overlay").exists()
    assert (tmp_path / "boards/nucleo_h743zi.overlay").is_file()


# --- peripheral-to-memory DMA: console UART reception through the asynchronous UART API -----------

#: The STM32H743's DMAMUX1 request line for USART3_RX (RM0433 Table 121; the CMSIS-SVD's DMAMUX1
#: CCRx.DMAREQ_ID enumerated value usart3_rx_dma = 45) and the first mux channel of each DMA controller
#: (channels 0-7 drive DMA1 streams 0-7, 8-15 drive DMA2). The shape ``Target.dmamux`` the lowering reads.
H7_DMAMUX = {"DMAMUX1": Dmamux(controllers={"DMA1": 0, "DMA2": 8}, requests={"USART3_RX": 45})}


def _with_dmamux(target: Target, dmamux: dict[str, Dmamux]) -> Target:
    return dataclasses.replace(target, dmamux=dmamux)


def _without_rx_route(target: Target) -> Target:
    """The target with no request-line facts: neither a DMAMUX table nor fixed controller mappings."""
    dma = tuple(dataclasses.replace(c, requests={}) for c in target.dma)
    return dataclasses.replace(target, dmamux={}, dma=dma)


def _console_rx_plan(target: str, peripheral: str, circular: bool = True, **buffer: object) -> dict[str, Any]:
    return {
        "target": target,
        "resources": {"buffers": [{"name": "rx_buf", "size_bytes": 256, "role": "dma_rx", **buffer}]},
        "operations": [
            {"op": "dma_periph_rx", "name": "rx", "peripheral": peripheral, "buffer": "rx_buf", "circular": circular}
        ],
    }


def _assert_async_rx_shape(main: str, callback: str, setup: str) -> list[str]:
    """Readiness → callback → enable in setup; the callback copies spans into a ring and never blocks."""
    functions = _functions(main)
    setup_calls = _calls(functions[setup])
    assert setup_calls.index("device_is_ready") < setup_calls.index("uart_callback_set")
    assert setup_calls.index("uart_callback_set") < setup_calls.index("uart_rx_enable")
    isr_calls = _calls(functions[callback])
    assert "ring_buf_put" in isr_calls
    blocking = {"printk", "k_msleep", "k_sleep", "k_malloc", "k_mutex_lock", "LOG_INF", "LOG_ERR", "uart_rx_enable"}
    assert not blocking & set(isr_calls), isr_calls
    # Everything the callback writes is atomic (it runs in the UART/DMA interrupt).
    for name in re.findall(r"atomic_\w+\(&(\w+)", _source(functions[callback])):
        assert re.search(rf"static atomic_t {name} =", main), name
    return isr_calls


def test_dma_uart_rx_on_stm32f407_routes_the_console_rx_request_from_the_facts() -> None:
    target = load_target("stm32f407")
    files = _lowered("dma_uart_rx.yaml", "stm32f407")
    overlay = files["boards/stm32f4_disco.overlay"]
    dma1 = target.dma_controller("DMA1")
    assert dma1 is not None and dma1.routes("USART2_RX")
    stream, channel = dma1.routes("USART2_RX")[0]
    assert f"dmas = <&dma1 {stream} {channel} STM32_DMA_PERIPH_RX STM32_DMA_FIFO_FULL>;" in overlay
    assert 'dma-names = "rx";' in overlay and re.search(r"&dma1 \{\s+status = \"okay\";", overlay)
    assert "#include <zephyr/dt-bindings/dma/stm32_dma.h>" in overlay
    main = files["src/main.c"]
    isr_calls = _assert_async_rx_shape(main, "app_console_dma_callback", "app_console_dma_setup")
    # Circular: the driver's next-buffer request is answered with the other half of the plan buffer.
    assert "uart_rx_buf_rsp" in isr_calls and "app_rx_spans_post" in isr_calls
    assert "static uint8_t app_rx_buf[256] __aligned(4);" in main
    assert "uart_rx_buf_rsp(dev, &app_rx_buf[half * 128], 128U)" in main
    assert "sys_cache_data" not in main and "__nocache" not in main, "the F4 has no D-cache"
    assert _kconfig(files["prj.conf"]) == {
        "CONFIG_SERIAL",
        "CONFIG_UART_ASYNC_API",
        "CONFIG_RING_BUFFER",
        "CONFIG_DMA",
        "CONFIG_MAIN_STACK_SIZE",
    }
    # The handoff thread drains the ring the callback fills.
    assert "ring_buf_get" in _calls(_functions(main)["app_rx_worker_entry"])


def test_dma_uart_rx_on_nrf52840_uses_the_uartes_own_easydma() -> None:
    plan = parse_plan(_console_rx_plan("nrf52840", "UARTE0_RX", circular=False))
    files = lower(plan, load_target("nrf52840"), "zephyr").files
    assert "dmas" not in files["boards/nrf52840dk_nrf52840.overlay"]
    assert _kconfig(files["prj.conf"]) == {
        "CONFIG_SERIAL",
        "CONFIG_UART_ASYNC_API",
        "CONFIG_RING_BUFFER",
        "CONFIG_MAIN_STACK_SIZE",
    }
    main = files["src/main.c"]
    isr_calls = _assert_async_rx_shape(main, "app_rx_callback", "app_rx_setup")
    # One-shot: the whole buffer is given once and never re-armed; no half-buffer answers.
    assert "uart_rx_buf_rsp" not in isr_calls
    assert "uart_rx_enable(app_rx_uart, app_rx_buf, 256U, " in main
    assert "uart_rx_enable" not in _calls(_functions(main)["app_rx_step"])
    # The buffer lives in the default RAM: no section attribute (EasyDMA reaches all of Data RAM).
    assert "static uint8_t app_rx_buf[256] __aligned(4);" in main
    # Without a handoff thread, the main loop drains the ring.
    assert "ring_buf_get" in _calls(_functions(main)["app_rx_step"])
    assert verify_sources(files, "zephyr", load_target("nrf52840")).evidence == []


def test_dma_uart_rx_on_stm32h743_places_the_buffer_in_non_cacheable_memory() -> None:
    target = _with_dmamux(load_target("stm32h743"), H7_DMAMUX)
    plan = parse_plan(_console_rx_plan("stm32h743", "USART3_RX"))
    assert check(plan, target, "zephyr") == []
    files = lower(plan, target, "zephyr").files
    overlay = files["boards/nucleo_h743zi.overlay"]
    # DMAMUX1 channel 7 (DMA1's last stream, leaving low ones to dma_request_channel), request line 45.
    assert "dmas = <&dmamux1 7 45 STM32_DMA_PERIPH_RX>;" in overlay
    assert re.search(r"&dmamux1 \{\s+status = \"okay\";", overlay) and re.search(r"&dma1 \{", overlay)
    main = files["src/main.c"]
    # D-cached AXI SRAM: the driver starts the DMA, so no clean can precede it; the buffer is __nocache,
    # cache-line aligned and a whole number of lines per half.
    declared = re.search(r"static uint8_t app_rx_buf\[(\d+)\] __aligned\((\d+)\) __nocache;", main)
    assert declared, main
    size, align = map(int, declared.groups())
    assert align == 32 and size % (2 * 32) == 0
    assert "#include <zephyr/linker/section_tags.h>" in main
    prj = _kconfig(files["prj.conf"])
    assert {"CONFIG_NOCACHE_MEMORY", "CONFIG_UART_ASYNC_API", "CONFIG_DMA"} <= prj
    assert "CONFIG_CACHE_MANAGEMENT" not in prj
    _assert_async_rx_shape(main, "app_rx_callback", "app_rx_setup")
    verification = verify_sources(files, "zephyr", target)
    assert verification.evidence == [] and all(v.passed for v in verification.verdicts)


def test_dma_uart_rx_without_a_known_request_route_is_unsupported() -> None:
    target = _without_rx_route(load_target("stm32h743"))
    with pytest.raises(LoweringError) as caught:
        lower(parse_plan(_console_rx_plan("stm32h743", "USART3_RX")), target, "zephyr")
    evidence = caught.value.evidence[0]
    assert evidence.code == "E_TARGET_UNSUPPORTED" and evidence.location == "operations[0]"


def test_a_cached_buffer_outside_the_default_ram_cannot_be_made_nocache() -> None:
    target = _with_dmamux(load_target("stm32h743"), H7_DMAMUX)
    data = _console_rx_plan("stm32h743", "USART3_RX", placement="SRAM1")
    with pytest.raises(LoweringError) as caught:
        lower(parse_plan(data), target, "zephyr")
    evidence = caught.value.evidence[0]
    assert evidence.code == "E_TARGET_UNSUPPORTED" and evidence.location == "resources.buffers[0].placement"
    fixed = apply_patch(data, evidence.relaxations[0].patch)
    assert "__nocache;" in lower(parse_plan(fixed), target, "zephyr").files["src/main.c"]


@pytest.mark.parametrize(
    ("peripheral", "location", "words"),
    [("ADC1", "operations[0].peripheral", "adc_scan"), ("USART3_RX", "operations[0].peripheral", "console")],
)
def test_dma_reception_other_than_the_console_uart_is_unsupported_with_a_reason(
    peripheral: str, location: str, words: str
) -> None:
    data = _console_rx_plan("stm32f407", peripheral)
    with pytest.raises(LoweringError) as caught:
        lower(parse_plan(data), load_target("stm32f407"), "zephyr")
    evidence = caught.value.evidence[0]
    assert evidence.code == "E_TARGET_UNSUPPORTED" and evidence.location == location
    assert words in evidence.message
    if peripheral.endswith("_RX"):
        fixed = apply_patch(data, evidence.relaxations[0].patch)
        assert "uart_rx_enable" in lower(parse_plan(fixed), load_target("stm32f407"), "zephyr").files["src/main.c"]


def test_one_receiver_per_uart() -> None:
    data = _console_rx_plan("nrf52840", "UARTE0_RX")
    data["operations"] = [{"op": "uart_rx_irq", "name": "irq_rx", "ring_bytes": 64}, *data["operations"]]
    with pytest.raises(LoweringError) as caught:
        lower(parse_plan(data), load_target("nrf52840"), "zephyr")
    evidence = caught.value.evidence[0]
    assert (
        evidence.location == "operations[1]" and "operations[0] already owns the receiver of uart0" in evidence.message
    )


# --- sensor: nRF52840 die temperature; ADC default pin ---------------------------------------------


@pytest.mark.parametrize("device", ["temp", "die_temp"])
def test_die_temperature_on_nrf52840_reads_the_temp_node(device: str) -> None:
    target = load_target("nrf52840")
    assert "temp" in target.board.dt_node_labels
    data = {
        "target": "nrf52840",
        "operations": [{"op": "sensor_read", "name": "die", "device": device, "channel": "die_temp"}],
    }
    files = lower(parse_plan(data), target, "zephyr").files
    main = files["src/main.c"]
    assert "DEVICE_DT_GET(DT_NODELABEL(temp))" in main
    functions = _functions(main)
    assert _calls(functions["app_die_setup"]) == ["device_is_ready"]
    step = _calls(functions["app_die_step"])
    assert step.index("sensor_sample_fetch") < step.index("sensor_channel_get")
    assert "sensor_channel_get(app_die_dev, SENSOR_CHAN_DIE_TEMP, value)" in main
    assert main.count("if (err < 0)") >= 2
    assert {"CONFIG_SENSOR", "CONFIG_TEMP_NRF5"} <= _kconfig(files["prj.conf"])
    assert re.search(r"&temp \{\s+status = \"okay\";", files["boards/nrf52840dk_nrf52840.overlay"])
    assert verify_sources(files, "zephyr", target).evidence == []


@pytest.mark.parametrize("target_id", ["nrf52840", "stm32h743", "stm32f407"])
def test_an_adc_channel_without_a_pin_samples_the_boards_default_pin(target_id: str) -> None:
    target = load_target(target_id)
    assert target.adc is not None, "the facts describe the ADC"
    default = target.board.adc_default_pin
    assert default is not None
    signal = next(s for s in target.pins[default].analog if re.fullmatch(r"ADC\d+_INP?\d+|AIN\d+", s))
    overlay = next(v for k, v in _lowered("adc_dt.yaml", target_id).items() if k.endswith(".overlay"))
    if signal.startswith("AIN"):
        assert f"zephyr,input-positive = <NRF_SAADC_{signal}>; /* {default} */" in overlay
    else:
        channel = int(re.sub(r".*\D", "", signal))
        assert f"pinctrl-0 = <&{signal.lower()}_{default.lower()}>;" in overlay
        assert f"reg = <{channel}>;" in overlay
