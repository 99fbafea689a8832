"""``rac-fw serve mcp``: the contract runtime as Model Context Protocol tools.

Every registered domain is served through the same tools; their input schemas come from the pydantic
models (the per-domain ``submit_<domain>`` tools advertise the domain's action schema, and docstrings
become descriptions), so what an agent sees stays in step with the code.

Sessions: ``start_episode`` opens an episode and returns a session id; that session owns its episode,
its trace file and its artifact directory under the server's work directory, and nothing is shared
between sessions. The proposal budget is fixed by whoever starts the server, never by the client.
Every failure — malformed arguments, an unknown task, an invalid plan — comes back as a tool result
carrying evidence; the server keeps serving.
"""

from __future__ import annotations

import functools
import json
import secrets
import threading
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from pydantic import Field, ValidationError, WithJsonSchema

from rac_fw.contract import Action, Evidence, Feedback, Status, canonical_json, evidence_from_validation_error
from rac_fw.domain import UnknownDomain, UnknownTask, domain_names, load_domain, schema_for
from rac_fw.metering import measure, tokenizer_name
from rac_fw.runtime import DEFAULT_BUDGET, Episode
from rac_fw.schemas import inline_refs


@dataclass
class Session:
    """One client episode: its own runtime episode, trace file and artifact directory."""

    id: str
    domain: str
    task: str
    episode: Episode
    directory: Path
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class ServerConfig:
    """What the operator decides when starting the server (clients cannot change these)."""

    workdir: Path
    budget: int = DEFAULT_BUDGET
    allow_flash: bool = False
    bench: Path | None = None


class SessionStore:
    """Sessions by id; creation is the only shared mutation and is locked."""

    def __init__(self, config: ServerConfig):
        self.config = config
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def open(self, domain: str, task: str) -> Session:
        dom = load_domain(domain)
        if task not in dom.tasks():
            raise UnknownTask(domain, task, dom.tasks())
        with self._lock:
            sid = secrets.token_hex(8)
            directory = self.config.workdir / sid
            (directory / "artifacts").mkdir(parents=True)
            episode = Episode(dom, task, budget=self.config.budget, trace=directory / "trace.jsonl", meter=measure)
            session = Session(sid, domain, task, episode, directory)
            self._sessions[sid] = session
        return session

    def get(self, sid: str) -> Session:
        session = self._sessions.get(sid)
        if session is None:
            raise LookupError(f"unknown session {sid!r}: call start_episode first")
        return session


def _error(code: str, message: str, location: str | None = None, objects: list[str] | None = None) -> dict[str, Any]:
    evidence = Evidence(code=code, message=message, location=location, objects=objects or [])
    return {"status": Status.INVALID.value, "evidence": [evidence.model_dump(mode="json")]}


