"""The results store: one SQLite file, one row per run and per episode; resumable.

A run is identified by its id (default: a hash of domain, interface, model, tasks, seeds, budget and
options), so ``--resume`` finds it again and only the episodes not yet stored are run. Episodes are
stored whole (JSON, including every metered call) plus the columns the report groups by.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rac_fw.contract import sha256_of
from rac_fw.eval.episode import EpisodeResult

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY, domain TEXT NOT NULL, interface TEXT NOT NULL, model TEXT NOT NULL,
  config TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
  run TEXT NOT NULL REFERENCES runs(id), task TEXT NOT NULL, seed INTEGER NOT NULL, outcome TEXT NOT NULL,
  first_pass INTEGER NOT NULL, calls INTEGER NOT NULL, tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL,
  wall_ms REAL NOT NULL, family TEXT NOT NULL, target TEXT NOT NULL, doc TEXT NOT NULL,
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


class Store:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.executescript(SCHEMA)

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
        return {(t, s) for t, s in self.db.execute("SELECT task, seed FROM episodes WHERE run = ?", (run_id,))}

    def add(self, run_id: str, result: EpisodeResult) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (
                run_id, result.task, result.seed, result.outcome, int(result.first_pass), len(result.calls),
                result.tokens_in, result.tokens_out, result.wall_ms, result.labels.get("family", "-"),
                result.labels.get("target", "-"), json.dumps(result.to_json(), sort_keys=True)))

    def episodes(self, run_id: str) -> list[EpisodeResult]:
        rows = self.db.execute("SELECT doc FROM episodes WHERE run = ? ORDER BY task, seed", (run_id,))
        return [EpisodeResult.from_json(json.loads(doc)) for (doc,) in rows]
