"""``rac-fw verify`` and the firmware task suite: real trees, real CLI, the suite's own references."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rac_fw.contract import Status
from rac_fw.domains.firmware.domain import FirmwareDomain
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.tasks import expressible, get_task, suite
from rac_fw.domains.firmware.tasks.calibrate import calibrate_task
from rac_fw.resources import data_dir

H7_TASK = "fw/dma/copy_1k@stm32h743-zephyr"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rac_fw.cli", *args], capture_output=True, text=True, timeout=120)


def _write(tmp_path: Path, plan: Path | dict, target: str, framework: str) -> Path:
    out = tmp_path / f"{target}-{framework}"
    result = run_plan(plan, target=target, framework=framework, out_dir=out)
    assert result.status is Status.PASS, result.evidence
    return out


def test_suite_lists_families_obligations_and_gaps() -> None:
    tasks = suite()
    assert len(tasks) >= 180
    assert len(expressible()) >= 120
    assert sum(1 for t in tasks.values() if t.obligation) >= 20
    gaps = {t.family for t in tasks.values() if t.status == "unexpressible"}
    assert {"storage", "ota", "ble", "networking", "security", "power", "devicetree", "kconfig"} <= gaps
    assert all(t.missing for t in tasks.values() if t.status == "unexpressible")
    domain = FirmwareDomain()
    assert "nrf52840" in domain.tasks() and H7_TASK in domain.tasks()


def test_verify_cli_clean_tree_then_broken_cache_maintenance(tmp_path: Path) -> None:
    tree = _write(tmp_path, data_dir("examples") / "dma_h7_cache.yaml", "stm32h743", "zephyr")
    ok = _cli("verify", str(tree), "--target", "stm32h743", "--framework", "zephyr", "--task", H7_TASK, "--json")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    passed = json.loads(ok.stdout)
    assert passed["status"] == "pass" and any(v["predicate"].startswith("task.") for v in passed["verdicts"])
    main = tree / "src" / "main.c"
    main.write_text(main.read_text().replace("sys_cache_data_invd_range(app_copy_dst", "(void)(app_copy_dst"))
    bad = _cli("verify", str(tree), "--target", "stm32h743", "--framework", "zephyr", "--task", H7_TASK, "--json")
    assert bad.returncode == 1
    codes = {e["code"] for e in json.loads(bad.stdout)["evidence"]}
    assert {"E_CACHE_INVALIDATE_MISSING", "E_TASK_CALL_MISSING"} <= codes


def test_verify_single_file_and_invalid_input(tmp_path: Path) -> None:
    tree = _write(tmp_path, data_dir("examples") / "uart_hello.yaml", "nrf52840", "zephyr")
    single = _cli("verify", str(tree / "src" / "main.c"), "--target", "nrf52840", "--framework", "zephyr", "--json")
    judged = json.loads(single.stdout)
    verdicts = {v["predicate"]: v["passed"] for v in judged["verdicts"]}
    assert single.returncode == 1 and verdicts["c_parses"] and verdicts["sdk_apis_known"]
    assert not verdicts["kconfig_consistent"]  # one C file alone: no prj.conf to enable what it calls
    missing = _cli("verify", str(tmp_path / "absent"), "--target", "nrf52840", "--framework", "zephyr")
    assert missing.returncode == 2 and "E_FILE" in missing.stdout
    wrong = _cli("verify", str(tree), "--target", "nrf52840", "--framework", "zephyr", "--task", H7_TASK)
    assert wrong.returncode == 2 and "E_TASK_MISMATCH" in wrong.stdout and "Traceback" not in wrong.stderr


def test_the_f407_artifact_does_not_meet_the_h743_obligation(tmp_path: Path) -> None:
    """Same requirement, different chips: the F407 program lacks the H743's cache maintenance."""
    tree = _write(tmp_path, data_dir("examples") / "dma_h7_cache.yaml", "stm32f407", "zephyr")
    judged = _cli("verify", str(tree), "--target", "stm32h743", "--framework", "zephyr", "--task", H7_TASK)
    assert judged.returncode == 1 and "E_TASK_CALL_MISSING" in judged.stdout


def test_calibration_of_a_subset_passes_including_qemu_console() -> None:
    ids = (H7_TASK, "fw/uart/hello@stm32f407-baremetal", "fw/adc/wifi_safe_adc@esp32s3-espidf")
    rows = [calibrate_task(t) for t in map(get_task, ids) if t is not None]
    assert len(rows) == 3 and all(r.passed for r in rows), [r.detail for r in rows]