def guarded(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Turn any failure inside a tool into a result with evidence (the server keeps serving)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return fn(*args, **kwargs)
        except UnknownDomain as exc:
            return _error("E_UNKNOWN_DOMAIN", str(exc), "domain", [exc.name])
        except UnknownTask as exc:
            return _error("E_UNKNOWN_TASK", str(exc), "task", [exc.task])
        except LookupError as exc:
            return _error("E_UNKNOWN_OBJECT", str(exc.args[0] if exc.args else exc))
        except Exception as exc:  # the tool boundary: report, never crash the server
            return _error("E_INTERNAL", f"{type(exc).__name__}: {exc}")

    return wrapper


def _feedback_result(session: Session, feedback: Feedback) -> dict[str, Any]:
    body = feedback.model_dump(mode="json")
    body["session"] = session.id
    body["proposals_used"] = len(session.episode.turns)
    body["budget"] = session.episode.budget
    return body


class Tools:
    """The tool implementations, bound to one server's session store."""

    def __init__(self, store: SessionStore):
        self.store = store

    def list_domains(self) -> dict[str, Any]:
        """List the registered domains and how many tasks each offers."""
        return {"domains": {name: len(load_domain(name).tasks()) for name in domain_names()}}

    def list_tasks(self, domain: Annotated[str, Field(description="Domain name, e.g. logic, scheduling")]) -> dict:
        """List the tasks of a domain (for firmware: the target ids)."""
        return {"domain": domain, "tasks": load_domain(domain).tasks()}

    def list_targets(self) -> dict[str, Any]:
        """List the firmware targets (chip + board fact packs)."""
        return {"targets": load_domain("firmware").tasks()}

    def schema(
        self,
        name: Annotated[str, Field(description="A domain, or feedback, observation, action, plan-result")],
        op: Annotated[str | None, Field(description="One part of a domain's action (firmware: an operation "
                                        "kind, or resources)")] = None,
        index: Annotated[bool, Field(description="The domain's compact index instead of its schema")] = False,
    ) -> dict[str, Any]:
        """JSON Schema of a domain's action (its index, or one operation), or of a protocol message."""
        return schema_for(name, part=op, index=index)

    def observe(
        self,
        domain: str,
        task: str,
        detail: Annotated[str | None, Field(description="Depth on one object, e.g. 'pin PA9'")] = None,
    ) -> dict[str, Any]:
        """What an agent may know about a task; ``detail`` asks for depth on one named object."""
        return load_domain(domain).observe(task, detail).model_dump(mode="json")

    def start_episode(self, domain: str, task: str) -> dict[str, Any]:
        """Open an episode; returns the session id, the proposal budget and the first observation."""
        session = self.store.open(domain, task)
        observation = session.episode.observe()
        return {"session": session.id, "budget": session.episode.budget,
                "observation": observation.model_dump(mode="json")}

    def submit(
        self,
        session: Annotated[str, Field(description="Session id from start_episode")],
        payload: dict[str, Any],
    ) -> dict[str, Any]:
        """Submit one action (the payload of the session's domain) and get feedback."""
        s = self.store.get(session)
        with s.lock:
            action = Action(domain=s.domain, task=s.task, payload=payload)
            return _feedback_result(s, s.episode.submit(action))

    def session_info(self, session: str) -> dict[str, Any]:
        """Where a session keeps its trace and artifacts, and how much budget is left."""
        s = self.store.get(session)
        return {"session": s.id, "domain": s.domain, "task": s.task, "trace": str(s.directory / "trace.jsonl"),
                "artifacts": str(s.directory / "artifacts"), "proposals_used": len(s.episode.turns),
                "budget": s.episode.budget, "tokenizer": tokenizer_name()}


class FirmwareTools:
    """``plan`` / ``build`` / ``run`` / ``flash`` for firmware sessions, through the same pipeline as
    ``rac-fw plan`` (validate → lower → verify → [build] → [run]).

    ``plan`` is a proposal: it spends budget and is traced like ``submit``; when the verdict is clean
    the artifact is written to ``<session>/artifacts/turn-N``. ``build`` and ``run`` act on the newest
    written artifact and are logged to ``<session>/runs.jsonl``. ``flash`` writes to hardware only when
    the server was started with ``--allow-flash`` and the bench file names the board; otherwise it
    returns what it would do.
    """

    def __init__(self, store: SessionStore, tools: Tools):
        self.store, self.tools = store, tools
        self._latest: dict[str, tuple[dict[str, Any], Path, str | None]] = {}

    def _firmware(self, session: str) -> Session:
        s = self.store.get(session)
        if s.domain != "firmware":
            raise LookupError(f"session {session} is a {s.domain} session; firmware tools need a firmware one")
        return s

    def _log(self, s: Session, record: dict[str, Any]) -> None:
        with (s.directory / "runs.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(canonical_json(record) + "\n")

    def plan(self, session: str, plan: dict[str, Any], framework: str | None = None) -> dict[str, Any]:
        from rac_fw.domains.firmware.pipeline import run_plan

        s = self._firmware(session)
        payload = dict(plan)
        if framework is not None:
            payload["framework"] = framework
        result = self.tools.submit(session, payload)
        if result["status"] == Status.PASS.value:
            out = s.directory / "artifacts" / f"turn-{result['turn']}"
            written = run_plan(payload, target=s.task, framework=framework, out_dir=out)
            self._latest[s.id] = (payload, out, framework)
            result["artifact"] = written.artifact()
        return result

    def _rerun(self, session: str, build: str, run: str | None, timeout_s: float) -> dict[str, Any]:
        from rac_fw.domains.firmware.pipeline import run_plan

        s = self._firmware(session)
        if s.id not in self._latest:
            raise LookupError(f"session {session} has no clean plan yet: call plan first")
        payload, out, framework = self._latest[s.id]
        with s.lock:
            result = run_plan(payload, target=s.task, framework=framework, out_dir=out, build=build, run=run,
                              run_timeout_s=timeout_s, bench=self.store.config.bench)
        body = result.to_json()
        self._log(s, {"tool": "run" if run else "build", "status": body["status"], "build": body["build"],
                      "run": body["run"], "verdicts": body["verdicts"], "evidence": body["evidence"]})
        return body

    def build(self, session: str, builder: str = "auto") -> dict[str, Any]:
        return self._rerun(session, builder, None, 30.0)

    def run(self, session: str, runner: str = "qemu", builder: str = "auto", timeout_s: float = 20.0) -> dict:
        return self._rerun(session, builder, runner, min(max(timeout_s, 1.0), 120.0))

    def flash(self, session: str, board: str, builder: str = "auto") -> dict[str, Any]:
        from rac_fw.domains.firmware.backends.base import FlashRequest
        from rac_fw.hil.bench import load_bench
        from rac_fw.hil.board import BoardRunner, image_for

        s = self._firmware(session)
        if s.id not in self._latest:
            raise LookupError(f"session {session} has no clean plan yet: call plan first")
        _, out, _ = self._latest[s.id]
        config = self.store.config
        would: dict[str, Any] = {"board": board, "artifact": str(out), "target": s.task}
        if config.bench is None:
            return {"status": "dry-run", "would_flash": would,
                    "reason": "the server was started without --bench; no board can be flashed"}
        bench = load_bench(config.bench)
        entry = bench.board(board)
        would.update({"runner": entry.runner, "probe": entry.probe, "board_target": entry.target})
        if entry.target != s.task:
            return _error("E_TARGET_MISMATCH", f"board {board} carries a {entry.target}, the session's plans are "
                          f"for {s.task}; refusing to flash", "board", [board, entry.target, s.task])
        if not config.allow_flash:
            return {"status": "dry-run", "would_flash": would,
                    "reason": "flashing is disabled: start the server with --allow-flash to write to boards"}
        image, _, evidence = image_for(out, s.directory / "flash", builder, None, entry.target)
        if image is None:
            return {"status": Status.FAIL.value, "evidence": [e.model_dump(mode="json") for e in evidence]}
        flashed = BoardRunner(entry, bench.path.parent).flash(FlashRequest(image=image, target=s.task))
        body = {"status": "pass" if flashed.ok else "fail", "board": board, "bytes_written": flashed.bytes_written,
                "verified": flashed.verified, "evidence": [e.model_dump(mode="json") for e in flashed.evidence]}
        self._log(s, {"tool": "flash", **body})
        return body


class RacServer(MCPServer):
    """The SDK's server, except that arguments failing a tool's input schema come back as evidence
    (the field path and what was expected), like every other failure, instead of the SDK's raw text."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            evidence = evidence_from_validation_error(exc.__cause__, prefix="arguments", code="E_ARGUMENTS")
            body = {"status": Status.INVALID.value, "tool": name,
                    "evidence": [e.model_dump(mode="json") for e in evidence]}
            return CallToolResult(content=[TextContent(type="text", text=json.dumps(body))],
                                  structured_content=body, is_error=True)


def build_server(config: ServerConfig) -> Any:
    """Create the MCP server with every tool registered."""
    config.workdir.mkdir(parents=True, exist_ok=True)
    store = SessionStore(config)
    tools = Tools(store)
    server = RacServer(
        "rac-fw",
        log_level="WARNING",
        instructions="Observe a task, start_episode, then submit actions until the verdict is clean; "
        "every failure carries evidence with admissible relaxations.",
    )
    for method in (tools.list_domains, tools.list_tasks, tools.list_targets, tools.schema, tools.observe,
                   tools.start_episode, tools.submit, tools.session_info):
        server.add_tool(guarded(method), name=method.__name__)
    for name in domain_names():
        _add_domain_submit(server, tools, name)
    if "firmware" in domain_names():
        _add_firmware_tools(server, FirmwareTools(store, tools))
    return server


def _add_firmware_tools(server: Any, fw: FirmwareTools) -> None:
    """Firmware tools; ``plan`` advertises the Plan model's schema (generated, like submit_<domain>)."""
    PlanType = Annotated[dict[str, Any], WithJsonSchema(inline_refs(load_domain("firmware").tool_schema()))]
    Framework = Annotated[str | None, Field(description="zephyr, espidf, hal or baremetal (default: target's)")]
    Session_ = Annotated[str, Field(description="A firmware session from start_episode(firmware, TARGET)")]
    Builder = Annotated[str, Field(description="auto, gcc, west, platformio or idf")]

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
        plan: "Validate, lower and verify a firmware plan (one proposal of the session's budget); on a clean "
              "verdict the artifact is written. The plan is submit_firmware's payload (its description has the "
              "operation index; schema(name='firmware', op=KIND) gives an operation's fields).",
        build: "Build the session's newest clean artifact with a builder (missing tools come back as evidence).",
        run: "Build and run the newest artifact in QEMU or on a bench board; console expectations become verdicts.",
        flash: "Flash the newest artifact to a bench board (only with --allow-flash and a bench naming the board; "
               "otherwise returns what it would do).",
    }
    for fn, description in docs.items():
        # Real objects, not strings: the SDK evaluates these to build the input schema.
        fn.__annotations__ = typing.get_type_hints(fn, localns=locals(), include_extras=True)
        server.add_tool(guarded(fn), name=fn.__name__, description=description)


def _add_domain_submit(server: Any, tools: Tools, domain: str) -> None:
    """A ``submit_<domain>`` tool whose payload schema is the domain's pydantic action model."""
    try:
        dom = load_domain(domain)
    except Exception:  # a broken plugin must not take the server down; list_domains still shows it
        return
    model_schema = inline_refs(dom.tool_schema())
    PayloadType = Annotated[dict[str, Any], WithJsonSchema(model_schema)]

    def submit_domain(session: str, payload: PayloadType) -> dict[str, Any]:
        owner = tools.store.get(session).domain
        if owner != domain:
            return _error("E_SESSION_DOMAIN", f"session {session} belongs to domain {owner!r}, not {domain!r}",
                          "session", [session])
        return tools.submit(session, payload)

    # Real objects, not strings: the SDK evaluates these to build the tool's input schema.
    submit_domain.__annotations__ = {"session": str, "payload": PayloadType, "return": dict[str, Any]}
    description = (f"Submit one {domain} action for a session opened with start_episode. "
                   + (dom.action_model.__doc__ or "").strip())
    index = dom.schema_index()
    if index != dom.action_schema():
        # The payload schema above is an envelope; the index says what goes inside, schema(op=…) the rest.
        description += (f" Index of the action's parts (schema(name={domain!r}, op=PART) gives one part's "
                        "fields): " + json.dumps(index, separators=(",", ":"), ensure_ascii=False))
    server.add_tool(guarded(submit_domain), name=f"submit_{domain}", description=description)
