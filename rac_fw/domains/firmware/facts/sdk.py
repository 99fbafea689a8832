"""SDK releases as facts: which release of a framework the output is written for, and what differs.

A generated Zephyr app is written for one Zephyr release (3.7 LTS or 4.1; default 4.1), an ESP-IDF app
for ESP-IDF v5.5. Where releases differ — a header moved (``zephyr/net_buf.h`` is ``zephyr/net/buf.h``
on 3.7), a macro renamed (``BT_LE_ADV_OPT_CONN`` was ``BT_LE_ADV_OPT_CONNECTABLE``), a call's parameters
(``thread_analyzer_print(cpu)`` takes none on 3.7), a Kconfig symbol another one needs on that release, a
property a board's devicetree lacks there — the difference is a row of ``sdk.yaml``, read here, and the
lowering and the verifier ask :class:`SdkRelease`; no template or rule branches on a version. Which
Kconfig symbols a release has is the Kconfig facts' answer (``facts/kconfig.py``).

The release is part of the target's facts: :func:`for_release` gives the target with ``Target.sdk``
naming it (one object per target and release, so identity checks and caches keep working), and every
consumer that is handed a target (obligations, the support matrix, lowerings, the verifier) sees it.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ConfigDict, TypeAdapter, with_config

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target

_STRICT = ConfigDict(extra="forbid")
_DATA = Path(__file__).with_name("sdk.yaml")


@with_config(_STRICT)
@dataclass(frozen=True)
class SdkRelease:
    """One release of one framework as the generated code sees it (differences from the framework's
    canonical spelling, which is the default release's)."""

    framework: str
    version: str
    """``MAJOR.MINOR`` (``3.7``, ``4.1``, ``5.5``)."""
    label: str
    """How generated files name it (``Zephyr 4.1``, ``ESP-IDF v5.5``)."""
    source: str
    """The tree (repository and tag) the facts below were read from or built against."""
    headers: dict[str, str] = field(default_factory=dict)
    """Canonical header → this release's spelling (``zephyr/net_buf.h`` → ``zephyr/net/buf.h``)."""
    names: dict[str, str] = field(default_factory=dict)
    """Canonical macro or constant → this release's name (``BT_LE_ADV_OPT_CONN`` → ``…_CONNECTABLE``)."""
    c: dict[str, str] = field(default_factory=dict)
    """Named C fragments whose form differs between releases (``thread_analyzer_print``: the call)."""
    signatures: dict[str, str] = field(default_factory=dict)
    """API name → its declaration on this release, where it differs from the canonical catalog's."""
    kconfig_implies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Kconfig symbol → symbols an app setting it must also set on this release (3.7 PSA crypto: an RNG)."""
    after_kernel: tuple[str, ...] = ()
    """Headers that use kernel types without including ``zephyr/kernel.h``: a unit includes them after it."""
    board_properties: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    """Zephyr board → node label → property lines that board's devicetree lacks on this release, which an
    overlay touching the node must add (the 3.7 STM32F4-Discovery ``adc1`` has no ``st,adc-prescaler``)."""

    def header(self, canonical: str) -> str:
        return self.headers.get(canonical, canonical)

    def name(self, canonical: str) -> str:
        return self.names.get(canonical, canonical)

    def include_order(self, canonical: set[str]) -> list[str]:
        """This release's spelling of the headers a unit includes, in the order it includes them: sorted,
        with the ``after_kernel`` headers after ``zephyr/kernel.h``."""
        spelled = {self.header(h) for h in canonical}
        late = {self.header(h) for h in self.after_kernel}
        return sorted(spelled, key=lambda h: (h in late, h))


@with_config(_STRICT)
@dataclass(frozen=True)
class _Framework:
    default: str
    releases: dict[str, dict[str, Any]]


class UnknownSdkVersion(LookupError):
    """A version no release row describes; carries the known ones."""

    def __init__(self, framework: str, version: str, known: list[str]):
        self.framework, self.version, self.known = framework, version, known
        super().__init__(f"{framework} {version} is not a release rac-fw writes for; known: {', '.join(known)}")


@cache
def _table() -> dict[str, _Framework]:
    raw = yaml.safe_load(_DATA.read_text(encoding="utf-8"))
    return TypeAdapter(dict[str, _Framework]).validate_python(raw)


@cache
def _release(framework: str, version: str) -> SdkRelease:
    row = _table()[framework].releases[version]
    return TypeAdapter(SdkRelease).validate_python({"framework": framework, "version": version, **row})


def frameworks() -> list[str]:
    """Frameworks whose releases are described."""
    return sorted(_table())


def versions(framework: str) -> list[str]:
    """Releases of ``framework`` rac-fw writes for, oldest first."""
    found = _table().get(framework)
    return sorted(found.releases, key=version_key) if found else []


def default_version(framework: str) -> str | None:
    found = _table().get(framework)
    return found.default if found else None


def version_key(version: str) -> tuple[int, ...]:
    """A release for ordering: ``3.7`` < ``4.1`` < ``4.10``."""
    return tuple(int(p) for p in re.findall(r"\d+", version))


def normalize(framework: str, version: str) -> str:
    """The release row a version string means: ``3.7.1``, ``v3.7``, ``3.7`` → ``3.7`` (``UnknownSdkVersion``
    when no row has that major.minor)."""
    parts = re.findall(r"\d+", version)
    short = ".".join(parts[:2])
    if short not in versions(framework):
        raise UnknownSdkVersion(framework, version, versions(framework))
    return short


def release(target: Target | None, framework: str) -> SdkRelease | None:
    """The release ``framework``'s output is written for on ``target`` (its default when the target names
    none; None for a framework without releases, bare metal and the HAL)."""
    chosen = (target.sdk.get(framework) if target is not None else None) or default_version(framework)
    return _release(framework, chosen) if chosen is not None else None


def for_release(target: Target, framework: str, version: str | None) -> Target:
    """``target`` with ``framework``'s release set to ``version`` (normalized; the default release, or
    None, gives ``target`` itself, so output for the default is the output of before)."""
    if version is None:
        return target
    chosen = normalize(framework, version)
    if chosen == (target.sdk.get(framework) or default_version(framework)):
        return target
    return _variant(target, framework, chosen)


#: (id of the target, framework, version) → (that target, its variant): one object per release, so a
#: cache keyed by the target's identity (``lower.zephyr.portable_boards``) tells releases apart.
_VARIANTS: dict[tuple[int, str, str], tuple[Target, Target]] = {}


def _variant(target: Target, framework: str, version: str) -> Target:
    key = (id(target), framework, version)
    found = _VARIANTS.get(key)
    if found is None or found[0] is not target:
        found = _VARIANTS[key] = (target, dataclasses.replace(target, sdk={**target.sdk, framework: version}))
    return found[1]
