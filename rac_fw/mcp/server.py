"""``rac-fw serve mcp``: the contract runtime as Model Context Protocol tools.

Every registered domain is served through the same tools; their input schemas come from the pydantic
models (the per-domain ``submit_<domain>`` tools advertise the domain's action schema, and docstrings
become descriptions), so what an agent sees stays in step with the code.

Sessions (:mod:`rac_fw.mcp.sessions`): ``start_episode`` opens an episode and returns a session id; that
session owns its episode, its trace file and its artifact directory under the server's work directory,
and nothing is shared between sessions. A session belongs to the caller that created it — the MCP
connection (``mcp-session-id`` over HTTP) *and* the credential (the bearer token's name) — so neither a
leaked session id nor a replayed ``mcp-session-id`` drives it; each credential has its own bounds (open
episodes, proposals per task), idle sessions are closed, and tasks come from the catalogue (or the
operator's task directory). The proposal budget, the limits and the trace key are fixed by whoever
starts the server, never by the client.

Every failure — malformed or oversized arguments, an unknown or foreign session, an invalid plan, a
request past the time ceiling — comes back as a tool result carrying evidence; the server keeps
serving the other sessions.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from mcp_types import Tool as MCPTool
from pydantic import Field, ValidationError, WithJsonSchema

from rac_fw.contract import Action, Evidence, Feedback, Status, evidence_from_validation_error
from rac_fw.domain import (
    Domain,
    DomainUnavailable,
    Tool,
    UnknownDomain,
    UnknownTask,
    domain_names,
    domain_status,
    load_domain,
    schema_for,
)
from rac_fw.limits import LimitExceeded, check_size, current_limits
from rac_fw.mcp import worker
from rac_fw.mcp.sessions import CALLER, Caller, ForeignSession, ServerConfig, Session, SessionStore
from rac_fw.metering import tokenizer_name
from rac_fw.runtime import TurnExecutor
from rac_fw.schemas import inline_refs, without_titles


def error_result(code: str, message: str, location: str | None = None,
                 objects: list[str] | None = None) -> dict[str, Any]:
    """A tool result that carries one piece of evidence (status ``invalid``)."""
    evidence = Evidence(code=code, message=message, location=location, objects=objects or [])
    return {"status": Status.INVALID.value, "evidence": [evidence.model_dump(mode="json")]}


def guarded(fn: Callable[..., dict[str, Any]]) -> Callable[..., Any]:
    """Turn any failure inside a tool into a result with evidence (the server keeps serving), and bound
    its wall time: the tool runs on a worker thread that is abandoned past ``request_seconds``, so the
    caller gets E_TIMEOUT while the other sessions are served (the SDK's own worker threads cannot be
    abandoned, which is why the tools reach it as coroutines)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return fn(*args, **kwargs)
        except UnknownDomain as exc:
            return error_result("E_UNKNOWN_DOMAIN", str(exc), "domain", [exc.name])
        except DomainUnavailable as exc:
            return error_result("E_NOT_INSTALLED", str(exc), "domain", [exc.name, exc.install])
        except UnknownTask as exc:
            return error_result("E_UNKNOWN_TASK", str(exc), "task", [exc.task])
        except ForeignSession as exc:
            return error_result("E_SESSION_OWNER", str(exc), "session", [exc.sid])
        except LimitExceeded as exc:
            return {"status": Status.INVALID.value, "evidence": [exc.evidence().model_dump(mode="json")]}
        except MemoryError:
            limit = current_limits().request_memory_bytes
            return error_result("E_TOO_LARGE", f"the request ran out of memory in the server (turns run in "
                                f"workers capped at request_memory_bytes={limit}); nothing was kept", None,
                                ["request_memory_bytes"])
        except Exception as exc:  # the tool boundary: report, never crash the server
            evidence = getattr(exc, "evidence", None)  # PlanError, BenchError, TraceError … carry their own
            if isinstance(evidence, list) and evidence and all(isinstance(e, Evidence) for e in evidence):
                return {"status": Status.INVALID.value, "evidence": [e.model_dump(mode="json") for e in evidence]}
            if isinstance(exc, LookupError):
                return error_result("E_UNKNOWN_OBJECT", str(exc.args[0] if exc.args else exc))
            return error_result("E_INTERNAL", f"{type(exc).__name__}: {exc}")

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
        import anyio

        seconds = current_limits().request_seconds
        try:
            with anyio.fail_after(seconds):
                return await anyio.to_thread.run_sync(functools.partial(run, *args, **kwargs), abandon_on_cancel=True)
        except TimeoutError:
            return error_result("E_TIMEOUT", f"the call ran past the server's ceiling of {seconds:g} s "
                                "(request_seconds) and was abandoned (a turn it ran is stopped in its worker: nothing "
                                "spent or traced); other sessions are unaffected", f"tool {fn.__name__}",
                                ["request_seconds"])

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
        """List the registered domains and how many tasks each offers (and any not installed here, with the
        command that installs it)."""
        statuses = [domain_status(name) for name in domain_names()]
        return {"domains": {s.name: len(load_domain(s.name).tasks()) for s in statuses if s.available},
                "not_installed": {s.name: s.install or s.error for s in statuses if not s.available}}

    def list_tasks(self, domain: Annotated[str, Field(description="Domain name, e.g. logic, scheduling")]) -> dict:
        """List the tasks of a domain (for firmware: the target ids)."""
        return {"domain": domain, "tasks": load_domain(domain).tasks()}

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
        return load_domain(domain).observe(self.store.task(domain, task), detail).model_dump(mode="json")

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
        return self.propose(session, payload)

    def propose(self, session: str, payload: dict[str, Any], execute: TurnExecutor | None = None) -> dict[str, Any]:
        """One proposal in a session (what ``submit`` does); ``execute`` runs the turn when a domain's tool
        needs more from the same worker (firmware ``plan`` also writes the artifact there)."""
        s = self.store.get(session)
        with s.lock:
            action = Action(domain=s.domain, task=s.task, payload=payload)
            self.store.reserve(s)  # the client's proposals on this task, over all its episodes
            spent = len(s.episode.turns)
            try:
                feedback = s.episode.submit(action, execute)
            finally:
                if len(s.episode.turns) == spent:  # refused, closed or budget: nothing was spent
                    self.store.release(s)
            return _feedback_result(s, feedback)

    def submit_tool(self, dom: Domain) -> Tool:
        """The ``submit_<domain>`` tool: its payload schema is the domain's (``Domain.tool_schema``), its
        description the action model's docstring plus, for a large action language, the index of its parts."""
        domain = dom.name
        payload_schema = inline_refs(dom.tool_schema())
        payload_schema.pop("description", None)  # the tool's description carries the docstring
        PayloadType = Annotated[dict[str, Any], WithJsonSchema(payload_schema)]

        def submit_domain(session: str, payload: PayloadType) -> dict[str, Any]:
            owner = self.store.get(session).domain
            if owner != domain:
                return error_result("E_SESSION_DOMAIN", f"session {session} belongs to domain {owner!r}, not "
                                    f"{domain!r}", "session", [session])
            return self.submit(session, payload)

        # Real objects, not strings: the SDK evaluates these to build the tool's input schema.
        submit_domain.__annotations__ = {"session": str, "payload": PayloadType, "return": dict[str, Any]}
        submit_domain.__name__ = f"submit_{domain}"
        description = (f"Submit one {domain} action for a session opened with start_episode. "
                       + inspect.cleandoc(dom.action_model.__doc__ or ""))
        index = dom.schema_index()
        if index != dom.action_schema():
            # The payload schema is an envelope; the index says what goes inside, schema(op=…) the rest.
            description += (f" Index of the action's parts (schema(name={domain!r}, op=PART) gives one part's "
                            "fields): " + json.dumps(index, separators=(",", ":"), ensure_ascii=False))
        return Tool(f"submit_{domain}", submit_domain, description)

    def session_info(self, session: str) -> dict[str, Any]:
        """Where a session keeps its trace and artifacts, and how much budget is left."""
        s = self.store.get(session)
        return {"session": s.id, "domain": s.domain, "task": s.task, "trace": str(s.directory / "trace.jsonl"),
                "artifacts": str(s.directory / "artifacts"), "proposals_used": len(s.episode.turns),
                "budget": s.episode.budget, "tokenizer": tokenizer_name()}


