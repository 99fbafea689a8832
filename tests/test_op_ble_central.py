"""BLE observer/central, indications, extended advertising on NimBLE and bonding: seeded violations with
located evidence and magnitudes (the scan timing in 0.625 ms units), every relaxation validating once
applied, and the lowerings on both hosts carrying the calls the realization promises."""

from __future__ import annotations

from typing import Any

import pytest

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.storage import Storage, storage
from rac_fw.domains.firmware.ops.ble import bonding
from rac_fw.domains.firmware.ops.ble.ble_scan import BleScan
from rac_fw.domains.firmware.pipeline import run_plan

BUTTON = {"op": "gpio_read", "name": "button", "button": "sw0", "interval_ms": 100}
PEER = {"service": "181a", "characteristic": "2a6e", "action": "subscribe"}


def scan(**fields: Any) -> dict[str, Any]:
    return {"op": "ble_scan", "name": "finder", "filter": {"uuid": "181a"}} | fields


CASES: list[tuple[str, dict[str, Any], str, list[str], dict[str, float]]] = [
    (
        "scan-window-over-interval",
        {"target": "nrf52840", "operations": [scan(interval_ms=50, window_ms=100)]},
        "E_BLE_SCAN_WINDOW", ["finder", "window_ms"],
        {"window": 100, "interval": 50, "window_units": 160, "interval_units": 80},
    ),
    (
        "scan-interval-off-the-grid",
        {"target": "nrf52840", "operations": [scan(interval_ms=61, window_ms=30)]},
        "E_BLE_INTERVAL", ["finder", "interval_ms"], {"interval": 61, "units": 97.6, "units_min": 4},
    ),
    (
        "scan-window-under-2.5-ms",
        {"target": "esp32s3", "operations": [scan(interval_ms=60, window_ms=1.25)]},
        "E_BLE_INTERVAL", ["finder", "window_ms"], {"window": 1.25, "units": 2, "units_max": 16384},
    ),
    (
        "connect-without-filter",
        {"target": "nrf52840", "operations": [scan(filter={}, connect=True, peer=PEER)]},
        "E_BLE_SCAN_FILTER", ["finder", "filter"], {},
    ),
    (
        "peer-without-connection",
        {"target": "esp32s3", "operations": [scan(peer=PEER)]},
        "E_BLE_PEER", ["finder", "peer"], {},
    ),
    (
        "write-without-bytes",
        {"target": "nrf52840", "operations": [scan(connect=True, peer=PEER | {"action": "write"})]},
        "E_BLE_PEER", ["finder", "value"], {},
    ),
    (
        "write-over-mtu",
        {"target": "nrf52840", "operations": [
            scan(connect=True, peer=PEER | {"action": "write", "value": "00" * 24})]},
        "E_BLE_MTU", ["finder", "value"], {"value": 24, "room": 20, "mtu": 23},
    ),
    (
        "peripheral-plus-central-over-nimble",
        {"target": "esp32s3", "operations": [
            {"op": "ble_advertise", "name": "adv", "max_connections": 9}, scan(connect=True)]},
        "E_BLE_CONNECTIONS", ["finder", "BT_NIMBLE_MAX_CONNECTIONS"], {"requested": 10, "limit": 9},
    ),
    (
        "two-scanners",
        {"target": "nrf52840", "operations": [scan(), scan(name="second")]},
        "E_BLE_SCANNERS", ["second"], {},
    ),
    (
        "scan-without-radio",
        {"target": "stm32f407", "operations": [BUTTON, scan()]},
        "E_TARGET_UNSUPPORTED", ["ble_scan", "stm32f407"], {},
    ),
    (
        "scan-on-native-sim",
        {"target": "native_sim", "operations": [BUTTON, scan()]},
        "E_TARGET_UNSUPPORTED", ["ble_scan", "native_sim"], {},
    ),
    (
        "central-level-3-without-io",
        {"target": "nrf52840", "operations": [scan(connect=True, security=3)]},
        "E_BLE_SECURITY", ["finder", "security"], {"security_level": 3, "reachable": 2},
    ),
    (
        "central-bond-without-pairing",
        {"target": "esp32s3", "operations": [scan(connect=True, bond=True)]},
        "E_BLE_BOND_PAIRING", ["finder", "bond"], {},
    ),
    (
        "gatt-service-without-radio",
        {"target": "stm32f407", "operations": [BUTTON, {"op": "ble_gatt_service", "name": "svc", "uuid": "180f",
                                                        "characteristics": [{"name": "level", "uuid": "2a19"}]}]},
        "E_TARGET_UNSUPPORTED", ["ble_gatt_service", "stm32f407"], {},
    ),
    (
        "indicate-without-ccc",
        {"target": "esp32s3", "operations": [
            {"op": "gpio_read", "name": "button", "button": "sw0", "interval_ms": 100},
            {"op": "ble_advertise"},
            {"op": "ble_gatt_service", "name": "svc", "uuid": "180f", "characteristics": [
                {"name": "alert", "uuid": "2a06", "indicate": True, "ccc": False, "source": "button"}]}]},
        "E_BLE_CCC", ["svc", "alert", "indicate"], {},
    ),
    (
        "indicate-without-source",
        {"target": "nrf52840", "operations": [
            {"op": "gpio_read", "name": "button", "button": "sw0", "interval_ms": 100},
            {"op": "ble_advertise"},
            {"op": "ble_gatt_service", "name": "svc", "uuid": "180f", "characteristics": [
                {"name": "alert", "uuid": "2a06", "indicate": True}]}]},
        "E_BLE_NOTIFY_SOURCE", ["svc", "alert"], {},
    ),
    (
        "legacy-35-bytes-on-nimble",
        {"target": "esp32s3", "operations": [
            {"op": "ble_advertise", "name": "adv", "device_name": "environment-sensor-001", "service_uuids": ["181a"],
             "manufacturer": {"company_id": 65535}}]},
        "E_BLE_ADV_BUDGET", ["adv", "name"], {"advertising_data": 35, "budget": 31, "excess": 4},
    ),
]  # fmt: skip


