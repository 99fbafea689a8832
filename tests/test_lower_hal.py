"""The STM32Cube HAL lowering for the STM32F407 and STM32H743: file set, facts-derived numbers, order.

Every expectation is recomputed from the target facts (alternate functions, clocks, watchdog clock,
D-cache line, memory placement) rather than hard-coded, and the independent static verifier must give
each artifact a clean verdict.
"""

from __future__ import annotations

import copy
import dataclasses
import re

import pytest

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import dcache_active
from rac_fw.domains.firmware.lower import LoweringError, lower
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.placement import buffer_needs, placement
from rac_fw.domains.firmware.plan.escape import c_format
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.plan.matrix import realizes
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.verify.artifact import verify_sources
from tests.test_firmware_domain import DTCM_PLAN

TARGETS = ("stm32f407", "stm32h743")


#: Per board: free pins for USART RX by DMA and I2C1 (the F4 Discovery wires most USART pins elsewhere,
#: so it receives by DMA on its console USART2 and has no second UART), an ADC pin, the PWM-capable LED.
BOARD = {
    "stm32f407": {
        "pins": [("scl", "PB8", "I2C1_SCL"), ("sda", "PB7", "I2C1_SDA")],
        "dma_uart": "USART2", "irq_uart": None, "adc": "PA1", "pwm_led": "led1",
    },
    "stm32h743": {
        "pins": [("u1tx", "PB6", "USART1_TX"), ("u1rx", "PB7", "USART1_RX"), ("scl", "PB8", "I2C1_SCL"),
                 ("sda", "PB9", "I2C1_SDA")],
        "dma_uart": "USART1", "irq_uart": "USART3", "adc": "PA3", "pwm_led": "pwm_led0",
    },
}  # fmt: skip


def _plan(target_id: str) -> dict:
    """A plan over most HAL operations on free pins of the target's board."""
    board = BOARD[target_id]
    operations = [
        {"op": "gpio_blink", "led": "led0", "period_ms": 500},
        {"op": "gpio_input_irq", "name": "button", "button": "sw0", "edge": "rising", "debounce_ms": 30},
        {"op": "uart_print", "message": "hello", "repeat_interval_ms": 1000},
        {"op": "dma_periph_rx", "name": "dmarx", "peripheral": f"{board['dma_uart']}_RX", "buffer": "rx_buf"},
        {"op": "i2c_transfer", "name": "whoami", "device": "imu", "register_index": 0x75, "interval_ms": 1000},
        {"op": "adc_periodic", "name": "pot", "channel": {"pin": board["adc"]}, "interval_ms": 200},
        {"op": "pwm_fade", "output": board["pwm_led"], "period_us": 1000, "step_percent": 5, "interval_ms": 20},
        {"op": "timer_periodic", "name": "tick", "period_ms": 10},
        {"op": "timer_oneshot", "name": "once", "period_us": 2500, "source": "TIM2"},
        {"op": "watchdog", "timeout_ms": 3000, "feed_interval_ms": 1000},
        {"op": "dma_mem2mem", "name": "copy", "src": "src_buf", "dst": "dst_buf"},
        {"op": "log", "message": "values", "values": ["pot", "whoami"], "interval_ms": 1000},
    ]
    if board["irq_uart"]:
        operations.append(
            {"op": "uart_rx_irq", "name": "rx", "uart": board["irq_uart"], "ring_bytes": 64, "echo": True}
        )
    return {
        "target": target_id,
        "resources": {
            "pins": [{"name": n, "pin": p, "function": f} for n, p, f in board["pins"]],
            "buffers": [
                {"name": "src_buf", "size_bytes": 128, "role": "dma_mem"},
                {"name": "dst_buf", "size_bytes": 128, "role": "dma_mem"},
                {"name": "rx_buf", "size_bytes": 64, "role": "dma_rx"},
            ],
            "devices": [{"name": "imu", "bus": "i2c", "controller": "I2C1", "address": 0x68, "frequency_hz": 400000}],
        },
        "operations": operations,
    }


def _valid(data: dict, target: Target) -> Plan:
    plan = parse_plan(data, "test")
    evidence = check(plan, target, "hal")
    assert evidence == [], [f"{e.code} {e.location}: {e.message}" for e in evidence]
    return plan


@pytest.fixture(scope="module", params=TARGETS)
def case(request: pytest.FixtureRequest) -> tuple[Target, Plan, dict[str, str]]:
    target = load_target(request.param)
    plan = _valid(_plan(request.param), target)
    return target, plan, lower(plan, target, "hal").files


