"""Kconfig fragments as the SDK's own tools read them: every line ``CONFIG_<SYM>=<value>`` of a symbol the
release has, of its type, within its range, with its dependencies met; no renamed name.

Zephyr's build treats a Kconfig warning as an error: a malformed ``prj.conf`` line (``BT_L2CAP_TX_MTU=247``
without ``CONFIG_``), an undefined symbol, a value outside the symbol's ``range`` (``BT_BUF_ACL_RX_SIZE=68``
with SMP, whose minimum is 69) or an assignment whose ``depends on`` is not met all stop ``west build``.
ESP-IDF's ``kconfgen`` reads a renamed option (``CONFIG_GPTIMER_ISR_IRAM_SAFE``, ``…_CACHE_SAFE`` since
v5.5) only through its rename table, and an unknown one not at all. Judged against the Kconfig facts of
the release the artifact is written for (``facts/kconfig.py``, ``facts/sdk.py``), with the board's
defconfig (``Board.zephyr_defconfig``) and the symbols the artifact's own ``Kconfig`` declares.
Registered under ``kconfig_consistent``, the verdict that judges the configuration.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.kconfig import KconfigFacts, enabled, holds, kconfig_facts, names, range_of
from rac_fw.domains.firmware.facts.sdk import release
from rac_fw.domains.firmware.verify.static.model import finding
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context

#: The fragment each framework's build reads, and where an app declares its own symbols.
FRAGMENTS = {"zephyr": "prj.conf", "espidf": "sdkconfig.defaults"}
APP_KCONFIG = {"zephyr": ("Kconfig",), "espidf": ("main/Kconfig.projbuild",)}

_ASSIGNMENT = re.compile(r"^CONFIG_([A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# CONFIG_([A-Za-z0-9_]+) is not set$")
_STRING = re.compile(r'^"(?:[^"\\]|\\.)*"$')
_INT = re.compile(r"^-?\d+$")
_HEX = re.compile(r"^0[xX][0-9a-fA-F]+$")
_DECLARED = re.compile(r"^\s*(?:menu)?config\s+([A-Za-z0-9_]+)\s*\n\s*(bool|tristate|int|hex|string)\b", re.M)


def app_symbols(files: dict[str, str], framework: str) -> dict[str, str]:
    """Symbols the artifact's own Kconfig declares (``CONFIG_RAC_CRED_<NAME>`` strings) → their type."""
    found: dict[str, str] = {}
    for path in APP_KCONFIG.get(framework, ()):
        found.update(_DECLARED.findall(files.get(path, "")))
    return found


def _valid(kind: str, value: str) -> bool:
    if kind in ("bool", "tristate"):
        return value in ("y", "n") or (kind == "tristate" and value == "m")
    if kind == "int":
        return _INT.fullmatch(value) is not None
    if kind == "hex":
        return _HEX.fullmatch(value) is not None
    return _STRING.fullmatch(value) is not None


@register(
    "kconfig_consistent",
    "E_KCONFIG_SYNTAX", "E_KCONFIG_UNKNOWN", "E_KCONFIG_TYPE", "E_KCONFIG_RANGE", "E_KCONFIG_DEPENDS",
    "E_SDKCONFIG_RENAMED",
)  # fmt: skip
def check_kconfig_lines(ctx: Context) -> list[Evidence]:
    path = FRAGMENTS.get(ctx.framework)
    facts = kconfig_facts(ctx.framework)
    if path is None or facts is None or path not in ctx.files:
        return []
    written_for = release(ctx.target, ctx.framework)
    version = written_for.version if written_for is not None else None
    label = written_for.label if written_for is not None else ctx.framework
    own = app_symbols(ctx.files, ctx.framework)
    found: list[Evidence] = []
    assigned: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(ctx.files[path].splitlines(), start=1):
        line = raw.strip()
        where = f"{path}:{number}"
        unset = _UNSET.match(line)
        if not line or (line.startswith("#") and unset is None):
            continue
        match = _ASSIGNMENT.match(line)
        if unset is not None:
            name, value = unset.group(1), "n"
        elif match is None:
            found.append(finding(
                "E_KCONFIG_SYNTAX",
                f"{where}: {line!r} is not a Kconfig assignment: the build reads only CONFIG_<SYMBOL>=<value> "
                "lines and stops on any other (a symbol written without its CONFIG_ prefix is never set)",
                where, [line], f"write it as CONFIG_{line}" if "=" in line and not line.startswith("CONFIG_") else
                "remove the line",
            ))  # fmt: skip
            continue
        else:
            name, value = match.group(1), match.group(2).strip()
        assigned[name] = (value, number)
        found += _symbol_line(facts, version, label, own, name, value, where)
    return found + _dependencies(ctx, facts, version, label, own, assigned, path)


