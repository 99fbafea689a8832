"""Generated firmware includes the headers that declare what it uses (issue 12, found by ``E_UNDECLARED``).

End to end: the real lowering renders the example, the independent verifier's header model judges it.
"""

from __future__ import annotations

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.resources import data_dir


def test_generated_zephyr_gpio_apps_include_the_gpio_driver_header() -> None:
    """Issue 12: every Zephyr GPIO app lacked zephyr/drivers/gpio.h; the header check found it, the lowering
    now includes it, and the app verifies clean on every Zephyr target that accepts the plan."""
    checked = []
    for target in target_ids():
        if "zephyr" not in load_target(target).frameworks:
            continue
        result = run_plan(data_dir("examples") / "gpio_blink.yaml", target=target, framework="zephyr")
        if result.status is Status.INVALID:
            continue
        assert result.status is Status.PASS and result.lowered is not None, target
        assert "#include <zephyr/drivers/gpio.h>" in result.lowered.files["src/main.c"], target
        checked.append(target)
    assert len(checked) >= 4, checked
