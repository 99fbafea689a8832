"""The check registry: every rule the verifier judges, by its rule key, and the checks that judge it.

A *rule* is one verdict of ``verify_sources`` (its key is the verdict's predicate name, e.g.
``call_order``); a *check* is one function over the shared :class:`~.context.Context` that yields the
rule's evidence, declaring every ``E_…`` code it may emit. Several checks may judge one rule (call order,
clocks and forbidden calls together make ``call_order``). Checks register themselves with
:func:`register` where they are defined, so adding a check touches its own module alone; the registry's
contents are pinned by a test (as Zephyr pins its west runners), so a check that silently fails to
register, or a code nobody declared, is caught.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.sdk import FRAMEWORKS

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context

CheckFunction = Callable[["Context"], list[Evidence]]


@dataclass(frozen=True)
class Rule:
    """One judged predicate: its rule key, what passing means, and the frameworks it applies to."""

    key: str
    meaning: str
    frameworks: tuple[str, ...] = FRAMEWORKS


#: Every rule, in verdict order.
RULES: tuple[Rule, ...] = (
    Rule("c_parses", "every C file parses without syntax errors"),
    Rule("sdk_apis_known", "every SDK call exists in the framework version, with the declared arity"),
    Rule(
        "sdk_identifiers_declared",
        "every SDK call and type is declared by a header the unit includes",
        ("zephyr", "espidf", "hal"),
    ),
    Rule("no_foreign_framework_api", "no call into another framework's API"),
    Rule("call_order", "init → configure → start, readiness before use, clocks on, nothing forbidden"),
    Rule("dma_cache_maintenance", "DMA sources cleaned before start, destinations invalidated after"),
    Rule("isr_context_safe", "no blocking, sleeping, logging, allocation or thread-only call in ISRs"),
    Rule("isr_shared_state_volatile", "state written in ISRs and used by threads is volatile/atomic"),
    Rule("return_values_checked", "results of fallible calls are tested"),
    Rule("no_unused_statics", "every file-scope static object is used in its file", ("zephyr", "hal")),
    Rule("kconfig_consistent", "Kconfig symbols the APIs need are enabled", ("zephyr", "espidf")),
    Rule("devicetree_consistent", "devicetree nodes/properties the C reads exist", ("zephyr",)),
    Rule("hal_conf_consistent", "HAL modules used are enabled; family header matches", ("hal",)),
)

_KEYS = frozenset(rule.key for rule in RULES)


@dataclass(frozen=True)
class Check:
    """One registered check: the rule it judges, its name, the codes it may emit, and the function."""

    rule: str
    name: str
    codes: tuple[str, ...]
    run: CheckFunction


#: Registered checks, in registration order (the order of ``static``'s imports, then ``config``).
CHECKS: list[Check] = []


def register(rule: str, *codes: str) -> Callable[[CheckFunction], CheckFunction]:
    """Register the decorated function as a check of ``rule`` that may emit ``codes``."""
    if rule not in _KEYS:
        raise KeyError(f"no rule {rule!r} (known: {', '.join(sorted(_KEYS))})")

    def add(function: CheckFunction) -> CheckFunction:
        CHECKS.append(Check(rule, function.__name__, codes, function))
        return function

    return add


def checks_of(rule: str) -> list[Check]:
    """The checks judging ``rule``, in registration order."""
    return [c for c in CHECKS if c.rule == rule]