def _prefix(target: Target) -> str:
    assert target.board.hal_family is not None
    return target.board.hal_family.lower() + "xx"


def test_file_set_and_family_header(case: tuple[Target, Plan, dict[str, str]]) -> None:
    target, _, files = case
    prefix = _prefix(target)
    assert set(files) == {
        "Core/Inc/main.h", f"Core/Inc/{prefix}_hal_conf.h", f"Core/Inc/{prefix}_it.h", "Core/Src/main.c",
        f"Core/Src/{prefix}_hal_msp.c", f"Core/Src/{prefix}_it.c", "README.md",
    }  # fmt: skip
    assert f'#include "{prefix}_hal.h"' in files["Core/Inc/main.h"]
    other = {"stm32f4xx": "stm32h7xx", "stm32h7xx": "stm32f4xx"}[prefix]
    assert not any(other in text for text in files.values())


def test_alternate_functions_equal_the_pin_facts(case: tuple[Target, Plan, dict[str, str]]) -> None:
    target, _, files = case
    msp = files[f"Core/Src/{_prefix(target)}_hal_msp.c"]
    configured = re.findall(r"/\* (P[A-K]\d+): (\w+) \*/\n(?:.*\n){3}\s+init\.Alternate = GPIO_AF(\d+)_(\w+);", msp)
    assert {(pin, signal) for pin, signal, _, _ in configured} >= {(p, f) for _, p, f in BOARD[target.id]["pins"]}
    for pin, signal, number, instance in configured:
        assert int(number) == target.pins[pin].af(signal), (pin, signal)
        assert signal.startswith(instance)


def test_clock_enables_precede_every_init(case: tuple[Target, Plan, dict[str, str]]) -> None:
    target, _, files = case
    msp = files[f"Core/Src/{_prefix(target)}_hal_msp.c"]
    inits = re.sub(r"void HAL_\w+_MspDeInit\(.*?\n\}\n", "", msp, flags=re.S)
    blocks = re.findall(r"->Instance == (\w+)\) \{\n(.*?)\n    \}", inits, re.S)
    assert blocks
    for instance, body in blocks:
        gate = "ADC12" if instance in ("ADC1", "ADC2") and target.family == "STM32H7" else instance
        enable = body.find(f"__HAL_RCC_{gate}_CLK_ENABLE()")
        assert enable == body.find("__HAL_RCC_"), instance  # the peripheral gate is the first thing done
        for port in re.findall(r"HAL_GPIO_Init\(GPIO([A-K]),", body):
            assert -1 < body.find(f"__HAL_RCC_GPIO{port}_CLK_ENABLE()") < body.find(f"HAL_GPIO_Init(GPIO{port},")
    main = files["Core/Src/main.c"]
    gpio = main[main.index("static void MX_GPIO_Init(void)\n{") :]
    for port in set(re.findall(r"HAL_GPIO_Init\(GPIO([A-K]),", gpio.split("\n}\n")[0])):
        assert gpio.find(f"__HAL_RCC_GPIO{port}_CLK_ENABLE()") < gpio.find(f"HAL_GPIO_Init(GPIO{port},")
    # MX_DMA_Init (DMA clocks) runs before the UART init that links its RX stream.
    assert main.index("    MX_DMA_Init();") < main.index(f"    MX_{BOARD[target.id]['dma_uart']}_Init();")


def test_system_clock_reproduces_the_hal_clock_facts(case: tuple[Target, Plan, dict[str, str]]) -> None:
    target, _, files = case
    main = files["Core/Src/main.c"]

    def hz(name: str) -> int:
        clock = target.clock(name)
        assert clock is not None
        return clock.default_hz["hal"]

    sysclk = hz("SYSCLK")
    if sysclk == hz("HSI"):
        assert "RCC_SYSCLKSOURCE_HSI" in main and "RCC_PLL_NONE" in main
    else:
        values = {k: int(v) for k, v in re.findall(r"osc\.PLL\.PLL([MNQ]) = (\d+);", main)}
        p = int(re.search(r"RCC_PLLP_DIV(\d+)", main)[1])  # type: ignore[index]
        vco = hz("HSE") // values["M"] * values["N"]
        assert vco // p == sysclk and vco // values["Q"] == hz("PLL48CK")
    divider = {
        "APB1": r"APB1CLKDivider = RCC_(?:HCLK|APB1)_DIV(\d+)",
        "APB2": r"APB2CLKDivider = RCC_(?:HCLK|APB2)_DIV(\d+)",
    }
    for bus, pattern in divider.items():
        assert hz("HCLK") // int(re.search(pattern, main)[1]) == hz(bus), bus  # type: ignore[index]


