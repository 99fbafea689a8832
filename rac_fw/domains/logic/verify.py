"""Independent verifier for logic networks: pure Python, no SymPy, never imports the realizer.

It checks the structure (known gates with the right arity, only declared ports, acyclic, every output
driven) and then evaluates every input assignment against both the task's truth table and the
action's minterms. The realizer's receipt is never read.
"""

from __future__ import annotations

from typing import Any

from rac_fw.contract import Evidence, Magnitude, Realization, Relaxation, Verdict, sha256_of
from rac_fw.domain import Verification
from rac_fw.domains.logic.tasks import LogicTask

ARITY: dict[str, tuple[int, int | None]] = {
    "AND": (1, None),
    "OR": (1, None),
    "NOT": (1, 1),
    "CONST0": (0, 0),
    "CONST1": (0, 0),
}


def _structure(task: LogicTask, net: Any) -> tuple[list[dict[str, Any]] | None, list[Evidence]]:
    """Return the gates in evaluation order, or the structural violations."""
    problems: list[Evidence] = []
    if not isinstance(net, dict) or not isinstance(net.get("gates"), list) or not isinstance(net.get("outputs"), dict):
        return None, [Evidence(code="E_NETWORK_FORMAT", message="artifact is not a gate network", location="artifact")]
    if list(net.get("inputs", [])) != list(task.inputs):
        problems.append(Evidence(code="E_UNDECLARED_PORT", message="network inputs differ from the task's ports",
                                 location="artifact.inputs", objects=[str(x) for x in net.get("inputs", [])]))
    gates: dict[str, dict[str, Any]] = {}
    for i, gate in enumerate(net["gates"]):
        where = f"artifact.gates[{i}]"
        if not isinstance(gate, dict) or not isinstance(gate.get("in"), list):
            problems.append(Evidence(code="E_NETWORK_FORMAT", message="gate must be {id, op, in}", location=where))
            continue
        gid, op, ins = str(gate.get("id")), gate.get("op"), gate["in"]
        if op not in ARITY:
            problems.append(Evidence(code="E_UNKNOWN_GATE", message=f"gate {gid} has unknown op {op!r}",
                                     location=where, objects=[gid]))
            continue
        low, high = ARITY[op]
        if len(ins) < low or (high is not None and len(ins) > high):
            problems.append(Evidence(code="E_GATE_ARITY", message=f"gate {gid} ({op}) has {len(ins)} inputs",
                                     location=where, objects=[gid]))
        if gid in gates or gid in task.inputs:
            problems.append(Evidence(code="E_DUPLICATE_NODE", message=f"node id {gid} defined twice",
                                     location=where, objects=[gid]))
        gates[gid] = gate
    known = set(gates) | set(task.inputs)
    for gid, gate in gates.items():
        for ref in gate["in"]:
            if ref not in known:
                problems.append(Evidence(code="E_UNDECLARED_PORT", message=f"gate {gid} reads unknown node {ref!r}",
                                         location="artifact.gates", objects=[gid, str(ref)]))
    outs = net["outputs"]
    if set(outs) != set(task.outputs):
        problems.append(Evidence(code="E_UNDECLARED_PORT", message="network outputs differ from the task's ports",
                                 location="artifact.outputs", objects=sorted(map(str, outs))))
    for name, node in outs.items():
        if node not in known:
            problems.append(Evidence(code="E_UNDRIVEN_OUTPUT", message=f"output {name} driven by unknown {node!r}",
                                     location=f"artifact.outputs.{name}", objects=[str(name)]))
    if problems:
        return None, problems
    order: list[dict[str, Any]] = []
    state: dict[str, int] = {}  # 1 = visiting, 2 = done

    def visit(gid: str, path: list[str]) -> bool:
        if gid not in gates or state.get(gid) == 2:
            return True
        if state.get(gid) == 1:
            cycle = path[path.index(gid):] + [gid]
            problems.append(Evidence(code="E_CYCLE", message="combinational loop: " + " → ".join(cycle),
                                     location="artifact.gates", objects=cycle))
            return False
        state[gid] = 1
        ok = all(visit(ref, path + [gid]) for ref in gates[gid]["in"])
        state[gid] = 2
        order.append(gates[gid])
        return ok

    for gid in gates:
        if not visit(gid, []):
            return None, problems
    return order, []


def _evaluate(order: list[dict[str, Any]], assignment: dict[str, bool]) -> dict[str, bool]:
    values = dict(assignment)
    for gate in order:
        ins = [values[ref] for ref in gate["in"]]
        op = gate["op"]
        values[gate["id"]] = (
            all(ins) if op == "AND" else any(ins) if op == "OR" else (not ins[0]) if op == "NOT" else op == "CONST1"
        )
    return values


def verify(task: LogicTask, outputs: dict[str, list[int]], realization: Realization) -> Verification:
    """Judge the network itself: structure, then every row against the truth table and the action."""
    net = realization.artifact
    hash_ok = sha256_of(net) == realization.artifact_hash
    verdicts = [Verdict(predicate="artifact_hash", passed=hash_ok, detail="artifact matches its declared hash")]
    evidence: list[Evidence] = []
    if not hash_ok:
        evidence.append(Evidence(code="E_ARTIFACT_HASH", message="artifact does not match its declared sha256",
                                 location="artifact_hash"))
    order, problems = _structure(task, net)
    verdicts.append(Verdict(predicate="structure", passed=order is not None,
                            measured=len(problems), limit=0, unit="violations"))
    if order is None:
        return Verification(verdicts, evidence + problems)
    table_bad: dict[str, list[int]] = {out: [] for out in task.outputs}
    action_bad: dict[str, list[int]] = {out: [] for out in task.outputs}
    committed = {out: set(outputs[out]) for out in task.outputs}
    for row in range(task.rows):
        values = _evaluate(order, task.assignment(row))
        for out in task.outputs:
            got = values[net["outputs"][out]]
            if got != task.expected(out, row):
                table_bad[out].append(row)
            if got != (row in committed[out]):
                action_bad[out].append(row)
    for out in task.outputs:
        verdicts.append(Verdict(predicate=f"truth_table[{out}]", passed=not table_bad[out],
                                measured=len(table_bad[out]), limit=0, unit="rows"))
        verdicts.append(Verdict(predicate=f"realizes_action[{out}]", passed=not action_bad[out],
                                measured=len(action_bad[out]), limit=0, unit="rows"))
        if table_bad[out]:
            wanted = sorted(task.ones[out])
            evidence.append(Evidence(
                code="E_TRUTH_TABLE",
                message=f"output {out} differs from the truth table on rows {table_bad[out]}",
                location=f"payload.outputs.{out}",
                objects=[out],
                magnitudes=[Magnitude(name="rows_wrong", value=len(table_bad[out]), unit="rows")],
                relaxations=[Relaxation(description=f"set outputs.{out} to the table's 1-rows {wanted}",
                                        patch=[{"op": "replace", "path": ["outputs", out], "value": wanted}])],
            ))
        if action_bad[out]:
            evidence.append(Evidence(
                code="E_NOT_REALIZED",
                message=f"network output {out} does not realize the committed minterms on rows {action_bad[out]}",
                location=f"artifact.outputs.{out}", objects=[out],
                magnitudes=[Magnitude(name="rows_wrong", value=len(action_bad[out]), unit="rows")],
            ))
    return Verification(verdicts, evidence)
