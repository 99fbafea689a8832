"""Where the shipped data lives: fact packs, templates, examples and the Zephyr app skeleton.

In a source checkout (or an editable install) they are the top-level ``targets/``, ``templates/``,
``examples/`` and ``zephyr_app/`` folders; a wheel carries the same folders under ``rac_fw/_data/``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """Path of a shipped data folder (``targets``, ``templates``, ``examples``, ``zephyr_app``)."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"rac-fw data folder {name!r} is missing from this installation")
