"""The firmware domain's MCP tools: ``list_targets``, ``plan``, ``build``, ``run`` and ``flash``.

Contributed through :meth:`FirmwareDomain.tools`; the server adds them beside the generic tools and
behind the same boundary (every failure is evidence, the time and memory ceilings apply). All of them
run the one orchestration (:mod:`.pipeline`), each stage at most once per call:

- ``plan`` is a proposal: the session's turn (``parse → resolve → check`` in validate, ``lower`` in
  realize, ``verify`` in verify) spends budget and is traced like ``submit``; on a clean verdict the
  ``write`` stage writes the source tree that turn lowered to ``<session>/artifacts/turn-N``. The
  answer's ``stages`` lists every stage that ran, with its wall time;
- ``build`` and ``run`` run the ``build`` (and ``run``) stage on the newest written artifact and are
  logged to ``<session>/runs.jsonl``;
- ``flash`` writes to hardware only when the server was started with ``--allow-flash`` and the bench
  file names the board; otherwise it returns what it would do, naming only bench boards. ``run`` with
  ``board:ID`` passes the same gate (``hil.consent``): without consent nothing is opened or flashed.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, WithJsonSchema

from rac_fw.contract import Action, Evidence, Status, canonical_json
from rac_fw.domain import Domain, Tool, load_domain
from rac_fw.domains.firmware import pipeline
from rac_fw.domains.firmware.hil.bench import BenchError
from rac_fw.domains.firmware.hil.consent import BOARD_ID, Consent
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.mcp import worker
from rac_fw.mcp.server import Session, Tools, error_result
from rac_fw.runtime import TurnRecord, run_turn

if TYPE_CHECKING:
    from rac_fw.domains.firmware.domain import FirmwareDomain


@dataclass(frozen=True)
class Written:
    """A session's newest clean artifact: the checked plan and where the write stage put it."""

    plan: Plan
    out: Path


@dataclass
class PlanTurn:
    """What one ``plan`` call did in its worker: the turn, the written artifact, every stage that ran."""

    record: TurnRecord
    stages: list[pipeline.StageRecord]
    written: Written | None = None
    artifact: dict[str, Any] | None = None
    evidence: list[Evidence] = field(default_factory=list)


def plan_turn(domain_name: str, task: str, action: Action, seed: int, turn: int, artifacts: Path) -> PlanTurn:
    """The session's turn and, when it passed, the ``write`` stage on the tree that turn lowered: both in
    the same (bounded) worker, so the plan is lowered and verified once."""
    domain = typing.cast("FirmwareDomain", load_domain(domain_name))
    with pipeline.stage_log() as log:
        record = run_turn(domain, task, action, seed, turn)
        done = PlanTurn(record, log)
        kept = domain.realized(record.feedback.artifact_hash or "")
        if record.feedback.status is Status.PASS and kept is not None:
            out = artifacts / f"turn-{turn}"
            try:
                pipeline.write(kept.lowered, out)
            except pipeline.StageError as exc:
                done.evidence = exc.evidence
            else:
                done.written = Written(kept.plan, out)
                done.artifact = pipeline.artifact_summary(kept.lowered, out)
    return done