def test_dma_buffers_placement_and_cache_maintenance_order(case: tuple[Target, Plan, dict[str, str]]) -> None:
    target, plan, files = case
    main = files["Core/Src/main.c"]
    regions = placement(plan, target)
    dcache = target.core.dcache
    # Cache care follows obligations.buffer_needs (extra.cache_enabled.hal), not a lowering assumption.
    needs = {n: buffer_needs(plan, target, "hal", n) for n in ("src_buf", "dst_buf", "rx_buf")}
    maintained = {n for n, need in needs.items() if need is not None and need.cache_maintenance}
    assert maintained == ({"src_buf", "dst_buf", "rx_buf"} if dcache_active(target, "hal") else set())
    for name in ("src_buf", "dst_buf", "rx_buf"):
        region = target.region(regions[name])
        assert region is not None and {"DMA1", "DMA2"} & set(region.reachable_by)
        section = re.escape(f'__attribute__((section(".dma.{regions[name]}.{name}"), aligned(')
        match = re.search(rf"\nstatic uint8_t {name}\[(\d+)\] {section}(\d+)\)\)\);", main)
        assert match is not None, name
        if dcache is not None:
            assert int(match[1]) % dcache.line_bytes == 0 and int(match[2]) % dcache.line_bytes == 0
    start = main.index("HAL_DMA_Start_IT(")
    receive = main.index("HAL_UART_Receive_DMA(")
    if not maintained:
        assert "SCB_" not in main
        return
    assert "SCB_EnableDCache();" in main and main.index("SCB_EnableDCache();") < main.index("HAL_Init()")
    # Clean the memory-side source before the DMA reads it.
    assert -1 < main.index("SCB_CleanDCache_by_Addr((uint32_t *)src_buf") < start
    # Invalidate the destination only after the completion interrupt has set the flag.
    done = main.index("if ((copy_done || copy_failed) && !copy_reported)")
    assert start < done < main.index("SCB_InvalidateDCache_by_Addr((uint32_t *)dst_buf") < main.index("memcmp(dst_buf")
    # UART RX by DMA: invalidated before the start and after each completed half.
    assert main.index("SCB_InvalidateDCache_by_Addr((uint32_t *)rx_buf") < receive
    loop = main.index("while (dmarx_seen != dmarx_halves)")
    assert loop < main.index("SCB_InvalidateDCache_by_Addr((uint32_t *)rx_buf", loop)


def test_conf_header_enables_exactly_the_modules_used(case: tuple[Target, Plan, dict[str, str]]) -> None:
    target, _, files = case
    conf = files[f"Core/Inc/{_prefix(target)}_hal_conf.h"]
    enabled = set(re.findall(r"#define HAL_(\w+)_MODULE_ENABLED", conf)) - {""}
    sources = "".join(text for path, text in files.items() if path.endswith(".c"))
    used = {m for m in re.findall(r"\bHAL_([A-Z0-9]+)_", sources) if m not in ("GPIO", "NVIC", "RCC")}
    used |= {"RCC", "GPIO", "CORTEX", "FLASH", "PWR", "DMA"}
    used = {"ADC" if m == "ADCEX" else "I2C" if m == "I2CEX" else m for m in used}
    assert enabled == used | {"CORTEX", "FLASH"}
    for module in enabled:
        assert f'#include "{_prefix(target)}_hal_{module.lower()}.h"' in conf


def test_irq_handlers_come_from_the_svd_facts(case: tuple[Target, Plan, dict[str, str]]) -> None:
    target, _, files = case
    it = files[f"Core/Src/{_prefix(target)}_it.c"]
    assert re.search(r"void SysTick_Handler\(void\)\n\{\n    HAL_IncTick\(\);", it)
    known = {i.name.replace("_STR", "_Stream") for p in target.peripherals.values() for i in p.interrupts}
    handlers = re.findall(r"void (\w+)_IRQHandler\(void\)\n\{\n    (HAL_\w+_IRQHandler)\(", it)
    assert BOARD[target.id]["dma_uart"] in {name for name, _ in handlers}
    for name, dispatcher in handlers:
        assert name in known, name
        assert dispatcher in (
            "HAL_UART_IRQHandler",
            "HAL_TIM_IRQHandler",
            "HAL_DMA_IRQHandler",
            "HAL_GPIO_EXTI_IRQHandler",
        )
    main = files["Core/Src/main.c"]
    for name, _ in handlers:
        assert f"{name}_IRQn" in main or f"{name}_IRQn" in files[f"Core/Src/{_prefix(target)}_hal_msp.c"]


