"""Run untrusted Python (the Code baseline's program) in a separate, limited, isolated process.

Layers, from the inside out:

1. **Bootstrap audit hook** (always): before the program runs, an audit hook denies process creation
   (fork/exec/spawn/subprocess/kill), sockets, ctypes, ``gc`` and ``setrlimit``, and any file access
   outside the private temp dir (the standard library stays readable). A denied event ends the
   process at once with exit code :data:`DENIED_EXIT` and names the event on stderr, so hostile code
   cannot catch the refusal and carry on.
2. **Resource limits** (always): CPU seconds, address space, file size, open files, no core dumps, a
   process-count cap, and a wall-clock deadline enforced by the parent, which also caps how many
   bytes of output it reads and kills the whole process group when any limit trips.
3. **Namespaces** (where ``unshare`` works, e.g. as root): a fresh network namespace (no interfaces
   up, so no network at all), a PID namespace (every descendant dies with the program), and a mount
   namespace in which the project folder is covered by an empty read-only tmpfs.

Python runs as ``python -I -S``: isolated mode, no site-packages, so the project is not importable
and only the standard library is available. The instance arrives on stdin; the cwd is the temp dir.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

#: Exit code the bootstrap uses when the audit hook denies an operation.
DENIED_EXIT = 97
_PROJECT = Path(__file__).resolve().parents[3]

_BOOTSTRAP = r'''
import sys, os
_tmp, _program, _hide = sys.argv[1], sys.argv[2], sys.argv[3:]
if _hide:
    import ctypes
    _libc = ctypes.CDLL(None, use_errno=True)
    for _d in _hide:
        _libc.mount(b"none", _d.encode(), b"tmpfs", 1 | 2 | 4, b"size=4k")  # MS_RDONLY|NOSUID|NODEV
    del ctypes, _libc
    for _name in [m for m in sys.modules if m == "ctypes" or m.startswith(("ctypes.", "_ctypes"))]:
        del sys.modules[_name]
_READ_ROOTS = tuple(p.rstrip("/") + "/" for p in %(read_roots)r)
_DENY_EVENTS = {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
                "subprocess.Popen", "os.kill", "os.killpg", "pty.spawn", "os.symlink", "os.link",
                "resource.setrlimit", "resource.prlimit", "sys.remote_exec", "os.setuid", "os.chroot"}
_DENY_IMPORTS = {"ctypes", "_ctypes", "socket", "_socket", "ssl", "_ssl", "subprocess", "_posixsubprocess",
                 "multiprocessing", "_multiprocessing", "gc", "pty", "_xxsubinterpreters", "_interpreters",
                 "faulthandler", "signal", "_signal"}
_PATH_EVENTS = {"open", "os.listdir", "os.scandir", "os.chdir", "os.mkdir", "os.remove", "os.rmdir",
                "os.rename", "os.truncate", "os.utime", "os.chmod", "os.chown", "glob.glob", "shutil.rmtree"}
_TMP = _tmp.rstrip("/") + "/"

def _hook(event, args, _exit=os._exit, _write=os.write, _fspath=os.fspath, _getcwd=os.getcwd,
          _join=os.path.join, _norm=os.path.normpath, _isabs=os.path.isabs):
    why = None
    if event in _DENY_EVENTS or event.startswith(("socket.", "ctypes.")):
        why = event
    elif event == "import" and args[0].split(".")[0] in _DENY_IMPORTS:
        why = "import " + args[0]
    elif event in _PATH_EVENTS and args:
        paths = [a for a in (args[:2] if event == "os.rename" else args[:1])]
        write = event != "open" or any(c in str(args[1] if len(args) > 1 and args[1] else "r") for c in "wax+")
        if event == "open" and len(args) > 2 and isinstance(args[2], int) and args[2] & 3:
            write = True
        if event in ("os.listdir", "os.scandir"):
            write = False
        for p in paths:
            if p is None or isinstance(p, int):
                continue
            p = _fspath(p)
            if isinstance(p, bytes):
                p = p.decode("utf-8", "replace")
            full = _norm(p if _isabs(p) else _join(_getcwd(), p)) + "/"
            if full.startswith(_TMP) or (not write and full.startswith(_READ_ROOTS)):
                continue
            why = f"{event} {p!r}"
            break
    if why is not None:
        try:
            _write(2, ("\nSANDBOX-DENIED " + why[:300] + "\n").encode("utf-8", "replace"))
        finally:
            _exit(%(denied)d)

with open(_program, encoding="utf-8") as _fh:
    _source = _fh.read()
_code = compile(_source, "program.py", "exec")
sys.argv = ["program.py"]
sys.addaudithook(_hook)
del _fh, _source, _hook
exec(_code, {"__name__": "__main__", "__builtins__": __builtins__})
'''


@dataclass(frozen=True)
class Limits:
    """What one program may use; every limit trips to a verdict, never a hang."""

    wall_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 512
    stdout_bytes: int = 1 << 20
    stderr_bytes: int = 64 << 10
    file_mb: int = 16
    processes: int = 8


@dataclass
class SandboxResult:
    """How the program ended: ``outcome`` is ``ok`` or the name of the limit or rule that stopped it."""

    outcome: str  # ok | exit | timeout | cpu | memory | output | denied | killed
    returncode: int | None
    cpu_s: float
    stdout: str
    stderr: str
    seconds: float
    isolation: list[str] = field(default_factory=list)
    denied: str | None = None


@cache
def _unshare_argv() -> tuple[str, ...]:
    """The ``unshare`` prefix that works here (root, or an unprivileged user namespace), else empty."""
    exe = shutil.which("unshare")
    if exe is None:
        return ()
    base = (exe, "--net", "--pid", "--fork", "--kill-child", "--mount", "--propagation", "private")
    for argv in (base, (*base[:1], "--map-root-user", *base[1:])):
        try:
            probe = subprocess.run([*argv, "true"], capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return argv
    return ()


def _read_roots() -> list[str]:
    """Folders the program may read: the standard library only (no site-packages, no project)."""
    roots = {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
    return sorted(str(Path(r).resolve()) for r in roots)


def _hidden(tmp: Path) -> list[str]:
    """Folders covered by an empty tmpfs: the project, unless it holds the interpreter or the temp dir."""
    keep = [Path(sys.executable).resolve(), Path(sys.base_prefix).resolve(), tmp.resolve()]
    project = _PROJECT
    if any(k == project or project in k.parents for k in keep):
        return []
    return [str(project)]


def _limit_child(limits: Limits) -> None:
    import resource

    mem = limits.memory_mb << 20
    for what, value in ((resource.RLIMIT_CPU, limits.cpu_s), (resource.RLIMIT_AS, mem),
                        (resource.RLIMIT_FSIZE, limits.file_mb << 20), (resource.RLIMIT_NOFILE, 64),
                        (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NPROC, limits.processes)):
        resource.setrlimit(what, (value, value))


def run_python(source: str, stdin: str, limits: Limits | None = None) -> SandboxResult:
    """Run ``source`` under the sandbox with ``stdin``; always returns within ``wall_s`` plus a margin."""
    limits = limits or Limits()
    tmp = Path(tempfile.mkdtemp(prefix="rac-fw-code-")).resolve()
    try:
        program = tmp / "program.py"
        program.write_text(source, encoding="utf-8")
        prefix = _unshare_argv()
        hidden = _hidden(tmp) if prefix else []
        boot = _BOOTSTRAP % {"read_roots": _read_roots(), "denied": DENIED_EXIT}
        argv = [*prefix, sys.executable, "-I", "-S", "-c", boot, str(tmp), str(program), *hidden]
        isolation = ["audit hook", "rlimits", "python -I -S"]
        if prefix:
            isolation += ["network namespace", "pid namespace"] + (["project hidden"] if hidden else [])
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=tmp, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                                start_new_session=True, preexec_fn=lambda: _limit_child(limits))
        outcome, out, err, cpu = _collect(proc, stdin.encode(), limits, t0)
        seconds = time.monotonic() - t0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    stderr = err.decode("utf-8", "replace")
    rc = proc.returncode
    denied = None
    if outcome == "ok":
        if rc == DENIED_EXIT and "SANDBOX-DENIED" in stderr:
            outcome = "denied"
            denied = stderr.rsplit("SANDBOX-DENIED ", 1)[1].strip()
        elif rc != 0 and cpu >= limits.cpu_s - 0.05:
            outcome = "cpu"
        elif rc != 0 and "MemoryError" in stderr:
            outcome = "memory"
        elif rc in (-signal.SIGKILL, 128 + signal.SIGKILL):
            outcome = "killed"
        elif rc != 0:
            outcome = "exit"
    return SandboxResult(outcome=outcome, returncode=rc, cpu_s=round(cpu, 3), stdout=out.decode("utf-8", "replace"),
                         stderr=stderr, seconds=seconds, isolation=isolation, denied=denied)


def _collect(
    proc: subprocess.Popen[bytes], stdin: bytes, limits: Limits, t0: float
) -> tuple[str, bytes, bytes, float]:
    """Feed stdin, read capped output until exit or a limit; kill the process group on any limit."""
    assert proc.stdin and proc.stdout and proc.stderr
    try:
        proc.stdin.write(stdin)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "out")
    sel.register(proc.stderr, selectors.EVENT_READ, "err")
    chunks = {"out": bytearray(), "err": bytearray()}
    caps = {"out": limits.stdout_bytes, "err": limits.stderr_bytes}
    outcome = "ok"
    open_streams = 2
    while open_streams:
        remaining = limits.wall_s - (time.monotonic() - t0)
        if remaining <= 0:
            outcome = "timeout"
            break
        for key, _ in sel.select(timeout=min(remaining, 0.5)):
            data = os.read(key.fileobj.fileno(), 65536)  # type: ignore[union-attr]
            if not data:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            buf = chunks[key.data]
            buf.extend(data)
            if len(buf) > caps[key.data]:
                if key.data == "out":
                    outcome = "output"
                    open_streams = 0
                    break
                del buf[caps[key.data]:]
    sel.close()
    if outcome != "ok":
        _kill(proc)
    deadline = t0 + limits.wall_s
    cpu = _reap(proc, deadline)
    if cpu is None:  # streams closed but the process lives on past the deadline
        outcome = "timeout"
        _kill(proc)
        cpu = _reap(proc, time.monotonic() + 5.0) or 0.0
    proc.stdout.close()
    proc.stderr.close()
    return outcome, bytes(chunks["out"][: limits.stdout_bytes]), bytes(chunks["err"]), cpu


def _reap(proc: subprocess.Popen[bytes], deadline: float) -> float | None:
    """Wait for the process until ``deadline``; its CPU seconds (children included), or None if alive.

    ``wait4`` gives the CPU time even when ``unshare`` sits between us and the program and turns the
    program's SIGXCPU into a plain exit status.
    """
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
