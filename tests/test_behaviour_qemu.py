"""Behaviour examples run as STM32F407 bare metal in QEMU and match their predicted trace line for line.

Each example in :data:`RUNS` is planned, built with arm-none-eabi-gcc and run in ``qemu-system-arm``; the
run judge (``behaviour.console.judge``, recomputed from the plan) must accept every line from ``rac: boot``
to ``rac: done``. Then one step of the plan is mutated — a wrong count, a wrong condition, a wrong constant —
the *mutated* plan is lowered, built and run, and its console is judged against the *original* plan's
prediction: it must no longer match (while it still matches its own prediction, so the mismatch is the
mutation's, not a broken build). Builds are cached by content (``backends/gcc.py``), runs take about a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.pipeline import PlanResult, run_plan
from rac_fw.domains.firmware.plan.behaviour.console import judge, predicted
from rac_fw.domains.firmware.plan.behaviour.trace import exact_lines
from rac_fw.domains.firmware.plan.load import parse_plan
from tests.conftest import require_tool

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@dataclass(frozen=True)
class Mutation:
    """One step of an example changed: ``path`` into the plan document, its new ``value``, and what kind of
    mistake it stands for."""

    kind: str
    path: tuple[str | int, ...]
    value: Any


T0, T1 = ("behaviour", "triggers", 0), ("behaviour", "triggers", 1)

#: The examples run in QEMU, each with the one-step mutation its run must expose.
RUNS: dict[str, Mutation] = {
    "behaviour_counter": Mutation("wrong count", (*T0, "do", 0, "repeat", "times"), 4),
    "behaviour_producer_consumer": Mutation("wrong count", (*T0, "times"), 6),
    "behaviour_threshold_alarm": Mutation("wrong constant", ("behaviour", "vars", 2, "filter", "high"), "1700mV"),
    "behaviour_moving_average": Mutation("wrong constant", ("behaviour", "vars", 2, "filter", "window"), 4),
    "behaviour_median_spike": Mutation("wrong condition", (*T0, "do", 0, "repeat", "do", 1, "if", "cond"),
                                       "n % 5 == 1"),
    "behaviour_crc_frame": Mutation("wrong constant", ("behaviour", "vars", 2, "init", "counter"), 2),
    "behaviour_p_controller": Mutation("wrong constant", (*T0, "do", 0, "set", "drive"),
                                       "clamp((45C - temp) / 50mC, 0, 100)"),
    "behaviour_min_max_window": Mutation("wrong constant", ("behaviour", "vars", 0, "init"), 12346),
    "behaviour_retry_fail": Mutation("wrong count", (*T0, "do", 0, "while", "max"), 4),
    "behaviour_connection_fsm": Mutation("wrong condition", (*T0, "do", 2, "if", "cond"), "attempts % 2 == 0"),
    "behaviour_swirq_counter": Mutation("wrong count", (*T1, "do", 0, "repeat", "times"), 9),
    "behaviour_wait_until": Mutation("wrong condition", (*T1, "do", 1, "wait_until", "cond"), "never"),
    "behaviour_script_modes": Mutation("wrong run mode", ("behaviour", "scripts", 0, "mode"), "queued"),
    "behaviour_calibration": Mutation("wrong constant", ("behaviour", "vars", 1, "filter", "to", 0), "400mV"),
    "behaviour_debounce_sim": Mutation("wrong condition", (*T0, "do", 1, "if", "else", 1, "if", "cond"), "same >= 2"),
    "behaviour_isr_deferred": Mutation("wrong constant", (*T0, "queue"), 3),
    "behaviour_self_test": Mutation("wrong constant", (*T0, "do", 2, "if", "cond"), "crc16(known) == 0x29b2"),
    "behaviour_event_counter_report": Mutation("wrong count", ("behaviour", "triggers", 2, "times"), 2),
    "behaviour_boot_mode": Mutation("wrong condition", (*T0, "do", 2, "if", "cond"), "boots == 2"),
    "behaviour_throttle": Mutation("wrong constant", ("behaviour", "vars", 1, "filter", "interval"), "50ms"),
}


def _document(stem: str) -> dict[str, Any]:
    data = yaml.safe_load((EXAMPLES / f"{stem}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _run(document: dict[str, Any], out: Path) -> PlanResult:
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    return run_plan(document, out_dir=out, build="gcc", run="qemu")


def _trace_verdicts(result: PlanResult) -> list[Any]:
    return [v for v in result.verdicts if "predicted trace" in v.predicate]


def test_at_least_twelve_examples_run_in_qemu() -> None:
    assert len(RUNS) >= 12
    assert {m.kind for m in RUNS.values()} >= {"wrong count", "wrong condition", "wrong constant"}


@pytest.mark.parametrize("stem", sorted(RUNS))
def test_example_runs_in_qemu_as_predicted(stem: str, tmp_path: Path) -> None:
    document = _document(stem)
    result = _run(document, tmp_path / "app")
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    judged = _trace_verdicts(result)
    assert judged and all(v.passed for v in judged), judged
    plan = parse_plan(document)
    guess = predicted(plan, load_target(document["target"]), "baremetal")
    assert guess is not None and guess.prediction.ends != "open", guess and guess.prediction.notes
    lines = exact_lines(guess.items)
    assert lines is not None, f"{stem}: the prediction is not one fixed sequence of lines"
    assert judged[0].measured == len(lines)
    receipt = result.lowered.receipt if result.lowered is not None else None
    assert receipt is not None and receipt.trace


@pytest.mark.parametrize("stem", sorted(RUNS))
def test_mutated_firmware_no_longer_matches_the_original_prediction(stem: str, tmp_path: Path) -> None:
    document = _document(stem)
    mutation = RUNS[stem]
    mutated = apply_patch(document, [{"op": "replace", "path": list(mutation.path), "value": mutation.value}])
    result = _run(mutated, tmp_path / "mutant")
    output = (result.run or {}).get("output") or ""
    own = _trace_verdicts(result)
    assert own and own[0].passed, f"{stem} ({mutation.kind}): the mutant does not even match its own prediction"
    target = load_target(document["target"])
    verdicts, evidence = judge(parse_plan(document), target, "baremetal", output)
    assert verdicts and not verdicts[0].passed, f"{stem} ({mutation.kind}): the mutant still matches"
    assert evidence and evidence[0].code == "E_TRACE_MISMATCH" and evidence[0].message


def test_uart_lines_reach_the_behaviour_in_its_thread(tmp_path: Path) -> None:
    """The bare-metal UART raises ``line`` where its loop drains the ring (thread context, so the steps print):
    lines typed into QEMU's console are answered; three lines end this run (``times: 3``)."""
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    from rac_fw.domains.firmware.backends import get_backend
    from rac_fw.domains.firmware.backends.base import RunRequest

    document = apply_patch(_document("behaviour_uart_commands"), [
        {"op": "add", "path": ["behaviour", "triggers", 1, "times"], "value": 3}])  # fmt: skip
    built = run_plan(document, out_dir=tmp_path / "app", build="gcc")
    assert built.status is Status.PASS and built.build is not None, [e.message for e in built.evidence]
    ran = get_backend("qemu").run(RunRequest(image=Path(built.build["image"]), target="stm32f407", expect=(),
                                             timeout_s=30, output_dir=tmp_path / "run"),
                                  console_input=b"ping\r\ncount\r\nhello\r\n")  # fmt: skip
    lines = (ran.output or "").splitlines()
    assert lines[-4:] == ["pong", "2 line(s) so far", "unknown command 68656c6c6f (5 bytes)", "rac: done"], lines
    verdicts, _ = judge(parse_plan(document), load_target("stm32f407"), "baremetal", ran.output or "")
    assert verdicts and verdicts[0].passed  # the lines from outside are the open part of the prediction