def test_watchdog_timeout_from_lsi_facts(case: tuple[Target, Plan, dict[str, str]]) -> None:
    target, _, files = case
    main = files["Core/Src/main.c"]
    name = next(n for n in target.watchdogs if n.startswith("IWDG"))
    facts = target.watchdogs[name]
    assert facts.reload_max is not None and facts.clock_hz is not None
    prescaler = int(re.search(r"IWDG_PRESCALER_(\d+);", main)[1])  # type: ignore[index]
    reload = int(re.search(r"hiwdg\.Init\.Reload = (\d+)U;", main)[1])  # type: ignore[index]
    assert f"hiwdg.Instance = {name};" in main and reload <= facts.reload_max
    assert abs((reload + 1) * prescaler / facts.clock_hz * 1000 - 3000) <= prescaler / facts.clock_hz * 1000
    assert main.index("MX_IWDG_Init();") > main.index("HAL_DMA_Start_IT(")  # installed last, right before the loop
    assert "HAL_IWDG_Refresh(&hiwdg)" in main


def test_i2c_setup_matches_the_bus_clock(case: tuple[Target, Plan, dict[str, str]]) -> None:
    target, _, files = case
    main = files["Core/Src/main.c"]
    if target.family != "STM32H7":
        assert "hi2c1.Init.ClockSpeed = 400000;" in main
        return
    timing = int(re.search(r"hi2c1\.Init\.Timing = 0x([0-9A-F]{8})U;", main)[1], 16)  # type: ignore[index]
    kernel = target.clock("APB1").default_hz["hal"]  # type: ignore[union-attr]
    tick = ((timing >> 28) + 1) / kernel
    low, high = ((timing & 0xFF) + 1) * tick, (((timing >> 8) & 0xFF) + 1) * tick
    assert low >= 1.3e-6 and high >= 0.6e-6  # I2C fast-mode minima (UM10204 table 10)
    assert low + high >= 1 / 400_000 * 0.98


def test_hostile_strings_and_verifier_verdict(case: tuple[Target, Plan, dict[str, str]]) -> None:
    target, _, files = case
    verification = verify_sources(files, "hal", target)
    assert verification.ok, [f"{e.code} {e.location}: {e.message}" for e in verification.evidence]
    hostile = 'x"y\\z %d */ ??/'
    plan = _valid({"target": target.id, "operations": [{"op": "uart_print", "message": hostile}]}, target)
    main = lower(plan, target, "hal").files["Core/Src/main.c"]
    assert c_format(hostile + "\r\n") in main and hostile not in main


def test_thread_operations_are_unsupported() -> None:
    target = load_target("stm32h743")
    assert realizes("hal", "dma_mem2mem", target) and not realizes("hal", "isr_handoff", target)
    assert not realizes("hal", "gpio_blink", load_target("esp32s3"))
    plan = parse_plan(
        {
            "target": "stm32h743",
            "resources": {"threads": [{"name": "worker", "priority": 5, "stack_bytes": 1024}]},
            "operations": [
                {"op": "timer_periodic", "name": "tick", "period_ms": 10},
                {"op": "isr_handoff", "source": "tick", "mechanism": "semaphore", "thread": "worker"},
            ],
        }
    )
    assert any(e.code == "E_TARGET_UNSUPPORTED" for e in check(plan, target, "hal"))
    with pytest.raises(LoweringError) as raised:
        lower(plan, target, "hal")
    assert raised.value.evidence[0].code == "E_TARGET_UNSUPPORTED"


def test_bus_pins_the_plan_leaves_open_are_free_pins_with_their_facts_af() -> None:
    target = load_target("stm32h743")
    plan = _valid(
        {
            "target": "stm32h743",
            "resources": {"devices": [{"name": "tmp", "bus": "i2c", "controller": "I2C1", "address": 0x48}]},
            "operations": [{"op": "i2c_transfer", "device": "tmp", "register_index": 0, "read_bytes": 2}],
        },
        target,
    )
    lowered = lower(plan, target, "hal")
    chosen = dict(re.findall(r"(I2C1_\w+) on (P[A-K]\d+) \(chosen", " ".join(lowered.receipt.notes)))
    assert set(chosen) == {"I2C1_SCL", "I2C1_SDA"}
    msp = lowered.files["Core/Src/stm32h7xx_hal_msp.c"]
    for signal, pin in chosen.items():
        assert target.pins[pin].reserved is None
        assert f"/* {pin}: {signal} */" in msp and f"GPIO_AF{target.pins[pin].af(signal)}_I2C1;" in msp


