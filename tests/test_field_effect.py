"""No dead fields: every operation and plan-level block field changes the artifact or is refused with evidence.

The fields are not listed by hand: the test walks the op registry and the section registry and each model's
JSON Schema (nested objects and lists included, ``op`` left out). For each field it takes every valid base plan
that uses the operation or block — the task suite's reference plans on each of their cells and the examples —
changes the field to another value its schema allows (``field_variants``, deterministic), and judges the change
on every base: refused by the obligations with evidence, or a lowered tree that differs from the base's. A
field passes when one base shows either; a field no base can show is dead. A change the owner's whole schema
refuses (its cross-field rules) is not judged; a change the parse refuses although the schema allows it is a
schema/validation disagreement and fails too.

Runtime is bounded by sampling: at most ``BASES`` bases per operation (spread over frameworks) and one value
per field path, chosen deterministically. The counts are printed (``-s``) and asserted.
"""

from __future__ import annotations

import copy
import glob
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from field_variants import variants
from jsonschema import Draft202012Validator

from rac_fw.contract import apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import LoweringError, lower
from rac_fw.domains.firmware.obligations import violations
from rac_fw.domains.firmware.plan.load import PlanError, parse_plan
from rac_fw.domains.firmware.plan.registry import sections, specs

ROOT = Path(__file__).resolve().parents[1]
#: Most base plans judged per operation or block (the first of each framework, then the others).
BASES = 4
TCP_CLIENT = {
    "target": "native_sim",
    "heap_bytes": 16384,
    "operations": [{"op": "tcp_client", "name": "link", "host": "127.0.0.1", "port": 9000, "message": "hi",
                    "interval_ms": 1000}],
}  # fmt: skip
#: A setting saved every minute: there the service life decides the endurance verdict (10 years hold, 50 do not),
#: which no shipped plan shows (the one example saves every 10 minutes, within budget for any life).
SETTINGS_MINUTELY = {
    "target": "nrf52840",
    "operations": [{"op": "settings_value", "name": "duty", "key": "duty", "value_bytes": 4, "save_period_ms": 60000}],
}


def _documents() -> Iterator[dict[str, Any]]:
    """Every plan document the project ships as valid: suite references on each cell, then the examples (after
    the settings base above, the one where a setting's service life shows)."""
    yield SETTINGS_MINUTELY
    for suite in sorted(glob.glob(str(ROOT / "rac_fw/domains/firmware/tasks/suite/*.yaml"))):
        for behaviour in yaml.safe_load(Path(suite).read_text()).get("behaviours", []):
            for cell in behaviour.get("cells", []) if "plan" in behaviour else []:
                target, framework = cell.split("/")
                yield {"target": target, "framework": framework, **copy.deepcopy(behaviour["plan"])}
    for example in sorted(glob.glob(str(ROOT / "examples/*.yaml"))):
        yield yaml.safe_load(Path(example).read_text())
    yield TCP_CLIENT


@dataclass
class Base:
    data: dict[str, Any]
    framework: str
    files: dict[str, str]


def _judge(data: dict[str, Any]) -> tuple[str, Base | None]:
    """``("parse", None)``, ``("evidence", None)``, ``("lowering", None)`` or ``("ok", base)``."""
    try:
        plan = parse_plan(data)
    except PlanError:
        return "parse", None
    target = load_target(plan.target or "")
    framework = plan.framework or target.frameworks[0]
    if violations(plan, target, framework):  # refused with evidence (its relaxations are test_relaxations' concern)
        return "evidence", None
    try:
        files = lower(plan, target, framework).files
    except LoweringError:
        return "lowering", None
    return "ok", Base(data, framework, files)


@cache
def _bases() -> dict[str, list[Base]]:
    """Operation kind or block name → valid base plans using it (at most ``BASES``, frameworks spread)."""
    found: dict[str, list[Base]] = {}
    for data in _documents():
        users = {o.get("op") for o in data.get("operations", [])} | {s.name for s in sections() if data.get(s.name)}
        if all(len(found.get(u, [])) >= BASES for u in users):
            continue
        verdict, base = _judge(data)
        if base is None:
            continue
        for user in users:
            rows = found.setdefault(str(user), [])
            if len(rows) < BASES and all(b.framework != base.framework or len(rows) >= 2 for b in rows):
                rows.append(base)
    return found


