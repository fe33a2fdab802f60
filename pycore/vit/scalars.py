"""Checks of the scalar settings of training: a number in a range, a count, never a boolean.

Each returns the value as a float or an int, or raises ``TypeError`` (not a number, or a
boolean) or ``ValueError`` (outside its range), naming the setting.
"""

import math
import numbers

import numpy as np


def is_bool(value):
    """Whether ``value`` is a boolean, Python's or NumPy's (neither counts as a number here)."""
    return isinstance(value, (bool, np.bool_))


def check_number(value, name, low=None, high=None, low_open=False, high_open=True):
    """A setting that must be one finite real number in a range, as a float.

    ``low`` and ``high`` bound it (None: unbounded); ``low_open`` and ``high_open`` say
    whether the bound itself is excluded.

    Examples
    --------
    >>> check_number(2, "lr", low=0.0)
    2.0
    >>> check_number(1.0, "momentum", low=0.0, high=1.0)
    Traceback (most recent call last):
    ...
    ValueError: momentum must be a finite number in [0.0, 1.0); got 1.0
    """
    if is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError("{} must be a real number; got {!r}".format(name, value))
    value = float(value)
    ok = math.isfinite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        span = "{}{}, {}{}".format("(" if low_open else "[", "-inf" if low is None else low,
                                   "inf" if high is None else high, ")" if high_open else "]")
        raise ValueError("{} must be a finite number in {}; got {!r}".format(name, span, value))
    return value


def check_int(value, name, low, high=None):
    """A count or a seed: an integer (not a boolean, not a float) in [low, high].

    Examples
    --------
    >>> check_int(3, "steps", 0)
    3
    >>> check_int(2.0, "steps", 0)
    Traceback (most recent call last):
    ...
    TypeError: steps must be an integer; got 2.0
    """
    if is_bool(value) or not isinstance(value, numbers.Integral):
        raise TypeError("{} must be an integer; got {!r}".format(name, value))
    value = int(value)
    if value < low or (high is not None and value > high):
        raise ValueError("{} must be an integer in [{}, {}]; got {}".format(
            name, low, "inf" if high is None else high, value))
    return value
