"""The one escaping layer: how text (plan text above all) is written into each kind of generated file.

A string from a plan reaches a generated file only through one of these functions, chosen by the
context it lands in; nothing is pasted into a template raw. Each function is exact: the tool that
reads the file (the C compiler, printf, Kconfig, dtc, a YAML or CSV reader) gets back the very bytes
the plan stated, or the function refuses (``ValueError``) when the context cannot carry them — the
plan model's patterns keep such text out, so a refusal here is a bug caught, never a plan's fault.

- :func:`c_string` — C string *data* (a payload, a path, a hash input, a ``%s`` argument): the literal's
  bytes are the text's UTF-8 bytes, ``%`` included as is.
- :func:`c_format` — a C literal passed as the *format* of ``printk``/``printf``/``LOG_*``/``snprintf``:
  as :func:`c_string`, with every ``%`` doubled so the text prints as written.
- C comments: no plan text goes into a comment (templates name the operation's symbol instead), so no
  comment escaper exists — text in a comment could only be made safe by altering it.
- :func:`kconfig_string` — a string value in ``prj.conf`` / ``sdkconfig.defaults``.
- :func:`dts_string` — a devicetree string property.
- :func:`yaml_string` — a YAML scalar (a devicetree binding's ``compatible``/``description``).
- :func:`csv_field` — one field of ``partitions.csv``.

No plan or fact text reaches a CMake file (the fuzzer in ``tests/test_escaping.py`` checks it), so
there is no CMake escaper.
"""

from __future__ import annotations

import json
from collections.abc import Callable

#: Characters with a short C escape (the rest of the non-printable bytes get octal escapes).
_C_NAMED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _c_literal(text: str, percent: str) -> str:
    """The text as a double-quoted C literal; ``percent`` is what a ``%`` becomes.

    ``??`` is written ``?\\?`` so no trigraph forms (``-std=c11`` compilers replace ``??=`` by ``#``),
    and every byte outside printable ASCII (after UTF-8 encoding) becomes a three-digit octal escape,
    which unlike ``\\x`` cannot swallow the character after it.
    """
    out: list[str] = []
    previous = ""
    for char in text:
        if char in _C_NAMED:
            out.append(_C_NAMED[char])
        elif char == "%":
            out.append(percent)
        elif char == "?" and previous == "?":
            out.append("\\?")
        elif " " <= char <= "~":
            out.append(char)
        else:
            out.extend(f"\\{byte:03o}" for byte in char.encode("utf-8"))
        previous = char
    return '"' + "".join(out) + '"'


def c_string(text: str) -> str:
    """``text`` as a C string literal holding exactly its UTF-8 bytes (data: never a format)."""
    return _c_literal(text, "%")


def c_format(text: str) -> str:
    """``text`` as a C literal that is the *format* argument of a printf-style call: it prints ``text``.

    Concatenate the tool's own conversions after it (``c_format(text) + ' " (%d)\\n"'``); never pass a
    :func:`c_string` as a format.
    """
    return _c_literal(text, "%%")


def _printable_line(text: str, context: str) -> str:
    bad = sorted({c for c in text if c < " " or c == "\x7f"})
    if bad:
        raise ValueError(f"a {context} cannot carry control characters {bad!r}")
    return text


def kconfig_string(text: str) -> str:
    """A Kconfig string value (``CONFIG_X="…"``): ``\\`` and ``"`` escaped, as kconfiglib reads them.

    Kconfig copies the value into ``autoconf.h``/``sdkconfig.h`` as a C literal with only those two
    escaped, so a control character (or a line break, which ends the assignment) is refused.
    """
    body = _printable_line(text, "Kconfig string").replace("\\", "\\\\").replace('"', '\\"')
    return f'"{body}"'


def dts_string(text: str) -> str:
    """A devicetree string (``prop = "…";``): dtc reads C escapes, so the C data literal is exact there too."""
    return c_string(text)


def yaml_string(text: str) -> str:
    """A double-quoted YAML scalar (JSON's string syntax, which YAML's double-quoted style reads)."""
    return json.dumps(text)


def csv_field(text: str) -> str:
    """One field of an ESP-IDF ``partitions.csv``. ESP-IDF's reader (``gen_esp32part.py``) splits lines on
    commas and strips each field, with no quoting, and drops ``#`` comments, so the only exact escape
    is none: text holding a comma, a quote, a ``#``, a control character or outer spaces is refused."""
    if any(c in text for c in ',"#') or text != text.strip():
        raise ValueError(f"{text!r} cannot be a partitions.csv field (no ',', '\"', '#' or outer spaces)")
    return _printable_line(text, "partitions.csv field")


#: The escapers by name: the lowerings' Jinja environments register them as filters, so a template that
#: writes text itself (``{{ v.compatible | yaml_string }}``) uses the same functions as the views.
FILTERS: dict[str, Callable[[str], str]] = {
    f.__name__: f for f in (c_string, c_format, kconfig_string, dts_string, yaml_string, csv_field)
}
