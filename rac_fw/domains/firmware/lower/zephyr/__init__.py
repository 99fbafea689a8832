"""Zephyr lowering: a validated plan plus target facts → a complete Zephyr application directory.

The output is ``zephyr_app/``'s CMakeLists.txt plus a ``prj.conf`` holding exactly the Kconfig symbols
the operations need, a ``boards/<board>.overlay`` with the devicetree nodes the C relies on
(``zephyr,user`` io-channels and ADC channel nodes, a UART's ``dmas`` route, controller ``status``),
and ``src/main.c``.
Written for Zephyr 4.1 or the 3.7 LTS (``facts/sdk.yaml``: the release is part of the target's facts, and
what differs between releases is a row there, not a branch here or in a template).

Modules: ``model`` (what is collected; constants), ``core`` (naming, templates, thread parts),
``devicetree`` (facts → nodes, overlay lines, buffer placement), ``views`` (one view per operation),
``render`` (the four files). This module registers the lowerer; which operations Zephyr realizes on a
board is declared by each op spec (``ops/<family>/<op>.py``) and answered by ``ops.matrix``.
"""

from __future__ import annotations

import dataclasses
import re

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.bind import BoundPlan
from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.sdk import for_release
from rac_fw.domains.firmware.lower import (
    Lowered,
    LoweringError,
    realize_sections,
    register_framework,
    unsupported_operations,
)
from rac_fw.domains.firmware.lower.zephyr.model import ZEPHYR_VERSION, AppModel
from rac_fw.domains.firmware.lower.zephyr.render import Builder
from rac_fw.domains.firmware.plan.cstring import c_string_literal
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import Flag

__all__ = ["ZEPHYR_VERSION", "ZephyrLowerer"]


class ZephyrLowerer:
    """Lowers plans to Zephyr applications for targets whose facts name a Zephyr board."""

    name = "zephyr"

    def lower(self, bound: BoundPlan) -> Lowered:
        """Render the app for a plan validated and bound for its target; its ``sample.yaml`` lists every
        board the same tree also builds for (``portable_boards``)."""
        builder = _builder(bound)
        own = builder.render()
        others = portable_boards(bound, own.files)
        if not others:
            return own
        files = {**own.files, "sample.yaml": builder.sample_yaml([builder.board, *others])}
        return dataclasses.replace(own, files=files)


def _builder(bound: BoundPlan) -> Builder:
    """The builder with every operation and plan block of ``bound`` lowered into it."""
    problems = unsupported_operations(bound)
    if bound.target.board.zephyr_board is None:
        raise LoweringError([Evidence(code="E_TARGET_UNSUPPORTED", message=f"{bound.target.id} names no Zephyr board")])
    if problems:
        raise LoweringError(problems)
    builder = Builder(bound, AppModel())
    # Handoff queues and locks come first: the ISRs and threads of other operations use them.
    ordered = sorted(enumerate(bound.plan.operations), key=lambda item: not spec(item[1].op).has(Flag.HANDOFF))
    for index, op in ordered:
        builder.lower_op(index, op)
    realize_sections(builder, "zephyr")
    return builder


_COMMENT = re.compile(r"/\*.*?\*/", re.S)
#: Files that describe the app rather than build it (they name the board they were written for).
_DESCRIPTIONS = ("README.md", "sample.yaml")


def _sources(files: dict[str, str], target: Target) -> dict[str, str]:
    """What builds the app, with the target's own names (the header comment, the boot line's literal) taken
    out: two boards with equal sources build the same application."""
    board = target.board.zephyr_board or ""
    return {
        path: text.replace(f"for {target.id} (Zephyr board {board})", "for <target>").replace(
            c_string_literal(target.id), "<target>"
        )
        for path, text in files.items()
        if path not in _DESCRIPTIONS and not path.startswith("boards/")
    }


def _needs_overlay(files: dict[str, str]) -> bool:
    return any(_COMMENT.sub("", text).strip() for path, text in files.items() if path.startswith("boards/"))


#: Recent answers of ``portable_boards`` (plan JSON → (the target facts asked for, boards)): the pipeline
#: lowers a plan twice (the obligations' acceptor, then the result), each costing four sibling lowerings.
_PORTABLE: dict[str, tuple[Target, tuple[str, ...]]] = {}
_PORTABLE_KEPT = 64


def portable_boards(bound: BoundPlan, files: dict[str, str]) -> list[str]:
    """The other Zephyr boards this very tree builds and runs the plan on, for twister's ``platform_allow``.

    A board qualifies when the plan, retargeted to it, meets every obligation there and lowers to the same
    sources (main.c, prj.conf, CMakeLists.txt, contributed files; target names aside) with an overlay that
    holds no devicetree content: then the tree, which carries only its own board's overlay, is that
    board's app too (``native_sim/native/64`` for most plans that validate on native_sim). A board whose
    app needs its own overlay or other sources is not listed: this tree would not build there.
    """
    key = bound.plan.model_dump_json()
    remembered = _PORTABLE.get(key)
    if remembered is not None and remembered[0] is bound.target:
        return list(remembered[1])
    ours = _sources(files, bound.target)
    found: list[str] = []
    written_for = bound.target.sdk.get("zephyr")
    for target_id in target_ids():
        other = for_release(load_target(target_id), "zephyr", written_for)
        board = other.board.zephyr_board
        if target_id == bound.target.id or board is None or "zephyr" not in other.frameworks:
            continue
        rebound = bound.rebind(other)
        if rebound is None:
            continue
        try:
            theirs = _builder(rebound).render().files
        except LoweringError:
            continue
        if _sources(theirs, other) == ours and not _needs_overlay(theirs):
            found.append(board)
    if len(_PORTABLE) >= _PORTABLE_KEPT:
        del _PORTABLE[next(iter(_PORTABLE))]
    _PORTABLE[key] = (bound.target, tuple(found))
    return found


register_framework("zephyr", ZephyrLowerer())
