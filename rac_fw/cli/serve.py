"""``rac-fw serve mcp``: run the MCP server over stdio (default) or streamable HTTP (loopback, or any
address with a bearer token)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from rac_fw.console.options import LimitOption, configure_limits
from rac_fw.console.output import fail_with
from rac_fw.contract import Evidence
from rac_fw.runtime import DEFAULT_BUDGET

serve_app = typer.Typer(help="Serve rac-fw to agent harnesses.", no_args_is_help=True)


@serve_app.command("mcp")
def serve_mcp(
    http: Annotated[bool, typer.Option("--http", help="Streamable HTTP instead of stdio.")] = False,
    host: Annotated[str, typer.Option(help="HTTP bind address (loopback by default; others need --token-file).")] = (
        "127.0.0.1"),
    port: Annotated[int, typer.Option(min=1, max=65535, help="HTTP port.")] = 8765,
    budget: Annotated[int, typer.Option(min=1, help="Proposals per episode, enforced by the server.")] = DEFAULT_BUDGET,
    workdir: Annotated[Path | None, typer.Option(help="Where sessions keep traces and artifacts.")] = None,
    allow_flash: Annotated[bool, typer.Option(
        "--allow-flash", help="Let `flash` and `run board:ID` reach bench boards.")] = False,
    bench: Annotated[Path | None, typer.Option(help="Bench file naming the boards that may be flashed.")] = None,
    token_file: Annotated[Path | None, typer.Option(
        "--token-file", help="HTTP: require 'Authorization: Bearer <token>'; a 'NAME TOKEN' line per client.")] = None,
    task_dir: Annotated[Path | None, typer.Option(
        "--task-dir", help="Where task files (scheduling instances) may be read from (else: ids only).")] = None,
    trace_key: Annotated[Path | None, typer.Option(
        "--trace-key", help="Sign every session's trace with this key (check: `rac-fw replay --key`).")] = None,
    limit: LimitOption = None,
) -> None:
    """Start the MCP server (tools: list_tasks, observe, schema, start_episode, submit, plan, build, run, flash)."""
    from rac_fw.mcp.http import ServeError, check_bind, load_tokens, serve_http
    from rac_fw.mcp.server import ServerConfig, build_server
    from rac_fw.trace import TraceError, load_key

    configure_limits(limit)
    try:
        tokens = load_tokens(token_file) if token_file is not None else None
        if http:
            check_bind(host, tokens)
        elif tokens is not None:
            fail_with([Evidence(code="E_USAGE", location="--token-file",
                                message="--token-file applies to --http only (stdio has one client: its parent)")])
        key = load_key(trace_key) if trace_key is not None else None
    except (ServeError, TraceError) as exc:
        fail_with(exc.evidence)
    root = workdir or Path(".rac-fw") / "mcp" / time.strftime("%Y%m%d-%H%M%S")
    server = build_server(ServerConfig(workdir=root, budget=budget, allow_flash=allow_flash, bench=bench,
                                       trace_key=key, task_dir=task_dir))
    if http:
        serve_http(server, host, port, tokens)
    else:
        server.run("stdio")