class FirmwareTools:
    """The tool implementations for firmware sessions of one server (``host``: its sessions and settings)."""

    def __init__(self, host: Tools, domain: FirmwareDomain):
        self.host, self.domain = host, domain
        self._latest: dict[str, Written] = {}
        host.store.on_evict.append(self._forget)

    def _forget(self, sid: str) -> None:
        """An idle session was closed: its newest artifact is no longer offered to build, run or flash."""
        self._latest.pop(sid, None)

    def _firmware(self, session: str) -> Session:
        s = self.host.store.get(session)
        if s.domain != "firmware":
            raise LookupError(f"session {session} is a {s.domain} session; firmware tools need a firmware one")
        return s

    def _log(self, s: Session, record: dict[str, Any]) -> None:
        with (s.directory / "runs.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(canonical_json(record) + "\n")

    def list_targets(self) -> dict[str, Any]:
        return {"targets": self.domain.tasks()}

    def plan(self, session: str, plan: dict[str, Any], framework: str | None = None) -> dict[str, Any]:
        s = self._firmware(session)
        payload = dict(plan)
        if framework is not None:
            payload["framework"] = framework
        done: list[PlanTurn] = []

        def execute(domain: Domain, task: str, action: Action, seed: int, turn: int) -> TurnRecord:
            done.append(worker.call(plan_turn, domain.name, task, action, seed, turn, s.directory / "artifacts",
                                    where=f"plan turn {turn} of firmware/{task}"))
            return done[-1].record

        result = self.host.propose(session, payload, execute)
        if done:
            ran = done[-1]
            if ran.written is not None:
                self._latest[s.id] = ran.written
                result["artifact"] = ran.artifact
            result["evidence"] = [*result.get("evidence", []), *(e.model_dump(mode="json") for e in ran.evidence)]
            result["stages"] = [{"stage": r.stage, "ms": round(r.ms, 3)} for r in ran.stages]
        return result

    def _rerun(self, session: str, builder: str, runner: str | None, timeout_s: float) -> dict[str, Any]:
        from rac_fw.domains.firmware.facts.load import load_target
        from rac_fw.domains.firmware.hil.board import runner_for

        s = self._firmware(session)
        if s.id not in self._latest:
            raise LookupError(f"session {session} has no clean plan yet: call plan first")
        written = self._latest[s.id]
        facts = load_target(s.task)
        result = pipeline.PlanResult(status=Status.PASS, source="<plan>", target=s.task,
                                     framework=written.plan.framework, out_dir=written.out)
        with s.lock, pipeline.stage_log() as log:
            pipeline.build_and_run(result, facts, written.plan, builder, runner, timeout_s,
                                   functools.partial(runner_for, consent=self._consent()))
        body = result.to_json()
        self._log(s, {"tool": "run" if runner else "build", "status": body["status"], "build": body["build"],
                      "run": body["run"], "verdicts": body["verdicts"], "evidence": body["evidence"]})
        body["stages"] = [{"stage": r.stage, "ms": round(r.ms, 3)} for r in log]
        return body

    def _consent(self) -> Consent:
        """The operator's decision, fixed when the server started (``--allow-flash``, ``--bench``)."""
        config = self.host.store.config
        return Consent(config.allow_flash, config.bench, where="the server's operator")

    def build(self, session: str, builder: str = "auto") -> dict[str, Any]:
        return self._rerun(session, builder, None, 30.0)

    def run(self, session: str, runner: str = "qemu", builder: str = "auto", timeout_s: float = 20.0) -> dict:
        return self._rerun(session, builder, runner, min(max(timeout_s, 1.0), 120.0))

    def flash(self, session: str, board: str, builder: str = "auto") -> dict[str, Any]:
        from rac_fw.domains.firmware.backends.base import FlashRequest
        from rac_fw.domains.firmware.hil.bench import load_bench
        from rac_fw.domains.firmware.hil.board import board_runner, image_for

        s = self._firmware(session)
        if s.id not in self._latest:
            raise LookupError(f"session {session} has no clean plan yet: call plan first")
        out = self._latest[s.id].out
        consent = self._consent()
        if not BOARD_ID.fullmatch(board):
            return error_result("E_UNKNOWN_BOARD", "not a bench board id (letters, digits, '_', '.', '-'; at most "
                                "64)", "board")
        if consent.bench is None:
            return {"status": "dry-run", "would_flash": None,
                    "reason": "the server was started without --bench; no board can be flashed"}
        entry = load_bench(consent.bench).board(board)  # an unknown board is E_UNKNOWN_BOARD, never echoed
        would: dict[str, Any] = {"board": entry.id, "artifact": str(out), "target": s.task, "runner": entry.runner,
                                 "probe": entry.probe, "board_target": entry.target}
        if entry.target != s.task:
            return error_result("E_TARGET_MISMATCH", f"board {board} carries a {entry.target}, the session's plans "
                                f"are for {s.task}; refusing to flash", "board", [board, entry.target, s.task])
        try:
            runner = board_runner(board, consent)
        except BenchError as exc:  # the gate: no consent, so only what would happen is told
            return {"status": "dry-run", "would_flash": would, "reason": exc.evidence[0].message,
                    "evidence": [e.model_dump(mode="json") for e in exc.evidence]}
        image, _, evidence = image_for(out, s.directory / "flash", builder, None, entry.target)
        if image is None:
            return {"status": Status.FAIL.value, "evidence": [e.model_dump(mode="json") for e in evidence]}
        flashed = runner.flash(FlashRequest(image=image, target=s.task))
        body = {"status": "pass" if flashed.ok else "fail", "board": board, "bytes_written": flashed.bytes_written,
                "verified": flashed.verified, "evidence": [e.model_dump(mode="json") for e in flashed.evidence]}
        self._log(s, {"tool": "flash", **body})
        return body


def tools(host: Tools, domain: FirmwareDomain) -> list[Tool]:
    """The firmware tools of one server; ``plan`` takes the payload ``submit_firmware`` advertises (its
    envelope schema and the operation index are listed there once; one operation's fields come from
    ``schema``)."""
    fw = FirmwareTools(host, domain)
    # The plan is submit_firmware's payload: its schema and index are listed once, in that tool.
    PlanType = Annotated[dict[str, Any], WithJsonSchema({"type": "object", "description": "a firmware plan: "
                                                         "the payload schema of submit_firmware"})]
    Framework = Annotated[str | None, Field(description="zephyr, espidf, hal or baremetal (default: target's)")]
    Session_ = Annotated[str, Field(description="A firmware session from start_episode(firmware, TARGET)")]
    Builder = Annotated[str, Field(description="auto, gcc, west, platformio or idf")]

    def list_targets() -> dict[str, Any]:
        return fw.list_targets()

    def plan(session: Session_, plan: PlanType, framework: Framework = None) -> dict[str, Any]:
        return fw.plan(session, plan, framework)

    def build(session: Session_, builder: Builder = "auto") -> dict[str, Any]:
        return fw.build(session, builder)

    def run(session: Session_, runner: Annotated[str, Field(description="qemu or board:ID")] = "qemu",
            builder: Builder = "auto", timeout_s: float = 20.0) -> dict[str, Any]:
        return fw.run(session, runner, builder, timeout_s)

    def flash(session: Session_, board: Annotated[str, Field(description="Board id from the bench file")],
              builder: Builder = "auto") -> dict[str, Any]:
        return fw.flash(session, board, builder)

    docs: dict[Callable[..., dict[str, Any]], str] = {
        list_targets: "List the firmware targets (chip + board fact packs).",
        plan: "Validate, lower and verify a firmware plan (one proposal of the session's budget); on a clean "
              "verdict the artifact is written. The plan is submit_firmware's payload (its description has the "
              "operation index; schema(name='firmware', op=KIND) gives an operation's fields). `stages` lists "
              "the orchestration stages that ran.",
        build: "Build the session's newest clean artifact with a builder (missing tools come back as evidence).",
        run: "Build and run the newest artifact in QEMU or on a bench board; console expectations become verdicts.",
        flash: "Flash the newest artifact to a bench board (only with --allow-flash and a bench naming the board; "
               "otherwise returns what it would do).",
    }
    contributed = [host.submit_tool(domain)]
    for fn, description in docs.items():
        # Real objects, not strings: the SDK evaluates these to build the input schema.
        fn.__annotations__ = typing.get_type_hints(fn, localns=locals(), include_extras=True)
        contributed.append(Tool(fn.__name__, fn, description))
    return contributed
