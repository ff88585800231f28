"""Accumulators for the Abelian-group aggregations (§2.3.1, §2.3.2, §2.3.4).

Each keeps the aggregate of a multiset of contributions under ``add(value)``
and ``remove(value)``, answers ``value()``, and keeps ``count``, the support
count: how many contributions are present, so the caller drops the group's
record when it reaches 0. Remove only what was added; removing from an empty
accumulator (or an absent nan or infinity) raises ValueError.

==========  ==================================  ==========
class       value()                             of nothing
==========  ==================================  ==========
Count       the number of contributions         0
IntSum      the exact int sum                   0
ExactSum    the float sum, rounded once         0.0
Mean        the sum divided by count, a float   None
==========  ==================================  ==========

Floating-point sums stay exact however long they are maintained; adding in
order would lose the 1.0 here:

>>> total = ExactSum()
>>> for v in (1e308, 1.0, -1e308):
...     total.add(v)
>>> total.value(), total.count, (1e308 + 1.0) - 1e308
(1.0, 3, 0.0)
>>> total.remove(1.0); total.value()
0.0
"""

from __future__ import annotations

import math

_SCALE = 1074       # every finite double is an integer multiple of 2**-1074
_MANTISSA = 53      # bits of a double's significand, the hidden bit included


class _Supported:
    """The support count; subclasses fold each value into their total with ``_fold(value, ±1)``."""

    def __init__(self):
        self.count = 0

    def add(self, value=None) -> None:
        self._fold(value, +1)
        self.count += 1

    def remove(self, value=None) -> None:
        if self.count == 0:
            raise ValueError(f"cannot remove {value!r}: the {type(self).__name__} is empty")
        self._fold(value, -1)
        self.count -= 1

    def _fold(self, value, sign: int) -> None:
        pass


class Count(_Supported):
    """``d = count()`` (§2.3.1): the support count is the aggregate; values are ignored.

    >>> c = Count(); c.add(); c.add("x"); c.remove()
    >>> c.value()
    1
    """

    def value(self) -> int:
        return self.count


class IntSum(_Supported):
    """``sum(x)`` over ints, the plain Abelian group (§2.3.2): add x, or add -x to remove it.

    >>> s = IntSum(); s.add(5); s.add(-2); s.add(5); s.remove(5)
    >>> s.value(), s.count
    (3, 2)
    """

    def __init__(self):
        super().__init__()
        self._total = 0

    def _fold(self, value: int, sign: int) -> None:
        self._total += sign * value

    def value(self) -> int:
        return self._total


class ExactSum(_Supported):
    """``sum(x)`` over floats (§2.3.4): kept exactly, rounded once on reading, like math.fsum.

    The paper's arbitrary-precision total is a Python int, ``_scaled``: the
    exact sum of the finite contributions times 2**1074 (ints are accepted and
    kept exactly too). Adding and removing are integer + and -, so a removal
    undoes its add exactly and no error accumulates. ``value()`` rounds to the
    nearest double, ties to even. nan, +inf and -inf contributions are counted
    apart so that they can be removed as well.

    Where math.fsum raises, or differs between Python versions, ``value()`` is:
      * nan if a nan is present, or both +inf and -inf (fsum raises ValueError);
      * else the infinity present, if one is;
      * ±inf if the exact finite sum rounds beyond the largest double (fsum
        raises OverflowError, even for 1e308 + 1e308 - 1e308, which is 1e308 here);
      * +0.0 if the exact sum is zero, even of -0.0s alone: the sum starts from
        +0.0 as Soufflé's does (and fsum's before Python 3.12).

    Invariants: ``_scaled == 2**1074 * Σ finite contributions``; ``_specials``
    counts the nan, inf and -inf contributions; ``count`` counts them all.

    >>> s = ExactSum(); s.add(float("inf")); s.add(5e-324); s.value()
    inf
    >>> s.remove(float("inf")); s.value()
    5e-324
    """

    def __init__(self):
        super().__init__()
        self._scaled = 0
        self._specials = {"nan": 0, "inf": 0, "-inf": 0}

    def _fold(self, value, sign: int) -> None:
        special = _special(value)
        if special is None:
            self._scaled += sign * _to_scaled(value)
        elif self._specials[special] + sign < 0:
            raise ValueError(f"cannot remove {value!r}: it is not a contribution of this sum")
        else:
            self._specials[special] += sign

    def value(self) -> float:
        nan, inf, minus_inf = self._specials.values()
        if nan or (inf and minus_inf):
            return math.nan
        if inf or minus_inf:
            return math.inf if inf else -math.inf
        return _to_float(self._scaled)


