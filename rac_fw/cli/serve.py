"""``rac-fw serve mcp``: run the MCP server over stdio (default) or streamable HTTP on loopback."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from rac_fw.runtime import DEFAULT_BUDGET

serve_app = typer.Typer(help="Serve rac-fw to agent harnesses.", no_args_is_help=True)


@serve_app.command("mcp")
def serve_mcp(
    http: Annotated[bool, typer.Option("--http", help="Streamable HTTP instead of stdio.")] = False,
    host: Annotated[str, typer.Option(help="HTTP bind address (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="HTTP port.")] = 8765,
    budget: Annotated[int, typer.Option(min=1, help="Proposals per episode, enforced by the server.")] = DEFAULT_BUDGET,
    workdir: Annotated[Path | None, typer.Option(help="Where sessions keep traces and artifacts.")] = None,
    allow_flash: Annotated[bool, typer.Option("--allow-flash", help="Let `flash` write to bench boards.")] = False,
    bench: Annotated[Path | None, typer.Option(help="Bench file naming the boards that may be flashed.")] = None,
) -> None:
    """Start the MCP server (tools: list_tasks, observe, schema, start_episode, submit, plan, build, run, flash)."""
    from rac_fw.mcp.server import ServerConfig, build_server

    root = workdir or Path(".rac-fw") / "mcp" / time.strftime("%Y%m%d-%H%M%S")
    server = build_server(ServerConfig(workdir=root, budget=budget, allow_flash=allow_flash, bench=bench))
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        server.run("stdio")


def register(app: typer.Typer) -> None:
    app.add_typer(serve_app, name="serve")
