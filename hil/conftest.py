"""Loads rac-fw's bench fixtures (``bench``, ``bench_board``, ``dut``) for the on-board tests here; the
``dut`` is pytest-embedded's DUT (``pip install 'rac-fw[bench]'``), built, target-checked and flashed
by rac-fw first.

Run from the repository root: ``pytest hil --bench hil/bench.yaml --board qemu-stm32f407`` (the QEMU
"board", CI-safe) or ``--board nucleo-h743zi`` for a real one; without ``--board`` every connected
board in the bench file runs. Outside this folder load the same fixtures with
``pytest -p rac_fw.domains.firmware.hil.pytest_plugin`` (a non-root conftest may not declare ``pytest_plugins``).
"""

from rac_fw.domains.firmware.hil.pytest_plugin import (  # noqa: F401  (fixtures and hooks are found by name)
    bench,
    bench_board,
    dut,
    pytest_addoption,
    pytest_generate_tests,
)
