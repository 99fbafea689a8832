"""Configuration consistency: the C relies on Kconfig symbols, devicetree nodes and HAL modules — are they there?

* Zephyr: every driver/subsystem API the C calls needs its Kconfig symbol ``=y`` in ``prj.conf`` (symbols
  the supported boards enable by default need only not be switched off); ``k_malloc`` needs a heap;
  ``__nocache`` needs ``CONFIG_NOCACHE_MEMORY``; ``%f`` in ``printk``/``LOG_*`` needs
  ``CONFIG_CBPRINTF_FP_SUPPORT`` — ``E_KCONFIG_MISSING``.
  Devicetree: ``DT_ALIAS``/``DT_NODELABEL``/``DT_CHOSEN`` must name something the overlay defines or the
  board has (the target's ``dt_aliases``/``dt_node_labels``/``dt_chosen``); ``DT_PATH(zephyr_user)`` needs a
  ``zephyr,user`` node carrying the ``io-channels``/``pwms``/``*-gpios`` properties (and indices) the specs
  read — ``E_DT_NODE_MISSING``, ``E_DT_PROPERTY_MISSING``; an overlay ``&label`` must exist on the board —
  ``E_DT_LABEL_UNKNOWN``.
* ESP-IDF: ``sdkconfig.defaults`` exists, targets the board's chip and keeps the symbols the APIs need.
* STM32 HAL: the HAL config header enables every module whose API is called (``HAL_UART_MODULE_ENABLED``)
  and the family header matches the target — ``E_HAL_MODULE_DISABLED``, ``E_HAL_CONF_MISSING``,
  ``E_HAL_FAMILY_MISMATCH``.
"""

from __future__ import annotations

import re
import tempfile
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import kconfiglib
import tree_sitter_devicetree
from tree_sitter import Language, Node, Parser

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.devicetree import binding
from rac_fw.domains.firmware.verify.sdk import Catalog, NameSet, Rules, split_top_level
from rac_fw.domains.firmware.verify.static.model import Call, Program, finding
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.verify.static.context import Context

_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_FLOAT_CONVERSION = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[fFeEgG]")


def _uncomment(text: str) -> str:
    """Remove comments, keeping newlines so offsets still map to the right line."""
    return _COMMENTS.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# --------------------------------------------------------------------------------------------------
# Kconfig / sdkconfig
# --------------------------------------------------------------------------------------------------


_KCONFIG_THREAD = threading.local()


def _kconfig() -> tuple[kconfiglib.Kconfig, Path]:
    """This thread's kconfiglib instance over an empty Kconfig tree, and a scratch directory for fragments.

    kconfiglib reads a configuration against the Kconfig tree that defines its symbols; the verifier has
    no Zephyr/ESP-IDF tree, so the tree is empty and every assignment lands in ``missing_syms`` exactly as
    kconfiglib's own ``.config`` parser read it (``# CONFIG_X is not set`` as ``n``).
    """
    state = getattr(_KCONFIG_THREAD, "state", None)
    if state is None:
        scratch = tempfile.TemporaryDirectory(prefix="rac-fw-kconfig-")
        tree = Path(scratch.name) / "Kconfig"
        tree.write_text("", encoding="utf-8")
        state = _KCONFIG_THREAD.state = (kconfiglib.Kconfig(str(tree), warn_to_stderr=False), scratch)
    kconf, scratch = state
    return kconf, Path(scratch.name)


def parse_kconfig(text: str) -> dict[str, str]:
    """A Kconfig fragment (``prj.conf``, ``sdkconfig.defaults``) → {``X``: value}, read by kconfiglib.

    String values are unquoted and unescaped as kconfiglib does; an unset symbol reads ``n``. Memoized by
    content (fragments repeat across verifications; each parse goes through a scratch file).
    """
    return dict(_parsed_kconfig(text))


