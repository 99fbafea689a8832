"""The static verifier knows the BLE observer/central, indication, bonding and extended-advertising APIs:
one bad source per new rule, caught at its line with nothing else firing.

Each ``tests/bad_sources/<framework>/ble_*.c`` carries one defect and a ``/* expect: E_CODE */`` marker on
the line the evidence must point at. The rules are the fragments ``verify/sdk/<fw>/rules.d/ble.yaml``
(order: enable before scan, scan stopped before connect, connect before GATT client calls, settings loaded
after bt_enable, an unref needs a reference; NimBLE: discovery cancelled before connect, connect before
GATT client calls, an advertising instance configured before it starts), the signatures ``api.d/ble.json``
harvested from the real headers.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.domains.firmware.verify.sdk import catalog

SOURCES = Path(__file__).resolve().parent / "bad_sources"

#: Framework → (main C file, support files copied beside it).
LAYOUT = {
    "zephyr": ("src/main.c", {"prj.conf": "zephyr/support/prj_ble_central.conf"}),
    "espidf": ("main/main.c", {"sdkconfig.defaults": "espidf/support/sdkconfig.defaults"}),
}

CASES = [
    ("zephyr", "ble_scan_before_enable"),
    ("zephyr", "ble_connect_while_scanning"),
    ("zephyr", "ble_discover_without_connection"),
    ("zephyr", "ble_settings_before_enable"),
    ("zephyr", "ble_unref_without_reference"),
    ("espidf", "ble_connect_while_scanning"),
    ("espidf", "ble_read_without_connection"),
    ("espidf", "ble_ext_adv_start_before_configure"),
]


def _files(framework: str, text: str) -> dict[str, str]:
    main, support = LAYOUT[framework]
    return {main: text} | {name: (SOURCES / path).read_text() for name, path in support.items()}


def _expected(text: str) -> tuple[str, int]:
    lines = text.splitlines()
    return next((m.group(1), i + 1) for i, t in enumerate(lines) if (m := re.search(r"expect: (E_\w+)", t)))


@pytest.mark.parametrize(("framework", "name"), CASES, ids=[f"{f}-{n}" for f, n in CASES])
def test_each_ble_defect_is_caught_at_its_line(framework: str, name: str) -> None:
    text = (SOURCES / framework / f"{name}.c").read_text()
    code, line = _expected(text)
    result = verify_sources(_files(framework, text), framework, None)
    assert {e.code for e in result.evidence} == {code}, [(e.code, e.location, e.message) for e in result.evidence]
    main = LAYOUT[framework][0]
    assert any((e.location or "").startswith(f"{main}:{line}") for e in result.evidence), result.evidence


def test_every_ble_bad_source_is_exercised() -> None:
    on_disk = {(p.parent.name, p.stem) for p in SOURCES.glob("*/ble_*.c")}
    assert on_disk == set(CASES)


@pytest.mark.parametrize(
    ("framework", "name", "defect", "repair"),
    [
        ("zephyr", "ble_connect_while_scanning",
         "\terr = bt_conn_le_create(addr, BT_CONN_LE_CREATE_CONN, BT_LE_CONN_PARAM_DEFAULT, &link); "
         "/* expect: E_CALL_ORDER */\n\tif (err < 0) {\n\t\treturn;\n\t}\n\terr = bt_le_scan_stop();\n"
         "\tif (err < 0) {\n\t\tbt_conn_unref(link);\n\t\tlink = NULL;\n\t}",
         "\terr = bt_le_scan_stop();\n\tif (err < 0) {\n\t\treturn;\n\t}\n"
         "\terr = bt_conn_le_create(addr, BT_CONN_LE_CREATE_CONN, BT_LE_CONN_PARAM_DEFAULT, &link);\n"
         "\tif (err < 0) {\n\t\tlink = NULL;\n\t}"),
        ("zephyr", "ble_unref_without_reference", "current = conn;", "current = bt_conn_ref(conn);"),
        ("espidf", "ble_ext_adv_start_before_configure",
         "    if (ble_gap_ext_adv_start(0, 0, 0) != 0) { /* expect: E_CALL_ORDER */\n"
         "        ESP_LOGE(TAG, \"start\");\n    }\n",
         ""),
    ],
)  # fmt: skip
def test_the_repaired_twins_verify_clean(framework: str, name: str, defect: str, repair: str) -> None:
    """The same sources with the defect repaired are clean: each rule fires on the defect only."""
    text = (SOURCES / framework / f"{name}.c").read_text()
    assert defect in text
    result = verify_sources(_files(framework, text.replace(defect, repair)), framework, None)
    assert result.ok, [(e.code, e.location, e.message) for e in result.evidence]


def test_the_new_entries_carry_the_real_signatures() -> None:
    """Spot checks against the headers (Zephyr conn.h/gatt.h, NimBLE ble_gap.h/ble_gatt.h)."""
    zephyr, nimble = catalog("zephyr"), catalog("espidf")
    create = zephyr.get("bt_conn_le_create")
    assert create is not None and create.header == "zephyr/bluetooth/conn.h" and create.accepts(4)
    indicate = zephyr.get("bt_gatt_indicate")
    assert indicate is not None and indicate.header == "zephyr/bluetooth/gatt.h" and indicate.accepts(2)
    disc = nimble.get("ble_gap_disc")
    assert disc is not None and disc.header == "host/ble_gap.h" and disc.accepts(5) and not disc.accepts(4)
    write = nimble.get("ble_gattc_write_flat")
    assert write is not None and write.header == "host/ble_gatt.h" and write.accepts(6)
