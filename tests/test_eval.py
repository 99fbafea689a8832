"""``rac-fw eval`` against the scripted OpenAI-compatible server on 127.0.0.1 (real HTTP, real verifiers).

Small task subsets keep this quick; the oracle must pass every chosen (calibrated) task, the
repairing agent on its second call, and the hostile agent must end every episode with a recorded
failure — never a crash.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rac_fw.eval.clients import AnthropicClient, ModelOptions, OpenAIChatClient
from rac_fw.eval.episode import run_episode
from rac_fw.eval.interfaces import get_interface, interfaces
from rac_fw.eval.runner import EvalError, EvalRequest, evaluate
from rac_fw.eval.scripted import ScriptedServer

HOSTILE_CODES = {"E_TOOL_ARGUMENTS_JSON", "E_UNKNOWN_TOOL", "E_TOOL_ARGUMENTS_SIZE", "E_TOOL_ARGUMENTS_TYPE",
                 "E_NO_TOOL_CALL"}
FIRMWARE_TASKS = ["fw/dma/copy_1k@stm32h743-zephyr", "fw/adc/wifi_safe_adc@esp32s3-espidf",
                  "fw/uart/hello@stm32f407-baremetal", "fw/timer/tick_10ms@stm32f407-hal"]
CASES = [
    ("logic", "rac", ["half_adder", "full_adder", "mux2"]),
    ("scheduling", "rac", ["la01", "la02"]),
    ("scheduling", "c1t", ["la01"]),
    ("firmware", "rac", FIRMWARE_TASKS),
]


def _run(tmp_path: Path, domain: str, interface: str, tasks: list[str], agent: str, **kw: object) -> dict:
    request = EvalRequest(domain=domain, interface=interface, model=f"scripted:{agent}", tasks=tasks,
                          store=tmp_path / "results.sqlite", **kw)  # type: ignore[arg-type]
    return evaluate(request).summary


@pytest.mark.parametrize(("domain", "interface", "tasks"), CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_scripted_agents(tmp_path: Path, domain: str, interface: str, tasks: list[str]) -> None:
    oracle = _run(tmp_path, domain, interface, tasks, "oracle")["overall"]
    assert oracle["passed"] == oracle["episodes"] == len(tasks) and oracle["first_pass"] == len(tasks)
    assert oracle["tokens_in_mean"] > 0 and oracle["tokens_out_mean"] > 0 and oracle["wall_ms_median"] > 0

    repairing = _run(tmp_path, domain, interface, tasks, "repairing")
    row = repairing["overall"]
    assert row["passed"] == len(tasks) and row["first_pass"] == 0 and row["calls_mean"] == 2.0

    hostile = _run(tmp_path, domain, interface, tasks, "hostile")
    assert hostile["overall"]["passed"] == 0 and hostile["overall"]["unknown"] == 0
    assert hostile["overall"]["calls_mean"] == 5.0
    report = Path(hostile["report"])
    assert report.is_file() and Path(hostile["plot"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "scripted:hostile" in report.read_text()


def test_episode_records_every_hostile_move_and_tokens(tmp_path: Path) -> None:
    interface = get_interface("logic", "rac")
    with ScriptedServer(interface) as server:
        hostile = run_episode(interface, "half_adder", OpenAIChatClient("hostile", server.base_url))
        oracle = run_episode(interface, "half_adder", OpenAIChatClient("oracle", server.base_url))
    assert hostile.outcome == "fail" and {c for p in hostile.proposals for c in p.codes} == HOSTILE_CODES
    assert all(c.token_source == "o200k" and c.tokens_in > 0 and c.wall_ms > 0 for c in hostile.calls)
    assert [c.token_source for c in oracle.calls] == ["provider"]


def test_anthropic_client_and_retries_over_http() -> None:
    interface = get_interface("scheduling", "rac")
    fast = ModelOptions(backoff_s=0.01)
    with ScriptedServer(interface, transient_failures=2) as server:
        repaired = run_episode(interface, "la01", AnthropicClient("repairing", server.root_url, None), options=fast)
    assert repaired.outcome == "pass" and [p.codes for p in repaired.proposals] == [["E_CYCLE"], []]
    with ScriptedServer(interface, transient_failures=10) as server:
        gave_up = run_episode(interface, "la01", OpenAIChatClient("oracle", server.base_url),
                              options=ModelOptions(backoff_s=0.01, retries=2))
    assert gave_up.outcome == "unknown" and gave_up.error is not None and "E_MODEL_HTTP" in gave_up.error


def test_source_interfaces_judge_correct_and_broken_sources(tmp_path: Path) -> None:
    task = "fw/dma/copy_1k@stm32h743-zephyr"
    tokens = {name: get_interface("firmware", name).context_tokens(task) for name in ("signatures", "sourcelite",
                                                                                       "rawsdk")}
    assert tokens["signatures"] < tokens["sourcelite"] < tokens["rawsdk"]
    for name in ("rawsdk", "signatures", "sourcelite"):
        summary = _run(tmp_path, "firmware", name, [task], "repairing")
        episodes = json.loads(Path(summary["report"]).with_name("summary.json").read_text())["overall"]
        assert episodes["passed"] == 1 and episodes["first_pass"] == 0, name
    interface = get_interface("firmware", "sourcelite")
    with ScriptedServer(interface) as server:
        result = run_episode(interface, task, OpenAIChatClient("repairing", server.base_url))
    assert [p.status for p in result.proposals] == ["fail", "pass"]
    assert "E_UNKNOWN_API" in result.proposals[0].codes


def test_resume_runs_only_missing_episodes_and_refuses_silent_reuse(tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite"
    first = evaluate(EvalRequest(domain="logic", interface="rac", model="scripted:oracle", tasks=["mux2"],
                                 run_id="r1", store=store))
    assert first.ran == 1
    with pytest.raises(EvalError):
        evaluate(EvalRequest(domain="logic", interface="rac", model="scripted:oracle", tasks=["mux2"],
                             run_id="r1", store=store))
    again = evaluate(EvalRequest(domain="logic", interface="rac", model="scripted:oracle", tasks=["mux2"],
                                 run_id="r1", store=store, resume=True))
    assert again.ran == 0 and len(again.episodes) == 1


def test_cli_eval_with_paired_bootstrap_and_bad_usage(tmp_path: Path) -> None:
    store = tmp_path / "cli.sqlite"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "rac_fw.cli", "eval", "--domain", "logic", "--store", str(store),
                               "--tasks", "half_adder", "--tasks", "m*", *args],
                              capture_output=True, text=True, timeout=300)

    oracle = cli("--model", "scripted:oracle", "--run-id", "a", "--json")
    assert oracle.returncode == 0, oracle.stderr
    assert json.loads(oracle.stdout)["overall"]["episodes"] == 3
    hostile = cli("--model", "scripted:hostile", "--run-id", "b", "--compare", "a")
    assert hostile.returncode == 0, hostile.stderr
    assert "vs a: difference -1.000" in hostile.stdout and "5000 paired resamples" in hostile.stdout
    bad = cli("--model", "scripted:nobody")
    assert bad.returncode == 2 and "E_USAGE" in bad.stderr and "Traceback" not in bad.stderr


def test_registry_hosts_every_domain_interface() -> None:
    assert {("logic", "rac"), ("scheduling", "rac"), ("scheduling", "c1t"), ("firmware", "rac"),
            ("firmware", "rawsdk"), ("firmware", "signatures"), ("firmware", "sourcelite")} <= set(interfaces())


def test_a_plugin_interface_is_hosted_by_the_harness(tmp_path: Path) -> None:
    """Another package's interface (as PCB's will be) registers and runs through the same harness."""
    from rac_fw.eval.interfaces import register_interface
    from rac_fw.eval.interfaces.rac import LogicRac

    @register_interface
    class TruthRows(LogicRac):  # a toy variant: the same action, offered under another name
        name = "rows"
        description = "minterm rows (toy plugin)"

    summary = _run(tmp_path, "logic", "rows", ["mux2"], "repairing")
    assert summary["interface"] == "rows" and summary["overall"]["passed"] == 1
