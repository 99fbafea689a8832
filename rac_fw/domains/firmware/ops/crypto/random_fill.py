"""The ``random`` operation: bytes from the backend's cryptographically secure generator."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.crypto import Accelerator, accelerators, backend
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import clock_hz, entropy_source, has_registers
from rac_fw.domains.firmware.ops.crypto import policy
from rac_fw.domains.firmware.plan import evidence as ev
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class RandomBytes(Operation):
    """Fill ``length_bytes`` from the cryptographically secure generator (PSA's DRBG seeded by the chip's
    entropy source on Zephyr, the hardware RNG through ``esp_fill_random`` on ESP-IDF, the RNG block
    through ``HAL_RNG_GenerateRandomNumber`` on the STM32 HAL and through its registers on bare metal),
    never ``rand()``."""

    op: Literal["random"]
    length_bytes: int = Field(default=16, ge=1, le=256, description="How many random bytes to draw.")


def _check(plan: Plan, target: Target, framework: str, index: int, op: RandomBytes) -> list[Evidence]:
    realization = SPEC.realization(framework)
    if realization is None or not realization.available(target):
        return []  # the support obligation names the frameworks that realize random here
    found = backend(target, framework)
    # Only the mbedTLS/PSA calls need the deep stack; the HAL and register realizations read the block.
    small = policy.stack(plan, index) if found is None or found.api in ("psa", "mbedtls") else []
    return small + policy.supported(target, framework, index, "random", "op")


def _zephyr(b: ZephyrBuilder, index: int, op: RandomBytes) -> dict[str, Any]:
    policy.psa_config(b)
    return {"id": b.ids[index], "length": op.length_bytes, "setup": True, "step": {"period_ms": None}}


def _espidf(b: EspIdfBuild, index: int, op: RandomBytes) -> dict[str, Any]:
    b.requires.add("esp_hw_support")
    return {"length": op.length_bytes, "headers": policy.idf_headers(b, "esp_random.h")}


#: nRF52840 PS §6.21: one byte per VALRDY, typically 120 us with bias correction; bound each byte at 2 ms.
NRF_BYTE_US = 2000


def _rng(target: Target) -> Accelerator | None:
    """The chip's random-number block (an accelerator computing ``random`` whose peripheral is present)."""
    return next((a for a in accelerators(target) if "random" in a.algorithms and a.peripheral == "RNG"), None)


def _hal_admits(plan: Plan, target: Target, index: int, op: RandomBytes) -> list[Evidence]:
    """The RNG's kernel clock runs under the HAL clock set-up, or is an oscillator the code starts."""
    block = _rng(target)
    if block is None or block.clock is None or block.oscillator or clock_hz(target, block.clock, "hal"):
        return []
    return [ev.violation(
        "E_TARGET_UNSUPPORTED", f"the {block.name} of {target.id} runs from {block.clock}, which the hal clock "
        "set-up does not run (clock facts)", ["operations", index], [block.name, block.clock, target.id],
    )]  # fmt: skip


def _hal(b: HalBuild, index: int, op: RandomBytes) -> dict[str, Any]:
    block = _rng(b.target)
    if block is None:
        raise b.unsupported(f"operations.{index}", f"{b.target.id} has no RNG block in its facts")
    b.modules.add("RNG")
    view = b.base_view(index, op)
    view.update(length=op.length_bytes, oscillator=block.clock if block.oscillator else None, clock=block.clock)
    return view


def _nrf_rng(target: Target) -> bool:
    """The nRF52 RNG register model (TASKS_START, EVENTS_VALRDY, VALUE, CONFIG) and a bare-metal backend."""
    return policy.has_backend("baremetal")(target) and has_registers(
        target, "RNG", "TASKS_START", "TASKS_STOP", "EVENTS_VALRDY", "VALUE", "CONFIG"
    )


def _baremetal(b: BaremetalBuild, index: int, op: RandomBytes) -> None:
    regs = b.regs("RNG")
    ctx = b.base(index, op) | {"m": regs.m, "length": op.length_bytes, "byte_budget": b.budget_us(NRF_BYTE_US)}
    b.emit("ops/random_nrf", ctx)


SPEC = OpSpec(
    model=RandomBytes,
    family="crypto",
    realizations={
        "zephyr": Realization(
            template="crypto",
            view=_zephyr,
            available=lambda t: policy.has_backend("zephyr")(t) and entropy_source(t) is not None,
            why_unavailable=lambda t: f"the {t.id} board devicetree has no entropy source (zephyr,entropy) to seed "
            "PSA's generator",
        ),
        "espidf": Realization(template="crypto", view=_espidf, available=policy.has_backend("espidf")),
        "hal": Realization(template="crypto", view=_hal, available=policy.has_backend("hal"), admits=_hal_admits),
        "baremetal": Realization(template="ops/random_nrf", view=_baremetal, available=_nrf_rng),
    },
    checks=(_check,),
    codes=policy.CODES,
)
