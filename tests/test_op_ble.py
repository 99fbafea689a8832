"""Seeded violations of the BLE and Wi-Fi obligations: located evidence with magnitudes, and every
relaxation validates once applied (the ``test_relaxations`` pattern: patch, re-run the pipeline)."""

from __future__ import annotations

from typing import Any

import pytest

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.pipeline import run_plan

#: Flags (3 bytes) + complete name (2 + 22) + one 16-bit UUID (2 + 2) + manufacturer company id (2 + 2):
#: a 35-byte legacy payload, 4 over the 31-byte budget.
LONG_NAME = "environment-sensor-001"

CASES: list[tuple[str, dict[str, Any], str, list[str], dict[str, float]]] = [
    (
        "adv-35-bytes",
        {"target": "nrf52840", "operations": [
            {"op": "ble_advertise", "name": "adv", "device_name": LONG_NAME, "service_uuids": ["181a"],
             "manufacturer": {"company_id": 65535}}]},
        "E_BLE_ADV_BUDGET", ["adv", "name"], {"advertising_data": 35, "budget": 31, "excess": 4},
    ),
    (
        "interval-empty",
        {"target": "nrf52840", "operations": [
            {"op": "ble_advertise", "interval_min_ms": 500, "interval_max_ms": 100}]},
        "E_BLE_INTERVAL", [], {"interval_min": 500, "interval_max": 100},
    ),
    (
        "connections-over-nimble",
        {"target": "esp32s3", "operations": [{"op": "ble_advertise", "name": "adv", "max_connections": 12}]},
        "E_BLE_CONNECTIONS", ["adv", "BT_NIMBLE_MAX_CONNECTIONS"], {"requested": 12, "limit": 9},
    ),
    (
        "value-over-mtu",
        {"target": "nrf52840", "operations": [
            {"op": "ble_advertise"},
            {"op": "ble_gatt_service", "name": "svc", "uuid": "180f",
             "characteristics": [{"name": "blob", "uuid": "2a19", "length_bytes": 40}]}]},
        "E_BLE_MTU", ["svc", "blob"], {"value": 40, "room": 20},
    ),
    (
        "notify-without-ccc",
        {"target": "nrf52840", "operations": [
            {"op": "gpio_read", "name": "button", "button": "sw0", "interval_ms": 100},
            {"op": "ble_advertise"},
            {"op": "ble_gatt_service", "name": "svc", "uuid": "180f",
             "characteristics": [
                 {"name": "level", "uuid": "2a19", "notify": True, "ccc": False, "source": "button"}]}]},
        "E_BLE_CCC", ["svc", "level"], {},
    ),
    (
        "security-without-io",
        {"target": "nrf52840", "operations": [
            {"op": "ble_advertise", "name": "adv"},
            {"op": "ble_gatt_service", "name": "svc", "uuid": "180f", "security": 3,
             "characteristics": [{"name": "level", "uuid": "2a19"}]}]},
        "E_BLE_SECURITY", ["svc", "io_capabilities"], {"security_level": 3, "reachable": 2},
    ),
    (
        "ble-without-radio",
        {"target": "stm32f407", "operations": [
            {"op": "gpio_read", "name": "button", "button": "sw0", "interval_ms": 100}, {"op": "ble_advertise"}]},
        "E_TARGET_UNSUPPORTED", ["ble_advertise", "stm32f407"], {},
    ),
    (
        "wifi-station-adc2",
        {"target": "esp32s3", "operations": [
            {"op": "wifi_station"}, {"op": "adc_read", "name": "vin", "channel": {"pin": "GPIO11"}}]},
        "E_RADIO_CONFLICT", ["GPIO11", "ADC2", "wifi"], {},
    ),
    (
        "wifi-station-without-radio",
        {"target": "nrf52840", "operations": [
            {"op": "gpio_read", "name": "button", "button": "sw0", "interval_ms": 100}, {"op": "wifi_station"}]},
        "E_TARGET_UNSUPPORTED", ["wifi_station", "nrf52840"], {},
    ),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects", "magnitudes"), CASES, ids=[c[0] for c in CASES])
def test_seeded_violation_has_evidence_and_valid_relaxations(
    case: str, plan: dict[str, Any], code: str, objects: list[str], magnitudes: dict[str, float]
) -> None:
    result = run_plan(plan, target=plan["target"])
    assert result.status is Status.INVALID, (case, result.status)
    found = [e for e in result.evidence if e.code == code and set(objects) <= set(e.objects)]
    assert found, (case, [(e.code, e.objects, e.message) for e in result.evidence])
    evidence = found[0]
    values = {m.name: m.value for m in evidence.magnitudes}
    for name, value in magnitudes.items():
        assert values.get(name) == value, (case, evidence.magnitudes)
    assert evidence.relaxations, f"{case}: no relaxation offered"
    for relaxation in evidence.relaxations:
        patched = apply_patch(plan, relaxation.patch)
        again = run_plan(patched, target=patched["target"])
        left = [e for e in again.evidence if e.code == code and set(objects) <= set(e.objects)]
        assert not left, (case, relaxation.description, [(e.code, e.message) for e in left])


def test_moving_the_name_to_the_scan_response_counts_both_payloads() -> None:
    plan = CASES[0][1]
    result = run_plan(plan, target="nrf52840")
    budget = next(e for e in result.evidence if e.code == "E_BLE_ADV_BUDGET")
    move = next(r for r in budget.relaxations if "scan response" in r.description)
    fixed = run_plan(apply_patch(plan, move.patch), target="nrf52840")
    assert fixed.status is Status.PASS, [(e.code, e.message) for e in fixed.evidence]
    assert fixed.lowered is not None
    main = fixed.lowered.files["src/main.c"]
    assert "app_adv_sd[]" in main and "BT_LE_ADV_OPT_CONN" in main


def test_wifi_flag_is_a_station_and_credentials_stay_out_of_the_sources() -> None:
    result = run_plan({"target": "esp32s3", "wifi": True, "operations": [
        {"op": "adc_read", "name": "vin", "channel": {"pin": "GPIO1"}}]}, target="esp32s3")  # fmt: skip
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    main = result.lowered.files["main/main.c"]
    assert "esp_wifi_connect()" in main and "CONFIG_RAC_CRED_WIFI_PSK" in main
    assert "config RAC_CRED_WIFI_PSK" in result.lowered.files["main/Kconfig.projbuild"]
