"""``memory_domain``: a user-mode thread confined to one app-memory partition, judged by the MPU's facts.

Seeded violations (user mode off, partition and stack that are no PMSAv7 region) name the objects and every
relaxation validates once applied; the Zephyr realization puts the thread in its domain before it first
runs and tests every return; the verifier knows the memory-domain API (a bad source per rule).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from seeded_kernel import seeded

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.mpu import mpu_regions
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.domains.firmware.plan.matrix import frameworks_for
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.resources import data_dir

EXAMPLE = data_dir("examples") / "memory_domain.yaml"
BAD = Path(__file__).resolve().parent / "bad_sources" / "zephyr"
DOMAIN = {"op": "memory_domain", "name": "box", "partition_bytes": 256, "stack_bytes": 1024}


def _plan(*ops: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"target": "nrf52840", "framework": "zephyr", "config": {"user_mode": True}, "operations": list(ops)} | top


SEEDED = [
    ("no-config", {k: v for k, v in _plan(DOMAIN).items() if k != "config"}, "E_USER_MODE_OFF", {"box"}),
    ("user-mode-off", _plan(DOMAIN, config={"user_mode": False}), "E_USER_MODE_OFF", {"box"}),
    ("partition-not-a-region", _plan({**DOMAIN, "partition_bytes": 300}), "E_MPU_REGION", {"box", "partition_bytes"}),
    ("stack-not-a-region", _plan({**DOMAIN, "stack_bytes": 1000}), "E_MPU_REGION", {"box", "stack_bytes"}),
]


@pytest.mark.parametrize(("case", "plan", "code", "objects"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_domain_violation_names_objects_and_every_relaxation_validates(
    case: str, plan: dict[str, Any], code: str, objects: set[str]
) -> None:
    evidence, broken = seeded(plan, code)
    assert objects <= set(evidence.objects), evidence.objects
    assert broken == []


def test_pmsav7_regions_round_up_to_a_power_of_two() -> None:
    regions = mpu_regions(load_target("stm32f407"))
    assert regions is not None and regions.architecture == "PMSAv7"
    assert [regions.region_bytes(n) for n in (4, 32, 33, 300, 4096)] == [32, 32, 64, 512, 4096]
    evidence, _ = seeded(_plan({**DOMAIN, "partition_bytes": 300}), "E_MPU_REGION")
    assert {(m.name, m.value) for m in evidence.magnitudes} == {("partition", 300), ("region", 512)}
    assert frameworks_for("memory_domain", load_target("native_sim")) == []


def test_zephyr_puts_the_thread_in_its_domain_before_it_runs() -> None:
    files = lower(load_plan(EXAMPLE), load_target("nrf52840"), "zephyr").files
    main = files["src/main.c"]
    assert "CONFIG_USERSPACE=y" in files["prj.conf"].splitlines()
    assert "K_APP_BMEM(app_sandbox_part) static atomic_t app_sandbox_value;" in main
    setup = main[main.index("static int app_sandbox_setup(void)") :]
    setup = setup[: setup.index("\n}\n")]
    assert "K_USER, K_FOREVER);" in setup
    order = [setup.index(s) for s in ("k_thread_create(", "k_mem_domain_init(", "k_mem_domain_add_thread(",
                                       "k_thread_start(tid);")]  # fmt: skip
    assert order == sorted(order)


@pytest.mark.parametrize(
    ("name", "code", "conf"),
    [
        ("memory_domain_thread_before_init", "E_CALL_MISSING", "memory_prj.conf"),
        ("memory_domain_init_unchecked", "E_UNCHECKED_RETURN", "memory_prj.conf"),
        ("memory_domain_no_userspace", "E_KCONFIG_MISSING", "kernel_prj.conf"),
    ],
)
def test_memory_domain_rules(name: str, code: str, conf: str) -> None:
    text = (BAD / f"{name}.c").read_text()
    line = next(i + 1 for i, t in enumerate(text.splitlines()) if f"expect: {code}" in t)
    result = verify_sources({"src/main.c": text, "prj.conf": (BAD / "support" / conf).read_text()}, "zephyr", None)
    where = "prj.conf" if code == "E_KCONFIG_MISSING" else f"src/main.c:{line}"
    assert [(e.code, e.location.split(" ")[0]) for e in result.evidence] == [(code, where)]


def test_every_memory_bad_source_is_exercised() -> None:
    assert {p.stem for p in BAD.glob("memory_*.c")} == {
        "memory_domain_thread_before_init",
        "memory_domain_init_unchecked",
        "memory_domain_no_userspace",
        "memory_heap_not_initialized",
    }
