"""The ``config:`` and ``devicetree:`` blocks and external sensors: seeded violations, relaxations, lowering.

Each seeded plan carries one violation of a block's (or ``sensor_read``'s) own obligations; its evidence
must name the objects in conflict (and magnitudes with units where a quantity is wrong), and every
relaxation offered must validate once applied: the patched plan goes through ``pipeline.run_plan``
(obligations, lowering, the independent verifier) and passes. The clean plans' generated ``prj.conf``,
``sdkconfig.defaults`` and overlay are read back with the verifier's own Kconfig and devicetree parsers.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest
from test_op_periph2 import SEEDED as DEPTH_SEEDED

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.obligations import CODES
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.verify.config import parse_kconfig, parse_overlays
from rac_fw.resources import data_dir

BLINK = {"op": "gpio_blink", "name": "beat", "led": "led0", "period_ms": 500}
LIS2DH = {"name": "accel", "bus": "i2c", "controller": "TWIM0", "address": 0x18}


def _config(target: str, framework: str, config: dict[str, Any], ops: list[dict[str, Any]] | None = None) -> dict:
    return {"target": target, "framework": framework, "config": config, "operations": ops or [BLINK]}


def _sensor(node: dict[str, Any], read: dict[str, Any] | None = None) -> dict[str, Any]:
    op = {"op": "sensor_read", "name": "tilt", "device": "accel", "channel": "accel_xyz", **(read or {})}
    return {
        "target": "nrf52840",
        "framework": "zephyr",
        "resources": {"devices": [LIS2DH]},
        "devicetree": {"nodes": [{"device": "accel", "compatible": "st,lis2dh", **node}]},
        "operations": [op],
    }


@dataclass(frozen=True)
class Seeded:
    id: str
    plan: dict[str, Any]
    code: str
    location: str
    objects: tuple[str, ...]
    magnitude: tuple[str, str] | None = None
    """(name, unit) of a magnitude the evidence must carry."""


SEEDED = [
    Seeded(
        "log-buffer-without-deferred",
        _config("nrf52840", "zephyr", {"logging": {"mode": "immediate", "buffer_bytes": 4096}}),
        "E_CONFIG_CONFLICT",
        "config.logging.buffer_bytes",
        ("config.logging.buffer_bytes", "config.logging.mode"),
        ("buffer", "bytes"),
    ),
    Seeded(
        "minimal-logging-with-backend",
        _config("nrf52840", "zephyr", {"logging": {"mode": "minimal", "backends": ["uart"]}}),
        "E_CONFIG_CONFLICT",
        "config.logging.backends",
        ("config.logging.backends", "config.logging.mode"),
    ),
    Seeded(
        "sentinel-with-mpu-guard",
        _config("stm32h743", "zephyr", {"hardening": {"stack_sentinel": True, "mpu_stack_guard": True}}),
        "E_CONFIG_CONFLICT",
        "config.hardening.stack_sentinel",
        ("config.hardening.stack_sentinel", "config.hardening.mpu_stack_guard"),
    ),
    Seeded(
        "sentinel-with-user-mode",
        _config("nrf52840", "zephyr", {"hardening": {"stack_sentinel": True}, "user_mode": True}),
        "E_CONFIG_CONFLICT",
        "config.hardening.stack_sentinel",
        ("config.hardening.stack_sentinel", "config.user_mode"),
    ),
    Seeded(
        "mpu-guard-without-mpu",
        _config("native_sim", "zephyr", {"hardening": {"mpu_stack_guard": True}}),
        "E_CONFIG_UNSUPPORTED",
        "config.hardening.mpu_stack_guard",
        ("config.hardening.mpu_stack_guard", "host"),
    ),
    Seeded(
        "user-mode-without-mpu",
        _config("esp32s3", "espidf", {"user_mode": True}, [{"op": "uart_print", "message": "hi"}]),
        "E_CONFIG_UNSUPPORTED",
        "config.user_mode",
        ("config.user_mode", "xtensa-lx7"),
    ),
    Seeded(
        "usb-console-without-usb-device",
        _config("stm32h743", "zephyr", {"console": "usb_cdc_acm"}),
        "E_CONFIG_UNSUPPORTED",
        "config.console",
        ("config.console", "NUCLEO-H743ZI"),
    ),
    Seeded(
        "deferred-logging-on-espidf",
        _config("esp32s3", "espidf", {"logging": {"mode": "deferred"}}, [{"op": "uart_print", "message": "hi"}]),
        "E_CONFIG_UNSUPPORTED",
        "config.logging.mode",
        ("config.logging.mode", "deferred", "espidf"),
    ),
    Seeded(
        "canaries-without-entropy",
        _config(
            "stm32f407", "zephyr", {"hardening": {"stack_canaries": True}}, [{"op": "uart_print", "message": "hi"}]
        ),
        "E_CONFIG_UNSUPPORTED",
        "config.hardening.stack_canaries",
        ("config.hardening.stack_canaries", "STM32F407G-DISC1"),
    ),
    Seeded(
        "config-block-on-hal",
        _config("stm32h743", "hal", {"hardening": {"asserts": True}}),
        "E_TARGET_UNSUPPORTED",
        "config",
        ("config", "stm32h743", "hal"),
    ),
    Seeded(
        "dt-required-property-missing",
        {
            **_sensor({}),
            "resources": {"devices": [{**LIS2DH, "address": 0x70, "name": "rh"}]},
            "devicetree": {"nodes": [{"device": "rh", "compatible": "sensirion,shtcx"}]},
            "operations": [{"op": "sensor_read", "name": "humid", "device": "rh", "channel": "humidity"}],
        },
        "E_DT_REQUIRED_PROPERTY",
        "devicetree.nodes[0].properties",
        ("rh", "sensirion,shtcx", "measure-mode"),
    ),
    Seeded(
        "dt-property-outside-enum",
        _sensor({"properties": {"int1-gpio-config": 9}}),
        "E_DT_PROPERTY_INVALID",
        "devicetree.nodes[0].properties.int1-gpio-config",
        ("accel", "st,lis2dh", "int1-gpio-config"),
    ),
    Seeded(
        "dt-property-undeclared",
        _sensor({"properties": {"odr": 128}}),
        "E_DT_PROPERTY_INVALID",
        "devicetree.nodes[0].properties.odr",
        ("accel", "st,lis2dh", "odr"),
    ),
    Seeded(
        "dt-interrupt-on-a-button",
        _sensor({"interrupt": "P0.11"}),
        "E_DT_PROPERTY_INVALID",
        "devicetree.nodes[0].interrupt",
        ("accel", "P0.11"),
    ),
    Seeded(
        "dt-unknown-compatible",
        _sensor({"compatible": "acme,widget"}),
        "E_DT_BINDING_UNKNOWN",
        "devicetree.nodes[0].compatible",
        ("acme,widget", "accel", "i2c"),
    ),
    Seeded(
        "dt-undeclared-device",
        {**_sensor({}), "devicetree": {"nodes": [{"device": "ghost", "compatible": "st,lis2dh"}]}},
        "E_DT_DEVICE_UNKNOWN",
        "devicetree.nodes[0].device",
        ("ghost",),
    ),
    Seeded(
        "sensor-channel-not-served",
        _sensor({}, {"channel": "humidity"}),
        "E_SENSOR_CHANNEL",
        "operations[0].channel",
        ("accel", "st,lis2dh", "humidity"),
    ),
    Seeded(
        "sensor-rate-not-supported",
        _sensor({}, {"sampling_hz": 30}),
        "E_SENSOR_ATTRIBUTE",
        "operations[0].sampling_hz",
        ("accel", "st,lis2dh", "sampling_frequency"),
        ("requested", "Hz"),
    ),
]


def _slab(target: str, **fields: Any) -> dict[str, Any]:
    op = {"op": "mem_slab", "name": "pool", "blocks": 16, "block_bytes": 64, **fields}
    return {"target": target, "framework": "zephyr", "operations": [op]}


SEEDED += [
    Seeded(
        "slab-block-not-word-multiple",
        _slab("nrf52840", block_bytes=30),
        "E_SLAB_ALIGNMENT",
        "operations[0].block_bytes",
        ("pool", "block_bytes"),
        ("block", "bytes"),
    ),
    Seeded(
        "slab-block-not-align-multiple",
        _slab("stm32h743", block_bytes=36, align_bytes=8),
        "E_SLAB_ALIGNMENT",
        "operations[0].block_bytes",
        ("pool", "block_bytes"),
        ("multiple", "bytes"),
    ),
    Seeded(
        "slab-align-not-power-of-two",
        _slab("stm32f407", align_bytes=12),
        "E_SLAB_ALIGNMENT",
        "operations[0].align_bytes",
        ("pool", "align_bytes"),
        ("align", "bytes"),
    ),
    Seeded(
        # nRF52840: 256 KiB of RAM; 4096 blocks of 64 bytes (256 KiB) leave nothing for stacks and the kernel.
        "slab-over-ram-budget",
        _slab("nrf52840", blocks=4096, block_bytes=64),
        "E_RAM_BUDGET",
        "operations[0].blocks",
        ("pool",),
        ("excess", "bytes"),
    ),
    Seeded(
        "stack-report-on-a-host-process",
        {"target": "native_sim", "framework": "zephyr", "operations": [{"op": "stack_report"}, BLINK]},
        "E_TARGET_UNSUPPORTED",
        "operations[0]",
        ("stack_report",),
    ),
]


def _trigger(node: dict[str, Any], device: dict[str, Any] | None = None) -> dict[str, Any]:
    plan = _sensor(node)
    plan["operations"] = [{"op": "sensor_trigger", "name": "motion", "device": "accel", "channel": "accel_xyz"}]
    if device is not None:
        plan["resources"] = {"devices": [{**LIS2DH, **device}]}
    return plan


SEEDED += [
    Seeded(
        "i2c-scan-on-a-controller-the-board-lacks",
        {"target": "stm32h743", "framework": "zephyr", "operations": [{"op": "i2c_scan", "controller": "I2C4"}]},
        "E_NO_PERIPHERAL",
        "operations[0].controller",
        ("I2C4", "NUCLEO-H743ZI"),
    ),
    Seeded(
        "trigger-interrupt-unwired",
        _trigger({}),
        "E_SENSOR_TRIGGER",
        "devicetree.nodes[0].interrupt",
        ("accel", "irq-gpios", "data_ready"),
    ),
    Seeded(
        "trigger-not-raised-by-driver",
        {
            **_trigger({"compatible": "bosch,bme280"}, {"address": 0x76}),
            "operations": [{"op": "sensor_trigger", "name": "env", "device": "accel", "channel": "press"}],
        },
        "E_SENSOR_TRIGGER",
        "operations[0].trigger",
        ("accel", "bosch,bme280", "data_ready"),
    ),
    Seeded(
        "trigger-without-node",
        {**_trigger({}), "devicetree": None},
        "E_SENSOR_TRIGGER",
        "operations[0].device",
        ("accel", "data_ready"),
    ),
]


@pytest.mark.parametrize("case", SEEDED, ids=lambda c: c.id)
def test_seeded_violation_names_its_objects_and_every_relaxation_validates(case: Seeded) -> None:
    result = run_plan(copy.deepcopy(case.plan))
    assert result.status is Status.INVALID
    matching = [e for e in result.evidence if e.code == case.code and e.location == case.location]
    assert matching, [(e.code, e.location, e.message) for e in result.evidence]
    evidence = matching[0]
    assert set(case.objects) <= set(evidence.objects), evidence.objects
    if case.magnitude is not None:
        assert (case.magnitude[0], case.magnitude[1]) in {(m.name, m.unit) for m in evidence.magnitudes}
    assert evidence.relaxations, f"{case.id}: no relaxation offered"
    assert case.code in CODES
    for relaxation in evidence.relaxations:
        patched = apply_patch(copy.deepcopy(case.plan), relaxation.patch)
        after = run_plan(patched)
        assert after.status is Status.PASS, (
            relaxation.description,
            [(e.code, e.location, e.message) for e in after.evidence],
        )


def _files(plan: dict[str, Any]) -> dict[str, str]:
    parsed = parse_plan(plan)
    return lower(parsed, load_target(plan["target"]), plan["framework"]).files


def test_config_lowers_to_kconfig_symbols_the_verifier_reads_back() -> None:
    plan = load_plan(data_dir("examples") / "config_hardened.yaml")
    result = run_plan(plan)
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    files = lower(plan, load_target("nrf52840"), "zephyr").files
    conf = parse_kconfig(files["prj.conf"])
    assert {k: conf[k] for k in ("LOG_MODE_DEFERRED", "LOG_BACKEND_UART", "MPU_STACK_GUARD", "ASSERT", "LOG")} == {
        "LOG_MODE_DEFERRED": "y",
        "LOG_BACKEND_UART": "y",
        "MPU_STACK_GUARD": "y",
        "ASSERT": "y",
        "LOG": "y",
    }
    assert conf["LOG_BUFFER_SIZE"] == "2048" and conf["LOG_DEFAULT_LEVEL"] == "4"
    assert conf["USB_DEVICE_STACK"] == "y" and conf["UART_LINE_CTRL"] == "y"
    overlay = parse_overlays(files)
    assert "rac_cdc_acm_uart" in overlay.labels
    assert {"zephyr_udc0", "rac_cdc_acm_uart"} <= {label for label, _ in overlay.references}


def test_espidf_config_switches_the_default_choice_member_off() -> None:
    """A Kconfig choice keeps one member: the lowering's default level/console is switched off explicitly."""
    plan = _config(
        "esp32s3",
        "espidf",
        {"logging": {"level": "debug"}, "console": "usb_cdc_acm", "hardening": {"stack_canaries": True}},
        [{"op": "uart_print", "message": "hi"}],
    )
    assert run_plan(copy.deepcopy(plan)).status is Status.PASS
    conf = parse_kconfig(_files(plan)["sdkconfig.defaults"])
    assert conf["LOG_DEFAULT_LEVEL_DEBUG"] == "y" and conf["LOG_DEFAULT_LEVEL_INFO"] == "n"
    assert conf["ESP_CONSOLE_USB_CDC"] == "y" and conf["ESP_CONSOLE_UART_DEFAULT"] == "n"
    assert conf["COMPILER_STACK_CHECK_MODE_NORM"] == "y"


