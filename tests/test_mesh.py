"""The plan-level ``mesh:`` block: a Bluetooth Mesh node lowered for Zephyr 4.1, its obligations and its verifier rules.

The lowering is checked against the header facts it was written from (``verify/sdk/zephyr/api.d/mesh.json``):
every mesh call and macro the generated C uses is in the catalog, and the opcode handlers have the 4.x
signature. Seeded violations apply every relaxation and validate again; one bad source per verifier rule.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.resources import data_dir

ROOT = Path(__file__).resolve().parents[1]
SOURCES = Path(__file__).resolve().parent / "bad_sources" / "zephyr"
CATALOG = ROOT / "rac_fw" / "domains" / "firmware" / "verify" / "sdk" / "zephyr" / "api.d" / "mesh.json"
EXAMPLE = data_dir("examples") / "mesh_onoff.yaml"
LAMP = {"op": "gpio_set", "name": "power", "led": "led0"}


def _plan(**mesh: Any) -> dict[str, Any]:
    return {"target": "nrf52840", "operations": [dict(LAMP)], "mesh": {"led": "led1", **mesh}}


def _lowered(plan: dict[str, Any], target: str = "nrf52840") -> dict[str, str]:
    result = run_plan(plan, target=target)
    assert result.status is Status.PASS, [(e.code, e.location, e.message) for e in result.evidence]
    assert result.lowered is not None
    return result.lowered.files


def _prj(files: dict[str, str]) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in files["prj.conf"].splitlines() if line.startswith("CONFIG_"))
    return dict(pairs)


@pytest.mark.parametrize("target", ["nrf52840", "nrf52840dongle"])
def test_example_lowers_to_a_mesh_node_with_the_cataloged_api(target: str) -> None:
    files = _lowered(yaml.safe_load(EXAMPLE.read_text()), target)  # PASS: the verifier accepted it too
    conf = _prj(files)
    for symbol in ("BT", "BT_OBSERVER", "BT_BROADCASTER", "BT_MESH", "BT_MESH_PB_ADV", "BT_SETTINGS", "SETTINGS",
                   "NVS", "FLASH_MAP", "HWINFO"):  # fmt: skip
        assert conf.get(f"CONFIG_{symbol}") == "y", symbol
    assert conf["CONFIG_BT_MESH_RELAY"] == "y" and "CONFIG_BT_MESH_PB_GATT" not in conf
    main = files["src/main.c"]
    catalog = json.loads(CATALOG.read_text())["headers"]
    functions = {name for header in catalog.values() for name in header["functions"]}
    macros = {name for header in catalog.values() for name in header["macros"]}
    used_functions = set(re.findall(r"\b(bt_mesh_\w+|net_buf_simple_\w+)\s*\(", main))
    used_macros = set(re.findall(r"\b(BT_MESH_[A-Z0-9_]+)\s*\(", main))
    assert used_functions and used_functions <= functions, used_functions - functions
    assert used_macros and used_macros <= macros, used_macros - macros
    assert "bt_mesh_model_send" in functions and "const struct bt_mesh_model *model" in catalog[
        "zephyr/bluetooth/mesh/access.h"]["functions"]["bt_mesh_model_send"]  # fmt: skip
    handlers = re.findall(r"static int (rac_mesh_onoff_\w+)\(([^)]*)\)", main)
    ops = {name for name, _ in handlers if name.endswith(("_get", "_set", "_set_unack"))}
    assert ops == {"rac_mesh_onoff_get", "rac_mesh_onoff_set", "rac_mesh_onoff_set_unack"}
    for name, params in handlers:
        if name in ops:
            assert re.sub(r"\s+", " ", params) == (
                "const struct bt_mesh_model *model, struct bt_mesh_msg_ctx *ctx, struct net_buf_simple *buf"
            ), name
    for needed in ("BT_MESH_MODEL_CFG_SRV", "BT_MESH_MODEL_HEALTH_SRV(", "BT_MESH_MODEL_ID_GEN_ONOFF_SRV",
                   "BT_MESH_MODEL_OP_END", "hwinfo_get_device_id(", "GPIO_DT_SPEC_GET(DT_ALIAS(led1), gpios)",
                   ".output_actions = BT_MESH_NO_OUTPUT", "bt_mesh_prov_enable(BT_MESH_PROV_ADV)",
                   '"rac: mesh ok %s uuid "'):  # fmt: skip
        assert needed in main, needed
    order = [main.index(call) for call in ("bt_enable(NULL)", "bt_mesh_init(", "settings_load()", "if (!bt_mesh_is")]
    assert order == sorted(order)


def test_fixed_uuid_bearers_and_relay_reach_the_sources() -> None:
    files = _lowered(_plan(uuid="00112233445566778899aabbccddeeff", pb_gatt=True, relay=False))
    conf = _prj(files)
    assert conf["CONFIG_BT_MESH_PB_GATT"] == "y" and conf["CONFIG_BT_PERIPHERAL"] == "y"
    assert conf["CONFIG_BT_MESH_RELAY"] == "n" and "CONFIG_HWINFO" not in conf
    main = files["src/main.c"]
    assert "static const uint8_t rac_mesh_uuid[16] = { 0x00, 0x11, 0x22, 0x33," in main
    assert "hwinfo_get_device_id" not in main
    assert "bt_mesh_prov_enable(BT_MESH_PROV_ADV | BT_MESH_PROV_GATT)" in main


def test_a_node_without_a_bearer_or_with_a_short_uuid_is_refused_at_the_field() -> None:
    for mesh, field in (({"pb_adv": False}, "mesh"), ({"uuid": "0011"}, "mesh.uuid")):
        result = run_plan(_plan(**mesh), target="nrf52840")
        assert result.status is Status.INVALID
        assert any((e.location or "").startswith(field) for e in result.evidence), result.evidence


SEEDED: list[tuple[str, str, dict[str, Any], str, list[str]]] = [
    ("connectable-advertiser", "nrf52840",
     {"target": "nrf52840", "operations": [dict(LAMP), {"op": "ble_advertise", "name": "adv"}],
      "mesh": {"led": "led1"}},
     "E_MESH_ADVERTISER", ["adv", "mesh"]),
    ("unknown-led", "nrf52840", _plan(led="led9"), "E_UNKNOWN_RESOURCE", ["led9", "nrf52840"]),
    ("no-radio-stm32f407", "stm32f407", {**_plan(), "target": "stm32f407"}, "E_TARGET_UNSUPPORTED", ["mesh"]),
    ("no-zephyr-host-esp32s3", "esp32s3",
     {"target": "esp32s3", "operations": [{"op": "uart_print", "message": "ok"}], "mesh": {"led": "led1"}},
     "E_TARGET_UNSUPPORTED", ["mesh", "esp32s3"]),
]  # fmt: skip


@pytest.mark.parametrize(("case", "target", "plan", "code", "objects"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_violation_and_every_relaxation_revalidates(
    case: str, target: str, plan: dict[str, Any], code: str, objects: list[str]
) -> None:
    result = run_plan(plan, target=target)
    assert result.status is Status.INVALID, case
    hits = [e for e in result.evidence if e.code == code and set(objects) <= set(e.objects)]
    assert hits, (case, [(e.code, e.objects, e.message) for e in result.evidence])
    assert hits[0].relaxations, case
    for relaxation in hits[0].relaxations:
        again = run_plan(apply_patch(plan, relaxation.patch), target=target)
        assert again.status is Status.PASS, (
            case,
            relaxation.description,
            [(e.code, e.message) for e in again.evidence],
        )


def test_no_radio_names_the_targets_that_have_one() -> None:
    result = run_plan({**_plan(), "target": "stm32f407"}, target="stm32f407")
    unsupported = next(e for e in result.evidence if e.code == "E_TARGET_UNSUPPORTED")
    assert "nrf52840, nrf52840dongle" in unsupported.message


def test_a_non_connectable_beacon_shares_the_host_with_the_node() -> None:
    plan = _plan()
    plan["operations"].append({"op": "ble_advertise", "name": "beacon", "connectable": False})
    main = _lowered(plan)["src/main.c"]
    assert main.count("bt_enable(NULL)") == 2 and "err != -EALREADY" in main


@pytest.mark.parametrize(
    ("name", "code"),
    [("mesh_init_before_enable", "E_CALL_ORDER"), ("mesh_prov_before_init", "E_CALL_ORDER"),
     ("mesh_init_unchecked", "E_UNCHECKED_RETURN")],
)  # fmt: skip
def test_each_mesh_defect_is_caught_at_its_line(name: str, code: str) -> None:
    text = (SOURCES / f"{name}.c").read_text()
    line = next(i + 1 for i, t in enumerate(text.splitlines()) if f"expect: {code}" in t)
    files = {"src/main.c": text, "prj.conf": (SOURCES / "support" / "prj_mesh.conf").read_text()}
    result = verify_sources(files, "zephyr", None)
    assert {e.code for e in result.evidence} == {code}, [(e.code, e.location, e.message) for e in result.evidence]
    assert any((e.location or "").startswith(f"src/main.c:{line}") for e in result.evidence), result.evidence
