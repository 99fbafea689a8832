"""Zephyr releases as facts (``facts/sdk.py``): one generator writes for 3.7 LTS and 4.1, every difference a row.

``--zephyr-version`` picks the release; 4.1 (the default) gives the output of before. A 3.7 app differs from the
4.1 app only where ``facts/sdk.yaml`` says the releases differ (headers, names, C forms, implied Kconfig, board
properties) — checked by undoing exactly those rows on the 3.7 output and comparing with the 4.1 output. An
operation a release lacks (PSA secure storage on 3.7) is refused with evidence and relaxations.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rac_fw.contract import Status
from rac_fw.domains.firmware.backends.west import release_mismatch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.sdk import UnknownSdkVersion, for_release, normalize, release
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.resources import data_dir
from tests.conftest import REPO

EXAMPLES = data_dir("examples")


def _files(example: str, target: str, version: str | None) -> dict[str, str]:
    result = run_plan(EXAMPLES / example, target=target, framework="zephyr", zephyr_version=version)
    assert result.status is Status.PASS, (example, target, version, [e.message for e in result.evidence])
    assert result.lowered is not None
    return dict(result.lowered.files)


def test_cli_writes_the_37_overlay_without_the_4x_adc_header(tmp_path: Path) -> None:
    out37, out41 = tmp_path / "v37", tmp_path / "v41"
    for version, out in (("3.7", out37), ("4.1", out41)):
        done = subprocess.run(
            [sys.executable, "-m", "rac_fw.cli", "plan", str(EXAMPLES / "adc_dt.yaml"), "--target", "nrf52840",
             "--zephyr-version", version, "--out", str(out)],
            cwd=REPO, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    overlay37 = (out37 / "boards" / "nrf52840dk_nrf52840.overlay").read_text()
    overlay41 = (out41 / "boards" / "nrf52840dk_nrf52840.overlay").read_text()
    assert "nrf-saadc.h" not in overlay37 and "#include <zephyr/dt-bindings/adc/nrf-adc.h>" in overlay37
    assert "#include <zephyr/dt-bindings/adc/nrf-saadc.h>" in overlay41
    assert json.loads((out37 / "rac-fw.manifest.json").read_text())["sdk_version"] == "3.7"


def test_an_unknown_release_is_invalid_input_with_the_known_ones() -> None:
    result = run_plan(EXAMPLES / "adc_dt.yaml", zephyr_version="4.0")
    assert result.status is Status.INVALID and result.exit_code == 2
    (evidence,) = result.evidence
    assert evidence.code == "E_SDK_VERSION" and {"3.7", "4.1"} <= set(evidence.objects)
    assert normalize("zephyr", "v3.7.1") == "3.7"
    with pytest.raises(UnknownSdkVersion):
        normalize("zephyr", "2.7")


@pytest.mark.parametrize(
    "example", ["adc_dt.yaml", "uart_hello.yaml", "threading.yaml", "gpio_button.yaml", "dma_h7_cache.yaml"]
)
def test_writing_for_41_is_the_default_output(example: str) -> None:
    target = run_plan(EXAMPLES / example).target
    assert target is not None
    assert _files(example, target, "4.1") == _files(example, target, None)


def _undo_release(files: dict[str, str]) -> dict[str, str]:
    """The 3.7 app with every row of facts/sdk.yaml's 3.7 release undone: what the 4.1 app must be."""
    old, new = release(for_release(load_target("nrf52840"), "zephyr", "3.7"), "zephyr"), release(None, "zephyr")
    assert old is not None and new is not None
    undone: dict[str, str] = {}
    for path, text in files.items():
        text = text.replace(old.label, new.label)
        for canonical, spelled in old.headers.items():
            text = text.replace(spelled, canonical)
        for canonical, spelled in old.names.items():
            text = text.replace(spelled, canonical)
        for key, form in old.c.items():
            text = text.replace(form, new.c[key])
        for implied in {s for symbols in old.kconfig_implies.values() for s in symbols}:
            text = re.sub(rf"(CONFIG_{implied}=y|- `CONFIG_{implied}` \(\w+\))\n", "", text)
        for nodes in old.board_properties.values():
            for lines in nodes.values():
                for line in lines:
                    text = text.replace(f"\t{line}\n", "")
        undone[path] = text
    return undone


