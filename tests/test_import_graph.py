"""The package import graph is acyclic, so each layer can be read (and replaced) without the ones above it.

Packages are the subpackages of ``rac_fw`` (and of ``rac_fw.domains.firmware``); an edge is any import
that runs (imports under ``if TYPE_CHECKING:`` are for the type checker only and do not count).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "rac_fw"

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


def test_package_import_graph_is_acyclic() -> None:
    cycles = [sorted(c) for c in _cycles(_graph())]
    assert cycles == [], f"import cycles between packages: {cycles}"


def test_the_front_ends_import_no_domain() -> None:
    """The CLI and the MCP server reach domains through the registry (``Domain.commands``/``tools``)."""
    edges = _graph()
    for front in ("rac_fw.cli", "rac_fw.mcp"):
        reached = sorted(p for p in edges[front] if p.startswith("rac_fw.domains"))
        assert reached == [], f"{front} imports domain packages {reached}"


def test_the_bench_sits_above_the_orchestration() -> None:
    edges = _graph()
    fw = "rac_fw.domains.firmware."
    assert fw + "hil" not in edges[fw + "backends"], "the tool registry never imports the bench"
    assert fw + "hil" not in edges[fw + "pipeline"], "the orchestration takes a runner resolver, not the bench"


def test_the_layers_of_the_firmware_domain() -> None:
    edges = _graph()
    fw = "rac_fw.domains.firmware."
    assert fw + "ops" not in edges[fw + "plan"], "the plan finds op specs by walking ops/, it never imports one"
    assert fw + "lower" not in edges[fw + "ops"], "op specs receive their framework's builder; they import no lowering"
    assert fw + "lower" not in edges[fw + "obligations"], "obligations ask the support matrix, not a lowering"
    assert not {fw + "lower", fw + "obligations"} & edges[fw + "verify"], "the verifier is independent"


def _importers(package: str, imported: str) -> set[str]:
    """Modules under ``rac_fw/domains/firmware/<package>/`` with a run-time import of ``<imported>``."""
    found: set[str] = set()
    base = ROOT / "domains" / "firmware"
    for path in (base / package).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        guarded = {id(n) for g in ast.walk(tree) if isinstance(g, ast.If) and "TYPE_CHECKING" in ast.unparse(g.test)
                   for n in ast.walk(g)}
        for node in ast.walk(tree):
            if id(node) in guarded or not isinstance(node, ast.ImportFrom | ast.Import):
                continue
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            if any(n == f"rac_fw.domains.firmware.{imported}" or n.startswith(f"rac_fw.domains.firmware.{imported}.")
                   for n in names):
                found.add(str(path.relative_to(base)))
    return found


def test_lowerings_and_the_verifier_import_no_obligations() -> None:
    """Lowerings render from the bound plan (``BoundPlan.pins_in_use``, ``BoundPlan.rebind``), never asking
    the obligations; the verifier judges the artifact on its own."""
    assert _importers("lower", "obligations") == set()
    assert _importers("verify", "obligations") == set()
    assert _importers("verify", "lower") == set()