def test_external_sensor_node_lowers_into_the_bus_controller_with_its_driver() -> None:
    plan = load_plan(data_dir("examples") / "sensor_external.yaml")
    assert run_plan(plan).status is Status.PASS
    files = lower(plan, load_target("nrf52840"), "zephyr").files
    overlay = files["boards/nrf52840dk_nrf52840.overlay"]
    assert "ext_accel: lis2dh@18 {" in overlay and "reg = <0x18>;" in overlay
    assert "irq-gpios = <&gpio1 10 GPIO_ACTIVE_HIGH>;" in overlay and "int1-gpio-config = <0x1>;" in overlay
    assert "ext_accel" in parse_overlays(files).labels
    conf = parse_kconfig(files["prj.conf"])
    assert conf["LIS2DH"] == "y" and conf["SENSOR"] == "y" and conf["I2C"] == "y"
    main = files["src/main.c"]
    assert "DEVICE_DT_GET(DT_NODELABEL(ext_accel))" in main
    assert "sensor_attr_set(app_tilt_dev, SENSOR_CHAN_ACCEL_XYZ, SENSOR_ATTR_SAMPLING_FREQUENCY, &rate)" in main


def test_spi_device_nodes_take_chip_selects_in_device_order() -> None:
    plan = {
        "target": "nrf52840",
        "framework": "zephyr",
        "resources": {
            "devices": [
                {"name": "env", "bus": "spi", "controller": "SPIM1", "chip_select": "P1.12", "frequency_hz": 1_000_000}
            ]
        },  # fmt: skip
        "devicetree": {"nodes": [{"device": "env", "compatible": "bosch,bme280"}]},
        "operations": [{"op": "sensor_read", "name": "pressure", "device": "env", "channel": "press"}],
    }
    result = run_plan(copy.deepcopy(plan))
    assert result.status is Status.PASS, [(e.code, e.location, e.message) for e in result.evidence]
    overlay = _files(plan)["boards/nrf52840dk_nrf52840.overlay"]
    assert "ext_env: bme280@0 {" in overlay and "spi-max-frequency = <1000000>;" in overlay
    assert "cs-gpios = <&gpio1 12 GPIO_ACTIVE_LOW>;" in overlay


