"""The ``image_confirm`` operation: confirm the running image only after a named self-test passes.

Obligations (this module): a bootloader block exists (E_BOOTLOADER_MISSING) and the self-test names an
operation placed before the confirm (E_SELFTEST), so it has run — and on Zephyr runs again as the
confirm's gate — before the image is made permanent; a failed self-test leaves the image unconfirmed
and the bootloader reverts it at the next reset. With a deadline, the confirm happens before every
watchdog of the plan can expire (E_CONFIRM_DEADLINE: the confirm runs before the loop that feeds it,
so a watchdog reset before the confirm would revert a good image).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.ops.storage.area import zephyr_flash_writer
from rac_fw.domains.firmware.ops.update.boot import MISSING, has_slots, needs_bootloader
from rac_fw.domains.firmware.ops.watchdog.watchdog import Watchdog
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.evidence import measure, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

SELFTEST = "E_SELFTEST"
DEADLINE = "E_CONFIRM_DEADLINE"
#: The share of a watchdog timeout the confirm deadline may use (the watchdog op's feed margin, 80 %).
DEADLINE_MARGIN = 0.8


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
    deadline_ms: int | None = Field(
        default=None,
        ge=10,
        le=3_600_000,
        description="Confirm-or-revert deadline, ms after boot: an image not confirmed by then (its self-test "
        "failed or ran late) is reset at once so the bootloader reverts it. Needed below every watchdog "
        "timeout of the plan.",
    )


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


def _deadline(plan: Plan, target: Target, framework: str, index: int, op: ImageConfirm) -> list[Evidence]:
    """E_CONFIRM_DEADLINE: the confirm (and the self-test it runs) happens before the main loop that feeds
    a ``watchdog`` without a ``feed_thread``, so it must finish within ``DEADLINE_MARGIN`` of the shortest
    such timeout: a watchdog reset before the confirm would make the bootloader revert a good image, boot
    after boot."""
    # A watchdog fed by its own thread keeps being fed while the confirm runs; the main loop's is not.
    dogs = [(i, o) for i, o in enumerate(plan.operations) if isinstance(o, Watchdog) and o.feed_thread is None]
    if not dogs:
        return []
    first, dog = min(dogs, key=lambda pair: pair[1].timeout_ms)
    budget = math.floor(dog.timeout_ms * DEADLINE_MARGIN)
    if op.deadline_ms is not None and op.deadline_ms <= budget:
        return []
    path: list[str | int] = ["operations", index, "deadline_ms"]
    late = f"may confirm as late as {op.deadline_ms} ms after boot"
    what = "has no confirm deadline" if op.deadline_ms is None else late
    magnitudes = [measure("watchdog_timeout", dog.timeout_ms, "ms"), measure("deadline_budget", budget, "ms")]
    if op.deadline_ms is not None:
        magnitudes.insert(0, measure("deadline", op.deadline_ms, "ms"))
    return [
        violation(
            DEADLINE,
            f"image_confirm {what}, but the {dog.op} at operations[{first}] resets after {dog.timeout_ms} ms and is "
            f"fed only after the confirm: confirm within {budget} ms ({DEADLINE_MARGIN:.0%} of the timeout)",
            path,
            [op.name or "image_confirm", dog.name or dog.op],
            magnitudes,
            [relax(f"confirm within {budget} ms of boot", replace(path, budget))],
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
    if op.deadline_ms is not None:
        b.app.need("update", "CONFIG_REBOOT")
        b.app.includes.add("zephyr/sys/reboot.h")
    return {"id": b.ids[index], "gate": gate, "test": c_string(op.self_test), "step": {"period_ms": None},
            "deadline_ms": op.deadline_ms}  # fmt: skip


def _espidf(b: EspIdfBuild, index: int, op: ImageConfirm) -> dict[str, Any]:
    b.requires.add("app_update")
    if op.deadline_ms is not None:
        b.requires.add("esp_timer")
    return {"test": c_string(op.self_test), "deadline_ms": op.deadline_ms}


SPEC = OpSpec(
    model=ImageConfirm,
    family="update",
    realizations={
        "zephyr": Realization(template="update", view=_zephyr, available=has_slots("zephyr")),
        "espidf": Realization(template="update", view=_espidf, available=has_slots("espidf")),
    },
    checks=(_bootloader, _self_test, _deadline),
    codes=(MISSING, SELFTEST, DEADLINE),
)
