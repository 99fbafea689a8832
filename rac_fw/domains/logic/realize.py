"""Realizer: minterms → an acyclic AND/OR/NOT/constant gate network, via SymPy's ``SOPform``.

The network is plain JSON so that the verifier can judge it without SymPy::

    {"inputs": [...], "outputs": {"port": "node-id or input"},
     "gates": [{"id": "g0", "op": "NOT", "in": ["a"]}, ...]}

Identical sub-expressions are shared (one gate per distinct ``(op, inputs)``), and gate ids follow
construction order, so the same action always yields the same bytes.
"""

from __future__ import annotations

from typing import Any

from sympy import Symbol
from sympy.logic import SOPform
from sympy.logic.boolalg import And, BooleanFalse, BooleanTrue, Not, Or

from rac_fw.contract import Realization, Receipt, sha256_of
from rac_fw.domains.logic.tasks import LogicTask


class _Builder:
    def __init__(self) -> None:
        self.gates: list[dict[str, Any]] = []
        self._index: dict[tuple[str, tuple[str, ...]], str] = {}

    def gate(self, op: str, inputs: tuple[str, ...]) -> str:
        key = (op, inputs)
        if key not in self._index:
            node = f"g{len(self.gates)}"
            self.gates.append({"id": node, "op": op, "in": list(inputs)})
            self._index[key] = node
        return self._index[key]

    def build(self, expr: Any) -> str:
        if isinstance(expr, Symbol):
            return expr.name
        if isinstance(expr, BooleanTrue):
            return self.gate("CONST1", ())
        if isinstance(expr, BooleanFalse):
            return self.gate("CONST0", ())
        if isinstance(expr, Not):
            return self.gate("NOT", (self.build(expr.args[0]),))
        if isinstance(expr, And | Or):
            children = tuple(sorted(self.build(arg) for arg in expr.args))
            return self.gate("AND" if isinstance(expr, And) else "OR", children)
        raise TypeError(f"unexpected expression node {expr!r}")


def realize(task: LogicTask, outputs: dict[str, list[int]], seed: int) -> Realization:
    """Build the network for the committed minterms; the receipt claims every output is realized."""
    symbols = [Symbol(name) for name in task.inputs]
    builder = _Builder()
    drivers = {out: builder.build(SOPform(symbols, sorted(outputs[out]))) for out in task.outputs}
    artifact = {"inputs": list(task.inputs), "outputs": drivers, "gates": builder.gates}
    return Realization(
        artifact=artifact,
        artifact_hash=sha256_of(artifact),
        receipt=Receipt(realized=[f"{out} = Σm{sorted(outputs[out])}" for out in task.outputs]),
        seed=seed,
    )
