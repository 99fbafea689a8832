"""pytest fixtures for on-board tests: ``bench``, ``bench_board`` and ``dut``.

Load with ``pytest -p rac_fw.hil.pytest_plugin --bench hil/bench.yaml [--board ID] [--app PATH]``
(``hil/conftest.py`` loads it for the tests in ``hil/``). Without ``--board`` every test that uses a
board runs once per connected bench entry. A QEMU entry goes through exactly the same fixtures, runner
and expectation engine as a real board, so CI runs the on-board tests against the emulator.

pytest-embedded's QEMU service is not used: it always appends ``-drive file=…,if=mtd``, which
qemu-system-arm's Cortex-M machines reject. The ``dut`` here hands QEMU "boards" to rac-fw's own
``qemu`` runner instead, and real boards to the flasher + serial runner.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from rac_fw.domains.firmware.backends import FlashRequest, FlashResult, RunRequest, RunResult
from rac_fw.hil.bench import Bench, BenchBoard, BenchError, load_bench
from rac_fw.hil.board import BoardRunner, image_for


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rac-fw bench")
    group.addoption("--bench", type=Path, default=None, help="bench file (default $RAC_FW_BENCH or hil/bench.yaml)")
    group.addoption("--board", action="append", default=None, help="bench board id to test (repeatable)")
    group.addoption("--app", type=Path, default=None, help="plan, artifact dir or ELF (default: board's app)")
    group.addoption("--target", default=None, help="rac-fw target of a bare ELF --app (explicit match)")


def _load(config: pytest.Config) -> Bench:
    try:
        return load_bench(config.getoption("--bench"))
    except BenchError as exc:
        raise pytest.UsageError("; ".join(e.message for e in exc.evidence)) from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run board tests once per chosen (or connected) bench board, with the board id as test id."""
    if "bench_board" not in metafunc.fixturenames:
        return
    bench = _load(metafunc.config)
    wanted = metafunc.config.getoption("--board")
    try:
        boards = [bench.board(b) for b in wanted] if wanted else [b for b in bench.boards if b.connected]
    except BenchError as exc:
        raise pytest.UsageError("; ".join(e.message for e in exc.evidence)) from None
    metafunc.parametrize("bench_board", boards, ids=[b.id for b in boards], indirect=True)


@pytest.fixture(scope="session")
def bench(pytestconfig: pytest.Config) -> Bench:
    return _load(pytestconfig)


@pytest.fixture
def bench_board(request: pytest.FixtureRequest) -> BenchBoard:
    board: BenchBoard = request.param
    return board


@dataclass
class Dut:
    """The device under test: one bench board (or QEMU machine) and the app to put on it."""

    board: BenchBoard
    bench: Bench
    app: Path | None
    output_dir: Path
    target: str | None = None
    """Target of a bare ELF app (``--target``); plans and artifacts record their own."""

    def image(self, app: Path | None = None) -> tuple[Path, str]:
        """The image to run and its target; a build or input problem fails the test with the evidence."""
        chosen = app or self.app or (self.bench.resolve(self.board.app) if self.board.app else None)
        if chosen is None:
            pytest.fail(f"no app for board {self.board.id}: pass --app or set `app:` in the bench file")
        image, recorded, evidence = image_for(
            chosen, self.output_dir / "artifact", framework=self.board.framework, expected_target=self.board.target
        )
        if evidence or image is None:
            pytest.fail("; ".join(f"{e.code}: {e.message}" for e in evidence))
        target = recorded or self.target
        if target is None:
            pytest.fail(f"{chosen} records no target: pass --target so the board match is explicit")
        return image, target

    def flash(self, app: Path | None = None, erase: str = "auto") -> FlashResult:
        image, target = self.image(app)
        return BoardRunner(self.board, self.bench.path.parent).flash(
            FlashRequest(image=image, target=target, erase=erase)
        )

    def run(
        self,
        *expect: str,
        forbid: tuple[str, ...] = (),
        timeout: float | None = None,
        app: Path | None = None,
    ) -> RunResult:
        """Flash/emulate the app and judge the console (default expectations: the bench entry's)."""
        image, target = self.image(app)
        request = RunRequest(
            image=image,
            target=target,
            expect=expect or tuple(self.board.expect),
            timeout_s=timeout or self.board.timeout,
            output_dir=self.output_dir,
            forbid=forbid or tuple(self.board.forbid),
        )
        return BoardRunner(self.board, self.bench.path.parent).run(request)

    def expect(self, *patterns: str, forbid: tuple[str, ...] = (), timeout: float | None = None) -> RunResult:
        """``run`` and fail the test with the evidence unless every expectation held."""
        result = self.run(*patterns, forbid=forbid, timeout=timeout)
        if not result.ok:
            pytest.fail(
                f"board {self.board.id}: " + "; ".join(f"{e.code}: {e.message}" for e in result.evidence),
                pytrace=False,
            )
        return result


@pytest.fixture
def dut(bench: Bench, bench_board: BenchBoard, pytestconfig: pytest.Config, tmp_path: Path) -> Dut:
    """The board under test; its console log lands in the test's ``tmp_path``."""
    return Dut(
        board=bench_board,
        bench=bench,
        app=pytestconfig.getoption("--app"),
        output_dir=tmp_path,
        target=pytestconfig.getoption("--target"),
    )