@lru_cache(maxsize=256)
def _parsed_kconfig(text: str) -> tuple[tuple[str, str], ...]:
    kconf, scratch = _kconfig()
    fragment = scratch / "fragment.conf"
    fragment.write_text(text, encoding="utf-8")
    kconf.load_config(str(fragment))
    values: dict[str, str] = {}
    for name, value in kconf.missing_syms:
        quoted = len(value) >= 2 and value[0] == value[-1] == '"'
        values[name] = kconfiglib.unescape(value[1:-1]) if quoted else value.strip()
    return tuple(values.items())


def _config_files(files: dict[str, str], names: list[str]) -> list[str]:
    """Paths of the artifact's Kconfig fragments: the named files plus ``boards/*.conf`` overlays."""
    found = [p for p in sorted(files) if p.rsplit("/", 1)[-1] in names]
    found += [p for p in sorted(files) if p.startswith("boards/") and p.endswith(".conf")]
    return found


def _sdk_calls(program: Program, catalog: Catalog) -> Iterator[Call]:
    for call in program.calls:
        if not program.is_local(call.name) and call.name in catalog:
            yield call


@register(
    "kconfig_consistent", "E_KCONFIG_CONFLICT", "E_KCONFIG_FILE_MISSING", "E_KCONFIG_MISSING", "E_SDKCONFIG_TARGET"
)
def check_kconfig(ctx: Context) -> list[Evidence]:
    files, program, rules, catalog, target = ctx.files, ctx.program, ctx.rules, ctx.catalog, ctx.target
    spec = rules.section("kconfig")
    names = list(spec.get("files", ()))
    if not names:
        return []
    paths = _config_files(files, names)
    if not paths:
        return [
            finding(
                "E_KCONFIG_FILE_MISSING",
                f"the artifact has no {' / '.join(names)}; the symbols the C needs cannot be set",
                names[0],
                names,
                f"add {names[0]} with the symbols the operations need",
            )
        ]
    conf: dict[str, str] = {}
    for path in paths:
        conf.update(parse_kconfig(files[path]))
    where = paths[0]
    # A board whose defconfig the facts do not record (an empty list) is judged as the common boards are.
    board = (target.board.zephyr_defconfig or None) if target is not None and rules.framework == "zephyr" else None
    board_default = {*spec.get("kconfig_default", ()), *(spec.get("board_default", ()) if board is None else board)}
    by_header: dict[str, list[str]] = dict(spec.get("by_header") or {})
    by_function: dict[str, list[str]] = dict(spec.get("by_function") or {})
    needs: dict[str, str] = {}
    for call in _sdk_calls(program, catalog):
        entry = catalog.get(call.name)
        header = entry.header if entry else ""
        for symbol in [*by_header.get(header, ()), *by_function.get(call.name, ())]:
            needs.setdefault(symbol, f"{call.location} calls {call.name}")
    for token, symbols in (spec.get("by_token") or {}).items():
        for unit in program.units:
            offset = unit.text.find(token)
            if offset >= 0:
                for symbol in symbols:
                    needs.setdefault(symbol, f"{unit.path}:{_line_of(unit.text, offset)} uses {token}")
    needs.update(_float_format_needs(program, spec))
    found: list[Evidence] = []
    for symbol, why in needs.items():
        value = conf.get(symbol)
        missing = value == "n" if symbol in board_default else value != "y"
        if missing:
            state = "switches it off" if value == "n" else ("does not set it" if value is None else f"sets {value}")
            found.append(
                finding(
                    "E_KCONFIG_MISSING",
                    f"{why}, which needs CONFIG_{symbol}=y; {where} {state}",
                    where,
                    [f"CONFIG_{symbol}"],
                    f"add CONFIG_{symbol}=y to {where}",
                )
            )
    for function, symbol in (spec.get("positive") or {}).items():
        first = next(iter(program.calls_named({function})), None)
        if first is None or program.is_local(function):
            continue
        value = conf.get(symbol, "0")
        if not value.isdigit() or int(value) <= 0:
            found.append(
                finding(
                    "E_KCONFIG_MISSING",
                    f"{first.location} calls {function}, which allocates from the system heap; "
                    f"CONFIG_{symbol} is {value} in {where}",
                    where,
                    [f"CONFIG_{symbol}"],
                    f"set CONFIG_{symbol} to the bytes the allocations need, or allocate statically",
                )
            )
    found += _idf_target(conf, where, rules, target)
    found += _conflicts(conf, where, spec)
    return found


