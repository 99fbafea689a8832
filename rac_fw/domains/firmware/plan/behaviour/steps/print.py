"""``print``: one console line of text with formatted values (``print: "item {i} sum={sum}"``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import Field

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.evaluate import UNKNOWN
from rac_fw.domains.firmware.plan.behaviour.fields import Text, _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import StepSpec
from rac_fw.domains.firmware.plan.behaviour.trace import Line, literal
from rac_fw.domains.firmware.plan.behaviour.types import VType, fixed, int_range
from rac_fw.domains.firmware.plan.evidence import relax, replace
from rac_fw.domains.firmware.plan.paths import format_path

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine

#: A placeholder's format: d (decimal), x/X (hex), a zero-padded width (08x, 3d), .N decimals (f32), hex (bytes).
_FORMAT = re.compile(r"^(?:(?P<zero>0)?(?P<width>[1-9])?(?P<base>[dxX])?|\.(?P<dec>[0-6])|(?P<hex>hex))$")
#: Characters a console line can take at most, beyond which a print is refused.
MAX_LINE = 200


class PrintStep(_Closed):
    """Print one console line: text with ``{expr}`` / ``{expr:fmt}`` values (d, x, 08x, .2, hex)."""

    print: Text = Field(description="The line; {expr} inserts a value, {{ and }} are braces.")


class Unbalanced(ValueError):
    """A brace that opens or closes no placeholder; ``repaired`` is the text with that brace written literally."""

    def __init__(self, message: str, repaired: str):
        super().__init__(message)
        self.repaired = repaired


def split(text: str) -> list[tuple[str, str, str]]:
    """``("text", literal, "")`` and ``("value", expression, format)`` parts of a print's text."""
    parts: list[tuple[str, str, str]] = []
    literal = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if text.startswith("{{", i) or text.startswith("}}", i):
            literal += ch
            i += 2
            continue
        if ch == "}":
            raise Unbalanced(f"unmatched '}}' at column {i + 1} (write '}}}}' for a brace)", text[:i] + "}" + text[i:])
        if ch == "{":
            end = text.find("}", i)
            if end < 0:
                raise Unbalanced(f"unclosed '{{' at column {i + 1}", text[:i] + "{" + text[i:])
            inner = text[i + 1 : end]
            expression, _, fmt = inner.partition(":")
            if not expression.strip():
                literal_braces = text[:i] + "{{" + inner + "}}" + text[end + 1 :]
                raise Unbalanced(f"empty placeholder at column {i + 1}", literal_braces)
            if literal:
                parts.append(("text", literal, ""))
                literal = ""
            parts.append(("value", expression.strip(), fmt.strip()))
            i = end + 1
            continue
        literal += ch
        i += 1
    if literal:
        parts.append(("text", literal, ""))
    return parts


def _fmt_ok(t: VType, fmt: str) -> str | None:
    """Why ``fmt`` does not fit a value of type ``t`` (None when it does)."""
    m = _FORMAT.match(fmt)
    if fmt and m is None:
        return f"unknown format {fmt!r} (d, x, X, 08x, .2, hex)"
    if t.kind == "bytes":
        return None if fmt in ("", "hex") else "bytes print as hex"
    if t.kind == "float":
        return None if fmt == "" or (m and m.group("dec")) else "an f32 prints with .N decimals"
    if m and (m.group("dec") or m.group("hex")):
        return f"{fmt} is for {'f32' if m.group('dec') else 'bytes'} values"
    if t.kind in ("bool", "state") and fmt:
        return f"a {t.kind} prints as its name, without a format"
    return None


def width(t: VType, fmt: str) -> int:
    """The most characters one value prints."""
    m = _FORMAT.match(fmt or "")
    pad = int(m.group("width")) if m and m.group("width") else 0
    if t.kind == "bytes":
        return 2 * t.size
    if t.kind == "float":
        return 14 + int((m.group("dec") if m and m.group("dec") else None) or 2)
    if t.kind == "bool":
        return 5
    if t.kind == "state":
        return 32
    hexa = bool(m and m.group("base") in ("x", "X"))
    digits = (t.bits + 3) // 4 if hexa else len(str(int_range(t)[0 if t.signed else 1])) + 1
    return max(pad, digits)


