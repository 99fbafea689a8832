"""``rac-fw eval``: run a model (or a scripted agent) through a domain interface and report."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Filled in by the evaluation harness (rac_fw.eval)."""
