"""The ``settings_value`` operation: a value restored at boot, saved again and read back (Zephyr's
settings subsystem; ESP-IDF's nvs_flash in its own namespace).

The settings subsystem keeps ``rac/<key>`` in its NVS backend on the board's storage partition (a name
entry and a value entry per save), so the record obligations of ``kv_record`` apply with that layout
(partition, sector size, endurance); this module adds the settings value limit (E_RECORD_TOO_LARGE
against ``SETTINGS_MAX_VAL_LEN``) and refuses a second file system on the same partition
(E_PARTITION_SHARED). On ESP-IDF the value is a blob in namespace ``rac_settings`` of the ``nvs``
partition nvs_flash manages for every user (no second file system), so the NVS blob and key limits
of ``kv_record`` apply instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.ops.storage.area import has_partition, zephyr_flash_writer
from rac_fw.domains.firmware.ops.storage.kv_record import (
    ENDURANCE,
    SECTOR,
    _endurance,
    _key_length,
    _partition,
    _record,
    _sector,
    _sectors,
)
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.evidence import measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: include/zephyr/settings/settings.h: SETTINGS_MAX_VAL_LEN.
SETTINGS_MAX_VAL_LEN = 256
#: The subtree every rac-fw setting lives under (``rac/<key>``).
SUBTREE = "rac"
#: ESP-IDF: the NVS namespace settings live in (kv_record uses "rac"; at most 15 characters).
IDF_NAMESPACE = "rac_settings"
#: Operations that keep their own file system in the storage partition.
FILE_SYSTEMS = ("kv_record", "flash_store")


class SettingsValue(Operation):
    """Save ``value_bytes`` bytes as setting ``rac/<key>`` (``settings_save_one``), load the subtree back
    (``settings_load_subtree_direct``) and compare; with ``save_period_ms`` it is saved again every
    period, judged by the endurance budget over ``lifetime_years``.
    """

    op: Literal["settings_value"]
    key: Name
    value_bytes: int = Field(ge=1, le=65536, description="Value length in bytes (settings allow up to 256).")
    sector_bytes: int | None = Field(
        default=None, ge=256, le=1 << 20, description="NVS backend sector size; None = the erase block."
    )
    save_period_ms: int | None = Field(default=None, ge=1, le=31_536_000_000)
    lifetime_years: float = Field(default=10.0, gt=0, le=50)

    @property
    def name_bytes(self) -> int:
        """The backend stores the setting's name as its own NVS entry."""
        return len(SUBTREE) + 1 + len(self.key)


def _value_limit(plan: Plan, target: Target, framework: str, index: int, op: SettingsValue) -> list[Evidence]:
    if framework == "espidf":  # an NVS blob with an NVS key: kv_record's limits
        return _record(plan, target, framework, index, op) + _key_length(plan, target, framework, index, op)
    if op.value_bytes <= SETTINGS_MAX_VAL_LEN:
        return []
    path: list[str | int] = ["operations", index, "value_bytes"]
    return [
        violation(
            "E_RECORD_TOO_LARGE",
            f"settings_value {op.key}: {op.value_bytes} bytes exceed the settings subsystem's "
            f"SETTINGS_MAX_VAL_LEN of {SETTINGS_MAX_VAL_LEN} bytes",
            path,
            [op.key, "SETTINGS_MAX_VAL_LEN"],
            [measure("value", op.value_bytes, "bytes"), measure("limit", SETTINGS_MAX_VAL_LEN, "bytes")],
            [
                relax(f"store at most {SETTINGS_MAX_VAL_LEN} bytes", replace(path, SETTINGS_MAX_VAL_LEN)),
                relax(
                    "keep it as an NVS record (kv_record)",
                    replace(["operations", index], {"op": "kv_record", "key": op.key, "value_bytes": op.value_bytes}),
                ),
            ],
        )
    ]


def _shared(plan: Plan, target: Target, framework: str, index: int, op: SettingsValue) -> list[Evidence]:
    if framework == "espidf":
        return []  # one nvs_flash file system serves every namespace
    others = [i for i, other in enumerate(plan.operations) if other.op in FILE_SYSTEMS]
    if not others:
        return []
    return [
        violation(
            "E_PARTITION_SHARED",
            f"settings_value {op.key}: the settings backend keeps its NVS file system in storage_partition, "
            f"where operations[{others[0]}] ({plan.operations[others[0]].op}) also writes",
            ["operations", index],
            ["storage_partition", "settings_value", plan.operations[others[0]].op],
            relaxations=[relax(f"drop operations[{i}]", remove(["operations", i])) for i in others]
            + [relax("drop this settings_value", remove(["operations", index]))],
        )
    ]


def _zephyr(b: ZephyrBuilder, index: int, op: SettingsValue) -> dict[str, Any]:
    geometry = _sector(op, b.target, "zephyr", b.plan)
    block = geometry[0] if geometry else 0
    facts_block = _sector(op.model_copy(update={"sector_bytes": None}), b.target, "zephyr", b.plan)
    if geometry is None or facts_block is None:
        raise b.unsupported(f"operations.{index}", f"{b.target.id} has no storage_partition", [op.key], [])
    b.app.includes.update({"zephyr/settings/settings.h", "string.h"})
    zephyr_flash_writer(b, "storage")
    b.app.need("storage", "CONFIG_NVS", "CONFIG_SETTINGS", "CONFIG_SETTINGS_NVS")
    b.app.setting("storage", "CONFIG_SETTINGS_NVS_SECTOR_SIZE_MULT", str(block // facts_block[0]))
    b.app.setting("storage", "CONFIG_SETTINGS_NVS_SECTOR_COUNT", str(geometry[1]))
    return {
        "id": b.ids[index],
        "bytes": op.value_bytes,
        "subtree": c_string(SUBTREE),
        "key": c_string(op.key),
        "name": c_string(f"{SUBTREE}/{op.key}"),
        "setup": True,
        "step": {"period_ms": op.save_period_ms},
    }


def _espidf(b: EspIdfBuild, index: int, op: SettingsValue) -> dict[str, Any]:
    b.requires.add("nvs_flash")
    view: dict[str, Any] = {"key": c_string(op.key), "bytes": op.value_bytes,
                            "namespace": c_string(IDF_NAMESPACE)}  # fmt: skip
    if op.save_period_ms is not None:
        view["task"] = b.thread(None, b.symbol(index, op) + "_saver")
        view["period_ms"] = op.save_period_ms
    return view


SPEC = OpSpec(
    model=SettingsValue,
    family="storage",
    realizations={
        "zephyr": Realization(template="storage", view=_zephyr, available=has_partition("zephyr", "storage")),
        "espidf": Realization(template="storage", view=_espidf, available=has_partition("espidf", "storage")),
    },
    checks=(_partition, _sectors, _value_limit, _endurance, _shared),
    codes=(
        "E_PARTITION_MISSING",
        "E_PARTITION_TOO_SMALL",
        SECTOR,
        "E_RECORD_TOO_LARGE",
        ENDURANCE,
        "E_PARTITION_SHARED",
        "E_KEY_TOO_LONG",
        "E_FIELD_UNUSED",
    ),
)