@pytest.mark.parametrize(
    ("example", "target"),
    [
        ("adc_dt.yaml", "nrf52840"),
        ("adc_dt.yaml", "stm32f407"),
        ("ble_central.yaml", "nrf52840"),
        ("ble_sensor.yaml", "nrf52840"),
        ("memory_slab.yaml", "nrf52840"),
        ("crypto_aes_gcm.yaml", "native_sim"),
        ("net_telemetry.yaml", "native_sim"),
        ("mesh_onoff.yaml", "nrf52840"),
    ],
)
def test_a_37_app_differs_from_the_41_app_only_by_release_facts(example: str, target: str) -> None:
    v37, v41 = _files(example, target, "3.7"), _files(example, target, "4.1")
    assert v37 != v41
    assert _undo_release(v37) == v41


def test_the_37_app_uses_the_37_spellings() -> None:
    assert "#include <zephyr/net/buf.h>" in _files("ble_central.yaml", "nrf52840", "3.7")["src/main.c"]
    assert "BT_LE_ADV_OPT_CONNECTABLE" in _files("ble_sensor.yaml", "nrf52840", "3.7")["src/main.c"]
    slab = _files("memory_slab.yaml", "nrf52840", "3.7")["src/main.c"]
    assert "thread_analyzer_print();" in slab
    assert slab.index("<zephyr/kernel.h>") < slab.index("<zephyr/debug/thread_analyzer.h>")
    assert "CONFIG_MBEDTLS_PSA_CRYPTO_EXTERNAL_RNG=y" in _files("crypto_aes_gcm.yaml", "native_sim", "3.7")["prj.conf"]
    overlay = _files("adc_dt.yaml", "stm32f407", "3.7")["boards/stm32f4_disco.overlay"]
    block = overlay[overlay.index("&adc1 {") :]
    assert block.index("st,adc-prescaler = <2>;") < block.index("channel@")
    assert "st,adc-prescaler" not in _files("adc_dt.yaml", "stm32f407", "4.1")["boards/stm32f4_disco.overlay"]


def test_the_verifier_judges_against_the_release_header_model() -> None:
    files = _files("ble_central.yaml", "nrf52840", "3.7")
    on37 = for_release(load_target("nrf52840"), "zephyr", "3.7")
    assert verify_sources(files, "zephyr", on37).ok
    files["src/main.c"] = files["src/main.c"].replace("<zephyr/net/buf.h>", "<zephyr/net_buf.h>")
    codes = {e.code for e in verify_sources(files, "zephyr", on37).evidence}
    assert "E_HEADER_RELEASE" in codes  # zephyr/net_buf.h is a 4.x header: 3.7 ships zephyr/net/buf.h
    slab = _files("memory_slab.yaml", "nrf52840", "4.1")
    arity = {e.code for e in verify_sources(slab, "zephyr", on37).evidence}
    assert "E_API_ARITY" in arity  # thread_analyzer_print(0) is the 4.x signature


def test_protected_storage_is_refused_on_37_with_relaxations_that_validate() -> None:
    result = run_plan(EXAMPLES / "crypto_protected_store.yaml", zephyr_version="3.7")
    assert result.status is Status.INVALID
    refusals = [e for e in result.evidence if e.code == "E_TARGET_UNSUPPORTED"]
    assert refusals and all("Zephyr 3.7" in e.message and "SECURE_STORAGE" in e.message for e in refusals)
    refused, relaxation = next((e, r) for e in refusals for r in e.relaxations if "settings_value" in r.description)
    plan = yaml.safe_load((EXAMPLES / "crypto_protected_store.yaml").read_text(encoding="utf-8"))
    relaxed = run_plan(relaxation.apply(plan), zephyr_version="3.7")
    assert not [e for e in relaxed.evidence if e.location.endswith(refused.location.rsplit(": ", 1)[-1])]
    assert run_plan(EXAMPLES / "crypto_protected_store.yaml", zephyr_version="4.1").status is Status.PASS


def test_a_west_workspace_of_another_release_is_refused_before_building(tmp_path: Path) -> None:
    (tmp_path / "VERSION").write_text("VERSION_MAJOR = 3\nVERSION_MINOR = 7\nPATCHLEVEL = 1\n")
    mismatch = release_mismatch("4.1", tmp_path)
    assert mismatch is not None and mismatch.code == "E_SDK_VERSION"
    assert "--zephyr-version 3.7" in mismatch.message
    assert release_mismatch("3.7", tmp_path) is None
