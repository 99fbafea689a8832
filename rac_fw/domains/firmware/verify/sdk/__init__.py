"""SDK API catalogs and the verifier's judgements about them, loaded from the data files beside this module.

Facts and judgements live here, kept apart on purpose:

* **catalogs** (``<framework>/api.*``): *facts* — every function and function-like macro a framework
  version declares, with its signature and header, harvested from the real SDK headers (Zephyr 4.x,
  ESP-IDF v5, STM32Cube HAL F4/H7, CMSIS 6). A call to a name that is in no catalog is a hallucinated
  API, the most common failure of generated firmware.
* **header models** (``<framework>/headers*.json``): *facts* — which SDK header includes which, and which
  header declares each type the catalogs' signatures use, harvested by ``harvest.py`` from an SDK tree.
  With the catalogs' own header per function and macro, they say what a unit must include.
* **fragments**: a family of APIs added later (storage, networking…) brings its own files beside the
  main ones — ``<framework>/<catalog stem>.d/*.json`` (catalog headers), ``headers.d/*.json`` (header
  model includes and types) and ``rules.d/*.yaml`` (judgements) — merged in name order on load, so
  families never edit one shared file: lists are joined, mappings united (a key defined twice is an error).
* **rules** (``<framework>/rules.yaml``): *judgements* — which calls are fallible, blocking, logging or
  allocating, which registrations make a function run in interrupt context, which calls must precede
  which, which Kconfig symbol or HAL module an API needs.

Nothing here knows how the lowering produced the C; the verifier judges the files alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from rac_fw.domains.firmware.facts.sdk import SdkRelease

#: libyaml's loader when available (the catalogs load several times faster).
_YamlLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_HERE = Path(__file__).resolve().parent

#: Frameworks the static verifier judges, in the order foreign-API hints are searched.
FRAMEWORKS: tuple[str, ...] = ("zephyr", "espidf", "hal", "baremetal")


def split_top_level(text: str) -> list[str]:
    """Split a parameter list on commas that are not nested inside parentheses or brackets."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    if tail or parts:
        parts.append(tail)
    return [p for p in parts if p]


@dataclass(frozen=True)
class ApiEntry:
    """One SDK function or function-like macro: where it is declared and how it is called."""

    name: str
    header: str
    kind: str
    """``function`` or ``macro``."""
    returns: str | None
    """Declared return type of a function (None for a macro)."""
    params: tuple[str, ...]
    deprecated: bool = False

    @property
    def variadic(self) -> bool:
        return bool(self.params) and self.params[-1].endswith("...")

    @property
    def min_args(self) -> int:
        return len(self.params) - 1 if self.variadic else len(self.params)

    def accepts(self, count: int) -> bool:
        """True when a call with ``count`` arguments matches the declared parameter list."""
        return count >= self.min_args if self.variadic else count == len(self.params)

    @property
    def signature(self) -> str:
        head = f"{self.returns} {self.name}" if self.returns is not None else self.name
        return f"{head}({', '.join(self.params)})"


def _parse_entry(name: str, header: str, kind: str, sig: str, deprecated: bool) -> ApiEntry:
    open_at = sig.index("(")
    returns = sig[:open_at].strip() if kind == "function" else None
    params = split_top_level(sig[open_at + 1 : sig.rindex(")")])
    if params == ["void"]:
        params = []
    return ApiEntry(name, header, kind, returns or ("int" if kind == "function" else None), tuple(params), deprecated)


class Catalog:
    """Every API one framework version declares, by name (signatures parsed on first use).

    Loading indexes names only (``dict.fromkeys`` per header, at C speed): a verification looks up a few
    dozen names out of thousands, so parsing every signature up front would be wasted work.
    """

    def __init__(
        self,
        framework: str,
        label: str,
        version: str,
        sources: tuple[Mapping[str, Any], ...],
        headers: Mapping[str, Mapping[str, Any]],
    ):
        self.framework, self.label, self.version, self.sources = framework, label, version, sources
        self._headers = headers
        index: dict[str, tuple[str, str]] = {}
        # Later updates win, so walk headers backwards and macros before functions: the first header
        # (and, within it, the function) declaring a name is the one recorded.
        for header, body in reversed(list(headers.items())):
            for kind, key in (("macro", "macros"), ("function", "functions")):
                names = body.get(key)
                if names:
                    index.update(dict.fromkeys(names, (header, kind)))
        self.entries: Mapping[str, tuple[str, str]] = index
        """API name → (header, ``function``|``macro``)."""
        self._parsed: dict[str, ApiEntry] = {}

    def get(self, name: str) -> ApiEntry | None:
        parsed = self._parsed.get(name)
        if parsed is None:
            where = self.entries.get(name)
            if where is None:
                return None
            header, kind = where
            body = self._headers[header]
            signature = body[f"{kind}s"][name]
            parsed = _parse_entry(name, header, kind, signature, bool(body.get("deprecated", False)))
            self._parsed[name] = parsed
        return parsed

    def __contains__(self, name: object) -> bool:
        return name in self.entries


