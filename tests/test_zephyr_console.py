"""Zephyr apps speak the rac: console protocol and carry a twister sample.yaml that judges it.

The schema facts below are the subset of twister's test-suite schema (zephyr
``scripts/schemas/twister/testsuite-schema.yaml``) that a generated sample.yaml uses, restated here:
``sample.name`` (required string), ``common``/``tests.<id>`` maps with ``tags`` (string), ``timeout``
(int), ``harness`` (string), ``harness_config`` (``type`` string, ``ordered`` bool, ``regex`` list of
strings), ``platform_allow`` (string) and ``integration_platforms`` (list of strings); ``tests`` is
required and its keys match ``[a-zA-Z0-9_.]+``.
"""

from __future__ import annotations

import re

import jsonschema
import pytest
import yaml

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import LoweringError, lower
from rac_fw.domains.firmware.obligations import check
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
        if check(plan, target, "zephyr"):
            continue
        try:
            files = lower(plan, target, "zephyr").files
        except LoweringError:
            continue  # valid in general, not realizable by this lowering on this board: evidence, not an app
        sample = yaml.safe_load(files["sample.yaml"])
        jsonschema.validate(sample, TWISTER_SUBSET)
        (suite,) = sample["tests"].values()
        assert suite["platform_allow"] == target.board.zephyr_board
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
