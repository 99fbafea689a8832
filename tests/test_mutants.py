"""The firmware suite rejects every mutant of ``tasks/mutants.yaml`` for the reason it stands for.

≥ 40 wrong sources, among them the six issue 28 names (cache maintenance inside ``if (0)``, no memcmp of
the copy, a 16-byte DMA for 1 KiB, ``main()`` never copying but printing "copy ok", memcpy plus an
unreachable DMA call, the DMA call only in a string literal). The bare-metal ``runtime`` mutants run in
QEMU (real arm-none-eabi-gcc and qemu-system-arm; they fail, not skip, when CI=true and a tool is missing).
"""

from __future__ import annotations

import collections

import pytest
from conftest import require_tool

from rac_fw.domains.firmware.tasks import get_task
from rac_fw.domains.firmware.tasks.mutation import MutantError, mutants, mutate
from rac_fw.domains.firmware.tasks.mutation import judge_mutant as judge

ISSUE_SIX = {"cache_invalidate_in_if0", "copy_never_compared", "dma_16_bytes", "main_never_copies_but_says_ok",
             "memcpy_plus_unreachable_dma", "dma_start_in_string_literal"}


def test_the_suite_has_forty_mutants_in_many_classes_including_the_issues_six() -> None:
    ids = [m.id for m in mutants()]
    assert len(ids) >= 40 and len(set(ids)) == len(ids)
    assert set(ids) >= ISSUE_SIX
    classes = collections.Counter(m.kind for m in mutants())
    assert {"dead-code", "text-only", "reachability", "argument-value", "order", "runtime"} <= set(classes)
    assert all(get_task(m.task) is not None for m in mutants())


@pytest.mark.parametrize("mutant", [m for m in mutants() if m.kind != "runtime"], ids=lambda m: m.id)
def test_static_mutant_is_rejected(mutant) -> None:  # type: ignore[no-untyped-def]
    result = judge(mutant)
    assert result.rejected, (mutant.about, result.codes, result.unknown)


@pytest.mark.parametrize("mutant", [m for m in mutants() if m.kind == "runtime"], ids=lambda m: m.id)
def test_runtime_mutant_is_rejected_by_the_qemu_run(mutant) -> None:  # type: ignore[no-untyped-def]
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    result = judge(mutant)
    assert result.rejected and "E_CONSOLE_EXPECTATION" in result.codes, (result.codes, result.unknown)


def test_an_edit_that_no_longer_applies_is_reported() -> None:
    broken = mutants()[0].model_copy(update={"id": "gone", "edits": [mutants()[0].edits[0].model_copy(
        update={"old": "text that is not in the reference"})]})
    with pytest.raises(MutantError, match="no longer occurs"):
        mutate(broken)


def test_a_trace_check_holds_a_run_to_the_reference_receipts_predicted_trace() -> None:
    """The behaviour-layer hook: a task whose pass condition is "the run trace matches the plan's predicted
    trace" (kind ``trace``), taken from the reference plan's receipt, judged on a QEMU run."""
    from pathlib import Path

    from rac_fw.domains.firmware.facts.load import load_target
    from rac_fw.domains.firmware.pipeline import run_plan
    from rac_fw.domains.firmware.plan.load import load_plan
    from rac_fw.domains.firmware.tasks import Task
    from rac_fw.domains.firmware.tasks.checks import Trace
    from rac_fw.domains.firmware.tasks.judge import judge_sources, predicted_trace

    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    plan = load_plan(Path(__file__).resolve().parents[1] / "examples" / "behaviour_counter.yaml")
    reference = plan.model_dump(mode="json", exclude_none=True, exclude={"target", "framework"})
    task = Task(id="fw/behaviour/counter@stm32f407-baremetal", family="behaviour", name="counter",
                requirement="Print five items and their sum, toggling the LED each time.", target="stm32f407",
                framework="baremetal", status="expressible", reference=reference, checks=(Trace(kind="trace"),))
    found = predicted_trace(task)
    assert found is not None and found[0][-1]["line"] == "^rac: done$"
    files = run_plan(task.reference_plan()).lowered.files  # type: ignore[union-attr]
    ok = judge_sources(files, "baremetal", load_target("stm32f407"), task)
    assert ok.ok, [e.message for e in ok.verification.evidence]
    assert any("predicted trace" in v.predicate and v.passed for v in ok.verification.verdicts)
    main = files["src/main.c"]
    assert "(int32_t)5)" in main  # the loop count the plan states
    wrong = dict(files, **{"src/main.c": main.replace("(int32_t)5)", "(int32_t)4)", 1)})
    bad = judge_sources(wrong, "baremetal", load_target("stm32f407"), task)
    assert not bad.ok and "E_TRACE_MISMATCH" in {e.code for e in bad.verification.evidence}
    untraced = Task(id="fw/uart/untraced@stm32f407-baremetal", family="uart", name="untraced",
                    requirement="Print hello from rac-fw on the console.", target="stm32f407", framework="baremetal",
                    status="expressible", reference={"operations": [{"op": "uart_print", "message": "hi"}]},
                    checks=(Trace(kind="trace"),))
    refused = judge_sources(run_plan(untraced.reference_plan()).lowered.files,  # type: ignore[union-attr]
                            "baremetal", load_target("stm32f407"), untraced)
    assert "E_TASK_TRACE_UNPREDICTED" in {e.code for e in refused.verification.evidence}
