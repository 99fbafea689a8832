"""The ``protected_store`` operation: a named record in the PSA Internal Trusted Storage (ITS).

Zephyr 4.1 provides ``psa/internal_trusted_storage.h`` without TF-M through its ``secure_storage`` subsystem
(``CONFIG_SECURE_STORAGE``, experimental): Zephyr's ITS implementation seals every entry with the AEAD
transform (AES-GCM, a 12-byte nonce and a 16-byte tag, plus one byte of packed flags) and keeps it as a
setting ``its/<caller>/<uid>`` through the settings subsystem's NVS backend on the board's
``storage_partition`` (``SECURE_STORAGE_ITS_STORE_IMPLEMENTATION_SETTINGS``, as samples/psa/its does).
Its transform draws nonces with ``psa_generate_random``, so PSA Crypto is initialised first.

Obligations (this module): the record fits the backend (E_ITS_DATA_SIZE: at most the settings value
limit minus the transform's overhead, in bytes); every record has one UID, nonzero, within the 30 bits
Zephyr's ITS keeps, and no two records share one (E_ITS_UID); a write-once record is written by one
operation and never removed (E_ITS_WRITE_ONCE); the storage partition exists (E_PARTITION_MISSING), is
made of at least two equal sectors NVS can use (E_ITS_BACKEND) and holds no other file system
(E_PARTITION_SHARED); the main stack carries PSA Crypto (E_CRYPTO_STACK). ESP-IDF has no ITS in its core:
the support rule refuses the operation there with what ESP-IDF offers instead (NVS, encryptable) and the
NVS-backed operations as relaxations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.facts.kconfig import release_has
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.sdk import release
from rac_fw.domains.firmware.ops.crypto import policy
from rac_fw.domains.firmware.ops.storage.area import (
    area,
    has_partition,
    missing,
    uniform_blocks,
    zephyr_flash_writer,
)
from rac_fw.domains.firmware.ops.storage.kv_record import IDF_KEY_MAX, NVS_MAX_SECTOR
from rac_fw.domains.firmware.ops.storage.settings_value import FILE_SYSTEMS, SETTINGS_MAX_VAL_LEN
from rac_fw.domains.firmware.plan import evidence as ev
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpCheck, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

DATA_SIZE = "E_ITS_DATA_SIZE"
UID = "E_ITS_UID"
WRITE_ONCE = "E_ITS_WRITE_ONCE"
BACKEND = "E_ITS_BACKEND"
SHARED = "E_PARTITION_SHARED"

#: subsys/secure_storage/Kconfig: SECURE_STORAGE_ITS_MAX_DATA_SIZE (default 128 bytes); the lowering raises
#: it to the plan's largest record.
ITS_MAX_DATA_DEFAULT = 128
#: What the AEAD transform adds to an entry (Kconfig.its_transform: SECURE_STORAGE_ITS_TRANSFORM_OUTPUT_OVERHEAD
#: 28 = 16-byte tag + 12-byte nonce) plus the packed create flags (its/common.h: one uint8_t).
ITS_STORED_OVERHEAD = 28 + 1
#: The largest record the settings-backed store keeps: one setting value of SETTINGS_MAX_VAL_LEN bytes.
ITS_MAX_DATA = SETTINGS_MAX_VAL_LEN - ITS_STORED_OVERHEAD
#: include/internal/zephyr/secure_storage/common.h: SECURE_STORAGE_UID_BIT_SIZE (without 64-bit UIDs).
UID_BITS = 30

#: psa/storage_common.h create flags, by the plan field that asks for each.
FLAGS = {
    "write_once": "PSA_STORAGE_FLAG_WRITE_ONCE",
    "no_confidentiality": "PSA_STORAGE_FLAG_NO_CONFIDENTIALITY",
    "no_replay_protection": "PSA_STORAGE_FLAG_NO_REPLAY_PROTECTION",
}


class ProtectedStore(Operation):
    """Store ``size_bytes`` bytes as ITS record ``record`` (``psa_its_set``), read it back and compare
    (``psa_its_get``), report its size and flags (``psa_its_get_info``) and, with ``remove``, delete it
    (``psa_its_remove``).

    The data is generated on the device — random bytes from ``psa_generate_random`` or a counting test
    pattern — never written in the plan or the C. The record's UID is ``uid``, or its position among the
    plan's records (1, 2, …). A ``write_once`` record already present (a later boot) is not written again:
    its info and contents are checked instead (the pattern is compared; random data only by length).
    Zephyr's implementation encrypts and authenticates every record whatever the flags, and protects none
    against replay (no hardware-protected storage); the flags are stored and reported as PSA defines them.
    """

    op: Literal["protected_store"]
    record: Name = Field(description="The record's name in the plan (one UID per record).")
    uid: int | None = Field(
        default=None, ge=0, le=(1 << 64) - 1, description="PSA storage UID (nonzero); None = the record's position."
    )
    size_bytes: int = Field(ge=1, le=65536, description="Record length in bytes.")
    content: Literal["random", "pattern"] = Field(
        default="random", description="random: psa_generate_random; pattern: byte i holds i mod 256."
    )
    write_once: bool = Field(default=False, description="PSA_STORAGE_FLAG_WRITE_ONCE: never modified nor removed.")
    no_confidentiality: bool = Field(default=False, description="PSA_STORAGE_FLAG_NO_CONFIDENTIALITY.")
    no_replay_protection: bool = Field(default=False, description="PSA_STORAGE_FLAG_NO_REPLAY_PROTECTION.")
    remove: bool = Field(default=False, description="Remove the record after the verified read-back.")


def _records(plan: Plan) -> list[tuple[int, ProtectedStore]]:
    return [(i, o) for i, o in enumerate(plan.operations) if isinstance(o, ProtectedStore)]


def record_uids(plan: Plan) -> dict[str, int]:
    """Each record's UID: the first explicit ``uid`` given for it, else its position among the records."""
    found: dict[str, int] = {}
    for _, op in _records(plan):
        if op.record not in found:
            found[op.record] = op.uid if op.uid is not None else len(found) + 1
    return found


