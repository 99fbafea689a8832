"""Devicetree overlays through the real ``dtc``: syntax, and no property written twice in one node.

Zephyr merges an overlay into the board's tree with its own parser, where a property given twice in one
node silently keeps the last value (a second ``dmas``/``dma-names`` pair drops the first channel); ``dtc``
refuses such a node (``duplicate_property_names``) and any syntax error. So every generated overlay is
compiled by ``dtc`` (Debian ``device-tree-compiler``) on top of a minimal skeleton of the board derived from
its facts (``/chosen``, ``/aliases`` and a node for each devicetree label the board and its SoC have), with
each ``&label { … }`` block checked as a node definition of its own. The C preprocessor's part is done
first, line for line: ``#include`` lines are blanked and binding macros in cells (``NRF_SAADC_AIN1``,
``ADC_ACQ_TIME(…)``) become 0, since their values are the binding headers' and dtc judges the structure.
Without ``dtc`` on the machine this check judges nothing (``rac-fw doctor`` lists it with the west builder);
tests that need it fail in CI instead (``tests/conftest.py::require_tool``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import tree_sitter_devicetree
from tree_sitter import Language, Parser

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.config import board_label_known
from rac_fw.domains.firmware.verify.static.model import finding
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.verify.static.context import Context

_CELLS = re.compile(r"<([^<>]*)>")
_MACRO_CALL = re.compile(r"\b[A-Za-z_]\w*\s*\([^()]*\)")
_MACRO = re.compile(r"(?<![&\w/{.-])\b[A-Za-z_]\w*\b")
_MESSAGE = re.compile(r"^(?:Error: )?(?P<file>[\w.]+):(?P<line>\d+)\.\d+(?:-[\d.]+)?:? (?P<text>.*)$")
_REF_NODE = re.compile(r"/rac-ref-(\d+)")
_LANGUAGE = Language(tree_sitter_devicetree.language())


def _cells(match: re.Match[str]) -> str:
    inner = _MACRO_CALL.sub("(0)", match.group(1))
    return "<" + _MACRO.sub("0", inner) + ">"


def prepare(text: str) -> tuple[str, dict[int, str]]:
    """The overlay as plain dtc input with the same lines, and ``rac-ref-N`` → the ``&label`` block it was."""
    source = text.encode("utf-8")
    root = Parser(_LANGUAGE).parse(source).root_node
    edits: list[tuple[int, int, bytes]] = []
    blocks: dict[int, str] = {}
    for child in root.children:
        if child.type == "preproc_include":
            edits.append((child.start_byte, child.end_byte, b""))
        elif child.type == "node" and child.children and child.children[0].type == "reference":
            reference = child.children[0]
            blocks[len(blocks)] = (reference.text or b"").decode()
            edits.append((reference.start_byte, reference.end_byte, f"/ {{ rac-ref-{len(blocks) - 1}".encode()))
            edits.append((child.end_byte, child.end_byte, b" };"))
    for start, end, new in sorted(edits, reverse=True):
        source = source[:start] + new + source[end:]
    return _CELLS.sub(_cells, source.decode("utf-8")), blocks


def skeleton(target: Target | None, referenced: set[str]) -> str:
    """The board as dtc sees it: ``/chosen``, ``/aliases`` and one node per label the facts know (the board's
    own, and the SoC's and pin-control labels an overlay references that the facts allow)."""
    labels = set(target.board.dt_node_labels) if target is not None else set()
    labels |= {label for label in referenced if board_label_known(label, target)}
    nodes = "".join(f"\t\t{label}: {label.replace('_', '-')} {{ }};\n" for label in sorted(labels))
    return f"/ {{\n\tchosen {{ }};\n\taliases {{ }};\n\trac-board {{\n{nodes}\t}};\n}};\n"


@lru_cache(maxsize=256)
def _dtc(skeleton_text: str, overlay_text: str) -> tuple[int, str]:
    """(exit status, messages) of ``dtc`` over the skeleton and the prepared overlay (memoized by content)."""
    dtc = shutil.which("dtc")
    assert dtc is not None
    with tempfile.TemporaryDirectory(prefix="rac-fw-dtc-") as folder:
        work = Path(folder)
        (work / "board.dtsi").write_text(skeleton_text, encoding="utf-8")
        (work / "overlay.dts").write_text(overlay_text, encoding="utf-8")
        (work / "top.dts").write_text('/dts-v1/;\n/include/ "board.dtsi"\n/include/ "overlay.dts"\n', encoding="utf-8")
        try:
            done = subprocess.run(
                [dtc, "-q", "-I", "dts", "-O", "dtb", "-o", "/dev/null", "top.dts"],
                cwd=work, capture_output=True, text=True, timeout=30, check=False,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            return 1, f"dtc did not run: {exc}"
    return done.returncode, done.stderr


@register("devicetree_consistent", "E_DT_SYNTAX", "E_DT_DUPLICATE_PROPERTY")
def check_overlays_with_dtc(ctx: Context) -> list[Evidence]:
    if ctx.framework != "zephyr" or shutil.which("dtc") is None:
        return []
    found: list[Evidence] = []
    for path in sorted(p for p in ctx.files if p.endswith(".overlay")):
        text = ctx.files[path]
        prepared, blocks = prepare(text)
        referenced = set(re.findall(r"&([A-Za-z_]\w*)", text))
        status, messages = _dtc(skeleton(ctx.target, referenced), prepared)
        if status == 0:
            continue
        for line in messages.splitlines():
            parsed = _MESSAGE.match(line.strip())
            if parsed is None or parsed.group("file") != "overlay.dts" or "non-existent node or label" in line:
                continue  # an unknown label is E_DT_LABEL_UNKNOWN's to report; the skeleton's lines are ours
            where = f"{path}:{parsed.group('line')}"
            said = _REF_NODE.sub(lambda m, named=blocks: named.get(int(m.group(1)), m.group()), parsed.group("text"))
            if "duplicate_property_names" in said:
                prop = said.rsplit(":", 2)[-2] if said.count(":") >= 2 else ""
                found.append(finding(
                    "E_DT_DUPLICATE_PROPERTY",
                    f"{where}: dtc: {said}: the node gives {prop or 'a property'} twice; Zephyr keeps only the "
                    "last value, so the earlier one is lost",
                    where, [prop, said], f"write {prop or 'the property'} once, with every value it must hold",
                ))  # fmt: skip
            else:
                found.append(finding(
                    "E_DT_SYNTAX", f"{where}: dtc rejects the overlay: {said}", where, [said], "fix the overlay there",
                ))  # fmt: skip
    return found