class Mean:
    """``mean(x)``: a sum accumulator divided by its count, a float as in Soufflé; None of nothing.

    Over an ExactSum the value is ``math.fsum(xs) / len(xs)``; over an IntSum
    it is the exact int sum divided by the count, rounded once.

    >>> m = Mean(IntSum()); m.add(1); m.add(2); m.value()
    1.5
    >>> m.remove(1); m.remove(2); m.value() is None
    True
    """

    def __init__(self, total: ExactSum | IntSum | None = None):
        self._total = ExactSum() if total is None else total

    @property
    def count(self) -> int:
        return self._total.count

    def add(self, value) -> None:
        self._total.add(value)

    def remove(self, value) -> None:
        self._total.remove(value)

    def value(self) -> float | None:
        if self.count == 0:
            return None
        total = self._total.value()
        try:
            return total / self.count
        except OverflowError:            # an int sum too large for a float
            return math.inf if total > 0 else -math.inf


def _special(value) -> str | None:
    """'nan', 'inf' or '-inf' for a float that is not finite; None for finite floats and ints."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return None


def _to_scaled(value: float | int) -> int:
    """The integer ``value * 2**1074``, exact.

    >>> _to_scaled(5e-324), _to_scaled(0.5) == 2**1073
    (1, True)
    """
    numerator, denominator = value.as_integer_ratio()
    assert denominator & (denominator - 1) == 0, f"{value!r} is not a binary fraction"
    return numerator << (_SCALE + 1 - denominator.bit_length())


def _to_float(scaled: int) -> float:
    """The double nearest to ``scaled * 2**-1074``, ties to even; ±inf beyond the largest double.

    >>> _to_float(1), _to_float(-3 << 1073), _to_float(1 << 2100)
    (5e-324, -1.5, inf)
    """
    magnitude = abs(scaled)
    shift = max(magnitude.bit_length() - _MANTISSA, 0)    # bits that do not fit the significand
    mantissa, rest = magnitude >> shift, magnitude & ((1 << shift) - 1)
    half = 1 << shift >> 1
    if shift and (rest > half or rest == half and mantissa & 1):
        mantissa += 1                                     # may carry to 2**53: still exact
    try:
        result = math.ldexp(mantissa, shift - _SCALE)     # exact: mantissa fits 53 bits + carry
    except OverflowError:
        result = math.inf
    return -result if scaled < 0 else result


class Sum:
    """``sum x`` as Soufflé's engine gives it: an int while every contribution is an int, else the
    exact float sum rounded once (``math.fsum`` of the contributions).

    >>> s = Sum(); s.add(2); s.add(3); s.value()
    5
    >>> s.add(0.5); s.value(), s.count
    (5.5, 3)
    >>> s.remove(0.5); s.value()
    5
    """

    def __init__(self):
        self._exact, self._ints, self._floats = ExactSum(), IntSum(), 0

    @property
    def count(self) -> int:
        return self._exact.count

    def add(self, value) -> None:
        self._exact.add(value)
        if isinstance(value, float):
            self._floats += 1
        else:
            self._ints.add(value)

    def remove(self, value) -> None:
        self._exact.remove(value)
        if isinstance(value, float):
            self._floats -= 1
        else:
            self._ints.remove(value)

    def value(self):
        return self._exact.value() if self._floats else self._ints.value()
