"""The static verifier knows the kernel work-queue and task-watchdog APIs: one bad source per new rule.

Each file ``tests/bad_sources/zephyr/kernel_*.c`` carries one defect and a ``/* expect: E_CODE */`` marker
on the line the evidence must point at (the Kconfig one at ``prj.conf``); nothing else may fire. The
rules are the fragment ``verify/sdk/zephyr/rules.d/kernel.yaml``, the signatures
``api.d/kernel.json`` and the header model ``headers.d/kernel.json``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rac_fw.domains.firmware.verify.artifact import verify_sources

SOURCES = Path(__file__).resolve().parent / "bad_sources" / "zephyr"

#: Bad source → where its evidence must point (None: the marked line of src/main.c) and its prj.conf.
CASES = {
    "kernel_task_wdt_add_before_init": (None, "kernel_prj.conf"),
    "kernel_task_wdt_feed_unchecked": (None, "kernel_prj.conf"),
    "kernel_task_wdt_callback_sleeps": (None, "kernel_prj.conf"),
    "kernel_work_submit_unchecked": (None, "kernel_prj.conf"),
    "kernel_queue_not_started": (None, "kernel_prj.conf"),
    "kernel_task_wdt_no_kconfig": ("prj.conf", "prj.conf"),
    "kernel_lifo_get_unchecked": (None, "kernel_prj.conf"),
    "kernel_lifo_not_initialized": (None, "kernel_prj.conf"),
    "kernel_zero_latency_no_kconfig": ("prj.conf", "kernel_prj.conf"),
    "kernel_timing_no_kconfig": ("prj.conf", "kernel_prj.conf"),
    "kernel_timing_start_before_init": (None, "timing_prj.conf"),
}


def _expected(text: str) -> tuple[str, int]:
    lines = text.splitlines()
    return next((m.group(1), i + 1) for i, t in enumerate(lines) if (m := re.search(r"expect: (E_\w+)", t)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_kernel_defect_is_caught_at_its_line(name: str) -> None:
    location, conf = CASES[name]
    text = (SOURCES / f"{name}.c").read_text()
    code, line = _expected(text)
    files = {"src/main.c": text, "prj.conf": (SOURCES / "support" / conf).read_text()}
    result = verify_sources(files, "zephyr", None)
    codes = {e.code for e in result.evidence}
    assert codes == {code}, [(e.code, e.location, e.message) for e in result.evidence]
    where = {e.location for e in result.evidence}
    if location is None:
        assert any(w.startswith(f"src/main.c:{line}") for w in where), where
    else:
        assert location in where, where


def test_every_kernel_bad_source_is_exercised() -> None:
    assert {p.stem for p in SOURCES.glob("kernel_*.c")} == set(CASES)


def test_the_good_twins_verify_clean() -> None:
    """The same sources with the defect repaired are clean: each rule fires on the defect only."""
    fixed = (
        (SOURCES / "kernel_task_wdt_feed_unchecked.c")
        .read_text()
        .replace(
            "\t\ttask_wdt_feed(channel); /* expect: E_UNCHECKED_RETURN */",
            "\t\tif (task_wdt_feed(channel) < 0) {\n\t\t\treturn 0;\n\t\t}",
        )
    )
    conf = (SOURCES / "support" / "kernel_prj.conf").read_text()
    result = verify_sources({"src/main.c": fixed, "prj.conf": conf}, "zephyr", None)
    assert result.ok, [(e.code, e.location, e.message) for e in result.evidence]
