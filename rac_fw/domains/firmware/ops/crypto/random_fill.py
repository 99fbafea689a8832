"""The ``random`` operation: bytes from the backend's cryptographically secure generator."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.ops.crypto import policy
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class RandomBytes(Operation):
    """Fill ``length_bytes`` from the cryptographically secure generator (PSA's DRBG seeded by the chip's
    entropy source on Zephyr, the hardware RNG through ``esp_fill_random`` on ESP-IDF), never ``rand()``."""

    op: Literal["random"]
    length_bytes: int = Field(default=16, ge=1, le=256, description="How many random bytes to draw.")


def _check(plan: Plan, target: Target, framework: str, index: int, op: RandomBytes) -> list[Evidence]:
    if framework not in SPEC.realizations:
        return []
    small = policy.stack(plan, index)
    return small + policy.supported(target, framework, index, "random", "op")


def _zephyr(b: ZephyrBuilder, index: int, op: RandomBytes) -> dict[str, Any]:
    policy.psa_config(b)
    return {"id": b.ids[index], "length": op.length_bytes, "setup": True, "step": {"period_ms": None}}


def _espidf(b: EspIdfBuild, index: int, op: RandomBytes) -> dict[str, Any]:
    b.requires.add("esp_hw_support")
    return {"length": op.length_bytes, "headers": policy.idf_headers(b, "esp_random.h")}


SPEC = OpSpec(
    model=RandomBytes,
    family="crypto",
    realizations={
        "zephyr": Realization(template="crypto", view=_zephyr, available=policy.has_backend("zephyr")),
        "espidf": Realization(template="crypto", view=_espidf, available=policy.has_backend("espidf")),
    },
    checks=(_check,),
    codes=policy.CODES,
)
