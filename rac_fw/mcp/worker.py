"""Per-request memory ceiling: each turn the MCP server runs executes in its own worker process, which
may own at most ``request_memory_bytes`` of memory beyond what it shares with the process it was
forked from (private pages, measured every few milliseconds; ``RLIMIT_AS`` is the backstop).

Why a process: CPython meters memory per process only (``tracemalloc``, ``RLIMIT_*``, RSS), while the
server serves every session on threads of one process, so a ceiling inside it would charge one
request for another's allocations, or take the whole server down with it. A worker is forked from a
fork server (a fresh interpreter started once, before any request) that has every registered domain
imported and warmed (``Domain.warm``), so a turn pays a fork, not an import.

Past the ceiling the worker reports the measured growth and ends at once (or, between two polls, a
native allocation past the backstop fails, or the worker dies): the turn is refused with
``E_TOO_LARGE`` naming the limit and the measured growth; nothing is spent or
traced and the server and every other session are untouched. A worker still running past
``request_seconds`` is killed (``E_TIMEOUT``, likewise unspent). The result travels back pickled;
an exception the turn raised (evidence-carrying ones included) is raised again in the server.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import resource
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from rac_fw.contract import Action
from rac_fw.domain import Domain, load_domain
from rac_fw.limits import CeilingExceeded, Limits, current_limits, set_limits
from rac_fw.runtime import TurnRecord, run_turn

T = TypeVar("T")

#: Seconds a worker may outlive ``request_seconds`` (the tool boundary answers E_TIMEOUT first).
GRACE_S = 1.0
#: How often a worker compares its private memory with the ceiling.
POLL_S = 0.005
#: Address space a worker may reserve beyond the ceiling before native allocations fail outright.
BACKSTOP_BYTES = 1 << 30

_lock = threading.Lock()
_context: Any = None


def _forkserver() -> Any:
    global _context
    with _lock:
        if _context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["rac_fw.mcp.warm"])
            _context = context
        return _context


def start() -> None:
    """Start the fork server now (the server does before serving, so the first turn is not the one
    that waits for the domains to load)."""
    from multiprocessing import forkserver

    _forkserver()
    forkserver.ensure_running()


def _private_bytes() -> int:
    """Memory this process owns alone (private clean + dirty pages, ``/proc/self/smaps_rollup``): a
    forked worker starts sharing every page with the fork server, so this grows by exactly what the
    request allocates or writes (copy-on-write), whether it maps new memory or reuses free heap."""
    total = 0
    with open("/proc/self/smaps_rollup", encoding="ascii") as rollup:
        for line in rollup:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                total += int(line.split()[1]) * 1024
    return total


def _vm_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


def _watch(conn: Connection, start: int, ceiling: int, done: threading.Event) -> None:
    """Every :data:`POLL_S`, compare the worker's private memory with the ceiling; past it, report the
    measured growth and end the worker at once (the turn is refused, nothing of it is kept)."""
    while not done.wait(POLL_S):
        grown = _private_bytes() - start
        if grown > ceiling:
            with _send_lock:
                if done.is_set():
                    return
                conn.send(("memory", grown))
                conn.close()
            os._exit(0)


_send_lock = threading.Lock()


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a plain one carrying its evidence and message."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        carried = WorkerError(f"{type(exc).__name__}: {exc}")
        evidence = getattr(exc, "evidence", None)
        if isinstance(evidence, list):
            carried.evidence = evidence
        return carried
    return exc


class WorkerError(RuntimeError):
    """An exception from a worker that could not travel as itself (its message and any evidence do)."""

    evidence: list[Any]


def _child(conn: Connection, fn: Callable[..., Any], args: tuple[Any, ...], limits: Limits) -> None:
    set_limits(limits)
    start = _private_bytes()
    # The backstop for native allocations between two polls: address space may grow by the ceiling plus
    # BACKSTOP_BYTES (threads and allocators reserve far more address space than they touch).
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _vm_bytes() + limits.request_memory_bytes + BACKSTOP_BYTES
    resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    done = threading.Event()
    threading.Thread(target=_watch, args=(conn, start, limits.request_memory_bytes, done), daemon=True).start()
    outcome: tuple[str, Any]
    try:
        outcome = ("ok", fn(*args))
    except MemoryError:
        outcome = ("memory", None)
    except BaseException as exc:  # re-raised in the server, where the tool boundary turns it into evidence
        outcome = ("raised", _portable(exc))
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))  # room to report
    if outcome[0] == "memory":
        outcome = ("memory", max(_private_bytes() - start, 0))
    with _send_lock:
        done.set()
        try:
            conn.send(outcome)
        except Exception as exc:  # an unpicklable result: say what it was
            conn.send(("raised", RuntimeError(f"the worker's answer could not be sent back: {exc!r}")))
        conn.close()


def call(fn: Callable[..., T], *args: Any, where: str | None = None) -> T:
    """``fn(*args)`` in a bounded worker (``fn`` and ``args`` must pickle: a module-level function and
    plain data); raises :class:`CeilingExceeded` past the memory or time ceiling."""
    limits = current_limits()
    context = _forkserver()
    receive, send = context.Pipe(duplex=False)
    worker = context.Process(target=_child, args=(send, fn, args, limits), daemon=True)
    began = time.monotonic()
    worker.start()
    send.close()
    try:
        if not receive.poll(limits.request_seconds + GRACE_S):
            raise CeilingExceeded("request_seconds", limits.request_seconds, time.monotonic() - began, "s", where,
                                  "the request ran past the server's time ceiling and its worker was stopped")
        try:
            kind, value = receive.recv()
        except EOFError:  # died without answering: killed, or a native allocation failure aborted it
            worker.join(5)
            kind, value = "died", worker.exitcode
    finally:
        receive.close()
        worker.join(5)
        if worker.is_alive():
            worker.kill()
            worker.join()
    if kind == "ok":
        return value
    if kind == "raised":
        raise value
    if kind == "memory":
        raise CeilingExceeded("request_memory_bytes", limits.request_memory_bytes, value, "bytes", where,
                              "the request needed more memory than the server allows one request")
    raise CeilingExceeded("request_memory_bytes", limits.request_memory_bytes, limits.request_memory_bytes,
                          "bytes", where, f"the request's worker died (exit {value}) at its memory ceiling")


def _turn(domain: str, task: str, action: Action, seed: int, turn: int) -> TurnRecord:
    return run_turn(load_domain(domain), task, action, seed, turn)


def run_turn_bounded(domain: Domain, task: str, action: Action, seed: int, turn: int = 1) -> TurnRecord:
    """:func:`~rac_fw.runtime.run_turn` in a bounded worker (the executor the MCP server's episodes use)."""
    return call(_turn, domain.name, task, action, seed, turn, where=f"turn {turn} of {domain.name}/{task}")


__all__ = ["call", "run_turn_bounded", "start"]