def render_value(value: Any, t: VType, fmt: str, states: list[str]) -> str:
    """The text the device prints for ``value`` (the C formatter's rules)."""
    m = _FORMAT.match(fmt or "")
    if t.kind == "bytes":
        return "".join(f"{b:02x}" for b in value)
    if t.kind == "float":
        return fixed(value, int(m.group("dec")) if m and m.group("dec") else 2)
    if t.kind == "bool":
        return "true" if value else "false"
    if t.kind == "state":
        return states[value]
    base = m.group("base") if m else None
    pad = int(m.group("width")) if m and m.group("width") else 0
    if base in ("x", "X"):
        text = f"{value & ((1 << t.bits) - 1) if t.bits <= 32 else value:x}"
        text = text.upper() if base == "X" else text
    else:
        text = str(value)
    fill = "0" if m and m.group("zero") else " "
    if fill == "0" and text.startswith("-"):
        return "-" + text[1:].rjust(pad - 1, "0")
    return text.rjust(pad, fill)


def pattern_for(t: VType, fmt: str, states: list[str]) -> str:
    """The regex of a value the plan does not determine."""
    m = _FORMAT.match(fmt or "")
    if t.kind == "bytes":
        return "(?:[0-9a-f]{2})*"
    if t.kind == "float":
        return r"(?:-?\d+(?:\.\d+)?|nan|-?inf)"
    if t.kind == "bool":
        return "(?:true|false)"
    if t.kind == "state":
        return "(?:" + "|".join(re.escape(s) for s in states) + ")"
    if m and m.group("base") in ("x", "X"):
        return " *[0-9a-fA-F]+"
    return r" *-?\d+"


def _compile(c: Compiler, text: str, path: list[str | int]) -> ir.Stmt:
    stmt = ir.Stmt("print", format_path(path), data={"parts": []})
    try:
        parts = split(text)
    except Unbalanced as exc:
        c.error("E_BEHAVIOUR_FORMAT", f"{text!r}: {exc}", path, [text],
                [relax("print the brace literally", replace(path, exc.repaired))])  # fmt: skip
        return stmt
    for kind, body, fmt in parts:
        if kind == "text":
            stmt.data["parts"].append(("text", body, ""))
            continue
        key = f"v{len(stmt.exprs)}"
        typed = c.expr(body, path)
        if typed is None:
            continue
        problem = _fmt_ok(typed.type, fmt)
        if problem is not None:
            plain = re.sub(r"\{\s*" + re.escape(body) + r"\s*:[^}]*\}", "{" + body.replace("\\", "\\\\") + "}", text,
                           count=1)
            c.error("E_BEHAVIOUR_FORMAT", f"{{{body}:{fmt}}}: {problem}", path, [body],
                    [relax(f"print {body} in its default format", replace(path, plain))])  # fmt: skip
            continue
        stmt.exprs[key] = typed
        stmt.data["parts"].append(("value", key, fmt))
    return stmt


def line_length(stmt: ir.Stmt) -> int:
    return sum(len(body) if kind == "text" else width(stmt.exprs[body].type, fmt)
               for kind, body, fmt in stmt.data["parts"])  # fmt: skip


def line_bytes(triggers: list[ir.Trigger], states: list[ir.State]) -> int:
    """The line buffer a behaviour needs: its longest ``print``, plus the terminator (at least 16)."""
    stmts = [s for t in triggers for s in ir.walk(t.body)]
    stmts += [s for st in states for s in ir.walk(st.entry + st.exit)]
    longest = max((line_length(s) for s in stmts if s.kind == "print"), default=0)
    return max(16, min(longest, MAX_LINE) + 1)


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    text, pattern, exact = "", "", True
    for kind, body, fmt in stmt.data["parts"]:
        if kind == "text":
            text += body
            pattern += literal(body)
            continue
        e = stmt.exprs[body]
        value = m.value(e)
        if value is UNKNOWN:
            exact = False
            pattern += pattern_for(e.type, fmt, m.state_names)
        else:
            shown = render_value(value, e.type, fmt, m.state_names)
            text += shown
            pattern += literal(shown)
    m.emit(Line("^" + pattern + "$", stmt.path, text if exact else None))


def _cost(stmt: ir.Stmt, costs: Any) -> float:
    return costs.console_ms(line_length(stmt) + 2)


STEP = StepSpec(PrintStep, _compile, _predict, blocking=True, cost_ms=_cost)