def _free_uid(plan: Plan) -> int:
    taken = set(record_uids(plan).values()) | {o.uid for _, o in _records(plan) if o.uid is not None}
    return next(u for u in range(1, len(taken) + 2) if u not in taken)


# --- obligations ------------------------------------------------------------------------------------------
def _data_size(plan: Plan, target: Target, framework: str, index: int, op: ProtectedStore) -> list[Evidence]:
    if op.size_bytes <= ITS_MAX_DATA:
        return []
    path: ev.Path = ["operations", index, "size_bytes"]
    return [ev.violation(
        DATA_SIZE,
        f"protected_store {op.record}: {op.size_bytes} bytes sealed by the ITS transform take "
        f"{op.size_bytes + ITS_STORED_OVERHEAD} bytes, above the settings backend's {SETTINGS_MAX_VAL_LEN}-byte "
        f"value (SETTINGS_MAX_VAL_LEN): an ITS record holds at most {ITS_MAX_DATA} bytes",
        path, [op.record, "SECURE_STORAGE_ITS_MAX_DATA_SIZE", "SETTINGS_MAX_VAL_LEN"],
        [ev.measure("size", op.size_bytes, "bytes"), ev.measure("max_data", ITS_MAX_DATA, "bytes"),
         ev.measure("overhead", ITS_STORED_OVERHEAD, "bytes")],
        [ev.relax(f"store at most {ITS_MAX_DATA} bytes", ev.replace(path, ITS_MAX_DATA))],
    )]  # fmt: skip


def _uid(plan: Plan, target: Target, framework: str, index: int, op: ProtectedStore) -> list[Evidence]:
    """The record's UID is nonzero, within 30 bits, the same in every operation on it and no other record's."""
    uids = record_uids(plan)
    mine = op.uid if op.uid is not None else uids[op.record]
    path: ev.Path = ["operations", index, "uid"]
    fresh = _free_uid(plan)
    fix = [ev.relax(f"give {op.record} UID {fresh}", ev.replace(path, fresh))]
    if op.uid is not None and (mine == 0 or mine >= 1 << UID_BITS):
        why = (
            "is 0: psa_its_set refuses a zero UID (PSA_ERROR_INVALID_ARGUMENT)"
            if mine == 0
            else f"has bits past the first {UID_BITS}, which Zephyr's ITS UIDs keep (PSA_ERROR_INVALID_ARGUMENT)"
        )
        bits = [ev.measure("uid_bits", mine.bit_length(), "bits"), ev.measure("max_bits", UID_BITS, "bits")]
        message = f"protected_store {op.record}: UID {mine} {why}"
        return [ev.violation(UID, message, path, [op.record, str(mine)], bits, fix)]
    if mine != uids[op.record]:
        return [ev.violation(
            UID, f"record {op.record} is given UID {mine} here and UID {uids[op.record]} by an earlier operation",
            path, [op.record, str(mine), str(uids[op.record])],
            relaxations=[ev.relax(f"use {op.record}'s UID {uids[op.record]}", ev.replace(path, uids[op.record]))],
        )]  # fmt: skip
    names = list(uids)
    other = next((r for r in names[: names.index(op.record)] if uids[r] == mine), None)
    if other is None or next(i for i, o in _records(plan) if o.record == op.record) != index:
        return []
    return [ev.violation(
        UID, f"records {other} and {op.record} share UID {mine}: psa_its_set would overwrite one with the other",
        path, [op.record, other, str(mine)], relaxations=fix,
    )]  # fmt: skip


