"""The plan model: typed, closed, located errors, safe strings, schema export, patches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rac_fw.contract import PatchError, apply_patch
from rac_fw.domains.firmware.ops.timer.timer_periodic import TimerPeriodic
from rac_fw.domains.firmware.plan.escape import c_format
from rac_fw.domains.firmware.plan.load import PlanError, load_plan, parse_plan
from rac_fw.domains.firmware.plan.model import OPERATION_KINDS, OPERATION_MODELS, Plan


def _errors(data: object) -> list[tuple[str, str | None]]:
    with pytest.raises(PlanError) as caught:
        parse_plan(data, "plan.yaml")
    return [(e.code, e.location) for e in caught.value.evidence]


def test_operations_are_a_discriminated_union_with_one_model_per_op() -> None:
    plan = parse_plan(
        {
            "operations": [
                {"op": "gpio_blink", "led": "led0", "period_ms": 500},
                {"op": "adc_read", "channel": {"path": "zephyr_user", "channel_index": 0}},
                {"op": "timer_periodic", "period_us": 250, "source": "TIM2"},
            ]
        }
    )
    assert [type(op).__name__ for op in plan.operations] == ["GpioBlink", "AdcRead", "TimerPeriodic"]
    timer = plan.operations[2]
    assert isinstance(timer, TimerPeriodic) and timer.period_s == pytest.approx(250e-6)
    assert len(set(OPERATION_KINDS)) == len(OPERATION_MODELS) >= 24


def test_every_error_is_located_by_field_path() -> None:
    found = _errors(
        {
            "operations": [
                {"op": "uart_print", "message": "hi", "baud": 1},
                {"op": "gpio_blnk", "led": "led0", "period_ms": 5},
                {"op": "adc_read", "channel": {"pin": "PA0", "extra": 1}},
            ],
            "resorces": {},
        }
    )
    assert ("E_PLAN_FIELD", "plan.yaml: operations[0].baud") in found
    assert ("E_PLAN_UNKNOWN_OP", "plan.yaml: operations[1]") in found
    assert ("E_PLAN_UNKNOWN_FIELD", "plan.yaml: operations[2].channel.extra") in found
    assert ("E_PLAN_UNKNOWN_FIELD", "plan.yaml: resorces") in found


def test_misspellings_come_with_applicable_fixes() -> None:
    data = {"operations": [{"op": "gpio_blnk", "led": "led0", "period_ms": 500}], "resorces": {}}
    with pytest.raises(PlanError) as caught:
        parse_plan(data)
    for evidence in caught.value.evidence:
        data = apply_patch(data, evidence.relaxations[0].patch)
    assert parse_plan(data).operations[0].op == "gpio_blink"
    assert "resources" in data and "resorces" not in data


@pytest.mark.parametrize(
    "op",
    [
        {"op": "uart_print", "message": 'x"); system("rm -rf /'[:0] + "é"},
        {"op": "uart_print", "message": "line\nbreak"},
        {"op": "uart_print", "message": "x" * 121},
        {"op": "uart_print", "message": ""},
        {"op": "gpio_blink", "led": "led0; int x", "period_ms": 500},
        {"op": "gpio_blink", "led": "LED0", "period_ms": 500},
        {"op": "timer_periodic", "period_ms": 1, "source": "0x40000000"},
        {"op": "timer_periodic", "period_ms": 1, "period_us": 1000},
        {"op": "adc_read", "channel": {"pin": "PA0 /* */"}},
        {"op": "i2c_transfer", "device": "d", "register_index": 256},
    ],
)
def test_hostile_or_malformed_values_are_rejected(op: dict[str, object]) -> None:
    assert _errors({"operations": [op]})


def _string_schemas(node: object, path: str = "") -> list[tuple[str, dict[str, object]]]:
    """Every schema node of type string in the plan's JSON Schema, with where it sits."""
    found: list[tuple[str, dict[str, object]]] = []
    if isinstance(node, dict):
        if node.get("type") == "string":
            found.append((path, node))
        for key, value in node.items():
            found += _string_schemas(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _string_schemas(value, f"{path}/{index}")
    return found


def test_no_string_field_is_free_form() -> None:
    """Every string is an enum/const or matches a strict pattern: no field can carry C or an address."""
    strings = _string_schemas(Plan.model_json_schema())
    assert len(strings) > 40
    for where, node in strings:
        assert "pattern" in node or "enum" in node or "const" in node, where
        if "pattern" in node:
            assert str(node["pattern"]).startswith("^") and str(node["pattern"]).endswith("$"), where
    device = {"name": "dev", "bus": "i2c", "controller": "I2C1", "address": 0x1_0000}
    assert _errors({"resources": {"devices": [device]}, "operations": [{"op": "uart_print", "message": "x"}]})


def test_devices_need_the_fields_of_their_bus() -> None:
    spi_with_address = {"name": "dev", "bus": "spi", "controller": "SPI1", "address": 0x20}
    found = _errors({"resources": {"devices": [spi_with_address]}, "operations": [{"op": "log", "message": "x"}]})
    assert sorted(found) == [
        ("E_PLAN_FIELD", "plan.yaml: resources.devices[0].chip_select"),
        ("E_PLAN_UNKNOWN_FIELD", "plan.yaml: resources.devices[0].address"),
    ]


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ("hello", '"hello"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("100%", '"100%%"'),
        ("what??!", '"what?\\?!"'),
        ("a\nb\tc", '"a\\nb\\tc"'),
        ("\x01A", '"\\001A"'),
        ("é", '"\\303\\251"'),
    ],
)
def test_c_format_escapes_everything_dangerous(text: str, literal: str) -> None:
    assert c_format(text) == literal