def _conflicts(conf: dict[str, str], where: str, spec: Mapping[str, Any]) -> list[Evidence]:
    """Two members of one Kconfig choice set ``y``, or a symbol beside one its ``depends on !X`` excludes.

    Kconfig resolves either silently (the last choice member read wins; the excluded symbol stays n), so
    the configuration the C was written for is not the one built — ``E_KCONFIG_CONFLICT``.
    """
    found: list[Evidence] = []
    on = {s for s, v in conf.items() if v == "y"}
    for members in spec.get("choices") or []:
        chosen = [m for m in members if m in on]
        if len(chosen) > 1:
            names = [f"CONFIG_{m}" for m in chosen]
            found.append(
                finding(
                    "E_KCONFIG_CONFLICT",
                    f"{where} sets {' and '.join(f'{n}=y' for n in names)}, members of one Kconfig choice: "
                    "only one can be selected",
                    where,
                    names,
                    f"keep one of {', '.join(names)} and set the others to n",
                )
            )
    for symbol, excluded in (spec.get("excludes") or {}).items():
        clash = [x for x in excluded if symbol in on and x in on]
        for other in clash:
            found.append(
                finding(
                    "E_KCONFIG_CONFLICT",
                    f"{where} sets CONFIG_{symbol}=y and CONFIG_{other}=y, but {symbol} depends on !{other}",
                    where,
                    [f"CONFIG_{symbol}", f"CONFIG_{other}"],
                    f"drop CONFIG_{symbol} or CONFIG_{other}",
                )
            )
    return found


def _float_format_needs(program: Program, spec: Mapping[str, Any]) -> dict[str, str]:
    float_spec = spec.get("float_format") or {}
    symbol = float_spec.get("symbol")
    printers = NameSet(float_spec.get("printers", ()))
    if not symbol:
        return {}
    for call in program.calls:
        if call.name not in printers:
            continue
        for arg in call.args:
            if (
                arg.type in ("string_literal", "concatenated_string")
                and arg.text
                and _FLOAT_CONVERSION.search(arg.text.decode("utf-8", errors="replace"))
            ):
                return {symbol: f"{call.location} formats a floating-point value with {call.name}"}
    return {}


def _idf_target(conf: dict[str, str], where: str, rules: Rules, target: Target | None) -> list[Evidence]:
    if rules.framework != "espidf" or target is None or not target.board.idf_target:
        return []
    chip = conf.get("IDF_TARGET")
    if chip is None or chip == target.board.idf_target:
        return []
    return [
        finding(
            "E_SDKCONFIG_TARGET",
            f"{where} sets CONFIG_IDF_TARGET={chip} but the target is {target.board.idf_target}",
            where,
            ["CONFIG_IDF_TARGET", chip, target.board.idf_target],
            f'set CONFIG_IDF_TARGET="{target.board.idf_target}"',
        )
    ]


# --------------------------------------------------------------------------------------------------
# Devicetree
# --------------------------------------------------------------------------------------------------


@dataclass
class Overlay:
    """What the artifact's devicetree overlays define and reference."""

    aliases: dict[str, str] = field(default_factory=dict)
    labels: set[str] = field(default_factory=set)
    chosen: set[str] = field(default_factory=set)
    references: list[tuple[str, str]] = field(default_factory=list)
    """(label, "path:line") of every ``&label`` an overlay uses."""
    zephyr_user: dict[str, int] | None = None
    """Property → number of phandle entries of the ``zephyr,user`` node (None when absent)."""
    zephyr_user_where: str = ""
    devices: list[tuple[str, frozenset[str], str]] = field(default_factory=list)
    """(first compatible, property names, "path:line") of every overlay node that states a compatible."""


_DTS_THREAD = threading.local()


