"""Scalar field types of the behaviour block: expressions, durations, printable text, payloads."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StringConstraints

from rac_fw.domains.firmware.plan.base import PlanModel
from rac_fw.domains.firmware.plan.fields import Name

#: An expression in the behaviour language (``expr.py``): parsed and typed by the tool, never pasted into C.
#: A YAML number or boolean is accepted too (``set: {count: 0}``).
Expr = Annotated[
    Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_ .+\-*/%&|^~<>=!(),\[\]]{1,240}$")] | int | float | bool,
    Field(description="expression: op_schema('expr')"),
]

#: A duration: a whole number with ``us``, ``ms`` or ``s``.
Duration = Annotated[
    str,
    StringConstraints(pattern=r"^[0-9]{1,9}(us|ms|s)$"),
    Field(description="A duration such as 250ms, 2s or 500us."),
]

Forever = Literal["forever"]

#: What ``print`` writes: printable text with ``{expr}`` or ``{expr:fmt}`` placeholders (``{{``/``}}`` are braces).
Text = Annotated[
    str,
    StringConstraints(pattern=r"^[\x20-\x7e]{1,160}$"),
    Field(description="Printable ASCII, ≤ 160 chars; {expr} or {expr:fmt} inserts a value (fmt: d, x, 02x, "
          ".2 for decimals, hex for bytes); {{ and }} are literal braces."),
]


class _Closed(PlanModel):
    model_config = ConfigDict(extra="forbid", frozen=True, serialize_by_alias=True, validate_by_name=True,
                              validate_by_alias=True)  # fmt: skip


class HexBytes(_Closed):
    """Bytes written as hex digits (spaces allowed): ``9f 00 00``."""

    hex: Annotated[str, StringConstraints(pattern=r"^([0-9a-fA-F]{2} ?){1,256}$")]


class TextBytes(_Closed):
    """The UTF-8 bytes of a text (no terminator)."""

    text: Annotated[str, StringConstraints(pattern=r"^[\x20-\x7e\t\r\n]{1,256}$")]


class FillBytes(_Closed):
    """``size`` bytes of one value (a fill pattern)."""

    fill: int = Field(ge=0, le=255)
    size: int = Field(ge=1, le=256)


class CounterBytes(_Closed):
    """``size`` bytes counting up from ``counter`` (wrapping at 256): 0, 1, 2 …"""

    counter: int = Field(ge=0, le=255)
    size: int = Field(ge=1, le=256)


class VarBytes(_Closed):
    """The current contents of a ``bytes`` variable."""

    var: Name


Payload = HexBytes | TextBytes | FillBytes | CounterBytes | VarBytes
"""Literal bytes for a transfer, a store or a comparison: hex, text, a fill, a counter, or a variable."""