def _symbol_line(
    facts: KconfigFacts, version: str | None, label: str, own: dict[str, str], name: str, value: str, where: str
) -> list[Evidence]:
    """One assignment: the name is current, known on the release, and the value is of its type."""
    renamed = facts.rename(name, version)
    if renamed is not None:
        return [finding(
            "E_SDKCONFIG_RENAMED",
            f"{where}: CONFIG_{name} was renamed CONFIG_{renamed} ({label} reads the old name only through its "
            "rename table, and a generated file must use the current one)",
            where, [f"CONFIG_{name}", f"CONFIG_{renamed}"], f"write CONFIG_{renamed}={value}",
        )]  # fmt: skip
    symbol = facts.symbol(name, version)
    kind = own.get(name) or (symbol.type if symbol is not None else None)
    if kind is None:
        later = facts.symbols.get(name)
        why = (
            f"it came with {facts.framework} {later.since}" if later is not None and later.since
            else f"it left after {facts.framework} {later.until}" if later is not None and later.until
            else "no Kconfig file of that release declares it"
        )  # fmt: skip
        return [finding(
            "E_KCONFIG_UNKNOWN", f"{where}: CONFIG_{name} is not a symbol of {label}: {why}", where,
            [f"CONFIG_{name}", label], f"remove CONFIG_{name}, or write for a release that has it",
        )]  # fmt: skip
    if not _valid(kind, value):
        return [finding(
            "E_KCONFIG_TYPE", f"{where}: CONFIG_{name} is a {kind} symbol; {value!r} is not a {kind} value",
            where, [f"CONFIG_{name}", value], f"give CONFIG_{name} a {kind} value",
        )]  # fmt: skip
    return []


def _dependencies(
    ctx: Context,
    facts: KconfigFacts,
    version: str | None,
    label: str,
    own: dict[str, str],
    assigned: dict[str, tuple[str, int]],
    path: str,
) -> list[Evidence]:
    """Ranges and ``depends on`` of every assignment, under the configuration Kconfig would build: the
    fragment's ``y`` symbols with the board's Zephyr defconfig, closed under selects and conditional defaults."""
    rules = ctx.rules.section("kconfig")
    if ctx.framework != "zephyr":
        board: set[str] = set()
    elif ctx.target is not None and ctx.target.board.zephyr_defconfig:
        board = set(ctx.target.board.zephyr_defconfig)
    else:  # no facts about the board's defconfig: the common boards' set
        board = set(rules.get("board_default", ()))
    on = {n for n, (v, _) in assigned.items() if v == "y"} | board | set(rules.get("kconfig_default", ()))
    off = {n for n, (v, _) in assigned.items() if v == "n"}
    closed = enabled(facts, version, on - off, off)
    found: list[Evidence] = []
    for name, (value, number) in assigned.items():
        symbol = facts.symbol(name, version)
        if symbol is None or name in own or value == "n":
            continue
        where = f"{path}:{number}"
        if not holds(symbol.depends, closed):
            missing = [n for n in names(symbol.depends) if n not in closed]
            found.append(finding(
                "E_KCONFIG_DEPENDS",
                f"{where}: CONFIG_{name} depends on {symbol.depends} ({symbol.source}), which this configuration "
                f"does not meet on {label}{f': {chr(44).join(missing)} not enabled' if missing else ''}; Kconfig "
                "ignores the assignment and the build stops on its warning",
                where, [f"CONFIG_{name}", *(f"CONFIG_{m}" for m in missing)],
                f"add {' and '.join(f'CONFIG_{m}=y' for m in missing)}" if missing else f"remove CONFIG_{name}",
            ))  # fmt: skip
        limits = range_of(symbol, closed) if symbol.type in ("int", "hex") else None
        if limits is not None and _INT.fullmatch(value) and not limits.min <= int(value) <= limits.max:
            when = f" (with {limits.when})" if limits.when else ""
            found.append(finding(
                "E_KCONFIG_RANGE",
                f"{where}: CONFIG_{name}={value} is outside its range {limits.min}..{limits.max}{when} on {label} "
                f"({symbol.source})",
                where, [f"CONFIG_{name}", value, f"{limits.min}..{limits.max}"],
                f"set CONFIG_{name} to a value in {limits.min}..{limits.max}",
            ))  # fmt: skip
    return found
