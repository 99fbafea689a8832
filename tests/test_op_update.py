"""Firmware update and boot: the bootloader block, image_confirm and image_stream.

Seeded violations go through ``pipeline.run_plan`` and every relaxation offered is applied and judged
again (``test_op_storage.relaxations_hold``); the lowerings' contributed files (sysbuild, MCUboot,
ESP-IDF partition table) are compared with the facts they come from.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_op_storage import assert_seeded

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.storage import storage
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan

SELF_TEST = {"op": "kv_record", "name": "selftest", "key": "selftest", "value_bytes": 16}
RAW_TEST = {"op": "flash_store", "name": "selftest", "length_bytes": 256}


def ota(target: str, bootloader: dict[str, Any] | None, *ops: dict[str, Any], test: dict[str, Any] = SELF_TEST,
        **extra: Any) -> dict[str, Any]:  # fmt: skip
    plan: dict[str, Any] = {"target": target, **extra, "operations": [test, *ops]}
    if bootloader is not None:
        plan["bootloader"] = bootloader
    return plan


CONFIRM = {"op": "image_confirm", "name": "confirm", "self_test": "selftest"}
WATCHDOG = {"op": "watchdog", "name": "wdt", "timeout_ms": 2000, "feed_interval_ms": 500}


def stream(**fields: Any) -> dict[str, Any]:
    return {"op": "image_stream", "name": "update", "image_bytes": 65536, **fields}


SEEDED = [
    # nRF52840-DK slot1 is 0x75000 bytes; MCUboot's trailer takes its last 4 KB erase block
    ("image-larger-than-slot", ota("nrf52840", {"mode": "swap_move"}, stream(image_bytes=500_000)),
     "E_IMAGE_TOO_LARGE", {"slot1_partition", "nrf52840"}, {"image": "bytes", "usable": "bytes"}),
    ("esp-image-larger-than-ota-slot", ota("esp32s3", {"mode": "esp_ota"}, stream(image_bytes=2 << 20),
                                           framework="espidf"),
     "E_IMAGE_TOO_LARGE", {"ota_1", "esp32s3"}, {"slot": "bytes", "excess": "bytes"}),
    ("chunk-not-write-block", ota("stm32h743", {"mode": "swap_scratch"}, stream(chunk_bytes=100), test=RAW_TEST),
     "E_WRITE_ALIGNMENT", {"chunk_bytes", "stm32h743"}, {"chunk_bytes": "bytes", "write_block": "bytes"}),
    ("swap-without-secondary-slot", ota("stm32f407", {"mode": "swap_move"}, framework="zephyr",
                                        test={"op": "gpio_set", "led": "led0"}),
     "E_BOOTLOADER_MODE", {"swap_move", "stm32f407"}, {}),
    ("swap-scratch-without-scratch", ota("nrf52840", {"mode": "swap_scratch"}, CONFIRM),
     "E_BOOTLOADER_MODE", {"swap_scratch", "nrf52840"}, {}),
    ("swap-move-equal-slots", ota("native_sim", {"mode": "swap_move"}, CONFIRM),
     "E_SLOT_MISMATCH", {"slot0_partition", "slot1_partition"}, {"slot0": "bytes", "slot1": "bytes"}),
    ("direct-xip-downgrade", ota("native_sim", {"mode": "direct_xip", "downgrade_prevention": True}, CONFIRM),
     "E_BOOTLOADER_CONFLICT", {"downgrade_prevention", "direct_xip"}, {}),
    ("encrypt-unsigned", ota("nrf52840", {"mode": "swap_move", "signature": "none", "encryption": True}, CONFIRM),
     "E_BOOTLOADER_CONFLICT", {"encryption", "signature"}, {}),
    ("too-few-image-sectors", ota("nrf52840", {"mode": "swap_move", "max_image_sectors": 64}, CONFIRM),
     "E_BOOT_SECTORS", {"max_image_sectors", "nrf52840"}, {"max_image_sectors": "sectors", "slot": "sectors"}),
    ("confirm-without-bootloader", ota("nrf52840", None, CONFIRM), "E_BOOTLOADER_MISSING",
     {"image_confirm", "nrf52840"}, {}),
    # a 2 s watchdog fed by the main loop: the confirm must come within 80 % of it (1600 ms)
    ("confirm-later-than-the-watchdog", ota("nrf52840", {"mode": "swap_move"}, {**CONFIRM, "deadline_ms": 5000},
                                            WATCHDOG),
     "E_CONFIRM_DEADLINE", {"confirm", "wdt"}, {"deadline": "ms", "watchdog_timeout": "ms", "deadline_budget": "ms"}),
    ("confirm-without-deadline-under-a-watchdog", ota("nrf52840", {"mode": "swap_move"}, CONFIRM, WATCHDOG),
     "E_CONFIRM_DEADLINE", {"confirm", "wdt"}, {"watchdog_timeout": "ms", "deadline_budget": "ms"}),
    ("self-test-after-confirm", {"target": "nrf52840", "bootloader": {"mode": "swap_move"},
                                 "operations": [{"op": "gpio_set", "name": "led", "led": "led0"}, CONFIRM, SELF_TEST]},
     "E_SELFTEST", {"selftest", "image_confirm"}, {}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects", "units"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_update_violation(
    case: str, plan: dict[str, Any], code: str, objects: set[str], units: dict[str, str]
) -> None:
    assert_seeded(plan, code, objects, units)


def test_image_too_large_in_numbers() -> None:
    result = run_plan(ota("nrf52840", {"mode": "swap_move"}, stream(image_bytes=500_000)))
    evidence = next(e for e in result.evidence if e.code == "E_IMAGE_TOO_LARGE")
    values = {m.name: m.value for m in evidence.magnitudes}
    assert values == {"image": 500_000, "slot": 0x75000, "usable": 0x75000 - 4096, "excess": 500_000 - 0x74000}
    assert evidence.relaxations[0].patch[0]["value"] == 0x74000


def test_the_missing_secondary_slot_is_named() -> None:
    plan = ota("stm32f407", {"mode": "swap_move"}, framework="zephyr", test={"op": "gpio_set", "led": "led0"})
    evidence = next(e for e in run_plan(plan).evidence if e.code == "E_BOOTLOADER_MODE")
    assert "no secondary slot" in evidence.message and "slot1_partition" in evidence.message


def test_sysbuild_and_mcuboot_files_follow_the_block_and_the_facts() -> None:
    plan = parse_plan(ota("nrf52840", {"mode": "swap_move", "downgrade_prevention": True}, CONFIRM, stream()))
    files = lower(plan, load_target("nrf52840"), "zephyr").files
    sysbuild = files["sysbuild.conf"].splitlines()
    assert {"SB_CONFIG_BOOTLOADER_MCUBOOT=y", "SB_CONFIG_MCUBOOT_MODE_SWAP_USING_MOVE=y",
            "SB_CONFIG_BOOT_SIGNATURE_TYPE_ECDSA_P256=y"} <= set(sysbuild)  # fmt: skip
    mcuboot = files["sysbuild/mcuboot.conf"].splitlines()
    assert "CONFIG_BOOT_MAX_IMG_SECTORS=119" in mcuboot  # slot0 0x77000 / 4 KB pages
    assert "CONFIG_MCUBOOT_DOWNGRADE_PREVENTION=y" in mcuboot
    prj = set(files["prj.conf"].splitlines())
    assert {"CONFIG_BOOTLOADER_MCUBOOT=y", "CONFIG_MCUBOOT_IMG_MANAGER=y", "CONFIG_MCUBOOT_BOOTLOADER_NO_DOWNGRADE=y",
            "CONFIG_IMG_BLOCK_BUF_SIZE=512"} <= prj  # fmt: skip
    main = files["src/main.c"]
    assert "err = app_selftest_step();" in main and "boot_write_img_confirmed()" in main
    assert main.index("boot_is_img_confirmed()") < main.index("boot_write_img_confirmed()")
    assert "boot_erase_img_bank(FIXED_PARTITION_ID(slot1_partition))" in main
    assert "boot_request_upgrade(BOOT_UPGRADE_TEST)" in main


def test_espidf_partition_table_is_the_facts_ota_table() -> None:
    plan = parse_plan(ota("esp32s3", {"mode": "esp_ota"}, CONFIRM, stream(), framework="espidf"))
    files = lower(plan, load_target("esp32s3"), "espidf").files
    facts = storage(load_target("esp32s3"))
    assert facts is not None
    rows = [line.split(", ") for line in files["partitions.csv"].splitlines() if not line.startswith("#")]
    assert [(r[0], int(r[3], 16), int(r[4].rstrip(","), 16)) for r in rows] == [
        (p.name, p.offset, p.size) for p in facts.idf_tables["ota"]
    ]
    sdkconfig = files["sdkconfig.defaults"]
    assert "CONFIG_PARTITION_TABLE_CUSTOM=y" in sdkconfig and "CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE=y" in sdkconfig
    main = files["main/main.c"]
    assert main.index("esp_ota_get_state_partition") < main.index("esp_ota_mark_app_valid_cancel_rollback")
    assert main.index("selftest_save()") < main.index("esp_ota_mark_app_valid_cancel_rollback")


def test_the_ota_table_moves_nvs_and_kv_record_follows_it() -> None:
    """With a bootloader block ESP-IDF builds the two-OTA table, whose nvs partition is 16 KB (not 24 KB):
    the record limits are computed from that table."""
    plan = ota("esp32s3", {"mode": "esp_ota"}, CONFIRM, framework="espidf",
               test={**SELF_TEST, "value_bytes": 13_000})  # fmt: skip
    evidence = next(e for e in run_plan(plan).evidence if e.code == "E_RECORD_TOO_LARGE")
    assert {m.name: m.value for m in evidence.magnitudes}["limit"] == int(0.976 * 0x4000) - 4000
    default_table = {"target": "esp32s3", "framework": "espidf", "operations": [{**SELF_TEST, "value_bytes": 13_000}]}
    assert run_plan(default_table).status is Status.PASS


def test_confirm_deadline_in_numbers_and_in_the_generated_c() -> None:
    """5000 ms against a 2000 ms watchdog the loop feeds only after the confirm: budget 1600 ms. Within
    it, Zephyr resets at once (MCUboot reverts) when the self-test fails or passes late; ESP-IDF marks
    the image invalid and reboots when the deadline has passed."""
    result = run_plan(parse_plan(ota("nrf52840", {"mode": "swap_move"}, {**CONFIRM, "deadline_ms": 5000}, WATCHDOG)))
    evidence = next(e for e in result.evidence if e.code == "E_CONFIRM_DEADLINE")
    measured = {m.name: m.value for m in evidence.magnitudes}
    assert measured == {"deadline": 5000, "watchdog_timeout": 2000, "deadline_budget": 1600}
    assert "1600 ms" in evidence.message and "operations[2]" in evidence.message
    fixed = run_plan(parse_plan(ota("nrf52840", {"mode": "swap_move"}, {**CONFIRM, "deadline_ms": 1600}, WATCHDOG)))
    assert fixed.status is Status.PASS, [(e.code, e.message) for e in fixed.evidence]
    assert fixed.lowered is not None
    main = fixed.lowered.files["src/main.c"]
    assert main.index("k_uptime_get() > 1600") < main.index("sys_reboot(SYS_REBOOT_COLD);")
    assert main.index("sys_reboot(SYS_REBOOT_COLD);") < main.index("return boot_write_img_confirmed();")
    assert "CONFIG_REBOOT=y" in fixed.lowered.files["prj.conf"]
    esp = run_plan(
        parse_plan(ota("esp32s3", {"mode": "esp_ota"}, {**CONFIRM, "deadline_ms": 3000}, framework="espidf"))
    )
    assert esp.status is Status.PASS, [(e.code, e.message) for e in esp.evidence]
    assert esp.lowered is not None
    app = esp.lowered.files["main/main.c"]
    deadline = app.index("esp_timer_get_time() > 3000000LL")
    assert deadline < app.index("esp_ota_mark_app_invalid_rollback_and_reboot()")
    assert deadline < app.index("esp_ota_mark_app_valid_cancel_rollback()")
