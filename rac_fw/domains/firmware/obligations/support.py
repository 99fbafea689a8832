"""E_TARGET_UNSUPPORTED: an operation or setting that cannot exist on this target with this framework.

Support comes from the op specs' support matrix (``ops.matrix.realizes``: what each framework
realizes, given the facts) and from what the chip has (its facts: ADC, PWM, watchdog, DMA, radio,
SysTick). Alternatives are computed: a framework of this target that realizes every operation of the
plan, another timer source, a pin channel instead of a devicetree one, or dropping the operation.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial
from typing import Any

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.claims import taken_pins
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import (
    Clocks,
    free_pins,
    systick,
    timer_names,
    watchdog_range,
)
from rac_fw.domains.firmware.obligations.frameworks import FRAMEWORKS
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.channels import AdcDtChannel
from rac_fw.domains.firmware.plan.evidence import Path, drop_operation, proposing, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.matrix import elsewhere, realizes
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.plan.registry import spec

CODE = "E_TARGET_UNSUPPORTED"


def _hardware_missing(target: Target, framework: str, op: Operation) -> str | None:
    """Why the chip cannot do ``op`` at all (None when it can)."""
    needs = spec(op.op).needs
    if needs == "adc" and target.adc is None:
        return f"{target.id} has no ADC"
    if needs == "pwm" and not (target.pwm or target.timers):
        return f"{target.id} has no PWM or timer outputs"
    if needs == "watchdog" and watchdog_range(target, framework) is None:
        return f"{target.id} has no watchdog usable with {framework}"
    if needs == "dma" and not target.dma:
        return f"{target.id} has no DMA controller"
    return None


def passes(target: Target, framework: str, op: Operation) -> bool:
    """Whether this rule lets ``op`` through (a framework of the target, the chip unit it needs, a realization):
    an operation's own support-dependent checks judge it only then."""
    return (
        framework in target.frameworks
        and framework in FRAMEWORKS
        and _hardware_missing(target, framework, op) is None
        and realizes(framework, op.op, target)
    )


def timer_source(target: Target, framework: str, index: int, op: Any) -> list[Evidence]:
    """The timer source exists under this framework (kernel service, SysTick, hardware instances); asked by the
    timer op specs for an operation this rule lets through."""
    if not passes(target, framework, op):
        return []
    path: Path = ["operations", index, "source"]
    rules = FRAMEWORKS[framework]
    tick = systick(Clocks(target, framework))  # whether there is one: its clock does not matter here
    options: list[Relaxation] = []
    if op.source == "systick" and (rules.owns_systick or tick is None):
        why = f"{framework} owns SysTick for its own tick" if tick is not None else f"{target.core.name} has no SysTick"
    elif op.source == "kernel" and not rules.kernel_timer:
        why = f"{framework} has no kernel timer service"
    elif op.source not in ("kernel", "systick") and not rules.hardware_timers:
        why = f"the {framework} lowering realizes timers with the kernel timer, not a hardware instance"
    else:
        return []
    if rules.kernel_timer and op.source != "kernel":
        options.append(relax("use the framework's kernel timer", replace(path, "kernel")))
    if op.source != "systick" and tick is not None and not rules.owns_systick:
        options.append(relax("use SysTick", replace(path, "systick")))
    if rules.hardware_timers:
        options += [relax(f"use hardware timer {name}", replace(path, name)) for name in timer_names(target)[:3]]
    return [
        violation(CODE, f"timer source {op.source!r} is not available: {why}", path, [op.source], relaxations=options)
    ]


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Framework choice, operation support, devicetree channels, threads (timer sources and DMA scans: asked by
    their op specs, :func:`timer_source`, :func:`scan_by_dma`)."""
    found = _framework(plan, target, framework)
    if found:
        return found
    for index in range(len(plan.operations)):
        found += _operation(index, plan, target, framework)
    return found + _threads(plan, target, framework)


Unit = tuple[Hashable, Callable[[Plan, Target, str], list[Evidence]]]


def plan_units() -> list[Unit]:
    """:func:`check` as units (``obligations.incremental``): the framework and the threads…"""
    return [(("support", "framework"), _framework), (("support", "threads"), _threads)]


def operation_units(index: int, op: Operation) -> list[Unit]:
    """…and each operation's support."""
    return [(("support", index, op.op), partial(_operation, index))]


def _usable(target: Target, framework: str) -> bool:
    return framework in target.frameworks and framework in FRAMEWORKS