def _load_data(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=_YamlLoader)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping")
    return data


def _merge(base: Any, extra: Any, where: str) -> Any:
    """``extra`` joined into ``base``: lists concatenated, mappings united recursively, scalars must agree."""
    if isinstance(base, dict) and isinstance(extra, dict):
        merged = dict(base)
        for key, value in extra.items():
            merged[key] = _merge(base[key], value, f"{where}.{key}") if key in base else value
        return merged
    if isinstance(base, list) and isinstance(extra, list):
        return base + [v for v in extra if v not in base]
    if base != extra:
        raise ValueError(f"{where}: defined twice with different values ({base!r}, {extra!r})")
    return base


def _fragment_folders(path: Path) -> list[Path]:
    """Where the fragments of ``path`` live: ``<stem>.d/`` beside it and, for one variant of a catalog
    (``api-stm32f4.json``, ``headers-stm32h7.json``), first the folder every variant shares (``api.d/``,
    ``headers.d/``): an API family common to the variants (CMSIS-RTOS2 for every HAL family) is one file."""
    own = path.with_name(path.stem + ".d")
    shared = path.with_name(path.stem.split("-", 1)[0] + ".d")
    return [folder for folder in dict.fromkeys((shared, own)) if folder.is_dir()]


def _load_with_fragments(path: Path, *keys: str) -> dict[str, Any]:
    """``path`` plus every fragment in its fragment folders (``_fragment_folders``, name order); only ``keys``
    are merged from a fragment (its ``framework``/``version``/``sources`` describe where it came from)."""
    data = _load_data(path)
    for folder in _fragment_folders(path):
        for fragment in sorted(folder.iterdir()):
            if fragment.suffix not in (".json", ".yaml"):
                continue
            extra = _load_data(fragment)
            for key in keys or tuple(extra):
                if key not in extra:
                    continue
                where = f"{fragment.name}:{key}"
                data[key] = _merge(data[key], extra[key], where) if key in data else extra[key]
            if "sources" in extra and "sources" in data and keys:
                data["sources"] = list(data["sources"]) + list(extra["sources"])
    return data


@cache
def _catalog_file(path: Path, label: str) -> Catalog:
    """One catalog file, loaded once per process (catalogs are JSON: several times faster than YAML)."""
    data = _load_with_fragments(path, "headers")
    return Catalog(
        framework=data["framework"],
        label=label,
        version=str(data["version"]),
        sources=tuple(data.get("sources", ())),
        headers=data["headers"],
    )


class NameSet:
    """A set of API names given as exact names or ``^regex`` patterns (as written in the rules files)."""

    def __init__(self, items: Iterable[str] = ()):
        self.exact: set[str] = set()
        self.patterns: list[re.Pattern[str]] = []
        for item in items:
            if item.startswith("^") or item.endswith("$"):
                self.patterns.append(re.compile(item))
            else:
                self.exact.add(item)

        self._memo: dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        found = self._memo.get(name)
        if found is None:
            found = name in self.exact or any(p.search(name) for p in self.patterns)
            self._memo[name] = found
        return found

    def select(self, names: set[str]) -> set[str]:
        """The members of ``names`` in this set: one set intersection, then patterns once per other name."""
        found = self.exact & names
        if self.patterns:
            memo = self._memo
            for name in names - found:
                hit = memo.get(name)
                if hit is None:
                    hit = memo[name] = any(p.search(name) for p in self.patterns)
                if hit:
                    found.add(name)
        return found


@dataclass(frozen=True)
class OrderRule:
    """``first`` must be called before ``then`` on the same object (the key argument), in the same function.

    ``key`` maps a function to the index of the argument naming the object (default 0); ``None`` means the
    rule is about the calls alone. ``required`` says whether a ``then`` without any ``first`` in the whole
    artifact is an error. An object created by one of ``defined_by`` (e.g. ``K_SEM_DEFINE``) counts as done.
    ``ordered`` false keeps only the presence requirement: the ``then`` may legitimately come first (a GPIO
    output level written before the pin is switched to output).
    """

    first: NameSet
    then: NameSet
    first_names: tuple[str, ...]
    key: Mapping[str, int] | None
    required: bool
    defined_by: frozenset[str]
    ordered: bool = True

    def key_index(self, name: str) -> int:
        return 0 if self.key is None else self.key.get(name, 0)