def test_f4_dma_request_routes_come_from_the_pack() -> None:
    """USART2_RX on the F4 takes the (stream, channel) the DMA1 facts list (RM0090 Table 42), and a
    second RX request mapped to a taken stream is refused rather than sharing it."""
    target = load_target("stm32f407")
    dma1 = target.dma_controller("DMA1")
    assert dma1 is not None and dma1.routes("USART2_RX") == ((5, 4),)
    assert not any(d.requests for d in load_target("stm32h743").dma)  # H7: DMAMUX, no fixed table
    data = {
        "target": "stm32f407",
        "resources": {"buffers": [{"name": "rx_buf", "size_bytes": 64, "role": "dma_rx"}]},
        "operations": [{"op": "dma_periph_rx", "name": "rx", "peripheral": "USART2_RX", "buffer": "rx_buf"}],
    }
    files = lower(_valid(data, target), target, "hal").files
    stream, channel = dma1.routes("USART2_RX")[0]
    msp = files["Core/Src/stm32f4xx_hal_msp.c"]
    assert f"DMA1_Stream{stream};" in msp and f".Init.Channel = DMA_CHANNEL_{channel};" in msp
    assert f"void DMA1_Stream{stream}_IRQHandler(void)" in files["Core/Src/stm32f4xx_it.c"]


def test_timer_update_irq_and_spi_kernel_clock_from_facts() -> None:
    """A plan timer on TIM1 uses TIM1's *update* vector (TIM1_UP_TIM10 on the F4, TIM1_UP on the H7),
    and the SPI prescaler divides the kernel clock ``extra.spi`` names."""
    for target_id, vector in (("stm32f407", "TIM1_UP_TIM10"), ("stm32h743", "TIM1_UP")):
        target = load_target(target_id)
        data = {"target": target_id, "operations": [{"op": "timer_periodic", "period_ms": 10, "source": "TIM1"}]}
        it = lower(_valid(data, target), target, "hal").files[f"Core/Src/{_prefix(target)}_it.c"]
        assert f"void {vector}_IRQHandler(void)" in it, target_id
    h7 = load_target("stm32h743")
    data = {
        "target": "stm32h743",
        "resources": {"devices": [{"name": "flash_chip", "bus": "spi", "controller": "SPI1", "chip_select": "PD14",
                                   "frequency_hz": 8_000_000}]},
        "operations": [{"op": "spi_transfer", "device": "flash_chip", "write_bytes": 1, "read_bytes": 3}],
    }  # fmt: skip
    main = lower(_valid(data, h7), h7, "hal").files["Core/Src/main.c"]
    assert h7.spi is not None
    kernel = h7.clock(h7.spi.instances["SPI1"].clock)
    assert kernel is not None and kernel.default_hz["hal"] // 8 == 8_000_000
    assert "SPI_BAUDRATEPRESCALER_8" in main


def test_outputs_are_driven_to_their_idle_level_before_they_become_outputs(
    case: tuple[Target, Plan, dict[str, str]],
) -> None:
    """CubeMX order: HAL_GPIO_WritePin(idle level), then HAL_GPIO_Init(output), so the pin never glitches
    to the other level at the switch; the port's clock is enabled before both."""
    _, _, files = case
    main = files["Core/Src/main.c"]
    gpio = main[main.index("static void MX_GPIO_Init(void)\n{") :].split("\n}\n")[0]
    outputs = re.findall(r"HAL_GPIO_WritePin\((GPIO[A-K]), (GPIO_PIN_\d+), GPIO_PIN_(?:RE)?SET\);", gpio)
    assert outputs
    for port, pin in outputs:
        write = gpio.index(f"HAL_GPIO_WritePin({port}, {pin},")
        init = gpio.index(f"init.Pin = {pin};\n    init.Mode = GPIO_MODE_OUTPUT_PP;")
        assert gpio.index(f"__HAL_RCC_{port}_CLK_ENABLE();") < write < init < gpio.index(f"HAL_GPIO_Init({port},", init)


def test_loop_reads_the_tick_only_when_an_operation_needs_it_and_echo_sends_the_byte(
    case: tuple[Target, Plan, dict[str, str]],
) -> None:
    target, _, files = case
    main = files["Core/Src/main.c"]
    assert main.count("const uint32_t now = HAL_GetTick();") == 2  # the loop and the EXTI debounce callback
    assert "(void)now;" not in main and "(void)length;" not in main and "1 > 0" not in main
    if target.id == "stm32h743":  # uart_rx_irq with echo: the received byte itself, no casts, no constant test
        assert "HAL_UART_Transmit(&husart3, &byte, 1U, UART_TX_TIMEOUT_MS) != HAL_OK" in main
    error_callback = main[main.index("void HAL_UART_ErrorCallback(") :].split("\n}\n")[0]
    assert ("(void)huart;" in error_callback) != ("huart ==" in error_callback)


