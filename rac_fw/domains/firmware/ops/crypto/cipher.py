"""The ``cipher`` operation: AES encryption and decryption round trip with a fresh IV/nonce per message."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.ops.crypto import policy
from rac_fw.domains.firmware.plan import evidence as ev
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: AES block size in bytes (FIPS 197): CBC/ECB without padding only take whole blocks.
AES_BLOCK = 16
#: GCM nonce length the templates draw (NIST SP 800-38D recommends 96 bits) and its tag length.
GCM_NONCE = 12
GCM_TAG = 16


class Cipher(Operation):
    """Encrypt ``length_bytes`` of random plaintext with the AES key ``key`` and decrypt it back, checked.

    ``gcm`` draws a fresh 96-bit nonce per message and appends a 128-bit tag; ``cbc`` (no padding) draws
    a fresh random IV per message, so ``length_bytes`` must be whole 16-byte blocks (E_CRYPTO_BLOCK);
    ``ecb`` is refused (E_CRYPTO_WEAK names GCM). The key must be an AES key of 128/192/256 bits whose
    policy allows encrypt and decrypt (E_CRYPTO_KEY_SIZE, E_CRYPTO_KEY_USAGE).
    """

    op: Literal["cipher"]
    key: Name
    mode: Literal["gcm", "cbc", "ecb"] = "gcm"
    length_bytes: int = Field(default=32, ge=1, le=1024, description="Plaintext length in bytes.")


def _check(plan: Plan, target: Target, framework: str, index: int, op: Cipher) -> list[Evidence]:
    if framework not in SPEC.realizations:
        return []
    small = policy.stack(plan, index)
    found = policy.strong(index, f"aes-{op.mode}", "mode", "gcm")
    found += policy.key_fits(plan, index, op.key, "aes", ("encrypt", "decrypt"))
    if op.mode in ("cbc", "ecb") and op.length_bytes % AES_BLOCK:
        where: ev.Path = ["operations", index, "length_bytes"]
        up = -(-op.length_bytes // AES_BLOCK) * AES_BLOCK
        options = [ev.relax(f"encrypt {up} bytes (whole blocks)", ev.replace(where, up))]
        if op.length_bytes > AES_BLOCK:
            down = op.length_bytes // AES_BLOCK * AES_BLOCK
            options.append(ev.relax(f"encrypt {down} bytes (whole blocks)", ev.replace(where, down)))
        options.append(ev.relax("use AES-GCM (no block-size rule)", ev.replace(["operations", index, "mode"], "gcm")))
        found.append(ev.violation(
            policy.BLOCK,
            f"AES-{op.mode.upper()} without padding takes whole {AES_BLOCK}-byte blocks; {op.length_bytes} bytes "
            f"leave {op.length_bytes % AES_BLOCK}",
            where, [op.name or f"operations[{index}]", f"aes-{op.mode}"],
            [ev.measure("length", op.length_bytes, "bytes"), ev.measure("block", AES_BLOCK, "bytes")], options,
        ))  # fmt: skip
    if not found:
        found = policy.supported(target, framework, index, f"aes-{op.mode}", "mode")
    return small + found


def _key_bits(b: Any, op: Cipher) -> int:
    found = policy.key(b.plan, op.key)
    if found is None:
        raise LookupError(f"key {op.key} is not declared (the obligations refuse this plan)")
    return found.bits


def _zephyr(b: ZephyrBuilder, index: int, op: Cipher) -> dict[str, Any]:
    policy.psa_config(b, "KEY_TYPE_AES", "ALG_GCM" if op.mode == "gcm" else "ALG_CBC_NO_PADDING")
    b.app.includes.add("string.h")
    view = _sizes(b, op)
    return view | {"id": b.ids[index], "setup": True, "step": {"period_ms": None}}


def _sizes(b: Any, op: Cipher) -> dict[str, Any]:
    """The sizes both frameworks' macros render."""
    return {"mode": op.mode, "bits": _key_bits(b, op), "length": op.length_bytes, "nonce": GCM_NONCE,
            "tag_len": GCM_TAG, "block": AES_BLOCK}  # fmt: skip


def _espidf(b: EspIdfBuild, index: int, op: Cipher) -> dict[str, Any]:
    b.requires.add("mbedtls")
    mode = "mbedtls/gcm.h" if op.mode == "gcm" else "mbedtls/aes.h"
    return _sizes(b, op) | {"headers": policy.idf_headers(b, "esp_random.h", "mbedtls/platform_util.h", mode)}


SPEC = OpSpec(
    model=Cipher,
    family="crypto",
    realizations={
        "zephyr": Realization(template="crypto", view=_zephyr, available=policy.has_backend("zephyr")),
        "espidf": Realization(template="crypto", view=_espidf, available=policy.has_backend("espidf")),
    },
    checks=(_check,),
    codes=policy.CODES,
)
