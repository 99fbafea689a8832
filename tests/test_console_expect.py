"""The ordered-regex console engine: order, forbid, timeout and EOF over a real byte stream (a pipe)."""

from __future__ import annotations

import os
import select
import threading
import time

import pytest

from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.verify.console import (
    ExpectationError,
    Expectations,
    match_stream,
    match_text,
    plan_expectations,
)


def _pipe_reader(chunks: list[tuple[float, bytes]]):
    """A real OS pipe fed by a thread (delay, bytes…), closed at the end; returns read_chunk."""
    read_fd, write_fd = os.pipe()

    def feed() -> None:
        for delay, data in chunks:
            time.sleep(delay)
            os.write(write_fd, data)
        os.close(write_fd)

    threading.Thread(target=feed, daemon=True).start()

    def read_chunk(wait_s: float) -> bytes | None:
        ready, _, _ = select.select([read_fd], [], [], wait_s)
        if not ready:
            return b""
        data = os.read(read_fd, 4096)
        return data or None

    return read_chunk


def test_ordered_patterns_match_across_chunk_boundaries() -> None:
    reader = _pipe_reader([(0, b"rac: bo"), (0.01, b"ot x\r\nnoise\r\nhel"), (0.01, b"lo\r\nrac: done\r\n")])
    result = match_stream(reader, Expectations((r"^rac: boot\b", "hello", r"^rac: done$"), 2.0))
    assert result.ok
    assert [m.line for m in result.matches] == ["rac: boot x", "hello", "rac: done"]
    assert [m.line_number for m in result.matches] == [1, 3, 4]
    assert all(v.passed for v in result.verdicts())
    assert result.evidence() == []


def test_order_matters_and_evidence_names_the_missing_pattern() -> None:
    result = match_text("second\nfirst\n", Expectations(("first", "second"), 1.0))
    assert not result.ok
    assert [v.passed for v in result.verdicts()] == [True, False]
    (evidence,) = result.evidence()
    assert evidence.code == "E_CONSOLE_EXPECTATION"
    assert evidence.objects == ["second"]
    assert "after line 2" in evidence.message and "the console closed" in evidence.message


def test_timeout_is_bounded_and_reported() -> None:
    reader = _pipe_reader([(0, b"booting\n"), (5.0, b"late\n")])
    started = time.monotonic()
    result = match_stream(reader, Expectations(("booting", "late"), 0.3))
    elapsed = time.monotonic() - started
    assert 0.3 <= elapsed < 1.0
    assert not result.ok and not result.closed
    (evidence,) = result.evidence()
    magnitudes = {m.name: m.value for m in evidence.magnitudes}
    assert magnitudes["expectations_met"] == 1 and magnitudes["waited"] >= 0.3
    assert "0.3 s passed" in evidence.message


def test_forbidden_line_fails_fast() -> None:
    reader = _pipe_reader([(0, b"rac: boot\nrac: adc FAIL timeout\n"), (3.0, b"rac: done\n")])
    started = time.monotonic()
    result = match_stream(reader, Expectations(("rac: boot", "rac: done"), 5.0, forbid=(r"\bFAIL\b",)))
    assert time.monotonic() - started < 1.0
    assert result.forbidden is not None and result.forbidden.line_number == 2
    assert result.evidence()[0].code == "E_CONSOLE_FORBIDDEN"
    assert result.verdicts()[-1].passed is False


def test_invalid_regex_is_a_located_error() -> None:
    with pytest.raises(ExpectationError, match=r"pattern\[1\] '\(unclosed'"):
        Expectations(("ok", "(unclosed"), 1.0)
    with pytest.raises(ExpectationError, match="timeout_s must be positive"):
        Expectations(("ok",), 0)


def test_plan_expectations_follow_the_plan_and_escape_messages() -> None:
    plan = parse_plan(
        {
            "operations": [
                {"op": "uart_print", "message": "cost: 5$ (approx.) [x]"},
                {"op": "gpio_blink", "name": "beat", "led": "led0", "period_ms": 100},
                {"op": "uart_print", "uart": "USART3", "message": "elsewhere", "baud": 9600},
            ]
        }
    )
    patterns = plan_expectations(plan, "USART2")
    assert patterns == (
        r"^rac: boot\b",
        r"cost:\ 5\$\ \(approx\.\)\ \[x\]",
        r"^rac: uart_print0 ok\b",
        r"^rac: beat ok\b",
        r"^rac: uart_print2 ok\b",
        r"^rac: done$",
    )
    assert match_text("rac: boot t\ncost: 5$ (approx.) [x]\nrac: uart_print0 ok", Expectations(patterns[:3], 1)).ok
