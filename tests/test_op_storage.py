"""Storage: the flash facts, kv_record and flash_store obligations, their lowerings, the verifier's rules.

Seeded violations go through ``pipeline.run_plan`` (the CLI's validation); each names the objects in
conflict and its magnitudes with units, and *every* relaxation offered is applied and judged again by
the obligations and by ``run_plan`` (the promise of ``tests/test_relaxations.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import require_tool
from elftools.elf.elffile import ELFFile

from rac_fw.contract import Evidence, Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.facts.storage import flash, mcuboot_modes, storage
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources

BAD = Path(__file__).resolve().parent / "bad_sources"


# --- facts ------------------------------------------------------------------------------------------------
def test_every_pack_has_typed_flash_covering_its_flash_region() -> None:
    for target_id in target_ids():
        target = load_target(target_id)
        facts = storage(target)
        assert facts is not None, target_id
        region = target.region(facts.flash.region)
        assert region is not None and region.kind == "flash" and facts.flash.size == region.size, target_id
        assert facts.flash.endurance_cycles >= 10_000 and facts.flash.write_block_bytes >= 1


def test_partition_maps_lie_inside_the_flash_without_overlap() -> None:
    for target_id in target_ids():
        facts = storage(load_target(target_id))
        assert facts is not None
        for table in (facts.partitions, *facts.idf_tables.values()):
            spans = sorted((p.offset, p.end, p.name) for p in table)
            assert all(end <= facts.flash.size for _, end, _ in spans), target_id
            assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), (target_id, spans)
            # Zephyr partitions start on an erase block (the flash map erases whole blocks).
            assert all(facts.flash.block_at(start) == (start, facts.flash.block_at(start)[1]) for start, _, _ in spans)


def test_stm32f4_sectors_and_the_block_holding_an_offset() -> None:
    f407 = flash(load_target("stm32f407"))
    assert f407 is not None and f407.size == 1 << 20
    assert f407.block_at(0x4000) == (0x4000, 16384) and f407.block_at(0x10000) == (0x10000, 65536)
    assert f407.block_at(0xE0000) == (0xE0000, 131072) and f407.block_at(1 << 20) is None
    assert f407.blocks_in(0x3FF0, 0x20) == [(0x0000, 16384), (0x4000, 16384)]
    h743 = flash(load_target("stm32h743"))
    assert h743 is not None and h743.write_unit("zephyr") == 32
    assert h743.voltage_scales[-1].wait_states_hclk_max_hz[-1] == 240_000_000  # VOS0, RM0433 Table 17
    esp = flash(load_target("esp32s3"))
    assert esp is not None and esp.write_unit("espidf") == 1 and esp.write_unit("zephyr") == 4


def test_which_mcuboot_modes_each_board_allows() -> None:
    def allowed(target_id: str) -> set[str]:
        facts = storage(load_target(target_id))
        assert facts is not None
        return {m for m, why in mcuboot_modes(facts).items() if why is None}

    assert allowed("nrf52840") == {"swap_move", "overwrite_only", "direct_xip"}  # no scratch partition
    assert allowed("stm32h743") == {"swap_scratch", "swap_move", "overwrite_only", "direct_xip"}
    assert allowed("stm32f407") == set()
    facts = storage(load_target("stm32f407"))
    assert facts is not None and "no secondary slot" in str(mcuboot_modes(facts)["swap_move"])


# --- seeded violations ------------------------------------------------------------------------------------
def _key(e: Evidence) -> tuple[str, frozenset[str]]:
    return e.code, frozenset(e.objects)


def relaxations_hold(plan: dict[str, Any]) -> list[str]:
    """Apply every relaxation of every violation of ``plan``; return the promises that break."""
    before = run_plan(plan)
    assert before.status is Status.INVALID and before.evidence
    broken: list[str] = []
    for i, evidence in enumerate(before.evidence):
        if not evidence.relaxations:
            broken.append(f"{evidence.code} offers no relaxation")
        others = Counter(_key(e) for j, e in enumerate(before.evidence) if j != i)
        for relaxation in evidence.relaxations:
            patched = apply_patch(plan, relaxation.patch)
            left = Counter(_key(e) for e in check(parse_plan(patched), load_target(patched["target"])))
            if any(left[k] > others[k] for k in left):
                broken.append(f"{evidence.code} -> {relaxation.description}: obligations")
                continue
            after = run_plan(patched)
            left = Counter(_key(e) for e in after.evidence)
            if any(left[k] > others[k] for k in left) or (not after.evidence and after.status is not Status.PASS):
                broken.append(f"{evidence.code} -> {relaxation.description}: run_plan {after.status.value}")
    return broken


def kv(**fields: Any) -> dict[str, Any]:
    return {"op": "kv_record", "name": "rec", "key": "rec", "value_bytes": 32, **fields}


def setting(**fields: Any) -> dict[str, Any]:
    return {"op": "settings_value", "name": "duty", "key": "duty", "value_bytes": 4, **fields}


SEEDED = [
    # a 10 ms save period on the nRF52840-DK: 8.64 million saves a day against 8 sectors × 10 000 cycles
    ("endurance-10ms", {"target": "nrf52840", "operations": [kv(save_period_ms=10)]}, "E_FLASH_ENDURANCE",
     {"rec", "nrf52840"}, {"save_period": "ms", "saves_per_day": "saves/day", "endurance": "cycles"}),
    ("endurance-esp-10ms", {"target": "esp32s3", "framework": "espidf", "operations": [kv(save_period_ms=10)]},
     "E_FLASH_ENDURANCE", {"rec", "esp32s3"}, {"min_save_period": "ms", "saves_capacity": "saves"}),
    ("record-too-large", {"target": "nrf52840", "operations": [kv(value_bytes=4090)]}, "E_RECORD_TOO_LARGE",
     {"rec", "storage_partition"}, {"record": "bytes", "limit": "bytes"}),
    ("sector-not-erase-multiple", {"target": "nrf52840", "operations": [kv(sector_bytes=6144)]}, "E_SECTOR_SIZE",
     {"rec", "storage_partition"}, {"sector": "bytes", "erase_block": "bytes"}),
    ("sector-too-large-h743", {"target": "stm32h743", "operations": [kv()]}, "E_SECTOR_SIZE",
     {"rec", "stm32h743"}, {"sector": "bytes", "max_sector": "bytes"}),
    ("two-sectors-needed", {"target": "native_sim", "operations": [kv(sector_bytes=16384)]}, "E_PARTITION_TOO_SMALL",
     {"rec", "storage_partition"}, {"partition": "bytes", "sectors": "count"}),
    ("no-storage-partition", {"target": "stm32f407", "framework": "zephyr",
                              "operations": [{"op": "gpio_set", "led": "led0"}, kv()]},
     "E_PARTITION_MISSING", {"storage", "stm32f407"}, {}),
    ("esp-key-too-long", {"target": "esp32s3", "framework": "espidf",
                          "operations": [kv(key="a_very_long_record_key")]}, "E_KEY_TOO_LONG",
     {"a_very_long_record_key"}, {"key_length": "characters"}),
    # a misaligned record: 100 bytes at offset 8 on the STM32H7's 32-byte flash word
    ("misaligned-h743", {"target": "stm32h743", "operations": [
        {"op": "flash_store", "offset_bytes": 8, "length_bytes": 100}]}, "E_WRITE_ALIGNMENT",
     {"offset_bytes", "stm32h743"}, {"offset_bytes": "bytes", "write_block": "bytes"}),
    ("flash-store-too-long", {"target": "nrf52840", "operations": [
        {"op": "flash_store", "offset_bytes": 4096, "length_bytes": 32768}]}, "E_PARTITION_TOO_SMALL",
     {"storage_partition", "nrf52840"}, {"end": "bytes", "area": "bytes"}),
    ("settings-value-too-large", {"target": "nrf52840", "operations": [setting(value_bytes=300)]},
     "E_RECORD_TOO_LARGE", {"duty", "SETTINGS_MAX_VAL_LEN"}, {"value": "bytes", "limit": "bytes"}),
    ("settings-endurance-10ms", {"target": "native_sim", "operations": [setting(save_period_ms=10)]},
     "E_FLASH_ENDURANCE", {"duty", "native_sim"}, {"saves_per_erase": "saves", "sectors": "count"}),
    ("settings-beside-a-record", {"target": "nrf52840", "operations": [setting(), kv()]}, "E_PARTITION_SHARED",
     {"storage_partition", "settings_value", "kv_record"}, {}),
    ("erase-destroys-records", {"target": "nrf52840", "operations": [
        kv(), {"op": "flash_store", "length_bytes": 64}]}, "E_PARTITION_SHARED",
     {"storage_partition", "kv_record", "flash_store"}, {}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects", "units"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_storage_violation(
    case: str, plan: dict[str, Any], code: str, objects: set[str], units: dict[str, str]
) -> None:
    assert_seeded(plan, code, objects, units)


def assert_seeded(plan: dict[str, Any], code: str, objects: set[str], units: dict[str, str]) -> None:
    """The plan is invalid with ``code`` naming ``objects``, magnitudes in ``units``, every relaxation holding."""
    result = run_plan(plan)
    assert result.status is Status.INVALID
    found = [e for e in result.evidence if e.code == code]
    assert found, [(e.code, e.message) for e in result.evidence]
    evidence = found[0]
    assert objects <= set(evidence.objects) and evidence.location
    magnitudes = {m.name: m.unit for m in evidence.magnitudes}
    assert all(magnitudes.get(name) == unit for name, unit in units.items()), magnitudes
    assert relaxations_hold(plan) == []


def test_the_endurance_budget_in_numbers() -> None:
    """10 ms saves of a 32-byte record: 8.64e6 saves/day × 3652.5 days = 3.16e10 saves, while 8 sectors ×
    10 000 cycles × 102 saves (of 40 bytes) per 4096-byte erase hold 8.16e6; the slowest period that fits
    is ceil(86 400 000 ms × 3652.5 / 8.16e6) = 38 674 ms, which the first relaxation proposes."""
    result = run_plan({"target": "nrf52840", "operations": [kv(save_period_ms=10)]})
    evidence = next(e for e in result.evidence if e.code == "E_FLASH_ENDURANCE")
    values = {m.name: m.value for m in evidence.magnitudes}
    assert values["saves_per_day"] == 8_640_000 and values["sectors"] == 8 and values["endurance"] == 10_000
    assert values["saves_per_erase"] == 4096 // 40 and values["saves_capacity"] == 8 * 10_000 * 102
    assert values["saves_needed"] == pytest.approx(8_640_000 * 3652.5)
    assert values["min_save_period"] == 38_674
    assert evidence.relaxations[0].patch[0]["value"] == 38_674
    ok = run_plan({"target": "nrf52840", "operations": [kv(save_period_ms=38_674)]})
    assert ok.status is Status.PASS


# --- lowerings --------------------------------------------------------------------------------------------
def test_zephyr_nvs_geometry_and_kconfig_come_from_the_facts() -> None:
    plan = parse_plan({"target": "nrf52840", "operations": [kv(delete=True)]})
    files = lower(plan, load_target("nrf52840"), "zephyr").files
    main = files["src/main.c"]
    assert "app_storage_fs.sector_size = 4096U;" in main and "app_storage_fs.sector_count = 8U;" in main
    assert "nvs_delete(&app_storage_fs, 1U)" in main and "n != -ENOENT" in main
    assert {"CONFIG_NVS=y", "CONFIG_FLASH_MAP=y", "CONFIG_FLASH=y"} <= set(files["prj.conf"].splitlines())


def test_two_records_share_one_mounted_file_system() -> None:
    plan = parse_plan({"target": "nrf52840", "operations": [kv(), kv(name="other", key="other", value_bytes=8)]})
    main = lower(plan, load_target("nrf52840"), "zephyr").files["src/main.c"]
    assert main.count("nvs_mount(") == 1 and main.count("static struct nvs_fs ") == 1
    assert "nvs_write(&app_storage_fs, 1U" in main and "nvs_write(&app_storage_fs, 2U" in main
    assert run_plan({"target": "nrf52840", "operations": [kv(), kv(name="other", key="other")]}).status is Status.PASS


def test_zephyr_settings_backend_geometry_and_entries() -> None:
    plan = parse_plan({"target": "nrf52840", "operations": [setting(save_period_ms=600_000)]})
    files = lower(plan, load_target("nrf52840"), "zephyr").files
    prj = set(files["prj.conf"].splitlines())
    assert {"CONFIG_SETTINGS=y", "CONFIG_SETTINGS_NVS=y", "CONFIG_SETTINGS_NVS_SECTOR_COUNT=8",
            "CONFIG_SETTINGS_NVS_SECTOR_SIZE_MULT=1", "CONFIG_MPU_ALLOW_FLASH_WRITE=y"} <= prj  # fmt: skip
    main = files["src/main.c"]
    assert 'settings_save_one("rac/duty"' in main and 'settings_load_subtree_direct("rac", app_duty_load' in main
    # a save costs the value entry and the backend's name entry ("rac/duty"), each with its 8-byte ATE
    result = run_plan({"target": "nrf52840", "operations": [setting(save_period_ms=10)]})
    evidence = next(e for e in result.evidence if e.code == "E_FLASH_ENDURANCE")
    assert {m.name: m.value for m in evidence.magnitudes}["saves_per_erase"] == 4096 // (4 + 8 + 8 + 8)


def test_zephyr_flash_store_erases_whole_blocks() -> None:
    plan = parse_plan(
        {"target": "stm32h743", "operations": [{"op": "flash_store", "offset_bytes": 64, "length_bytes": 256}]}
    )
    main = lower(plan, load_target("stm32h743"), "zephyr").files["src/main.c"]
    assert "flash_area_erase(area, 0, 131072U)" in main and "flash_area_write(area, 64," in main


def test_espidf_nvs_uses_the_default_table_and_the_nvs_component() -> None:
    plan = parse_plan({"target": "esp32s3", "framework": "espidf", "operations": [kv(save_period_ms=60_000)]})
    files = lower(plan, load_target("esp32s3"), "espidf").files
    assert "nvs_flash_init()" in files["main/main.c"] and 'nvs_set_blob(handle, "rec"' in files["main/main.c"]
    assert "nvs_flash" in files["main/CMakeLists.txt"] and "partitions.csv" not in files


# --- bare metal: STM32F407 flash program/erase ------------------------------------------------------------
F407_FLASH = {"target": "stm32f407", "framework": "baremetal",
              "operations": [{"op": "flash_store", "name": "blob", "length_bytes": 256}]}  # fmt: skip


def _rac_fw(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    plan = tmp_path / "flash_store.json"
    plan.write_text(json.dumps(F407_FLASH))
    command = [sys.executable, "-m", "rac_fw.cli", "plan", str(plan), *args, "--json"]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def _build(tmp_path: Path) -> Path:
    require_tool("arm-none-eabi-gcc")
    out = tmp_path / "app"
    run = _rac_fw(tmp_path, "-o", str(out), "--build", "gcc")
    assert run.returncode == 0, run.stdout + run.stderr
    return out / "build" / "firmware.elf"


def test_baremetal_flash_store_builds_and_stays_below_the_sector_it_erases(tmp_path: Path) -> None:
    elf_path = _build(tmp_path)
    with elf_path.open("rb") as handle:
        elf = ELFFile(handle)
        ends = [seg["p_paddr"] + seg["p_filesz"] for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD"]
        text = elf.get_section_by_name(".text")
        assert text is not None
    assert max(ends) <= 0x080E0000, "the image would overlap sector 11, which flash_store erases"
    source = (tmp_path / "app" / "src" / "main.c").read_text()
    assert "FLASH->KEYR = 0x45670123UL;" in source and "FLASH->KEYR = 0xCDEF89ABUL;" in source
    assert "(11UL << FLASH_CR_SNB_Pos)" in source and "0x080E0000UL" in source


def test_qemu_netduinoplus2_does_not_model_the_flash_interface(tmp_path: Path) -> None:
    """QEMU 7.2's STM32F405 SoC maps flash as ROM and leaves the flash interface (0x40023C00) unmodelled:
    the sector erase never happens. The generated read-back notices instead of reporting success."""
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    run = _rac_fw(tmp_path, "-o", str(tmp_path / "run"), "--run", "qemu")
    report = json.loads(run.stdout)
    text = json.dumps(report)
    assert "rac: boot stm32f407" in text and "rac: blob FAIL not erased at byte 0" in text, text[:2000]


def _lfs(target: str, **fields: Any) -> dict[str, Any]:
    op = {"op": "fs_file", "name": "bootlog", "file": "boot", "file_bytes": 1000, **fields}
    return {"target": target, "framework": "zephyr", "operations": [op, {"op": "gpio_set", "led": "led0"}]}


def _lfs_with_buffer(size: int) -> dict[str, Any]:
    plan = _lfs("nrf52840", cache_bytes=4096, lookahead_bytes=1024)
    plan["resources"] = {"buffers": [{"name": "frame", "size_bytes": size, "role": "scratch"}]}
    return plan


@pytest.mark.parametrize(
    ("case", "plan", "code", "objects", "units"),
    [
        ("one-sector-partition", _lfs("stm32h743"), "E_PARTITION_TOO_SMALL",
         {"storage_partition", "boot", "stm32h743"}, {"file": "bytes", "needed": "blocks", "available": "blocks"}),
        ("file-larger-than-partition", _lfs("nrf52840", file_bytes=40_000), "E_PARTITION_TOO_SMALL",
         {"storage_partition", "boot"}, {"needed": "blocks", "available": "blocks"}),
        ("cache-not-dividing-the-block", _lfs("nrf52840", cache_bytes=48), "E_FS_CACHE",
         {"boot", "nrf52840"}, {"cache": "bytes", "prog": "bytes", "block": "bytes"}),
        # 5 x 4096-byte cache units + 1024 lookahead beside a 240000-byte buffer exceed the DK's 256 KB RAM
        ("caches-over-the-ram-budget", _lfs_with_buffer(240_000), "E_RAM_BUDGET", set(), {}),
    ],
)  # fmt: skip
def test_seeded_littlefs_violation(
    case: str, plan: dict[str, Any], code: str, objects: set[str], units: dict[str, str]
) -> None:
    assert_seeded(plan, code, objects, units)


def test_littlefs_mounts_formats_on_failure_and_reads_back() -> None:
    """8 blocks of 4 KB on the nRF52840-DK: the 1000-byte file needs 1 + 3 blocks. The mount carries
    FS_MOUNT_FLAG_NO_FORMAT only when the plan forbids formatting; the cache sizes reach Kconfig."""
    result = run_plan(parse_plan(_lfs("nrf52840")))
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    main, prj = result.lowered.files["src/main.c"], result.lowered.files["prj.conf"]
    assert (
        "FS_MOUNT_FLAG_NO_FORMAT" not in main and ".storage_dev = (void *)FIXED_PARTITION_ID(storage_partition)" in main
    )
    write, read = main.index("FS_O_CREATE | FS_O_WRITE"), main.index("FS_O_READ)")
    assert main.index("fs_mount(&") < write < main.index("fs_write(&file") < read < main.index("fs_read(&file")
    assert "CONFIG_FILE_SYSTEM_LITTLEFS=y" in prj and "CONFIG_FS_LITTLEFS_CACHE_SIZE=64" in prj
    strict = run_plan(parse_plan(_lfs("nrf52840", format_on_failure=False)))
    assert strict.lowered is not None and ".flags = FS_MOUNT_FLAG_NO_FORMAT," in strict.lowered.files["src/main.c"]


def _ring(target: str, **fields: Any) -> dict[str, Any]:
    op = {"op": "ring_log", "name": "events", "record_bytes": 24, **fields}
    return {"target": target, "framework": "zephyr", "operations": [op, {"op": "gpio_set", "led": "led0"}]}


@pytest.mark.parametrize(
    ("case", "plan", "code", "objects", "units"),
    [
        ("ring-on-one-sector", _ring("stm32h743"), "E_SECTOR_SIZE", {"storage_partition", "stm32h743"},
         {"sectors": "count"}),
        ("record-larger-than-a-sector", _ring("nrf52840", record_bytes=5000), "E_RECORD_TOO_LARGE",
         {"record_bytes", "nrf52840"}, {"entry": "bytes", "sector_room": "bytes"}),
        ("ring-appended-every-10-ms", _ring("nrf52840", append_period_ms=10), "E_FLASH_ENDURANCE",
         {"ring_log", "nrf52840"}, {"append_period": "ms", "records_needed": "records", "capacity": "records"}),
    ],
)  # fmt: skip
def test_seeded_ring_log_violation(
    case: str, plan: dict[str, Any], code: str, objects: set[str], units: dict[str, str]
) -> None:
    assert_seeded(plan, code, objects, units)


def test_ring_log_endurance_in_numbers_and_the_generated_ring() -> None:
    """24-byte records on the nRF52840 (4-byte write unit): 1 + 24 -> 28 bytes + a 4-byte CRC = 32 bytes, 127
    per 4 KB sector after its 8-byte header; every 10 ms for 10 years is 3.16e10 records against 8 x 127 x
    10000 = 1.02e7."""
    result = run_plan(parse_plan(_ring("nrf52840", append_period_ms=10)))
    evidence = next(e for e in result.evidence if e.code == "E_FLASH_ENDURANCE")
    measured = {m.name: m.value for m in evidence.magnitudes}
    assert measured["records_per_sector"] == 127 and measured["sectors"] == 8
    assert measured["capacity"] == 8 * 127 * 10_000 and measured["records_needed"] == pytest.approx(3.156e10, rel=1e-3)
    fine = run_plan(parse_plan(_ring("nrf52840", append_period_ms=60_000)))
    assert fine.status is Status.PASS, [(e.code, e.message) for e in fine.evidence]
    assert fine.lowered is not None
    main = fine.lowered.files["src/main.c"]
    init, walk = main.index("fcb_init(FIXED_PARTITION_ID(storage_partition)"), main.index("fcb_walk(&app_events_fcb")
    assert main.index("flash_area_get_sectors(") < init < walk < main.index("record(s) survived the reset")
    step = main[main.index("static int app_events_step(void)") :]
    assert step.index("fcb_append(") < step.index("fcb_rotate(") < step.index("fcb_flash_write(")
    assert step.index("fcb_flash_write(") < step.index("fcb_append_finish(")
    assert "CONFIG_FCB=y" in fine.lowered.files["prj.conf"]


def _idf_setting(**fields: Any) -> dict[str, Any]:
    setting = {"op": "settings_value", "name": "cal", "key": "calibration", "value_bytes": 32, **fields}
    return {"target": "esp32s3", "framework": "espidf", "operations": [setting]}


def test_espidf_settings_restore_then_save_commit_and_read_back() -> None:
    """The value of the previous boot is restored first (none on the first boot), then saved with a
    commit and read back, in a namespace of its own beside kv_record's (one nvs_flash file system)."""
    plan = _idf_setting(save_period_ms=3_600_000)
    plan["operations"].append({"op": "kv_record", "name": "log", "key": "log", "value_bytes": 16})
    result = run_plan(parse_plan(plan))
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    app = result.lowered.files["main/main.c"]
    restore = app.index("cal_restore(&cal_restored)")
    assert app.index("nvs_flash_init()") < restore < app.index("ESP_ERROR_CHECK(cal_save());", restore)
    assert 'nvs_open("rac_settings", NVS_READWRITE, &handle)' in app and "ESP_ERR_NVS_NOT_FOUND" in app
    body = app[app.index("static esp_err_t cal_save(void)") :]
    assert body.index("nvs_set_blob") < body.index("nvs_commit(handle)") < body.index("nvs_get_blob")
    assert "vTaskDelay(pdMS_TO_TICKS(3600000))" in app


