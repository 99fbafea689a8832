"""The configuration checks that catch what the SDKs' own tools reject (``verify/kconfig.py``, ``verify/dtc.py``).

Each bad fixture in ``tests/bad_config/`` replaces the matching file of a clean generated app and must be
refused with its code; the example matrix (``test_examples_matrix.py``) is the no-false-alarm side, since every
cell is verified with these checks registered. The Kconfig facts themselves are pinned where the real trees
and the hand builds said so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.kconfig import enabled, holds, kconfig_facts, minimum, range_of
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.sdk import for_release
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.resources import data_dir
from tests.conftest import require_tool

BAD = Path(__file__).parent / "bad_config"


def _clean(example: str, target: str, framework: str = "zephyr") -> dict[str, str]:
    result = run_plan(data_dir("examples") / example, target=target, framework=framework)
    assert result.status is Status.PASS and result.lowered is not None
    return dict(result.lowered.files)


def _codes(files: dict[str, str], target: str, framework: str = "zephyr") -> list[str]:
    return sorted(e.code for e in verify_sources(files, framework, load_target(target)).evidence)


@pytest.mark.parametrize(
    ("fixture", "code"),
    [
        ("prj_malformed.conf", "E_KCONFIG_SYNTAX"),
        ("prj_unknown.conf", "E_KCONFIG_UNKNOWN"),
        ("prj_range.conf", "E_KCONFIG_RANGE"),
        ("prj_depends.conf", "E_KCONFIG_DEPENDS"),
    ],
)
def test_the_kconfig_check_rejects_a_bad_prj_conf(fixture: str, code: str) -> None:
    files = _clean("ble_sensor.yaml", "nrf52840")
    files["prj.conf"] = (BAD / fixture).read_text(encoding="utf-8")
    verification = verify_sources(files, "zephyr", load_target("nrf52840"))
    found = [e for e in verification.evidence if e.code == code]
    assert found, [e.code for e in verification.evidence]
    assert found[0].location.startswith("prj.conf:") and found[0].relaxations
    assert not next(v for v in verification.verdicts if v.predicate == "kconfig_consistent").passed


def test_the_kconfig_check_names_the_missing_dependency_and_the_range() -> None:
    files = _clean("ble_sensor.yaml", "nrf52840")
    files["prj.conf"] = (BAD / "prj_depends.conf").read_text(encoding="utf-8")
    (depends,) = [e for e in verify_sources(files, "zephyr", load_target("nrf52840")).evidence
                  if e.code == "E_KCONFIG_DEPENDS"]  # fmt: skip
    assert "CONFIG_LOG_MODE_DEFERRED" in depends.objects
    files["prj.conf"] = (BAD / "prj_range.conf").read_text(encoding="utf-8")
    evidence = verify_sources(files, "zephyr", load_target("nrf52840")).evidence
    (out,) = [e for e in evidence if e.code == "E_KCONFIG_RANGE"]
    assert "69..65535" in out.objects and "BT_SMP" in out.message


def test_a_symbol_of_a_later_release_is_unknown_on_the_earlier_one() -> None:
    files = _clean("crypto_protected_store.yaml", "nrf52840")
    assert "CONFIG_SECURE_STORAGE=y" in files["prj.conf"]
    assert _codes(files, "nrf52840") == []
    on_37 = verify_sources(files, "zephyr", for_release(load_target("nrf52840"), "zephyr", "3.7"))
    unknown = [e for e in on_37.evidence if e.code == "E_KCONFIG_UNKNOWN"]
    assert unknown and "came with zephyr 4.1" in unknown[0].message


def test_app_declared_symbols_are_known() -> None:
    files = _clean("net_https.yaml", "native_sim")
    assert "config RAC_CRED_" in files["Kconfig"]
    assert _codes(files, "native_sim") == []


def test_the_sdkconfig_check_refuses_renamed_names() -> None:
    files = _clean("timer_oneshot.yaml", "esp32s3", "espidf")
    assert "CONFIG_GPTIMER_ISR_CACHE_SAFE=y" in files["sdkconfig.defaults"]
    assert "IRAM_SAFE" not in files["sdkconfig.defaults"]
    files["sdkconfig.defaults"] = (BAD / "sdkconfig_renamed.defaults").read_text(encoding="utf-8")
    evidence = verify_sources(files, "espidf", load_target("esp32s3")).evidence
    (renamed,) = [e for e in evidence if e.code == "E_SDKCONFIG_RENAMED"]
    assert renamed.objects == ["CONFIG_GPTIMER_ISR_IRAM_SAFE", "CONFIG_GPTIMER_ISR_CACHE_SAFE"]
    assert renamed.relaxations[0].description == "write CONFIG_GPTIMER_ISR_CACHE_SAFE=y"


def test_generated_espidf_files_say_the_release_they_are_written_for() -> None:
    files = _clean("uart_hello.yaml", "esp32s3", "espidf")
    assert "ESP-IDF v5.5" in files["CMakeLists.txt"] and "ESP-IDF v5.5" in files["sdkconfig.defaults"]
    assert "v5.4" not in "".join(files.values())


def test_kconfig_facts_evaluate_like_kconfig() -> None:
    facts = kconfig_facts("zephyr")
    assert facts is not None
    assert holds("!MPU_STACK_GUARD && !USERSPACE", {"LOG"}) and not holds("A && (B || C)", {"A"})
    closed = enabled(facts, "4.1", {"BT", "BT_PERIPHERAL"})
    assert {"BT_BROADCASTER", "BT_CONN"} <= closed  # selected
    assert "BT_CTLR_ADV_EXT" in enabled(facts, "4.1", {"BT", "BT_BROADCASTER", "BT_EXT_ADV"})  # default y if
    symbol = facts.symbol("BT_CTLR_ADV_DATA_LEN_MAX", "4.1")
    assert symbol is not None
    limits = range_of(symbol, frozenset())
    assert limits is not None and limits.max == 191
    assert minimum("zephyr", "4.1", "BT_L2CAP_TX_MTU", frozenset({"BT", "BT_PERIPHERAL", "BT_SMP"})) == 65
    assert minimum("zephyr", "4.1", "BT_L2CAP_TX_MTU", frozenset({"BT", "BT_PERIPHERAL"})) == 23
    assert facts.symbol("SECURE_STORAGE", "3.7") is None and facts.symbol("SECURE_STORAGE", "4.1") is not None
    idf = kconfig_facts("espidf")
    assert idf is not None and idf.rename("GPTIMER_ISR_IRAM_SAFE", "5.5") == "GPTIMER_ISR_CACHE_SAFE"


def test_dtc_rejects_the_duplicate_property_overlay() -> None:
    require_tool("dtc")
    files = _clean("dma_uart_rx.yaml", "stm32f407")
    overlay = next(p for p in files if p.endswith(".overlay"))
    assert _codes(files, "stm32f407") == []
    files[overlay] = (BAD / "duplicate_dmas.overlay").read_text(encoding="utf-8")
    evidence = verify_sources(files, "zephyr", load_target("stm32f407")).evidence
    duplicates = [e for e in evidence if e.code == "E_DT_DUPLICATE_PROPERTY"]
    assert {e.objects[0] for e in duplicates} == {"dmas", "dma-names"}
    assert all(e.location.startswith(overlay) for e in duplicates)


def test_dtc_rejects_a_syntax_error() -> None:
    require_tool("dtc")
    files = _clean("dma_uart_rx.yaml", "stm32f407")
    overlay = next(p for p in files if p.endswith(".overlay"))
    files[overlay] = (BAD / "syntax_error.overlay").read_text(encoding="utf-8")
    evidence = verify_sources(files, "zephyr", load_target("stm32f407")).evidence
    assert [e.location for e in evidence if e.code == "E_DT_SYNTAX"] == [f"{overlay}:4"]


def test_every_zephyr_overlay_of_the_examples_compiles_with_dtc_on_both_releases() -> None:
    require_tool("dtc")
    examples = ("adc_dt.yaml", "adc_scan.yaml", "dma_uart_rx.yaml", "devicetree_pinctrl.yaml", "sensor_external.yaml",
                "spi_dma.yaml", "can_loopback.yaml", "power_runtime.yaml")  # fmt: skip
    checked = 0
    for example in examples:
        for version in ("3.7", "4.1"):
            for target in ("nrf52840", "stm32f407", "stm32h743", "native_sim"):
                result = run_plan(data_dir("examples") / example, target=target, zephyr_version=version)
                if result.status is Status.INVALID:
                    continue
                assert result.status is Status.PASS, (example, target, version, [e.message for e in result.evidence])
                checked += 1
    assert checked >= 20
