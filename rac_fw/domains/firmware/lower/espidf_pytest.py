"""The predicted console of a behaviour as pytest-embedded expectations (``pytest_rac_fw_app.py``).

pytest-embedded's ``dut.expect`` searches forward in the console for a regex and skips whatever comes before
it, so a predicted trace (``behaviour/trace.py``) becomes the lines such a search can wait for in order:
each ``Line``; a ``Repeat`` its fewest runs (more are skipped while waiting for the next line); a ``Choice``
one alternation of its options' first lines (nothing when an option may print none); an ``Open`` nothing
(the search skips it anyway). A trace line is anchored ``^…$`` against one line: the test compiles it with
``re.MULTILINE`` and lets a ``\\r`` end the line (ESP-IDF's console turns ``\\n`` into ``\\r\\n``).
"""

from __future__ import annotations

import math
from typing import Any

from rac_fw.domains.firmware.plan.behaviour.console import predicted
from rac_fw.domains.firmware.plan.behaviour.trace import Choice, Item, Line, Repeat

#: What each wait allows beyond the behaviour's predicted duration: boot, set-up and the host's serial latency.
SETUP_S = 60


def _on_console(pattern: str) -> str:
    """A trace regex (``^…$``) as it matches one line of a console that ends lines with ``\\r\\n``."""
    return pattern[:-1] + r"\r?$" if pattern.endswith("$") and not pattern.endswith(r"\$") else pattern


def in_order(items: list[Item] | tuple[Item, ...]) -> list[str]:
    """The regexes a forward search can wait for, in order, that every run the trace admits prints."""
    out: list[str] = []
    for item in items:
        if isinstance(item, Line):
            out.append(_on_console(item.pattern))
        elif isinstance(item, Repeat):
            out.extend(in_order(item.items) * item.lo)
        elif isinstance(item, Choice):
            firsts = [in_order(option)[:1] if option and isinstance(option[0], Line) else [] for option in item.options]
            if all(firsts):
                out.append("(?:" + "|".join(f[0] for f in firsts) + ")")
    return out


def expectations(plan: Any, target: Any) -> tuple[list[str], int] | None:
    """The behaviour's whole predicted console as ordered regexes and the seconds each wait allows (the set-up
    allowance plus the behaviour's predicted duration); None without a behaviour."""
    guess = predicted(plan, target, "espidf") if plan.behaviour is not None else None
    if guess is None:
        return None
    return in_order(guess.items), SETUP_S + math.ceil(guess.prediction.elapsed_ms / 1000)
