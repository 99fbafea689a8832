"""The ``image_confirm`` operation: confirm the running image only after a named self-test passes.

Obligations (this module): a bootloader block exists (E_BOOTLOADER_MISSING) and the self-test names an
operation placed before the confirm (E_SELFTEST), so it has run — and on Zephyr runs again as the
confirm's gate — before the image is made permanent; a failed self-test leaves the image unconfirmed
and the bootloader reverts it at the next reset.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.ops.storage.area import zephyr_flash_writer
from rac_fw.domains.firmware.ops.update.boot import MISSING, has_slots, needs_bootloader
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.cstring import c_string_literal
from rac_fw.domains.firmware.plan.evidence import relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

SELFTEST = "E_SELFTEST"


class ImageConfirm(Operation):
    """Report the swap state, then confirm the running image if the operation named ``self_test`` passes.

    Zephyr (MCUboot): ``mcuboot_swap_type`` and ``boot_is_img_confirmed`` are reported; an unconfirmed
    image runs the self-test operation's step again and is confirmed (``boot_write_img_confirmed``) only
    when it succeeds. ESP-IDF: an image pending verification is marked valid
    (``esp_ota_mark_app_valid_cancel_rollback``); every earlier operation aborts the boot when it fails,
    so reaching the confirm means the self-test passed.
    """

    op: Literal["image_confirm"]
    self_test: Name


def _bootloader(plan: Plan, target: Target, framework: str, index: int, op: ImageConfirm) -> list[Evidence]:
    return needs_bootloader(plan, target, framework, index, "image_confirm")


def _self_test(plan: Plan, target: Target, framework: str, index: int, op: ImageConfirm) -> list[Evidence]:

    position = next((i for i, other in enumerate(plan.operations) if other.name == op.self_test), None)
    if position is not None and position < index:
        return []
    earlier = [o.name for o in plan.operations[:index] if o.name and o.op != "image_confirm"]
    why = "is not an operation of the plan" if position is None else f"comes after the confirm (operations[{position}])"
    path: list[str | int] = ["operations", index, "self_test"]
    return [
        violation(
            SELFTEST,
            f"image_confirm: self-test {op.self_test!r} {why}; the image may be confirmed only after it passed",
            path,
            [op.self_test, "image_confirm"],
            relaxations=[relax(f"use {name} as the self-test", replace(path, name)) for name in earlier],
        )
    ]


def _zephyr(b: ZephyrBuilder, index: int, op: ImageConfirm) -> dict[str, Any]:
    test = next(i for i, other in enumerate(b.plan.operations) if other.name == op.self_test)
    test_id = b.ids[test]
    if any(s["id"] == test_id for s in b.app.once) or any(s.id == test_id for s in b.app.steps):
        gate = f"{test_id}_step"
    elif any(s["id"] == test_id for s in b.app.setups):
        gate = f"{test_id}_setup"
    else:
        raise b.unsupported(
            f"operations.{index}.self_test",
            f"self-test {op.self_test} has no setup or step the confirm could run again",
            [op.self_test],
            [],
        )
    b.app.includes.add("zephyr/dfu/mcuboot.h")
    zephyr_flash_writer(b, "update")
    b.app.need("update", "CONFIG_STREAM_FLASH", "CONFIG_IMG_MANAGER", "CONFIG_MCUBOOT_IMG_MANAGER")
    return {"id": b.ids[index], "gate": gate, "test": c_string_literal(op.self_test), "step": {"period_ms": None}}


def _espidf(b: EspIdfBuild, index: int, op: ImageConfirm) -> dict[str, Any]:
    b.requires.add("app_update")
    return {"test": c_string_literal(op.self_test)}


SPEC = OpSpec(
    model=ImageConfirm,
    family="update",
    realizations={
        "zephyr": Realization(template="update", view=_zephyr, available=has_slots("zephyr")),
        "espidf": Realization(template="update", view=_espidf, available=has_slots("espidf")),
    },
    checks=(_bootloader, _self_test),
    codes=(MISSING, SELFTEST),
)