def _matching(result: Any, code: str, objects: list[str]) -> list[Any]:
    return [e for e in result.evidence if e.code == code and set(objects) <= set(e.objects)]


@pytest.mark.parametrize(("case", "plan", "code", "objects", "magnitudes"), CASES, ids=[c[0] for c in CASES])
def test_seeded_violation_has_evidence_and_valid_relaxations(
    case: str, plan: dict[str, Any], code: str, objects: list[str], magnitudes: dict[str, float]
) -> None:
    result = run_plan(plan, target=plan["target"])
    assert result.status is Status.INVALID, (case, result.status)
    found = _matching(result, code, objects)
    assert found, (case, [(e.code, e.objects, e.message) for e in result.evidence])
    evidence = found[0]
    assert evidence.location, case
    values = {m.name: m.value for m in evidence.magnitudes}
    for name, value in magnitudes.items():
        assert values.get(name) == pytest.approx(value), (case, evidence.magnitudes)
    assert evidence.relaxations, f"{case}: no relaxation offered"
    for relaxation in evidence.relaxations:
        patched = apply_patch(plan, relaxation.patch)
        again = run_plan(patched, target=patched["target"])
        assert not _matching(again, code, objects), (case, relaxation.description)


def test_extended_advertising_on_nimble_is_a_relaxation_that_lowers() -> None:
    """35 legacy bytes on esp32s3: "use extended advertising" now validates and lowers to NimBLE's
    advertising-set API with CONFIG_BT_NIMBLE_EXT_ADV (which compiles the legacy calls out)."""
    plan = CASES[-1][1]
    budget = next(e for e in run_plan(plan, target="esp32s3").evidence if e.code == "E_BLE_ADV_BUDGET")
    extended = next(r for r in budget.relaxations if "extended" in r.description)
    fixed = run_plan(apply_patch(plan, extended.patch), target="esp32s3")
    assert fixed.status is Status.PASS, [(e.code, e.message) for e in fixed.evidence]
    assert fixed.lowered is not None
    main, config = fixed.lowered.files["main/main.c"], fixed.lowered.files["sdkconfig.defaults"]
    assert "ble_gap_ext_adv_configure(0, &params" in main and "ble_gap_ext_adv_set_data(0, data)" in main
    assert "os_msys_get_pkthdr(35, 0)" in main and "ble_gap_adv_start(" not in main
    assert "CONFIG_BT_NIMBLE_EXT_ADV=y" in config and "CONFIG_BT_NIMBLE_EXT_ADV_MAX_SIZE=251" in config