def test_c_format_never_leaves_an_unescaped_quote_or_format() -> None:
    hostile = '"; } int main(void){ %n %s ??/ \\'
    out = c_format(hostile)[1:-1]
    assert '"' not in out.replace('\\"', "")
    assert "%n" not in out.replace("%%", "") and "??" not in out


def test_load_plan_reads_yaml_and_json_and_locates_syntax_errors(tmp_path: Path) -> None:
    body = {"target": "nrf52840", "operations": [{"op": "uart_print", "message": "x"}]}
    (tmp_path / "p.json").write_text(json.dumps(body))
    (tmp_path / "p.yaml").write_text("target: nrf52840\noperations:\n  - {op: uart_print, message: x}\n")
    assert load_plan(tmp_path / "p.json") == load_plan(tmp_path / "p.yaml")
    (tmp_path / "bad.yaml").write_text("operations: [\n  {op: x\n")
    with pytest.raises(PlanError) as caught:
        load_plan(tmp_path / "bad.yaml")
    assert caught.value.evidence[0].code == "E_SYNTAX"
    assert "line" in (caught.value.evidence[0].location or "")
    with pytest.raises(PlanError) as missing:
        load_plan(tmp_path / "absent.yaml")
    assert missing.value.evidence[0].code == "E_FILE"


def test_schema_exports_every_operation_with_docs() -> None:
    schema = Plan.model_json_schema()
    ops = schema["properties"]["operations"]["items"]
    assert set(ops["discriminator"]["mapping"]) == set(OPERATION_KINDS)
    for model in OPERATION_MODELS:
        assert schema["$defs"][model.__name__].get("description"), model.__name__


def test_apply_patch_add_replace_remove_and_errors() -> None:
    doc = {"a": [1, 2], "b": {"c": 1}}
    out = apply_patch(
        doc,
        [
            {"op": "add", "path": ["a", -1], "value": 3},
            {"op": "replace", "path": ["b", "c"], "value": 2},
            {"op": "replace", "path": ["b", "d"], "value": 4},
            {"op": "remove", "path": ["a", 0]},
            {"op": "add", "path": ["new", "list", -1], "value": "x"},
        ],
    )
    assert out == {"a": [2, 3], "b": {"c": 2, "d": 4}, "new": {"list": ["x"]}}
    assert doc == {"a": [1, 2], "b": {"c": 1}}
    with pytest.raises(PatchError):
        apply_patch(doc, [{"op": "remove", "path": ["zz"]}])
    with pytest.raises(PatchError):
        apply_patch(doc, [{"op": "replace", "path": ["a", 5], "value": 0}])
