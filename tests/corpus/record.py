"""Record the compatibility corpus: one closed episode per file, for every domain, passes and failures.

The traces are replayed by tests/test_corpus.py with 0 divergence expected; a change to the runtime or a
domain that alters any recorded outcome (status, verdicts, evidence, artifact hash) shows there at
once. When such a change is intended, re-record and review the diff of the traces:

    python tests/corpus/record.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rac_fw.contract import Action
from rac_fw.domain import load_domain
from rac_fw.runtime import Episode

HERE = Path(__file__).resolve().parent

CONFLICT_PLAN = {
    "target": "stm32f407",
    "resources": {"pins": [{"name": "tx", "pin": "PA2", "function": "USART2_TX"}, {"name": "status", "pin": "PA2"}]},
    "operations": [{"op": "gpio_blink", "led": "status", "period_ms": 500},
                   {"op": "uart_print", "uart": "USART2", "message": "hi"}],
}

#: file name → (domain, task, budget, the payloads proposed in order)
EPISODES: dict[str, tuple[str, str, int, list[dict[str, Any]]]] = {
    "logic-fail-then-pass": ("logic", "half_adder", 3, [
        {"outputs": {"sum": [1, 2], "carry": [2]}}, {"outputs": {"sum": [1, 2], "carry": [3]}}]),
    "logic-invalid-budget-spent": ("logic", "full_adder", 2, [
        {"outputs": {"sum": [9]}}, {"outputs": {"sum": [1, 2, 4], "cout": [3, 5, 6]}}]),
    "scheduling-cycle-then-pass": ("scheduling", "la03", 3, [
        {"priority": list(range(10)), "before": [["j1o3", "j1o1"]]},
        {"priority": list(range(10))[::-1], "before": [["j1o1", "j1o3"]]}]),
    "scheduling-pass": ("scheduling", "la01", 1, [{"priority": list(range(10))}]),
    "firmware-pin-conflict-then-pass": ("firmware", "stm32f407", 3, [
        CONFLICT_PLAN,
        {**CONFLICT_PLAN, "resources": {"pins": [{"name": "tx", "pin": "PA2", "function": "USART2_TX"},
                                                 {"name": "status", "pin": "PD12"}]}}]),
    "firmware-invalid-budget-spent": ("firmware", "nrf52840", 1, [
        {"operations": [{"op": "pwm_fade", "output": "led0", "period_us": 1000, "step_percent": 5e-324,
                         "interval_ms": 20}]}]),
}


def record(directory: Path = HERE) -> list[Path]:
    written = []
    for name, (domain, task, budget, payloads) in EPISODES.items():
        path = directory / f"{name}.jsonl"
        path.unlink(missing_ok=True)
        episode = Episode(load_domain(domain), task, budget=budget, trace=path)
        episode.observe()
        for payload in payloads:
            episode.submit(Action(domain=domain, task=task, payload=payload))
        assert episode.done, f"{name}: the episode must close (pass or budget spent)"
        written.append(path)
    return written


if __name__ == "__main__":
    for path in record():
        print(path)
