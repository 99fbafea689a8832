"""What every check of one artifact shares: the files, the framework's rules and catalog, the program.

Built once per ``verify_sources`` call. The costly shared results (the API judgement, which both the
known-API and the foreign-API rules read; the interrupt-context functions, which the ISR and the shared
state rules read) are computed on first use, so a framework whose rules skip them never pays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.sdk import release
from rac_fw.domains.firmware.verify.sdk import (
    FRAMEWORKS,
    Catalog,
    HeaderModel,
    Rules,
    StdLib,
    all_catalogs,
    catalog,
    header_model,
    rules,
    stdlib,
)
from rac_fw.domains.firmware.verify.static.api import check_apis
from rac_fw.domains.firmware.verify.static.isr import isr_functions
from rac_fw.domains.firmware.verify.static.model import Program, build_program

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target


def _hal_family(files: dict[str, str], target: Target | None) -> str | None:
    if target is not None and target.board.hal_family:
        return target.board.hal_family
    headers: dict[str, str] = dict(rules("hal").raw.get("family_headers") or {})
    return next((family for family, header in headers.items() if any(header in t for t in files.values())), None)


def catalog_variant(framework: str, files: dict[str, str], target: Target | None) -> str | None:
    """The catalog variant the artifact is judged against (the HAL family, from the target or the includes)."""
    return _hal_family(files, target) if framework == "hal" else None


def framework_catalog(framework: str, files: dict[str, str], target: Target | None) -> Catalog:
    """The API catalog an artifact is judged against (the source-writing interfaces show it as context)."""
    return catalog(framework, catalog_variant(framework, files, target), release(target, framework))


@dataclass(eq=False)
class Context:
    """One artifact under judgement (``target`` None: only what the files themselves show is judged)."""

    files: dict[str, str]
    framework: str
    target: Target | None
    rules: Rules
    catalog: Catalog
    stdlib: StdLib
    program: Program
    headers: HeaderModel | None
    """The SDK's header model (None where none is harvested: then declarations are not judged)."""

    @classmethod
    def build(cls, files: dict[str, str], framework: str, target: Target | None) -> Context:
        judged = rules(framework)
        variant = catalog_variant(framework, files, target)
        written_for = release(target, framework)
        return cls(
            files,
            framework,
            target,
            judged,
            catalog(framework, variant, written_for),
            stdlib(),
            build_program(files, judged),
            header_model(framework, variant, written_for),
        )

    def foreign(self) -> list[Catalog]:
        """Every other framework's catalogs (loaded only when a name is unknown here)."""
        return [c for other in FRAMEWORKS if other != self.framework for c in all_catalogs(other)]

    @cached_property
    def apis(self) -> tuple[list[Evidence], list[Evidence]]:
        """(unknown/arity/deprecated evidence, foreign-framework evidence)."""
        return check_apis(self.program, self.catalog, self.foreign, self.stdlib)

    @cached_property
    def isr(self) -> dict[str, str]:
        """Local functions that run in interrupt context → why."""
        return isr_functions(self.program, self.rules)

    @property
    def cache_present(self) -> bool:
        return self.target is not None and self.target.core.dcache is not None

    @property
    def uncached_regions(self) -> frozenset[str]:
        """Upper-case names and devicetree labels of the regions the D-cache does not hold (TCMs)."""
        if self.target is None:
            return frozenset()
        regions = [m for m in self.target.memory if not m.cacheable]
        return frozenset(n.upper() for m in regions for n in (m.name, m.dt_label) if n)
