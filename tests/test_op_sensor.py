"""Sensors beyond a plain read: threshold (delta) triggers with slope attributes, burst reads (a FIFO read
as fetches in a loop) and a register-level in-app driver for a device without an upstream driver.

Seeded plans carry one violation each; the evidence names the objects (with magnitudes where a quantity
is wrong) and every relaxation offered validates once applied (obligations, lowering, the independent
verifier). The lowerings are read back: the generated driver, its binding and the overlay node.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from test_devicetree import Seeded

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.obligations import CODES
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.verify.config import parse_kconfig, parse_overlays
from rac_fw.resources import data_dir

LIS2DH = {"name": "accel", "bus": "i2c", "controller": "TWIM0", "address": 0x18}


def _motion(props: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    node = {"device": "accel", "compatible": "st,lis2dh", "interrupt": "P1.10",
            "properties": {"anym-on-int1": True} if props is None else props}  # fmt: skip
    op = {"op": "sensor_trigger", "name": "motion", "device": "accel", "channel": "accel_xyz", "trigger": "delta",
          "slope_threshold": 2.5, "slope_duration": 3, "sampling_hz": 50, **fields}  # fmt: skip
    return {"target": "nrf52840", "framework": "zephyr", "resources": {"devices": [LIS2DH]},
            "devicetree": {"nodes": [node]}, "operations": [op]}  # fmt: skip


def _burst(**fields: Any) -> dict[str, Any]:
    plan = yaml.safe_load((data_dir("examples") / "sensor_external.yaml").read_text())
    plan["operations"][0] |= fields
    if plan["operations"][0].get("burst", 1) > 1 and "sampling_hz" not in fields:
        del plan["operations"][0]["sampling_hz"]
    return {"framework": "zephyr", **plan}


def _driver(**fields: Any) -> dict[str, Any]:
    plan = yaml.safe_load((data_dir("examples") / "sensor_register_driver.yaml").read_text())
    plan["devicetree"]["drivers"][0] |= fields
    return {"framework": "zephyr", **plan}


def _without(plan: dict[str, Any], field: str) -> dict[str, Any]:
    del plan["operations"][0][field]
    return plan


def _upstream_copy() -> dict[str, Any]:
    """A register description of the TMP116, which Zephyr drives (ti,tmp116): the copy is not needed."""
    plan = _driver(compatible="ti,tmp116", channels=[{"channel": "ambient_temp", "reg": 0x00, "signed": True,
                                                      "scale_micro": 7812}])  # fmt: skip
    plan["devicetree"]["nodes"][0]["compatible"] = "ti,tmp116"
    plan["operations"] = plan["operations"][:1]
    return plan


SEEDED = [
    Seeded("delta-not-routed-to-the-wired-line", _motion({}), "E_SENSOR_TRIGGER", "devicetree.nodes[0].properties",
           ("accel", "anym-on-int1", "delta")),
    Seeded("slope-threshold-above-full-scale", _motion(slope_threshold=30.0), "E_SENSOR_THRESHOLD",
           "operations[0].slope_threshold", ("accel", "st,lis2dh", "slope_th"), ("limit", "m/s2")),
    Seeded("slope-duration-above-127-samples", _motion(slope_duration=200), "E_SENSOR_THRESHOLD",
           "operations[0].slope_duration", ("accel", "slope_dur"), ("requested", "samples")),
    Seeded("slope-on-a-data-ready-trigger", _without(_motion(trigger="data_ready"), "slope_duration"),
           "E_SENSOR_THRESHOLD", "operations[0].slope_threshold", ("accel", "slope_th")),
    Seeded("burst-longer-than-the-interval", _burst(burst=20, sampling_hz=25), "E_SENSOR_BURST",
           "operations[0].burst", ("tilt", "burst", "interval_ms"), ("burst_span", "ms")),
    Seeded("burst-without-a-sampling-period", _burst(burst=4), "E_SENSOR_BURST", "operations[0].sampling_hz",
           ("tilt", "burst", "sampling_hz")),
    Seeded("driver-for-a-device-zephyr-supports", _upstream_copy(), "E_DT_DRIVER",
           "devicetree.drivers[0].compatible", ("ti,tmp116",)),
]  # fmt: skip


@pytest.mark.parametrize("case", SEEDED, ids=lambda c: c.id)
def test_seeded_violation_names_its_objects_and_every_relaxation_validates(case: Seeded) -> None:
    result = run_plan(copy.deepcopy(case.plan))
    assert result.status is Status.INVALID
    matching = [e for e in result.evidence if e.code == case.code and e.location == case.location]
    assert matching, [(e.code, e.location, e.message) for e in result.evidence]
    evidence = matching[0]
    assert set(case.objects) <= set(evidence.objects), evidence.objects
    if case.magnitude is not None:
        assert case.magnitude in {(m.name, m.unit) for m in evidence.magnitudes}
    assert evidence.relaxations and case.code in CODES
    for relaxation in evidence.relaxations:
        after = run_plan(apply_patch(copy.deepcopy(case.plan), relaxation.patch))
        assert after.status is Status.PASS, (relaxation.description, [(e.code, e.message) for e in after.evidence])


def _files(plan: dict[str, Any]) -> dict[str, str]:
    return lower(parse_plan(plan), load_target(plan["target"]), plan["framework"]).files


def test_delta_trigger_sets_slope_attributes_before_arming() -> None:
    plan = _motion()
    assert run_plan(copy.deepcopy(plan)).status is Status.PASS
    files = _files(plan)
    main = files["src/main.c"]
    assert ".type = SENSOR_TRIG_DELTA" in main
    assert "const struct sensor_value slope_th = { .val1 = 2, .val2 = 500000 };" in main
    th, dur = main.index("SENSOR_ATTR_SLOPE_TH, &slope_th"), main.index("SENSOR_ATTR_SLOPE_DUR, &slope_dur")
    assert th < dur < main.index("sensor_trigger_set(app_motion_dev")
    assert "anym-on-int1;" in files["boards/nrf52840dk_nrf52840.overlay"]
    assert parse_kconfig(files["prj.conf"])["LIS2DH_TRIGGER_GLOBAL_THREAD"] == "y"


def test_burst_read_fetches_in_a_loop_one_sampling_period_apart() -> None:
    plan = _burst(burst=4, sampling_hz=25)
    assert run_plan(copy.deepcopy(plan)).status is Status.PASS
    main = _files(plan)["src/main.c"]
    assert "for (int i = 0; i < 4; i++) {" in main and "k_usleep(40000);" in main
    assert "sum[axis] += sensor_value_to_micro(&value[axis]);" in main and "int64_t mean = sum[axis] / 4;" in main


def test_register_driver_is_generated_with_its_binding_and_node() -> None:
    plan = load_plan(data_dir("examples") / "sensor_register_driver.yaml")
    result = run_plan(plan)
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    files = lower(plan, load_target("nrf52840"), "zephyr").files
    driver = files["src/drivers/acme_th06.c"]
    assert "#define DT_DRV_COMPAT acme_th06" in driver
    assert "SENSOR_DEVICE_DT_INST_DEFINE(inst, acme_th06_init" in driver
    assert ".bus = I2C_DT_SPEC_INST_GET(inst)" in driver
    # Identity check, the init write, one i2c_write_read_dt per channel, every result checked.
    assert "i2c_reg_read_byte_dt(&cfg->bus, 0xfcU, &id)" in driver and "if (id != 0x06U)" in driver
    assert "i2c_reg_write_byte_dt(&cfg->bus, 0xe6U, 0x3aU)" in driver
    assert driver.count("i2c_write_read_dt(&cfg->bus, &reg, 1U, buf, 2U)") == 2
    assert driver.count("if (err < 0) {") == 4
    # temperature = raw x 2681e-6 - 46.85 (°C), exactly as the plan's register description says.
    assert "micro = (int64_t)data->raw[0] * 2681LL + (-46850000LL);" in driver
    binding = yaml.safe_load(files["dts/bindings/acme,th06.yaml"])
    assert binding == {"description": binding["description"], "compatible": "acme,th06", "include": "i2c-device.yaml"}
    overlay = files["boards/nrf52840dk_nrf52840.overlay"]
    assert 'ext_climate: th06@40 {\n\t\tcompatible = "acme,th06";\n\t\treg = <0x40>;' in overlay
    assert "ext_climate" in parse_overlays(files).labels
    assert "DEVICE_DT_GET(DT_NODELABEL(ext_climate))" in files["src/main.c"]
    conf = parse_kconfig(files["prj.conf"])
    assert conf["SENSOR"] == "y" and conf["I2C"] == "y"
    assert "src/drivers/*.c" in files["CMakeLists.txt"]


def test_register_driver_sign_extends_and_shifts() -> None:
    """A 12-bit two's complement value left-aligned in two bytes (shift 4): sign bit 0x800, range 0x1000."""
    plan = _driver(channels=[{"channel": "ambient_temp", "reg": 0x00, "bytes": 2, "shift": 4, "signed": True,
                              "scale_micro": 62500}])  # fmt: skip
    plan["operations"] = plan["operations"][:1]
    assert run_plan(copy.deepcopy(plan)).status is Status.PASS
    driver = _files(plan)["src/drivers/acme_th06.c"]
    assert "value = (((uint32_t)buf[0] << 8U) | ((uint32_t)buf[1] << 0U)) >> 4U;" in driver
    assert "data->raw[0] = (int32_t)value - (((value & 0x800U) != 0U) ? 0x1000 : 0);" in driver


def test_register_description_rejects_a_lone_identity_register() -> None:
    plan = _driver(id_value=None)
    result = run_plan(plan)
    assert result.status is Status.INVALID
    assert any("id_register and id_value go together" in e.message for e in result.evidence)
