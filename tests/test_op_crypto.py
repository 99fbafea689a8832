"""Crypto operations against the backend facts: seeded violations, evidence and relaxations, and the facts
derived from the SVDs (an accelerator exists only where its peripheral does)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import require_tool
from elftools.elf.elffile import ELFFile

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.crypto import accelerators, backend, crypto
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources

BAD = Path(__file__).resolve().parent / "bad_sources"

AES = {"name": "session", "type": "aes", "bits": 256, "usage": ["encrypt", "decrypt"]}


def _plan(target: str, framework: str, op: dict[str, Any], keys: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"target": target, "framework": framework, "stack_bytes": 4096, "resources": {"keys": keys or []},
            "operations": [{"name": "work", **op}]}  # fmt: skip


SEEDED = [
    ("aes-key-of-100-bits",
     _plan("native_sim", "zephyr", {"op": "cipher", "key": "session"}, [{**AES, "bits": 100}]),
     "E_CRYPTO_KEY_SIZE", {"session", "aes"}, {"key_bits": (100, "bits"), "nearest_valid": (128, "bits")}),
    ("ecb-refused",
     _plan("nrf52840", "zephyr", {"op": "cipher", "key": "session", "mode": "ecb", "length_bytes": 32}, [AES]),
     "E_CRYPTO_WEAK", {"aes-ecb", "aes-gcm"}, {}),
    ("md5-refused", _plan("esp32s3", "espidf", {"op": "hash", "algorithm": "md5", "message": "x"}),
     "E_CRYPTO_WEAK", {"md5", "sha256"}, {}),
    ("cbc-partial-block",
     _plan("stm32h743", "zephyr", {"op": "cipher", "key": "session", "mode": "cbc", "length_bytes": 40}, [AES]),
     "E_CRYPTO_BLOCK", {"work", "aes-cbc"}, {"length": (40, "bytes"), "block": (16, "bytes")}),
    ("key-policy-lacks-decrypt",
     _plan("esp32s3", "espidf", {"op": "cipher", "key": "session"}, [{**AES, "usage": ["encrypt"]}]),
     "E_CRYPTO_KEY_USAGE", {"session", "decrypt"}, {}),
    ("mac-names-an-aes-key", _plan("stm32f407", "zephyr", {"op": "mac", "key": "session", "message": "m"}, [AES]),
     "E_CRYPTO_KEY", {"session"}, {}),
    ("kdf-from-a-key-without-derive-usage",
     _plan("nrf52840", "zephyr", {"op": "kdf", "key": "root", "info": "v1"},
           [{"name": "root", "type": "derive", "bits": 256, "usage": ["sign"]}]),
     "E_CRYPTO_KEY_USAGE", {"root", "derive"}, {}),
    ("main-stack-too-small-for-mbedtls",
     {**_plan("stm32f407", "zephyr", {"op": "hash", "message": "m"}), "stack_bytes": 2048},
     "E_CRYPTO_STACK", {"stack_bytes", "hash"}, {"stack": (2048, "bytes"), "needed": (4096, "bytes")}),
    ("undeclared-key", _plan("native_sim", "zephyr", {"op": "cipher", "key": "missing"}),
     "E_CRYPTO_KEY", {"missing"}, {}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects", "magnitudes"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_crypto_violation_names_objects_and_every_relaxation_validates(
    case: str, plan: dict[str, Any], code: str, objects: set[str], magnitudes: dict[str, tuple[int, str]]
) -> None:
    result = run_plan(parse_plan(plan))
    assert result.status is Status.INVALID
    found = [e for e in result.evidence if e.code == code]
    assert found, [(e.code, e.message) for e in result.evidence]
    evidence = found[0]
    assert objects <= set(evidence.objects), evidence.objects
    measured = {m.name: (m.value, m.unit) for m in evidence.magnitudes}
    for name, expected in magnitudes.items():
        assert measured[name] == expected
    assert evidence.relaxations, f"{case}: no relaxation offered"
    for relaxation in evidence.relaxations:
        again = run_plan(parse_plan(apply_patch(plan, relaxation.patch)))
        assert again.status is Status.PASS, (relaxation.description, [(e.code, e.message) for e in again.evidence])


def test_key_size_evidence_lists_the_valid_sizes() -> None:
    plan = _plan("native_sim", "zephyr", {"op": "cipher", "key": "session"}, [{**AES, "bits": 100}])
    evidence = next(e for e in run_plan(parse_plan(plan)).evidence if e.code == "E_CRYPTO_KEY_SIZE")
    assert "128, 192, 256 bits" in evidence.message
    assert [r.patch[0]["value"] for r in evidence.relaxations] == [128, 192, 256]


def test_accelerators_are_derived_from_the_svd_peripherals(shared_dir: Any) -> None:
    f407, h743 = load_target("stm32f407"), load_target("stm32h743")
    # The shared F40x/F41x SVD describes CRYP and HASH; the F407 part has neither (F415/F417 do).
    assert {"CRYP", "HASH"} <= set(f407.peripherals)
    assert [a.name for a in accelerators(f407)] == ["RNG"]
    facts = crypto(f407)
    assert facts is not None and set(facts.not_on_part) == {"CRYP", "HASH"}
    # The H743 SVD has no CRYP/HASH at all (they are H753 blocks): absent by derivation.
    assert "CRYP" not in h743.peripherals and [a.name for a in accelerators(h743)] == ["RNG"]
    svd = (shared_dir / "svd" / "stm32h743.svd").read_text(encoding="utf-8")
    assert "<name>CRYP</name>" not in svd and "<name>RNG</name>" in svd
    nrf = [a.name for a in accelerators(load_target("nrf52840"))]
    assert "CryptoCell-310" in nrf
    esp = {a.name for a in accelerators(load_target("esp32s3"))}
    assert {"AES", "SHA", "RSA", "HMAC", "DS", "RNG"} <= esp
    assert backend(load_target("native_sim"), "zephyr") is not None
    hal = backend(f407, "hal")
    assert hal is not None and hal.algorithms == ("random",)


def test_the_generated_c_holds_no_key_material() -> None:
    plan = _plan("esp32s3", "espidf", {"op": "cipher", "key": "session", "mode": "cbc", "length_bytes": 32}, [AES])
    result = run_plan(parse_plan(plan))
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    main = dict(result.lowered.files)["main/main.c"]
    assert "esp_fill_random(key, sizeof(key));" in main and "mbedtls_platform_zeroize(key, sizeof(key));" in main
    zephyr = run_plan(parse_plan(_plan("nrf52840", "zephyr", {"op": "cipher", "key": "session"}, [AES])))
    assert zephyr.status is Status.PASS and zephyr.lowered is not None
    app = dict(zephyr.lowered.files)
    assert "psa_generate_key(&attributes, &app_work_key)" in app["src/main.c"]
    assert "psa_destroy_key(app_work_key)" in app["src/main.c"]
    assert "CONFIG_MBEDTLS_PSA_CRYPTO_C=y" in app["prj.conf"] and "CONFIG_PSA_WANT_ALG_GCM=y" in app["prj.conf"]


def test_hkdf_derives_twice_with_one_salt_and_destroys_its_key() -> None:
    keys = [{"name": "root", "type": "derive", "bits": 256, "usage": ["derive"]}]
    op = {"op": "kdf", "key": "root", "info": "session v1", "length_bytes": 42}
    zephyr = run_plan(parse_plan(_plan("stm32f407", "zephyr", op, keys)))
    assert zephyr.status is Status.PASS and zephyr.lowered is not None
    main = dict(zephyr.lowered.files)["src/main.c"]
    assert main.count("psa_key_derivation_output_bytes(&derivation, okm, 42U)") == 1
    assert "PSA_KEY_DERIVATION_INPUT_SALT" in main and "psa_destroy_key(app_work_key)" in main
    esp = run_plan(parse_plan(_plan("esp32s3", "espidf", op, keys)))
    assert esp.status is Status.PASS and esp.lowered is not None
    assert dict(esp.lowered.files)["main/main.c"].count("mbedtls_hkdf(sha256, salt") == 2


def test_every_accelerator_and_backend_cites_its_source() -> None:
    from rac_fw.domains.firmware.facts.load import target_ids

    for target_id in target_ids():
        facts = crypto(load_target(target_id))
        assert facts is not None and facts.backends, target_id
        assert all(a.source and a.algorithms for a in facts.accelerators), target_id
        assert all(b.source and b.algorithms for b in facts.backends), target_id
        named = {a.name for a in facts.accelerators}
        assert all(set(b.accelerators) <= named for b in facts.backends), target_id


# --- random on the STM32 HAL and on bare metal ---------------------------------------------------------
def _random(target: str, framework: str) -> dict[str, Any]:
    return {"target": target, "framework": framework,
            "operations": [{"op": "random", "name": "salt", "length_bytes": 18}]}  # fmt: skip


@pytest.mark.parametrize(("target", "clock"), [("stm32f407", None), ("stm32h743", "HSI48")])
def test_hal_random_starts_the_rng_kernel_clock_the_facts_name(target: str, clock: str | None) -> None:
    """F4: the RNG runs from PLL48CK, which the HAL clock set-up runs at 48 MHz; H7: from HSI48, an
    oscillator off after reset that the generated code starts before HAL_RNG_Init."""
    result = run_plan(parse_plan(_random(target, "hal")))
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    assert result.lowered is not None
    main = result.lowered.files["Core/Src/main.c"]
    conf = next(text for path, text in result.lowered.files.items() if path.endswith("_hal_conf.h"))
    assert "#define HAL_RNG_MODULE_ENABLED" in conf and "_hal_rng.h" in conf
    init = main.index("HAL_RNG_Init(&salt_rng)")
    assert (
        main.index("__HAL_RCC_RNG_CLK_ENABLE();") < init < main.index("HAL_RNG_GenerateRandomNumber(&salt_rng, &word)")
    )
    assert ("RCC_OSCILLATORTYPE_HSI48" in main) == (clock == "HSI48")
    if clock:
        assert main.index("HAL_RCC_OscConfig(&osc)") < init


def test_nrf52840_baremetal_random_reads_the_rng_registers(tmp_path: Path) -> None:
    require_tool("arm-none-eabi-gcc")
    plan = tmp_path / "rng.json"
    plan.write_text(json.dumps(_random("nrf52840", "baremetal")))
    out = tmp_path / "app"
    command = [sys.executable, "-m", "rac_fw.cli", "plan", str(plan), "-o", str(out), "--build", "gcc", "--json"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    with (out / "build" / "firmware.elf").open("rb") as handle:
        symbols = ELFFile(handle).get_section_by_name(".symtab")
        assert symbols is not None and symbols.get_symbol_by_name("op0_bytes")
    source = (out / "src" / "main.c").read_text()
    start = source.index("RNG->TASKS_START = 1U;")
    assert source.index("RNG->CONFIG = RNG_CONFIG_DERCEN_Msk;") < start < source.index("RNG->EVENTS_VALRDY != 0U")
    assert "RNG->TASKS_STOP = 1U;" in source


def test_stm32_baremetal_random_is_refused_with_evidence() -> None:
    """The STM32 RNG needs its kernel clock (PLL48CK / HSI48), which bare metal here does not start."""
    result = run_plan(parse_plan(_random("stm32f407", "baremetal")))
    assert result.status is Status.INVALID
    assert {e.code for e in result.evidence} == {"E_TARGET_UNSUPPORTED"}


def test_qemu_netduinoplus2_maps_the_rng_as_an_unimplemented_device() -> None:
    """QEMU 7.2's STM32F405 SoC registers 0x50060800 as an 'unimplemented device' (priority -1000 i/o
    region: reads 0, writes ignored), so DRDY never rises and an F407 RNG cannot be run there."""
    require_tool("qemu-system-arm")
    command = [
        "qemu-system-arm",
        "-M",
        "netduinoplus2",
        "-S",
        "-display",
        "none",
        "-serial",
        "null",
        "-monitor",
        "stdio",
    ]
    run = subprocess.run(command, input="info mtree\nquit\n", capture_output=True, text=True, timeout=60)
    regions = [line.strip() for line in run.stdout.splitlines() if line.strip().endswith(": RNG")]
    assert regions and regions[0].startswith("0000000050060800-0000000050060bff (prio -1000, i/o)"), run.stdout[-2000:]


def test_hal_rng_order_rule() -> None:
    path = BAD / "hal" / "crypto_rng_before_init.c"
    conf = (BAD / "hal" / "support" / "stm32h7xx_hal_conf.h").read_text()
    conf = conf.replace(
        "#define HAL_GPIO_MODULE_ENABLED", "#define HAL_GPIO_MODULE_ENABLED\n#define HAL_RNG_MODULE_ENABLED"
    )
    conf = conf.replace(
        '#include "stm32h7xx_hal_gpio.h"', '#include "stm32h7xx_hal_gpio.h"\n#include "stm32h7xx_hal_rng.h"'
    )
    result = verify_sources({"Src/main.c": path.read_text(), "Inc/stm32h7xx_hal_conf.h": conf}, "hal", None)
    assert {e.code for e in result.evidence} == {"E_CALL_ORDER"}, [
        (e.code, e.location, e.message) for e in result.evidence
    ]
    line = next(i + 1 for i, text in enumerate(path.read_text().splitlines()) if "expect:" in text)
    assert f"Src/main.c:{line} in main()" in {e.location for e in result.evidence}
