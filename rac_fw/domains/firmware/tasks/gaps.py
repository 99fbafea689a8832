"""What keeps a suite task without a reference plan — generated from the plan language, never hand-written.

An unexpressible behaviour names what it ``needs``: operation kinds, plan-level blocks or ``resources``,
optionally down to a field (``fs_file.counter``, ``resources.threads.core``). Its label is computed here
against the op registry, the blocks and the per-cell realization matrix, so it can never go stale the way
"no file-system operation" did once ``fs_file`` landed:

* a need that does not exist: "needs reset_cause (no such operation or block)";
* a field that does not exist: "needs fs_file.counter (fs_file has no field counter)";
* one that exists but not on this cell: "needs ring_log, which hal does not realize on stm32f407";
* every need realized on the cell: the task is *pending* — the plan language can state it, its reference
  plan is not written yet.

The counts the README states are generated here too (:func:`readme_counts`; ``python -m
rac_fw.domains.firmware.tasks.gaps README.md`` rewrites the block between its markers, a test keeps them equal).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rac_fw.domains.firmware.tasks import Task, suite

README_BEGIN = "<!-- suite-counts:begin -->"
README_END = "<!-- suite-counts:end -->"


@dataclass(frozen=True)
class Gap:
    status: Literal["pending", "unexpressible"]
    label: str


def _field_exists(schema: dict[str, Any], path: list[str]) -> bool:
    """Whether the JSON Schema has the property path (through arrays and unions)."""
    if not path:
        return True
    candidates = [schema, *schema.get("anyOf", []), *schema.get("oneOf", [])]
    for candidate in candidates:
        items = candidate.get("items")
        for node in (candidate, items if isinstance(items, dict) else {}):
            child = node.get("properties", {}).get(path[0])
            if isinstance(child, dict) and _field_exists(child, path[1:]):
                return True
    return False


def _need(need: str, target_id: str, framework: str) -> str | None:
    """Why ``need`` is not met on the cell (None when it is)."""
    from rac_fw.domains.firmware.facts.load import load_target
    from rac_fw.domains.firmware.plan.catalog import RESOURCES, UnknownOperation, op_schema
    from rac_fw.domains.firmware.plan.matrix import realizes
    from rac_fw.domains.firmware.plan.registry import kinds, sections

    part, *path = need.split(".")
    blocks = {b.name: b for b in sections()}
    if part not in kinds() and part not in blocks and part != RESOURCES:
        return f"needs {need} (no such operation or block)"
    try:
        schema = op_schema(part)
    except UnknownOperation:
        return f"needs {need} (no such operation or block)"
    if path and not _field_exists(schema, path):
        return f"needs {need} ({part} has no field {'.'.join(path)})"
    target = load_target(target_id)
    if part in blocks:
        realized = blocks[part].realizes(framework, target)
    else:
        realized = part == RESOURCES or realizes(framework, part, target)
    return None if realized else f"needs {part}, which {framework} does not realize on {target_id}"


def gap(task: Task) -> Gap | None:
    """The generated status and label of a task without a reference plan (None for an expressible one)."""
    if task.status == "expressible":
        return None
    reasons = [why for need in task.needs if (why := _need(need, task.target, task.framework)) is not None]
    if reasons:
        return Gap("unexpressible", "; ".join(reasons))
    return Gap("pending", f"the plan language states it ({', '.join(task.needs)} realized on "
                          f"{task.target}/{task.framework}); its reference plan is not written yet")


def counts() -> dict[str, int]:
    """Tasks, expressible ones, hardware obligations among them, pending and unexpressible ones."""
    tasks = list(suite().values())
    gaps = [g for t in tasks if (g := gap(t)) is not None]
    return {"tasks": len(tasks), "expressible": sum(t.status == "expressible" for t in tasks),
            "obligations": sum(bool(t.obligation) and t.status == "expressible" for t in tasks),
            "pending": sum(g.status == "pending" for g in gaps),
            "unexpressible": sum(g.status == "unexpressible" for g in gaps),
            "families": len({t.family for t in tasks})}


def readme_counts() -> str:
    """The README's sentence of suite counts (between ``README_BEGIN`` and ``README_END``)."""
    c = counts()
    return (f"{c['tasks']} tasks in {c['families']} families; {c['expressible']} are expressible in the plan "
            f"language ({c['obligations']} of them hardware obligations), {c['pending']} are pending (the plan "
            f"language can state them, their reference plan is not written yet) and {c['unexpressible']} "
            "are unexpressible, each labelled with the operation, block or field it needs")


def rewrite_readme(path: Path) -> bool:
    """Put the generated counts between the markers of ``path``; True when the file changed."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(README_BEGIN) + r".*?" + re.escape(README_END), re.S)
    if not pattern.search(text):
        raise ValueError(f"{path} has no {README_BEGIN} … {README_END} block")
    updated = pattern.sub(lambda _m: f"{README_BEGIN}{readme_counts()}{README_END}", text)
    if updated != text:
        path.write_text(updated, encoding="utf-8")
    return updated != text


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(f"{name}: {'updated' if rewrite_readme(Path(name)) else 'unchanged'}")
