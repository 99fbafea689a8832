"""Seeded violations of the behaviour layer's obligations: each caught, located, measured, and each of its
relaxations validating once applied.

Every plan here is valid except for one seeded fault in its ``behaviour:`` block (bare metal, where the
block is realized; the STM32F407 unless a case needs another chip). The cases join the project's seeded
corpus (``test_obligations_seeded.CASES``), so ``test_relaxations.py`` applies *every* relaxation of every
case and re-validates it through the obligations and ``run_plan``; this module checks the evidence itself and
that the first relaxation repairs the plan outright.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.behaviour.checks import CODES
from rac_fw.domains.firmware.plan.load import parse_plan

LED = {"op": "gpio_set", "name": "led", "led": "led0"}
IRQ = {"op": "sw_irq", "name": "irq"}


@dataclass(frozen=True)
class Seeded:
    id: str
    target: str
    plan: dict[str, Any]
    """The plan without its target (the corpus's ``Case`` shape)."""
    code: str
    objects: tuple[str, ...]
    units: tuple[str, ...] = ()
    location: str = ""
    """The evidence's location must end with this (the field the fault is in)."""


def behaviour(*triggers: dict[str, Any], ops: tuple[dict[str, Any], ...] = (LED,), **block: Any) -> dict[str, Any]:
    return {"framework": "baremetal", "operations": list(ops), "behaviour": {**block, "triggers": list(triggers)}}


def boot(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"at": "boot", "do": list(steps)}


COUNT = {"name": "count", "type": "u32", "init": 5}
LEVEL = {"name": "level", "type": "i32", "unit": "mV", "init": 1200}

SEEDED = [
    # loops and waits are bounded or explicitly forever
    Seeded("behaviour-unbounded-repeat", "stm32f407", behaviour(
        boot({"repeat": {"times": "count", "do": [{"act": "led.toggle"}]}}), vars=[COUNT]),
        "E_BEHAVIOUR_UNBOUNDED", ("count",), location="repeat.times"),
    Seeded("behaviour-unbounded-while", "stm32f407", behaviour(
        boot({"while": {"cond": "count > 0", "max": 250000, "do": [{"set": {"count": "count - 1"}}]}}), vars=[COUNT]),
        "E_BEHAVIOUR_UNBOUNDED", ("250000",), location="while.max"),
    # interrupt context: a blocking step forced into a handler, a blocking script called from one
    Seeded("behaviour-isr-blocking-print", "stm32f407", behaviour(
        {"event": "irq.irq", "context": "isr", "do": [{"print": "in the handler"}]},
        boot({"act": "irq.fire"}), ops=(IRQ,)),
        "E_BEHAVIOUR_ISR_BLOCKING", ("t0", "print"), location="triggers[0].context"),
    Seeded("behaviour-context-isr-on-thread-event", "stm32f407", behaviour(
        {"event": "uart.line", "context": "isr", "do": [{"set": {"count": "count + 1"}}]},
        boot({"print": "{count}"}), ops=({"op": "uart_rx_irq", "name": "uart", "ring_bytes": 64},), vars=[COUNT]),
        "E_BEHAVIOUR_CONTEXT", ("uart",), location="triggers[0].context"),
    Seeded("behaviour-isr-blocking-call", "stm32f407", behaviour(
        {"event": "irq.irq", "context": "isr", "do": [{"call": "report"}]}, boot({"act": "irq.fire"}),
        ops=(IRQ,), scripts=[{"name": "report", "do": [{"print": "event"}]}]),
        "E_BEHAVIOUR_ISR_BLOCKING", ("t0",)),
    # units agree
    Seeded("behaviour-unit-dimension", "stm32f407", behaviour(
        boot({"set": {"level": "level + 5ms"}}, {"print": "{level}"}), vars=[LEVEL]),
        "E_BEHAVIOUR_UNIT", ("level + 5ms",), location="set.level"),
    Seeded("behaviour-unit-lossy", "stm32f407", behaviour(
        boot({"set": {"volts": "1500mV"}}, {"print": "{volts}"}),
        vars=[{"name": "volts", "type": "i32", "unit": "V", "init": 0}]),
        "E_BEHAVIOUR_UNIT", ("1500mV",), location="set.volts"),
    # no read before write
    Seeded("behaviour-read-before-write", "stm32f407", behaviour(
        boot({"print": "level {level}"}, {"set": {"level": 5}}), vars=[{"name": "level", "type": "i32"}]),
        "E_BEHAVIOUR_UNINIT", ("level",), location="do[0].print"),
    # a variable shared by an interrupt and the thread the plan asks to guard with atomics it cannot have
    Seeded("behaviour-shared-unguarded", "stm32f407", behaviour(
        {"event": "irq.irq", "do": [{"set": {"samples": 7}}]},
        boot({"act": "irq.fire"}, {"print": "mean {mean(samples)}"}), ops=(IRQ,),
        vars=[{"name": "samples", "type": "i32", "window": 4, "guard": "atomic"}]),
        "E_BEHAVIOUR_SHARED", ("samples",), location="vars[0].guard"),
    # the work of a periodic trigger fits its period
    Seeded("behaviour-period-overrun", "stm32f407", behaviour(
        {"every": "2ms", "times": 5, "do": [{"print": "a rather long status line that takes a while at 115200 baud"}]}),
        "E_BEHAVIOUR_PERIOD", ("t0",), ("ms",), location="triggers[0].every"),
    # a persisted variable fits the store
    Seeded("behaviour-persist-too-large", "stm32f407", behaviour(
        boot({"set": {"log": {"fill": 1, "size": 4}}}),
        vars=[{"name": "log", "type": "bytes", "size": 256, "persist": True}]),
        "E_BEHAVIOUR_PERSIST", ("log",), ("bytes",), location="vars[0].persist"),
    # expressions, types, names, events, actions, fields, formats, durations, sizes
    Seeded("behaviour-expr-unknown-name", "stm32f407", behaviour(
        boot({"set": {"count": "cuont + 1"}}, {"print": "{count}"}), vars=[COUNT]),
        "E_BEHAVIOUR_EXPR", ("cuont + 1",), location="set.count"),
    Seeded("behaviour-type-condition", "stm32f407", behaviour(
        boot({"if": {"cond": "count", "then": [{"print": "nonzero"}]}}), vars=[COUNT]),
        "E_BEHAVIOUR_TYPE", ("count",), location="if.cond"),
    Seeded("behaviour-name-variable", "stm32f407", behaviour(
        boot({"set": {"cuont": 1}}, {"print": "{count}"}), vars=[COUNT]),
        "E_BEHAVIOUR_NAME", ("cuont",), location="set.cuont"),
    Seeded("behaviour-event-unknown", "stm32f407", behaviour(
        {"event": "irq.edge", "times": 1, "do": [{"set": {"count": 1}}]}, boot({"act": "irq.fire"}), ops=(IRQ,),
        vars=[COUNT]),
        "E_BEHAVIOUR_EVENT", ("irq", "edge"), location="triggers[0].event"),
    Seeded("behaviour-action-unknown", "stm32f407", behaviour(boot({"act": "led.blink"})),
           "E_BEHAVIOUR_ACTION", ("led", "blink"), location="do[0].act"),
    Seeded("behaviour-field-size-on-integer", "stm32f407", behaviour(
        boot({"print": "{count}"}), vars=[{**COUNT, "size": 4}]),
        "E_BEHAVIOUR_FIELD", ("count",), location="vars[0].size"),
    Seeded("behaviour-format", "stm32f407", behaviour(boot({"print": "count {count:.2}"}), vars=[COUNT]),
           "E_BEHAVIOUR_FORMAT", ("count",), location="do[0].print"),
    Seeded("behaviour-format-brace", "stm32f407", behaviour(boot({"print": "set {count} }"}), vars=[COUNT]),
           "E_BEHAVIOUR_FORMAT", ("set {count} }",), location="do[0].print"),
    Seeded("behaviour-duration", "stm32f407", behaviour(boot({"wait": "1500us"}, {"print": "waited"})),
           "E_BEHAVIOUR_DURATION", ("1500us",), location="do[0].wait"),
    Seeded("behaviour-size", "stm32f407", behaviour(
        boot({"print": "{frame}"}),
        vars=[{"name": "frame", "type": "bytes", "size": 4, "init": {"hex": "01 02 03 04 05 06"}}]),
        "E_BEHAVIOUR_SIZE", ("frame",), location="vars[0].init"),
]  # fmt: skip


def _validate(plan: dict[str, Any], target: str) -> list[Any]:
    return check(parse_plan({"target": target, **plan}), load_target(target))


@pytest.mark.parametrize("case", SEEDED, ids=[c.id for c in SEEDED])
def test_seeded_violation_is_located_and_its_first_relaxation_passes_run_plan(case: Seeded) -> None:
    """Code, objects and magnitudes are the corpus's test; here: the field it points at, and a repair that passes
    the whole pipeline (validate, lower, verify) — not only the obligations."""
    hit = next(e for e in _validate(case.plan, case.target) if e.code == case.code)
    assert hit.location.startswith("behaviour") and hit.location.endswith(case.location), hit.location
    repaired = apply_patch({"target": case.target, **case.plan}, hit.relaxations[0].patch)
    result = run_plan(repaired)
    assert result.status is Status.PASS, [(e.code, e.location, e.message) for e in result.evidence]


def test_every_behaviour_obligation_is_seeded() -> None:
    seeded = {c.code for c in SEEDED}
    elsewhere = {"E_TARGET_UNSUPPORTED"}  # seeded by the corpus's framework cases
    assert set(CODES) - elsewhere <= seeded, set(CODES) - elsewhere - seeded
