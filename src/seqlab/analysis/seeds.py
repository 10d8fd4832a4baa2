"""Is one run's difference more than a change of seed? Single-run differences read against seed pairs.

If a run's score moves with its seed by a normal amount of one variance sigma^2, two runs that differ
only in their seed differ by s ~ N(0, 2 sigma^2). A run with one setting changed, set against the
reference run, differs by d ~ N(0, 2 sigma^2) when the setting does nothing. With n seed pairs,
t = d / sqrt(mean(s^2)) then follows Student's t with n degrees of freedom, whatever sigma is.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import t as student_t

from ..errors import InvalidParameterError

__all__ = ["seed_noise", "seed_noise_pvalues"]


def seed_noise(seed_differences) -> float:
    """sqrt(mean(s^2)) over the seed pairs' differences s: the scale of one run's difference under no effect.

    Args:
        seed_differences: the score differences of pairs of runs that differ only in their seed.

    Returns:
        The scale.

    Raises:
        InvalidParameterError: no difference, a non-finite one, or every one zero.

    Example:
        >>> round(seed_noise([0.1, -0.2, 0.15]), 4)
        0.1555
    """
    s = np.asarray(seed_differences, float)
    if s.ndim != 1 or len(s) == 0 or not np.all(np.isfinite(s)):
        raise InvalidParameterError("seed_noise needs at least one finite seed-pair difference")
    scale = float(np.sqrt(np.mean(s ** 2)))
    if scale == 0.0:
        raise InvalidParameterError("every seed pair scored the same: the seed noise is zero and no t exists")
    return scale


def seed_noise_pvalues(differences, seed_differences) -> np.ndarray:
    """Two-sided p of each single-run difference against the seed pairs: t = d / seed_noise, t with n df.

    Args:
        differences: each changed setting's run minus the reference run.
        seed_differences: the seed pairs' differences (see :func:`seed_noise`).

    Returns:
        The p-values, one per difference.

    Raises:
        InvalidParameterError: a non-finite difference, or seed differences :func:`seed_noise` refuses.

    Example:
        >>> seed_noise_pvalues([0.5, 0.05], [0.1, -0.2, 0.15]).round(3)  # 0.5 stands out, 0.05 does not
        array([0.049, 0.769])
    """
    d = np.asarray(differences, float)
    if not np.all(np.isfinite(d)):
        raise InvalidParameterError("seed_noise_pvalues needs finite differences")
    n = len(np.atleast_1d(np.asarray(seed_differences, float)))
    return 2.0 * student_t.sf(np.abs(d) / seed_noise(seed_differences), df=n)
