"""The static verifier knows the CAN API and the sensor attributes the devicetree/sensor ops generate.

Each ``tests/bad_sources/zephyr/can_*.c`` / ``sensor_*.c`` carries one defect and a ``/* expect: E_CODE */``
marker on the line the evidence must point at; nothing else may fire. The rules are the fragment
``verify/sdk/zephyr/rules.d/can.yaml`` (order: start before send, bitrate/mode before start; fallible
calls; the receive callback's interrupt context), the signatures ``api.d/can.json``/``api.d/sensor.json``
and the header model ``headers.d/can.json``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rac_fw.domains.firmware.verify.artifact import verify_sources

SOURCES = Path(__file__).resolve().parent / "bad_sources" / "zephyr"
CONF = (SOURCES / "support" / "can_prj.conf").read_text()
CASES = sorted(p.stem for p in SOURCES.glob("can_*.c")) + sorted(p.stem for p in SOURCES.glob("sensor_*.c"))


def _expected(text: str) -> tuple[str, int]:
    lines = text.splitlines()
    return next((m.group(1), i + 1) for i, t in enumerate(lines) if (m := re.search(r"expect: (E_\w+)", t)))


@pytest.mark.parametrize("name", CASES)
def test_each_defect_is_caught_at_its_line(name: str) -> None:
    text = (SOURCES / f"{name}.c").read_text()
    code, line = _expected(text)
    result = verify_sources({"src/main.c": text, "prj.conf": CONF}, "zephyr", None)
    assert {e.code for e in result.evidence} == {code}, [(e.code, e.location, e.message) for e in result.evidence]
    assert any(e.location.startswith(f"src/main.c:{line}") for e in result.evidence), [
        e.location for e in result.evidence
    ]


def test_there_is_a_bad_source_per_can_rule() -> None:
    assert {"can_send_before_start", "can_bitrate_after_start", "can_send_unchecked",
            "can_rx_callback_sleeps"} <= set(CASES)  # fmt: skip


def test_the_repaired_sources_verify_clean() -> None:
    """Each rule fires on the defect only: the same sources with the defect repaired are clean."""
    start = (SOURCES / "can_send_before_start.c").read_text()
    fixed_start = start.replace(
        "\tif (can_send(", "\tif (can_start(can) < 0) {\n\t\treturn 0;\n\t}\n\tif (can_send("
    )
    order = (SOURCES / "can_bitrate_after_start.c").read_text()
    bitrate = "\tif (can_set_bitrate(can, 500000U) < 0) {\n\t\treturn 0;\n\t}\n"
    fixed_order = order.replace(bitrate, "").replace("\tif (can_start(can)", bitrate + "\tif (can_start(can)")
    unchecked = (SOURCES / "sensor_attr_unchecked.c").read_text()
    fixed_attr = unchecked.replace(
        "\tsensor_attr_set(accel, SENSOR_CHAN_ACCEL_XYZ, SENSOR_ATTR_SLOPE_TH, &slope);",
        "\tif (sensor_attr_set(accel, SENSOR_CHAN_ACCEL_XYZ, SENSOR_ATTR_SLOPE_TH, &slope) < 0) {\n\t\treturn 0;\n\t}",
    )
    for text in (fixed_start, fixed_order, fixed_attr):
        assert text.count("expect:") == 1
        result = verify_sources({"src/main.c": text, "prj.conf": CONF}, "zephyr", None)
        assert result.ok, [(e.code, e.location, e.message) for e in result.evidence]
