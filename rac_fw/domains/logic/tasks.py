"""Logic tasks: named input/output ports and a complete truth table (up to 8 inputs).

Minterm convention: for inputs ``(x0, …, x{n-1})`` the row index is ``sum(x_i << (n-1-i))``, so the
first input is the most significant bit — the same convention as SymPy's ``SOPform``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from rac_fw.domain import UnknownTask

TASK_DIR = Path(__file__).with_name("tasks")
MAX_INPUTS = 8


@dataclass(frozen=True)
class LogicTask:
    """A combinational design to synthesize: ports plus, per output, the set of rows where it is 1."""

    name: str
    description: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    ones: dict[str, frozenset[int]]

    @property
    def rows(self) -> int:
        return 1 << len(self.inputs)

    def assignment(self, row: int) -> dict[str, bool]:
        n = len(self.inputs)
        return {name: bool((row >> (n - 1 - i)) & 1) for i, name in enumerate(self.inputs)}

    def expected(self, output: str, row: int) -> bool:
        return row in self.ones[output]


def _parse(path: Path) -> LogicTask:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    inputs, outputs = tuple(raw["inputs"]), tuple(raw["outputs"])
    if len(inputs) > MAX_INPUTS:
        raise ValueError(f"{path}: {len(inputs)} inputs exceed the limit of {MAX_INPUTS}")
    rows = 1 << len(inputs)
    ones: dict[str, frozenset[int]] = {}
    for out in outputs:
        column = str(raw["table"][out]).replace(" ", "")
        if len(column) != rows or set(column) - {"0", "1"}:
            raise ValueError(f"{path}: table.{out} must be {rows} characters of 0/1, row 0 first")
        ones[out] = frozenset(i for i, bit in enumerate(column) if bit == "1")
    return LogicTask(path.stem, raw.get("description", ""), inputs, outputs, ones)


@cache
def all_tasks() -> dict[str, LogicTask]:
    return {p.stem: _parse(p) for p in sorted(TASK_DIR.glob("*.yaml"))}


def get_task(name: str) -> LogicTask:
    tasks = all_tasks()
    if name not in tasks:
        raise UnknownTask("logic", name, sorted(tasks))
    return tasks[name]