def test_dma_copy_outcome_is_printed_on_the_console_and_the_idle_loop_reads_no_tick() -> None:
    """A plan that only copies by DMA still reports "dma copy verified" on the board console (initialized
    for it), with a transmit timeout that covers the text at the console's baud rate."""
    target = load_target("stm32h743")
    data = {
        "target": "stm32h743",
        "resources": {"buffers": [{"name": "a", "size_bytes": 256, "role": "dma_mem"},
                                  {"name": "b", "size_bytes": 256, "role": "dma_mem"}]},
        "operations": [{"op": "dma_mem2mem", "name": "copy", "src": "a", "dst": "b", "verify": True}],
    }  # fmt: skip
    files = lower(_valid(data, target), target, "hal").files
    main = files["Core/Src/main.c"]
    console = target.board.console
    assert console is not None
    handle = f"h{console.uart.lower()}"
    assert f"MX_{console.uart}_Init();" in main and f"{handle}.Init.BaudRate = {console.baud};" in main
    assert '"dma copy verified\\r\\n"' in main
    assert f"HAL_UART_Transmit(&{handle}, (const uint8_t *)text, (uint16_t)strlen(text), UART_TX_TIMEOUT_MS)" in main
    timeout = int(re.search(r"#define UART_TX_TIMEOUT_MS (\d+)U", main)[1])  # type: ignore[index]
    assert timeout * 1e-3 > len("dma copy mismatch\r\n") * 10 / console.baud
    assert "HAL_GetTick()" not in _without_console_report(main)
    assert verify_sources(files, "hal", target).ok


def test_without_a_console_the_copy_outcome_stays_in_flags_and_a_silent_receiver_drains_its_ring() -> None:
    """On a board whose facts name no console the DMA copy result is kept for a debugger (no UART is
    invented), and a uart_rx_irq without echo drops what arrived instead of decoding it for nothing."""
    target = load_target("stm32h743")
    quiet = dataclasses.replace(target, board=dataclasses.replace(target.board, console=None))
    data = {
        "target": "stm32h743",
        "resources": {"buffers": [{"name": "a", "size_bytes": 64, "role": "dma_mem"},
                                  {"name": "b", "size_bytes": 64, "role": "dma_mem"}]},
        "operations": [{"op": "dma_mem2mem", "name": "copy", "src": "a", "dst": "b", "verify": True}],
    }  # fmt: skip
    files = lower(parse_plan(data, "test"), quiet, "hal").files
    main = files["Core/Src/main.c"]
    assert "UART_HandleTypeDef" not in main and "UART_TX_TIMEOUT_MS" not in main
    assert "copy_mismatch = !copy_failed && memcmp(b, a, 64U) != 0;" in main
    assert verify_sources(files, "hal", quiet).ok
    data = {
        "target": "stm32h743",
        "operations": [{"op": "uart_rx_irq", "name": "rx", "uart": "USART3", "ring_bytes": 32, "echo": False}],
    }
    main = lower(_valid(data, target), target, "hal").files["Core/Src/main.c"]
    assert "rx_tail = rx_head;" in main and "(void)byte" not in main
    assert "HAL_GetTick()" not in _without_console_report(main)


def _function(source: str, signature: str) -> str:
    """The body of the C function that starts with ``signature`` (up to the closing brace in column 0)."""
    start = source.index(signature)
    return source[start : source.index("\n}\n", start)]


def _without_console_report(main: str) -> str:
    """``main`` without ``rac_report``, the console-protocol transmitter: the one place that reads the tick
    in an app whose operations need none (it bounds its retry of a console busy with an interrupt transfer)."""
    return main.replace(_function(main, "static void rac_report(const char *line)"), "")


