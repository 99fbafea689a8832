"""``verify_sources``: judge a generated source tree on its own, one verdict per predicate.

This is the independent verifier of the contract's *Verify* step for firmware sources. It reads only the
files (and, when given, the target's facts); it never imports the lowering nor reads its receipt, so a
lowering bug cannot vouch for itself. Every failed predicate comes with located evidence
(``src/main.c:42 in main()``) the agent can repair from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rac_fw.contract import Evidence, Verdict
from rac_fw.domain import Verification
from rac_fw.domains.firmware.verify import config, static
from rac_fw.domains.firmware.verify.sdk import FRAMEWORKS, Catalog, all_catalogs, catalog, rules, stdlib

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target


@dataclass(frozen=True)
class Predicate:
    """One judged predicate: its verdict name, what it means, and the frameworks it applies to."""

    name: str
    meaning: str
    frameworks: tuple[str, ...] = FRAMEWORKS


PREDICATES: tuple[Predicate, ...] = (
    Predicate("c_parses", "every C file parses without syntax errors"),
    Predicate("sdk_apis_known", "every SDK call exists in the framework version, with the declared arity"),
    Predicate("no_foreign_framework_api", "no call into another framework's API"),
    Predicate("call_order", "init → configure → start, readiness before use, clocks on, nothing forbidden"),
    Predicate("dma_cache_maintenance", "DMA sources cleaned before start, destinations invalidated after"),
    Predicate("isr_context_safe", "no blocking, sleeping, logging, allocation or thread-only call in ISRs"),
    Predicate("isr_shared_state_volatile", "state written in ISRs and used by threads is volatile/atomic"),
    Predicate("return_values_checked", "results of fallible calls are tested"),
    Predicate("kconfig_consistent", "Kconfig symbols the APIs need are enabled", ("zephyr", "espidf")),
    Predicate("devicetree_consistent", "devicetree nodes/properties the C reads exist", ("zephyr",)),
    Predicate("hal_conf_consistent", "HAL modules used are enabled; family header matches", ("hal",)),
)


def _hal_family(files: dict[str, str], target: Target | None) -> str | None:
    if target is not None and target.board.hal_family:
        return target.board.hal_family
    headers: dict[str, str] = dict(rules("hal").raw.get("family_headers") or {})
    return next((family for family, header in headers.items() if any(header in t for t in files.values())), None)


def framework_catalog(framework: str, files: dict[str, str], target: Target | None) -> Catalog:
    """The catalog the artifact is judged against (the HAL family comes from the target or the includes)."""
    return catalog(framework, _hal_family(files, target) if framework == "hal" else None)


def _foreign(framework: str) -> list[Catalog]:
    return [c for other in FRAMEWORKS if other != framework for c in all_catalogs(other)]


def _cache_present(target: Target | None) -> bool:
    return target is not None and target.core.dcache is not None


def _uncached_regions(target: Target | None) -> frozenset[str]:
    """Upper-case names and devicetree labels of the regions the D-cache does not hold (TCMs)."""
    if target is None:
        return frozenset()
    regions = [m for m in target.memory if not m.cacheable]
    return frozenset(n.upper() for m in regions for n in (m.name, m.dt_label) if n)


def _checks(files: dict[str, str], framework: str, target: Target | None) -> dict[str, Callable[[], list[Evidence]]]:
    """Predicate name → the function computing its evidence (evaluated lazily, in order)."""
    judged = rules(framework)
    cat = framework_catalog(framework, files, target)
    lib = stdlib()
    program = static.build_program(files, judged)
    apis = static.check_apis(program, cat, lambda: _foreign(framework), lib)
    isr = static.isr_functions(program, judged)
    return {
        "c_parses": lambda: static.check_parse(program),
        "sdk_apis_known": lambda: apis[0],
        "no_foreign_framework_api": lambda: apis[1],
        "call_order": lambda: (
            static.check_order(program, judged)
            + static.check_clocks(program, judged, cat)
            + static.check_forbidden(program, judged)
        ),
        "dma_cache_maintenance": lambda: static.check_dma_cache(
            program, judged, _cache_present(target), _uncached_regions(target)
        ),
        "isr_context_safe": lambda: static.check_isr(program, judged, cat, lib, isr),
        "isr_shared_state_volatile": lambda: static.check_shared_state(program, isr),
        "return_values_checked": lambda: static.check_returns(program, judged, cat, lib),
        "kconfig_consistent": lambda: config.check_kconfig(files, program, judged, cat, target),
        "devicetree_consistent": lambda: config.check_devicetree(files, program, target),
        "hal_conf_consistent": lambda: config.check_hal_conf(files, program, judged, cat, target),
    }


def verify_sources(files: dict[str, str], framework: str, target: Target | None) -> Verification:
    """Judge the generated ``files`` (artifact-relative path → text) for ``framework`` on ``target``.

    ``target`` may be None: checks that need facts (board devicetree labels, D-cache presence, HAL family,
    ESP32 chip) then judge only what the files themselves show.
    """
    if framework not in FRAMEWORKS:
        return Verification(
            verdicts=[Verdict(predicate="framework_known", passed=False, measured=framework, detail="unknown")],
            evidence=[
                Evidence(
                    code="E_UNKNOWN_FRAMEWORK",
                    message=f"no static verifier for framework {framework!r}; known: {', '.join(FRAMEWORKS)}",
                    objects=[framework],
                )
            ],
        )
    if not any(path.endswith(static.C_SUFFIXES) for path in files):
        return Verification(
            verdicts=[Verdict(predicate="c_sources_present", passed=False, measured=0, limit=1, unit="files")],
            evidence=[Evidence(code="E_NO_C_SOURCES", message="the artifact contains no .c/.h file to verify")],
        )
    checks = _checks(files, framework, target)
    verdicts: list[Verdict] = []
    evidence: list[Evidence] = []
    for predicate in PREDICATES:
        if framework not in predicate.frameworks:
            continue
        found = checks[predicate.name]()
        verdicts.append(
            Verdict(
                predicate=predicate.name,
                passed=not found,
                measured=len(found),
                limit=0,
                unit="violations",
                detail=predicate.meaning if not found else "; ".join(sorted({e.code for e in found})),
            )
        )
        evidence.extend(found)
    return Verification(verdicts=verdicts, evidence=evidence)
