"""``heap_region``: a private k_heap whose peak demand the obligation judges with sys_heap's own arithmetic.

The arithmetic is checked against a hand-derived case from zephyr lib/heap/heap.c ``sys_heap_init`` and
heap.h ``bytes_to_chunksz``; the seeded violations (E_HEAP_TOO_SMALL, E_RAM_BUDGET through ``OpSpec.ram``)
name the objects and every relaxation validates once applied; the Zephyr realization tests every
allocation; the verifier knows that a k_heap is defined or initialised before its first allocation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from seeded_kernel import seeded

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.ops.memory.heap_region import chunks_needed, fits, free_chunks
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.resources import data_dir

HEAP = {"op": "heap_region", "name": "h", "heap_bytes": 1024, "blocks": 4, "block_bytes": 100, "alloc_timeout_ms": 0}
BAD = Path(__file__).resolve().parent / "bad_sources" / "zephyr"


def _plan(*ops: dict[str, Any]) -> dict[str, Any]:
    return {"target": "nrf52840", "framework": "zephyr", "operations": list(ops)}


def test_sys_heap_arithmetic() -> None:
    # 1024 B: the 4-byte end marker leaves 127 chunks; 7 buckets (127 < 2^7) make chunk 0 hold
    # 16 + 7 * 4 = 44 bytes = 6 chunks, so 121 chunks are free. A 100-byte block takes 12 whole chunks
    # plus (4 bytes left + 4-byte header) = 1 more: 13 chunks, so 9 fit and 10 do not.
    assert free_chunks(1024) == 121 and chunks_needed(100, 1024) == 13
    assert fits(1024, 9, 100) and not fits(1024, 10, 100)
    # A heap above 2^15 chunks (256 KiB) has 8-byte headers: a 100-byte block then takes 14 chunks.
    assert chunks_needed(100, 300_000) == 14


SEEDED = [
    ("peak-beyond-heap", _plan({**HEAP, "blocks": 10}), "E_HEAP_TOO_SMALL", {"h", "blocks"}),
    ("heap-beyond-ram", _plan({**HEAP, "heap_bytes": 1 << 20}), "E_RAM_BUDGET", {"h", "RAM"}),
]


@pytest.mark.parametrize(("case", "plan", "code", "objects"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_heap_violation_names_objects_and_every_relaxation_validates(
    case: str, plan: dict[str, Any], code: str, objects: set[str]
) -> None:
    evidence, broken = seeded(plan, code)
    assert objects <= set(evidence.objects), evidence.objects
    assert evidence.location == "operations[0].heap_bytes"
    assert broken == []


def test_too_small_states_usable_and_peak_bytes() -> None:
    evidence, _ = seeded(_plan({**HEAP, "blocks": 10}), "E_HEAP_TOO_SMALL")
    measured = {m.name: m.value for m in evidence.magnitudes}
    assert measured == {"heap": 1024, "usable": 968, "peak": 1040}
    assert [r.description for r in evidence.relaxations] == ["grow the heap to 1096 bytes", "allocate 9 blocks at once"]


def test_zephyr_heap_defines_allocates_with_the_plans_timeout_and_tests_each_block() -> None:
    plan = load_plan(data_dir("examples") / "memory_heap.yaml")
    main = lower(plan, load_target("nrf52840"), "zephyr").files["src/main.c"]
    assert "K_HEAP_DEFINE(app_frames_heap, 1024);" in main
    alloc = main.index("k_heap_alloc(&app_frames_heap, 100, K_NO_WAIT);")
    assert main.index("if (taken[got] == NULL) {", alloc) < main.index("memset(taken[got]", alloc)
    assert "k_heap_free(&app_frames_heap, taken[i]);" in main


def test_the_verifier_wants_a_heap_initialised_before_its_first_allocation() -> None:
    text = (BAD / "memory_heap_not_initialized.c").read_text()
    line = next(i + 1 for i, t in enumerate(text.splitlines()) if "expect: E_CALL_MISSING" in t)
    conf = (BAD / "support" / "kernel_prj.conf").read_text()
    result = verify_sources({"src/main.c": text, "prj.conf": conf}, "zephyr", None)
    assert [(e.code, e.location.split(" ")[0]) for e in result.evidence] == [("E_CALL_MISSING", f"src/main.c:{line}")]
    fixed = text.replace("static struct k_heap frames;", "K_HEAP_DEFINE(frames, 256);")
    assert verify_sources({"src/main.c": fixed, "prj.conf": conf}, "zephyr", None).ok
