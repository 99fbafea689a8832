"""Harvest the header model of a framework from a user-supplied SDK tree (the project's own importer).

For every header an API catalog names, and every SDK header those include (transitively), record which
headers it ``#include``s (conditional includes too: the model over-approximates what a unit can see, so
it never invents a missing declaration) and which of the *types the catalog's signatures use* it declares
(``struct``/``union``/``enum`` tags with a body, ``typedef`` names). The result is the compact
``headers*.json`` beside the catalogs; the SDK tree itself is only read, never copied.

    python -m rac_fw.domains.firmware.verify.sdk.harvest hal --variant STM32H7 \\
        --sdk ~/STM32CubeH7/Drivers/STM32H7xx_HAL_Driver/Inc --sdk ~/STM32CubeH7/Drivers/CMSIS ...

Include names are resolved the way a compiler with the SDK's include directories would: the longest
path suffix match, preferring a file under an ``include`` directory, then the shortest path.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import deque
from pathlib import Path

import tree_sitter_c
from tree_sitter import Language, Node, Parser

from rac_fw.domains.firmware.verify.sdk import catalog, catalog_variants

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
_SIGNATURE_TYPE = re.compile(r"\b(?:(struct|union|enum)\s+)?([A-Za-z_]\w*)")
_C_WORDS = frozenset(
    {
        "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "const", "volatile",
        "restrict", "static", "inline", "extern", "struct", "union", "enum", "bool", "_Bool", "size_t", "uint8_t",
        "uint16_t", "uint32_t", "uint64_t", "int8_t", "int16_t", "int32_t", "int64_t", "uintptr_t", "intptr_t",
        "ssize_t", "va_list",
    }
)


def catalog_types(framework: str, variant: str | None) -> set[str]:
    """Type names the catalog's signatures use (``const struct gpio_dt_spec *spec`` → ``gpio_dt_spec``).

    A parameter's last word is its name when it has more than one (``uint32_t ticks``); a return type is
    all type. Macro parameters are names, not types.
    """
    cat = catalog(framework, variant)
    names: set[str] = set()
    for name in cat.entries:
        entry = cat.get(name)
        if entry is None or entry.kind != "function":
            continue
        for text, named in ((entry.returns or "", False), *((param, True) for param in entry.params)):
            words = [word for _, word in _SIGNATURE_TYPE.findall(re.sub(r"\[[^\]]*\]", "", text))]
            if named and len(words) > 1:
                words = words[:-1]
            names.update(words)
    return names - _C_WORDS


class Tree:
    """The header files of one or more SDK roots, indexed by path suffix."""

    def __init__(self, roots: list[Path]):
        self.by_name: dict[str, list[Path]] = {}
        for root in roots:
            for path in root.rglob("*.h"):
                self.by_name.setdefault(path.name, []).append(path)

    def resolve(self, include: str) -> Path | None:
        candidates = [p for p in self.by_name.get(include.rsplit("/", 1)[-1], []) if p.as_posix().endswith(include)]
        if not candidates:
            return None
        return min(candidates, key=lambda p: ("/include/" not in p.as_posix(), len(p.parts), p.as_posix()))


def _declared(root: Node, wanted: set[str]) -> set[str]:
    found: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("struct_specifier", "union_specifier", "enum_specifier"):
            name = node.child_by_field_name("name")
            if name is not None and node.child_by_field_name("body") is not None and name.text:
                found.add(name.text.decode())
        elif node.type == "type_definition":
            for declarator in node.children_by_field_name("declarator"):
                child: Node | None = declarator
                while child is not None and child.type not in ("type_identifier", "identifier"):
                    child = child.child_by_field_name("declarator")
                if child is not None and child.text:
                    found.add(child.text.decode())
        if node.type not in ("function_definition", "compound_statement"):
            stack.extend(node.named_children)
    return found & wanted


def harvest(framework: str, variant: str | None, roots: list[Path]) -> dict[str, object]:
    tree = Tree(roots)
    parser = Parser(Language(tree_sitter_c.language()))
    wanted = catalog_types(framework, variant)
    cat = catalog(framework, variant)
    starts = sorted({header for header, _ in cat.entries.values()})
    includes: dict[str, list[str]] = {}
    types: dict[str, str] = {}
    queue = deque(starts)
    seen: set[str] = set(starts)
    resolved_as: dict[Path, str] = {}
    while queue:
        name = queue.popleft()
        path = tree.resolve(name)
        if path is None or path in resolved_as:
            continue
        resolved_as[path] = name
        text = path.read_text(encoding="utf-8", errors="replace")
        names = list(dict.fromkeys(_INCLUDE.findall(text)))
        includes[name] = names
        for declared in sorted(_declared(parser.parse(text.encode()).root_node, wanted)):
            types.setdefault(declared, name)
        for included in names:
            if included not in seen and tree.resolve(included) is not None:
                seen.add(included)
                queue.append(included)
    # An include written under another spelling of an already harvested file points at that spelling;
    # one the SDK does not ship (a configuration header the application supplies) is kept as written.
    canonical = {n: resolved_as.get(p, n) for n in seen if (p := tree.resolve(n)) is not None}
    graph = {h: sorted({canonical.get(i, i) for i in inc}) for h, inc in sorted(includes.items())}
    # The SDK's template of an application-supplied header stands in for it when the artifact has none.
    stand_ins = {
        name: template
        for name in sorted({i for inc in includes.values() for i in inc} - set(canonical))
        if (template := name.replace(".h", "_template.h")) in graph
    }
    return {
        "framework": framework,
        "variant": variant or "default",
        "includes": graph,
        "stand_ins": stand_ins,
        "types": dict(sorted(types.items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("framework")
    parser.add_argument("--variant", default=None, help="catalog variant (the HAL family)")
    parser.add_argument("--sdk", action="append", type=Path, required=True, help="an SDK include root (repeatable)")
    parser.add_argument("--source", action="append", default=[], help="repository@commit the roots come from")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.variant is not None and args.variant not in catalog_variants(args.framework):
        known = ", ".join(catalog_variants(args.framework))
        print(f"unknown variant {args.variant!r}; known: {known}", file=sys.stderr)
        return 2
    missing = [str(r) for r in args.sdk if not r.is_dir()]
    if missing:
        print(f"not a directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    model = harvest(args.framework, args.variant, args.sdk)
    model["sources"] = args.source
    args.out.write_text(json.dumps(model, indent=0, sort_keys=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
