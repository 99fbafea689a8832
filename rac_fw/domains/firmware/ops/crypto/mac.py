"""The ``mac`` operation: an HMAC-SHA-256 tag computed over a message and verified."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

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


class Mac(Operation):
    """Compute the HMAC-SHA-256 tag of ``message`` with the HMAC key ``key`` and verify it.

    The key must be an HMAC key of 256-512 bits whose policy allows sign and verify.
    """

    op: Literal["mac"]
    key: Name
    algorithm: Literal["hmac-sha256"] = "hmac-sha256"
    message: Message


def _check(plan: Plan, target: Target, framework: str, index: int, op: Mac) -> list[Evidence]:
    if framework not in SPEC.realizations:
        return []
    small = policy.stack(plan, index)
    found = policy.key_fits(plan, index, op.key, "hmac", ("sign", "verify"))
    return small + (found or policy.supported(target, framework, index, op.algorithm, "algorithm"))


def _bits(b: Any, op: Mac) -> int:
    found = policy.key(b.plan, op.key)
    if found is None:
        raise LookupError(f"key {op.key} is not declared (the obligations refuse this plan)")
    return found.bits


def _zephyr(b: ZephyrBuilder, index: int, op: Mac) -> dict[str, Any]:
    policy.psa_config(b, "KEY_TYPE_HMAC", "ALG_HMAC", "ALG_SHA_256")
    return {"id": b.ids[index], "bits": _bits(b, op), "message": c_string(op.message), "setup": True,
            "step": {"period_ms": None}}  # fmt: skip


def _espidf(b: EspIdfBuild, index: int, op: Mac) -> dict[str, Any]:
    b.requires.add("mbedtls")
    headers = policy.idf_headers(
        b, "esp_random.h", "mbedtls/constant_time.h", "mbedtls/md.h", "mbedtls/platform_util.h"
    )
    return {"bits": _bits(b, op), "message": c_string(op.message), "headers": headers}


SPEC = OpSpec(
    model=Mac,
    family="crypto",
    realizations={
        "zephyr": Realization(template="crypto", view=_zephyr, available=policy.has_backend("zephyr")),
        "espidf": Realization(template="crypto", view=_espidf, available=policy.has_backend("espidf")),
    },
    checks=(_check,),
    codes=policy.CODES,
)
