"""A fair evaluation: one proposal rule, the MCP tools, QPR, resume and locking, PCB interfaces, plots.

Everything runs against the scripted OpenAI-compatible server on 127.0.0.1 (real HTTP, real clients,
real verifiers); a second process holding a run is a real process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rac_fw.eval.clients import ModelOptions, OpenAIChatClient
from rac_fw.eval.episode import ONE_ACTION, run_episode
from rac_fw.eval.interfaces import get_interface, interfaces, interfaces_of
from rac_fw.eval.report import MIN_SHARED_TASKS, plot_series
from rac_fw.eval.runner import EvalError, EvalRequest, evaluate, evaluate_all
from rac_fw.eval.scripted import ScriptedServer
from rac_fw.eval.store import MAX_ATTEMPTS, run_lock

#: One small task per interface; the flawed action fails and the reference passes on each.
SEVERAL = [
    ("logic", "rac", "mux2"),
    ("scheduling", "rac", "la01"),
    ("scheduling", "c1t", "la01"),
    ("firmware", "rac", "fw/dma/copy_1k@stm32h743-hal"),
    ("firmware", "rawsdk", "fw/uart/hello@stm32f407-hal"),
    ("firmware", "signatures", "fw/uart/hello@stm32f407-hal"),
    ("firmware", "sourcelite", "fw/uart/hello@stm32f407-hal"),
    *[("pcb", name, "place_group_00") for name in ("rac", "coord", "coord_py", "seq", "req")],
    ("pcb", "candidates", "route_fanout_01"),  # one of the toolchain's layouts passes here
]


@pytest.mark.parametrize(("domain", "name", "task"), SEVERAL, ids=lambda v: v)
def test_several_tool_calls_in_one_reply_spend_one_proposal_per_model_call(domain: str, name: str, task: str) -> None:
    """Three proposals per reply (flawed first): only the first of each reply is judged, in every interface."""
    interface = get_interface(domain, name)
    with ScriptedServer(interface, keep_bodies=True) as server:
        result = run_episode(interface, task, OpenAIChatClient("several", server.base_url))
    assert len(result.proposals) == len(result.calls) >= 2, [(p.status, p.codes) for p in result.proposals]
    assert [p.call for p in result.proposals] == list(range(len(result.calls)))  # seq: one relation per call
    assert result.proposals[0].status != "pass" and result.outcome == "pass" and not result.first_pass
    assert result.extra_calls == 2 * len(result.calls)
    assert result.lookups == (len(result.calls) if interface.lookup_tools(task) else 0)
    # the second request carries the refusal of the first reply's extra proposals, unjudged
    second = json.loads(server.requests[1].body or "{}")["messages"]
    refusals = [m for m in second if m["role"] == "tool" and ONE_ACTION in m["content"]]
    assert len(refusals) == 2 and all('"evidence"' in m["content"] and '"verdicts"' not in m["content"]
                                      for m in refusals)


def test_every_registered_interface_is_covered_by_the_one_proposal_test() -> None:
    covered = {(d, n) for d, n, _ in SEVERAL}
    builtin = {key for key, cls in interfaces().items() if cls.__module__.startswith("rac_fw.eval.interfaces")}
    assert builtin <= covered  # (a test may register a toy plugin interface; only the shipped ones count)
    assert {("pcb", n) for n in interfaces_of("pcb")} >= {("pcb", n) for n in ("rac", "coord", "coord_py",
                                                                                 "candidates", "seq", "req")}


def test_firmware_rac_sends_the_index_and_a_lookup_not_the_plan_schema() -> None:
    """≤ 3,000 o200k tokens of tool definitions per call, measured on the requests the server received."""
    interface = get_interface("firmware", "rac")
    names = [t.name for t in [*interface.tools("nrf52840"), *interface.lookup_tools("nrf52840")]]
    assert names == ["submit_action", "schema"]
    with ScriptedServer(interface) as server:
        run_episode(interface, "fw/dma/copy_1k@stm32h743-zephyr", OpenAIChatClient("repairing", server.base_url))
        run_episode(interface, "fw/uart/hello@stm32f407-baremetal", OpenAIChatClient("oracle", server.base_url))
    assert len(server.requests) == 3
    assert all(0 < r.tool_tokens <= 3000 for r in server.requests), [r.tool_tokens for r in server.requests]
    # the lookup answers one operation's full schema, and a bad name with the known ones
    answer = json.loads(interface.lookup("nrf52840", "schema", {"part": "dma_mem2mem"}))
    assert "properties" in answer and "x-realized" in answer
    assert "uart_print" in json.loads(interface.lookup("nrf52840", "schema", {"op": "no_such_op"}))["error"]


def test_tokens_come_from_usage_else_the_same_count_of_what_was_sent() -> None:
    """The scripted server reports usage counted as the bridge counts without it: the same numbers."""
    interface = get_interface("logic", "rac")
    with ScriptedServer(interface) as server:
        with_usage = run_episode(interface, "mux2", OpenAIChatClient("oracle", server.base_url))
        without = run_episode(interface, "mux2", OpenAIChatClient("hostile", server.base_url))
    assert [c.token_source for c in with_usage.calls] == ["provider"]
    assert {c.token_source for c in without.calls} == {"o200k"}
    assert with_usage.calls[0].tokens_in == server.requests[0].tokens_in
    assert [c.tokens_in for c in without.calls] == [r.tokens_in for r in server.requests[1:]]


POOR = textwrap.dedent("""\
    import json, sys
    data = json.load(sys.stdin)
    starts, t = {}, 0
    for job in data["jobs"]:                 # every operation after the previous one: valid, and slow
        for op in job["operations"]:
            starts[op["op"]] = t
            t += op["duration"]
    print(json.dumps({"starts": starts}))
