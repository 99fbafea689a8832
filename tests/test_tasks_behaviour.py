"""The behaviour tasks of the firmware suite: requirements judged by the run's trace, not by text.

Every task's reference (an example plan, patched) validates on its cell; on the STM32F407 in QEMU the
reference artifact passes calibration — its run matches the trace its reference predicts, line for line —
while the artifact of a neighbouring requirement (same console texts, another count) fails the trace check
with the strings all present: the pass condition is the run, not a text match. Where nothing runs (the
nRF52840 and STM32H743 have no QEMU model here) the C-model checks stand: every constant text the
requirement prints must be a string literal on a live path.
"""

from __future__ import annotations

import pytest

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.behaviour.console import predicted
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.tasks import Task, get_task, suite
from rac_fw.domains.firmware.tasks.calibrate import calibrate_task
from rac_fw.domains.firmware.tasks.judge import judge_sources
from tests.conftest import require_tool

BEHAVIOUR = [t for t in suite().values() if t.family == "behaviour"]
QEMU = [t for t in BEHAVIOUR if t.target == "stm32f407" and t.framework == "baremetal"]
#: Tasks calibrated end to end in QEMU here (every QEMU task takes ~2 min: ``rac-fw eval calibrate`` runs all).
CALIBRATED = [t.id for t in QEMU[::5]]


def _task(task_id: str) -> Task:
    task = get_task(task_id)
    assert task is not None, task_id
    return task


def test_suite_has_a_hundred_behaviour_tasks_judged_by_their_trace() -> None:
    assert len(BEHAVIOUR) >= 100
    assert len({t.name for t in BEHAVIOUR}) >= 50
    assert all(any(c.kind == "trace" for c in t.checks) for t in BEHAVIOUR)
    assert all(t.status == "expressible" and t.reference is not None for t in BEHAVIOUR)
    assert len(QEMU) >= 50


@pytest.mark.parametrize("task_id", [t.id for t in BEHAVIOUR])
def test_reference_validates_on_its_cell(task_id: str) -> None:
    task = _task(task_id)
    result = run_plan(task.reference_plan())
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    guess = predicted(parse_plan(task.reference_plan()), load_target(task.target), task.framework)
    assert guess is not None and guess.prediction.ends != "open", guess and guess.prediction.notes


@pytest.mark.parametrize("task_id", CALIBRATED)
def test_reference_artifact_passes_its_trace_in_qemu(task_id: str) -> None:
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    row = calibrate_task(_task(task_id))
    assert row.passed, row.detail


@pytest.mark.parametrize(("artifact_of", "judged_as"), [
    ("sum_items", "sum_items_seven"),
    ("swirq_counter", "swirq_counter_four"),
    ("threshold_alarm", "threshold_alarm_1700"),
    ("retry_then_fail", "retry_then_fail_five"),
])  # fmt: skip
def test_a_neighbouring_artifact_fails_the_trace_with_every_string_present(artifact_of: str, judged_as: str) -> None:
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    source = _task(f"fw/behaviour/{artifact_of}@stm32f407-baremetal")
    task = _task(f"fw/behaviour/{judged_as}@stm32f407-baremetal")
    lowered = run_plan(source.reference_plan()).lowered
    assert lowered is not None
    judged = judge_sources(lowered.files, "baremetal", load_target("stm32f407"), task)
    strings = [v for v in judged.verification.verdicts if v.predicate.startswith("task.string")]
    assert strings and all(v.passed for v in strings)
    traced = [v for v in judged.verification.verdicts if "predicted trace" in v.predicate]
    assert traced and not traced[0].passed and not judged.ok
    assert any(e.code == "E_TRACE_MISMATCH" for e in judged.verification.evidence)


def test_where_nothing_runs_the_c_model_checks_judge() -> None:
    task = _task("fw/behaviour/crc_frame@nrf52840-baremetal")
    lowered = run_plan(task.reference_plan()).lowered
    assert lowered is not None
    judged = judge_sources(lowered.files, "baremetal", load_target("nrf52840"), task, dynamic=False)
    assert judged.ok, [e.message for e in judged.verification.evidence]
    other = run_plan(_task("fw/behaviour/sum_items@nrf52840-baremetal").reference_plan()).lowered
    assert other is not None
    wrong = judge_sources(other.files, "baremetal", load_target("nrf52840"), task, dynamic=False)
    missing = {t for e in wrong.verification.evidence if e.code == "E_TASK_STRING_MISSING" for t in e.objects}
    assert {"CRC check values ok", "payload"} <= missing
