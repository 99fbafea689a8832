"""The firmware domain through the runtime and the CLI: tasks are targets, actions are plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rac_fw.cli import app
from rac_fw.contract import Action, Feedback, Status, apply_patch, sha256_of
from rac_fw.domain import UnknownTask, load_domain
from rac_fw.domains.firmware.domain import FirmwareDomain
from rac_fw.domains.firmware.facts.load import target_ids
from rac_fw.runtime import Episode

PLANS = Path(__file__).parent / "plans"
DTCM_PLAN = {
    "framework": "hal",
    "resources": {
        "buffers": [{"name": "adc_buf", "size_bytes": 64, "role": "dma_rx", "element_bytes": 2, "placement": "DTCM"}]
    },
    "operations": [{"op": "adc_scan", "channels": [{"pin": "PA0"}], "buffer": "adc_buf"}],
}


@pytest.fixture(scope="module")
def domain() -> FirmwareDomain:
    loaded = load_domain("firmware")
    assert isinstance(loaded, FirmwareDomain)
    return loaded


def _submit(domain: FirmwareDomain, task: str, payload: dict[str, object]) -> Feedback:
    return Episode(domain, task).submit(Action(domain="firmware", task=task, payload=payload))


def test_tasks_are_the_suite_and_the_target_packs(domain: FirmwareDomain) -> None:
    tasks = domain.tasks()
    assert tasks[-len(target_ids()):] == target_ids() and all(t.startswith("fw/") for t in tasks[: -len(target_ids())])
    with pytest.raises(UnknownTask):
        domain.observe("stm32f999")


def test_observation_summary_and_detail(domain: FirmwareDomain) -> None:
    obs = domain.observe("stm32h743")
    assert "NUCLEO-H743ZI" in obs.summary and obs.data["target"] == "stm32h743"
    assert len(json.dumps(obs.data)) < 12_000
    pin = domain.observe("stm32h743", "pin PA9")
    assert pin.data["detail"] == "pin" and "USART1_TX" in json.dumps(pin.data)
    with pytest.raises(LookupError):
        domain.observe("stm32h743", "gizmo X")


def test_dtcm_dma_buffer_is_rejected_with_reachable_regions(domain: FirmwareDomain) -> None:
    feedback = _submit(domain, "stm32h743", DTCM_PLAN)
    assert feedback.status is Status.INVALID and feedback.observation is not None
    hit = next(e for e in feedback.evidence if e.code == "E_DMA_UNREACHABLE")
    assert hit.location == "payload.resources.buffers[0].placement"
    assert {"adc_buf", "DTCM"} <= set(hit.objects)
    regions = [step["value"] for r in hit.relaxations for step in r.patch]
    assert "AXI_SRAM" in regions and "DTCM" not in regions
    repaired = apply_patch(DTCM_PLAN, hit.relaxations[0].patch)
    assert domain.validate("stm32h743", Action(domain="firmware", task="stm32h743", payload=repaired)).ok


def test_pa9_for_uart_and_led_is_a_pin_conflict(domain: FirmwareDomain) -> None:
    payload = {
        "resources": {"pins": [{"name": "tx", "pin": "PA9", "function": "USART1_TX"}, {"name": "led", "pin": "PA9"}]},
        "operations": [
            {"op": "uart_print", "uart": "USART1", "message": "hello"},
            {"op": "gpio_blink", "led": "led", "period_ms": 500},
        ],
    }
    feedback = _submit(domain, "stm32h743", payload)
    conflict = next(e for e in feedback.evidence if e.code == "E_PIN_CONFLICT")
    assert {"PA9", "tx", "led"} <= set(conflict.objects)
    assert conflict.location == "payload.resources.pins[1].pin"


def test_malformed_plan_and_target_mismatch_are_located(domain: FirmwareDomain) -> None:
    bad = _submit(domain, "nrf52840", {"operations": [{"op": "uart_print", "message": "x", "baud": 7}]})
    assert [(e.code, e.location) for e in bad.evidence] == [("E_PLAN_FIELD", "payload.operations[0].baud")]
    payload = {"target": "stm32f407", "operations": [{"op": "uart_print", "message": "x"}]}
    mismatch = domain.validate("nrf52840", Action(domain="firmware", task="nrf52840", payload=payload))
    assert [e.code for e in mismatch.evidence] == ["E_TARGET_MISMATCH"]
    fixed = apply_patch(payload, mismatch.evidence[0].relaxations[0].patch)
    assert domain.validate("nrf52840", Action(domain="firmware", task="nrf52840", payload=fixed)).ok


def test_valid_plan_realizes_deterministically_and_verifies(domain: FirmwareDomain) -> None:
    payload = yaml.safe_load((PLANS / "native_sim_zephyr.yaml").read_text())
    first = _submit(domain, "native_sim", payload)
    again = _submit(domain, "native_sim", payload)
    assert first.status is Status.PASS, [(e.code, e.message) for e in first.evidence]
    assert first.artifact_hash is not None and first.artifact_hash == again.artifact_hash
    plan = domain.validate("native_sim", Action(domain="firmware", task="native_sim", payload=payload)).action
    realization = domain.realize("native_sim", plan, seed=0)
    assert realization.artifact["framework"] == "zephyr" and realization.artifact["files"]
    assert realization.artifact_hash == sha256_of(realization.artifact) == first.artifact_hash
    forged_files = {path: "0" * 64 for path in realization.artifact["files"]}
    forged = realization.model_copy(update={"artifact": {**realization.artifact, "files": forged_files}})
    verdict = domain.verify("native_sim", plan, forged)
    assert not verdict.ok and verdict.verdicts[0].predicate == "artifact_integrity"


def test_cli_submit_and_schema(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(yaml.safe_dump(DTCM_PLAN))
    runner = CliRunner()
    result = runner.invoke(app, ["submit", "firmware", "stm32h743", str(plan_file), "--json"])
    assert result.exit_code == 2
    document = json.loads(result.stdout)
    codes = [e["code"] for e in document["evidence"]]
    assert "E_DMA_UNREACHABLE" in codes
    schema = runner.invoke(app, ["schema", "firmware"])
    assert schema.exit_code == 0
    assert "gpio_blink" in json.loads(schema.stdout)["properties"]["operations"]["items"]["discriminator"]["mapping"]


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"operations": "gpio_blink"},
        {"operations": [None, 3, "x", []]},
        {"operations": [{"op": "gpio_blink", "led": {"nested": True}, "period_ms": "fast"}]},
        {"operations": [{"op": "uart_print", "message": "%s%n\\x00"}], "resources": {"pins": "PA9"}},
        {"operations": [{"op": "dma_mem2mem", "src": "a", "dst": "a"}], "heap_bytes": -1},
        {"operations": [{"op": "adc_scan", "channels": [{"pin": "PA0", "path": "zephyr_user"}]}]},
        {"operations": [{"op": "log", "message": "x", "values": ["nobody"], "in_isr_of": "nothing"}]},
        {"target": 42, "operations": [{"op": "uart_print", "message": "x"}]},
    ],
)
def test_malformed_payloads_become_evidence_not_exceptions(domain: FirmwareDomain, payload: dict[str, object]) -> None:
    for task in ("stm32h743", "esp32s3"):
        validation = domain.validate(task, Action(domain="firmware", task=task, payload=payload))
        assert not validation.ok and validation.evidence
        assert all(e.location and e.location.startswith("payload") for e in validation.evidence)


def test_a_turn_runs_each_orchestration_stage_once(domain: FirmwareDomain) -> None:
    """The domain's validate/realize/verify are the pipeline's stages, one execution each."""
    from rac_fw.domains.firmware.pipeline import stage_log

    plan = yaml.safe_load((PLANS.parent.parent / "examples" / "gpio_blink.yaml").read_text())
    with stage_log() as log:
        feedback = _submit(domain, "stm32f407", {**plan, "target": "stm32f407"})
    assert feedback.status is Status.PASS, feedback.evidence
    assert [r.stage for r in log] == ["parse", "resolve", "check", "lower", "verify"]


def test_rac_fw_plan_runs_each_stage_once(tmp_path: Path) -> None:
    from rac_fw.domains.firmware.pipeline import run_plan, stage_log

    with stage_log() as log:
        result = run_plan(PLANS.parent.parent / "examples" / "gpio_blink.yaml", target="stm32f407",
                          out_dir=tmp_path / "app")
    assert result.status is Status.PASS, result.evidence
    assert [r.stage for r in log] == ["parse", "resolve", "check", "lower", "verify", "write"]
    assert set(result.timings_ms) == {"parse", "resolve", "check", "lower", "verify", "write", "total"}
