"""Each domain brings its own ``rac-fw`` commands and MCP tools through the one plugin registration
(``Domain.commands`` / ``Domain.tools``); the CLI and the server only iterate the registered domains.

The sets are pinned here (as Zephyr's test_imports.py pins its imports): a command or tool that
appears, vanishes or moves to another domain must change this file too.
"""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import sys
from pathlib import Path

import typer
from mcp import Client

from rac_fw.cli import GENERIC, build_app
from rac_fw.cli.domains import contributions
from rac_fw.cli.lazy import LazyGroup
from rac_fw.domain import Command, domain_names, load_domain
from rac_fw.mcp.server import ServerConfig, SessionStore, Tools, build_server

COMMANDS = {
    "firmware": ["build", "calibrate firmware", "doctor", "hil", "plan", "targets", "verify"],
    "logic": ["calibrate logic"],
    "pcb": ["calibrate pcb", "pcb"],
    "scheduling": ["calibrate scheduling", "scheduling"],
}
GENERIC_COMMANDS = ["domains", "eval", "observe", "replay", "report", "schema", "serve", "submit", "tasks"]

TOOLS = {
    "firmware": ["build", "flash", "list_targets", "plan", "run", "submit_firmware"],
    "logic": ["submit_logic"],
    "pcb": ["submit_pcb"],
    "pcb_candidates": ["submit_pcb_candidates"],
    "pcb_coord": ["submit_pcb_coord"],
    "pcb_coord_py": ["submit_pcb_coord_py"],
    "pcb_req": ["submit_pcb_req"],
    "pcb_seq": ["submit_pcb_seq"],
    "scheduling": ["submit_scheduling"],
}
GENERIC_TOOLS = ["list_domains", "list_tasks", "observe", "schema", "session_info", "start_episode", "submit"]


def test_each_domain_contributes_its_pinned_commands() -> None:
    found = contributions()
    assert found.clashes == []
    assert {d: sorted(c.path for c in cs) for d, cs in found.by_domain.items()} == COMMANDS


def test_the_app_is_the_generic_commands_plus_the_domains() -> None:
    app = typer.main.get_group(build_app())
    assert isinstance(app, LazyGroup)
    contributed = {path.split()[0] for paths in COMMANDS.values() for path in paths}
    assert sorted(app.commands) == sorted({*GENERIC_COMMANDS, *contributed})
    calibrate = app.load("calibrate")
    assert isinstance(calibrate, typer.core.TyperGroup)
    assert sorted(calibrate.commands) == ["firmware", "logic", "pcb", "scheduling"]


def _help_of(command: Command) -> str:
    """The first paragraph of the help the command shows itself (its docstring, or its group's help)."""
    target = command.load()
    text = target.info.help if isinstance(target, typer.Typer) else inspect.getdoc(target)
    return " ".join((text or "").split("\n\n")[0].split())


def test_each_listed_summary_is_the_commands_own_first_line() -> None:
    """``rac-fw --help`` shows a row's summary without importing the command: it must say what the
    command's own help says first (the row and the docstring cannot drift apart)."""
    rows = [*GENERIC, *(c for cs in contributions().by_domain.values() for c in cs)]
    assert len(rows) == len(GENERIC_COMMANDS) + sum(len(paths) for paths in COMMANDS.values())
    for row in rows:
        assert row.summary == _help_of(row), row.path


def _modules_after(*args: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``rac-fw ARGS`` (the cold-start import set)."""
    probe = ("import sys\nfrom typer.testing import CliRunner\nfrom rac_fw.cli import app\n"
             f"result = CliRunner().invoke(app, {list(args)!r})\n"
             "assert result.exit_code in (0, 1), result.output\n"
             "print('\\n'.join(sorted(sys.modules)))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return set(run.stdout.split())


HEAVY = ("numpy", "numba", "shapely", "ortools", "sympy", "matplotlib", "scipy", "mcp")


def test_listing_the_commands_imports_no_command_module_and_no_model() -> None:
    loaded = _modules_after("--help")
    assert not {m for m in loaded if m.split(".")[0] in (*HEAVY, "pydantic", "jinja2", "yaml")}
    ours = {m for m in loaded if m.startswith("rac_fw.")}
    assert not {m for m in ours if ".cli." in m and not m.startswith(("rac_fw.cli.lazy", "rac_fw.cli.domains"))}
    assert {m for m in ours if m.startswith("rac_fw.domains.")} <= {
        f"rac_fw.domains.{d}" for d in ("firmware", "logic", "pcb", "scheduling")} | {
        m for m in ours if m.endswith((".domain", ".baselines", ".backends", ".sandbox"))}


def test_a_cold_plan_imports_only_what_planning_needs(tmp_path: Path) -> None:
    loaded = _modules_after("plan", str(Path(__file__).parents[1] / "examples" / "uart_hello.yaml"),
                            "--target", "stm32f407", "--framework", "baremetal")
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}
    other = {m for m in loaded if m.startswith("rac_fw.domains.") and not m.startswith("rac_fw.domains.firmware")}
    assert {m for m in other if not m.endswith((".domain", ".baselines", ".backends", ".sandbox"))} <= {
        f"rac_fw.domains.{d}" for d in ("logic", "pcb", "scheduling")}
    assert not {m for m in loaded if m.startswith(("rac_fw.eval", "rac_fw.report", "rac_fw.mcp"))}


def test_each_domain_contributes_its_pinned_tools(tmp_path: Path) -> None:
    host = Tools(SessionStore(ServerConfig(workdir=tmp_path)))
    assert {name: sorted(t.name for t in load_domain(name).tools(host)) for name in domain_names()} == TOOLS


def test_a_client_sees_the_generic_tools_plus_the_domains(tmp_path: Path) -> None:
    """The tool list a real MCP client receives from the server (in-process transport)."""

    async def names() -> list[str]:
        async with Client(build_server(ServerConfig(workdir=tmp_path))) as client:
            return sorted(t.name for t in (await client.list_tools()).tools)

    expected = sorted({*GENERIC_TOOLS, *(t for tools in TOOLS.values() for t in tools)})
    assert asyncio.run(names()) == expected