def test_espidf_settings_key_and_endurance_limits() -> None:
    assert_seeded(
        _idf_setting(key="calibration_table_v2"),
        "E_KEY_TOO_LONG",
        {"calibration_table_v2"},
        {"key_length": "characters", "max": "characters"},
    )
    result = run_plan(parse_plan(_idf_setting(save_period_ms=10)))
    assert "E_FLASH_ENDURANCE" in {e.code for e in result.evidence}


def _flash_plan(target: str, framework: str) -> dict[str, Any]:
    return {"target": target, "framework": framework,
            "operations": [{"op": "flash_store", "name": "blob", "length_bytes": 256}]}  # fmt: skip


@pytest.mark.parametrize(("target", "bank", "sector", "address", "program"), [
    ("stm32f407", 1, 11, "0x080E0000UL", "HAL_FLASH_Program(FLASH_TYPEPROGRAM_BYTE, 0x080E0000UL + i, (uint64_t)"),
    ("stm32h743", 2, 7, "0x081E0000UL", "HAL_FLASH_Program(FLASH_TYPEPROGRAM_FLASHWORD, 0x081E0000UL + i, (uint32_t)"),
])  # fmt: skip
def test_hal_flash_store_erases_the_last_sector_by_bank_and_programs_in_units(
    target: str, bank: int, sector: int, address: str, program: str
) -> None:
    """F4: one bank of 12 mixed sectors, byte programming; H7: two banks of 8 x 128 KB, 32-byte flash
    words from a buffer address (and a D-cache invalidate before the read-back): all from the facts."""
    result = run_plan(parse_plan(_flash_plan(target, "hal")))
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    main = result.lowered.files["Core/Src/main.c"]
    assert f"erase.Banks = FLASH_BANK_{bank};" in main and f"erase.Sector = FLASH_SECTOR_{sector};" in main
    assert main.index("HAL_FLASH_Unlock()") < main.index("HAL_FLASHEx_Erase(&erase") < main.index(program)
    assert main.index(program) < main.index("HAL_FLASH_Lock()") and address in main
    assert ("SCB_InvalidateDCache_by_Addr" in main) == (target == "stm32h743")


