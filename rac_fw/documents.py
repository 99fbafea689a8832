"""Reading the documents people and agents hand to rac-fw (actions, plans): JSON or YAML, with every
problem reported as located evidence — the file, and the line and column of a syntax error — so a
malformed file is answered with where and why, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from rac_fw.contract import Evidence

#: libyaml's safe loader when available (several times faster), else the pure-Python one.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class DocumentError(ValueError):
    """A document could not be read or parsed; ``evidence`` locates the problem."""

    def __init__(self, evidence: list[Evidence]):
        self.evidence = evidence
        super().__init__("; ".join(e.message for e in evidence))


def read_document(path: Path | str, what: str = "file") -> Any:
    """Parse ``path`` as JSON (``.json``) or YAML (anything else); ``what`` names it in messages.

    A file over the ``plan_bytes`` limit is refused (``E_TOO_LARGE``) before it is read.
    """
    from rac_fw.limits import LimitExceeded, check_count

    path = Path(path)
    where = str(path)
    try:
        if path.is_file():  # bounded before reading: a huge file is refused, not parsed
            check_count("plan_bytes", path.stat().st_size, where, f"the {what}'s size in bytes")
    except LimitExceeded as exc:
        raise DocumentError([exc.evidence()]) from None
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DocumentError([Evidence(code="E_FILE", message=f"{what} not found: {where}", location=where)]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError([Evidence(code="E_FILE", message=f"cannot read {what}: {exc}", location=where)]) from None
    try:
        return json.loads(text) if path.suffix.lower() == ".json" else yaml.load(text, Loader=_Loader)
    except json.JSONDecodeError as exc:
        location = f"{where}: line {exc.lineno}, column {exc.colno}"
        message = f"malformed JSON: {exc.msg}"
        raise DocumentError([Evidence(code="E_SYNTAX", message=message, location=location)]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "unknown position"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise DocumentError(
            [Evidence(code="E_SYNTAX", message=f"malformed YAML: {problem}", location=f"{where}: {at}")]
        ) from None