def _dts_parser() -> Parser:
    """This thread's devicetree parser (tree-sitter-devicetree, Zephyr's DTS superset; one per thread)."""
    parser: Parser | None = getattr(_DTS_THREAD, "parser", None)
    if parser is None:
        parser = _DTS_THREAD.parser = Parser(Language(tree_sitter_devicetree.language()))
    return parser


def _dts_text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", errors="replace") if node is not None else ""


def _node_name(node: Node) -> str:
    return _dts_text(node.child_by_field_name("name"))


def _property_entries(prop: Node) -> int:
    """How many entries a property value lists: phandles (``<&adc 0>, <&adc 1>`` → 2), else cell groups."""
    values = prop.children_by_field_name("value")
    references = sum(1 for value in values for n in _walk(value) if n.type == "reference")
    return references or sum(1 for v in values if v.type == "integer_cells") or 1


def _walk(root: Node) -> Iterator[Node]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def parse_overlays(files: dict[str, str]) -> Overlay:
    """What the overlays define and reference (memoized by the overlays' paths and texts; do not mutate)."""
    return _parsed_overlays(tuple((p, files[p]) for p in sorted(files) if p.endswith((".overlay", ".dts"))))


@lru_cache(maxsize=128)
def _parsed_overlays(overlays: tuple[tuple[str, str], ...]) -> Overlay:
    """What the overlays define and reference, read from tree-sitter-devicetree's syntax tree.

    The grammar is the field's own (Zephyr's DTS superset: labels, ``&label { … }`` references, ``#include``
    and macro calls in cells), so labels, ``aliases``/``chosen`` entries, phandle references and the
    ``zephyr,user`` properties are read from nodes, never from text patterns.
    """
    overlay = Overlay()
    for path, text in overlays:
        root = _dts_parser().parse(text.encode("utf-8")).root_node
        for node in _walk(root):
            if node.type == "reference":
                label = node.child_by_field_name("label")
                if label is not None and label.type == "identifier":
                    overlay.references.append((_dts_text(label), f"{path}:{node.start_point[0] + 1}"))
            if node.type != "node":
                continue
            for label in node.children_by_field_name("label"):
                overlay.labels.add(_dts_text(label))
            name = _node_name(node)
            props = [c for c in node.named_children if c.type == "property"]
            compatible = next((p for p in props if _node_name(p) == "compatible"), None)
            value = compatible.child_by_field_name("value") if compatible is not None else None
            if value is not None and value.type == "string_literal":
                overlay.devices.append(
                    (
                        _dts_text(value).strip('"'),
                        frozenset(_node_name(p) for p in props),
                        f"{path}:{node.start_point[0] + 1}",
                    )
                )
            if name == "aliases":
                for prop in props:
                    value = prop.child_by_field_name("value")
                    target = value.child_by_field_name("label") if value is not None else None
                    if value is not None and value.type == "reference" and target is not None:
                        overlay.aliases[_node_name(prop).replace("-", "_")] = _dts_text(target)
            elif name == "chosen":
                overlay.chosen.update(re.sub(r"[,-]", "_", _node_name(prop)) for prop in props)
            elif name == "zephyr,user":
                entries = overlay.zephyr_user if overlay.zephyr_user is not None else {}
                entries.update({_node_name(prop): _property_entries(prop) for prop in props})
                overlay.zephyr_user = entries
                overlay.zephyr_user_where = f"{path}:{node.start_point[0] + 1}"
    return overlay


def _expand(text: str, macros: dict[str, str]) -> str:
    """Substitute the artifact's own object-like macros (``#define ADC_NODE DT_PATH(zephyr_user)``)."""
    for _ in range(5):
        expanded = re.sub(r"\b([A-Za-z_]\w*)\b", lambda m: macros.get(m.group(1), m.group(1)), text)
        if expanded == text:
            break
        text = expanded
    return text


