"""Field paths into a plan: the list form used by patches and the text form used in locations."""

from __future__ import annotations

from collections.abc import Sequence

PathPart = str | int


def format_path(parts: Sequence[PathPart]) -> str:
    """``["operations", 2, "baud"]`` → ``operations[2].baud`` (the location evidence carries)."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
