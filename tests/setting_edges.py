"""The values at the edges of a number range (:class:`eer_plugin.core.ranges.Bounds`), generated from the one
declaration of the range: the tests of the maths' own checks (tests/core) and of the registered classes' rules
(tests/runtime) probe the same edges of the same declaration."""

import math
from typing import Any, List

#: no number: another JSON type (a bool is no number, even where Python calls it an int), null
NO_NUMBER = [True, False, "7", "0.5", [1], {"a": 1}, None]
#: numbers no float computation can use: NaN, the infinities, a whole number too large for a float (jsonnet's 1e400)
NOT_FINITE = [math.nan, math.inf, -math.inf, 10**400]


def _step(bounds) -> float:
    return 1 if bounds.integer else 1e-9


def inside(bounds) -> List[Any]:
    """Just inside each end: the end itself where it is taken, else one step (1, or 1e-9) in from it."""
    values = []
    if bounds.low is not None:
        values.append(bounds.low + _step(bounds) if bounds.low_open else bounds.low)
    if bounds.high is not None:
        values.append(bounds.high - _step(bounds) if bounds.high_open else bounds.high)
    return values


def outside(bounds) -> List[Any]:
    """Just outside each end (an open end itself, one step beyond it), no number, not finite (for a real range also a
    whole number too large for a float), and for an integer range numbers that are not ints (1.5, 2.0)."""
    values = NO_NUMBER + [v for v in NOT_FINITE if not (bounds.integer and isinstance(v, int))]  # 10**400: whole
    if bounds.low is not None:
        values += [bounds.low - _step(bounds)] + ([bounds.low] if bounds.low_open else [])
    if bounds.high is not None:
        values += [bounds.high + _step(bounds)] + ([bounds.high] if bounds.high_open else [])
    if bounds.integer:
        values += [1.5, 2.0]
    return values