@dataclass(frozen=True)
class Rules:
    """The judgements for one framework (see the module docstring); raw mappings plus compiled name sets."""

    framework: str
    label: str
    raw: Mapping[str, Any]
    order: tuple[OrderRule, ...]
    blocking: NameSet
    logs: NameSet
    allocates: NameSet
    fallible_include: NameSet
    fallible_exclude: NameSet
    null_on_failure: NameSet
    isr_patterns: tuple[re.Pattern[str], ...]
    isr_registrations: tuple[tuple[NameSet, tuple[int, ...]], ...]
    dma_start_tx: NameSet
    dma_start_rx: NameSet
    dma_start_both: NameSet
    dma_flush: NameSet
    dma_invalidate: NameSet
    catalog_files: Mapping[str, str] = field(default_factory=dict)

    def section(self, name: str) -> Mapping[str, Any]:
        value = self.raw.get(name) or {}
        return value if isinstance(value, Mapping) else {}

    def registration_args(self, name: str) -> tuple[int, ...]:
        """Argument indices that become interrupt-context callbacks when ``name`` is called."""
        return next((idx for names, idx in self.isr_registrations if name in names), ())


def _order_rule(raw: Mapping[str, Any]) -> OrderRule:
    key_raw = raw.get("key", {})
    key = None if key_raw == "none" else dict(key_raw or {})
    return OrderRule(
        first=NameSet(raw["first"]),
        then=NameSet(raw["then"]),
        first_names=tuple(raw["first"]),
        key=key,
        required=bool(raw.get("required", True)),
        defined_by=frozenset(raw.get("defined_by", ())),
        ordered=bool(raw.get("ordered", True)),
    )


@cache
def rules(framework: str) -> Rules:
    """The rules of ``framework`` (``zephyr``, ``espidf``, ``hal``, ``baremetal``); cached."""
    if framework not in FRAMEWORKS:
        raise KeyError(framework)
    raw = _load_with_fragments(_HERE / framework / "rules.yaml")
    isr = raw.get("isr") or {}
    fallible = raw.get("fallible") or {}
    dma = raw.get("dma_cache") or {}
    return Rules(
        framework=framework,
        label=str(raw.get("label", framework)),
        raw=raw,
        order=tuple(_order_rule(r) for r in raw.get("order") or ()),
        blocking=NameSet(isr.get("blocking", ())),
        logs=NameSet(isr.get("logs", ())),
        allocates=NameSet(isr.get("allocates", ())),
        fallible_include=NameSet(fallible.get("include", ())),
        fallible_exclude=NameSet(fallible.get("exclude", ())),
        null_on_failure=NameSet(fallible.get("null_on_failure", ())),
        isr_patterns=tuple(re.compile(p) for p in isr.get("name_patterns", ())),
        isr_registrations=tuple(
            (NameSet([name]), tuple(indices)) for name, indices in (isr.get("registrations") or {}).items()
        ),
        dma_start_tx=NameSet(dma.get("start_tx", ())),
        dma_start_rx=NameSet(dma.get("start_rx", ())),
        dma_start_both=NameSet(dma.get("start_both", ())),
        dma_flush=NameSet(dma.get("flush", ())),
        dma_invalidate=NameSet(dma.get("invalidate", ())),
        catalog_files=dict(raw.get("catalogs") or {}),
    )


def catalog_variants(framework: str) -> dict[str, str]:
    """Variant name → catalog file of ``framework`` (``default``, or ``STM32F4``/``STM32H7`` for the HAL)."""
    return dict(rules(framework).catalog_files)


def catalog(framework: str, variant: str | None = None, release: SdkRelease | None = None) -> Catalog:
    """The API catalog of ``framework`` (for the HAL, ``variant`` is the family, default the first), as
    ``release`` declares it (the catalog files are the default release's; see :func:`_released_catalog`)."""
    files = catalog_variants(framework)
    chosen = variant if variant in files else next(iter(files))
    label = rules(framework).label + ("" if chosen == "default" else f" {chosen}")
    found = _catalog_file(_HERE / framework / files[chosen], label)
    return found if release is None or _is_canonical(release) else _released_catalog(found, release)


def _is_canonical(release: SdkRelease) -> bool:
    return not (release.headers or release.signatures)


#: (id of the canonical catalog or header model, framework, release) → it as that release declares it. The
#: canonical objects are cached for the process, so their ids are stable keys.
_RELEASED: dict[tuple[int, str, str], Any] = {}


