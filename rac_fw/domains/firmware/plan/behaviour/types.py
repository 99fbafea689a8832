"""Value types of the behaviour layer and their exact arithmetic, shared by the C rendering and the predictor.

Integers wrap to their width in two's complement (the C side computes through the unsigned type of the
same width, so signed overflow is never undefined behaviour); division and remainder by zero give 0;
``f32`` is IEEE single precision, rounded after every operation exactly as the FPU does. The predictor
(``predict.py``) calls the same functions, so a value the plan determines is the value the device prints.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Literal

from rac_fw.domains.firmware.plan.behaviour.units import Unit

Kind = Literal["bool", "int", "float", "bytes", "state"]

#: Type names an agent writes, and what they mean.
INT_TYPES: dict[str, tuple[int, bool]] = {
    "u8": (8, False), "u16": (16, False), "u32": (32, False),
    "i8": (8, True), "i16": (16, True), "i32": (32, True),
}  # fmt: skip
TYPE_NAMES = ("bool", *INT_TYPES, "f32", "bytes")


@dataclass(frozen=True)
class VType:
    """A value's type: its kind, integer width and signedness, unit, and a byte buffer's capacity."""

    kind: Kind
    bits: int = 32
    signed: bool = True
    unit: Unit | None = None
    size: int = 0
    """Capacity in bytes of a ``bytes`` value (its length is kept beside it, ≤ size)."""

    @property
    def name(self) -> str:
        if self.kind == "int":
            return f"{'i' if self.signed else 'u'}{self.bits}"
        if self.kind == "float":
            return "f32"
        if self.kind == "bytes":
            return f"bytes[{self.size}]"
        return self.kind

    def described(self) -> str:
        return self.name + (f" {self.unit.symbol}" if self.unit else "")

    @property
    def numeric(self) -> bool:
        return self.kind in ("int", "float")

    def with_unit(self, unit: Unit | None) -> VType:
        return VType(self.kind, self.bits, self.signed, unit, self.size)

    @property
    def c_type(self) -> str:
        """The C type of a scalar of this type (a ``bytes`` value is a ``uint8_t`` array plus a length)."""
        if self.kind == "int":
            return f"{'int' if self.signed else 'uint'}{self.bits}_t"
        if self.kind == "float":
            return "float"
        if self.kind == "bool":
            return "bool"
        if self.kind == "state":
            return "uint8_t"
        return "uint8_t"

    @property
    def storage_bytes(self) -> int:
        if self.kind == "bytes":
            return self.size + 2
        if self.kind == "int":
            return self.bits // 8
        return 4 if self.kind == "float" else 1


BOOL = VType("bool", bits=1, signed=False)
I32 = VType("int", 32, True)
U32 = VType("int", 32, False)
I64 = VType("int", 64, True)
"""Only internal: the exact comparison of two integers."""
F32 = VType("float", 32, True)


def parse_type(name: str, size: int | None = None) -> VType:
    """The type an agent's ``type:`` names (``u8`` … ``i32``, ``bool``, ``f32``, ``bytes`` with a size)."""
    if name in INT_TYPES:
        bits, signed = INT_TYPES[name]
        return VType("int", bits, signed)
    if name == "bool":
        return BOOL
    if name == "f32":
        return F32
    if name == "bytes":
        return VType("bytes", 8, False, size=size or 0)
    raise KeyError(name)


def int_range(t: VType) -> tuple[int, int]:
    """The smallest and largest value of an integer type."""
    if t.signed:
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def wrap(value: int, t: VType) -> int:
    """``value`` reduced to ``t``'s width in two's complement (C's conversion through the unsigned type)."""
    masked = value & ((1 << t.bits) - 1)
    if t.signed and masked >= 1 << (t.bits - 1):
        masked -= 1 << t.bits
    return masked


def f32(value: float) -> float:
    """``value`` rounded to IEEE single precision (what a ``float`` holds after each operation)."""
    if math.isnan(value) or math.isinf(value):
        return value
    try:
        return float(struct.unpack("<f", struct.pack("<f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def joined(a: VType, b: VType) -> VType:
    """The type both operands of an arithmetic or bit operation are computed in.

    float if either is float; else the wider integer, signed if either is signed (``u32`` with ``i32``
    computes in ``i32``: the plan's counters are far from 2^31, and a mixed comparison is done exactly).
    """
    if a.kind == "float" or b.kind == "float":
        return F32
    bits = max(a.bits if a.kind == "int" else 32, b.bits if b.kind == "int" else 32, 32)
    signed = (a.kind == "int" and a.signed) or (b.kind == "int" and b.signed)
    return VType("int", bits, signed)


def trunc_div(a: int, b: int) -> int:
    """C integer division (truncates toward zero); 0 when ``b`` is 0."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def trunc_mod(a: int, b: int) -> int:
    """C remainder (the sign of the dividend); 0 when ``b`` is 0."""
    if b == 0:
        return 0
    return a - trunc_div(a, b) * b


#: Beyond this magnitude a float scaled to its decimals no longer fits the 64-bit integer the C formatter uses.
FIXED_LIMIT = 9.2e18


def fixed(value: float, decimals: int) -> str:
    """A float printed with ``decimals`` decimals, rounding half away from zero (the C helper's rule); NaN prints
    ``nan`` and a value too large for the format (infinity included) ``inf`` or ``-inf``."""
    if math.isnan(value):
        return "nan"
    scale = 10**decimals
    scaled = value * scale
    if scaled >= FIXED_LIMIT or scaled <= -FIXED_LIMIT:
        return "inf" if scaled > 0 else "-inf"
    whole = int(scaled - 0.5) if scaled < 0 else int(scaled + 0.5)
    sign = "-" if whole < 0 else ""
    whole = abs(whole)
    if decimals == 0:
        return f"{sign}{whole}"
    return f"{sign}{whole // scale}.{whole % scale:0{decimals}d}"
