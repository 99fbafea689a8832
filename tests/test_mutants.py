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