class RacServer(MCPServer):
    """The SDK's server, except that arguments failing a tool's input schema come back as evidence
    (the field path and what was expected), like every other failure, instead of the SDK's raw text."""

    async def list_tools(self) -> list[MCPTool]:
        """The SDK's tool list, as compact as it can be without losing meaning (every agent pays for it
        in tokens on every call): no generated titles, and no output schema that only says "an object"
        (each tool answers a JSON object; its fields are the contract's messages, ``schema`` serves them)."""
        listed = await super().list_tools()
        return [tool.model_copy(update={
            "input_schema": without_titles(tool.input_schema),
            "output_schema": None if _says_nothing(tool.output_schema) else tool.output_schema,
        }) for tool in listed]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            check_size(arguments, "arguments", "payload_bytes")
        except LimitExceeded as exc:
            return _refusal(name, [exc.evidence()])
        CALLER.set(_caller_of(context))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            evidence = evidence_from_validation_error(exc.__cause__, prefix="arguments", code="E_ARGUMENTS")
            return _refusal(name, evidence)


def _says_nothing(schema: dict[str, Any] | None) -> bool:
    """Whether an output schema is the SDK's default for a ``dict`` result: any object at all."""
    if schema is None:
        return True
    return set(schema) <= {"type", "title", "additionalProperties"} and schema.get("type") == "object"


