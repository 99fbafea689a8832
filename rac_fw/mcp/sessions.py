"""The MCP server's sessions and what bounds them: who may use a session, how many a client may hold open,
how many proposals a client may make on one task, when an idle session is closed, which tasks exist.

**Who.** A call comes from a :class:`Caller`: its *credential* (the bearer token's name over HTTP, set by
``mcp/http.py`` after checking the token — ``anonymous`` on loopback without tokens; ``stdio`` for the one
parent of a stdio server) and its *connection* (HTTP's ``mcp-session-id``). A session belongs to the
caller that opened it, both parts: another connection, or the same ``mcp-session-id`` replayed with
another credential, is refused (``E_SESSION_OWNER``).

**How much** (the operator's limits, :mod:`rac_fw.limits`): per credential, at most ``open_episodes``
unfinished episodes at once, and at most ``task_proposals`` proposals on one (domain, task) over all its
episodes — reopening an episode does not reset the budget. A session unused for ``session_idle_seconds``
is closed (its trace and artifacts stay on disk). These refusals are not proposals: nothing is spent.

**Which tasks.** A task is an id from the domain's catalogue. A domain that also reads task files
(scheduling: JSPLIB/Taillard instances) gets one only from the operator's ``--task-dir``: a relative path
that resolves inside it (symlinks followed, then checked), a regular file of at most ``task_file_bytes``.
No other file of the server's machine is read.
"""

from __future__ import annotations

import contextvars
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rac_fw.domain import UnknownTask, load_domain
from rac_fw.limits import check_count, current_limits
from rac_fw.mcp.worker import run_turn_bounded
from rac_fw.metering import measure
from rac_fw.runtime import DEFAULT_BUDGET, Episode


@dataclass(frozen=True)
class Caller:
    """Who made a tool call: the credential it authenticated with and the MCP connection it came on."""

    credential: str = "stdio"
    connection: str | None = None


#: The caller of the current tool call (None: stdio, or a direct in-process call).
CALLER: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("rac_fw_mcp_caller", default=None)


def current_caller() -> Caller:
    """Who the current tool call came from (the stdio parent when no transport said otherwise)."""
    return CALLER.get() or Caller()


class ForeignSession(PermissionError):
    """A tool call named a session that another caller (connection or credential) opened."""

    def __init__(self, sid: str):
        self.sid = sid
        super().__init__(f"session {sid} belongs to another MCP connection; a session can only be used by the "
                         "connection (and credential) that started it (start your own with start_episode)")


@dataclass
class ServerConfig:
    """What the operator decides when starting the server (clients cannot change these)."""

    workdir: Path
    budget: int = DEFAULT_BUDGET
    allow_flash: bool = False
    bench: Path | None = None
    trace_key: bytes | None = None
    task_dir: Path | None = None
    """Where task files (scheduling instances) may be read from; None: catalogue ids only."""


@dataclass
class Session:
    """One client episode: its own runtime episode, trace file and artifact directory."""

    id: str
    domain: str
    task: str
    episode: Episode
    directory: Path
    owner: Caller = field(default_factory=Caller)
    lock: threading.Lock = field(default_factory=threading.Lock)
    used: float = field(default_factory=time.monotonic)


class SessionStore:
    """Sessions by id, with the per-credential bounds; every shared mutation is under one lock."""

    def __init__(self, config: ServerConfig):
        self.config = config
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        #: (credential, domain, task) → proposals spent or under way, over every episode of that task
        self._proposals: dict[tuple[str, str, str], int] = {}
        #: called with a session id when the session is closed for idleness (tools drop what they keep)
        self.on_evict: list[Callable[[str], None]] = []

    def task(self, domain: str, task: str) -> str:
        """The task as the domain reads it: a catalogue id as is, a task file as its resolved path inside the
        operator's ``--task-dir``; anything else is ``UnknownTask`` (nothing is read)."""
        check_count("task_chars", len(task), "task", "the task id's length")
        known = load_domain(domain).tasks()
        if task in known:
            return task
        root = self.config.task_dir
        hint = [f"<a file under the server's task directory {root}>" if root else
                "(task files: only from the operator's --task-dir, none is set)", *known]  # fmt: skip
        if root is None:
            raise UnknownTask(domain, task, hint)
        base = root.resolve()
        path = (base / task).resolve()
        if not path.is_relative_to(base) or not path.is_file():
            raise UnknownTask(domain, task, hint)
        check_count("task_file_bytes", path.stat().st_size, "task", "the task file's size in bytes")
        return str(path)

    def open(self, domain: str, task: str) -> Session:
        """A new session owned by the current caller, within its ``open_episodes``."""
        resolved = self.task(domain, task)
        dom = load_domain(domain)
        caller = current_caller()
        with self._lock:
            self._evict_idle()
            unfinished = sum(1 for s in self._sessions.values()
                             if s.owner.credential == caller.credential and not s.episode.done)  # fmt: skip
            check_count("open_episodes", unfinished + 1, "start_episode",
                        "the episodes this client has open (unfinished)")
            sid = secrets.token_hex(16)
            directory = self.config.workdir / sid
            (directory / "artifacts").mkdir(parents=True)
            episode = Episode(dom, resolved, budget=self.config.budget, trace=directory / "trace.jsonl", meter=measure,
                              execute=run_turn_bounded, key=self.config.trace_key)
            session = Session(sid, domain, resolved, episode, directory, owner=caller)
            self._sessions[sid] = session
        return session

    def get(self, sid: str) -> Session:
        """The session, when the current caller owns it (``ForeignSession`` otherwise)."""
        with self._lock:
            self._evict_idle()
            session = self._sessions.get(sid)
            if session is None:
                shown = sid if len(sid) <= 64 else sid[:64] + "…"
                raise LookupError(f"unknown session {shown!r}: call start_episode first (a session unused for "
                                  f"{current_limits().session_idle_seconds:g} s is closed)")
            if session.owner != current_caller():
                raise ForeignSession(sid)
            session.used = time.monotonic()
        return session

    def reserve(self, session: Session) -> None:
        """Count one proposal of the session's owner on its task before it runs (``LimitExceeded`` past
        ``task_proposals``); :meth:`release` gives it back when the turn spent nothing."""
        key = (session.owner.credential, session.domain, session.task)
        with self._lock:
            used = self._proposals.get(key, 0)
            check_count("task_proposals", used + 1, "session",
                        f"this client's proposals on {session.domain}/{session.task}, over all its episodes")
            self._proposals[key] = used + 1

    def release(self, session: Session) -> None:
        key = (session.owner.credential, session.domain, session.task)
        with self._lock:
            self._proposals[key] = max(0, self._proposals.get(key, 1) - 1)

    def _evict_idle(self) -> None:
        """Close sessions unused for ``session_idle_seconds`` (called under the lock)."""
        horizon = time.monotonic() - current_limits().session_idle_seconds
        for sid in [sid for sid, s in self._sessions.items() if s.used < horizon and not s.lock.locked()]:
            del self._sessions[sid]
            for forget in self.on_evict:
                forget(sid)