def test_hal_flash_store_refuses_a_misaligned_h7_record() -> None:
    plan = _flash_plan("stm32h743", "hal")
    plan["operations"][0]["length_bytes"] = 100
    assert_seeded(
        plan, "E_WRITE_ALIGNMENT", {"length_bytes", "stm32h743"}, {"length_bytes": "bytes", "write_block": "bytes"}
    )


def test_nrf52840_baremetal_flash_store_uses_the_nvmc_and_stays_below_its_page(tmp_path: Path) -> None:
    require_tool("arm-none-eabi-gcc")
    plan = tmp_path / "nvmc.json"
    plan.write_text(json.dumps(_flash_plan("nrf52840", "baremetal")))
    out = tmp_path / "app"
    command = [sys.executable, "-m", "rac_fw.cli", "plan", str(plan), "-o", str(out), "--build", "gcc", "--json"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    with (out / "build" / "firmware.elf").open("rb") as handle:
        elf = ELFFile(handle)
        ends = [seg["p_paddr"] + seg["p_filesz"] for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD"]
        symbols = elf.get_section_by_name(".symtab")
        assert symbols is not None and symbols.get_symbol_by_name("main")
    assert max(ends) <= 0x000FF000, "the image would overlap the page flash_store erases"
    source = (out / "src" / "main.c").read_text()
    erase, write, read = (source.index(f"NVMC->CONFIG = {v}UL;") for v in (2, 1, 0))
    assert erase < source.index("NVMC->ERASEPAGE = 0x000FF000UL;") < write < read
    assert "NVMC->READY & NVMC_READY_READY_Msk" in source


# --- the verifier's storage rules, one bad source each ----------------------------------------------------
ZEPHYR_BAD = [
    ("storage_nvs_before_mount", "E_CALL_ORDER"),
    ("storage_write_before_erase", "E_CALL_ORDER"),
    ("storage_stream_without_erase", "E_CALL_MISSING"),
    ("storage_confirm_unchecked", "E_CALL_MISSING"),
    ("storage_settings_before_init", "E_CALL_ORDER"),
    ("storage_file_before_mount", "E_CALL_ORDER"),
    ("storage_ring_append_before_init", "E_CALL_ORDER"),
]
ESPIDF_BAD = [
    ("storage_nvs_open_before_init", "E_CALL_ORDER"),
    ("storage_ota_write_without_begin", "E_CALL_MISSING"),
    ("storage_confirm_without_state", "E_CALL_MISSING"),
]


HAL_BAD = [
    ("storage_program_before_erase", "E_CALL_ORDER"),
    ("storage_erase_while_locked", "E_CALL_ORDER"),
]


def _expected_line(path: Path) -> int:
    return next(i + 1 for i, line in enumerate(path.read_text().splitlines()) if "expect:" in line)


@pytest.mark.parametrize(("name", "code"), ZEPHYR_BAD)
def test_zephyr_storage_order_rule(name: str, code: str) -> None:
    path = BAD / "zephyr" / f"{name}.c"
    prj = (BAD / "zephyr" / "storage_prj.conf").read_text()
    prj += "CONFIG_FILE_SYSTEM=y\nCONFIG_FILE_SYSTEM_LITTLEFS=y\nCONFIG_FCB=y\n"
    files = {"src/main.c": path.read_text(), "prj.conf": prj}
    result = verify_sources(files, "zephyr", None)
    assert {e.code for e in result.evidence} == {code}, [(e.code, e.location, e.message) for e in result.evidence]
    assert f"src/main.c:{_expected_line(path)} in main()" in {e.location for e in result.evidence}


@pytest.mark.parametrize(("name", "code"), ESPIDF_BAD)
def test_espidf_storage_order_rule(name: str, code: str) -> None:
    path = BAD / "espidf" / f"{name}.c"
    files = {"main/main.c": path.read_text(), "sdkconfig.defaults": 'CONFIG_IDF_TARGET="esp32s3"\n'}
    result = verify_sources(files, "espidf", None)
    assert {e.code for e in result.evidence} == {code}, [(e.code, e.location, e.message) for e in result.evidence]
    assert f"main/main.c:{_expected_line(path)} in app_main()" in {e.location for e in result.evidence}


@pytest.mark.parametrize(("name", "code"), HAL_BAD)
def test_hal_storage_order_rule(name: str, code: str) -> None:
    path = BAD / "hal" / f"{name}.c"
    support = BAD / "hal" / "support"
    # The shared support configuration with the FLASH module enabled, as a project that programs flash has it.
    conf = (support / "stm32h7xx_hal_conf.h").read_text()
    conf = conf.replace(
        "#define HAL_GPIO_MODULE_ENABLED", "#define HAL_FLASH_MODULE_ENABLED\n#define HAL_GPIO_MODULE_ENABLED"
    )
    conf = conf.replace(
        '#include "stm32h7xx_hal_gpio.h"', '#include "stm32h7xx_hal_flash.h"\n#include "stm32h7xx_hal_gpio.h"'
    )
    files = {"Src/main.c": path.read_text(), "Inc/stm32h7xx_hal_conf.h": conf}
    result = verify_sources(files, "hal", None)
    assert {e.code for e in result.evidence} == {code}, [(e.code, e.location, e.message) for e in result.evidence]
    assert f"Src/main.c:{_expected_line(path)} in main()" in {e.location for e in result.evidence}
