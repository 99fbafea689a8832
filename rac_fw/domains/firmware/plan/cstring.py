"""The one way a plan string reaches generated C: as a fully escaped, format-safe string literal.

Every lowering emits plan text (messages, labels) through :func:`c_string_literal`, never by pasting
it into a template, so a hostile plan cannot close the literal, inject a format directive, form a
trigraph or smuggle control bytes into the source.
"""

from __future__ import annotations

_NAMED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "%": "%%"}


def c_string_literal(text: str) -> str:
    """Return ``text`` as a double-quoted C literal that is also safe as a printf-style format.

    Backslashes and quotes are escaped, ``%`` is doubled (the literal may be the format argument of
    ``printk``/``printf``/``LOG_INF``; pass it as the format, not as a ``%s`` argument), ``??`` is
    broken as ``?\\?`` so no trigraph forms, and every byte outside printable ASCII (after UTF-8
    encoding) becomes a three-digit octal escape, which unlike ``\\x`` cannot swallow the next char.
    """
    out: list[str] = []
    previous = ""
    for char in text:
        if char in _NAMED:
            out.append(_NAMED[char])
        elif char == "?" and previous == "?":
            out.append("\\?")
        elif " " <= char <= "~":
            out.append(char)
        else:
            out.extend(f"\\{byte:03o}" for byte in char.encode("utf-8"))
        previous = char
    return '"' + "".join(out) + '"'


def c_data_literal(text: str) -> str:
    """``text`` as a double-quoted C literal of *data* (never a format): escaped like
    :func:`c_string_literal` but ``%`` kept as one byte, so the device holds exactly the plan's bytes."""
    return c_string_literal(text.replace("%", "\x00")).replace("\\000", "%")
