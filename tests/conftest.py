"""Shared test fixtures: where the read-only ``../shared`` data lives, and tool requirements.

A test that needs a tool CI installs (arm-none-eabi-gcc, qemu-system-arm) must *fail* under CI=true
when the tool is missing, and may skip only on a developer machine without it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RAC_FW_SHARED", REPO.parent / "shared"))
IN_CI = os.environ.get("CI", "").lower() == "true"


def require_tool(name: str) -> str:
    """Return the tool's path; fail under CI=true when it is missing, else skip."""
    path = shutil.which(name)
    if path is None:
        message = f"{name} not found on PATH (.ci/run installs it)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        message = f"shared data not found at {SHARED} (set RAC_FW_SHARED)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return SHARED
