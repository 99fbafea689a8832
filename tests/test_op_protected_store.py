"""``protected_store``: PSA Internal Trusted Storage records through Zephyr's secure_storage subsystem.

The obligations against the facts (the backend's record limit, UIDs, write-once, the storage partition the
settings NVS backend needs), ESP-IDF's refusal with its NVS substitutes, the Kconfig and C the Zephyr lowering
writes, and a real compile of the generated ``main.c`` with arm-none-eabi-gcc -Wall -Wextra -Werror against
declarations built from the verifier's catalog (the signatures harvested from Zephyr's ITS header).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import require_tool

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.ops.crypto.protected_store import ITS_MAX_DATA, ITS_STORED_OVERHEAD, record_uids
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.usercode import TEXTS
from rac_fw.domains.firmware.verify import sdk
from rac_fw.resources import data_dir

EXAMPLE = data_dir("examples") / "crypto_protected_store.yaml"
CATALOG = Path(sdk.__file__).resolve().parent / "zephyr" / "api.d"


def _plan(target: str, *ops: dict[str, Any], framework: str = "zephyr", **top: Any) -> dict[str, Any]:
    return {"target": target, "framework": framework, "stack_bytes": 4096, "operations": list(ops), **top}


def _record(record: str = "blob", **fields: Any) -> dict[str, Any]:
    return {"op": "protected_store", "name": record, "record": record, "size_bytes": 64, **fields}


def _evidence(doc: dict[str, Any]) -> list[Any]:
    plan = parse_plan(doc)
    return check(plan, load_target(plan.target), plan.framework or "zephyr")


def _lowered(doc: dict[str, Any] | Path) -> dict[str, str]:
    result = run_plan(doc)
    assert result.status is Status.PASS and result.lowered is not None, [(e.code, e.message) for e in result.evidence]
    return result.lowered.files


def test_record_limit_is_the_settings_value_minus_the_aead_transform() -> None:
    hit = next(e for e in _evidence(_plan("nrf52840", _record(size_bytes=300))) if e.code == "E_ITS_DATA_SIZE")
    assert ITS_STORED_OVERHEAD == 29 and ITS_MAX_DATA == 227
    assert {(m.name, m.value, m.unit) for m in hit.magnitudes} == {
        ("size", 300, "bytes"), ("max_data", 227, "bytes"), ("overhead", 29, "bytes")}  # fmt: skip
    assert hit.location == "operations[0].size_bytes" and "SETTINGS_MAX_VAL_LEN" in hit.message
    assert not [e for e in _evidence(_plan("nrf52840", _record(size_bytes=227)))]


@pytest.mark.parametrize(
    ("ops", "where", "words"),
    [
        ([_record(uid=0)], "operations[0].uid", "zero UID"),
        ([_record(uid=1 << 30)], "operations[0].uid", "first 30"),
        ([_record(), _record("cfg", uid=1)], "operations[1].uid", "share UID 1"),
        ([_record(uid=5), _record(uid=6, name="again")], "operations[1].uid", "UID 6 here and UID 5"),
    ],
    ids=["zero", "past-30-bits", "two-records-one-uid", "one-record-two-uids"],
)
def test_uids_are_nonzero_30_bit_and_one_per_record(ops: list[dict[str, Any]], where: str, words: str) -> None:
    doc = _plan("native_sim", *ops)
    hits = [e for e in _evidence(doc) if e.code == "E_ITS_UID"]
    assert len(hits) == 1 and hits[0].location == where and words in hits[0].message, hits
    for relaxation in hits[0].relaxations:
        assert _evidence(apply_patch(doc, relaxation.patch)) == []


def test_uids_default_to_the_records_positions() -> None:
    plan = parse_plan(_plan("native_sim", _record("a"), _record("b", uid=9), _record("a", name="a2"), _record("c")))
    assert record_uids(plan) == {"a": 1, "b": 9, "c": 3}


def test_a_record_may_be_rewritten_unless_it_is_write_once() -> None:
    assert _evidence(_plan("nrf52840", _record(), _record(name="again"))) == []
    doc = _plan("nrf52840", _record(write_once=True), _record(name="again"))
    hits = [e for e in _evidence(doc) if e.code == "E_ITS_WRITE_ONCE"]
    assert [h.location for h in hits] == ["operations[1]"] and "PSA_ERROR_NOT_PERMITTED" in hits[0].message


def test_the_backend_needs_two_nvs_sectors_in_the_storage_partition() -> None:
    hit = next(e for e in _evidence(_plan("stm32h743", _record())) if e.code == "E_ITS_BACKEND")
    measured = {m.name: m.value for m in hit.magnitudes}
    assert measured == {"partition": 131072, "sector": 131072, "max_sector": 32768, "sectors": 1}
    missing = [e.code for e in _evidence(_plan("stm32f407", _record()))]
    assert "E_PARTITION_MISSING" in missing and "E_ITS_BACKEND" not in missing


def test_espidf_refuses_with_nvs_and_every_substitute_validates() -> None:
    doc = _plan("esp32s3", _record("device_identity_blob", size_bytes=48, remove=True), framework="espidf")
    result = run_plan(doc)
    assert result.status is Status.INVALID and {e.code for e in result.evidence} == {"E_TARGET_UNSUPPORTED"}
    hit = next(e for e in result.evidence if e.code == "E_TARGET_UNSUPPORTED")
    assert "ESP-IDF has no PSA Internal Trusted Storage" in hit.message and "NVS" in hit.message
    assert "CONFIG_NVS_ENCRYPTION" in hit.message
    described = [r.description for r in hit.relaxations]
    assert described[0].startswith("keep device_identity_blob as an NVS record (kv_record device_identity")
    assert "use framework zephyr" in described
    for relaxation in hit.relaxations:
        assert run_plan(apply_patch(doc, relaxation.patch)).status is Status.PASS, relaxation.description
    key = hit.relaxations[0].patch[0]["value"]["key"]
    assert len(key) == 15  # ESP-IDF NVS keys are at most 15 characters


def test_zephyr_kconfig_follows_the_sample_and_the_facts() -> None:
    conf = _lowered(EXAMPLE)["prj.conf"]
    for line in ("CONFIG_SECURE_STORAGE=y", "CONFIG_SECURE_STORAGE_ITS_STORE_IMPLEMENTATION_SETTINGS=y",
                 "CONFIG_SETTINGS_NVS=y", "CONFIG_MBEDTLS_PSA_CRYPTO_C=y", "CONFIG_ENTROPY_GENERATOR=y",
                 "CONFIG_SETTINGS_NVS_SECTOR_COUNT=8", "CONFIG_MAIN_STACK_SIZE=4096"):  # fmt: skip
        assert line in conf.splitlines(), line
    assert "ITS_MAX_DATA_SIZE" not in conf  # 64 and 32 bytes: the Kconfig default of 128 holds them
    native = _lowered(_plan("native_sim", _record(size_bytes=200)))["prj.conf"].splitlines()
    assert "CONFIG_SECURE_STORAGE_ITS_MAX_DATA_SIZE=200" in native
    assert "CONFIG_SETTINGS_NVS_SECTOR_COUNT=4" in native  # 16 KB storage_partition of 4 KB blocks


def test_a_settings_value_shares_the_settings_backend_and_keeps_its_sizing() -> None:
    setting = {"op": "settings_value", "name": "duty", "key": "duty", "value_bytes": 4, "sector_bytes": 8192}
    conf = _lowered(_plan("nrf52840", setting, _record()))["prj.conf"].splitlines()
    assert "CONFIG_SETTINGS_NVS_SECTOR_SIZE_MULT=2" in conf and "CONFIG_SETTINGS_NVS_SECTOR_COUNT=4" in conf


def test_generated_c_makes_its_data_on_the_device_and_checks_every_status() -> None:
    main = _lowered(EXAMPLE)["src/main.c"]
    assert "psa_its_set(uid, sizeof(app_session_data), app_session_data, flags)" in main
    assert "PSA_STORAGE_FLAG_WRITE_ONCE | PSA_STORAGE_FLAG_NO_REPLAY_PROTECTION" in main
    assert "const psa_storage_uid_t uid = 16U;" in main and "const psa_storage_uid_t uid = 1U;" in main
    assert "psa_generate_random(app_session_data" in main and "app_identity_data[i] = (uint8_t)i;" in main
    assert not re.search(r"_data\[\d+\]\s*=\s*\{", main), "record data is never an initialized array"
    assert main.count("psa_its_remove(") == 1  # only the removable record; the write-once one stays
    assert "kept = (status == PSA_ERROR_NOT_PERMITTED)" in main


def _stand_ins(root: Path) -> None:
    """Declarations for the compile: prototypes built from the catalog's harvested signatures, and the types
    and constants psa/storage_common.h and psa/error.h define (values as in Zephyr's secure_storage headers)."""

    def prototypes(fragment: str, header: str, names: set[str] | None = None) -> str:
        functions = json.loads((CATALOG / fragment).read_text())["headers"][header]["functions"]
        lines = []
        for name, signature in functions.items():
            if names is None or name in names:
                ret, args = signature.split("(", 1)
                lines.append(f"{ret} {name}({args};")
        return "\n".join(lines) + "\n"

    files = {
        "psa/error.h": "#pragma once\n#include <stdint.h>\ntypedef int32_t psa_status_t;\n"
        "#define PSA_SUCCESS ((psa_status_t)0)\n#define PSA_ERROR_NOT_PERMITTED ((psa_status_t)-133)\n",
        "psa/storage_common.h": "#pragma once\n#include <psa/error.h>\n#include <stddef.h>\n"
        "typedef uint64_t psa_storage_uid_t;\ntypedef uint32_t psa_storage_create_flags_t;\n"
        "#define PSA_STORAGE_FLAG_NONE 0u\n#define PSA_STORAGE_FLAG_WRITE_ONCE (1u << 0)\n"
        "#define PSA_STORAGE_FLAG_NO_CONFIDENTIALITY (1u << 1)\n"
        "#define PSA_STORAGE_FLAG_NO_REPLAY_PROTECTION (1u << 2)\n"
        "struct psa_storage_info_t { size_t capacity; size_t size; psa_storage_create_flags_t flags; };\n",
        "psa/internal_trusted_storage.h": "#pragma once\n#include <psa/storage_common.h>\n"
        + prototypes("its.json", "psa/internal_trusted_storage.h"),
        "psa/crypto.h": "#pragma once\n#include <psa/error.h>\n#include <stddef.h>\n"
        + prototypes("crypto.json", "psa/crypto.h", {"psa_crypto_init", "psa_generate_random"}),
        "zephyr/kernel.h": "#pragma once\n#include <errno.h>\n#include <stdbool.h>\n#include <stdint.h>\n",
        "zephyr/sys/printk.h": "#pragma once\n"
        "void printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_generated_main_compiles_warning_free_against_the_catalog_signatures(tmp_path: Path) -> None:
    gcc = require_tool("arm-none-eabi-gcc")
    _stand_ins(tmp_path)
    (tmp_path / "user.h").write_text(TEXTS["user.h"])
    for name, doc in (("example", EXAMPLE), ("native", _plan("native_sim", _record(content="pattern", write_once=True),
                                                             _record("nonce", size_bytes=200, remove=True),
                                                             _record("seed", write_once=True)))):  # fmt: skip
        source = tmp_path / f"{name}.c"
        source.write_text(_lowered(doc)["src/main.c"])
        done = subprocess.run(
            [gcc, "-mcpu=cortex-m4", "-mthumb", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
             "-I", str(tmp_path), str(source)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
