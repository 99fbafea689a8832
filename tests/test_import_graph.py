"""The package import graph is acyclic, so each layer can be read (and replaced) without the ones above it.

Packages are the subpackages of ``rac_fw`` (and of ``rac_fw.domains.firmware``); an edge is any import
that runs (imports under ``if TYPE_CHECKING:`` are for the type checker only and do not count).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "rac_fw"

#: Cycles still to break, each with the reason it is allowed for now (an empty set is the goal).
KNOWN_CYCLES: dict[frozenset[str], str] = {
    frozenset({"rac_fw.hil", "rac_fw.domains.firmware.backends", "rac_fw.domains.firmware.pipeline"}): (
        "backends.select_runner builds the bench's board runner and the bench builds apps through the "
        "pipeline; the bench moves under the firmware domain with its own runner registration"
    ),
    frozenset(
        {
            "rac_fw.domains.firmware.obligations",
            "rac_fw.domains.firmware.ops",
            "rac_fw.domains.firmware.plan",
            "rac_fw.domains.firmware.sections",
        }
    ): (
        "op specs and plan-level blocks declare their own obligations (OpSpec.checks, SectionSpec.checks): the "
        "checks build evidence with obligations.evidence and ask shared rules (RAM budget, free pins) at check "
        "time (function-level imports), and Plan's block fields import their models from sections/"
    ),
}


def _package(module: str) -> str:
    parts = module.split(".")
    if parts[:3] == ["rac_fw", "domains", "firmware"] and len(parts) > 3:
        return ".".join(parts[:4])
    if parts[:2] == ["rac_fw", "domains"] and len(parts) > 2:
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for path in ROOT.rglob("*.py"):
        module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")
        source = _package(module)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        type_only = {
            id(node)
            for guard in ast.walk(tree)
            if isinstance(guard, ast.If) and "TYPE_CHECKING" in ast.unparse(guard.test)
            for node in ast.walk(guard)
        }
        for node in ast.walk(tree):
            if id(node) in type_only or not isinstance(node, ast.ImportFrom | ast.Import):
                continue
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            for name in names:
                if name.startswith("rac_fw") and _package(name) != source:
                    edges[source].add(_package(name))
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in list(edges):
        if node not in index:
            visit(node)
    return found


def test_package_import_graph_has_no_new_cycle() -> None:
    cycles = _cycles(_graph())
    unexpected = [sorted(c) for c in cycles if c not in KNOWN_CYCLES]
    assert unexpected == [], f"import cycles between packages: {unexpected}"


def test_the_layers_of_the_firmware_domain() -> None:
    edges = _graph()
    fw = "rac_fw.domains.firmware."
    assert fw + "ops" not in edges[fw + "plan"], "the plan finds op specs by walking ops/, it never imports one"
    assert fw + "lower" not in edges[fw + "ops"], "op specs receive their framework's builder; they import no lowering"
    assert fw + "lower" not in edges[fw + "obligations"], "obligations ask the support matrix, not a lowering"
    assert not {fw + "lower", fw + "obligations"} & edges[fw + "verify"], "the verifier is independent"
