"""Task labels and the README's counts come from the suite and the plan language, never from prose."""

from __future__ import annotations

import re
from pathlib import Path

from rac_fw.domains.firmware.plan.registry import kinds
from rac_fw.domains.firmware.tasks import get_task, suite
from rac_fw.domains.firmware.tasks.gaps import README_BEGIN, README_END, counts, gap, readme_counts

README = Path(__file__).resolve().parents[1] / "README.md"


def test_labels_are_generated_from_what_the_plan_language_has() -> None:
    littlefs = get_task("fw/storage/littlefs_boot_counter@nrf52840-zephyr")
    assert littlefs is not None and littlefs.missing is not None
    assert "fs_file" in kinds() and "fs_file has no field counter" in littlefs.missing
    assert "no file-system operation" not in littlefs.missing
    ring = gap(get_task("fw/storage/flash_wear_ring@stm32f407-hal"))  # type: ignore[arg-type]
    assert ring is not None and ring.label == "needs ring_log, which hal does not realize on stm32f407"
    for task in suite().values():
        found = gap(task)
        if task.status == "expressible":
            assert found is None and task.needs == ()
            continue
        assert found is not None and task.needs
        if found.status == "pending":  # every need realized on this very cell
            assert "needs" not in found.label and f"{task.target}/{task.framework}" in found.label
        else:
            assert all(re.search(r"no such operation|has no field|does not realize", part)
                       for part in found.label.split("; "))


def test_readme_counts_are_the_suites() -> None:
    c = counts()
    assert c["tasks"] == len(suite()) == c["expressible"] + c["pending"] + c["unexpressible"]
    text = README.read_text(encoding="utf-8")
    block = text[text.index(README_BEGIN) + len(README_BEGIN): text.index(README_END)]
    assert block == readme_counts(), "run: python -m rac_fw.domains.firmware.tasks.gaps README.md"
