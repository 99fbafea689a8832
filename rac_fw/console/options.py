"""Options several commands share (``--limit``), and what applying them does."""

from __future__ import annotations

from typing import Annotated

import typer

from rac_fw.console.output import fail_with
from rac_fw.contract import Evidence
from rac_fw.limits import Limits, parse_overrides, set_limits

LimitOption = Annotated[list[str] | None, typer.Option(
    "--limit", metavar="NAME=VALUE", help="Override an input limit (see docs/PROTOCOL.md), e.g. operations=4096.")]


def configure_limits(items: list[str] | None, as_json: bool = False) -> None:
    """Apply ``--limit`` overrides on top of ``RAC_FW_LIMITS``; a bad override is invalid usage (exit 2)."""
    import os

    try:
        env = parse_overrides([os.environ.get("RAC_FW_LIMITS", "")])
        set_limits(Limits().with_overrides({**env, **parse_overrides(items or [])}))
    except ValueError as exc:
        fail_with([Evidence(code="E_USAGE", message=str(exc), location="--limit / RAC_FW_LIMITS")], as_json=as_json)
