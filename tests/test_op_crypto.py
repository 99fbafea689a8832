"""Crypto operations against the backend facts: seeded violations, evidence and relaxations, and the facts
derived from the SVDs (an accelerator exists only where its peripheral does)."""

from __future__ import annotations

from typing import Any

import pytest

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.crypto import accelerators, backend, crypto
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan

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