def _released_catalog(base: Catalog, release: SdkRelease) -> Catalog:
    """``base`` as another release declares it: headers under their names there (``zephyr/net_buf.h`` is
    ``zephyr/net/buf.h`` on Zephyr 3.7) and the signatures that differ (``facts/sdk.yaml``)."""
    key = (id(base), release.framework, release.version)
    if key in _RELEASED:
        return _RELEASED[key]
    headers: dict[str, dict[str, Any]] = {}
    for header, body in base._headers.items():
        moved = {key: dict(value) if isinstance(value, Mapping) else value for key, value in body.items()}
        for name, signature in release.signatures.items():
            if name in (moved.get("functions") or {}):
                moved["functions"][name] = signature
        headers[release.header(header)] = moved
    found = Catalog(base.framework, f"{base.label} ({release.label})", release.version, base.sources, headers)
    _RELEASED[key] = found
    return found


def all_catalogs(framework: str) -> list[Catalog]:
    """Every catalog variant of ``framework`` (both HAL families, for example)."""
    return [catalog(framework, variant) for variant in catalog_variants(framework)]


@dataclass(frozen=True)
class StdLib:
    """The C standard library and compiler builtins: callable in every framework."""

    names: frozenset[str]
    builtin_prefixes: tuple[str, ...]
    logs: frozenset[str]
    allocates: frozenset[str]
    null_on_failure: frozenset[str]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self.names or name.startswith(self.builtin_prefixes))


@cache
def stdlib() -> StdLib:
    raw = _load_data(_HERE / "c" / "stdlib.yaml")
    names = frozenset(n for group in raw["functions"].values() for n in group)
    return StdLib(
        names=names,
        builtin_prefixes=tuple(raw["builtin_prefixes"]),
        logs=frozenset(raw["logs"]),
        allocates=frozenset(raw["allocates"]),
        null_on_failure=frozenset(raw["returns_null_on_failure"]),
    )


@dataclass(frozen=True)
class HeaderModel:
    """Which SDK header includes which, and which header declares each type the catalog's signatures use.

    Harvested from the real SDK headers (``sdk/harvest.py``) into ``headers*.json`` beside each catalog.
    Includes are recorded unconditionally (``#ifdef`` branches too), so what a unit can see is
    over-approximated: a declaration the model calls missing is missing on every configuration. A header
    the model does not list is a leaf (its includes are not followed).
    """

    framework: str
    includes: Mapping[str, tuple[str, ...]]
    stand_ins: Mapping[str, str]
    """Application-supplied header → the SDK template that stands in for it when the artifact has none."""
    types: Mapping[str, str]
    """Type name (``gpio_dt_spec``, ``UART_HandleTypeDef``) → the header declaring it."""
    by_suffix: Mapping[str, str] = field(default_factory=dict)
    """A shorter spelling of a listed header (``driver/i2c.h``) → the listed one."""

    def known(self, name: str) -> str | None:
        """The model's spelling of the included ``name`` (itself, a longer listed path ending in it, or None)."""
        if name in self.includes:
            return name
        return self.by_suffix.get(name)


@cache
def _header_model_file(path: Path, framework: str) -> HeaderModel:
    data = _load_with_fragments(path, "includes", "stand_ins", "types")
    includes = {h: tuple(v) for h, v in data["includes"].items()}
    by_suffix: dict[str, str] = {}
    for header in includes:
        parts = header.split("/")
        for cut in range(1, len(parts)):
            by_suffix.setdefault("/".join(parts[cut:]), header)
    return HeaderModel(framework, includes, dict(data.get("stand_ins") or {}), dict(data["types"]), by_suffix)


def header_model(framework: str, variant: str | None = None, release: SdkRelease | None = None) -> HeaderModel | None:
    """The header model beside the catalog of ``framework`` (``variant`` as for :func:`catalog`), if harvested,
    with the headers under ``release``'s names."""
    files = catalog_variants(framework)
    chosen = variant if variant in files else next(iter(files))
    path = _HERE / framework / files[chosen].replace("api", "headers", 1)
    if not path.is_file():
        return None
    found = _header_model_file(path, framework)
    return found if release is None or not release.headers else _released_model(found, release)


def _released_model(base: HeaderModel, release: SdkRelease) -> HeaderModel:
    key = (id(base), release.framework, release.version)
    if key in _RELEASED:
        return _RELEASED[key]
    name = release.header
    includes = {name(h): tuple(name(i) for i in inner) for h, inner in base.includes.items()}
    by_suffix: dict[str, str] = {}
    for header in includes:
        parts = header.split("/")
        for cut in range(1, len(parts)):
            by_suffix.setdefault("/".join(parts[cut:]), header)
    found = HeaderModel(
        base.framework,
        includes,
        {name(h): name(t) for h, t in base.stand_ins.items()},
        {t: name(h) for t, h in base.types.items()},
        by_suffix,
    )
    _RELEASED[key] = found
    return found
