"""Application protocols over IP and the ``network:`` block: seeded violations with their magnitudes, every
relaxation validating once applied, and what the realizations promise (credentials by reference, bounded
waits, the security tag on the TLS socket, the credential store sized from the plan, the static address
in prj.conf / esp_netif), with the generated apps verified clean — the release-on-error-path rule included."""

from __future__ import annotations

from typing import Any

import pytest

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.pipeline import run_plan

STA = {"op": "wifi_station", "name": "sta"}
TLS = {"op": "tls_credentials", "name": "api_tls", "sec_tag": 7, "ca": "api_ca"}
HTTP = {"op": "http_request", "name": "status", "host": "192.0.2.10", "path": "/v1/status"}
COAP = {"op": "coap_request", "name": "sensor", "host": "127.0.0.1", "resource": "/sensors/temp"}
STATIC = {"ipv4": "static", "address": "192.168.1.50", "netmask": "255.255.255.0", "gateway": "192.168.1.1"}

CASES: list[tuple[str, dict[str, Any], str, list[str], dict[str, float]]] = [
    ("coap-token-9-bytes", {"target": "native_sim", "operations": [COAP | {"token_bytes": 9}]},
     "E_NET_COAP_TOKEN", ["sensor"], {"token": 9, "max": 8}),
    ("coap-request-over-buffer",
     {"target": "native_sim", "operations": [COAP | {"method": "POST", "payload": "x" * 100, "buffer_bytes": 64}]},
     "E_NET_BUFFER", ["sensor", "/sensors/temp"], {"message": 4 + 4 + 8 + 5 + 101, "buffer": 64}),
    ("coap-on-espidf", {"target": "esp32s3", "framework": "espidf", "operations": [STA, COAP]},
     "E_TARGET_UNSUPPORTED", ["coap_request"], {}),
    ("http-tls-names-nothing",
     {"target": "native_sim", "stack_bytes": 3072, "operations": [HTTP | {"tls": "api_tls"}]},
     "E_NET_TLS_REF", ["status", "api_tls"], {}),
    ("http-tls-without-ca", {"target": "native_sim", "stack_bytes": 3072, "operations": [
        {"op": "tls_credentials", "name": "me", "certificate": "dev_cert", "private_key": "dev_key"},
        HTTP | {"tls": "me"}]},
     "E_NET_TLS_REF", ["status", "me"], {}),
    ("http-request-over-buffer", {"target": "native_sim", "operations": [
        HTTP | {"method": "POST", "path": "/" + "a" * 200, "body": "y" * 120, "buffer_bytes": 256}]},
     "E_NET_BUFFER", ["status", "192.0.2.10"], {"buffer": 256}),
    ("http-on-stm32f407", {"target": "stm32f407", "operations": [{"op": "uart_print", "message": "boot"}, HTTP]},
     "E_TARGET_UNSUPPORTED", ["http_request", "stm32f407"], {}),
    ("http-on-esp32s3-without-station", {"target": "esp32s3", "operations": [HTTP]},
     "E_NET_INTERFACE", ["http_request", "wifi_sta"], {}),
    ("http-host-name-without-heap", {"target": "native_sim", "operations": [HTTP | {"host": "api.example.com"}]},
     "E_NET_HEAP", ["heap_bytes"], {"heap": 0, "needed": 4096}),
    ("https-on-a-small-main-stack", {"target": "native_sim", "operations": [TLS, HTTP | {"tls": "api_tls"}]},
     "E_NET_STACK", ["status", "stack_bytes"], {"stack": 2048, "needed": 3072}),
    ("tls-tag-reused", {"target": "native_sim", "operations": [TLS, TLS | {"name": "other", "ca": "other_ca"}]},
     "E_NET_TLS_TAG", ["other", "api_tls"], {"sec_tag": 7}),
    ("dns-timeout-longer-than-interval", {"target": "native_sim", "heap_bytes": 4096, "operations": [
        {"op": "dns_resolve", "name": "lookup", "host": "time.example.com", "timeout_ms": 70000,
         "interval_ms": 60000}]},
     "E_NET_TIMEOUT", ["lookup", "time.example.com"], {"timeout": 70000, "interval": 60000}),
    ("static-gateway-outside-subnet", {"target": "esp32s3", "network": STATIC | {"gateway": "10.0.0.1"},
                                       "operations": [STA]},
     "E_NET_ADDRESS", ["10.0.0.1", "192.168.1.0/24"], {}),
    ("static-address-is-broadcast", {"target": "esp32s3", "network": STATIC | {"address": "192.168.1.255"},
                                     "operations": [STA]},
     "E_NET_ADDRESS", ["192.168.1.255"], {}),
    ("static-netmask-not-contiguous", {"target": "esp32s3", "network": STATIC | {"netmask": "255.0.255.0"},
                                       "operations": [STA]},
     "E_NET_ADDRESS", ["255.0.255.0"], {}),
    ("static-octet-over-255", {"target": "esp32s3", "network": {"ipv4": "dhcp", "dns": ["192.168.1.300"]},
                               "operations": [STA]},
     "E_NET_ADDRESS", ["192.168.1.300"], {}),
    ("static-address-on-native-sim", {"target": "native_sim", "network": STATIC, "operations": [COAP]},
     "E_NET_INTERFACE", ["nsos", "static"], {}),
    ("network-block-without-station", {"target": "esp32s3", "network": STATIC, "operations": [
        {"op": "adc_read", "name": "vin", "channel": {"pin": "GPIO1"}}]},
     "E_NET_INTERFACE", ["wifi_sta"], {}),
    ("espidf-lease-with-two-dns-servers",
     {"target": "esp32s3", "network": {"ipv4": "dhcp", "dns": ["9.9.9.9", "1.1.1.1"]}, "operations": [STA]},
     "E_NET_INTERFACE", ["9.9.9.9", "1.1.1.1"], {}),
    ("network-block-on-stm32f407", {"target": "stm32f407", "network": {"ipv4": "dhcp"}, "operations": [
        {"op": "uart_print", "message": "boot"}]},
     "E_TARGET_UNSUPPORTED", ["network", "stm32f407"], {}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects", "magnitudes"), CASES, ids=[c[0] for c in CASES])
def test_seeded_violation_and_every_relaxation(
    case: str, plan: dict[str, Any], code: str, objects: list[str], magnitudes: dict[str, float]
) -> None:
    result = run_plan(plan, target=plan["target"], framework=plan.get("framework"))
    assert result.status is Status.INVALID, (case, result.status)
    found = [e for e in result.evidence if e.code == code and set(objects) <= set(e.objects)]
    assert found, (case, [(e.code, e.objects, e.message) for e in result.evidence])
    values = {m.name: m.value for m in found[0].magnitudes}
    assert all(values.get(k) == v for k, v in magnitudes.items()), (case, found[0].magnitudes)
    offered = [r for e in result.evidence for r in e.relaxations]
    assert found[0].relaxations, f"{case}: no relaxation offered"
    for relaxation in offered:
        patched = apply_patch(plan, relaxation.patch)
        again = run_plan(patched, target=patched["target"], framework=patched.get("framework"))
        assert again.status is Status.PASS, (
            case,
            relaxation.description,
            [(e.code, e.message) for e in again.evidence],
        )


# --- realizations -------------------------------------------------------------------------------------------
def _lowered(plan: dict[str, Any]) -> dict[str, str]:
    result = run_plan(plan, target=plan["target"], framework=plan.get("framework"))
    assert result.status is Status.PASS, [(e.code, e.location, e.message) for e in result.evidence]
    assert result.lowered is not None
    return result.lowered.files


HTTPS_PLAN = {"target": "native_sim", "heap_bytes": 8192, "stack_bytes": 3072, "operations": [
    TLS, HTTP | {"host": "api.example.com", "tls": "api_tls"},
    {"op": "dns_resolve", "name": "lookup", "host": "time.example.com", "timeout_ms": 3000},
    COAP | {"token_bytes": 8}]}  # fmt: skip


def test_zephyr_tls_credentials_come_from_configuration_under_their_tag() -> None:
    files = _lowered(HTTPS_PLAN)
    main, prj = files["src/main.c"], files["prj.conf"].splitlines()
    assert (
        "tls_credential_add(7, TLS_CREDENTIAL_CA_CERTIFICATE, CONFIG_RAC_CRED_API_CA, sizeof(CONFIG_RAC_CRED_API_CA))"
        in main
    )
    assert "static const sec_tag_t tags[] = { 7 };" in main and "IPPROTO_TLS_1_2" in main
    assert "TLS_HOSTNAME" in main and "BEGIN CERTIFICATE" not in main
    assert "config RAC_CRED_API_CA" in files["Kconfig"]
    for symbol in ("CONFIG_TLS_CREDENTIALS=y", "CONFIG_TLS_MAX_CREDENTIALS_NUMBER=4", "CONFIG_MBEDTLS_HEAP_SIZE=60000",
                   "CONFIG_MBEDTLS_PEM_CERTIFICATE_FORMAT=y", "CONFIG_MAIN_STACK_SIZE=3072", "CONFIG_HTTP_CLIENT=y",
                   "CONFIG_COAP=y", "CONFIG_DNS_RESOLVER=y", "CONFIG_NET_SOCKETS_SOCKOPT_TLS=y"):  # fmt: skip
        assert symbol in prj, symbol


def test_the_credential_store_is_sized_from_the_plan() -> None:
    """Five credentials under two tags: TLS_MAX_CREDENTIALS_NUMBER goes from its default 4 to 5."""
    plan = {"target": "native_sim", "stack_bytes": 3072, "operations": [
        TLS | {"certificate": "dev_cert", "private_key": "dev_key"},
        {"op": "tls_credentials", "name": "backup", "sec_tag": 8, "certificate": "b_cert", "private_key": "b_key"},
        HTTP | {"tls": "api_tls"}]}  # fmt: skip
    assert "CONFIG_TLS_MAX_CREDENTIALS_NUMBER=5" in _lowered(plan)["prj.conf"].splitlines()


def test_waits_are_bounded_unless_the_plan_says_forever() -> None:
    main = _lowered(HTTPS_PLAN)["src/main.c"]
    assert "K_MSEC(3500)" in main and "DNS_QUERY_TYPE_A, &id, app_lookup_result, NULL, 3000)" in main
    assert "http_client_req(sock, &req, 10000, NULL)" in main and "K_FOREVER" not in main
    assert "SYS_FOREVER_MS" not in main
    lookup = {"op": "dns_resolve", "name": "lookup", "host": "time.example.com", "timeout_ms": "forever"}
    forever = _lowered({"target": "native_sim", "heap_bytes": 4096, "operations": [lookup]})["src/main.c"]
    assert "SYS_FOREVER_MS" in forever and "K_FOREVER" in forever


def test_coap_request_carries_its_token_and_uri_path() -> None:
    main = _lowered(HTTPS_PLAN)["src/main.c"]
    assert (
        "COAP_VERSION_1, COAP_TYPE_CON,\n\t\t\t       8U, coap_next_token(), COAP_METHOD_GET, coap_next_id())" in main
    )
    assert main.count("COAP_OPTION_URI_PATH") == 2 and '"sensors"' in main and '"temp"' in main


def test_espidf_https_uses_the_global_ca_store_and_cleans_up() -> None:
    files = _lowered({"target": "esp32s3", "framework": "espidf", "operations": [
        STA, TLS, HTTP | {"tls": "api_tls", "method": "POST", "body": "up"}]})  # fmt: skip
    main = files["main/main.c"]
    assert (
        "esp_tls_set_global_ca_store((const unsigned char *)CONFIG_RAC_CRED_API_CA, sizeof(CONFIG_RAC_CRED_API_CA))"
        in main
    )
    assert "cfg.use_global_ca_store = true;" in main and 'cfg.url = "https://192.0.2.10:443/v1/status";' in main
    assert main.count("esp_http_client_cleanup(client);") == 2
    assert 'start_task(status_task, "status", 8192,' in main  # the TLS handshake's stack
    assert "config RAC_CRED_API_CA" in files["main/Kconfig.projbuild"]
    assert "BEGIN CERTIFICATE" not in main


def test_a_static_address_lowers_to_prj_conf_and_to_esp_netif() -> None:
    plan = {"target": "esp32s3", "network": STATIC | {"dns": ["9.9.9.9"]}, "operations": [STA, HTTP]}
    zephyr = _lowered(plan | {"framework": "zephyr"})
    prj = zephyr["prj.conf"].splitlines()
    for line in ('CONFIG_NET_CONFIG_MY_IPV4_ADDR="192.168.1.50"', 'CONFIG_NET_CONFIG_MY_IPV4_NETMASK="255.255.255.0"',
                 'CONFIG_NET_CONFIG_MY_IPV4_GW="192.168.1.1"', "CONFIG_NET_DHCPV4=n", "CONFIG_NET_CONFIG_SETTINGS=y",
                 'CONFIG_DNS_SERVER1="9.9.9.9"', "CONFIG_DNS_SERVER_IP_ADDRESSES=y"):  # fmt: skip
        assert line in prj, line
    assert "net_dhcpv4_start" not in zephyr["src/main.c"]
    espidf = _lowered(plan | {"framework": "espidf"})["main/main.c"]
    assert "esp_netif_dhcpc_stop(sta_netif)" in espidf and "ESP_IP4TOADDR(192, 168, 1, 50)" in espidf
    assert "esp_netif_set_dns_info(sta_netif, ESP_NETIF_DNS_MAIN, &sta_dns0)" in espidf
    dhcp = _lowered(
        {"target": "esp32s3", "framework": "zephyr", "network": {"ipv4": "dhcp"}, "operations": [STA, HTTP]}
    )
    assert "CONFIG_NET_DHCPV4=y" in dhcp["prj.conf"].splitlines() and "net_dhcpv4_start" in dhcp["src/main.c"]


def test_generated_apps_release_every_handle_and_the_rule_bites_when_one_is_dropped() -> None:
    """The generated app verifies clean; deleting one error-path close makes the verifier answer E_HANDLE_LEAK."""
    from rac_fw.domains.firmware.verify.artifact import verify_sources

    files = _lowered(HTTPS_PLAN)
    main = files["src/main.c"]
    leaky = main.replace("\t\terr = -errno;\n\t\t(void)zsock_close(sock);\n\t\treturn err;", "\t\treturn -errno;", 1)
    assert leaky != main
    codes = [e.code for e in verify_sources({**files, "src/main.c": leaky}, "zephyr", None).evidence]
    assert codes == ["E_HANDLE_LEAK"]


def test_the_connectivity_tasks_calibrate() -> None:
    """Every expressible task of suite/networking.yaml (moved from unexpressible.yaml, or new with these
    operations) passes model-free: its reference plan validates, lowers, verifies and meets its checks."""
    from rac_fw.domains.firmware.tasks import suite
    from rac_fw.domains.firmware.tasks.calibrate import calibrate_task

    tasks = [t for t in suite().values() if t.id.startswith(("fw/networking/", "fw/ble/")) and t.reference]
    names = {t.name for t in tasks}
    assert {"wifi_station", "mqtt_publish", "https_status", "dns_lookup", "coap_get", "static_address",
            "ble_beacon", "ble_gatt_sensor"} <= names  # fmt: skip
    failed = [(row.task, row.detail) for row in map(calibrate_task, tasks) if not row.passed]
    assert failed == []
    gaps = {t.name for t in suite().values() if t.status == "unexpressible"}
    assert not {"wifi_station", "mqtt_publish", "ble_beacon", "ble_gatt_sensor"} & gaps