""")


def test_scheduling_pass_is_qpr_and_the_model_never_sees_the_optimum(tmp_path: Path) -> None:
    from rac_fw.domains.scheduling.instance import known_optimum

    interface = get_interface("scheduling", "c1t")
    poor = run_episode_with(interface, "la01", {"source": POOR})
    assert poor.valid and poor.outcome == "fail" and not poor.first_pass
    assert poor.metrics["makespan"] > 1.25 * poor.metrics["optimum"] and poor.metrics["gap"] > 0.25
    assert poor.proposals[0].quality is False

    summary = evaluate(EvalRequest(domain="scheduling", interface="rac", model="scripted:repairing",
                                   tasks=["la01", "la02"], store=tmp_path / "q.sqlite")).summary
    quality = summary["overall"]["quality"]
    assert quality["qpr"] == 1.0 and quality["first_qpr"] == 0.0 and quality["valid_rate"] == 1.0
    assert 0 <= quality["gap_mean"] <= 0.25
    optimum = str(known_optimum("la01"))
    with ScriptedServer(get_interface("scheduling", "rac"), keep_bodies=True) as server:
        run_episode(get_interface("scheduling", "rac"), "la01", OpenAIChatClient("repairing", server.base_url))
    bodies = " ".join(r.body or "" for r in server.requests)
    assert "optimum" not in bodies and f'"makespan":{optimum}' not in bodies.replace(" ", "")


def run_episode_with(interface, task: str, arguments: dict):  # type: ignore[no-untyped-def]
    """One proposal judged directly (the same state object an episode uses)."""
    from rac_fw.eval.clients import ToolCall
    from rac_fw.eval.episode import EpisodeResult, _propose

    state = interface.start(task, 0, 1)
    proposal, _text, _ms = _propose(interface, task, state, ToolCall("c0", interface.tools(task)[0].name,
                                                                     json.dumps(arguments)),
                                    {t.name for t in interface.tools(task)}, 0)
    valid = proposal.status == "pass"
    return EpisodeResult(task, 0, "pass" if proposal.passed else "fail", proposal.passed, [], [proposal], 0.0, 0.0,
                         {}, valid=valid, first_valid=valid, metrics=proposal.metrics)


def test_resume_retries_unknown_episodes_refuses_another_setup_and_a_second_process(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    interface = get_interface("logic", "rac")
    fast = ModelOptions(retries=0, backoff_s=0.01)
    with ScriptedServer(interface) as server:
        def request(**kw: object) -> EvalRequest:
            base = dict(domain="logic", interface="rac", model="oracle", base_url=server.base_url, api_key_env="",
                        tasks=["mux2", "half_adder"], store=store, run_id="r", options=fast, workers=1)
            return EvalRequest(**{**base, **kw})  # type: ignore[arg-type]

        server.fail_next(2)
        down = evaluate(request())
        assert [e.outcome for e in down.episodes] == ["unknown", "unknown"]
        again = evaluate(request(resume=True))
        assert again.ran == 2 and [e.outcome for e in again.episodes] == ["pass", "pass"]

        with pytest.raises(EvalError, match="base_url"):
            evaluate(request(resume=True, base_url=server.base_url + "/other"))
        with pytest.raises(EvalError, match="budget"):
            evaluate(request(resume=True, budget=3))

        # a provider down for good: retried up to the cap, then left unknown
        server.fail_next(10_000)
        runs = [evaluate(request(run_id="down", resume=n > 0, tasks=["mux2"])).ran for n in range(MAX_ATTEMPTS + 1)]
        assert runs == [1] * MAX_ATTEMPTS + [0]
        server.fail_next(0)

    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from rac_fw.eval.store import run_lock
        with run_lock(Path({str(store)!r}), "r"):
            print("held", flush=True)
            time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(EvalError, match="being run by process"):
            evaluate(EvalRequest(domain="logic", interface="rac", model="scripted:oracle", tasks=["mux2"],
                                 store=store, run_id="r", resume=True))
    finally:
        holder.kill()
        holder.wait(timeout=10)
    with run_lock(store, "r"):  # released when the holder died
        pass


def test_local_thread_pool_gives_the_same_results_as_one_thread(tmp_path: Path) -> None:
    def run(workers: int) -> list[tuple]:
        outcome = evaluate(EvalRequest(domain="scheduling", interface="rac", model="scripted:repairing",
                                       tasks=["la01", "la02", "la03"], seeds=2, workers=workers,
                                       store=tmp_path / f"w{workers}.sqlite"))
        return [(e.task, e.seed, e.outcome, [(c.tokens_in, c.tokens_out) for c in e.calls],
                 [(p.status, p.codes) for p in e.proposals]) for e in outcome.episodes]

    assert run(1) == run(4)


def test_pcb_eval_runs_every_interface_on_shared_tasks(tmp_path: Path) -> None:
    """``rac-fw eval --domain pcb --model scripted:oracle`` runs RAC and the five baselines."""
    cli = subprocess.run([sys.executable, "-m", "rac_fw.cli", "eval", "--domain", "pcb", "--model", "scripted:oracle",
                          "--tasks", "place_group_00", "--store", str(tmp_path / "pcb.sqlite"), "--run-id", "pcb",
                          "--json"], capture_output=True, text=True, timeout=900)
    assert cli.returncode == 0, cli.stderr[-2000:]
    doc = json.loads(cli.stdout)
    table = doc["interfaces"]
    assert sorted(table) == ["candidates", "coord", "coord_py", "rac", "req", "seq"]
    assert {r["run"] for r in doc["runs"]} == {f"pcb-{n}" for n in table}
    for name, row in table.items():
        assert row["episodes"] == 1 and row["tokens_in_mean"] > 0 and row["wall_ms_median"] > 0, name
        assert 0.0 <= row["cpr"] <= 1.0
    assert all(table[n]["pass_rate"] == 1.0 for n in ("rac", "coord", "coord_py", "req", "seq"))
    assert table["rac"]["cpr"] == 1.0
    outcomes = evaluate_all(EvalRequest(domain="pcb", interface="rac,req", model="scripted:oracle",
                                        tasks=["place_group_00"], store=tmp_path / "pcb.sqlite", run_id="pcb",
                                        resume=True))
    assert [o.ran for o in outcomes] == [0, 0]  # the same runs, found again: same tasks, budget, verifier
    assert {o.run.config["budget"] for o in outcomes} == {5}


def test_each_pcb_baseline_states_its_own_action_format() -> None:
    from rac_fw.domain import load_domain

    summaries = {d: load_domain(d).observe("place_group_00").summary
                 for d in ("pcb", "pcb_coord", "pcb_coord_py", "pcb_candidates", "pcb_seq", "pcb_req")}
    assert "never numbers" in summaries["pcb"] and "{relations:" in summaries["pcb"]
    assert "never numbers" not in summaries["pcb_coord"] and "millimetres" in summaries["pcb_coord"]
    assert "{program:" in summaries["pcb_coord_py"] and "never numbers" not in summaries["pcb_coord_py"]
    assert "{choice:" in summaries["pcb_candidates"]
    assert "{history:" in summaries["pcb_seq"]
    assert "{requirements:" in summaries["pcb_req"] and "{relations:" not in summaries["pcb_req"]
    board = summaries["pcb"].partition(" Submit ")[0]
    assert all(s.startswith(board) for s in summaries.values())


def test_plots_spread_identical_points_and_comparisons_warn(tmp_path: Path) -> None:
    store = tmp_path / "p.sqlite"
    base = dict(domain="logic", interface="rac", tasks=["mux2", "half_adder", "full_adder"], store=store)
    a = evaluate(EvalRequest(model="scripted:oracle", run_id="a", **base))  # type: ignore[arg-type]
    b = evaluate(EvalRequest(model="scripted:oracle", run_id="b", **base))  # type: ignore[arg-type]
    assert a.summary["overall"]["pass_ci"] == [1.0, 1.0]
    runs = [("m1", "rac", a.episodes), ("m2", "rac", b.episodes), ("m1", "rac", b.episodes)]
    series = plot_series(runs)
    assert sorted(series) == ["m1 · rac", "m2 · rac"] and len(series["m1 · rac"]) == 2
    xs = [p.x for points in series.values() for p in points]
    assert len(set(xs)) == 3  # the same coordinates, spread apart
    assert all(p.low <= p.y <= p.high for points in series.values() for p in points)

    hostile = evaluate(EvalRequest(model="scripted:hostile", run_id="h", compare="a", **base))  # type: ignore[arg-type]
    comparison = hostile.summary["comparison"]
    assert comparison["difference"] == -1.0 and [comparison["low"], comparison["high"]] == [-1.0, -1.0]
    assert f"fewer than {MIN_SHARED_TASKS}" in comparison["warning"]
    none = evaluate(EvalRequest(model="scripted:hostile", run_id="n", compare="a",  # type: ignore[arg-type]
                                **{**base, "tasks": ["parity4"]}))
    assert "share no task" in none.summary["comparison"]["warning"] and "difference" not in none.summary["comparison"]
    cli = subprocess.run([sys.executable, "-m", "rac_fw.cli", "eval", "--domain", "logic", "--model",
                          "scripted:hostile", "--tasks", "mux2", "--store", str(store), "--run-id", "c",
                          "--compare", "a"],
                         capture_output=True, text=True, timeout=300)
    assert cli.returncode == 0 and "warning" in cli.stderr and "shared task" in cli.stderr