def _framework(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    if _usable(target, framework):
        return []
    options = [relax(f"use framework {f}", replace(["framework"], f)) for f in target.frameworks]
    return [
        violation(
            CODE,
            f"{target.id} cannot be built with {framework} (it supports: {', '.join(target.frameworks)})",
            ["framework"],
            [target.id, framework],
            relaxations=options,
        )
    ]


def _operation(i: int, plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Operation ``i`` against the framework's support matrix, its realization's ``admits`` and its channels."""
    if not _usable(target, framework):
        return []
    op = plan.operations[i]
    path: Path = ["operations", i]
    missing = _hardware_missing(target, framework, op)
    options: list[Relaxation] = []
    if missing is None and not realizes(framework, op.op, target):
        realization = spec(op.op).realization(framework)
        if realization is None:
            missing = f"{framework} has no realization of {op.op}"
        else:
            why = realization.why_unavailable(target) if realization.why_unavailable else None
            missing = why or f"{framework} realizes {op.op} only where the facts allow it, not on {target.id}"
        refusal = spec(op.op).refusals.get(framework)
        if refusal is not None:
            why, instead = refusal(plan, target, i, op)
            missing, options = f"{missing}: {why}", instead
    if missing is None:
        return _realized(plan, target, framework, i, op)
    here = [f for f in target.frameworks if f != framework and realizes(f, op.op, target)]
    there = elsewhere(op.op, target)
    where = [f"{f} here" for f in here] + [f"{fw} on {t}" for t, fw in there]
    message = f"{op.op} is not possible here: {missing}" + (f" (realized by: {', '.join(where)})" if where else "")
    if proposing():
        options += [relax(f"use framework {f}", replace(["framework"], f)) for f in here]
        options += [_move(plan, t, fw) for t, fw in there[:3]]
        options.append(drop_operation(plan, i))
    return [violation(CODE, message, path, [op.op, target.id], relaxations=options)]


def _move(plan: Plan, target_id: str, framework: str) -> Relaxation:
    """Run the plan on another target (and the framework realizing the operation there, when the plan names
    one or the target's default does not)."""
    from rac_fw.domains.firmware.facts.load import load_target

    steps = [replace(["target"], target_id)]
    if plan.framework is not None or load_target(target_id).frameworks[0] != framework:
        steps.append(replace(["framework"], framework))
    return relax(f"use target {target_id} ({framework})", *steps)


def _realized(plan: Plan, target: Target, framework: str, i: int, op: Operation) -> list[Evidence]:
    """What a realized operation still needs: its realization's ``admits``, its fields honoured, its channels."""
    path: Path = ["operations", i]
    found: list[Evidence] = []
    realization = spec(op.op).realization(framework)
    if realization is not None and realization.admits is not None:
        found += realization.admits(plan, target, i, op)
    if realization is not None:
        found += _unrealized_fields(plan, target, framework, i, op)
    if FRAMEWORKS[framework].devicetree:
        return found
    channels = getattr(op, "channels", None) or ([op.channel] if hasattr(op, "channel") else [])
    for j, channel in enumerate(channels):
        if isinstance(channel, AdcDtChannel):
            where: Path = [*path, "channels", j] if hasattr(op, "channels") else [*path, "channel"]
            pins = [channel.pin] if channel.pin else []
            if not pins and proposing():
                pins = [p.name for p in free_pins(target, taken_pins(plan, target), "ANALOG")[:3]]
            fixes = [relax(f"name the channel by its pin {p}", replace(where, {"pin": p})) for p in pins]
            found.append(
                violation(
                    CODE,
                    f"{framework} has no devicetree: name the ADC channel by its pin",
                    where,
                    [channel.path],
                    relaxations=fixes,
                )
            )
    return found


def _unrealized_fields(plan: Plan, target: Target, framework: str, i: int, op: Operation) -> list[Evidence]:
    """A field the plan sets that this framework's realization cannot honour (``Realization.unrealized``)."""
    found: list[Evidence] = []
    realization = spec(op.op).realization(framework)
    assert realization is not None
    for name, why in realization.unrealized.items():
        if getattr(op, name) == op.__class__.model_fields[name].default:
            continue  # left at its default (also when a dump of the plan writes it out): nothing is promised
        path: Path = ["operations", i, name]
        honour = [
            f
            for f in target.frameworks
            if f != framework
            and realizes(f, op.op, target)
            and name not in (spec(op.op).realization(f) or realization).unrealized
        ]
        options = [relax(f"drop {name}", remove(path))]
        options += [relax(f"use framework {f}", replace(["framework"], f)) for f in honour]
        found.append(
            violation(
                CODE,
                f"{op.op}.{name} is not realized by {framework}: {why}"
                + (f" (realized by: {', '.join(honour)})" if honour else ""),
                path,
                [op.name or op.op, name, framework],
                relaxations=options,
            )
        )
    return found


def _threads(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    if not _usable(target, framework) or not plan.resources.threads or FRAMEWORKS[framework].threads:
        return []
    options = [
        relax(f"use framework {f}", replace(["framework"], f))
        for f in target.frameworks
        if FRAMEWORKS.get(f) and FRAMEWORKS[f].threads
    ]
    options.append(relax("drop the threads", replace(["resources", "threads"], [])))
    return [
        violation(
            CODE,
            f"{framework} has no threads (no RTOS)",
            ["resources", "threads"],
            [t.name for t in plan.resources.threads],
            relaxations=options,
        )
    ]


def scan_by_dma(target: Target, framework: str, index: int, op: Any) -> list[Evidence]:
    """A scan into a DMA ``buffer`` is its own capability (``dma`` feature): a framework whose ADC driver owns
    the DMA (Zephyr) or whose lowering scans with the CPU must say so rather than pretend. Asked by the
    ``adc_scan`` spec for an operation this rule lets through."""
    if not passes(target, framework, op) or op.buffer is None or realizes(framework, op.op, target, "dma"):
        return []
    path: Path = ["operations", index]
    dma_capable = [f for f in target.frameworks if realizes(f, op.op, target, "dma")]
    options = [relax(f"use framework {f}", replace(["framework"], f)) for f in dma_capable]
    options.append(relax("scan with the CPU (no DMA buffer)", remove([*path, "buffer"])))
    return [
        violation(
            CODE,
            f"the {framework} lowering does not scan the ADC by DMA into {op.buffer}",
            [*path, "buffer"],
            [op.buffer, target.id],
            relaxations=options,
        )
    ]
