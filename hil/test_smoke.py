"""On-board smoke tests, written against pytest-embedded's DUT API (``dut.expect``, ``expect_exact``,
``dut.logfile``): the same file runs on the QEMU board in CI and on a bench engineer's real board.

Each test runs once per chosen bench board. Before the first byte, rac-fw built the board's app (or
``--app``), refused it unless it was generated for the board's target, and flashed it with the bench
file's runner (or started it in QEMU).
"""

from __future__ import annotations

import re
import time
from pathlib import Path


def test_bench_expectations_hold_in_order(dut):
    """The bench entry's own console expectations (``expect:``), in order, with its deadline; a line the
    entry forbids (``forbid:``) or a self-test FAIL line before them fails the test."""
    assert dut.board.expect, f"bench entry {dut.board.id} names no `expect:` lines"
    for pattern in dut.board.expect:
        dut.expect(pattern, timeout=dut.board.timeout, not_matching=[*dut.board.forbid, r"rac: \S+ (FAIL|FAULT)"])


def test_boot_banner_then_every_operation_reports_ok(dut):
    """rac-fw firmware prints ``rac: boot``, one ``rac: <op> ok`` per operation and ``rac: done``."""
    dut.expect_exact("rac: boot", timeout=dut.board.timeout)
    before_done = dut.expect(re.compile(rb"rac: done"), timeout=dut.board.timeout, return_what_before_match=True)
    ops = re.findall(rb"rac: (\S+) ok", before_done)
    assert ops, before_done
    assert b"FAIL" not in before_done


def test_console_is_in_the_log_file(dut):
    """pytest-embedded keeps the console in ``dut.logfile``: the record a failing bench run leaves."""
    match = dut.expect(r"hello from rac-fw", timeout=dut.board.timeout)
    assert match.group(0) == b"hello from rac-fw"
    log = Path(dut.logfile)
    deadline = time.monotonic() + 5.0  # the log is written by pytest-embedded's listener process
    while b"hello from rac-fw" not in (log.read_bytes() if log.is_file() else b"") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert b"hello from rac-fw" in log.read_bytes()