def _adc_dma_route(target: Target, files: dict[str, str]) -> tuple[str, int]:
    """(controller, stream) of the ADC1 DMA in the MSP, after checking it against the facts: the F4's fixed
    (stream, channel) table for ADC1, or the H7's DMAMUX request line and the controllers behind that mux."""
    msp = files[f"Core/Src/{_prefix(target)}_hal_msp.c"]
    adc_msp = _function(msp, "void HAL_ADC_MspInit(")
    match = re.search(r"(hdma_\w+)\.Instance = (DMA\d)_Stream(\d);", adc_msp)
    assert match is not None
    handle, controller, stream = match[1], match[2], int(match[3])
    assert f"__HAL_LINKDMA(hadc, DMA_Handle, {handle});" in adc_msp
    if any(c.requests for c in target.dma):
        facts = target.dma_controller(controller)
        assert facts is not None
        channel = int(re.search(r"\.Init\.Channel = DMA_CHANNEL_(\d+);", adc_msp)[1])  # type: ignore[index]
        assert (stream, channel) in facts.routes("ADC1")
    else:
        mux = target.dmamux["DMAMUX1"]
        assert controller in mux.controllers
        assert ".Init.Request = DMA_REQUEST_ADC1;" in adc_msp
        assert f"DMAMUX1 request line {mux.requests['ADC1']})" in adc_msp
    # The stream's vector is the one the SVD facts give its controller (DMA2_STR0 spelled DMA2_Stream0).
    vectors = {i.name.replace("_STR", "_Stream") for i in target.peripherals[controller].interrupts}
    assert f"{controller}_Stream{stream}" in vectors
    it = files[f"Core/Src/{_prefix(target)}_it.c"]
    assert f"HAL_DMA_IRQHandler(&{handle});" in _function(it, f"void {controller}_Stream{stream}_IRQHandler(void)")
    return controller, stream


def test_adc_scan_into_an_axi_buffer_runs_by_dma_and_invalidates_before_reading() -> None:
    """The DTCM plan of the domain tests, with the placement relaxed to AXI SRAM: the scan runs by DMA
    (HAL_ADC_Start_DMA), the completion callback only sets a flag, and the loop invalidates the whole
    cache-line-padded buffer after completion and before it reads a sample."""
    target = load_target("stm32h743")
    data = copy.deepcopy(DTCM_PLAN)
    data["resources"]["buffers"][0]["placement"] = "AXI_SRAM"  # type: ignore[index]
    plan = _valid(data, target)
    needs = buffer_needs(plan, target, "hal", "adc_buf")
    assert needs is not None and needs.region == "AXI_SRAM"
    assert needs.cache_maintenance and dcache_active(target, "hal") and target.core.dcache is not None
    files = lower(plan, target, "hal").files
    main = files["Core/Src/main.c"]
    line = target.core.dcache.line_bytes
    declared = re.search(r"\nstatic uint8_t adc_buf\[(\d+)\] __attribute__\(\(section\(\"\.dma\.AXI_SRAM\.adc_buf\"\), "
                         r"aligned\((\d+)\)\)\);", main)  # fmt: skip
    assert declared is not None and int(declared[1]) % line == 0 and int(declared[2]) % line == 0
    assert int(declared[1]) >= 64
    # Scan mode over the plan's one channel (PA0 = ADC1_INP16 in the pin facts), one DMA transfer per scan.
    assert "hadc1.Init.ScanConvMode = ADC_SCAN_ENABLE;" in main and "hadc1.Init.NbrOfConversion = 1;" in main
    assert "ADC_CONVERSIONDATA_DMA_ONESHOT" in main and "ADC_CHANNEL_16;" in main and "ADC_REGULAR_RANK_1;" in main
    assert "ADC1_INP16" in target.pins["PA0"].analog
    start = main.index("HAL_ADC_Start_DMA(&hadc1, (uint32_t *)adc_buf, 1U) == HAL_OK")
    flagged = main.index("if (adc_scan_0_busy && (adc_scan_0_ready || adc_scan_0_failed))")
    stop = main.index("HAL_ADC_Stop_DMA(&hadc1) == HAL_OK", flagged)
    invalidate = main.index("SCB_InvalidateDCache_by_Addr((uint32_t *)adc_buf, (int32_t)sizeof(adc_buf));")
    read = main.index("memcpy(&raw, &adc_buf[0], sizeof(raw));")
    assert start < flagged < stop < invalidate < read
    assert main.count("adc_buf[") == 2  # the declaration and the one read: the CPU never writes the buffer
    assert "value_adc_scan_0 = (int32_t)(((uint32_t)raw * 3300U) / 4095U);" in main
    assert target.adc is not None and target.adc.vref_mv == 3300
    # Interrupt context sets flags only.
    done = _function(main, "void HAL_ADC_ConvCpltCallback(ADC_HandleTypeDef *hadc)")
    assert "adc_scan_0_ready = true;" in done and not re.search(r"HAL_\w+\(|printf|Delay", done.split("{", 1)[1])
    assert "static volatile bool adc_scan_0_ready;" in main
    assert "adc_scan_0_failed = true;" in _function(main, "void HAL_ADC_ErrorCallback(ADC_HandleTypeDef *hadc)")
    _adc_dma_route(target, files)
    verdict = verify_sources(files, "hal", target)
    assert verdict.ok, [e.message for e in verdict.evidence]


