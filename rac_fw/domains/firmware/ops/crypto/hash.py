"""The ``hash`` operation: a message digest computed and checked by the framework's crypto backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.ops.crypto import policy
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.fields import Message
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class Hash(Operation):
    """Compute the digest of ``message`` once, check it by a second computation and print its first bytes.

    ``algorithm`` must be computed by the target's backend (E_CRYPTO_UNSUPPORTED); MD5 and SHA-1 are
    refused for security uses (E_CRYPTO_WEAK names SHA-256).
    """

    op: Literal["hash"]
    algorithm: Literal["sha256", "sha1", "md5"] = "sha256"
    message: Message


def _check(plan: Plan, target: Target, framework: str, index: int, op: Hash) -> list[Evidence]:
    if framework not in SPEC.realizations:
        return []
    small = policy.stack(plan, index)
    weak = policy.strong(index, op.algorithm, "algorithm", "sha256")
    return small + (weak or policy.supported(target, framework, index, op.algorithm, "algorithm"))


def _zephyr(b: ZephyrBuilder, index: int, op: Hash) -> dict[str, Any]:
    policy.psa_config(b, "ALG_SHA_256")
    return {"id": b.ids[index], "message": c_string(op.message), "setup": True, "step": {"period_ms": None}}


def _espidf(b: EspIdfBuild, index: int, op: Hash) -> dict[str, Any]:
    b.requires.add("mbedtls")
    return {"message": c_string(op.message), "headers": policy.idf_headers(b, "mbedtls/sha256.h")}


SPEC = OpSpec(
    model=Hash,
    family="crypto",
    realizations={
        "zephyr": Realization(template="crypto", view=_zephyr, available=policy.has_backend("zephyr")),
        "espidf": Realization(template="crypto", view=_espidf, available=policy.has_backend("espidf")),
    },
    checks=(_check,),
    codes=policy.CODES,
)