def _macro_uses(unit_text: str, names: str) -> Iterator[tuple[str, list[str], int]]:
    """(macro, arguments, offset) of every use of the named macros, macro bodies included."""
    for match in re.finditer(rf"\b({names})\s*\(", unit_text):
        depth, i = 0, match.end() - 1
        for i in range(match.end() - 1, len(unit_text)):
            depth += {"(": 1, ")": -1}.get(unit_text[i], 0)
            if depth == 0:
                break
        yield match.group(1), split_top_level(unit_text[match.end() : i]), match.start()


#: Spec/property macros → (index of the property argument or fixed property, index of the element index).
_PROPERTY_MACROS: dict[str, tuple[int | str, int | None]] = {
    "ADC_DT_SPEC_GET": ("io-channels", None),
    "ADC_DT_SPEC_GET_BY_IDX": ("io-channels", 1),
    "ADC_DT_SPEC_GET_BY_NAME": ("io-channels", None),
    "PWM_DT_SPEC_GET": ("pwms", None),
    "PWM_DT_SPEC_GET_BY_IDX": ("pwms", 1),
    "PWM_DT_SPEC_GET_BY_NAME": ("pwms", None),
    "GPIO_DT_SPEC_GET": (1, None),
    "GPIO_DT_SPEC_GET_BY_IDX": (1, 2),
    "DT_PROP": (1, None),
    "DT_PROP_LEN": (1, None),
    "DT_PROP_BY_IDX": (1, 2),
    "DT_FOREACH_PROP_ELEM": (1, None),
    "DT_FOREACH_PROP_ELEM_SEP": (1, None),
}


#: STM32 pinctrl node labels: ``<signal>_p<port><number>`` (``usart3_tx_pd8``, ``adc1_inp16_pa0``).
_PINCTRL_LABEL = re.compile(r"^([a-z0-9]+_[a-z0-9_]+?)_p([a-k])(\d+)$")


def _soc_label_known(label: str, target: Target) -> bool:
    """SoC-level labels the board facts do not repeat: GPIO ports and peripheral instances."""
    port = re.fullmatch(r"gpio([a-k])", label)
    if port is not None:
        prefix = f"P{port.group(1).upper()}"
        return any(re.fullmatch(rf"{prefix}\d+", pin) for pin in target.pins)
    name = label.upper()
    candidates = {name, re.sub(r"^(TIMERS|PWM)", "TIM", name)}
    return any(c in target.peripherals for c in candidates)


def board_label_known(label: str, target: Target | None) -> bool:
    """Whether the board or its SoC defines devicetree label ``label`` per the facts (a board label, a GPIO port
    or peripheral instance, a pin-control node for a signal the pin carries); no facts: assumed."""
    if target is None or label in target.board.dt_node_labels:
        return True
    pinctrl = _PINCTRL_LABEL.match(label)
    if pinctrl is not None:
        facts = target.pins.get(f"P{pinctrl.group(2).upper()}{pinctrl.group(3)}")
        return facts is not None and facts.can_carry(pinctrl.group(1).upper())
    return _soc_label_known(label, target)