def _write_once(plan: Plan, target: Target, framework: str, index: int, op: ProtectedStore) -> list[Evidence]:
    """A write-once record is written by a single operation and never removed (PSA_ERROR_NOT_PERMITTED)."""
    at: ev.Path = ["operations", index]
    if op.write_once and op.remove:
        return [ev.violation(
            WRITE_ONCE,
            f"protected_store {op.record} is write-once: psa_its_remove refuses it (PSA_ERROR_NOT_PERMITTED)",
            [*at, "remove"], [op.record, "PSA_STORAGE_FLAG_WRITE_ONCE"],
            relaxations=[ev.relax(f"keep {op.record}", ev.replace([*at, "remove"], False)),
                         ev.relax(f"make {op.record} rewritable", ev.replace([*at, "write_once"], False))],
        )]  # fmt: skip
    first = next(((i, o) for i, o in _records(plan) if o.record == op.record and o.write_once and i < index), None)
    if first is None:
        return []
    return [ev.violation(
        WRITE_ONCE, f"protected_store {op.record} writes again the write-once record operations[{first[0]}] created: "
        "psa_its_set refuses it (PSA_ERROR_NOT_PERMITTED)",
        at, [op.record, "PSA_STORAGE_FLAG_WRITE_ONCE"],
        relaxations=[
            ev.relax("drop this second write", ev.remove(at)),
            ev.relax(f"make {op.record} rewritable", ev.replace(["operations", first[0], "write_once"], False)),
        ],
    )]  # fmt: skip


def _partition(plan: Plan, target: Target, framework: str, index: int, op: ProtectedStore) -> list[Evidence]:
    first = _records(plan)[0][0] == index
    if not first:
        return []
    gone = missing(plan, target, framework, index, "storage", f"protected_store {op.record} (ITS over settings)")
    part = area(plan, target, framework, "storage")
    if gone or part is None:
        return gone
    geometry = uniform_blocks(plan, target, framework, "storage")
    if geometry is not None and geometry[0] <= NVS_MAX_SECTOR and geometry[1] >= 2:
        return []
    sector, count = geometry or (part.size, 1)
    return [ev.violation(
        BACKEND,
        f"the ITS settings backend keeps an NVS file system in {part.name} of {target.id} ({part.size} bytes): its "
        f"{sector}-byte erase blocks give {count} sector(s); NVS needs at least 2 of at most {NVS_MAX_SECTOR} bytes",
        ["operations", index], [part.name, target.id, op.record],
        [ev.measure("partition", part.size, "bytes"), ev.measure("sector", sector, "bytes"),
         ev.measure("max_sector", NVS_MAX_SECTOR, "bytes"), ev.measure("sectors", count, "count")],
        [ev.relax("drop the protected_store operations",
                  *(ev.remove(["operations", i]) for i, _ in reversed(_records(plan))))],
    )]  # fmt: skip


def _shared(plan: Plan, target: Target, framework: str, index: int, op: ProtectedStore) -> list[Evidence]:
    others = [i for i, o in enumerate(plan.operations) if o.op in FILE_SYSTEMS]
    if not others or _records(plan)[0][0] != index:
        return []
    return [ev.violation(
        SHARED,
        f"protected_store {op.record}: the ITS settings backend keeps its NVS file system in storage_partition, "
        f"where operations[{others[0]}] ({plan.operations[others[0]].op}) also writes",
        ["operations", index], ["storage_partition", "protected_store", plan.operations[others[0]].op],
        relaxations=[ev.relax(f"drop operations[{i}]", ev.remove(["operations", i])) for i in others],
    )]  # fmt: skip


def _stack(plan: Plan, target: Target, framework: str, index: int, op: ProtectedStore) -> list[Evidence]:
    return policy.stack(plan, index)


def _realized(rule: OpCheck) -> OpCheck:
    """Judge the record only for a framework that realizes the ITS (elsewhere the support rule refuses it)."""

    def judged(plan: Plan, target: Target, framework: str, index: int, op: ProtectedStore) -> list[Evidence]:
        return rule(plan, target, framework, index, op) if SPEC.realization(framework) is not None else []

    return judged


def _espidf_refusal(plan: Plan, target: Target, index: int, op: ProtectedStore) -> tuple[str, list[Relaxation]]:
    """ESP-IDF 5.x: no psa/internal_trusted_storage.h in its core; nvs_flash (optionally NVS encryption) is there."""
    why = (
        "ESP-IDF has no PSA Internal Trusted Storage (psa_its_*) in its core; it keeps records in NVS (nvs_flash "
        "on the nvs partition), encrypted with CONFIG_NVS_ENCRYPTION and nvs_flash_secure_init"
    )
    return why, _nvs_instead(op, index)


