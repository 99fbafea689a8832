"""Each domain brings its own ``rac-fw`` commands and MCP tools through the one plugin registration
(``Domain.commands`` / ``Domain.tools``); the CLI and the server only iterate the registered domains.

The sets are pinned here (as Zephyr's test_imports.py pins its imports): a command or tool that
appears, vanishes or moves to another domain must change this file too.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from mcp import Client

from rac_fw.cli import build_app
from rac_fw.cli.domains import contributions
from rac_fw.domain import domain_names, load_domain
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
    contributed = {path.split()[0] for paths in COMMANDS.values() for path in paths}
    assert sorted(app.commands) == sorted({*GENERIC_COMMANDS, *contributed})
    calibrate = app.commands["calibrate"]
    assert isinstance(calibrate, typer.core.TyperGroup)
    assert sorted(calibrate.commands) == ["firmware", "logic", "pcb", "scheduling"]


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
