"""What a framework's lowering asks of a plan's behaviour: the compiled program, hooks, the rendered C.

Lowerings never compile or render a behaviour themselves: they call :func:`program`, :func:`hook_calls`
(which hooks an operation's template calls where its events happen) and :func:`render` (the C for the
main file), giving the views they built for the operations. The obligations compiled the same plan
already; a compile that fails here is a defect of the checks, raised as such.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.compile import compile_behaviour
from rac_fw.domains.firmware.plan.behaviour.contexts import raised_in_isr
from rac_fw.domains.firmware.plan.behaviour.emit import hooks, render_program
from rac_fw.domains.firmware.plan.behaviour.render import OpRef

_KEPT = 32
_CACHE: OrderedDict[tuple[str, str, str], tuple[ir.Program | None, list[Any]]] = OrderedDict()


def compiled(plan: Any, target: Any, framework: str) -> tuple[ir.Program | None, list[Any]]:
    """The plan's behaviour compiled for ``target``/``framework`` and its evidence (remembered: the checks,
    the lowering and the predictor ask for the same plan in one run)."""
    if plan.behaviour is None:
        return None, []
    key = (plan.model_dump_json(), target.id, framework)
    found = _CACHE.get(key)
    if found is None:
        found = compile_behaviour(plan.behaviour, plan, target, framework)
        _CACHE[key] = found
        if len(_CACHE) > _KEPT:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return found


def program(plan: Any, target: Any, framework: str) -> ir.Program | None:
    """The compiled behaviour (None without one); a plan the checks passed always compiles."""
    result, evidence = compiled(plan, target, framework)
    if plan.behaviour is not None and result is None:
        raise RuntimeError("a behaviour the obligations accepted does not compile: "
                           + "; ".join(e.message for e in evidence))  # fmt: skip
    return result


def hook_calls(plan: Any, target: Any, framework: str, index: int, event: str) -> list[str]:
    """The hook functions operation ``index``'s template calls where ``event`` happens (none, or one)."""
    found = program(plan, target, framework)
    if found is None:
        return []
    name = hooks(found, plan).get((index, event))
    return [name] if name else []


def used_ops(found: ir.Program) -> list[int]:
    """The operations whose views the rendering needs (outputs read, actions called)."""
    return sorted(set(found.outputs) | {i for i, _ in found.actions})


def render(plan: Any, target: Any, framework: str, refs: dict[int, OpRef]) -> str:
    """The behaviour's C for the main file of ``framework`` (``refs``: views of :func:`used_ops`)."""
    found = program(plan, target, framework)
    assert found is not None
    return render_program(found, framework, plan, refs, lambda i, e: raised_in_isr(plan.operations[i], e))
