"""Code baseline (C1T) in the sandbox, and the scheduling CLI commands."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rac_fw.cli import app
from rac_fw.contract import Status
from rac_fw.domains.scheduling.code import run_code
from rac_fw.domains.scheduling.domain import SchedulingDomain
from rac_fw.domains.scheduling.sandbox import Limits

LIMITS = Limits(wall_s=3.0, cpu_s=1, memory_mb=256)

SERIAL = """
import json, sys
inst = json.load(sys.stdin)
t, starts = 0, {}
for job in inst["jobs"]:
    for op in job["operations"]:
        starts[op["op"]] = t
        t += op["duration"]
print("log line the judge ignores")
print(json.dumps({"starts": starts}))
"""

RELATIONS = """
import json, sys
inst = json.load(sys.stdin)
print(json.dumps({"priority": list(range(inst["num_jobs"]))[::-1], "before": [["j2o4", "j4o4"]]}))
"""

HOSTILE = {
    # an infinite loop trips the CPU limit, or the wall clock first when the machine is busy
    "loop": ("while True:\n    pass\n", {"E_PROGRAM_CPU", "E_PROGRAM_TIMEOUT"}),
    "sleep": ("import time\ntime.sleep(60)\n", {"E_PROGRAM_TIMEOUT"}),
    "output": ("while True:\n    print('x' * 65536)\n", {"E_PROGRAM_OUTPUT"}),
    "fork": ("import os\nwhile True:\n    os.fork()\n", {"E_PROGRAM_DENIED"}),
    "project_file": (f"print(open({str(Path(__file__).resolve())!r}).read())\n", {"E_PROGRAM_DENIED"}),
    "escape_relative": ("print(open('../../../../etc/passwd').read())\n", {"E_PROGRAM_DENIED"}),
    "socket": ("import socket\nsocket.create_connection(('127.0.0.1', 80))\n", {"E_PROGRAM_DENIED"}),
    "swallowed_refusal": ("import os\ntry:\n    os.system('id')\nexcept BaseException:\n    pass\n"
                          "print('{\"starts\": {}}')\n", {"E_PROGRAM_DENIED"}),
    "memory": ("x = bytearray(1 << 30)\n", {"E_PROGRAM_MEMORY"}),
}


@pytest.fixture(scope="module")
def domain() -> SchedulingDomain:
    return SchedulingDomain()


def test_correct_program_passes(domain: SchedulingDomain) -> None:
    fb = run_code(domain, "la01", SERIAL, LIMITS)
    assert fb.status is Status.PASS, fb.evidence
    verdicts = {v.predicate: v for v in fb.verdicts}
    assert verdicts["program"].passed
    total = sum(op.duration for op in domain.instance("la01").operations)
    assert verdicts["makespan"].measured == total  # serial schedule: the verifier computed it
    assert fb.observation.data["schedule"]["makespan"] == total


def test_relations_program_goes_through_the_backend(domain: SchedulingDomain) -> None:
    fb = run_code(domain, "la01", RELATIONS, LIMITS)
    assert fb.status is Status.PASS
    assert {v.predicate for v in fb.verdicts} >= {"program", "hard_pairs", "makespan"}
    assert fb.observation.data["schedule"]["backend"] == "bounded"


def test_wrong_program_fails_with_evidence(domain: SchedulingDomain) -> None:
    wrong = SERIAL.replace('t += op["duration"]', 't += op["duration"] - 1')
    fb = run_code(domain, "la01", wrong, LIMITS)
    assert fb.status is Status.FAIL
    codes = {e.code for e in fb.evidence}
    assert "E_PRECEDENCE" in codes
    assert all(e.magnitudes and e.magnitudes[0].value == 1 for e in fb.evidence if e.code == "E_PRECEDENCE")


def test_invalid_program_output_is_located(domain: SchedulingDomain) -> None:
    cyclic = 'print(\'{"priority": [0,1,2,3,4,5,6,7,8,9], "before": [["j1o3", "j1o1"]]}\')'
    fb = run_code(domain, "la01", cyclic, LIMITS)
    assert fb.status is Status.INVALID
    assert fb.evidence[0].code == "E_CYCLE" and fb.evidence[0].location.startswith("stdout: payload.before[0]")
    garbage = run_code(domain, "la01", "print('done')", LIMITS)
    assert garbage.status is Status.INVALID and garbage.evidence[0].code == "E_PROGRAM_OUTPUT"


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_program_ends_with_a_clear_verdict(domain: SchedulingDomain, case: str) -> None:
    source, codes = HOSTILE[case]
    t0 = time.monotonic()
    fb = run_code(domain, "la01", source, LIMITS)
    assert time.monotonic() - t0 < LIMITS.wall_s + 5  # never a hang
    assert fb.status is Status.FAIL
    program = fb.verdicts[0]
    assert program.predicate == "program" and not program.passed
    assert len(fb.evidence) == 1 and fb.evidence[0].code in codes, (fb.evidence, program.detail)


def test_cli_code_exit_codes(tmp_path: Path) -> None:
    runner = CliRunner()
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(SERIAL)
    bad.write_text("while True:\n    pass\n")
    ok = runner.invoke(app, ["scheduling", "code", "la01", str(good), "--json"])
    assert ok.exit_code == 0, ok.output
    assert '"status": "pass"' in ok.output
    failed = runner.invoke(app, ["scheduling", "code", "la01", str(bad), "--time-limit", "1"])
    assert failed.exit_code == 1 and "program" in failed.output
    missing = runner.invoke(app, ["scheduling", "code", "la01", str(tmp_path / "nope.py")])
    assert missing.exit_code == 2 and "cannot read program" in missing.output
    unknown = runner.invoke(app, ["scheduling", "code", "la77", str(good)])
    assert unknown.exit_code == 2 and "unknown task 'la77'" in unknown.output


def test_cli_calibrate_bounded_prints_all_instances() -> None:
    result = CliRunner().invoke(app, ["calibrate", "scheduling"])
    lines = result.output.strip().splitlines()
    assert lines[-1] == "40 passed, 0 failed", result.output
    assert result.exit_code == 0
    assert sum(line.startswith("la") for line in lines) == 40
    assert "mean gap" in lines[-2]


def test_cli_calibrate_rejects_bad_options() -> None:
    result = CliRunner().invoke(app, ["calibrate", "scheduling", "--backend", "magic", "--workers", "0"])
    assert result.exit_code == 2
    assert "unknown backend 'magic'" in result.output and "--workers" in result.output


def test_namespaces_hide_the_project_even_from_unaudited_calls() -> None:
    """``os.stat`` raises no audit event, so this probes the mount namespace layer on its own."""
    import os

    from rac_fw.domains.scheduling.sandbox import run_python

    if os.geteuid() != 0 and not Path("/proc/sys/kernel/unprivileged_userns_clone").exists():
        pytest.skip("no namespaces for an unprivileged user here; the audit hook is the only layer")
    project_file = Path(__file__).resolve().parents[1] / "pyproject.toml"
    probe = (f"import os\ntry:\n    os.stat({str(project_file)!r})\n    print('visible')\n"
             "except OSError:\n    print('hidden')\n")
    result = run_python(probe, "", LIMITS)
    assert result.outcome == "ok", result.stderr
    assert "network namespace" in result.isolation
    assert result.stdout.strip() == "hidden"
