"""Networked apps against real peers on 127.0.0.1 (``tests/net_peers.py``): UDP echo, MQTT broker, HTTP server.

What runs here: each peer, started on loopback, serves the exchange the generated app's own literals define
(the datagram, the topics, the path are read out of ``src/main.c`` as the C compiler would see them), driven by
a real protocol client standing in for the device. What a user with a west workspace runs as well: the generated
native_sim app itself (``zephyr.exe``, whose offloaded sockets are this host's), retargeted to the peers' ports,
judged by its ``rac:`` lines and by what the peers saw — skipped without a workspace (no registry carries Zephyr).
"""

from __future__ import annotations

import copy
import socket
import struct
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from rac_fw.contract import Status
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.cstring import c_string_literal
from rac_fw.resources import data_dir
from tests.net_peers import HttpServer, MqttBroker, UdpEcho


@pytest.fixture
def udp_echo() -> Any:
    with UdpEcho() as peer:
        yield peer


@pytest.fixture
def mqtt_broker() -> Any:
    with MqttBroker() as peer:
        yield peer


@pytest.fixture
def http_server() -> Any:
    with HttpServer() as peer:
        yield peer


def _telemetry(udp: int, mqtt: int) -> dict[str, Any]:
    """examples/net_telemetry.yaml with its UDP peer and broker on the given loopback ports."""
    plan = yaml.safe_load((data_dir("examples") / "net_telemetry.yaml").read_text(encoding="utf-8"))
    plan = copy.deepcopy(plan)
    for op in plan["operations"]:
        if op["op"] == "udp_send":
            op["port"] = udp
        if op["op"] == "mqtt_publish":
            op["port"] = mqtt
    return plan


def _main_c(plan: dict[str, Any]) -> str:
    result = run_plan(plan)
    assert result.status is Status.PASS, [e.message for e in result.evidence]
    assert result.lowered is not None
    return result.lowered.files["src/main.c"]


def _mqtt_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">H", len(data)) + data


def _mqtt_packet(kind: int, flags: int, body: bytes) -> bytes:
    length, encoded = len(body), b""
    while True:
        byte, length = length & 0x7F, length >> 7
        encoded += bytes([byte | (0x80 if length else 0)])
        if not length:
            return bytes([(kind << 4) | flags]) + encoded + body


def test_udp_echo_answers_the_datagram_the_app_sends(udp_echo: UdpEcho) -> None:
    main = _main_c(_telemetry(udp_echo.port, 1883))
    assert f"htons({udp_echo.port})" in main and c_string_literal("rac ping") in main
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as device:
        device.settimeout(2)
        device.sendto(b"rac ping", ("127.0.0.1", udp_echo.port))
        reply, _ = device.recvfrom(128)
    assert reply == b"rac ping"
    assert [e.detail["data"] for e in udp_echo.wait_for("datagram")] == [b"rac ping"]


def test_mqtt_broker_acknowledges_the_apps_connect_subscribe_and_qos1_publish(mqtt_broker: MqttBroker) -> None:
    main = _main_c(_telemetry(4243, mqtt_broker.port))
    for literal in ("racfw", "rac/vin", "rac/cmd/#"):
        assert c_string_literal(literal) in main
    assert f"htons({mqtt_broker.port})" in main
    with socket.create_connection(("127.0.0.1", mqtt_broker.port), timeout=2) as device:
        connect = _mqtt_string("MQTT") + bytes([4, 0x02]) + struct.pack(">H", 60) + _mqtt_string("racfw")
        device.sendall(_mqtt_packet(1, 0, connect))
        assert device.recv(4) == b"\x20\x02\x00\x00"
        device.sendall(_mqtt_packet(8, 2, struct.pack(">H", 1) + _mqtt_string("rac/cmd/#") + b"\x00"))
        assert device.recv(5) == b"\x90\x03\x00\x01\x00"
        device.sendall(_mqtt_packet(3, 2, _mqtt_string("rac/vin") + struct.pack(">H", 7) + b"1234"))
        assert device.recv(4) == b"\x40\x02\x00\x07"
        device.sendall(b"\xc0\x00")
        assert device.recv(2) == b"\xd0\x00"
        device.sendall(b"\xe0\x00")
    published = mqtt_broker.wait_for("publish")
    assert [(e.detail["topic"], e.detail["payload"], e.detail["qos"]) for e in published] == [("rac/vin", b"1234", 1)]
    assert mqtt_broker.events("subscribe")[0].detail["filters"] == ["rac/cmd/#"]
    assert mqtt_broker.events("connect")[0].detail == {"client": "racfw", "keep_alive_s": 60}


def test_http_server_records_the_request_the_app_makes(http_server: HttpServer) -> None:
    plan = {
        "target": "native_sim",
        "heap_bytes": 4096,
        "operations": [
            {"op": "http_request", "name": "status", "host": "127.0.0.1", "port": http_server.port,
             "path": "/v1/status", "timeout_ms": 2000, "interval_ms": 10000, "buffer_bytes": 512},
        ],
    }  # fmt: skip
    main = _main_c(plan)
    assert c_string_literal("/v1/status") in main
    with urllib.request.urlopen(f"http://127.0.0.1:{http_server.port}/v1/status", timeout=2) as reply:
        assert reply.status == 200 and reply.read() == b'{"ok": true}'
    (request,) = http_server.wait_for("request")
    assert (request.detail["method"], request.detail["path"]) == ("GET", "/v1/status")


def test_native_sim_app_talks_to_the_peers(tmp_path: Path, udp_echo: UdpEcho, mqtt_broker: MqttBroker) -> None:
    """The generated app itself, where a west workspace can build it (a user's machine, not CI)."""
    from rac_fw.domains.firmware.backends.west import find_zephyr_base

    if find_zephyr_base() is None:
        pytest.skip("no west workspace (ZEPHYR_BASE / west topdir): the native_sim app cannot be built here")
    result = run_plan(_telemetry(udp_echo.port, mqtt_broker.port), out_dir=tmp_path / "app", build="west")
    assert result.status is Status.PASS, [e.message for e in result.evidence]
    image = Path(result.build["image"]).with_name("zephyr.exe") if result.build else None
    assert image is not None and image.is_file()
    run = subprocess.run([str(image), "-stop_at=8"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "rac: ping ok" in run.stdout and "rac: telemetry ok" in run.stdout, run.stdout[-2000:]
    assert udp_echo.wait_for("datagram") and mqtt_broker.wait_for("publish")