#: The Zephyr subsystem the realization stands on (subsys/secure_storage, new in Zephyr 4.1).
ITS_KCONFIG = "SECURE_STORAGE"


def _zephyr_available(target: Target) -> bool:
    """A storage partition for the settings backend, and a Zephyr release with the secure_storage subsystem."""
    return has_partition("zephyr", "storage")(target) and release_has(target, "zephyr", ITS_KCONFIG)


def _zephyr_refusal(plan: Plan, target: Target, index: int, op: ProtectedStore) -> tuple[str, list[Relaxation]]:
    """Zephyr without secure_storage (3.7: PSA ITS only through TF-M on a secure-capable core): NVS as on ESP-IDF."""
    written_for = release(target, "zephyr")
    if release_has(target, "zephyr", ITS_KCONFIG) or written_for is None:
        return f"{target.id} has no storage_partition for the settings backend", []
    why = (
        f"{written_for.label} has no secure_storage subsystem (CONFIG_{ITS_KCONFIG} came with Zephyr 4.1: "
        "--zephyr-version 4.1 realizes it); keep the record in NVS instead"
    )
    return why, _nvs_instead(op, index)


def _nvs_instead(op: ProtectedStore, index: int) -> list[Relaxation]:
    """The record as an NVS record or setting: what both frameworks offer without PSA ITS."""
    key = op.record[:IDF_KEY_MAX]
    at: ev.Path = ["operations", index]
    name = {"name": op.name} if op.name else {}
    kv = {"op": "kv_record", **name, "key": key, "value_bytes": op.size_bytes, "delete": op.remove}
    setting = {"op": "settings_value", **name, "key": key, "value_bytes": op.size_bytes}
    options = [ev.relax(f"keep {op.record} as an NVS record (kv_record {key})", ev.replace(at, kv))]
    if op.size_bytes <= SETTINGS_MAX_VAL_LEN and not op.remove:
        options.append(ev.relax(f"keep {op.record} as an NVS setting (settings_value {key})", ev.replace(at, setting)))
    return options


# --- Zephyr lowering --------------------------------------------------------------------------------------
def _zephyr(b: ZephyrBuilder, index: int, op: ProtectedStore) -> dict[str, Any]:
    geometry = uniform_blocks(b.plan, b.target, "zephyr", "storage")
    if geometry is None:
        raise b.unsupported(f"operations.{index}", f"{b.target.id} has no storage_partition", [op.record], [])
    policy.psa_config(b)
    b.app.includes.update({"psa/internal_trusted_storage.h", "string.h", *(("stdbool.h",) if op.write_once else ())})
    zephyr_flash_writer(b, "crypto")
    b.app.need("crypto", "CONFIG_SECURE_STORAGE", "CONFIG_SECURE_STORAGE_ITS_STORE_IMPLEMENTATION_SETTINGS",
               "CONFIG_SETTINGS", "CONFIG_SETTINGS_NVS", "CONFIG_NVS")  # fmt: skip
    for symbol, value in (
        ("CONFIG_SETTINGS_NVS_SECTOR_SIZE_MULT", "1"),
        ("CONFIG_SETTINGS_NVS_SECTOR_COUNT", str(geometry[1])),
    ):
        if symbol not in b.app.settings:  # a settings_value of the plan may have sized the backend already
            b.app.setting("crypto", symbol, value)
    largest = max(o.size_bytes for _, o in _records(b.plan))
    if largest > ITS_MAX_DATA_DEFAULT:
        b.app.setting("crypto", "CONFIG_SECURE_STORAGE_ITS_MAX_DATA_SIZE", str(largest))
    flags = [c for field, c in FLAGS.items() if getattr(op, field)] or ["PSA_STORAGE_FLAG_NONE"]
    return {
        "id": b.ids[index],
        "uid": record_uids(b.plan)[op.record],
        "bytes": op.size_bytes,
        "random": op.content == "random",
        "flags": " | ".join(flags),
        "write_once": op.write_once,
        "remove": op.remove,
        "setup": True,
        "step": {"period_ms": None},
    }


SPEC = OpSpec(
    model=ProtectedStore,
    family="crypto",
    realizations={
        "zephyr": Realization(template="its", view=_zephyr, available=_zephyr_available),
    },
    checks=tuple(_realized(rule) for rule in (_partition, _shared, _data_size, _uid, _write_once, _stack)),
    codes=("E_PARTITION_MISSING", BACKEND, SHARED, DATA_SIZE, UID, WRITE_ONCE, policy.STACK),
    refusals={"espidf": _espidf_refusal, "zephyr": _zephyr_refusal},
    ram=lambda op: (2 * op.size_bytes, "size_bytes"),  # the written and the read-back copy (static arrays)
)