def test_examples_cover_both_blocks() -> None:
    plans = [load_plan(p) for p in sorted(data_dir("examples").glob("*.yaml"))]
    assert any(p.config is not None for p in plans) and any(p.devicetree is not None for p in plans)


def test_trigger_handler_samples_in_thread_context_with_the_drivers_trigger_kconfig() -> None:
    plan = load_plan(data_dir("examples") / "sensor_trigger.yaml")
    assert run_plan(plan).status is Status.PASS
    files = lower(plan, load_target("nrf52840"), "zephyr").files
    conf = parse_kconfig(files["prj.conf"])
    assert conf["LIS2DH_TRIGGER_GLOBAL_THREAD"] == "y" and conf["GPIO"] == "y"
    main = files["src/main.c"]
    assert "sensor_trigger_set(app_motion_dev, &trigger, app_motion_handler)" in main
    assert ".type = SENSOR_TRIG_DATA_READY" in main


def test_i2c_scan_probes_each_device_address_with_an_empty_write() -> None:
    plan = load_plan(data_dir("examples") / "i2c_scan.yaml")
    assert run_plan(plan).status is Status.PASS
    files = lower(plan, load_target("nrf52840"), "zephyr").files
    main = files["src/main.c"]
    assert "for (uint16_t addr = 0x08; addr <= 0x77; addr++)" in main
    assert (
        ".len = 0U, .flags = I2C_MSG_WRITE | I2C_MSG_STOP" in main
        and "i2c_transfer(app_scan_bus, &msg, 1, addr)" in main
    )
    assert parse_kconfig(files["prj.conf"])["I2C"] == "y"
    with pytest.raises(ValueError, match="above last"):
        parse_plan({"target": "nrf52840", "operations": [{"op": "i2c_scan", "controller": "TWIM0", "first": 0x50,
                                                           "last": 0x20}]})  # fmt: skip


# The obligation suite (test_obligations_seeded) draws one case per code from this module's SEEDED: the
# peripheral-depth cases (test_op_periph2) join it here. Rebinding the name leaves the list the test above
# was parametrized with unchanged, so no case runs twice in this module.
SEEDED = [*SEEDED, *DEPTH_SEEDED]  # type: ignore[list-item]
