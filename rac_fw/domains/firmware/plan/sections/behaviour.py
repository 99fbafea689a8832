"""The plan-level ``behaviour:`` block: what the application does (``rac_fw/domains/firmware/plan/behaviour/``).

The block's model, compiler, obligations, trace predictor and C renderer live in the behaviour package;
this spec registers the block like every plan-level block: its checks (the compiler's evidence, then the
obligations of ``behaviour.checks``, then where a framework keeps persisted variables) and one realization
per framework, which renders the behaviour's C into the builder's main file through ``behaviour.lowering``.

ESP-IDF's realization and refusals are in ``sections/behaviour_espidf.py``, STM32 HAL's realization in
``sections/behaviour_hal.py``.

Zephyr keeps persisted variables as settings (``rac_b/<name>``) in the NVS backend on ``storage_partition``:
the board's flash map must have that partition in equal erase blocks NVS can use as sectors, and no other
operation may keep its own file system there (``kv_record``, ``flash_store``), as for ``settings_value``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.facts.storage import role, storage
from rac_fw.domains.firmware.plan.behaviour.checks import CODES, check, ram_bytes
from rac_fw.domains.firmware.plan.behaviour.contexts import _path
from rac_fw.domains.firmware.plan.behaviour.emit import all_statements
from rac_fw.domains.firmware.plan.behaviour.lowering import compiled, render, used_ops
from rac_fw.domains.firmware.plan.behaviour.lowering import program as compiled_program
from rac_fw.domains.firmware.plan.behaviour.model import Behaviour
from rac_fw.domains.firmware.plan.behaviour.render import OpRef
from rac_fw.domains.firmware.plan.evidence import relax, remove, replace, violation
from rac_fw.domains.firmware.plan.sections import behaviour_espidf, behaviour_hal
from rac_fw.domains.firmware.plan.spec import SectionSpec

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


def _baremetal(b: BaremetalBuild, value: Behaviour) -> None:
    found = compiled_program(b.plan, b.target, "baremetal")
    assert found is not None
    refs = {i: OpRef(b.views.get(i, {"outputs": {}}), b.op_module(i)) for i in used_ops(found)}
    b.behaviour = render(b.plan, b.target, "baremetal", refs)
    b.noinit = any(v.persist for v in found.variables)


def _zephyr(b: ZephyrBuilder, value: Behaviour) -> None:
    """The behaviour's C after the operations' globals (main() reports every operation in plan order, then calls
    ``rac_behaviour_run()``: ``templates/zephyr/main_behaviour.c.j2``); settings for persisted variables."""
    found = compiled_program(b.plan, b.target, "zephyr")
    assert found is not None
    refs = {i: OpRef(b.views.get(i, {"outputs": {}}), b.op_module(i)) for i in used_ops(found)}
    b.behaviour = render(b.plan, b.target, "zephyr", refs)
    if any(s.kind == "reset" for s in all_statements(found)):
        b.reboots()
    if any(v.persist for v in found.variables):
        geometry = _settings_sectors(b.target)
        assert geometry is not None  # _zephyr_store refused the plan otherwise
        b.keep_in_settings(geometry[1])


def _check(plan: Any, target: Any, framework: str, value: Behaviour) -> list[Any]:
    return check(plan, target, framework)


#: Zephyr NVS (subsys/fs/nvs/nvs.c): ``struct nvs_fs.sector_size`` is a ``uint16_t`` and the file system needs
#: two sectors at least (one is kept free for garbage collection): the settings backend's sector limits.
NVS_MAX_SECTOR = 32768
NVS_MIN_SECTORS = 2
#: Operations that keep their own file system in Zephyr's storage_partition (``settings_value`` refuses the
#: same neighbours: E_PARTITION_SHARED).
OWN_FILE_SYSTEMS = ("kv_record", "flash_store", "fs_file", "ring_log")


def _settings_sectors(target: Any) -> tuple[int, int] | None:
    """``(sector_bytes, sectors)`` the settings NVS backend gets on Zephyr's storage_partition of ``target``
    (its erase blocks, when they are equal), or None when the map has no such partition or mixes blocks."""
    facts = storage(target)
    part = role(facts, "zephyr", "storage") if facts is not None else None
    if facts is None or part is None:
        return None
    sizes = {size for _, size in facts.flash.blocks_in(part.offset, part.size)}
    if len(sizes) != 1:
        return None
    block = sizes.pop()
    return block, part.size // block


def _zephyr_store(plan: Any, target: Any, framework: str, value: Behaviour) -> list[Any]:
    """Where ESP-IDF's realization and refusals are in ``sections/behaviour_espidf.py``.