def _refusal(tool: str, evidence: list[Evidence]) -> CallToolResult:
    body = {"status": Status.INVALID.value, "tool": tool, "evidence": [e.model_dump(mode="json") for e in evidence]}
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(body))], structured_content=body,
                          is_error=True)


def _caller_of(context: Context[Any, Any] | None) -> Caller:
    """Who a call came from: over HTTP the credential ``mcp/http.py`` vouched for (``x-rac-fw-client``, set
    after the bearer token was checked, never taken from the client) and the transport session
    (``mcp-session-id``); on stdio the one parent process."""
    if context is None:
        return Caller()
    try:
        headers = context.headers
    except (ValueError, AttributeError, LookupError):  # outside a request (direct calls in-process)
        return Caller()
    if not headers:
        return Caller()
    return Caller(headers.get("x-rac-fw-client") or "anonymous", headers.get("mcp-session-id"))


def build_server(config: ServerConfig) -> Any:
    """Create the MCP server with every tool registered."""
    config.workdir.mkdir(parents=True, exist_ok=True)
    worker.start()
    store = SessionStore(config)
    tools = Tools(store)
    server = RacServer(
        "rac-fw",
        log_level="WARNING",
        instructions="Observe a task, start_episode, then submit actions until the verdict is clean; "
        "every failure carries evidence with admissible relaxations.",
    )
    for method in (tools.list_domains, tools.list_tasks, tools.schema, tools.observe,
                   tools.start_episode, tools.submit, tools.session_info):
        server.add_tool(guarded(method), name=method.__name__)
    _add_domain_tools(server, tools)
    return server


def _add_domain_tools(server: Any, tools: Tools) -> None:
    """Each registered domain's tools (``Domain.tools``: its ``submit_<domain>`` and any of its own),
    once each, behind the same boundary as the generic tools."""
    added: set[str] = set()
    for name in domain_names():
        try:
            contributed = load_domain(name).tools(tools)
        except Exception:  # a broken plugin must not take the server down; list_domains still shows it
            continue
        for tool in contributed:
            if tool.name in added:
                continue
            added.add(tool.name)
            server.add_tool(guarded(tool.fn), name=tool.name, description=tool.description)
