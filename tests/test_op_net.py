"""IP networking and Wi-Fi: seeded violations with their magnitudes, relaxations that validate once
applied, and what the realizations promise (interface from the facts, bounded waits, credentials by
reference, the socket table sized from the plan)."""

from __future__ import annotations

from typing import Any

import pytest

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.pipeline import run_plan

MQTT = {"op": "mqtt_publish", "name": "up", "broker": "127.0.0.1", "topic": "rac/up", "message": "up"}

CASES: list[tuple[str, dict[str, Any], str, list[str], dict[str, float]]] = [
    (
        "tcp-server-on-stm32f407",
        {"target": "stm32f407", "operations": [
            {"op": "uart_print", "message": "boot"}, {"op": "tcp_server", "port": 4242}]},
        "E_TARGET_UNSUPPORTED", ["tcp_server", "stm32f407"], {},
    ),
    ("mqtt-qos-3", {"target": "native_sim", "operations": [MQTT | {"qos": 3}]},
     "E_NET_MQTT_QOS", ["up", "rac/up"], {"qos": 3, "max": 2}),
    ("mqtt-publish-over-buffer",
     {"target": "native_sim", "operations": [MQTT | {"message": "x" * 100, "buffer_bytes": 64}]},
     "E_NET_BUFFER", ["up", "rac/up"], {"packet": 115, "buffer": 64}),
    ("mqtt-keep-alive-shorter-than-interval", {"target": "native_sim", "operations": [
        MQTT | {"keep_alive_s": 10, "interval_ms": 60000}]},
     "E_NET_TIMEOUT", ["up"], {"interval": 60000, "keep_alive": 10000}),
    ("udp-on-esp32s3-without-station", {"target": "esp32s3", "operations": [
        {"op": "udp_send", "host": "192.0.2.1", "port": 9, "message": "hi"}]},
     "E_NET_INTERFACE", ["udp_send", "wifi_sta"], {}),
    ("resolver-without-heap", {"target": "native_sim", "operations": [
        {"op": "tcp_client", "host": "example.com", "port": 80, "message": "hi"}]},
     "E_NET_HEAP", ["heap_bytes"], {"heap": 0, "needed": 4096}),
    ("tcp-backoff-inverted", {"target": "native_sim", "operations": [
        {"op": "tcp_client", "name": "c", "host": "127.0.0.1", "port": 7, "message": "hi",
         "retry": {"retry_ms": 9000, "retry_max_ms": 1000}}]},
     "E_NET_TIMEOUT", ["c"], {"retry": 9000, "retry_max": 1000}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects", "magnitudes"), CASES, ids=[c[0] for c in CASES])
def test_seeded_network_violation(
    case: str, plan: dict[str, Any], code: str, objects: list[str], magnitudes: dict[str, float]
) -> None:
    seeded_and_every_relaxation_passes(case, plan, code, objects, magnitudes)


def seeded_and_every_relaxation_passes(
    case: str, plan: dict[str, Any], code: str, objects: list[str], magnitudes: dict[str, float], relaxations: int = 1
) -> None:
    """The plan is refused with ``code`` naming ``objects`` and stating ``magnitudes``; it offers at least
    ``relaxations`` relaxations, and every one applied makes the plan pass ``run_plan``."""
    result = run_plan(plan, target=plan["target"])
    assert result.status is Status.INVALID, (case, result.status)
    found = [e for e in result.evidence if e.code == code and set(objects) <= set(e.objects)]
    assert found, (case, [(e.code, e.objects, e.message) for e in result.evidence])
    values = {m.name: m.value for m in found[0].magnitudes}
    assert all(values.get(k) == v for k, v in magnitudes.items()), (case, found[0].magnitudes)
    assert len(found[0].relaxations) >= relaxations, f"{case}: {found[0].relaxations}"
    for relaxation in found[0].relaxations:
        patched = apply_patch(plan, relaxation.patch)
        again = run_plan(patched, target=patched["target"])
        assert again.status is Status.PASS, (
            case,
            relaxation.description,
            [(e.code, e.message) for e in again.evidence],
        )


def test_native_sim_app_uses_offloaded_sockets_and_bounded_waits() -> None:
    result = run_plan({"target": "native_sim", "operations": [
        {"op": "udp_send", "host": "127.0.0.1", "port": 4243, "message": "hi", "reply": True, "timeout_ms": 250},
        {"op": "tcp_server", "port": 4242}]}, target="native_sim")  # fmt: skip
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    prj = result.lowered.files["prj.conf"]
    for symbol in (
        "CONFIG_NET_NATIVE_OFFLOADED_SOCKETS=y",
        "CONFIG_NET_SOCKETS_OFFLOAD=y",
        "CONFIG_NET_MAX_CONTEXTS=6",
    ):
        assert symbol in prj, symbol
    main = result.lowered.files["src/main.c"]
    assert ".tv_usec = 250000" in main and "K_FOREVER" not in main
    # Every socket the generated code opens is closed on its error paths: as many closes as early returns.
    assert main.count("zsock_close(sock)") >= 3


def test_forever_is_only_what_the_plan_says() -> None:
    bounded = run_plan({"target": "native_sim", "operations": [{"op": "tcp_server", "port": 1}]}, target="native_sim")
    forever = run_plan({"target": "native_sim", "operations": [
        {"op": "tcp_server", "port": 1, "idle_timeout_ms": "forever"}]}, target="native_sim")  # fmt: skip
    assert bounded.lowered is not None and forever.lowered is not None
    assert "SO_RCVTIMEO" in bounded.lowered.files["src/main.c"]
    assert "SO_RCVTIMEO" not in forever.lowered.files["src/main.c"]


def test_mqtt_credentials_are_kconfig_references_on_espidf() -> None:
    result = run_plan({"target": "esp32s3", "operations": [
        {"op": "wifi_station"},
        MQTT | {"username_credential": "broker_user", "password_credential": "broker_pass"}]},
        target="esp32s3")  # fmt: skip
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    kconfig = result.lowered.files["main/Kconfig.projbuild"]
    for name in ("RAC_CRED_WIFI_SSID", "RAC_CRED_WIFI_PSK", "RAC_CRED_BROKER_USER", "RAC_CRED_BROKER_PASS"):
        assert f"config {name}" in kconfig
    main = result.lowered.files["main/main.c"]
    assert ".credentials.authentication.password = CONFIG_RAC_CRED_BROKER_PASS" in main
    assert "CONFIG_LWIP_MAX_SOCKETS" in result.lowered.files["sdkconfig.defaults"]
