"""``fs_file`` on ESP-IDF: FAT on wear levelling on the ``storage`` data/fat partition the board facts add to
the plan's partition table (ops/storage/fs_file.py, ops/storage/area.py, templates/espidf/storage.c.j2).

The obligations are checked in numbers derived here from the cited sources (wear_levelling's WL_Flash::config,
FatFs f_mkfs), each seeded violation's relaxations are applied and must validate, the lowered project carries
the table, the components and the mount/write/read-back/unmount sequence, and the verifier's order rules have
one bad source each.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from rac_fw.contract import Evidence, Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.storage import EraseBlocks, role, storage
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.ops.storage.fs_file import fat_layout, wl_overhead
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.resources import data_dir

BAD = Path(__file__).parent / "bad_sources" / "espidf"
MB = 0x100000


def _plan(*, bootloader: bool = False, heap_bytes: int | None = None, **fields: Any) -> dict[str, Any]:
    op = {"op": "fs_file", "name": "bootlog", "file": "boot", "file_bytes": 1000, **fields}
    data: dict[str, Any] = {"target": "esp32s3", "framework": "espidf", "operations": [op]}
    if bootloader:
        data["bootloader"] = {"mode": "esp_ota"}
    if heap_bytes is not None:
        data["heap_bytes"] = heap_bytes
    return data


def _evidence(data: dict[str, Any]) -> list[Evidence]:
    return check(parse_plan(data), load_target("esp32s3"))


def _one(data: dict[str, Any], code: str) -> Evidence:
    hits = [e for e in _evidence(data) if e.code == code]
    assert len(hits) == 1, [(e.code, e.message) for e in _evidence(data)]
    return hits[0]


def _every_relaxation_validates(data: dict[str, Any], hit: Evidence) -> None:
    assert hit.relaxations
    for relaxation in hit.relaxations:
        after = _evidence(apply_patch(data, relaxation.patch))
        assert after == [], (relaxation.description, [(e.code, e.message) for e in after])


# --- the geometry, in numbers -------------------------------------------------------------------------------
def test_wear_levelling_keeps_two_state_copies_a_config_and_a_dummy_sector() -> None:
    # 1 MB = 256 sectors: a state is the 64-byte wl_state_t + 16 bytes per sector = 4160 bytes -> 2 sectors,
    # twice, + 1 configuration + 1 dummy = 6; FAT gets the other 250.
    assert wl_overhead(MB) == (6, 250)
    # 128 KB = 32 sectors: 64 + 32 * 16 = 576 bytes fit one sector: 2 + 1 + 1 = 4.
    assert wl_overhead(0x20000) == (4, 28)
    # The state outgrows one sector past (4096 - 64) / 16 = 252 sectors.
    assert wl_overhead(252 * 4096)[0] == 4 and wl_overhead(253 * 4096)[0] == 6


def test_fat_layout_of_the_board_partition() -> None:
    layout = fat_layout(MB, 4096)
    # 250 clusters -> FAT12, (250 * 3 + 1) // 2 + 3 = 378 bytes: one sector per FAT; 512 root entries of
    # 32 bytes = 4 sectors above 128 volume sectors; + the boot sector: 1 + 2 + 4 = 7.
    assert (layout.wl_sectors, layout.volume, layout.fat_sectors, layout.clusters) == (6, 250, 7, 243)
    assert layout.data_bytes == 243 * 4096 == 995_328
    small = fat_layout(0x20000, 4096)
    # 28 sectors <= 128: 128 root entries (one sector).
    assert (small.fat_sectors, small.clusters) == (1 + 2 + 1, 24)
    assert fat_layout(MB, 8 * 4096).clusters == (250 - 7) // 8


def test_the_board_adds_the_fat_partition_after_either_table() -> None:
    facts = storage(load_target("esp32s3"))
    assert facts is not None
    # Without an operation asking for it, the stock tables stay as ESP-IDF ships them.
    assert role(facts, "espidf", "filesystem") is None
    plain = role(facts, "espidf", "filesystem", data=("storage",))
    ota = role(facts, "espidf", "filesystem", ota=True, data=("storage",))
    assert plain is not None and (plain.offset, plain.size, plain.label) == (0x110000, MB, "data/fat")
    assert ota is not None and (ota.offset, ota.size) == (0x310000, MB)


def test_a_data_partition_past_the_end_of_the_flash_is_left_out() -> None:
    facts = storage(load_target("esp32s3"))
    assert facts is not None
    # The same board on a 4 MB module: after the two-OTA table (ending at 0x310000) 1 MB does not fit.
    small = replace(facts, flash=replace(facts.flash, erase_blocks=(EraseBlocks(1024, 4096),)))
    assert role(small, "espidf", "filesystem", ota=True, data=("storage",)) is None
    assert role(small, "espidf", "filesystem", data=("storage",)) is not None


# --- seeded violations ----------------------------------------------------------------------------------------
def test_a_file_larger_than_the_volume_is_refused_in_sectors() -> None:
    data = _plan(file_bytes=MB)
    hit = _one(data, "E_PARTITION_TOO_SMALL")
    got = {m.name: (m.value, m.unit) for m in hit.magnitudes}
    # 256 clusters + 7 FAT + 6 WL sectors = 269 sectors of the partition's 256.
    assert got["needed"] == (269, "sectors") and got["available"] == (256, "sectors")
    assert got["wear_levelling"] == (6, "sectors") and got["fat"] == (7, "sectors")
    assert {"storage", "boot", "esp32s3"} <= set(hit.objects)
    assert hit.relaxations[0].patch[0]["value"] == 995_328
    _every_relaxation_validates(data, hit)


def test_clusters_too_large_for_the_volume() -> None:
    data = _plan(allocation_unit_bytes=128 * 4096, file_bytes=600_000)
    hit = _one(data, "E_PARTITION_TOO_SMALL")
    # 128-sector clusters leave (250 - 7) // 128 = 1 cluster; 600000 bytes need 2.
    assert "2 clusters of 128 sector(s)" in hit.message
    # (Dropping the plan's only operation would leave no plan: that relaxation is not offered.)
    assert [r.description for r in hit.relaxations] == ["write 524288 bytes", "use one sector per cluster"]
    _every_relaxation_validates(data, hit)


# 655360 bytes: no valid unit above (128 sectors is the most), the one below is offered.
@pytest.mark.parametrize(("unit", "offered"), [(6144, [4096, 8192]), (1024, [4096]), (655_360, [524_288])])
def test_allocation_unit_must_be_a_power_of_two_number_of_sectors(unit: int, offered: list[int]) -> None:
    data = _plan(allocation_unit_bytes=unit)
    hit = _one(data, "E_FS_ALLOCATION_UNIT")
    values = [r.patch[0].get("value") for r in hit.relaxations if r.patch[0]["op"] == "replace"]
    assert values == offered
    assert hit.relaxations[-1].description == "use one sector per cluster"
    assert {m.name: m.value for m in hit.magnitudes}["allocation_unit"] == unit
    _every_relaxation_validates(data, hit)


def test_fat_buffers_count_against_the_ram_budget_and_fewer_files_relieve_it() -> None:
    data = _plan(max_files=16, heap_bytes=300_000)
    hit = _one(data, "E_RAM_BUDGET")
    excess = {m.name: m.value for m in hit.magnitudes}["excess"]
    fewer = next(r for r in hit.relaxations if "max_files" in r.description)
    # 4096 bytes per file slot: the relief frees ceil(excess / 4096) of them.
    assert fewer.patch[0]["value"] == 16 - -(-excess // 4096)
    assert _evidence(apply_patch(data, fewer.patch)) == []
    # The same plan on Zephyr's LittleFS carries no sector buffers: max_files does not count there.
    zephyr = {**data, "framework": "zephyr", "heap_bytes": 300_000}
    assert not [e for e in check(parse_plan(zephyr), load_target("esp32s3")) if e.code == "E_RAM_BUDGET"]


# --- the lowered project -------------------------------------------------------------------------------------
def _files(data: dict[str, Any]) -> dict[str, str]:
    return lower(parse_plan(data), load_target("esp32s3"), "espidf").files


def test_the_project_carries_the_table_the_components_and_long_names() -> None:
    files = _files(_plan())
    table = files["partitions.csv"].splitlines()
    assert table[-1] == "storage, data, fat, 0x110000, 0x100000,"
    assert [row.split(",")[0] for row in table[2:]] == ["nvs", "phy_init", "factory", "storage"]
    config = files["sdkconfig.defaults"]
    for line in ("CONFIG_PARTITION_TABLE_CUSTOM=y", 'CONFIG_PARTITION_TABLE_CUSTOM_FILENAME="partitions.csv"',
                 "CONFIG_FATFS_LFN_HEAP=y"):  # fmt: skip
        assert line in config
    requires = re.search(r"REQUIRES([^)]*)\)", files["main/CMakeLists.txt"])
    assert requires is not None and {"fatfs", "wear_levelling"} <= set(requires.group(1).split())


def test_ota_and_fat_share_one_table() -> None:
    with_fat = _files(_plan(bootloader=True))["partitions.csv"].splitlines()
    assert with_fat[-2:] == ["ota_1, app/ota_1".replace("/", ", ") + ", 0x210000, 0x100000,",
                             "storage, data, fat, 0x310000, 0x100000,"]  # fmt: skip
    # A bootloader without a file system keeps the plain two-OTA table.
    kv = {"op": "kv_record", "name": "rec", "key": "rec", "value_bytes": 16}
    ota_only = {"target": "esp32s3", "framework": "espidf", "bootloader": {"mode": "esp_ota"}, "operations": [kv]}
    rows = _files(ota_only)["partitions.csv"]
    assert "storage" not in rows and rows.splitlines()[-1].startswith("ota_1, app, ota_1")


@pytest.mark.parametrize("format_on_failure", [True, False])
def test_mount_write_close_read_back_unmount(format_on_failure: bool) -> None:
    source = _files(_plan(format_on_failure=format_on_failure, max_files=2, allocation_unit_bytes=8192))[
        "main/main.c"
    ]
    assert f".format_if_mount_failed = {'true' if format_on_failure else 'false'}," in source
    assert ".max_files = 2," in source and ".allocation_unit_size = 8192U," in source
    steps = [
        'esp_vfs_fat_spiflash_mount_rw_wl("/fat", "storage", &config, &handle)',
        'esp_vfs_fat_spiflash_unmount_rw_wl("/fat", handle)',
    ]
    body = source[source.index("static esp_err_t bootlog_run(void)") :]
    assert body.index(steps[0]) < body.index("bootlog_write()") < body.index("bootlog_read_back()")
    assert body.index("bootlog_read_back()") < body.index(steps[1])
    assert 'fopen("/fat/boot", "wb")' in source and 'fopen("/fat/boot", "rb")' in source
    # Every stdio result is judged: short writes/reads, a failed close, a mismatch.
    assert "fwrite(bootlog_out, 1, n, file) != n" in source and "fread(bootlog_in, 1, n, file) != n" in source
    assert source.count("fclose(file) != 0") == 2 and "memcmp(bootlog_in, bootlog_out, n) != 0" in source


def test_the_littlefs_example_is_clean_on_espidf() -> None:
    result = run_plan(data_dir("examples") / "storage_littlefs.yaml", target="esp32s3", framework="espidf")
    assert result.status is Status.PASS, [(e.code, e.location, e.message) for e in result.evidence]


# --- the verifier's FAT order rules --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["storage_fopen_before_fat_mount", "storage_fat_unmount_before_mount"])
def test_fat_order_rule(name: str) -> None:
    path = BAD / f"{name}.c"
    files = {"main/main.c": path.read_text(), "sdkconfig.defaults": 'CONFIG_IDF_TARGET="esp32s3"\n'}
    result = verify_sources(files, "espidf", None)
    assert [e.code for e in result.evidence] == ["E_CALL_ORDER"], [(e.code, e.message) for e in result.evidence]
    line = next(i + 1 for i, text in enumerate(path.read_text().splitlines()) if "expect:" in text)
    assert result.evidence[0].location == f"main/main.c:{line} in app_main()"


def test_a_field_of_the_other_file_system_is_refused_not_ignored() -> None:
    """allocation_unit_bytes means nothing to LittleFS, lookahead_bytes nothing to FAT: each is refused where it would
    change nothing, with its removal as the relaxation (which validates), and max_files reaches LittleFS's Kconfig."""
    zephyr = {"target": "nrf52840", "framework": "zephyr", "operations": [
        {"op": "fs_file", "file": "log", "file_bytes": 1000, "allocation_unit_bytes": 8192}]}
    idf = {"target": "esp32s3", "framework": "espidf", "operations": [
        {"op": "fs_file", "file": "log", "file_bytes": 1000, "lookahead_bytes": 64}]}
    for plan, code, field in ((zephyr, "E_FS_ALLOCATION_UNIT", "allocation_unit_bytes"),
                              (idf, "E_FS_CACHE", "lookahead_bytes")):  # fmt: skip
        result = run_plan(plan)
        assert result.status is Status.INVALID
        found = next(e for e in result.evidence if e.code == code)
        assert found.location.endswith(field), found.location
        fixed = apply_patch(plan, found.relaxations[0].patch)
        assert run_plan(fixed).status is Status.PASS
    more = {"target": "nrf52840", "framework": "zephyr", "operations": [
        {"op": "fs_file", "file": "log", "file_bytes": 1000, "max_files": 6}]}
    result = run_plan(more)
    assert result.status is Status.PASS
    assert "CONFIG_FS_LITTLEFS_NUM_FILES=6" in result.lowered.files["prj.conf"]
