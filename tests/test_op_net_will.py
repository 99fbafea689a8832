"""MQTT last will and Wi-Fi/BLE coexistence: what the lowering emits (the will in the CONNECT fields of
both MQTT clients, escaped; software coexistence exactly when the station shares the radio with BLE), and
the will obligations seeded, each relaxation applied and the plan re-validated."""

from __future__ import annotations

from typing import Any

import pytest
from test_op_net import seeded_and_every_relaxation_passes

from rac_fw.contract import Status
from rac_fw.domains.firmware.pipeline import run_plan

WILL = {"topic": "rac/up/state", "message": 'gone "away"', "qos": 1, "retain": True}
MQTT = {"op": "mqtt_publish", "name": "up", "broker": "127.0.0.1", "topic": "rac/up", "message": "up"}
STATION = {"op": "wifi_station"}
ADVERTISE = {"op": "ble_advertise", "name": "adv", "device_name": "rac"}
COEX = "CONFIG_ESP_COEX_SW_COEXIST_ENABLE=y"


def _lower(target: str, *ops: dict[str, Any]) -> dict[str, str]:
    result = run_plan({"target": target, "operations": list(ops)}, target=target)
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    return result.lowered.files


def test_zephyr_client_sends_the_will_in_its_connect() -> None:
    main = _lower("native_sim", MQTT | {"last_will": WILL})["src/main.c"]
    assert '.utf8 = (const uint8_t *)"rac/up/state", .size = sizeof("rac/up/state") - 1' in main
    assert '(const uint8_t *)"gone \\"away\\"", .size = sizeof("gone \\"away\\"") - 1' in main
    assert ".qos = 1U," in main
    for line in ("_client.will_topic = &", "_client.will_message = &", "_client.will_retain = 1U;"):
        assert line in main, line
    assert 'gone "away"' not in main.replace('\\"', "")  # the message only ever appears escaped


def test_zephyr_client_without_a_will_sets_none() -> None:
    main = _lower("native_sim", MQTT)["src/main.c"]
    assert "will_topic" not in main and "will_message" not in main


def test_espidf_client_sends_the_will_in_its_session() -> None:
    main = _lower("esp32s3", STATION, MQTT | {"last_will": WILL | {"retain": False, "qos": 2}})["main/main.c"]
    for line in (
        '.session.last_will.topic = "rac/up/state",',
        '.session.last_will.msg = "gone \\"away\\"",',
        '.session.last_will.msg_len = (int)(sizeof("gone \\"away\\"") - 1),',
        ".session.last_will.qos = 2,",
        ".session.last_will.retain = 0,",
    ):
        assert line in main, line


@pytest.mark.parametrize(
    ("ops", "coexist"),
    [((STATION, ADVERTISE), True), ((STATION,), False), ((ADVERTISE,), False)],
    ids=["wifi-and-ble", "wifi-only", "ble-only"],
)
def test_software_coexistence_exactly_when_both_radios_run(ops: tuple[dict[str, Any], ...], coexist: bool) -> None:
    sdkconfig = _lower("esp32s3", *ops)["sdkconfig.defaults"]
    assert (COEX in sdkconfig.splitlines()) is coexist, sdkconfig


def test_wifi_shorthand_with_ble_turns_coexistence_on() -> None:
    result = run_plan({"target": "esp32s3", "wifi": True, "operations": [ADVERTISE]}, target="esp32s3")
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    assert COEX in result.lowered.files["sdkconfig.defaults"].splitlines()


SEEDED: list[tuple[str, dict[str, Any], str, list[str], dict[str, float]]] = [
    ("will-topic-with-a-level-wildcard", {"target": "native_sim", "operations": [
        MQTT | {"last_will": WILL | {"topic": "rac/+/state"}}]},
     "E_NET_MQTT_WILL", ["up", "rac/+/state"], {"wildcards": 1}),
    ("will-topic-multi-level-filter", {"target": "esp32s3", "operations": [
        STATION, MQTT | {"last_will": WILL | {"topic": "#"}}]},
     "E_NET_MQTT_WILL", ["up", "#"], {"wildcards": 1}),
    ("will-qos-3", {"target": "native_sim", "operations": [MQTT | {"last_will": WILL | {"qos": 3}}]},
     "E_NET_MQTT_QOS", ["up", "rac/up/state"], {"qos": 3, "max": 2}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects", "magnitudes"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_will_violation_and_every_relaxation(
    case: str, plan: dict[str, Any], code: str, objects: list[str], magnitudes: dict[str, float]
) -> None:
    seeded_and_every_relaxation_passes(case, plan, code, objects, magnitudes, relaxations=2)


def test_will_topic_keeps_the_topic_length_bound() -> None:
    result = run_plan({"target": "native_sim", "operations": [MQTT | {"last_will": WILL | {"topic": "t" * 129}}]},
                      target="native_sim")  # fmt: skip
    assert result.status is not Status.PASS
    assert any("last_will" in str(e.location) for e in result.evidence), [(e.code, e.location) for e in result.evidence]