@register(
    "devicetree_consistent", "E_DT_LABEL_UNKNOWN", "E_DT_NODE_MISSING", "E_DT_PINCTRL_INVALID", "E_DT_PROPERTY_MISSING"
)
def check_devicetree(ctx: Context) -> list[Evidence]:
    files, program, target = ctx.files, ctx.program, ctx.target
    overlay = parse_overlays(files)
    board = target.board if target is not None else None
    board_labels = set(board.dt_node_labels) if board else set()
    board_aliases = {a.replace("-", "_") for a in board.dt_aliases} if board else set()
    board_chosen = {re.sub(r"[,-]", "_", c) for c in board.dt_chosen} if board else set()
    found: list[Evidence] = []
    seen: set[tuple[str, str]] = set()

    def report(code: str, key: tuple[str, str], message: str, where: str, objects: list[str], fix: str) -> None:
        if key not in seen:
            seen.add(key)
            found.append(finding(code, message, where, objects, fix))

    for unit in program.units:
        text = _uncomment(unit.text)
        for macro, args, offset in _macro_uses(text, "DT_ALIAS|DT_NODELABEL|DT_CHOSEN|DT_PATH"):
            where = f"{unit.path}:{_line_of(text, offset)}"
            name = args[0] if args else ""
            if macro == "DT_ALIAS" and name not in overlay.aliases and board and name not in board_aliases:
                report(
                    "E_DT_NODE_MISSING",
                    ("alias", name),
                    f"DT_ALIAS({name}): no alias {name!r} in the overlay nor on board {board.name}",
                    where,
                    [name],
                    f"define alias {name} in the overlay, or use one of: {', '.join(sorted(board_aliases))}",
                )
            elif macro == "DT_NODELABEL" and name not in overlay.labels and board and name not in board_labels:
                report(
                    "E_DT_NODE_MISSING",
                    ("label", name),
                    f"DT_NODELABEL({name}): no node labelled {name!r} in the overlay nor on board {board.name}",
                    where,
                    [name],
                    "label the node in the overlay, or use a label the board defines",
                )
            elif macro == "DT_CHOSEN" and name not in overlay.chosen and board and name not in board_chosen:
                report(
                    "E_DT_NODE_MISSING",
                    ("chosen", name),
                    f"DT_CHOSEN({name}): board {board.name} has no such /chosen entry",
                    where,
                    [name],
                    "add it under chosen { } in the overlay",
                )
            elif macro == "DT_PATH" and [a.strip() for a in args] == ["zephyr_user"] and overlay.zephyr_user is None:
                report(
                    "E_DT_NODE_MISSING",
                    ("path", "zephyr,user"),
                    "DT_PATH(zephyr_user) is used but no overlay defines a zephyr,user node",
                    where,
                    ["zephyr,user"],
                    "add / { zephyr,user { … }; }; with the properties the C reads to the overlay",
                )
        if overlay.zephyr_user is None:
            continue
        for macro, args, offset in _macro_uses(text, "|".join(sorted(_PROPERTY_MACROS, key=len, reverse=True))):
            if not args or "DT_PATH(zephyr_user)" not in _expand(args[0], program.object_macros).replace(" ", ""):
                continue
            prop_spec, index_at = _PROPERTY_MACROS[macro]
            if isinstance(prop_spec, int):
                if len(args) <= prop_spec:
                    continue
                prop = args[prop_spec].strip().replace("_", "-")
            else:
                prop = prop_spec
            where = f"{unit.path}:{_line_of(text, offset)}"
            count = overlay.zephyr_user.get(prop)
            index_text = args[index_at].strip() if index_at is not None and len(args) > index_at else "0"
            index = int(index_text) if index_text.isdigit() else 0
            if count is None:
                report(
                    "E_DT_PROPERTY_MISSING",
                    ("prop", prop),
                    f"{macro} reads {prop} of zephyr,user, which the "
                    f"overlay ({overlay.zephyr_user_where}) does not define",
                    where,
                    ["zephyr,user", prop],
                    f"add {prop} = <…>; to the zephyr,user node",
                )
            elif index >= count:
                report(
                    "E_DT_PROPERTY_MISSING",
                    ("index", f"{prop}[{index}]"),
                    f"{macro} reads {prop}[{index}] but zephyr,user has {count} entr{'y' if count == 1 else 'ies'}",
                    where,
                    ["zephyr,user", prop, str(index)],
                    f"add entry {index} to {prop}, or use an index below {count}",
                )
    if target is not None and board is not None:
        for label, where in overlay.references:
            if label in overlay.labels or label in board_labels:
                continue
            pinctrl = _PINCTRL_LABEL.match(label)
            if pinctrl is not None:
                signal, pin = pinctrl.group(1).upper(), f"P{pinctrl.group(2).upper()}{pinctrl.group(3)}"
                facts = target.pins.get(pin)
                if facts is None or not facts.can_carry(signal):
                    problem = f"has no pin {pin}" if facts is None else f"cannot carry {signal} on {pin}"
                    report(
                        "E_DT_PINCTRL_INVALID",
                        ("pinctrl", label),
                        f"the overlay routes {signal} to {pin} (&{label}) but {target.id} {problem}",
                        where,
                        [label, pin, signal],
                        f"use a pin of {target.id} that carries {signal}",
                    )
                continue
            if _soc_label_known(label, target):
                continue
            report(
                "E_DT_LABEL_UNKNOWN",
                ("ref", label),
                f"the overlay references &{label}, which board {board.name} does not define",
                where,
                [label],
                f"use one of the board's node labels: {', '.join(sorted(board_labels)[:12])}",
            )
    found += _binding_properties(overlay)
    return found


