"""The results store: one SQLite file, one row per run and per episode; resumable, one process per run.

A run is identified by its id (default: a hash of domain, interface, model, base URL, tasks, seeds,
budget and options), so ``--resume`` finds it again and only the episodes not yet stored — or stored as
*unknown* (the model was unreachable, a tool missing) with fewer than ``MAX_ATTEMPTS`` attempts — are
run. The run's definition is stored with it; resuming with a different one (another ``--base-url``,
model, interface, budget, task set…) is refused with the differences named, so one run never mixes two
setups. :func:`run_lock` holds an exclusive lock on the run for the process running it: a second
process on the same run is refused instead of calling the model for the same episodes. Episodes are
stored whole (JSON, including every metered call and the quality measurements) plus the columns the
report groups by.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rac_fw.contract import sha256_of
from rac_fw.eval.episode import EpisodeResult

#: How many times an episode whose outcome was unknown is run in all (the first run and the retries).
MAX_ATTEMPTS = 3

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY, domain TEXT NOT NULL, interface TEXT NOT NULL, model TEXT NOT NULL,
  config TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
  run TEXT NOT NULL REFERENCES runs(id), task TEXT NOT NULL, seed INTEGER NOT NULL, outcome TEXT NOT NULL,
  first_pass INTEGER NOT NULL, calls INTEGER NOT NULL, tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL,
  wall_ms REAL NOT NULL, family TEXT NOT NULL, target TEXT NOT NULL, doc TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (run, task, seed));
"""


@dataclass(frozen=True)
class RunInfo:
    id: str
    domain: str
    interface: str
    model: str
    config: dict[str, Any]


def run_id_for(domain: str, interface: str, model: str, config: dict[str, Any]) -> str:
    """Deterministic id of a run's definition (what ``--resume`` looks up)."""
    return f"{domain}-{interface}-{sha256_of({'model': model, **config})[:12]}"


def config_mismatch(stored: RunInfo, wanted: RunInfo) -> list[str]:
    """The parts of a run's definition that differ ("base_url: stored X, asked Y"), empty when equal."""
    out = [f"{name}: stored {a!r}, asked {b!r}" for name, a, b in (
        ("domain", stored.domain, wanted.domain), ("interface", stored.interface, wanted.interface),
        ("model", stored.model, wanted.model)) if a != b]
    for key in sorted(set(stored.config) | set(wanted.config)):
        a, b = stored.config.get(key), wanted.config.get(key)
        if a != b:
            shown = (f"{len(a)} tasks" if isinstance(a, list) and len(a) > 6 else repr(a),
                     f"{len(b)} tasks" if isinstance(b, list) and len(b) > 6 else repr(b))
            out.append(f"{key}: stored {shown[0]}, asked {shown[1]}")
    return out


class RunLocked(RuntimeError):
    """Another process holds the run."""


@contextlib.contextmanager
def run_lock(store: Path, run_id: str) -> Iterator[None]:
    """Hold the run for this process (an ``flock`` on ``<store>.<run>.lock``, released on exit or crash)."""
    path = store.with_name(f"{store.name}.{sha256_of(run_id)[:16]}.lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise RunLocked(f"run {run_id} is being run by {holder}; wait for it to finish") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"process {os.getpid()}")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class Store:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, timeout=30)
        self.db.executescript(SCHEMA)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(episodes)")}
        if "attempts" not in columns:  # a store written before retries were counted
            with self.db:
                self.db.execute("ALTER TABLE episodes ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1")

    def close(self) -> None:
        self.db.close()

    def run(self, run_id: str) -> RunInfo | None:
        query = "SELECT id, domain, interface, model, config FROM runs WHERE id = ?"
        row = self.db.execute(query, (run_id,)).fetchone()
        return None if row is None else RunInfo(row[0], row[1], row[2], row[3], json.loads(row[4]))

    def runs(self) -> list[RunInfo]:
        rows = self.db.execute("SELECT id, domain, interface, model, config FROM runs ORDER BY created").fetchall()
        return [RunInfo(r[0], r[1], r[2], r[3], json.loads(r[4])) for r in rows]

    def create_run(self, info: RunInfo) -> None:
        with self.db:
            self.db.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)", (
                info.id, info.domain, info.interface, info.model, json.dumps(info.config, sort_keys=True), time.time()))

    def done(self, run_id: str) -> set[tuple[str, int]]:
        """Episodes that need no further run: decided ones, and unknown ones that used up their attempts."""
        rows = self.db.execute("SELECT task, seed FROM episodes WHERE run = ? AND (outcome != 'unknown' OR "
                               "attempts >= ?)", (run_id, MAX_ATTEMPTS))
        return {(t, s) for t, s in rows}

    def attempts(self, run_id: str) -> dict[tuple[str, int], int]:
        rows = self.db.execute("SELECT task, seed, attempts FROM episodes WHERE run = ?", (run_id,))
        return {(t, s): n for t, s, n in rows}

    def add(self, run_id: str, result: EpisodeResult) -> None:
        with self.db:
            before = self.db.execute("SELECT attempts FROM episodes WHERE run = ? AND task = ? AND seed = ?",
                                     (run_id, result.task, result.seed)).fetchone()
            self.db.execute("INSERT OR REPLACE INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (
                run_id, result.task, result.seed, result.outcome, int(result.first_pass), len(result.calls),
                result.tokens_in, result.tokens_out, result.wall_ms, result.labels.get("family", "-"),
                result.labels.get("target", "-"), json.dumps(result.to_json(), sort_keys=True),
                1 + (before[0] if before else 0)))

    def episodes(self, run_id: str) -> list[EpisodeResult]:
        rows = self.db.execute("SELECT doc FROM episodes WHERE run = ? ORDER BY task, seed", (run_id,))
        return [EpisodeResult.from_json(json.loads(doc)) for (doc,) in rows]
