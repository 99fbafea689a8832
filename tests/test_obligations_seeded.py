"""Seeded violations: every obligation catches its plan, and its first relaxation repairs it.

Each case is a plan that is valid except for one seeded fault. The test checks the evidence (code,
named objects, location, magnitudes), then applies the first relaxation's patch to the plan dict and
re-validates: the code must be gone and, unless the case says otherwise, the plan must be fully valid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from test_behaviour_seeded import SEEDED as BEHAVIOUR_SEEDED
from test_devicetree import SEEDED as DEVICETREE_SEEDED
from test_fw_contract import SEEDED as CONTRACT_SEEDED
from test_op_periph import SEEDED as PERIPH_SEEDED
from test_op_sensor import SEEDED as SENSOR_SEEDED

from rac_fw.contract import apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.obligations import CODES, check
from rac_fw.domains.firmware.plan.load import parse_plan

PRINT = {"op": "uart_print", "message": "ok"}


@dataclass
class Case:
    id: str
    target: str
    plan: dict[str, Any]
    code: str
    objects: list[str]
    units: list[str] = field(default_factory=list)
    fully_valid_after: bool = True


def plan(*ops: dict[str, Any], framework: str | None = None, **top: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"operations": [PRINT, *ops]}
    if framework:
        data["framework"] = framework
    data.update(top)
    return data


def res(**kinds: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(kinds)


KV = {"op": "kv_record", "name": "rec", "key": "rec", "value_bytes": 32}
SELFTEST = {"op": "kv_record", "name": "selftest", "key": "selftest", "value_bytes": 16}
CONFIRM = {"op": "image_confirm", "self_test": "selftest"}
MOVE = {"mode": "swap_move"}

CASES = [
    # power (ops/power/sleep.py) and crypto (ops/crypto/) obligations
    Case("power-wake-source", "nrf52840", plan({"op": "sleep", "state": "system_off", "wake": ["rtc"], "after_ms": 500,
         "resume": "restart"}, framework="zephyr"), "E_POWER_WAKE_SOURCE", ["system_off", "rtc"], ["ms"]),
    Case("power-ram-lost", "esp32s3", plan({"op": "sleep", "state": "deep_sleep", "wake": ["rtc"], "after_ms": 500},
         framework="espidf"), "E_POWER_RAM_LOST", ["deep_sleep"], ["bytes"]),
    Case("power-state", "stm32f407", plan({"op": "sleep", "state": "hibernate", "wake": ["rtc"], "after_ms": 500},
         framework="zephyr"), "E_POWER_STATE", ["hibernate"]),
    Case("power-device-suspended", "stm32h743", plan({"op": "device_pm", "device": "usart3"}, framework="zephyr"),
         "E_POWER_DEVICE_SUSPENDED", ["usart3"], ["get/put pairs"]),
    Case("power-device", "stm32f407", plan({"op": "device_pm", "device": "flash0"}, framework="zephyr"),
         "E_POWER_DEVICE", ["flash0"]),
    Case("crypto-key-size", "native_sim", plan({"op": "cipher", "key": "k"}, stack_bytes=4096, resources={"keys": [
         {"name": "k", "type": "aes", "bits": 100, "usage": ["encrypt", "decrypt"]}]}), "E_CRYPTO_KEY_SIZE", ["k"],
         ["bits"]),
    Case("crypto-key", "native_sim", plan({"op": "mac", "key": "k", "message": "m"}, stack_bytes=4096),
         "E_CRYPTO_KEY", ["k"]),
    Case("crypto-key-usage", "native_sim", plan({"op": "cipher", "key": "k"}, stack_bytes=4096, resources={"keys": [
         {"name": "k", "type": "aes", "bits": 128, "usage": ["encrypt"]}]}), "E_CRYPTO_KEY_USAGE", ["k", "decrypt"]),
    Case("crypto-weak", "native_sim", plan({"op": "hash", "algorithm": "md5", "message": "m"}, stack_bytes=4096),
         "E_CRYPTO_WEAK", ["md5", "sha256"]),
    Case("crypto-block", "native_sim", plan({"op": "cipher", "key": "k", "mode": "cbc", "length_bytes": 20},
         stack_bytes=4096, resources={
         "keys": [{"name": "k", "type": "aes", "bits": 128, "usage": ["encrypt", "decrypt"]}]}), "E_CRYPTO_BLOCK",
         ["aes-cbc"], ["bytes"]),
    Case("crypto-stack", "native_sim", plan({"op": "random"}), "E_CRYPTO_STACK", ["stack_bytes"], ["bytes"]),
    Case("pin-conflict-pa9", "stm32h743", plan(
        {"op": "gpio_blink", "led": "led", "period_ms": 500},
        {"op": "uart_print", "uart": "USART1", "message": "tx"},
        resources=res(pins=[{"name": "tx", "pin": "PA9", "function": "USART1_TX"}, {"name": "led", "pin": "PA9"}]),
    ), "E_PIN_CONFLICT", ["PA9", "tx", "led"], fully_valid_after=False),  # PA9 is also the board's VBUS sense
    Case("pin-conflict", "nrf52840", plan(
        {"op": "gpio_blink", "led": "a", "period_ms": 500}, {"op": "gpio_blink", "led": "b", "period_ms": 300},
        resources=res(pins=[{"name": "a", "pin": "P1.01"}, {"name": "b", "pin": "P1.01"}]),
    ), "E_PIN_CONFLICT", ["P1.01", "a", "b"]),
    Case("pin-conflict-two-drivers", "nrf52840", plan(
        {"op": "gpio_blink", "led": "led0", "period_ms": 500},
        {"op": "pwm_fixed", "output": "led0", "period_us": 1000, "duty_percent": 10},
    ), "E_PIN_CONFLICT", ["P0.13", "LED1"]),
    Case("pin-function", "stm32f407", plan(
        {"op": "uart_print", "uart": "USART3", "message": "on usart3"}, framework="hal",
        resources=res(pins=[{"name": "tx3", "pin": "PA9", "function": "USART3_TX"}]),
    ), "E_PIN_FUNCTION", ["PA9", "USART3_TX"]),
    Case("pwm-no-timer-channel", "stm32f407", plan(
        {"op": "pwm_fixed", "output": "plain", "period_us": 1000, "duty_percent": 50},
        resources=res(pins=[{"name": "plain", "pin": "PE2"}]),
    ), "E_PIN_FUNCTION", ["plain", "PE2"]),
    Case("unknown-pin", "stm32f407", plan(
        {"op": "gpio_blink", "led": "led", "period_ms": 500}, resources=res(pins=[{"name": "led", "pin": "PK3"}]),
    ), "E_UNKNOWN_PIN", ["PK3", "led"]),
    Case("analog-pin", "stm32h743", plan({"op": "adc_read", "channel": {"pin": "PD0"}}), "E_ANALOG_PIN", ["PD0"]),
    Case("pin-reserved-swd", "stm32f407", plan(
        {"op": "gpio_blink", "led": "led", "period_ms": 500}, resources=res(pins=[{"name": "led", "pin": "PA13"}]),
    ), "E_PIN_RESERVED", ["PA13", "led"]),
    Case("pin-reserved-psram", "esp32s3", plan(
        {"op": "gpio_blink", "led": "led", "period_ms": 500}, resources=res(pins=[{"name": "led", "pin": "GPIO33"}]),
    ), "E_PIN_RESERVED", ["GPIO33", "led"]),
    Case("pin-strapping", "esp32s3", plan(
        {"op": "gpio_blink", "led": "led", "period_ms": 500}, resources=res(pins=[{"name": "led", "pin": "GPIO46"}]),
    ), "E_PIN_STRAPPING", ["GPIO46", "led"]),
    Case("nfc-pin", "nrf52840", plan(
        {"op": "gpio_blink", "led": "led", "period_ms": 500}, resources=res(pins=[{"name": "led", "pin": "P0.09"}]),
    ), "E_NFC_PIN", ["P0.09", "led"]),
    Case("dma-unreachable-dtcm", "stm32h743", plan(
        {"op": "dma_periph_rx", "peripheral": "USART1_RX", "buffer": "rx_buf"}, framework="hal",
        resources=res(buffers=[{"name": "rx_buf", "size_bytes": 64, "role": "dma_rx", "placement": "DTCM"}]),
    ), "E_DMA_UNREACHABLE", ["rx_buf", "DTCM", "DMA1"]),
    Case("dma-unreachable-ccm", "stm32f407", plan(
        {"op": "dma_mem2mem", "src": "src", "dst": "dst"},
        resources=res(buffers=[{"name": "src", "size_bytes": 64, "role": "dma_mem", "placement": "CCM"},
                               {"name": "dst", "size_bytes": 64, "role": "dma_mem"}]),
    ), "E_DMA_UNREACHABLE", ["src", "CCM", "DMA2"]),
    Case("dma-m2m-dma1", "stm32f407", plan(
        {"op": "dma_mem2mem", "src": "src", "dst": "dst", "controller": "DMA1"},
        resources=res(buffers=[{"name": "src", "size_bytes": 64, "role": "dma_mem"},
                               {"name": "dst", "size_bytes": 64, "role": "dma_mem"}]),
    ), "E_DMA_M2M_UNSUPPORTED", ["DMA1", "src", "dst"]),
    Case("cache-coherence", "stm32h743", plan(
        {"op": "dma_mem2mem", "src": "src", "dst": "dst"},
        resources=res(buffers=[{"name": "src", "size_bytes": 100, "role": "dma_mem"},
                               {"name": "dst", "size_bytes": 128, "role": "dma_mem"}]),
    ), "E_CACHE_COHERENCE", ["src", "AXI_SRAM"], ["bytes"]),
    Case("dma-alignment-adc-items", "stm32h743", plan(
        {"op": "adc_scan", "channels": [{"pin": "PA0"}, {"pin": "PA3"}], "buffer": "adc_buf"}, framework="hal",
        resources=res(buffers=[{"name": "adc_buf", "size_bytes": 64, "role": "dma_rx", "element_bytes": 1}]),
    ), "E_DMA_ALIGNMENT", ["adc_buf"], ["bytes"]),
    Case("dma-length", "esp32s3", plan(
        {"op": "dma_mem2mem", "src": "big", "dst": "sink"},
        resources=res(buffers=[{"name": "big", "size_bytes": 8192, "role": "dma_mem"},
                               {"name": "sink", "size_bytes": 8192, "role": "dma_mem", "element_bytes": 4}]),
    ), "E_DMA_LENGTH", ["big", "GDMA"], ["items"]),
    Case("no-peripheral", "stm32f407", plan({"op": "uart_print", "uart": "USART9", "message": "x"}),
         "E_NO_PERIPHERAL", ["USART9"]),
    Case("clock-range-i2c", "nrf52840", plan(
        {"op": "i2c_transfer", "device": "sensor", "register_index": 1},
        resources=res(devices=[{"name": "sensor", "bus": "i2c", "controller": "TWIM0", "address": 0x48,
                                "frequency_hz": 1_000_000}]),
    ), "E_CLOCK_RANGE", ["sensor", "TWIM0"], ["Hz"]),
    Case("baud-error-16mhz", "stm32f407", plan(
        {"op": "uart_print", "message": "fast", "baud": 921600},
        {"op": "gpio_blink", "led": "led0", "period_ms": 100}, framework="baremetal",
    ), "E_BAUD_ERROR", ["USART2", "921600"], ["baud", "%", "Hz"]),
    Case("baud-error-table", "nrf52840", plan({"op": "uart_print", "message": "fast", "baud": 921600}),
         "E_BAUD_ERROR", ["UARTE0", "921600"], ["baud", "%"]),
    Case("pwm-resolution", "nrf52840", plan({"op": "pwm_fixed", "output": "led0", "period_us": 2,
                                             "duty_percent": 33}), "E_PWM_RESOLUTION", ["led0"], ["steps", "Hz"]),
    Case("timer-range-systick", "stm32f407", plan(
        {"op": "timer_periodic", "period_us": 1500, "source": "systick"}, framework="baremetal",
    ), "E_TIMER_RANGE", ["SysTick"], ["us", "Hz"]),
    Case("timer-range-16bit", "stm32h743", plan({"op": "timer_periodic", "period_ms": 100_000, "source": "TIM3"},
                                                framework="hal"), "E_TIMER_RANGE", ["TIM3"], ["us"]),
    Case("unsupported-hw-timer-zephyr", "stm32f407", plan({"op": "timer_periodic", "period_ms": 20, "source": "TIM3"}),
         "E_TARGET_UNSUPPORTED", ["TIM3"]),
    Case("watchdog-feeder-blocks", "nrf52840", plan(
        {"op": "timer_periodic", "name": "tick", "period_ms": 10},
        {"op": "isr_handoff", "source": "tick", "mechanism": "semaphore", "thread": "worker"},
        {"op": "watchdog", "timeout_ms": 2000, "feed_interval_ms": 500, "feed_thread": "worker"},
        resources=res(threads=[{"name": "worker", "priority": 5, "stack_bytes": 1024}]),
    ), "E_WATCHDOG_WINDOW", ["worker"]),
    Case("timer-range-kernel-tick", "nrf52840", plan({"op": "timer_periodic", "period_us": 150}),
         "E_TIMER_RANGE", ["kernel"], ["us", "%"]),
    Case("irq-priority", "nrf52840", plan({"op": "gpio_input_irq", "button": "sw0", "edge": "falling",
                                           "irq_priority": 7}), "E_IRQ_PRIORITY", ["gpio_input_irq"], ["level"]),
    Case("irq-priority-espidf", "esp32s3", plan({"op": "timer_periodic", "period_ms": 10, "source": "TIMG0_T0",
                                                 "irq_priority": 5}), "E_IRQ_PRIORITY", ["timer_periodic"]),
    Case("isr-blocking-put", "nrf52840", plan(
        {"op": "gpio_input_irq", "name": "btn", "button": "sw0", "edge": "both"},
        {"op": "isr_handoff", "source": "btn", "mechanism": "msgq", "thread": "worker", "put_timeout_ms": 10},
        resources=res(threads=[{"name": "worker", "priority": 5, "stack_bytes": 1024}]),
    ), "E_ISR_BLOCKING", ["btn", "worker"], ["ms"]),
    Case("isr-blocking-log", "nrf52840", plan(
        {"op": "gpio_input_irq", "name": "btn", "button": "sw0", "edge": "both"},
        {"op": "log", "message": "pressed", "in_isr_of": "btn"},
    ), "E_ISR_BLOCKING", ["btn"]),
    Case("ram-budget", "stm32f407", plan(heap_bytes=200_000), "E_RAM_BUDGET", ["SRAM1", "heap"], ["bytes"]),
    Case("ram-budget-pinned-region", "stm32h743", plan(
        {"op": "dma_mem2mem", "src": "src", "dst": "dst"},
        resources=res(buffers=[{"name": "src", "size_bytes": 98304, "role": "dma_mem", "element_bytes": 4,
                                "placement": "SRAM4"},
                               {"name": "dst", "size_bytes": 98304, "role": "dma_mem", "element_bytes": 4}]),
    ), "E_RAM_BUDGET", ["SRAM4", "src"], ["bytes"]),
    Case("radio-conflict-adc2", "esp32s3", plan({"op": "adc_read", "channel": {"pin": "GPIO11"}}, wifi=True),
         "E_RADIO_CONFLICT", ["GPIO11", "ADC2", "wifi"]),
    Case("watchdog-window", "stm32f407", plan({"op": "watchdog", "timeout_ms": 1000, "feed_interval_ms": 900}),
         "E_WATCHDOG_WINDOW", ["watchdog", "main"], ["ms"]),
    Case("watchdog-range", "stm32f407", plan({"op": "watchdog", "timeout_ms": 60_000, "feed_interval_ms": 1000}),
         "E_WATCHDOG_RANGE", ["IWDG"], ["ms"]),
    Case("watchdog-range-task-wdt", "esp32s3", plan({"op": "watchdog", "timeout_ms": 200, "feed_interval_ms": 100}),
         "E_WATCHDOG_RANGE", ["TASK_WDT"], ["ms"]),
    Case("unsupported-op-framework", "stm32f407", plan(
        {"op": "gpio_read", "button": "sw0"}, framework="baremetal"), "E_TARGET_UNSUPPORTED", ["gpio_read"]),
    Case("unsupported-systick-zephyr", "stm32h743", plan({"op": "timer_periodic", "period_ms": 1,
                                                          "source": "systick"}), "E_TARGET_UNSUPPORTED", ["systick"]),
    Case("unsupported-dt-channel-espidf", "esp32s3", plan(
        {"op": "adc_read", "channel": {"path": "zephyr_user", "channel_index": 0}}), "E_TARGET_UNSUPPORTED",
        ["zephyr_user"]),
    Case("unsupported-wifi", "nrf52840", plan({"op": "wifi_station"}), "E_TARGET_UNSUPPORTED", ["nrf52840"]),
    # --- BLE and Wi-Fi (ops/ble, ops/wifi) ---
    Case("ble-adv-35-bytes", "nrf52840", plan({"op": "ble_advertise", "name": "adv",
         "device_name": "environment-sensor-001", "service_uuids": ["181a"], "manufacturer": {"company_id": 65535}}),
         "E_BLE_ADV_BUDGET", ["adv", "name"], ["bytes"]),
    Case("ble-interval-empty", "nrf52840", plan({"op": "ble_advertise", "interval_min_ms": 500,
         "interval_max_ms": 100}), "E_BLE_INTERVAL", [], ["ms"]),
    Case("ble-connections", "esp32s3", plan({"op": "ble_advertise", "name": "adv", "max_connections": 12}),
         "E_BLE_CONNECTIONS", ["adv"], ["connections"]),
    Case("ble-two-advertisers", "nrf52840", plan({"op": "ble_advertise"}, {"op": "ble_advertise", "name": "again"}),
         "E_BLE_ADV_SETS", ["again"]),
    Case("ble-value-over-mtu", "nrf52840", plan({"op": "ble_advertise"}, {"op": "ble_gatt_service", "name": "svc",
         "uuid": "180f", "characteristics": [{"name": "blob", "uuid": "2a19", "length_bytes": 40}]}),
         "E_BLE_MTU", ["svc", "blob"], ["bytes"]),
    Case("ble-notify-no-ccc", "nrf52840", plan({"op": "gpio_read", "name": "button", "button": "sw0"},
         {"op": "ble_advertise"}, {"op": "ble_gatt_service", "name": "svc", "uuid": "180f", "characteristics": [
             {"name": "level", "uuid": "2a19", "notify": True, "ccc": False, "source": "button"}]}),
         "E_BLE_CCC", ["svc", "level"]),
    Case("ble-notify-no-source", "nrf52840", plan({"op": "gpio_read", "name": "button", "button": "sw0"},
         {"op": "ble_advertise"}, {"op": "ble_gatt_service", "name": "svc", "uuid": "180f", "characteristics": [
             {"name": "level", "uuid": "2a19", "notify": True}]}),
         "E_BLE_NOTIFY_SOURCE", ["svc", "level"]),
    Case("ble-characteristic-no-access", "nrf52840", plan({"op": "ble_advertise"}, {"op": "ble_gatt_service",
         "uuid": "180f", "characteristics": [{"name": "dead", "uuid": "2a19", "read": False}]}),
         "E_BLE_CHARACTERISTIC", ["dead"]),
    Case("ble-security-no-io", "nrf52840", plan({"op": "ble_advertise", "name": "adv"}, {"op": "ble_gatt_service",
         "name": "svc", "uuid": "180f", "security": 3, "characteristics": [{"name": "level", "uuid": "2a19"}]}),
         "E_BLE_SECURITY", ["svc", "io_capabilities"], ["level"]),
    Case("ble-gatt-no-advertiser", "nrf52840", plan({"op": "ble_advertise", "connectable": False},
         {"op": "ble_gatt_service", "name": "svc", "uuid": "180f",
          "characteristics": [{"name": "level", "uuid": "2a19"}]}),
         "E_BLE_NO_ADVERTISER", ["svc"]),
    # --- BLE observer/central (ops/ble/ble_scan.py) ---
    Case("ble-scan-window-over-interval", "nrf52840", plan({"op": "ble_scan", "name": "finder", "interval_ms": 50,
         "window_ms": 100}), "E_BLE_SCAN_WINDOW", ["finder", "window_ms"], ["ms", "0.625 ms"]),
    Case("ble-two-scanners", "nrf52840", plan({"op": "ble_scan"}, {"op": "ble_scan", "name": "again"}),
         "E_BLE_SCANNERS", ["again"]),
    Case("ble-connect-any-advertiser", "nrf52840", plan({"op": "ble_scan", "name": "finder", "connect": True,
         "peer": {"service": "181a", "characteristic": "2a6e"}}), "E_BLE_SCAN_FILTER", ["finder", "filter"]),
    Case("ble-peer-without-connection", "esp32s3", plan({"op": "ble_scan", "name": "finder", "filter": {"uuid": "181a"},
         "peer": {"service": "181a", "characteristic": "2a6e"}}), "E_BLE_PEER", ["finder", "peer"]),
    Case("ble-central-bond-without-pairing", "esp32s3", plan({"op": "ble_scan", "name": "finder", "connect": True,
         "filter": {"uuid": "181a"}, "bond": True}), "E_BLE_BOND_PAIRING", ["finder", "bond"]),
    Case("wifi-backoff-inverted", "esp32s3", plan({"op": "wifi_station", "name": "sta", "retry_ms": 5000,
         "retry_max_ms": 1000}), "E_NET_TIMEOUT", ["sta"], ["ms"]),
    # --- IP networking (ops/net) ---
    Case("net-tcp-server-stm32f407", "stm32f407", plan({"op": "tcp_server", "port": 4242}),
         "E_TARGET_UNSUPPORTED", ["tcp_server", "stm32f407"]),
    Case("net-mqtt-qos3", "native_sim", plan({"op": "mqtt_publish", "broker": "127.0.0.1", "topic": "rac/up",
         "message": "up", "qos": 3}), "E_NET_MQTT_QOS", ["rac/up"], ["level"]),
    Case("net-mqtt-buffer", "native_sim", plan({"op": "mqtt_publish", "broker": "127.0.0.1", "topic": "rac/up",
         "message": "x" * 100, "buffer_bytes": 64}), "E_NET_BUFFER", ["rac/up"], ["bytes"]),
    Case("net-wifi-interface-down", "esp32s3", plan({"op": "udp_send", "host": "192.0.2.1", "port": 9,
         "message": "hi"}), "E_NET_INTERFACE", ["udp_send", "wifi_sta"]),
    Case("net-resolver-heap", "native_sim", plan({"op": "tcp_client", "host": "example.com", "port": 80,
         "message": "hi"}), "E_NET_HEAP", ["heap_bytes"], ["bytes"]),
    Case("wifi-two-stations", "esp32s3", plan({"op": "wifi_station"}, {"op": "wifi_station", "name": "other"}),
         "E_NET_INTERFACE", ["other"]),
    # --- application protocols and the network block (ops/net, plan/sections/network.py) ---
    Case("net-coap-token-9", "native_sim", plan({"op": "coap_request", "name": "c", "host": "127.0.0.1",
         "resource": "/t", "token_bytes": 9}), "E_NET_COAP_TOKEN", ["c"], ["bytes"]),
    Case("net-https-names-nothing", "native_sim", plan({"op": "http_request", "name": "h", "host": "192.0.2.1",
         "tls": "api"}, stack_bytes=3072), "E_NET_TLS_REF", ["h", "api"]),
    Case("net-https-main-stack", "native_sim", plan({"op": "tls_credentials", "name": "api", "ca": "api_ca"},
         {"op": "http_request", "name": "h", "host": "192.0.2.1", "tls": "api"}), "E_NET_STACK", ["h"], ["bytes"]),
    Case("net-tls-tag-twice", "native_sim", plan({"op": "tls_credentials", "name": "a", "ca": "a_ca"},
         {"op": "tls_credentials", "name": "b", "ca": "b_ca"}), "E_NET_TLS_TAG", ["b", "a"], ["tag"]),
    Case("net-gateway-outside-subnet", "esp32s3", plan({"op": "wifi_station"}, network={"ipv4": "static",
         "address": "192.168.1.50", "netmask": "255.255.255.0", "gateway": "10.0.0.1"}),
         "E_NET_ADDRESS", ["10.0.0.1"]),
    Case("unknown-led", "stm32h743", plan({"op": "gpio_blink", "led": "led7", "period_ms": 500}),
         "E_UNKNOWN_RESOURCE", ["led7"]),
    Case("unknown-thread", "nrf52840", plan(
        {"op": "timer_periodic", "name": "tick", "period_ms": 10},
        {"op": "isr_handoff", "source": "tick", "mechanism": "semaphore", "thread": "worker"},
    ), "E_UNKNOWN_RESOURCE", ["worker"]),
    Case("unknown-buffer", "stm32f407", plan(
        {"op": "dma_mem2mem", "src": "src", "dst": "dts"},
        resources=res(buffers=[{"name": "src", "size_bytes": 64, "role": "dma_mem"},
                               {"name": "dst", "size_bytes": 64, "role": "dma_mem"}]),
    ), "E_UNKNOWN_RESOURCE", ["dts"]),
    Case("unknown-region", "stm32h743", plan(
        {"op": "dma_mem2mem", "src": "src", "dst": "dst"},
        resources=res(buffers=[{"name": "src", "size_bytes": 64, "role": "dma_mem", "placement": "SRAM9"},
                               {"name": "dst", "size_bytes": 64, "role": "dma_mem"}]),
    ), "E_UNKNOWN_RESOURCE", ["src", "SRAM9"]),
    Case("uart-pins-missing", "stm32h743", plan({"op": "uart_rx_irq", "uart": "USART2", "ring_bytes": 32}),
         "E_UNKNOWN_RESOURCE", ["USART2", "USART2_TX", "USART2_RX"]),
    Case("i2c-address-reserved", "nrf52840", plan(
        {"op": "i2c_transfer", "device": "dev", "register_index": 0},
        resources=res(devices=[{"name": "dev", "bus": "i2c", "controller": "TWIM0", "address": 0x03}]),
    ), "E_I2C_ADDRESS", ["dev", "0x03"]),
    Case("i2c-address-twice", "nrf52840", plan(
        {"op": "i2c_transfer", "device": "a", "register_index": 0},
        {"op": "i2c_transfer", "device": "b", "register_index": 0},
        resources=res(devices=[{"name": "a", "bus": "i2c", "controller": "TWIM0", "address": 0x48},
                               {"name": "b", "bus": "i2c", "controller": "TWIM0", "address": 0x48}]),
    ), "E_I2C_ADDRESS", ["b", "a", "0x48"]),
    Case("stack-size", "esp32s3", plan(
        {"op": "producer_consumer", "producer": "p", "consumer": "c", "queue_depth": 4, "item_bytes": 4},
        resources=res(threads=[{"name": "p", "priority": 5, "stack_bytes": 1024},
                               {"name": "c", "priority": 5, "stack_bytes": 4096}]),
    ), "E_STACK_SIZE", ["p"], ["bytes"]),
    Case("duplicate-name", "nrf52840", plan(
        {"op": "gpio_blink", "name": "blink", "led": "led0", "period_ms": 500},
        resources=res(threads=[{"name": "blink", "priority": 5, "stack_bytes": 1024}]),
    ), "E_DUPLICATE_NAME", ["blink"], fully_valid_after=False),  # the thread runs nothing: E_THREAD_UNUSED stays
    Case("lock-order", "nrf52840", plan(
        {"op": "lock_order", "name": "first", "locks": ["a", "b"], "threads": ["t1"]},
        {"op": "lock_order", "name": "second", "locks": ["b", "a"], "threads": ["t2"]},
        resources=res(threads=[{"name": "t1", "priority": 5, "stack_bytes": 1024},
                               {"name": "t2", "priority": 6, "stack_bytes": 1024}]),
    ), "E_LOCK_ORDER", ["a", "b", "second", "first"]),
    Case("adc-resolution", "nrf52840", plan({"op": "adc_read", "channel": {"pin": "P0.03"}, "resolution_bits": 16}),
         "E_ADC_RESOLUTION", ["adc_read"], ["bits"]),
    # nRF52840: TWIM0 and SPIM0 are one block (SVD: both at 0x40003000), by SVD or devicetree name.
    Case("peripheral-shared", "nrf52840", plan(
        {"op": "i2c_transfer", "device": "sensor", "register_index": 0, "read_bytes": 1},
        {"op": "spi_transfer", "device": "flash", "write_bytes": 1, "read_bytes": 1},
        resources=res(devices=[{"name": "sensor", "bus": "i2c", "controller": "TWIM0", "address": 0x48},
                               {"name": "flash", "bus": "spi", "controller": "SPIM0", "chip_select": "P1.01"}]),
    ), "E_PERIPHERAL_SHARED", ["SPIM0", "TWIM0", "flash", "sensor"]),
    Case("peripheral-shared-dt-names", "nrf52840", plan(
        {"op": "i2c_transfer", "device": "sensor", "register_index": 0, "read_bytes": 1},
        {"op": "spi_transfer", "device": "flash", "write_bytes": 1, "read_bytes": 1},
        resources=res(devices=[{"name": "sensor", "bus": "i2c", "controller": "I2C1", "address": 0x48},
                               {"name": "flash", "bus": "spi", "controller": "SPI1", "chip_select": "P1.01"}]),
    ), "E_PERIPHERAL_SHARED", ["SPI1", "I2C1", "flash", "sensor"]),
    Case("watchdog-shared-reload", "nrf52840", plan(
        {"op": "watchdog", "name": "main_wdt", "timeout_ms": 2000, "feed_interval_ms": 500},
        {"op": "watchdog", "name": "worker_wdt", "timeout_ms": 4000, "feed_interval_ms": 1800},
    ), "E_WATCHDOG_SHARED", ["WDT", "main_wdt", "worker_wdt"], ["ms"]),
    Case("watchdog-shared-reload-iwdg", "stm32f407", plan(
        {"op": "watchdog", "timeout_ms": 1000, "feed_interval_ms": 200},
        {"op": "watchdog", "timeout_ms": 500, "feed_interval_ms": 100}, framework="hal",
    ), "E_WATCHDOG_SHARED", ["IWDG"], ["ms"]),
    # The relaxations the issue found broken or missing.
    Case("pin-function-usart2-pa9-f407", "stm32f407", plan(
        {"op": "uart_print", "uart": "USART2", "message": "x"}, framework="hal",
        resources=res(pins=[{"name": "tx2", "pin": "PA9", "function": "USART2_TX"}]),
    ), "E_PIN_FUNCTION", ["PA9", "USART2_TX"]),
    Case("pin-function-usart2-pa9-h743", "stm32h743", plan(
        {"op": "uart_print", "uart": "USART2", "message": "x"}, framework="hal",
        resources=res(pins=[{"name": "tx2", "pin": "PA9", "function": "USART2_TX"}]),
    ), "E_PIN_FUNCTION", ["PA9", "USART2_TX"]),
    Case("no-peripheral-uart9-zephyr", "stm32h743", plan({"op": "uart_print", "uart": "UART9", "message": "x"}),
         "E_NO_PERIPHERAL", ["UART9"]),
    Case("no-peripheral-uart9-hal", "stm32h743", plan({"op": "uart_print", "uart": "UART9", "message": "x"},
                                                      framework="hal"), "E_NO_PERIPHERAL", ["UART9"]),
    Case("dma-unreachable-bdma", "stm32h743", plan(
        {"op": "dma_periph_rx", "peripheral": "LPUART1_RX", "buffer": "lp_rx"}, framework="hal",
        resources=res(buffers=[{"name": "lp_rx", "size_bytes": 64, "role": "dma_rx", "placement": "AXI_SRAM"}]),
    ), "E_DMA_UNREACHABLE", ["lp_rx", "AXI_SRAM", "BDMA"]),
    Case("dma-unreachable-psram", "esp32s3", plan(
        {"op": "dma_mem2mem", "src": "src", "dst": "dst"},
        resources=res(buffers=[{"name": "src", "size_bytes": 256, "role": "dma_mem", "placement": "PSRAM"},
                               {"name": "dst", "size_bytes": 256, "role": "dma_mem"}]),
    ), "E_DMA_UNREACHABLE", ["src", "PSRAM", "GDMA"]),
    Case("ram-budget-several-buffers", "stm32h743", plan(
        {"op": "dma_mem2mem", "src": "a", "dst": "b"}, {"op": "dma_mem2mem", "src": "c", "dst": "d"},
        resources=res(buffers=[{"name": n, "size_bytes": 24576, "role": "dma_mem", "element_bytes": 4,
                                "placement": "SRAM4"} for n in "abcd"]),
    ), "E_RAM_BUDGET", ["SRAM4", "a", "b", "c", "d"], ["bytes"]),
    Case("timer-range-below-one-tick", "nrf52840", plan({"op": "timer_periodic", "period_us": 3}),
         "E_TIMER_RANGE", ["kernel"], ["us", "%"]),
    Case("baud-error-console-baremetal", "nrf52840", plan(
        {"op": "uart_print", "message": "fast", "baud": 921600}, framework="baremetal"),
        "E_BAUD_ERROR", ["UARTE0", "921600"], ["baud", "%"]),
    # events, kernel objects and watchdog supervision (ops/events, ops/kernel, ops/watchdog/task_watchdog.py)
    Case("reaction-wrong-event", "nrf52840", plan(
        {"op": "timer_periodic", "name": "tick", "period_ms": 100},
        {"op": "react", "name": "r", "source": "tick", "event": "edge", "action": "count"}, framework="zephyr",
    ), "E_REACTION_EVENT", ["r", "tick", "edge"]),
    Case("reaction-isr-for-thread-event", "nrf52840", plan(
        {"op": "work_item", "name": "job"},
        {"op": "react", "name": "r", "source": "job", "event": "done", "action": "count", "context": "isr"},
        framework="zephyr",
    ), "E_REACTION_CONTEXT", ["r", "job"]),
    Case("reaction-gives-a-timer", "nrf52840", plan(
        {"op": "timer_periodic", "name": "tick", "period_ms": 100},
        {"op": "semaphore", "name": "sig", "taker": "t", "take_timeout_ms": 100},
        {"op": "react", "name": "r", "source": "tick", "event": "expiry", "action": "give", "target": "tick"},
        framework="zephyr", resources=res(threads=[{"name": "t", "priority": 5, "stack_bytes": 1024}]),
    ), "E_REACTION_TARGET", ["r", "tick"]),
    Case("semaphore-initial-above-limit", "nrf52840", plan(
        {"op": "semaphore", "name": "sig", "taker": "t", "giver": "g", "initial": 2, "limit": 1,
         "take_timeout_ms": 100}, framework="zephyr",
        resources=res(threads=[{"name": n, "priority": 5, "stack_bytes": 1024} for n in ("t", "g")]),
    ), "E_SEMAPHORE_COUNT", ["sig"], ["count"]),
    Case("semaphore-never-given", "nrf52840", plan(
        {"op": "semaphore", "name": "sig", "taker": "t", "take_timeout_ms": "forever"}, framework="zephyr",
        resources=res(threads=[{"name": n, "priority": 5, "stack_bytes": 1024} for n in ("t", "g")]),
    ), "E_SEMAPHORE_NEVER_GIVEN", ["sig", "t"]),
    Case("work-never-submitted", "nrf52840", plan(
        {"op": "work_item", "name": "job", "submit": "by_reactions"}, framework="zephyr",
    ), "E_WORK_NEVER_SUBMITTED", ["job"]),
    Case("work-delay-beyond-period", "nrf52840", plan(
        {"op": "work_item", "name": "job", "submit": "periodic", "period_ms": 100, "delay_ms": 100},
        framework="zephyr",
    ), "E_WORK_PERIOD", ["job"], ["ms"]),
    Case("spinlock-section-too-long", "nrf52840", plan(
        {"op": "timer_periodic", "name": "tick", "period_ms": 100},
        {"op": "spinlock_state", "name": "s", "source": "tick", "event": "expiry", "thread": "t", "state_bytes": 128},
        framework="zephyr", resources=res(threads=[{"name": "t", "priority": 5, "stack_bytes": 1024}]),
    ), "E_CRITICAL_SECTION", ["s", "tick"], ["bytes"]),
    Case("event-flags-beyond-the-group", "esp32s3", plan(
        {"op": "event_flags", "name": "f", "flags": [f"b{i}" for i in range(25)], "waiter": "t", "setter": "g",
         "timeout_ms": 100}, framework="espidf",
        resources=res(threads=[{"name": n, "priority": 5, "stack_bytes": 4096} for n in ("t", "g")]),
    ), "E_EVENT_BITS", ["f"], ["bits"]),
    Case("event-flags-never-set", "nrf52840", plan(
        {"op": "event_flags", "name": "f", "flags": ["a"], "waiter": "t", "timeout_ms": 100}, framework="zephyr",
        resources=res(threads=[{"name": n, "priority": 5, "stack_bytes": 1024} for n in ("t", "g")]),
    ), "E_EVENT_NEVER_SET", ["f", "t"]),
    Case("mutex-wait-shorter-than-hold", "nrf52840", plan(
        {"op": "mutex_lock", "name": "m", "threads": ["t", "g"], "lock_timeout_ms": 1, "hold_ms": 5},
        framework="zephyr",
        resources=res(threads=[{"name": n, "priority": 5, "stack_bytes": 1024} for n in ("t", "g")]),
    ), "E_LOCK_TIMEOUT", ["m", "t", "g"], ["ms"]),
    # storage and update (ops/storage, ops/update, sections/bootloader)
    Case("storage-no-partition", "stm32f407", plan(KV, framework="zephyr"), "E_PARTITION_MISSING",
         ["storage", "stm32f407"]),
    Case("storage-two-sectors", "native_sim", plan({**KV, "sector_bytes": 16384}), "E_PARTITION_TOO_SMALL",
         ["rec", "storage_partition"], ["bytes", "count"]),
    Case("storage-sector-not-erase-multiple", "nrf52840", plan({**KV, "sector_bytes": 6144}), "E_SECTOR_SIZE",
         ["rec", "storage_partition"], ["bytes"]),
    Case("storage-record-too-large", "nrf52840", plan({**KV, "value_bytes": 4090}), "E_RECORD_TOO_LARGE",
         ["rec", "storage_partition"], ["bytes"]),
    Case("storage-endurance-10ms", "nrf52840", plan({**KV, "save_period_ms": 10}), "E_FLASH_ENDURANCE",
         ["rec", "nrf52840"], ["ms", "saves/day", "cycles", "years"]),
    Case("storage-esp-key-too-long", "esp32s3", plan({**KV, "key": "a_very_long_record_key"}, framework="espidf"),
         "E_KEY_TOO_LONG", ["a_very_long_record_key"], ["characters"]),
    Case("storage-misaligned-h743", "stm32h743", plan({"op": "flash_store", "offset_bytes": 8, "length_bytes": 100}),
         "E_WRITE_ALIGNMENT", ["offset_bytes", "stm32h743"], ["bytes"], fully_valid_after=False),
    Case("storage-erase-destroys-records", "nrf52840", plan(KV, {"op": "flash_store", "length_bytes": 64}),
         "E_PARTITION_SHARED", ["storage_partition", "kv_record", "flash_store"]),
    Case("update-no-bootloader", "nrf52840", plan(SELFTEST, CONFIRM), "E_BOOTLOADER_MISSING",
         ["image_confirm", "nrf52840"]),
    Case("update-self-test-unknown", "nrf52840", plan(SELFTEST, {**CONFIRM, "self_test": "nope"}, bootloader=MOVE),
         "E_SELFTEST", ["nope", "image_confirm"]),
    Case("update-image-larger-than-slot", "nrf52840", plan(
        {"op": "image_stream", "image_bytes": 500_000}, bootloader=MOVE), "E_IMAGE_TOO_LARGE",
         ["slot1_partition", "nrf52840"], ["bytes"]),
    Case("update-swap-without-secondary-slot", "stm32f407", plan(framework="zephyr", bootloader=MOVE),
         "E_BOOTLOADER_MODE", ["swap_move", "stm32f407"]),
    Case("update-swap-move-equal-slots", "native_sim", plan(bootloader=MOVE), "E_SLOT_MISMATCH",
         ["slot0_partition", "slot1_partition"], ["bytes"]),
    Case("update-direct-xip-downgrade", "native_sim", plan(bootloader={"mode": "direct_xip",
                                                                     "downgrade_prevention": True}),
         "E_BOOTLOADER_CONFLICT", ["downgrade_prevention", "direct_xip"]),
    Case("update-too-few-image-sectors", "nrf52840", plan(bootloader={**MOVE, "max_image_sectors": 64}),
         "E_BOOT_SECTORS", ["max_image_sectors", "nrf52840"], ["sectors"]),
]  # fmt: skip

# The periph blocks' and operations' own codes, one case each (their whole seeded suite: test_op_periph.py).
CASES += [
    Case(c.id, c.plan["target"], {k: v for k, v in c.plan.items() if k != "target"}, c.code, list(c.objects),
         [c.magnitude[1]] if c.magnitude else [])
    for c in {c.code: c for c in reversed(PERIPH_SEEDED)}.values()
]  # fmt: skip

# The devicetree block's pin/DMA/driver codes, core_clock's, the CAN operations' and the sensor depth codes, one
# case each (their whole seeded suites: test_devicetree.py, test_op_sensor.py).
CASES += [
    Case(c.id, c.plan["target"], {k: v for k, v in c.plan.items() if k != "target"}, c.code, list(c.objects),
         [c.magnitude[1]] if c.magnitude else [])
    for c in {c.code: c for c in reversed([*DEVICETREE_SEEDED, *SENSOR_SEEDED])}.values()
]  # fmt: skip

# Issue 27 (contract): codes added where a field did nothing (test_fw_contract.py).
CASES += [Case(id_, target, data, code, objects) for id_, target, data, code, objects in CONTRACT_SEEDED]

# Issue 13 (kernel2): message queues, heaps, double buffers, direct IRQs, cycle-counter timing.
_T2 = res(threads=[{"name": n, "priority": 5, "stack_bytes": 4096} for n in ("a", "b")])
_T1 = res(threads=[{"name": "a", "priority": 5, "stack_bytes": 4096}])
_TICK = {"op": "timer_periodic", "name": "tick", "period_ms": 2}
CASES += [
    Case("queue-same-thread", "nrf52840", plan({"op": "msg_queue", "name": "q", "producer": "a", "consumer": "a",
         "depth": 4, "put_timeout_ms": 0, "get_timeout_ms": 100}, framework="zephyr", resources=_T2),
         "E_QUEUE_SAME_THREAD", ["q", "a"]),
    Case("heap-too-small", "nrf52840", plan({"op": "heap_region", "name": "h", "heap_bytes": 1024, "blocks": 10,
         "block_bytes": 100, "alloc_timeout_ms": 0}, framework="zephyr"), "E_HEAP_TOO_SMALL", ["h"], ["bytes"]),
    Case("ping-pong-overrun", "nrf52840", plan(_TICK, {"op": "ping_pong", "name": "pp", "source": "tick",
         "event": "expiry", "consumer": "a", "half_items": 16, "process_ms": 40, "wait_timeout_ms": 100},
         framework="zephyr", resources=_T1), "E_PINGPONG_OVERRUN", ["pp", "a", "tick"], ["ms"]),
    Case("direct-irq-line-taken", "nrf52840", plan(
         {"op": "direct_irq", "name": "fast", "irq": "SWI0_EGU0", "zero_latency": True},
         {"op": "direct_irq", "name": "slow", "irq": "SWI0_EGU0", "priority": 3}, framework="zephyr"),
         "E_IRQ_IN_USE", ["fast", "slow", "SWI0_EGU0"]),
    Case("barrier-one-party", "nrf52840", plan({"op": "barrier", "name": "sync", "threads": ["a"],
         "wait_timeout_ms": 100}, framework="zephyr", resources=_T2), "E_BARRIER_PARTIES", ["sync", "a"]),
    Case("memory-domain-region", "nrf52840", plan({"op": "memory_domain", "name": "box", "partition_bytes": 300},
         framework="zephyr", config={"user_mode": True}), "E_MPU_REGION", ["box", "partition_bytes"], ["bytes"]),
    Case("memory-domain-user-mode-off", "nrf52840", plan({"op": "memory_domain", "name": "box",
         "partition_bytes": 256}, framework="zephyr"), "E_USER_MODE_OFF", ["box"]),
    Case("cycle-counter-wrap", "nrf52840", plan({"op": "cycle_timing", "name": "t", "deadline_us": 70_000_000},
         framework="baremetal"), "E_CYCLE_COUNTER_WRAP", ["t", "DWT"], ["us"]),
]  # fmt: skip


def _validate(data: dict[str, Any], target_id: str) -> list[Any]:
    plan = parse_plan(data)
    return check(plan, load_target(plan.target or target_id))  # a relaxation may move the plan to another board

# Issue 14 (store2): the confirm deadline, LittleFS caches and a reset-on-wake sleep that must come last, one case
# each (their whole seeded suites: test_op_update.py, test_op_storage.py, test_op_power.py).
_SELF_TEST = {"op": "kv_record", "name": "selftest", "key": "selftest", "value_bytes": 16}
CASES += [
    Case("confirm-later-than-the-watchdog", "nrf52840",
         {"bootloader": {"mode": "swap_move"}, "operations": [
             _SELF_TEST, {"op": "image_confirm", "name": "confirm", "self_test": "selftest", "deadline_ms": 5000},
             {"op": "watchdog", "name": "wdt", "timeout_ms": 2000, "feed_interval_ms": 500}]},
         "E_CONFIRM_DEADLINE", ["confirm", "wdt"], ["ms"]),
    Case("littlefs-cache-not-dividing-the-block", "nrf52840",
         {"framework": "zephyr", "operations": [
             {"op": "fs_file", "name": "bootlog", "file": "boot", "file_bytes": 1000, "cache_bytes": 48},
             {"op": "gpio_set", "led": "led0"}]},
         "E_FS_CACHE", ["boot", "nrf52840"], ["bytes"]),
    Case("system-off-before-another-operation", "nrf52840",
         {"framework": "zephyr", "operations": [
             {"op": "sleep", "name": "nap", "state": "system_off", "wake": ["gpio"], "button": "sw0",
              "resume": "restart"}, {"op": "gpio_set", "name": "lamp", "led": "led0"}]},
         "E_POWER_RESET_LAST", ["system_off", "nap", "gpio_set"], ["operations"]),
]  # fmt: skip


# Issue 15 (netfix): an MQTT last will published to a filter instead of a topic name (whole seeded suite:
# test_op_net_will.py).
CASES += [
    Case("mqtt-will-topic-wildcard", "native_sim", {"operations": [
         {"op": "mqtt_publish", "name": "up", "broker": "127.0.0.1", "topic": "rac/up", "message": "up",
          "last_will": {"topic": "rac/+/state", "message": "gone"}}]},
         "E_NET_MQTT_WILL", ["up", "rac/+/state"], ["characters"]),
]  # fmt: skip


# Issue 13 (kern3): one-time initialisation (its whole seeded suite: test_op_kernel_once.py).
CASES += [
    Case("once-init-one-caller", "nrf52840", plan({"op": "once_init", "name": "init", "threads": ["a"],
         "wait_timeout_ms": 100}, framework="zephyr", resources=_T2), "E_ONCE_PARTIES", ["init", "a"]),
]  # fmt: skip

# Issue 13 item 6 (spidma): SPI DMA is lowered for Zephyr STM32 only (its whole suite: test_op_spi_dma.py).
CASES += [
    Case("spi-dma-outside-zephyr", "stm32h743",
         {"framework": "hal", "resources": {"devices": [
             {"name": "flash", "bus": "spi", "controller": "SPI1", "chip_select": "PD14", "frequency_hz": 8000000}]},
          "operations": [{"op": "spi_transfer", "name": "jedec", "device": "flash", "register_index": 0x9F,
                          "read_bytes": 3, "dma": True}]},
         "E_SPI_DMA", ["SPI1", "flash"]),
]  # fmt: skip

# The plan-level mesh block (plan/sections/mesh.py; its whole seeded suite: test_mesh.py).
CASES += [
    Case("mesh-beside-a-connectable-advertiser", "nrf52840",
         {"mesh": {"led": "led1"}, "operations": [PRINT, {"op": "ble_advertise", "name": "adv"}]},
         "E_MESH_ADVERTISER", ["adv", "mesh"]),
]  # fmt: skip

# watchdog report_expiry: channel needs an expiry interrupt and RAM kept across the reset (test_op_watchdog_expiry.py).
CASES += [
    Case("watchdog-expiry-channel-iwdg", "stm32f407", plan({"op": "watchdog", "name": "wdt", "timeout_ms": 2000,
         "feed_interval_ms": 500, "report_expiry": "channel"}, framework="zephyr"), "E_WATCHDOG_CALLBACK",
         ["wdt", "IWDG", "expiry_callback"]),
]  # fmt: skip


# Issue 14 (espfs): fs_file on ESP-IDF, FAT on wear levelling (whole suite: test_op_fs_espidf.py).
CASES += [
    Case("fat-allocation-unit-not-a-sector-power", "esp32s3",
         {"framework": "espidf", "operations": [
             {"op": "fs_file", "name": "bootlog", "file": "boot", "file_bytes": 1000, "allocation_unit_bytes": 6144}]},
         "E_FS_ALLOCATION_UNIT", ["boot", "esp32s3"], ["bytes"]),
    Case("fat-file-larger-than-the-volume", "esp32s3",
         {"framework": "espidf", "operations": [
             {"op": "fs_file", "name": "bootlog", "file": "boot", "file_bytes": 1048576}]},
         "E_PARTITION_TOO_SMALL", ["storage", "boot", "esp32s3"], ["sectors", "bytes"]),
]  # fmt: skip

# Issue 13 item 6 (halperiph): i2c_target and adc_sample on the STM32Cube HAL (whole suite: test_hal_periph.py).
CASES += [
    Case("hal-adc-oversampling-without-an-oversampler", "stm32f407",
         {"framework": "hal", "operations": [{"op": "adc_sample", "name": "vin", "channel": {"pin": "PA1"},
                                              "oversampling": 2}]},
         "E_ADC_SETTING", ["vin", "ADC1", "oversampling"], ["log2"]),
    Case("hal-i2c-target-on-no-controller", "stm32h743",
         {"framework": "hal", "operations": [{"op": "i2c_target", "name": "regfile", "controller": "I2C9",
                                              "address": 0x42}]},
         "E_NO_PERIPHERAL", ["I2C9"]),
]  # fmt: skip

# Issue 14 (halrtc): the RTC wake-up timer programmed by the HAL reaches 40500 ms in no whole number of ticks
# (beyond 32768 ms it counts whole seconds; whole suite: test_hal_rtc_wake.py).
CASES += [
    Case("power-wake-time-rtc-hal", "stm32f407", plan({"op": "sleep", "name": "nap", "state": "stop", "wake": ["rtc"],
         "after_ms": 40500}, framework="hal"), "E_POWER_WAKE_TIME", ["stop", "rtc", "RTC_WKUP"], ["ms", "Hz"]),
]  # fmt: skip

# PSA Internal Trusted Storage records (ops/crypto/protected_store.py; more in test_op_protected_store.py).
ITS = {"op": "protected_store", "name": "blob", "record": "blob", "size_bytes": 64}
CASES += [
    Case("its-data-size", "nrf52840", plan({**ITS, "size_bytes": 300}, stack_bytes=4096), "E_ITS_DATA_SIZE",
         ["blob", "SECURE_STORAGE_ITS_MAX_DATA_SIZE"], ["bytes"]),
    Case("its-uid-zero", "nrf52840", plan({**ITS, "uid": 0}, stack_bytes=4096), "E_ITS_UID", ["blob", "0"], ["bits"]),
    Case("its-uid-shared", "native_sim", plan(ITS, {**ITS, "name": "cfg", "record": "cfg", "uid": 1}, stack_bytes=4096),
         "E_ITS_UID", ["cfg", "blob", "1"]),
    Case("its-write-once-rewritten", "nrf52840", plan({**ITS, "write_once": True}, {**ITS, "name": "again"},
         stack_bytes=4096), "E_ITS_WRITE_ONCE", ["blob", "PSA_STORAGE_FLAG_WRITE_ONCE"]),
    Case("its-write-once-removed", "nrf52840", plan({**ITS, "write_once": True, "remove": True}, stack_bytes=4096),
         "E_ITS_WRITE_ONCE", ["blob", "PSA_STORAGE_FLAG_WRITE_ONCE"]),
    Case("its-backend-h743", "stm32h743", plan(ITS, framework="zephyr", stack_bytes=4096), "E_ITS_BACKEND",
         ["storage_partition", "stm32h743", "blob"], ["bytes", "count"]),
    Case("its-partition-missing-f407", "stm32f407", plan(ITS, framework="zephyr", stack_bytes=4096),
         "E_PARTITION_MISSING", ["storage", "stm32f407", "zephyr"]),
    Case("its-partition-shared", "nrf52840", plan(ITS, KV, stack_bytes=4096), "E_PARTITION_SHARED",
         ["storage_partition", "protected_store", "kv_record"]),
    Case("its-espidf-refused", "esp32s3", plan(ITS, framework="espidf", stack_bytes=4096), "E_TARGET_UNSUPPORTED",
         ["protected_store", "esp32s3"]),
    Case("its-stack", "nrf52840", plan(ITS), "E_CRYPTO_STACK", ["stack_bytes", "protected_store"], ["bytes"]),
]  # fmt: skip

# The HAL's synchronous ADC clock against the clock tree a core_clock request sets: 480 MHz on the H743 leaves
# HCLK 240 MHz / 4 = 60 MHz for the ADC, over its 50 MHz limit; 400 MHz (HCLK 200 MHz / 4) fits.
CASES += [
    Case("adc-clock-over-limit-h743-480mhz", "stm32h743", plan(
        {"op": "core_clock", "mhz": 480}, {"op": "adc_read", "name": "a", "channel": {"pin": "PA0"}},
        framework="hal"), "E_ADC_CLOCK", ["a", "HCLK", "stm32h743"], ["Hz"]),
]


# The behaviour block's obligations, every case (their own checks: test_behaviour_seeded.py).
CASES += [Case(c.id, c.target, c.plan, c.code, list(c.objects), list(c.units)) for c in BEHAVIOUR_SEEDED]

@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_seeded_violation_is_caught_and_first_relaxation_repairs_it(case: Case) -> None:
    evidence = _validate(case.plan, case.target)
    hits = [e for e in evidence if e.code == case.code]
    assert hits, f"{case.code} not raised; got {[(e.code, e.message) for e in evidence]}"
    hit = hits[0]
    assert set(case.objects) <= set(hit.objects), hit.objects
    assert hit.location and hit.message
    assert {u for m in hit.magnitudes for u in [m.unit]} >= set(case.units)
    assert hit.relaxations and hit.relaxations[0].patch, "no machine-applicable relaxation"
    repaired = apply_patch(case.plan, hit.relaxations[0].patch)
    after = _validate(repaired, case.target)
    if case.fully_valid_after:
        assert after == [], [(e.code, e.location, e.message) for e in after]
    else:
        assert not [e for e in after if e.code == case.code and e.location == hit.location]


def test_suite_covers_every_code() -> None:
    covered = {c.code for c in CASES}
    assert covered == set(CODES), set(CODES) - covered
    assert len(CODES) >= 25


def test_all_violations_are_reported_at_once() -> None:
    seeded = plan(
        {"op": "uart_print", "message": "fast", "baud": 921600},
        {"op": "watchdog", "timeout_ms": 1000, "feed_interval_ms": 990},
        {"op": "gpio_blink", "led": "led", "period_ms": 500},
        framework="baremetal",
        resources=res(pins=[{"name": "led", "pin": "PA13"}]),
        heap_bytes=500_000,
    )
    codes = {e.code for e in _validate(seeded, "stm32f407")}
    assert {"E_BAUD_ERROR", "E_WATCHDOG_WINDOW", "E_PIN_RESERVED", "E_RAM_BUDGET"} <= codes


def test_dtcm_buffer_evidence_offers_the_regions_dma1_reaches() -> None:
    case = next(c for c in CASES if c.id == "dma-unreachable-dtcm")
    hit = next(e for e in _validate(case.plan, case.target) if e.code == "E_DMA_UNREACHABLE")
    target = load_target("stm32h743")
    offered = {step["value"] for r in hit.relaxations for step in r.patch if step["path"][-1] == "placement"}
    reachable = {r.name for r in target.regions_reachable_by("DMA1") if r.kind == "sram"}
    assert offered == reachable
    assert "DTCM" not in offered and hit.location == "resources.buffers[0].placement"


def test_pin_function_relaxations_name_alternate_functions() -> None:
    case = next(c for c in CASES if c.id == "pin-function")
    hit = next(e for e in _validate(case.plan, case.target) if e.code == "E_PIN_FUNCTION")
    target = load_target("stm32f407")
    for relaxation in hit.relaxations:
        pin = target.pins[relaxation.patch[0]["value"]]
        assert pin.af("USART3_TX") is not None
        assert f"AF{pin.af('USART3_TX')}" in relaxation.description


def test_evidence_is_deterministic() -> None:
    """Same plan, same facts → byte-identical evidence (trace replay compares it)."""
    for case in CASES[:12]:
        first = [e.model_dump() for e in _validate(case.plan, case.target)]
        assert first == [e.model_dump() for e in _validate(case.plan, case.target)], case.id


@pytest.mark.parametrize(("case_id", "pin"), [("pin-function-usart2-pa9-f407", "PA2"),
                                              ("pin-function-usart2-pa9-h743", "PD5")])  # fmt: skip
def test_usart2_tx_on_pa9_offers_the_admissible_usart2_tx_pin(case_id: str, pin: str) -> None:
    """PA2 and PD5 carry USART2_TX (AF7) on both chips; the F407 Discovery wires PA2 to its console
    USART2 and PD5 to the USB over-current flag, the Nucleo-H743ZI PA2 to Ethernet MDIO: each board
    gets the one it can use."""
    case = next(c for c in CASES if c.id == case_id)
    hit = next(e for e in _validate(case.plan, case.target) if e.code == "E_PIN_FUNCTION")
    offered = [r.patch[0]["value"] for r in hit.relaxations]
    assert offered[0] == pin and f"{pin} (USART2_TX, AF7)" in hit.relaxations[0].description
    target = load_target(case.target)
    assert all(target.pins[p].af("USART2_TX") == 7 for p in offered)


def test_shared_instance_evidence_names_both_uses_and_free_instances() -> None:
    case = next(c for c in CASES if c.id == "peripheral-shared")
    hit = next(e for e in _validate(case.plan, case.target) if e.code == "E_PERIPHERAL_SHARED")
    assert hit.location == "resources.devices[1].controller" and "0x40003000" in hit.message
    moved = {(r.patch[0]["path"][2], r.patch[0]["value"]) for r in hit.relaxations}
    assert (1, "SPIM0") not in moved and (1, "SPIM2") in moved and (0, "TWIM1") in moved
    same_bus = apply_patch(case.plan, [{"op": "replace", "path": ["resources", "devices", 1],
                                        "value": {"name": "flash", "bus": "i2c", "controller": "TWIM0",
                                                  "address": 0x50}}])  # fmt: skip
    same_bus["operations"][2] = {"op": "i2c_transfer", "device": "flash", "register_index": 0, "read_bytes": 1}
    assert not [e for e in _validate(same_bus, case.target) if e.code == "E_PERIPHERAL_SHARED"]


def test_watchdog_sharing_one_reload_accepts_one_common_timeout() -> None:
    case = next(c for c in CASES if c.id == "watchdog-shared-reload")
    hit = next(e for e in _validate(case.plan, case.target) if e.code == "E_WATCHDOG_SHARED")
    assert hit.location == "operations[2].timeout_ms"
    assert {m.name: m.value for m in hit.magnitudes} == {"timeout": 2000, "other_timeout": 4000}
    same = apply_patch(
        case.plan,
        [
            {"op": "replace", "path": ["operations", 2, "timeout_ms"], "value": 2000},
            {"op": "replace", "path": ["operations", 2, "feed_interval_ms"], "value": 500},
        ],
    )
    assert _validate(same, case.target) == []
    assert not [e for e in _validate(case.plan, "native_sim") if e.code == "E_WATCHDOG_SHARED"]  # no watchdog


def test_out_of_range_period_offers_the_nearest_admissible_one() -> None:
    """3 µs is a tenth of a 32768 Hz tick; one tick (30.5 µs) cannot be written in whole µs within 1 %,
    two ticks (61 µs) can: that is the value offered."""
    case = next(c for c in CASES if c.id == "timer-range-below-one-tick")
    hit = next(e for e in _validate(case.plan, case.target) if e.code == "E_TIMER_RANGE")
    assert hit.relaxations[0].patch[0] == {"op": "replace", "path": ["operations", 1, "period_us"], "value": 61}