@pytest.mark.parametrize("target_id", TARGETS)
def test_adc_dma_request_and_stream_come_from_the_facts(target_id: str) -> None:
    """With a UART receiving by DMA and a memory copy beside it, the ADC scan gets its own stream that the
    facts route ADC1 to; two channels become ranks 1 and 2 in plan order; every HAL return is checked."""
    target = load_target(target_id)
    assert realizes("hal", "adc_scan", target, "dma")
    pins = {"stm32f407": ("PA1", "PC1"), "stm32h743": ("PA3", "PC0")}[target_id]
    data = {
        "target": target_id,
        "resources": {"buffers": [{"name": "samples", "size_bytes": 32, "role": "dma_rx", "element_bytes": 2},
                                  {"name": "rx_buf", "size_bytes": 64, "role": "dma_rx"},
                                  {"name": "src_buf", "size_bytes": 64, "role": "dma_mem"},
                                  {"name": "dst_buf", "size_bytes": 64, "role": "dma_mem"}]},
        "operations": [
            {"op": "dma_periph_rx", "name": "dmarx", "peripheral": f"{BOARD[target_id]['dma_uart']}_RX",
             "buffer": "rx_buf"},
            {"op": "dma_mem2mem", "name": "copy", "src": "src_buf", "dst": "dst_buf"},
            {"op": "adc_scan", "name": "inputs", "channels": [{"pin": p} for p in pins], "buffer": "samples"},
            {"op": "log", "message": "mv", "values": ["inputs"], "interval_ms": 1000},
        ],
    }  # fmt: skip
    plan = _valid(data, target)
    files = lower(plan, target, "hal").files
    main = files["Core/Src/main.c"]
    streams = re.findall(r"(DMA\d_Stream\d)_IRQHandler\(void\)", files[f"Core/Src/{_prefix(target)}_it.c"])
    assert len(streams) == 3 and len(set(streams)) == 3  # no stream shared between operations
    controller, stream = _adc_dma_route(target, files)
    assert f"{controller}_Stream{stream}" in streams
    for rank, pin in enumerate(pins, 1):
        channel = re.match(r"ADC1_INP?(\d+)$", next(a for a in target.pins[pin].analog if a.startswith("ADC1_")))
        assert channel is not None
        config = f"config.Channel = ADC_CHANNEL_{channel[1]};\n    config.Rank = "
        assert config + (f"ADC_REGULAR_RANK_{rank};" if target_id == "stm32h743" else f"{rank};") in main
    assert "HAL_ADC_Start_DMA(&hadc1, (uint32_t *)samples, 2U)" in main and "HAL_ADC_PollForConversion" not in main
    assert "memcpy(&raw, &samples[2], sizeof(raw));" in main
    assert ("SCB_InvalidateDCache_by_Addr((uint32_t *)samples" in main) == dcache_active(target, "hal")
    for text in (main, files[f"Core/Src/{_prefix(target)}_hal_msp.c"]):
        for statement in re.findall(r"[^\n]*\b(?:HAL_ADC_(?:Init|ConfigChannel|Start_DMA|Stop_DMA)|HAL_DMA_Init|"
                                    r"HAL_ADCEx_Calibration_Start)\([^\n]*", text):  # fmt: skip
            assert "HAL_OK" in statement, statement
    assert verify_sources(files, "hal", target).ok


def test_a_dma_scan_owns_its_adc() -> None:
    """Another conversion on the scanned ADC would reprogram its sequence under the DMA: refused, located."""
    target = load_target("stm32f407")
    data = {
        "target": "stm32f407",
        "resources": {"buffers": [{"name": "samples", "size_bytes": 4, "role": "dma_rx", "element_bytes": 2}]},
        "operations": [
            {"op": "adc_scan", "name": "inputs", "channels": [{"pin": "PA1"}, {"pin": "PC1"}], "buffer": "samples"},
            {"op": "adc_periodic", "name": "pot", "channel": {"pin": "PC4"}, "interval_ms": 200},
        ],
    }
    with pytest.raises(LoweringError) as caught:
        lower(_valid(data, target), target, "hal")
    assert [(e.code, e.location) for e in caught.value.evidence] == [("E_TARGET_UNSUPPORTED", "operations[1].channel")]
    assert "inputs" in caught.value.evidence[0].message
