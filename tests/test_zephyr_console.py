"""Zephyr apps speak the rac: console protocol and carry a twister sample.yaml that judges it.

The schema facts below are the subset of twister's test-suite schema (zephyr
``scripts/schemas/twister/testsuite-schema.yaml``) that a generated sample.yaml uses, restated here:
``sample.name`` (required string), ``common``/``tests.<id>`` maps with ``tags`` (string), ``timeout``
(int), ``harness`` (string), ``harness_config`` (``type`` string, ``ordered`` bool, ``regex`` list of
strings), ``platform_allow`` (string: space-separated platforms) and ``integration_platforms`` (list of
strings); ``tests`` is required and its keys match ``[a-zA-Z0-9_.]+``.
"""

from __future__ import annotations

import difflib
import re

import jsonschema
import pytest
import yaml

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.lower import LoweringError, lower
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.domains.firmware.verify.console import plan_expectations
from rac_fw.resources import data_dir

_HARNESS_CONFIG = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "type": {"type": "string"},
        "ordered": {"type": "boolean"},
        "regex": {"type": "array", "items": {"type": "string"}},
    },
}
_SUITE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "tags": {"type": "string"},
        "timeout": {"type": "integer"},
        "harness": {"type": "string"},
        "harness_config": _HARNESS_CONFIG,
        "platform_allow": {"type": "string"},
        "integration_platforms": {"type": "array", "items": {"type": "string"}},
    },
}
TWISTER_SUBSET = {
    "type": "object",
    "additionalProperties": False,
    "required": ["tests"],
    "properties": {
        "sample": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "description": {"type": "string"}},
            "additionalProperties": False,
        },
        "common": _SUITE,
        "tests": {"type": "object", "patternProperties": {r"^[a-zA-Z0-9_.]+$": _SUITE}, "additionalProperties": False},
    },
}

EXAMPLES = sorted(data_dir("examples").glob("*.yaml"))


@pytest.mark.parametrize("target_id", ["nrf52840", "stm32f407", "native_sim"])
def test_every_zephyr_app_has_a_valid_sample_yaml_judging_its_lines(target_id: str) -> None:
    target = load_target(target_id)
    checked = 0
    for path in EXAMPLES:
        plan = load_plan(path).model_copy(update={"target": target_id, "framework": "zephyr"})
        if plan.behaviour is not None or check(plan, target, "zephyr"):
            continue  # a behaviour's app is held to its predicted trace: tests/test_behaviour_zephyr.py
        try:
            files = lower(plan, target, "zephyr").files
        except LoweringError:
            continue  # valid in general, not realizable by this lowering on this board: evidence, not an app
        sample = yaml.safe_load(files["sample.yaml"])
        jsonschema.validate(sample, TWISTER_SUBSET)
        (suite,) = sample["tests"].values()
        assert suite["platform_allow"].split()[0] == target.board.zephyr_board
        assert suite["integration_platforms"] == suite["platform_allow"].split()
        regex = sample["common"]["harness_config"]["regex"]
        assert regex[0] == r"^rac: boot\b" and regex[-1] == "^rac: done$" and len(regex) == len(plan.operations) + 2
        main = files["src/main.c"]
        assert f'printk("rac: boot %s\\n", "{target_id}");' in main
        assert f"if (rac_reported == {len(plan.operations)}U)" in main
        for index, (pattern, op) in enumerate(zip(regex[1:-1], plan.operations, strict=True)):
            label = op.name or f"{op.op}{index}"
            assert re.search(pattern, f"rac: {label} ok"), (path.name, pattern)
            assert f'rac_ok("{label}");' in main, (path.name, label)
        checked += 1
    assert checked >= 5, target_id


def test_the_line_format_is_the_bare_metal_one() -> None:
    """The bare-metal builds, run in QEMU in CI, print the same ``rac: <label> ok`` lines."""
    plan = load_plan(data_dir("examples") / "uart_hello.yaml")
    target = load_target("stm32f407")
    zephyr = yaml.safe_load(lower(plan, target, "zephyr").files["sample.yaml"])
    ours = zephyr["common"]["harness_config"]["regex"]
    bare = plan_expectations(plan, target.board.console.uart if target.board.console else None)
    assert [p for p in bare if p.startswith("^rac: ")] == ours


