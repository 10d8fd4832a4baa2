"""Comparing many forecasters at once: Holm-corrected paired tests and multiple comparisons with the best.

One paired bootstrap (:func:`~seqlab.forecast.evaluation.bootstrap_difference`) answers one
question at the 5% level. A page that asks twenty such questions expects one false "significant"
by chance alone, and picking the best entry on the same hold-out makes it worse. Two standard
answers live here:

- :func:`holm_tests`: each pair's paired cluster-bootstrap p-value, adjusted by Holm's step-down
  rule (Holm, 1979), which keeps the chance of any false rejection in the family at most
  ``alpha``;
- :func:`mcb`: multiple comparisons with the best (Koning et al., 2005, as used for the M3
  competition): the models' mean ranks over series, each with an interval of half Nemenyi's
  critical distance, ``CD = q_alpha * sqrt(k (k + 1) / (12 N))`` (``q_alpha`` the studentized
  range's quantile); a model whose interval does not overlap the best's is told apart from it.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..analysis.multiple import holm  # re-exported: the forecasters' family tests use it
from ..errors import InvalidParameterError
from .evaluation import unit_mase

__all__ = ["holm", "holm_family", "bootstrap_pvalue", "holm_tests", "mean_ranks", "mcb"]


def _per_series(errors: pd.DataFrame, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    per = errors if "mase" in errors.columns else unit_mase(errors)
    wide = per.pivot_table(index=["unique_id", "cutoff"], columns="model", values="mase")
    for m in (a, b):
        if m not in wide.columns:
            raise InvalidParameterError(f"no model {m!r} in the errors (models: {', '.join(map(str, wide.columns))})")
    wide = wide[[a, b]].dropna()
    d = (wide[a] - wide[b]).to_numpy()
    codes, _ = pd.factorize(wide.index.get_level_values("unique_id"))
    return np.bincount(codes, weights=d), np.bincount(codes).astype(float)


def bootstrap_pvalue(errors: pd.DataFrame, a: str, b: str, n_boot: int = 5000, seed: int = 0) -> dict:
    """Two-sided p-value of "mean MASE(a) = mean MASE(b)", by the cluster bootstrap over series.

    The bootstrap means of the paired differences, shifted to mean zero (the null), are
    compared with the observed mean: ``p = (1 + #{|boot - mean| >= |mean|}) / (1 + n_boot)``
    (never exactly 0). Whole series are resampled, as in
    :func:`~seqlab.forecast.evaluation.bootstrap_difference`, with the same draws for the same seed.
    """
    if n_boot < 100:
        raise InvalidParameterError(f"n_boot must be at least 100, got {n_boot}")
    sums, counts = _per_series(errors, a, b)
    if len(sums) < 2:
        raise InvalidParameterError(f"{a} and {b} share fewer than 2 series: no test")
    mean = sums.sum() / counts.sum()
    draws = np.random.default_rng(seed).integers(0, len(sums), size=(n_boot, len(sums)))
    boots = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    extreme = int((np.abs(boots - boots.mean()) >= abs(mean)).sum())
    return dict(model=a, against=b, mean_difference=float(mean), ci_low=float(lo), ci_high=float(hi),
                p_value=(1 + extreme) / (1 + n_boot), series=len(sums))


def holm_family(tests: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """``tests`` (one row per test, a ``p_value`` column) judged as one family: the one home of Holm's step.

    Adds ``p_holm``, Holm's step-down adjustment of every ``p_value`` over the whole frame, and
    ``significant``, whether it is below ``alpha``. Every family of comparisons in seqlab (the
    tests of :func:`holm_tests`, §14.63's verdict, the fresh sets) is judged here.

    Example:
        >>> holm_family(pd.DataFrame({"p_value": [0.01, 0.04, 0.03]}))
           p_value  p_holm  significant
        0     0.01    0.03         True
        1     0.04    0.06        False
        2     0.03    0.06        False
    """
    if not 0 < alpha < 1:
        raise InvalidParameterError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    out = pd.DataFrame(tests).copy()
    out["p_holm"] = holm(out.p_value.to_numpy())
    out["significant"] = out.p_holm < alpha
    return out


def holm_tests(errors: pd.DataFrame, pairs, alpha: float = 0.05, n_boot: int = 5000, seed: int = 0) -> pd.DataFrame:
    """Every ``(a, b)`` of ``pairs`` tested by :func:`bootstrap_pvalue`, as one family under Holm's correction.

    ``errors``: :func:`~seqlab.forecast.evaluation.evaluate`'s or
    :func:`~seqlab.forecast.evaluation.unit_mase`'s frame; with a ``family`` column the pairs
    are tested within each family value (for example each data set) and the correction runs
    over all of them together. ``significant``: the Holm-adjusted p-value is below ``alpha``.

    Example:
        >>> units = pd.DataFrame({"model": ["A"] * 4 + ["B"] * 4, "unique_id": list("wxyz") * 2, "cutoff": 10,
        ...                       "mase": [0.5, 0.6, 0.7, 0.8, 1.0, 1.0, 1.0, 1.0]})
        >>> holm_tests(units, [("A", "B")], n_boot=200)[["model", "against", "series", "significant"]]
          model against  series  significant
        0     A       B       4         True
    """
    if not 0 < alpha < 1:
        raise InvalidParameterError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    pairs = [tuple(p) for p in pairs]
    if not pairs or any(len(p) != 2 or p[0] == p[1] for p in pairs):
        raise InvalidParameterError("pairs must be a non-empty list of (model, other model)")
    blocks = errors.groupby("family", sort=False) if "family" in errors.columns else [(None, errors)]
    rows = []
    for family, frame in blocks:
        for a, b in pairs:
            rows.append(dict(family=family, **bootstrap_pvalue(frame, a, b, n_boot, seed)))
    out = holm_family(pd.DataFrame(rows), alpha)
    return out if "family" in errors.columns else out.drop(columns="family")


def mean_ranks(scores: pd.DataFrame) -> pd.Series:
    """Each model's mean rank over the rows (series) of ``scores`` (columns: models; lower is better, ties averaged)."""
    if scores.shape[1] < 2 or scores.shape[0] < 1:
        raise InvalidParameterError("ranks need at least two models (columns) and one series (row)")
    if scores.isna().any().any():
        raise InvalidParameterError("every model needs a score on every series: drop the series with a gap first")
    return scores.rank(axis=1, method="average").mean(axis=0)


def mcb(scores: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Multiple comparisons with the best: mean ranks over series with intervals that compare every model at once.

    ``scores``: one row per series (a set's series, or several sets' stacked), one column per
    model, lower better (MASE). For k models over N series each mean rank gets ``± CD / 2``,
    ``CD = q * sqrt(k (k + 1) / (12 N))`` with ``q`` the studentized range's upper ``alpha``
    quantile for k groups and infinite degrees of freedom (Nemenyi's critical distance; Demšar,
    2006, writes it with ``q / sqrt(2)`` and ``6 N``). ``differs_from_best``: the interval does not
    overlap the best model's, so the two mean ranks differ by more than ``CD``.

    Example:
        >>> scores = pd.DataFrame({"A": [1.0, 0.8, 0.9, 1.1], "B": [1.2, 1.0, 1.3, 1.4], "C": [0.9, 1.1, 1.0, 1.2]})
        >>> mcb(scores).round(4)
          model  mean_rank      lo      hi   best  differs_from_best
        0     A       1.25  0.4214  2.0786   True              False
        1     C       2.00  1.1714  2.8286  False              False
        2     B       2.75  1.9214  3.5786  False              False
    """
    from scipy.stats import studentized_range

    if not 0 < alpha < 1:
        raise InvalidParameterError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    r = mean_ranks(scores)
    k, n = scores.shape[1], scores.shape[0]
    cd = float(studentized_range.ppf(1 - alpha, k, np.inf)) * math.sqrt(k * (k + 1) / (12 * n))
    half = cd / 2
    out = pd.DataFrame({"model": r.index, "mean_rank": r.to_numpy(), "lo": r.to_numpy() - half,
                        "hi": r.to_numpy() + half}).sort_values("mean_rank", kind="stable").reset_index(drop=True)
    best = out.iloc[0]
    out["best"] = out.index == 0
    out["differs_from_best"] = out.lo > best.hi
    out.attrs.update(series=n, models=k, critical_distance=cd, alpha=alpha)
    return out