CENTRAL = {"target": "nrf52840", "operations": [scan(active=True, interval_ms=100, window_ms=50, connect=True,
                                                     security=2, bond=True, peer=PEER)]}  # fmt: skip


def test_zephyr_central_scans_stops_connects_discovers_and_subscribes() -> None:
    result = run_plan(CENTRAL, target="nrf52840")
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    main, conf = result.lowered.files["src/main.c"], result.lowered.files["prj.conf"]
    # 100 ms / 0.625 ms = 160 = 0x00a0 units, 50 ms = 80 = 0x0050.
    assert "BT_LE_SCAN_PARAM_INIT(BT_LE_SCAN_TYPE_ACTIVE, BT_LE_SCAN_OPT_FILTER_DUPLICATE, 0x00a0, 0x0050)" in main
    assert main.index("bt_le_scan_stop()") < main.index("bt_conn_le_create(addr")
    assert "BT_GATT_DISCOVER_PRIMARY" in main and "BT_GATT_DISCOVER_STD_CHAR_DESC" in main
    assert "bt_gatt_subscribe(conn, &app_finder_sub)" in main and "bt_conn_unref(app_finder_conn)" in main
    assert "bt_conn_set_security(conn, BT_SECURITY_L2)" in main and ".security_changed = app_finder_on_security" in main
    secured = main[main.index("static void app_finder_on_security") :]
    assert secured.index("BT_SECURITY_ERR_SUCCESS") < secured.index("bt_gatt_discover(conn, &app_finder_discover)")
    setup = main[main.index("static int app_finder_setup(void)") :]
    assert setup.index("bt_enable(NULL)") < setup.index("settings_load()") < setup.index("app_finder_start()")
    for symbol in ("CONFIG_BT_OBSERVER=y", "CONFIG_BT_CENTRAL=y", "CONFIG_BT_GATT_CLIENT=y", "CONFIG_BT_SETTINGS=y"):
        assert symbol in conf


def test_nimble_central_cancels_discovery_before_connecting_and_persists_bonds() -> None:
    plan = CENTRAL | {"target": "esp32s3"}
    result = run_plan(plan, target="esp32s3")
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    main, config = result.lowered.files["main/main.c"], result.lowered.files["sdkconfig.defaults"]
    assert "params.itvl = 0x00a0;" in main and "params.window = 0x0050;" in main and "params.passive = 0;" in main
    assert main.index("ble_gap_disc_cancel()") < main.index("ble_gap_connect(finder_own_addr")
    assert "ble_gattc_disc_svc_by_uuid" in main and "ble_gattc_disc_all_dscs" in main
    encrypted = main[main.index("case BLE_GAP_EVENT_ENC_CHANGE:") :]
    assert "ble_gap_security_initiate(event->connect.conn_handle)" in main
    assert encrypted.index("enc_change.status != 0") < encrypted.index("ble_gattc_disc_svc_by_uuid(handle")
    assert "ble_store_config_init();" in main and "CONFIG_BT_NIMBLE_NVS_PERSIST=y" in config


def test_a_scanner_beside_an_advertiser_is_started_by_the_host_owner() -> None:
    """One NimBLE host: the advertiser initialises it and starts the scanner from its sync callback;
    the connection count covers both roles."""
    plan = {"target": "esp32s3", "operations": [{"op": "ble_advertise", "name": "adv", "max_connections": 2},
                                                scan(connect=True)]}  # fmt: skip
    result = run_plan(plan, target="esp32s3")
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    main = result.lowered.files["main/main.c"]
    assert main.count("nimble_port_init()") == 1 and "if (finder_start() != 0)" in main
    assert "CONFIG_BT_NIMBLE_MAX_CONNECTIONS=3" in result.lowered.files["sdkconfig.defaults"]


