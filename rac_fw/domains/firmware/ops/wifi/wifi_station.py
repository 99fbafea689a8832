"""The ``wifi_station`` operation: join an access point, get an IPv4 address, reconnect when dropped."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.network import interfaces
from rac_fw.domains.firmware.facts.radio import wifi
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.sections.network import espidf_static, leases_address
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class WifiStation(Operation):
    """Join a Wi-Fi access point as a station and report the IPv4 address DHCP gives it.

    The SSID and the passphrase are *credentials referenced by name*, never written in the plan:
    ``ssid_credential`` and ``psk_credential`` name Kconfig strings the build declares
    (``CONFIG_RAC_CRED_<NAME>``) and the user sets in their own configuration (``menuconfig``,
    ``sdkconfig``, ``prj.conf`` overlay). When the link drops the station reconnects after
    ``retry_ms``, doubling the wait up to ``retry_max_ms``, at most ``max_retries`` times in a row
    (0: without limit). ``wait_ms`` bounds how long start-up waits for an address.
    """

    op: Literal["wifi_station"]
    ssid_credential: Name = "wifi_ssid"
    psk_credential: Name = "wifi_psk"
    security: Literal["wpa2_psk", "wpa3_sae", "open"] = "wpa2_psk"
    retry_ms: int = Field(default=1000, ge=100, le=600_000)
    retry_max_ms: int = Field(default=30_000, ge=100, le=3_600_000)
    max_retries: int = Field(default=0, ge=0, le=1000, description="Reconnect attempts in a row; 0 = no limit.")
    wait_ms: int = Field(default=30_000, ge=1000, le=600_000, description="Start-up wait for an address.")


def kconfig_name(credential: str) -> str:
    """The Kconfig symbol (without ``CONFIG_``) a credential reference becomes."""
    return f"RAC_CRED_{credential.upper()}"


def credentials_kconfig(names: list[str], menu: str) -> str:
    """A Kconfig fragment declaring one string option per referenced credential (empty defaults:
    the user's configuration supplies the secret; the generated sources never hold it)."""
    lines = [f'menu "{menu}"', ""]
    for name in dict.fromkeys(names):
        lines += [
            f"config {kconfig_name(name)}",
            f'\tstring "credential {name}"',
            '\tdefault ""',
            "\thelp",
            f"\t  The {name} credential the plan references; set it in your own configuration.",
            "",
        ]
    lines.append("endmenu")
    return "\n".join(lines) + "\n"


def plan_credentials(plan: Plan) -> list[str]:
    """Every credential the plan references by name (one Kconfig file declares them all)."""
    names: list[str] = []
    for op in plan.operations:
        for field in ("ssid_credential", "psk_credential", "username_credential", "password_credential"):
            value = getattr(op, field, None)
            if isinstance(value, str) and not (field == "psk_credential" and getattr(op, "security", "") == "open"):
                names.append(value)
        named = getattr(op, "credentials", None)
        if callable(named):  # operations that reference several credentials list them (tls_credentials)
            names += [name for _, name in named()]
    return names


def _backoff(plan: Plan, target: Target, framework: str, index: int, op: WifiStation) -> list[Evidence]:

    if op.retry_ms <= op.retry_max_ms:
        return []
    path: Path = ["operations", index, "retry_max_ms"]
    return [
        violation(
            "E_NET_TIMEOUT",
            f"reconnect backoff starts at {op.retry_ms} ms, above its {op.retry_max_ms} ms ceiling",
            path,
            [op.name or "wifi_station"],
            [measure("retry", op.retry_ms, "ms"), measure("retry_max", op.retry_max_ms, "ms")],
            [relax(f"cap the backoff at {op.retry_ms} ms", replace(path, op.retry_ms))],
        )
    ]


def _single(plan: Plan, target: Target, framework: str, index: int, op: WifiStation) -> list[Evidence]:

    first = next(i for i, o in enumerate(plan.operations) if isinstance(o, WifiStation))
    if first == index:
        return []
    return [
        violation(
            "E_NET_INTERFACE",
            "one Wi-Fi station per plan: the radio joins one access point",
            ["operations", index],
            [op.name or "wifi_station"],
            relaxations=[relax(f"drop this {op.op}", remove(["operations", index]))],
        )
    ]


def _retry_view(op: WifiStation) -> dict[str, Any]:
    return {"retry_ms": op.retry_ms, "retry_max_ms": op.retry_max_ms, "max_retries": op.max_retries,
            "wait_ms": op.wait_ms}  # fmt: skip


def _zephyr(b: ZephyrBuilder, index: int, op: WifiStation) -> dict[str, Any]:
    iface = next(i for i in interfaces(b.target, "zephyr") if i.kind == "wifi")
    b.app.need("wifi", "CONFIG_NETWORKING", "CONFIG_NET_IPV4", "CONFIG_NET_DHCPV4", "CONFIG_NET_MGMT",
               "CONFIG_NET_MGMT_EVENT", *(f"CONFIG_{k}" for k in iface.kconfig))  # fmt: skip
    b.app.okay(iface.name)
    b.app.includes.update({"zephyr/net/net_if.h", "zephyr/net/net_mgmt.h", "zephyr/net/wifi_mgmt.h",
                           "zephyr/net/net_event.h", "zephyr/net/dhcpv4.h", "string.h"})  # fmt: skip
    b.app.files["Kconfig"] = 'source "Kconfig.zephyr"\n\n' + credentials_kconfig(
        plan_credentials(b.plan), "rac-fw credentials"
    )
    return _retry_view(op) | {
        "setup": True,
        "step": None,
        "ssid": f"CONFIG_{kconfig_name(op.ssid_credential)}",
        "psk": f"CONFIG_{kconfig_name(op.psk_credential)}" if op.security != "open" else None,
        "security": {"wpa2_psk": "WIFI_SECURITY_TYPE_PSK", "wpa3_sae": "WIFI_SECURITY_TYPE_SAE",
                     "open": "WIFI_SECURITY_TYPE_NONE"}[op.security],
        "dhcp": leases_address(b.plan),
    }  # fmt: skip


def shares_radio_with_ble(plan: Plan) -> bool:
    """Whether a Bluetooth LE operation runs beside the station: the two share one 2.4 GHz radio,
    and ESP-IDF then needs software coexistence to time-slice it (components/esp_coex/Kconfig)."""
    return any(spec(o.op).family == "ble" for o in plan.operations)


def _espidf(b: EspIdfBuild, index: int, op: WifiStation) -> dict[str, Any]:
    b.requires.update({"esp_wifi", "esp_netif", "esp_event", "nvs_flash"})
    if shares_radio_with_ble(b.plan):
        b.sdkconfig["CONFIG_ESP_COEX_SW_COEXIST_ENABLE"] = "y"
    b.files["main/Kconfig.projbuild"] = credentials_kconfig(plan_credentials(b.plan), "rac-fw credentials")
    return _retry_view(op) | {
        "ssid": f"CONFIG_{kconfig_name(op.ssid_credential)}",
        "psk": f"CONFIG_{kconfig_name(op.psk_credential)}" if op.security != "open" else None,
        "authmode": {"wpa2_psk": "WIFI_AUTH_WPA2_PSK", "wpa3_sae": "WIFI_AUTH_WPA3_PSK", "open": "WIFI_AUTH_OPEN"}[
            op.security
        ],
        "label": c_string(b.symbol(index, op)),
        "netif": espidf_static(b.plan),
    }


def _station(framework: str) -> Any:
    def available(target: Target) -> bool:
        radio = wifi(target)
        return (
            radio is not None and "sta" in radio.modes and any(i.kind == "wifi" for i in interfaces(target, framework))
        )

    return available


SPEC = OpSpec(
    model=WifiStation,
    family="wifi",
    flags=frozenset({Flag.WIFI_RADIO}),
    realizations={
        "zephyr": Realization(template="wifi", view=_zephyr, available=_station("zephyr")),
        "espidf": Realization(template="wifi_station", view=_espidf, available=_station("espidf")),
    },
    checks=(_single, _backoff),
    codes=("E_NET_TIMEOUT", "E_NET_INTERFACE"),
)
