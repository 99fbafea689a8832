"""On-board smoke tests, written as ordinary pytest tests over the ``dut`` fixture.

Each test runs once per chosen bench board; the ``dut`` flashes the board's app after the target
match (or runs it in QEMU for an emulated entry) and judges the console with the ordered-regex engine.
"""

from __future__ import annotations


def test_board_smoke_expectations(dut):
    """The bench entry's own expectations hold, and the console was captured for the record."""
    result = dut.expect()
    assert result.verdicts and all(v.passed for v in result.verdicts)
    assert result.log is not None and result.log.read_text(errors="replace").strip()


def test_hello_line_comes_within_five_seconds(dut):
    """An explicit expectation with its own deadline, as a test author would write one."""
    result = dut.expect(r"hello from rac-fw", timeout=5.0)
    assert result.verdicts[0].measured is not None
