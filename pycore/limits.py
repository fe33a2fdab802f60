"""Size limits that keep the page responsive in a browser.

``N1`` is N+1, the number of tokens (CLS plus N patch tokens).
"""

from .errors import StateError

LIMITS = {"B": 64, "N1": 257, "D": 1024, "C": 1000}

_MEANING = {
    "B": "samples (rows of cls)",
    "N1": "tokens per sample (N+1: the CLS token plus N patch tokens)",
    "D": "features (the hidden size D)",
    "C": "classes (columns of W_head)",
}


def check_limits(**sizes):
    """Check dimension sizes against :data:`LIMITS`.

    Parameters
    ----------
    **sizes : int
        Any of ``B``, ``N1``, ``D``, ``C``; None values are skipped.

    Raises
    ------
    StateError
        With ``key`` set to the dimension, naming its value and the limit, when a size
        is not an integer, is below 1, or is above its limit.

    Examples
    --------
    >>> check_limits(B=2, D=768, C=1000)
    >>> check_limits(B=65)
    Traceback (most recent call last):
    ...
    pycore.errors.StateError: B = 65 is over the limit of 64 samples (rows of cls)
    """
    for name in ("B", "N1", "D", "C"):
        value = sizes.pop(name, None)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise StateError("{} must be a whole number; got {!r}".format(name, value), key=name)
        if value < 1:
            raise StateError("{} = {} is too small: at least 1 {}".format(
                name, value, _MEANING[name]), key=name)
        if value > LIMITS[name]:
            raise StateError("{} = {} is over the limit of {} {}".format(
                name, value, LIMITS[name], _MEANING[name]), key=name)
    if sizes:
        raise TypeError("unknown dimension(s): {}".format(", ".join(sorted(sizes))))
