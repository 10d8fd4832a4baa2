"""Multiple comparisons: one family of tests judged together, whatever produced its p-values.

A page that settles many differences at the 5% level expects one in twenty to look settled by
chance. Holm's step-down rule (Holm, 1979) keeps the chance of any false rejection in the
family at most alpha; §14.59's sampling rules and §14.63's forecasters both use it.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["holm"]


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values: sorted ascending, ``p_(i) * (m - i + 1)``, running maximum, at most 1.

    Reject a hypothesis at level alpha when its adjusted p-value is at most alpha; the family's
    chance of any false rejection is then at most alpha.

    Args:
        pvalues: the family's p-values, each in [0, 1].

    Returns:
        The adjusted p-values, in the order given.

    Raises:
        InvalidParameterError: not a flat list of p-values in [0, 1].

    Example:
        >>> holm([0.01, 0.04, 0.03])
        array([0.03, 0.06, 0.06])
    """
    p = np.asarray(pvalues, float)
    if p.ndim != 1 or not np.all((p >= 0) & (p <= 1)):
        raise InvalidParameterError("holm needs a list of p-values between 0 and 1")
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adjusted
    return out
