"""The ``tls_credentials`` operation: CA, certificate and private key registered under one security tag.

Credentials are named, never written: each name becomes a Kconfig string (``CONFIG_RAC_CRED_<NAME>``,
PEM text) that the user's own configuration sets, like the Wi-Fi and MQTT credentials, so neither the
plan nor the generated C holds one (the verifier's ``E_SECRET_LITERAL`` judges ``tls_credential_add``'s
and ``esp_tls_set_global_ca_store``'s credential argument). TLS clients (``http_request``) name this
operation in their ``tls`` field.

Zephyr: ``tls_credential_add(tag, type, cred, len)`` for each credential (include/zephyr/net/
tls_credentials.h, zephyrproject-rtos/zephyr 01b8849a177d), with ``TLS_MAX_CREDENTIALS_NUMBER`` sized
to the plan's credentials (subsys/net/lib/tls_credentials/Kconfig: default 4, no range). ESP-IDF:
esp-tls keeps no tagged store; the CA goes to its global CA store (``esp_tls_set_global_ca_store``,
components/esp-tls/esp_tls.h, espressif/esp-idf 43b8395eafac) that clients use, and the device's own
certificate and key go to each client that names this operation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.network import net_stack
from rac_fw.domains.firmware.ops.net import common
from rac_fw.domains.firmware.ops.wifi.wifi_station import kconfig_name
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.rules import AnyOf, Given, Implies, Rule
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: Credential field → Zephyr's ``enum tls_credential_type`` member (tls_credentials.h).
KINDS = {
    "ca": "TLS_CREDENTIAL_CA_CERTIFICATE",
    "certificate": "TLS_CREDENTIAL_PUBLIC_CERTIFICATE",
    "private_key": "TLS_CREDENTIAL_PRIVATE_KEY",
}

TAG = "E_NET_TLS_TAG"

#: mbed TLS on Zephyr as Zephyr's own HTTPS client sample configures it
#: (samples/net/sockets/http_client/overlay-tls.conf, zephyrproject-rtos/zephyr 3de45ee86b17): its own heap of
#: 60000 bytes and 2048-byte records; PEM credentials need the PEM parser (MBEDTLS_PEM_CERTIFICATE_FORMAT).
ZEPHYR_MBEDTLS_HEAP_BYTES = 60000
ZEPHYR_MBEDTLS_CONTENT_BYTES = 2048


class TlsCredentials(Operation):
    """Register TLS credentials under one security tag at start-up, for the TLS clients naming this operation.

    ``ca`` is the CA certificate that authenticates servers; ``certificate`` with ``private_key`` is this
    device's identity for mutual TLS (the pair shares the tag, tls_credentials.h). Each is the *name* of a
    credential the user's configuration holds as PEM text (Kconfig ``RAC_CRED_<NAME>``); ``sec_tag`` is the
    security tag (1 to 2^31-1; negative tags are reserved by Zephyr). The operation needs a ``name``.
    """

    op: Literal["tls_credentials"]
    sec_tag: int = Field(default=1, ge=1, le=2**31 - 1, description="Security tag the credentials are filed under.")
    ca: Name | None = Field(default=None, description="Credential name of the CA certificate (PEM).")
    certificate: Name | None = Field(default=None, description="Credential name of this device's certificate (PEM).")
    private_key: Name | None = Field(default=None, description="Credential name of this device's private key (PEM).")

    rules: ClassVar[tuple[Rule, ...]] = (
        AnyOf("tls_credentials needs a name: TLS clients refer to it in their tls field", ("name",)),
        AnyOf("register at least a CA (ca) or a device certificate (certificate)", ("ca", "certificate")),
        Implies("a device certificate and its private key come together (certificate, private_key)",
                Given("certificate"), Given("private_key"), iff=True),
    )  # fmt: skip

    @property
    def sockets(self) -> int:
        """Registering credentials opens no socket."""
        return 0

    def credentials(self) -> list[tuple[str, str]]:
        """(field, credential name) of every credential given, in registration order."""
        return [(f, getattr(self, f)) for f in KINDS if getattr(self, f) is not None]


def tls_operations(plan: Plan) -> list[tuple[int, TlsCredentials]]:
    return [(i, op) for i, op in enumerate(plan.operations) if isinstance(op, TlsCredentials)]


def credential_names(plan: Plan) -> list[str]:
    """Every TLS credential name the plan references (each one a Kconfig string)."""
    return [name for _, op in tls_operations(plan) for _, name in op.credentials()]


def _tag(plan: Plan, target: Target, framework: str, index: int, op: TlsCredentials) -> list[Evidence]:
    """No two operations file a credential of the same type under one tag (``tls_credential_add`` would
    answer -EEXIST for the second)."""
    earlier = [(i, o) for i, o in tls_operations(plan) if i < index and o.sec_tag == op.sec_tag]
    clash = [(i, o) for i, o in earlier if {f for f, _ in o.credentials()} & {f for f, _ in op.credentials()}]
    if not clash:
        return []
    used = {o.sec_tag for _, o in tls_operations(plan)}
    free = next(t for t in range(1, len(used) + 2) if t not in used)
    path: Path = ["operations", index, "sec_tag"]
    other = clash[0][1]
    return [
        violation(
            TAG,
            f"{op.name} and {other.name} both file a {', '.join(f for f, _ in op.credentials())} credential under "
            f"security tag {op.sec_tag}: the second registration fails (-EEXIST)",
            path,
            [op.name or op.op, other.name or other.op],
            [measure("sec_tag", op.sec_tag, "tag")],
            [relax(f"file these under security tag {free}", replace(path, free))],
        )
    ]


def slots_needed(plan: Plan) -> int:
    return len(credential_names(plan))


def _zephyr(b: ZephyrBuilder, index: int, op: TlsCredentials) -> dict[str, Any]:
    common.zephyr_base(b, index)  # the TLS socket option and the credential store live in the networking stack
    b.app.need("net", "CONFIG_TLS_CREDENTIALS", "CONFIG_NET_SOCKETS_SOCKOPT_TLS", "CONFIG_MBEDTLS",
               "CONFIG_MBEDTLS_ENABLE_HEAP", "CONFIG_MBEDTLS_PEM_CERTIFICATE_FORMAT")  # fmt: skip
    b.app.setting("net", "CONFIG_MBEDTLS_HEAP_SIZE", str(ZEPHYR_MBEDTLS_HEAP_BYTES))
    b.app.setting("net", "CONFIG_MBEDTLS_SSL_MAX_CONTENT_LEN", str(ZEPHYR_MBEDTLS_CONTENT_BYTES))
    stack = net_stack(b.target, "zephyr")
    if stack is not None and stack.tls_credentials_kconfig is not None:
        count = max(stack.tls_credentials_default or 0, slots_needed(b.plan))
        b.app.setting("net", f"CONFIG_{stack.tls_credentials_kconfig}", str(count))
    b.app.includes.add("zephyr/net/tls_credentials.h")
    b.app.files["Kconfig"] = common.credentials_file(b.plan, zephyr=True)
    return {
        "setup": True,
        "step": None,
        "sec_tag": op.sec_tag,
        "credentials": [{"kind": KINDS[f], "macro": f"CONFIG_{kconfig_name(n)}"} for f, n in op.credentials()],
    }


def _espidf(b: EspIdfBuild, index: int, op: TlsCredentials) -> dict[str, Any]:
    b.requires.add("esp-tls")
    b.files["main/Kconfig.projbuild"] = common.credentials_file(b.plan, zephyr=False)
    return {
        "ca": f"CONFIG_{kconfig_name(op.ca)}" if op.ca else None,
        "sec_tag": op.sec_tag,
    }


SPEC = OpSpec(
    model=TlsCredentials,
    family="net",
    realizations={
        "zephyr": Realization(template="net_app", view=_zephyr, available=common.available("zephyr"),
            why_unavailable=common.why_no_interface("zephyr"),
        ),
        "espidf": Realization(template="net_app", view=_espidf, available=common.available("espidf"),
            why_unavailable=common.why_no_interface("espidf"),
        ),
    },
    checks=(_tag,),
    codes=(*common.CODES, TAG),
)
