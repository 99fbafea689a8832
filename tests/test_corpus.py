"""The compatibility corpus: recorded episodes of every domain, passes and failures, replay with 0
divergence. A change that alters a recorded outcome fails here; re-record with tests/corpus/record.py
when the change is intended, and review the trace diff."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rac_fw.runtime import replay

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.jsonl"))


def test_corpus_covers_every_domain_with_passes_and_failures():
    outcomes: dict[str, set[str]] = {}
    for path in CORPUS:
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        for line in lines:
            if line["kind"] == "turn":
                outcomes.setdefault(line["domain"], set()).add(line["status"])
    assert set(outcomes) >= {"logic", "scheduling", "firmware"}
    for domain, seen in outcomes.items():
        assert "pass" in seen and seen & {"fail", "invalid"}, (domain, seen)


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_recorded_episode_replays_without_divergence(path):
    count, divergences = replay(path)
    assert count >= 1
    assert divergences == [], "\n".join(f"line {d.line} {d.field}: {d.message or d.recorded}" for d in divergences)


def test_cli_replays_the_corpus():
    run = subprocess.run([sys.executable, "-m", "rac_fw.cli", "replay", str(CORPUS[0])], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0 and "0 divergence(s)" in run.stdout, run.stdout + run.stderr
