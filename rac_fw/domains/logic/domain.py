"""The logic domain plugin: ports + truth table → minterms → sum-of-products gate network → exhaustive check.

Imports only what listing its commands needs (``rac_fw.domain`` asks domain modules to stay cheap to
import); each operation imports its part of the domain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.domain import Command, Domain, Validation, Verification, model_ref

if TYPE_CHECKING:
    from rac_fw.contract import Action, Observation, Realization


class LogicDomain(Domain):
    """Boolean logic synthesis over designs with at most eight inputs."""

    name = "logic"
    action_model = model_ref("rac_fw.domains.logic.model:LogicAction")

    @classmethod
    def commands(cls) -> list[Command]:
        return [Command("logic", "rac_fw.domains.logic.cli:calibrate_logic",
                        "Four checks per logic design: correct, one-row change, forged artifact, repair trace.",
                        group="calibrate")]

    def warm(self) -> None:
        from rac_fw.domains.logic import realize, verify  # noqa: F401

    def tasks(self) -> list[str]:
        from rac_fw.domains.logic.tasks import all_tasks

        return sorted(all_tasks())

    def observe(self, task: str, detail: str | None = None) -> Observation:
        from rac_fw.contract import Observation
        from rac_fw.domains.logic.tasks import get_task

        t = get_task(task)
        rows = []
        for row in range(t.rows):
            bits = t.assignment(row)
            rows.append({"row": row, **{k: int(v) for k, v in bits.items()},
                         **{out: int(t.expected(out, row)) for out in t.outputs}})
        return Observation(
            domain=self.name,
            task=task,
            summary=f"{t.description} Inputs {list(t.inputs)} (first is the MSB of the row index), "
            f"outputs {list(t.outputs)}. Commit, per output, the rows where it is 1.",
            data={"inputs": list(t.inputs), "outputs": list(t.outputs), "truth_table": rows},
        )

    def validate(self, task: str, action: Action) -> Validation:
        from pydantic import ValidationError

        from rac_fw.contract import Evidence, Relaxation, evidence_from_validation_error
        from rac_fw.domains.logic.model import LogicAction
        from rac_fw.domains.logic.tasks import get_task
        from rac_fw.limits import LimitExceeded, check_count

        t = get_task(task)
        outputs = action.payload.get("outputs")
        if isinstance(outputs, dict):  # bounded before typing: a million minterms is an answer, not a wait
            total = sum(len(rows) for rows in outputs.values() if isinstance(rows, list))
            try:
                check_count("minterms", total, "payload.outputs", "the number of minterms over all outputs")
            except LimitExceeded as exc:
                return Validation(None, [exc.evidence()])
        try:
            parsed = LogicAction.model_validate(action.payload)
        except ValidationError as exc:
            return Validation(None, evidence_from_validation_error(exc, prefix="payload"))
        evidence: list[Evidence] = []
        for out, rows in parsed.outputs.items():
            where = f"payload.outputs.{out}"
            if out not in t.outputs:
                evidence.append(Evidence(
                    code="E_UNKNOWN_OUTPUT", message=f"unknown output {out!r}; declared outputs: {list(t.outputs)}",
                    location=where, objects=[out],
                    relaxations=[Relaxation(description=f"remove outputs.{out}",
                                            patch=[{"op": "remove", "path": ["outputs", out]}])]))
                continue
            for i, row in enumerate(rows):
                if not 0 <= row < t.rows:
                    evidence.append(Evidence(
                        code="E_MINTERM_RANGE", message=f"minterm {row} out of range 0..{t.rows - 1}",
                        location=f"{where}[{i}]", objects=[out]))
            dupes = sorted({r for r in rows if rows.count(r) > 1})
            if dupes:
                evidence.append(Evidence(
                    code="E_DUPLICATE_MINTERM", message=f"minterms listed more than once: {dupes}",
                    location=where, objects=[out],
                    relaxations=[Relaxation(description="list each minterm once",
                                            patch=[{"op": "replace", "path": ["outputs", out],
                                                    "value": sorted(set(rows))}])]))
        for out in t.outputs:
            if out not in parsed.outputs:
                evidence.append(Evidence(
                    code="E_MISSING_OUTPUT", message=f"output {out!r} is not given", location="payload.outputs",
                    objects=[out],
                    relaxations=[Relaxation(description=f"add outputs.{out}",
                                            patch=[{"op": "add", "path": ["outputs", out], "value": []}])]))
        return Validation(None if evidence else parsed, evidence)

    def realize(self, task: str, action: Any, seed: int) -> Realization:
        from rac_fw.domains.logic import realize as realizer
        from rac_fw.domains.logic.tasks import get_task

        return realizer.realize(get_task(task), action.outputs, seed)

    def verify(self, task: str, action: Any, realization: Realization) -> Verification:
        from rac_fw.domains.logic import verify as verifier
        from rac_fw.domains.logic.tasks import get_task

        return verifier.verify(get_task(task), action.outputs, realization)