Zephyr keeps persisted variables: settings on storage_partition (see the module docstring)."""
    kept = [i for i, v in enumerate(value.vars) if v.persist]
    if framework != "zephyr" or not kept:
        return []
    path: list[str | int] = ["behaviour", "vars", kept[0], "persist"]
    names = [value.vars[i].name for i in kept]
    forget = [relax(f"do not persist {value.vars[i].name}", replace(["behaviour", "vars", i, "persist"], False))
              for i in kept]  # fmt: skip
    facts = storage(target)
    if facts is None or role(facts, framework, "storage") is None:
        others = [f for f in target.frameworks if f != framework and f in SECTION.realizations]
        return [violation("E_PARTITION_MISSING", f"the behaviour persists {', '.join(names)} as settings on "
                          f"storage_partition, and the zephyr flash map of {target.id} has none", path,
                          [*names, "storage_partition"],
                          relaxations=[relax(f"use framework {f}", replace(["framework"], f))
                                       for f in others] + forget)]  # fmt: skip
    geometry = _settings_sectors(target)
    if geometry is None or geometry[0] > NVS_MAX_SECTOR or geometry[1] < NVS_MIN_SECTORS:
        why = ("mixes erase-block sizes" if geometry is None else
               f"has {geometry[1]} erase block(s) of {geometry[0]} bytes; the NVS settings backend needs at least "
               f"{NVS_MIN_SECTORS} sectors of at most {NVS_MAX_SECTOR} bytes")  # fmt: skip
        return [violation("E_BEHAVIOUR_PERSIST", f"storage_partition of {target.id} {why}", path,
                          [*names, "storage_partition"], relaxations=forget)]  # fmt: skip
    shared = [i for i, op in enumerate(plan.operations) if op.op in OWN_FILE_SYSTEMS]
    if shared:
        first = plan.operations[shared[0]].op
        return [violation("E_PARTITION_SHARED", f"the behaviour's persisted variables live in the settings NVS "
                          f"backend on storage_partition, where operations[{shared[0]}] ({first}) keeps its own "
                          "file system", path, ["storage_partition", first, *names],
                          relaxations=[relax(f"drop operations[{i}]", remove(["operations", i])) for i in shared]
                          + forget)]  # fmt: skip
    return []


#: Core architectures whose Zephyr 4.1 port has no ``sys_arch_reboot``: the POSIX architecture of native_sim
#: (Zephyr 4.2 adds CONFIG_NATIVE_SIM_REBOOT).
NO_REBOOT_ARCHES = ("x86",)


def _zephyr_reset(plan: Any, target: Any, framework: str, value: Behaviour) -> list[Any]:
    """``reset: chip`` on Zephyr is ``sys_reboot``, which the port of ``target``'s architecture must implement."""
    if framework != "zephyr" or target.core.arch not in NO_REBOOT_ARCHES:
        return []
    found, _ = compiled(plan, target, framework)
    resets = [s for s in all_statements(found) if s.kind == "reset"] if found is not None else []
    if not resets:
        return []
    where = _path(resets[0].path)[:-1]  # the step itself (its path ends at its `reset` key)
    boards = [t for t in target_ids() if t != target.id and "zephyr" in (other := load_target(t)).frameworks
              and other.core.arch not in NO_REBOOT_ARCHES]  # fmt: skip
    return [violation("E_TARGET_UNSUPPORTED", f"reset: chip on Zephyr is sys_reboot, which Zephyr 4.1 does not "
                      f"implement for {target.id}'s {target.core.arch} (POSIX) architecture (Zephyr boards that "
                      f"reboot: {', '.join(boards)})", where, ["reset", target.id],
                      relaxations=[relax("end the behaviour there instead (exit: 0)", replace(where, {"exit": 0}))])]



def _ram(plan: Any, target: Any, framework: str, value: Behaviour) -> int:
    found, _ = compiled(plan, target, framework)
    return ram_bytes(found) if found is not None else 0


SECTION = SectionSpec(
    name="behaviour",
    model=Behaviour,
    family="behaviour",
    realizations={"baremetal": _baremetal, "zephyr": _zephyr, "espidf": behaviour_espidf.realize,
                  "hal": behaviour_hal.realize},
    checks=(_check, _zephyr_store, _zephyr_reset, behaviour_espidf.check),
    codes=(*CODES, "E_PARTITION_MISSING", "E_PARTITION_SHARED"),
    ram=_ram,
)