ZEPHYR_TARGETS = [t for t in target_ids() if "zephyr" in load_target(t).frameworks]


def _builds_the_same(ours: dict[str, str], theirs: dict[str, str]) -> bool:
    """Their app is ours: main.c differs at most in the header comment and the boot line's target, every
    other source is equal, and their overlay holds no devicetree node (only its comment)."""
    changed = [
        line[2:]
        for line in difflib.ndiff(ours["src/main.c"].splitlines(), theirs["src/main.c"].splitlines())
        if line.startswith(("- ", "+ "))
    ]
    if not all(line.startswith(" * Generated by rac-fw for ") or "rac: boot %s" in line for line in changed):
        return False
    sources = {p for p in ours if p not in ("README.md", "sample.yaml", "src/main.c") and not p.startswith("boards/")}
    if sources != {p for p in theirs if p not in ("README.md", "sample.yaml", "src/main.c")
                   and not p.startswith("boards/")} or any(ours[p] != theirs[p] for p in sources):  # fmt: skip
        return False
    overlays = [t for p, t in theirs.items() if p.startswith("boards/")]
    return all(not re.sub(r"/\*.*?\*/", "", t, flags=re.S).strip() for t in overlays)


@pytest.mark.parametrize("target_id", ["stm32f407", "native_sim"])
def test_sample_yaml_lists_every_board_the_same_tree_builds_for(target_id: str) -> None:
    """``platform_allow``: the plan's board, then each other Zephyr board where the plan validates and this
    very tree is that board's app too (so ``west twister -p native_sim/native/64`` builds and judges it)."""
    listed_others = 0
    for path in EXAMPLES:
        plan = load_plan(path).model_copy(update={"target": target_id, "framework": "zephyr"})
        ours = run_plan(plan, target=target_id, framework="zephyr")
        if ours.status is not Status.PASS or ours.lowered is None:
            continue
        (suite,) = yaml.safe_load(ours.lowered.files["sample.yaml"])["tests"].values()
        boards = suite["platform_allow"].split()
        assert boards[0] == load_target(target_id).board.zephyr_board and len(set(boards)) == len(boards)
        for other in ZEPHYR_TARGETS:
            if other == target_id:
                continue
            board = load_target(other).board.zephyr_board
            theirs = run_plan(plan, target=other, framework="zephyr")
            expected = (
                theirs.status is Status.PASS
                and theirs.lowered is not None
                and _builds_the_same(ours.lowered.files, theirs.lowered.files)
            )
            assert (board in boards) == expected, (path.name, target_id, other)
            listed_others += expected
    assert listed_others >= 10, listed_others


def test_native_sim_is_listed_when_the_tree_is_its_app_and_not_otherwise() -> None:
    blink = lower(load_plan(data_dir("examples") / "gpio_blink.yaml"), load_target("stm32f407"), "zephyr")
    (suite,) = yaml.safe_load(blink.files["sample.yaml"])["tests"].values()
    assert suite["platform_allow"].split()[:2] == ["stm32f4_disco", "native_sim/native/64"]
    # uart_hello validates on native_sim too, but its main.c names the console node (usart2 here, uart0
    # there): this tree is not native_sim's app, so listing it would send twister to a failing build.
    hello_plan = load_plan(data_dir("examples") / "uart_hello.yaml")
    assert run_plan(hello_plan, target="native_sim", framework="zephyr").status is Status.PASS
    hello = lower(hello_plan, load_target("stm32f407"), "zephyr")
    (suite,) = yaml.safe_load(hello.files["sample.yaml"])["tests"].values()
    assert suite["platform_allow"] == "stm32f4_disco" and "DT_NODELABEL(usart2)" in hello.files["src/main.c"]