def _binding_properties(overlay: Overlay) -> list[Evidence]:
    """Nodes of a compatible the binding facts know must carry ``reg`` and the binding's required properties."""
    found: list[Evidence] = []
    for compatible, props, where in overlay.devices:
        facts = binding(compatible)
        if facts is None:
            continue
        for required in ("reg", *(p.name for p in facts.required)):
            if required not in props:
                found.append(
                    finding(
                        "E_DT_PROPERTY_MISSING",
                        f"the {compatible} node at {where} has no {required}, which its binding requires",
                        where,
                        [compatible, required],
                        f"add {required} to the {compatible} node",
                    )
                )
    return found


# --------------------------------------------------------------------------------------------------
# STM32 HAL configuration header and family
# --------------------------------------------------------------------------------------------------


@register("hal_conf_consistent", "E_HAL_CONF_MISSING", "E_HAL_FAMILY_MISMATCH", "E_HAL_MODULE_DISABLED")
def check_hal_conf(ctx: Context) -> list[Evidence]:
    files, program, rules, catalog, target = ctx.files, ctx.program, ctx.rules, ctx.catalog, ctx.target
    spec = rules.section("hal_conf")
    if not spec:
        return []
    found: list[Evidence] = []
    header_re = re.compile(spec["header_pattern"])
    module_re = re.compile(spec["module_pattern"])
    conf_paths = [p for p in sorted(files) if header_re.search(p)]
    enabled: set[str] = set()
    for path in conf_paths:
        enabled.update(
            re.findall(r"^[ \t]*#[ \t]*define[ \t]+HAL_(\w+)_MODULE_ENABLED\b", _uncomment(files[path]), re.M)
        )
    needed: dict[str, Call] = {}
    for call in _sdk_calls(program, catalog):
        entry = catalog.get(call.name)
        match = module_re.match(entry.header) if entry else None
        if match and match.group(1).upper() != "DEF":
            needed.setdefault(match.group(1).upper(), call)
    if needed and not conf_paths:
        first = next(iter(needed.values()))
        found.append(
            finding(
                "E_HAL_CONF_MISSING",
                f"{first.location} calls {first.name} but the artifact has no HAL configuration header (*_hal_conf.h)",
                first.location,
                [first.name],
                "add the family's *_hal_conf.h enabling the modules used",
            )
        )
    elif needed:
        for module, call in sorted(needed.items()):
            if module not in enabled:
                symbol = f"HAL_{module}_MODULE_ENABLED"
                found.append(
                    finding(
                        "E_HAL_MODULE_DISABLED",
                        f"{call.location} calls {call.name} but {conf_paths[0]} does not define {symbol}",
                        conf_paths[0],
                        [symbol, call.name],
                        f"#define {symbol} in {conf_paths[0]}",
                    )
                )
    family = target.board.hal_family if target is not None else None
    headers: dict[str, str] = dict(rules.raw.get("family_headers") or {})
    if family:
        for other, header in headers.items():
            if other == family:
                continue
            for unit in program.units:
                offset = unit.text.find(header)
                if offset >= 0:
                    found.append(
                        finding(
                            "E_HAL_FAMILY_MISMATCH",
                            f"{unit.path} includes {header} ({other}) but the target is an {family}",
                            f"{unit.path}:{_line_of(unit.text, offset)}",
                            [header, family],
                            f"include {headers.get(family, '')}",
                        )
                    )
    return found