@dataclass
class Field:
    owner: str
    path: list[str | int]
    outcomes: list[str] = field(default_factory=list)
    tried: list[tuple[str, Any, str]] = field(default_factory=list)
    """(base framework, value, outcome) per change judged (for the failure message)."""

    @property
    def id(self) -> str:
        return f"{self.owner}.{'.'.join(map(str, self.path))}"


def _where(base: Base, owner: str) -> list[list[str | int]]:
    """The document paths of ``owner`` (an operation kind or a block name) in a base plan."""
    if any(s.name == owner for s in sections()):
        return [[owner]]
    return [["operations", i] for i, o in enumerate(base.data.get("operations", [])) if o.get("op") == owner]


def _schemas() -> Iterator[tuple[str, dict[str, Any]]]:
    for spec in specs():
        yield spec.kind, spec.model.model_json_schema()
    for section in sections():
        yield section.name, section.model.model_json_schema()


def _value(document: Any, path: list[str | int]) -> Any:
    for part in path:
        if isinstance(document, dict):
            document = document.get(part)  # type: ignore[arg-type]
        elif isinstance(document, list) and isinstance(part, int) and part < len(document):
            document = document[part]
        else:
            return None
    return document


@cache
def _fields() -> dict[str, Field]:
    """Every field path of every operation and block (those of a base plan's value), judged on every base."""
    judged: dict[str, Field] = {}
    bases = _bases()
    for owner, schema in _schemas():
        defs = schema.get("$defs", {})
        checker = Draft202012Validator(schema)
        for base in bases.get(owner, []):
            for at in _where(base, owner):
                current = _value(base.data, at)
                for rel, new in variants(schema, current, defs):
                    if not rel or rel[0] == "op":
                        continue
                    shape = [p if isinstance(p, str) else 0 for p in rel]
                    item = judged.setdefault(f"{owner}:{shape}", Field(owner, rel))
                    if any(o in ("artifact", "evidence") for o in item.outcomes):
                        continue  # shown already: the other bases need not be asked
                    in_list = isinstance(_value(current, rel[:-1]), list)
                    step = "remove" if new is None else ("replace" if in_list else "add")
                    patch = [{"op": step, "path": [*at, *rel], **({"value": new} if new is not None else {})}]
                    try:
                        changed = apply_patch(base.data, patch)
                    except Exception:
                        continue
                    if not checker.is_valid(_value(changed, at)):
                        continue  # a value its field allows but the owner's rules do not (period_ms and period_us)
                    verdict, after = _judge(changed)
                    if verdict == "ok" and after is not None:
                        verdict = "unchanged" if after.files == base.files else "artifact"
                    item.outcomes.append(verdict)
                    item.tried.append((base.framework, new, verdict))
    return judged


def test_every_op_and_block_field_changes_the_artifact_or_is_refused_with_evidence() -> None:
    judged = _fields()
    dead = sorted(f.id for f in judged.values() if f.outcomes and set(f.outcomes) <= {"unchanged", "lowering"})
    assert not dead, f"fields whose change neither reaches the artifact nor is refused: {dead}"


def test_a_change_the_schema_allows_is_never_refused_by_the_parse() -> None:
    judged = _fields()
    disagree = sorted(f.id for f in judged.values() if "parse" in f.outcomes)
    assert not disagree, f"schema-valid values the parse refuses: {disagree}"


def test_field_effect_counts(capsys: pytest.CaptureFixture[str]) -> None:
    judged = _fields()
    owners = {f.owner for f in judged.values()}
    by = {kind: sum(1 for f in judged.values() if kind in f.outcomes) for kind in ("artifact", "evidence")}
    with capsys.disabled():
        print(
            f"\nfield effect: {len(judged)} field paths of {len(owners)} operations and blocks judged on "
            f"{sum(len(b) for b in _bases().values())} base plans; {by['artifact']} change the artifact, "
            f"{by['evidence']} are refused with evidence somewhere"
        )
    kinds = {s.kind for s in specs()} | {s.name for s in sections()}
    assert owners >= kinds - {"mesh"}, sorted(kinds - owners)
