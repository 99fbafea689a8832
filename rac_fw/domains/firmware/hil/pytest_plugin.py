"""pytest fixtures for on-board tests: ``bench``, ``bench_board`` and ``dut`` (pytest-embedded's DUT API).

Load with ``pytest -p rac_fw.domains.firmware.hil.pytest_plugin --bench hil/bench.yaml [--board ID] [--app PATH]
[--allow-flash]`` (a real board is opened and flashed only with ``--allow-flash``: ``hil.consent``)
(``hil/conftest.py`` loads it for the tests in ``hil/``). Without ``--board`` every test that uses a
board runs once per connected bench entry. The ``dut`` is a pytest-embedded ``Dut``: a ``SerialDut``
on a real board after rac-fw built the app, checked the target match and flashed it; a
:class:`~rac_fw.domains.firmware.hil.dut.QemuDut` on a QEMU entry (see ``rac_fw.domains.firmware.hil.dut`` for why not
pytest-embedded-qemu). Its console log is pytest-embedded's (``dut.logfile``, under ``--root-logdir``).

pytest-embedded registers its own ``dut`` fixture (and ``--target``, reused here as the target of a
bare ELF ``--app``); ``pytest_configure`` registers this plugin's ``dut`` after it, so ours is used.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rac_fw.domains.firmware.hil.bench import Bench, BenchBoard, BenchError, load_bench
from rac_fw.domains.firmware.hil.board import board_runner, image_for, target_mismatch
from rac_fw.domains.firmware.hil.consent import Consent


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rac-fw bench")
    group.addoption("--bench", type=Path, default=None, help="bench file (default $RAC_FW_BENCH or hil/bench.yaml)")
    group.addoption("--board", action="append", default=None, help="bench board id to test (repeatable)")
    group.addoption("--app", type=Path, default=None, help="plan, artifact dir or ELF (default: board's app)")
    group.addoption("--allow-flash", action="store_true", default=False,
                    help="let the tests open real boards' ports and flash them (emulated boards need no consent)")
    # `--target` (the rac-fw target of a bare ELF --app) is pytest-embedded's option of that name: one
    # flag, one meaning (the chip the image is for), and declaring it twice would be an argparse error.


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


def _image(
    board: BenchBoard, bench: Bench, app: Path | None, work_dir: Path, bare_target: str | None
) -> tuple[Path, str]:
    """The image for ``board`` and its target; a build or input problem fails the test with the evidence."""
    chosen = app or (bench.resolve(board.app) if board.app else None)
    if chosen is None:
        pytest.fail(f"no app for board {board.id}: pass --app or set `app:` in the bench file", pytrace=False)
    image, recorded, evidence = image_for(chosen, work_dir, framework=board.framework, expected_target=board.target)
    if evidence or image is None:
        pytest.fail("; ".join(f"{e.code}: {e.message}" for e in evidence), pytrace=False)
    target = recorded or bare_target
    if target is None:
        pytest.fail(f"{chosen} records no target: pass --target so the board match is explicit", pytrace=False)
    if target != board.target:
        pytest.fail(f"E_TARGET_MISMATCH: {target_mismatch(board, target).message}", pytrace=False)
    return image, target


def _dut(
    bench: Bench,
    bench_board: BenchBoard,
    pytestconfig: pytest.Config,
    tmp_path: Path,
    msg_queue: Any,
    pexpect_proc: Any,
    _pexpect_logfile: str,
    test_case_name: str,
    _meta: Any,
) -> Iterator[Any]:
    """The board under test, as pytest-embedded's DUT: built, target-checked and flashed (or emulated)."""
    try:
        from rac_fw.domains.firmware.hil.dut import BenchSetupError, qemu_dut, serial_dut
    except ImportError as exc:
        raise pytest.UsageError(
            f"on-board tests need pytest-embedded ({exc.name} is missing): pip install 'rac-fw[bench]'"
        ) from None
    try:  # the consent gate, before anything is built or opened
        runner = board_runner(bench_board.id, Consent(pytestconfig.getoption("--allow-flash"), bench.path))
    except BenchError as exc:
        pytest.fail("; ".join(f"{e.code}: {e.message}" for e in exc.evidence), pytrace=False)
    image, target = _image(
        bench_board,
        bench,
        pytestconfig.getoption("--app"),
        tmp_path / "artifact",
        pytestconfig.getoption("target", None),
    )
    streams = {
        "msg_queue": msg_queue,
        "pexpect_proc": pexpect_proc,
        "pexpect_logfile": _pexpect_logfile,
        "test_case_name": test_case_name,
        "meta": _meta,
    }
    try:
        if bench_board.runner == "qemu":
            device = qemu_dut(bench_board, image, target, **streams)
        else:
            device = serial_dut(runner, image, target, **streams)
    except BenchSetupError as exc:
        pytest.fail(f"board {bench_board.id}: {exc}", pytrace=False)
    try:
        yield device
    finally:
        device.close()
        if hasattr(device, "serial"):
            device.serial.close()


#: For a conftest that imports the fixtures by name (``hil/conftest.py``): conftest fixtures win anyway.
dut = pytest.fixture(name="dut")(_dut)


class _LateFixtures:
    """Holds ``dut`` for ``-p rac_fw.domains.firmware.hil.pytest_plugin``: registered in
    ``pytest_configure``, i.e. after pytest-embedded's entry-point plugin, so that this ``dut`` and not
    pytest-embedded's is used."""

    dut = staticmethod(pytest.fixture(name="dut")(_dut))


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("rac_fw.domains.firmware.hil.late"):
        config.pluginmanager.register(_LateFixtures(), "rac_fw.domains.firmware.hil.late")
