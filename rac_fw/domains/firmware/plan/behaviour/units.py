"""Units of behaviour values: a dimension and a power-of-ten scale, so ``1.5V`` and ``1500mV`` are one value.

Only what firmware values carry is known: time, voltage, current, temperature, frequency, acceleration,
angular rate, pressure, humidity, distance and a ratio. Two values may be added, compared or assigned
when their dimensions agree; the coarser side is scaled to the finer one (``V`` → ``mV`` multiplies by
1000, exact for integers), and a conversion that would lose precision (``mV`` into a ``V`` variable) is
refused instead of truncating silently.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """A unit: what it measures (``dimension``) and its power-of-ten scale against the dimension's base."""

    symbol: str
    dimension: str
    exponent: int
    """``value_in_base = value × 10**exponent`` (``mV``: -3 against volts)."""


_TABLE: tuple[Unit, ...] = (
    Unit("s", "time", 0), Unit("ms", "time", -3), Unit("us", "time", -6),
    Unit("V", "voltage", 0), Unit("mV", "voltage", -3), Unit("uV", "voltage", -6),
    Unit("A", "current", 0), Unit("mA", "current", -3), Unit("uA", "current", -6),
    Unit("C", "temperature", 0), Unit("mC", "temperature", -3),
    Unit("Hz", "frequency", 0), Unit("kHz", "frequency", 3), Unit("MHz", "frequency", 6),
    Unit("mg", "acceleration", -3), Unit("g", "acceleration", 0),
    Unit("dps", "angular_rate", 0), Unit("mdps", "angular_rate", -3),
    Unit("Pa", "pressure", 0), Unit("hPa", "pressure", 2), Unit("kPa", "pressure", 3),
    Unit("pct", "ratio", 0), Unit("permille", "ratio", -1),
    Unit("mm", "distance", -3), Unit("cm", "distance", -2), Unit("m", "distance", 0),
    Unit("rh", "humidity", 0),
    Unit("B", "size", 0),
)  # fmt: skip

UNITS: dict[str, Unit] = {u.symbol: u for u in _TABLE}
#: Every unit symbol, for schemas and error messages.
SYMBOLS: tuple[str, ...] = tuple(u.symbol for u in _TABLE)


class UnitError(ValueError):
    """Two units cannot be combined (different dimensions, or a lossy conversion)."""


def unit(symbol: str | None) -> Unit | None:
    """The unit named ``symbol`` (None for a unitless value); KeyError for an unknown symbol."""
    return None if symbol is None else UNITS[symbol]


def common(a: Unit | None, b: Unit | None) -> Unit | None:
    """The unit two operands are compared/added in: the finer of two of one dimension.

    A unitless operand (a plain literal, a count) takes the other's unit. Different dimensions raise.
    """
    if a is None or b is None:
        return a or b
    if a.dimension != b.dimension:
        raise UnitError(f"{a.symbol} ({a.dimension}) and {b.symbol} ({b.dimension}) cannot be combined")
    return a if a.exponent <= b.exponent else b


def factor(source: Unit | None, into: Unit | None) -> int:
    """The integer a ``source`` value is multiplied by to express it in ``into`` (1 when either is None).

    Raises :class:`UnitError` when the dimensions differ or the conversion would divide (lose precision).
    """
    if source is None or into is None:
        return 1
    if source.dimension != into.dimension:
        raise UnitError(f"{source.symbol} ({source.dimension}) is not {into.symbol} ({into.dimension})")
    shift = source.exponent - into.exponent
    if shift < 0:
        raise UnitError(f"{source.symbol} into {into.symbol} would lose precision (divide by {10 ** -shift})")
    return 10**shift
