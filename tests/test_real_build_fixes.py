"""One regression test per failure the hand build against Zephyr 3.7.1 showed (issue 26), on the generated files.

Each was wrong on every release: the build stopped (a link error, a Kconfig abort, a BUILD_ASSERT, a -Werror
warning) or the app ran and did nothing. The test reads the file the SDK would read and checks the line that
decides it; where the verifier now catches the defect, the old output is judged too.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.domains.firmware.verify.config import parse_kconfig
from rac_fw.resources import data_dir

EXAMPLES = data_dir("examples")


def _example(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _files(plan: Any, target: str | None = None, version: str | None = None) -> dict[str, str]:
    result = run_plan(plan, target=target, framework="zephyr", zephyr_version=version)
    assert result.status is Status.PASS, [f"{e.code}: {e.message}" for e in result.evidence]
    assert result.lowered is not None
    return dict(result.lowered.files)


def _prj(plan: Any, target: str | None = None, version: str | None = None) -> dict[str, str]:
    return parse_kconfig(_files(plan, target, version)["prj.conf"])


@pytest.mark.parametrize("version", ["3.7", "4.1"])
def test_uart_echo_asks_for_the_serial_driver_native_sim_lacks(version: str) -> None:
    assert "SERIAL" not in load_target("native_sim").board.zephyr_defconfig
    assert _prj(EXAMPLES / "uart_poll_echo.yaml", "native_sim", version)["SERIAL"] == "y"


def test_the_watchdog_expiry_light_asks_for_gpio() -> None:
    plan = _example("watchdog_supervised.yaml")
    assert any(op["op"] == "react_led" for op in plan["operations"])
    assert _prj(plan, "native_sim")["GPIO"] == "y"


def test_the_verifier_wants_what_native_sim_does_not_enable() -> None:
    files = _files(EXAMPLES / "uart_poll_echo.yaml", "native_sim")
    files["prj.conf"] = files["prj.conf"].replace("CONFIG_SERIAL=y\n", "")
    codes = [e.code for e in verify_sources(files, "zephyr", load_target("native_sim")).evidence]
    assert "E_KCONFIG_MISSING" in codes
    assert "E_KCONFIG_MISSING" not in [
        e.code for e in verify_sources(files, "zephyr", load_target("nrf52840")).evidence
    ]  # its defconfig sets SERIAL


def test_i2c_on_native_sim_enables_the_emulator() -> None:
    conf = _prj(EXAMPLES / "i2c_scan.yaml", "native_sim")
    assert conf["I2C"] == "y" and conf["EMUL"] == "y"
    assert "EMUL" not in _prj(EXAMPLES / "i2c_scan.yaml", "nrf52840")


def test_offloaded_sockets_get_the_heap_their_driver_allocates_from() -> None:
    plan = {"target": "native_sim", "operations": [{"op": "udp_send", "name": "ping", "host": "127.0.0.1",
                                                     "port": 4243, "message": "x", "interval_ms": 1000}]}  # fmt: skip
    assert plan.get("heap_bytes") is None
    needed = load_target("native_sim").network
    assert needed is not None and needed.interfaces["zephyr"][0].heap_bytes == 4096
    assert int(_prj(plan)["HEAP_MEM_POOL_SIZE"]) == 4096
    assert int(_prj({**plan, "heap_bytes": 8192})["HEAP_MEM_POOL_SIZE"]) == 8192  # the plan's, when larger


def test_the_can_loopback_app_runs_the_controller_in_loopback_mode() -> None:
    main = _files(EXAMPLES / "can_loopback.yaml")["src/main.c"]
    assert "CAN_MODE_LOOPBACK" in main and "CAN_MODE_NORMAL" not in main
    plan = _example("can_loopback.yaml")
    for op in plan["operations"]:
        op.pop("mode")
    result = run_plan(plan)
    refused = [e for e in result.evidence if e.code == "E_CAN_CONTROLLER"]
    assert refused and "loopback" in refused[0].message
    relaxed = refused[0].relaxations[0].apply(plan)  # every operation on the controller, so they agree
    assert [op["mode"] for op in relaxed["operations"]] == ["loopback", "loopback"]
    assert run_plan(relaxed).status is Status.PASS


def test_extended_advertising_data_fits_the_controller() -> None:
    conf = _prj(EXAMPLES / "ble_beacon_extended.yaml", "nrf52840")
    assert 31 <= int(conf["BT_CTLR_ADV_DATA_LEN_MAX"]) <= 191 and "BT_CTLR_ADV_DATA_CHAIN" not in conf
    plan = _example("ble_beacon_extended.yaml")
    advertiser = next(op for op in plan["operations"] if op["op"] == "ble_advertise")
    advertiser["manufacturer"] = {"company": 0x0059, "data": "ab" * 200}
    result = run_plan(plan, target="nrf52840", framework="zephyr")
    if result.status is Status.PASS:  # a payload above 191 bytes needs the controller's data chaining
        assert result.lowered is not None
        conf = parse_kconfig(result.lowered.files["prj.conf"])
        assert conf["BT_CTLR_ADV_DATA_CHAIN"] == "y" and int(conf["BT_CTLR_ADV_DATA_LEN_MAX"]) > 191


def _gatt(mtu: int, security: int) -> dict[str, Any]:
    return {
        "target": "nrf52840",
        "operations": [
            {"op": "ble_advertise", "name": "adv", "connectable": True, "device_name": "rac"},
            {"op": "ble_gatt_service", "name": "svc", "uuid": "12345678-1234-5678-1234-56789abcdef0", "mtu": mtu,
             "security": security,
             "characteristics": [{"name": "level", "uuid": "12345678-1234-5678-1234-56789abcdef1", "read": True}]},
        ],
    }  # fmt: skip


def test_a_ble_mtu_is_written_as_a_config_symbol_within_its_range() -> None:
    text = _files(_gatt(247, 1))["prj.conf"]
    assert "\nCONFIG_BT_L2CAP_TX_MTU=247\n" in text and "\nBT_L2CAP_TX_MTU" not in text
    with_smp = _prj(_gatt(64, 2))
    assert with_smp["BT_SMP"] == "y"
    assert int(with_smp["BT_L2CAP_TX_MTU"]) >= 65 and int(with_smp["BT_BUF_ACL_RX_SIZE"]) >= 69


@pytest.mark.parametrize("version", ["3.7", "4.1"])
def test_the_http_response_callback_returns_void(version: str) -> None:
    plan = {
        "target": "native_sim",
        "heap_bytes": 4096,
        "operations": [{"op": "http_request", "name": "status", "host": "127.0.0.1", "port": 8080,
                        "path": "/v1/status", "timeout_ms": 2000, "interval_ms": 10000, "buffer_bytes": 512}],
    }  # fmt: skip
    main = _files(plan, version=version)["src/main.c"]
    start = main.index("app_status_response(struct http_response")
    assert main[:start].rstrip().endswith("static void")
    body = main[start : main.index("\n}\n", start)]
    assert "return" not in body


def test_the_ble_central_app_has_no_unused_static_function() -> None:
    files = _files(EXAMPLES / "ble_central.yaml")
    assert "_access(" not in files["src/main.c"]  # subscribe needs no read/write helper
    dead = files["src/main.c"].replace(
        "static void app_finder_rescan_work", "static int app_finder_access(void)\n{\n\treturn 0;\n}\n\nstatic void "
        "app_finder_rescan_work", 1)  # fmt: skip
    evidence = verify_sources({**files, "src/main.c": dead}, "zephyr", load_target("nrf52840")).evidence
    assert [e.objects for e in evidence if e.code == "E_UNUSED_STATIC"] == [["app_finder_access"]]


def test_thread_analyzer_is_included_after_the_kernel() -> None:
    main = _files(EXAMPLES / "memory_slab.yaml")["src/main.c"]
    assert main.index("#include <zephyr/kernel.h>") < main.index("#include <zephyr/debug/thread_analyzer.h>")


def test_one_node_gets_one_dmas_property_with_every_channel() -> None:
    plan = _example("dma_uart_rx.yaml")
    plan["devicetree"] = {"dmas": [{"peripheral": "USART2", "direction": "tx"}]}
    overlay = _files(plan)["boards/stm32f4_disco.overlay"]
    block = overlay[overlay.index("&usart2 {") :]
    block = block[: block.index("};")]
    assert block.count("dmas = ") == 1 and block.count("dma-names = ") == 1
    assert 'dma-names = "rx", "tx";' in block and block.count("<&dma1") == 2
