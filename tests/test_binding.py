"""One rule binds LED and button names; obligations, every lowering and the receipt agree on it."""

from __future__ import annotations

import re

import pytest

from rac_fw.domains.firmware.bind import bind
from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.facts.query import ambiguous_board_name, board_led
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.obligations.refs import claims
from rac_fw.domains.firmware.plan.matrix import frameworks_for
from rac_fw.domains.firmware.plan.model import Plan


def _blink(target: str, *leds: str) -> Plan:
    ops = [{"op": "gpio_blink", "led": led, "period_ms": 500} for led in leds]
    return Plan.model_validate({"target": target, "operations": ops})


def _pin_evidence(framework: str, files: dict[str, str], pin: str, label: str | None) -> bool:
    """Whether the generated tree drives ``pin``, judged from the text the framework emits for it."""
    text = "\n".join(files.values())
    if framework == "zephyr":
        return label is not None and bool(re.search(rf"DT_(ALIAS|NODELABEL)\({re.escape(label)}\)", text))
    if framework == "hal":
        return f"GPIO_PIN_{int(re.sub(r'^P[A-K]', '', pin))}" in text
    return f"pin={pin}" in text


def test_nrf52840_led1_is_led2_on_p0_14_everywhere() -> None:
    target = load_target("nrf52840")
    plan = _blink("nrf52840", "led1")
    assert check(plan, target, "zephyr") == []
    assert [c.pin for c in claims(plan, target)] == ["P0.14"]
    zephyr = lower(plan, target, "zephyr")
    assert "DT_ALIAS(led1)" in zephyr.files["src/main.c"] and "DT_ALIAS(led0)" not in zephyr.files["src/main.c"]
    baremetal = lower(plan, target, "baremetal")
    main = baremetal.files["src/main.c"]
    assert "PIN_CNF[14]" in main and "PIN_CNF[13]" not in main
    for lowered in (zephyr, baremetal):
        assert lowered.receipt.bindings == ["operations[0].led led1 → board led LED2 (P0.14, devicetree led1)"]


def test_vendor_name_and_loose_spelling() -> None:
    """Exact spellings bind (alias, node label, vendor name); a loose one reaching two items binds neither."""
    target = load_target("nrf52840")
    assert [board_led(target, n).pin for n in ("led1", "LED1", "LED2")] == ["P0.14", "P0.13", "P0.14"]  # type: ignore[union-attr]
    assert ambiguous_board_name(target, "led1", led=True) is None
    twins = ambiguous_board_name(target, "Led1", led=True)
    assert twins is not None and [c.pin for c in twins.candidates] == ["P0.13", "P0.14"]
    assert board_led(target, "Led1") is None


@pytest.mark.parametrize("target_id", [t for t in target_ids() if len(load_target(t).board.leds) >= 4])
def test_four_led_plan_drives_four_distinct_leds(target_id: str) -> None:
    target = load_target(target_id)
    labels = [led.dt_label or led.name for led in target.board.leds[:4]]
    plan = _blink(target_id, *labels)
    bound = bind(plan, target, "zephyr")
    pins = [bound.led(label).pin for label in labels]
    assert len(set(pins)) == 4 and pins == [led.pin for led in target.board.leds[:4]]
    frameworks = [f for f in frameworks_for("gpio_blink", target) if check(plan, target, f) == []]
    assert frameworks, target_id
    for framework in frameworks:
        lowered = lower(plan, target, framework)
        assert len(lowered.receipt.bindings) == 4
        for led in target.board.leds[:4]:
            assert _pin_evidence(framework, lowered.files, led.pin, led.dt_label), (framework, led)


def test_a_pin_shown_free_is_accepted_by_the_pin_rules() -> None:
    """The observation's free pins and the obligations' pin rules are one function (facts.query.pin_free)."""
    from rac_fw.domains.firmware.facts.observe import free_pins

    for target_id in target_ids():
        target = load_target(target_id)
        framework = target.frameworks[0]
        for pin in free_pins(target):
            plan = Plan.model_validate(
                {
                    "target": target_id,
                    "resources": {"pins": [{"name": "out", "pin": pin, "function": "GPIO"}]},
                    "operations": [{"op": "gpio_set", "led": "out"}],
                }
            )
            found = check(plan, target, framework)
            evidence = [e for e in found if e.code.startswith("E_PIN") or e.code == "E_NFC_PIN"]
            assert evidence == [], (target_id, pin, [e.message for e in evidence])
    assert "GPIO45" not in free_pins(load_target("esp32s3")), "a strapping pin is not offered as free"
