"""The ``kdf`` operation: HKDF-SHA-256 key derivation from a named secret, salted per derivation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.ops.crypto import policy
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.fields import Message, Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: HKDF output is at most 255 hash lengths (RFC 5869 2.3): 255 × 32 bytes for SHA-256.
HKDF_MAX = 255 * 32
#: Salt drawn per derivation (RFC 5869 3.1: ideally a hash length of random bytes).
SALT_BYTES = 32


class Kdf(Operation):
    """Derive ``length_bytes`` of key material from the ``derive`` key ``key`` with HKDF-SHA-256 (RFC 5869):
    a fresh random salt per derivation and the plan's ``info`` label binding the output to its purpose.
    Twice with the same salt must agree; the output never leaves the operation."""

    op: Literal["kdf"]
    key: Name
    algorithm: Literal["hkdf-sha256"] = "hkdf-sha256"
    info: Message
    length_bytes: int = Field(default=32, ge=1, le=HKDF_MAX, description="Output length (≤ 255 × 32 bytes).")


def _check(plan: Plan, target: Target, framework: str, index: int, op: Kdf) -> list[Evidence]:
    if framework not in SPEC.realizations:
        return []
    small = policy.stack(plan, index)
    found = policy.key_fits(plan, index, op.key, "derive", ("derive",))
    return small + (found or policy.supported(target, framework, index, op.algorithm, "algorithm"))


def _bits(b: Any, op: Kdf) -> int:
    found = policy.key(b.plan, op.key)
    if found is None:
        raise LookupError(f"key {op.key} is not declared (the obligations refuse this plan)")
    return found.bits


def _zephyr(b: ZephyrBuilder, index: int, op: Kdf) -> dict[str, Any]:
    policy.psa_config(b, "KEY_TYPE_DERIVE", "ALG_HKDF", "ALG_HMAC", "ALG_SHA_256")
    b.app.includes.add("string.h")
    return {"id": b.ids[index], "bits": _bits(b, op), "info": c_string(op.info), "length": op.length_bytes,
            "salt": SALT_BYTES, "setup": True, "step": {"period_ms": None}}  # fmt: skip


def _espidf(b: EspIdfBuild, index: int, op: Kdf) -> dict[str, Any]:
    b.requires.add("mbedtls")
    headers = policy.idf_headers(b, "esp_random.h", "mbedtls/hkdf.h", "mbedtls/md.h", "mbedtls/platform_util.h")
    return {"bits": _bits(b, op), "info": c_string(op.info), "length": op.length_bytes, "salt": SALT_BYTES,
            "headers": headers}  # fmt: skip


SPEC = OpSpec(
    model=Kdf,
    family="crypto",
    realizations={
        "zephyr": Realization(template="crypto", view=_zephyr, available=policy.has_backend("zephyr")),
        "espidf": Realization(template="crypto", view=_espidf, available=policy.has_backend("espidf")),
    },
    checks=(_check,),
    codes=policy.CODES,
)