def test_indications_wait_for_the_confirmation_on_zephyr() -> None:
    plan = {"target": "nrf52840", "operations": [
        {"op": "gpio_read", "name": "button", "button": "sw0", "interval_ms": 100}, {"op": "ble_advertise"},
        {"op": "ble_gatt_service", "name": "svc", "uuid": "180f", "characteristics": [
            {"name": "alert", "uuid": "2a06", "indicate": True, "source": "button"}]}]}  # fmt: skip
    result = run_plan(plan, target="nrf52840")
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    main = result.lowered.files["src/main.c"]
    assert "BT_GATT_CHRC_READ | BT_GATT_CHRC_INDICATE" in main and "BT_GATT_CCC(app_svc_alert_ccc" in main
    assert "atomic_cas(&app_svc_alert_pending, 0, 1)" in main and "bt_gatt_indicate(NULL, &app_svc_alert_ind)" in main
    nimble = run_plan(plan | {"target": "esp32s3"}, target="esp32s3")
    assert nimble.status is Status.PASS and nimble.lowered is not None
    assert "BLE_GATT_CHR_F_INDICATE" in nimble.lowered.files["main/main.c"]


def test_bonding_needs_the_storage_partition(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every BLE board has a storage partition, so the facts are narrowed through the public
    ``storage`` function: a flash map without one makes bonding an error naming the partition."""
    target = load_target("nrf52840")
    facts = storage(target)
    assert facts is not None and bonding.bond_check(target, "zephyr", 0, BleScan(op="ble_scan", bond=True)) == []
    monkeypatch.setattr(bonding, "storage", lambda t: Storage(facts.flash, partitions=()))
    found = bonding.bond_check(target, "zephyr", 0, BleScan(op="ble_scan", bond=True))
    assert [e.code for e in found] == ["E_TARGET_UNSUPPORTED"] and "storage_partition" in found[0].objects
    assert found[0].relaxations[0].patch[0]["value"] is False


SECURE = {"target": "esp32s3", "operations": [
    BUTTON, {"op": "ble_advertise", "name": "adv", "device_name": "rac lock", "io_capabilities": "display_only",
             "bond": True},
    {"op": "ble_gatt_service", "name": "lock", "uuid": "1815", "security": 4,
     "characteristics": [{"name": "state", "uuid": "2a56", "notify": True, "source": "button"}]}]}  # fmt: skip


def test_level_4_with_a_displayed_passkey_and_bonds_on_nimble() -> None:
    """DisplayOnly on NimBLE answers the passkey action with a displayed key (pairing would stall
    otherwise); LE Secure Connections + MITM + bonding in ble_hs_cfg, the key store persisted in NVS."""
    result = run_plan(SECURE, target="esp32s3")
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    main = result.lowered.files["main/main.c"]
    assert "case BLE_GAP_EVENT_PASSKEY_ACTION:" in main and "ble_sm_inject_io(event->passkey.conn_handle, &io)" in main
    for line in ("ble_hs_cfg.sm_io_cap = BLE_HS_IO_DISPLAY_ONLY;", "ble_hs_cfg.sm_bonding = 1;",
                 "ble_hs_cfg.sm_mitm = 1;", "ble_hs_cfg.sm_sc = 1;", "ble_store_config_init();"):  # fmt: skip
        assert line in main, line


def test_level_4_with_a_displayed_passkey_and_bonds_on_zephyr() -> None:
    result = run_plan(SECURE | {"target": "nrf52840"}, target="nrf52840")
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    main, conf = result.lowered.files["src/main.c"], result.lowered.files["prj.conf"]
    assert "BT_GATT_PERM_READ_AUTHEN" in main and "CONFIG_BT_SMP_SC_ONLY=y" in conf
    setup = main[main.index("static int app_adv_setup(void)") :]
    assert setup.index("bt_conn_auth_cb_register") < setup.index("bt_enable(NULL)") < setup.index("settings_load()")
    assert "bt_conn_auth_info_cb_register(&app_adv_auth_info)" in setup and 'bonded ? "bonded"' in main
