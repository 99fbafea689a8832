"""The functions an expression may call: their typing, their exact value (for the predictor) and their C.

Each function is declared once here; the type checker, the predictor and every C rendering ask this
table. The CRCs are the catalogued ones: CRC-8/SMBUS (poly 0x07, init 0), CRC-16/CCITT-FALSE (poly 0x1021,
init 0xFFFF) and CRC-32/ISO-HDLC (reflected poly 0xEDB88320, init and xorout 0xFFFFFFFF), each checked
against its check value over ``"123456789"`` (0xF4, 0x29B1, 0xCBF43926) in the tests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rac_fw.domains.firmware.plan.behaviour.types import F32, I32, U32, VType, f32, joined, wrap
from rac_fw.domains.firmware.plan.behaviour.units import UnitError, common

ArgKind = Literal["value", "window", "bytes"]


class FunctionError(ValueError):
    """A call that does not fit its function (arity, argument kinds, units)."""


@dataclass(frozen=True)
class Function:
    """One callable function of the expression language."""

    name: str
    args: tuple[ArgKind, ...]
    """What each argument must be: a numeric value, a window variable, or a bytes value."""
    doc: str
    result: Callable[[Sequence[VType]], VType]
    """The result type from the argument types (raises FunctionError or UnitError)."""
    evaluate: Callable[[Sequence[Any], VType], Any]
    """The exact value from the argument values (a window or bytes argument arrives as a list of values)."""
    c: str
    """The C call, ``{0}``, ``{1}``… the rendered arguments and ``{t}`` the result's C type suffix."""


def _numeric(types: Sequence[VType]) -> None:
    for t in types:
        if not t.numeric:
            raise FunctionError(f"expects numbers, got {t.described()}")


def _same_unit(types: Sequence[VType]) -> VType:
    _numeric(types)
    unit = None
    for t in types:
        unit = common(unit, t.unit)
    result = types[0]
    for t in types[1:]:
        result = joined(result, t)
    return result.with_unit(unit)


def _first(types: Sequence[VType]) -> VType:
    _numeric(types[:1])
    return types[0] if types[0].kind == "float" else joined(types[0], I32).with_unit(types[0].unit)


def _fsum(values: Sequence[Any]) -> float:
    """A float sum rounded to single precision after every addition (the C accumulator's ``float``)."""
    total = 0.0
    for v in values:
        total = f32(total + v)
    return total


def _mean(values: Sequence[Any], t: VType) -> Any:
    if not values:
        return 0
    if t.kind == "float":
        return f32(_fsum(values) / len(values))
    total = sum(values)
    count = len(values)
    q = abs(total) // count
    return wrap(q if total >= 0 else -q, t)


def _median(values: Sequence[Any], t: VType) -> Any:
    if not values:
        return 0
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def _scale(v: Sequence[Any], t: VType) -> Any:
    x, a, b, c, d = v
    if b == a:
        return wrap(int(c), t) if t.kind == "int" else f32(c)
    if t.kind == "float":
        return f32(c + (x - a) * (d - c) / (b - a))
    num = (x - a) * (d - c)
    q = abs(num) // abs(b - a)
    return wrap(c + (q if (num >= 0) == (b - a > 0) else -q), t)


def _scale_type(types: Sequence[VType]) -> VType:
    _numeric(types)
    common(common(types[0].unit, types[1].unit), types[2].unit)
    out = common(types[3].unit, types[4].unit)
    result = _same_unit([types[3].with_unit(None), types[4].with_unit(None)])
    if any(t.kind == "float" for t in types):
        result = F32
    return result.with_unit(out)


def crc8(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def crc16(data: bytes) -> int:
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc32(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xEDB88320 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


_U8, _U16 = VType("int", 8, False), VType("int", 16, False)

FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in (
        Function("min", ("value", "value"), "the smaller of two values", _same_unit,
                 lambda v, t: min(v), "RAC_B_MIN({0}, {1})"),
        Function("max", ("value", "value"), "the larger of two values", _same_unit,
                 lambda v, t: max(v), "RAC_B_MAX({0}, {1})"),
        Function("abs", ("value",), "the absolute value", _first,
                 lambda v, t: f32(abs(v[0])) if t.kind == "float" else wrap(abs(v[0]), t), "RAC_B_ABS({0})"),
        Function("clamp", ("value", "value", "value"), "x limited to [lo, hi]", _same_unit,
                 lambda v, t: min(max(v[0], v[1]), v[2]), "RAC_B_CLAMP({0}, {1}, {2})"),
        Function("scale", ("value",) * 5, "scale(x, a, b, c, d): x mapped linearly from [a, b] to [c, d]",
                 _scale_type, _scale, "rac_b_scale_{t}({0}, {1}, {2}, {3}, {4})"),
        Function("mean", ("window",), "the mean of a window's samples (integer mean truncates)",
                 lambda ts: ts[0], lambda v, t: _mean(v[0], t), "rac_b_mean_{t}(&{0})"),
        Function("median", ("window",), "the median of a window's samples (lower middle when even)",
                 lambda ts: ts[0], lambda v, t: _median(v[0], t), "rac_b_median_{t}(&{0})"),
        Function("sum", ("window",), "the sum of a window's samples",
                 lambda ts: ts[0] if ts[0].kind == "float" else VType("int", 32, ts[0].signed, ts[0].unit),
                 lambda v, t: _fsum(v[0]) if t.kind == "float" else wrap(sum(v[0]), t), "rac_b_sum_{t}(&{0})"),
        Function("lowest", ("window",), "the smallest sample in a window",
                 lambda ts: ts[0], lambda v, t: min(v[0]) if v[0] else 0, "rac_b_lowest_{t}(&{0})"),
        Function("highest", ("window",), "the largest sample in a window",
                 lambda ts: ts[0], lambda v, t: max(v[0]) if v[0] else 0, "rac_b_highest_{t}(&{0})"),
        Function("count", ("window",), "how many samples a window holds (≤ its size)",
                 lambda ts: U32, lambda v, t: len(v[0]), "{0}.count"),
        Function("len", ("bytes",), "the length of a bytes value", lambda ts: U32,
                 lambda v, t: len(v[0]), "{0}_len"),
        Function("crc8", ("bytes",), "CRC-8/SMBUS of a bytes value", lambda ts: _U8,
                 lambda v, t: crc8(bytes(v[0])), "rac_b_crc8({0}, {0}_len)"),
        Function("crc16", ("bytes",), "CRC-16/CCITT-FALSE of a bytes value", lambda ts: _U16,
                 lambda v, t: crc16(bytes(v[0])), "rac_b_crc16({0}, {0}_len)"),
        Function("crc32", ("bytes",), "CRC-32/ISO-HDLC of a bytes value", lambda ts: U32,
                 lambda v, t: crc32(bytes(v[0])), "rac_b_crc32({0}, {0}_len)"),
    )
}  # fmt: skip


def result_type(name: str, types: Sequence[VType]) -> VType:
    """The type of ``name(args…)``; FunctionError (kinds, arity) / UnitError (units) explain a misfit."""
    function = FUNCTIONS[name]
    if len(types) != len(function.args):
        raise FunctionError(f"{name} takes {len(function.args)} argument(s), got {len(types)}")
    try:
        return function.result(types)
    except UnitError as exc:
        raise UnitError(f"{name}: {exc}") from None
