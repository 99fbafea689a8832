"""Progress on long work (calibrations, bench/matrix runs, builds): a rich bar on stderr for people.

Quiet by construction where a program reads the output: nothing is drawn when stderr is not a
terminal (CI logs, pipes, an MCP client) or when the command was asked for ``--json``, so stdout
carries exactly the result. Usage, from any CLI module::

    with progress("calibrating scheduling", total=len(tasks), quiet=as_json) as bar:
        for task in tasks:
            bar.advance(task)          # one step done; the label shows what was done last
            ...

or ``for task in track(tasks, "calibrating", quiet=as_json, label=str): ...``. A step count that is
not known up front (``total=None``, e.g. one build) shows a spinner with the elapsed time instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from rac_fw.console.output import err_console

T = TypeVar("T")


class Steps:
    """The handle a ``progress`` block advances (a no-op when the bar is quiet)."""

    def __init__(self, bar: Progress, task: TaskID, description: str):
        self._bar, self._task, self._description = bar, task, description

    def advance(self, label: str | None = None) -> None:
        """One step done; ``label`` names it (shown after the description)."""
        shown = f"{self._description}: {label}" if label else self._description
        self._bar.update(self._task, advance=1, description=shown)

    def label(self, label: str) -> None:
        """Say what is being worked on now, without counting a step."""
        self._bar.update(self._task, description=f"{self._description}: {label}")


def enabled(quiet: bool = False) -> bool:
    """Whether a bar would be drawn: stderr is a terminal and the caller is not in ``--json`` mode."""
    return not quiet and err_console.is_terminal


@contextmanager
def progress(description: str, total: int | None = None, *, quiet: bool = False) -> Iterator[Steps]:
    """A progress bar (or, without ``total``, a spinner with elapsed time) for the block's work."""
    columns = (
        [SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn()]
        if total is None
        else [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    )
    bar = Progress(*columns, console=err_console, transient=True, disable=not enabled(quiet))
    with bar:
        yield Steps(bar, bar.add_task(description, total=total), description)


def track(
    items: Iterable[T],
    description: str,
    *,
    total: int | None = None,
    quiet: bool = False,
    label: Callable[[T], str] | None = None,
) -> Iterator[T]:
    """Iterate ``items`` under a progress bar; each item counts as one step once the loop body ran."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with progress(description, total, quiet=quiet) as steps:
        for item in items:
            if label is not None:
                steps.label(label(item))
            yield item
            steps.advance(label(item) if label else None)
