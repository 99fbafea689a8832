"""Progress bars: drawn for a person at a terminal (a real pty here), silent in pipes and with --json."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO, require_tool


def run_on_a_terminal(args: list[str], timeout: float = 120.0) -> tuple[int, bytes]:
    """Run ``rac-fw ARGS`` with stdout and stderr on a pty, as in a terminal; return (status, bytes seen)."""
    master, slave = os.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    env.pop("CI", None)  # rich treats CI as "not interactive"; this test is about a person's terminal
    proc = subprocess.Popen(
        [sys.executable, "-m", "rac_fw.cli", *args], stdout=slave, stderr=slave, stdin=subprocess.DEVNULL,
        cwd=REPO, env=env,
    )  # fmt: skip
    os.close(slave)
    seen = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                seen.extend(chunk)
            elif proc.poll() is not None:
                break
        status = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return status, bytes(seen)


def _bench_run(tmp_path: Path, *extra: str) -> list[str]:
    return ["hil", "run", "qemu-stm32f407", "--bench", str(REPO / "hil" / "bench.yaml"), "--out", str(tmp_path), *extra]


def test_a_bench_run_shows_its_bar_on_a_terminal(tmp_path: Path) -> None:
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    status, seen = run_on_a_terminal(_bench_run(tmp_path / "tty"))
    assert status == 0, seen.decode(errors="replace")
    assert b"bench run" in seen and b"1/1" in seen


def test_no_bar_with_json_or_in_a_pipe(tmp_path: Path) -> None:
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    status, seen = run_on_a_terminal(_bench_run(tmp_path / "json", "--json"))
    assert status == 0, seen.decode(errors="replace")
    plain = re.sub(rb"\x1b\[[0-9;]*m", b"", seen)
    assert b"bench run" not in plain and b'"status": "pass"' in plain
    piped = subprocess.run(
        [sys.executable, "-m", "rac_fw.cli", *_bench_run(tmp_path / "pipe")], capture_output=True, cwd=REPO,
        timeout=120,
    )  # fmt: skip
    assert piped.returncode == 0, piped.stderr
    assert b"bench run" not in piped.stderr + piped.stdout
