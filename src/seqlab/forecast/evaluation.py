"""Scoring rolling-origin forecasts: MASE per series/window/horizon, sMAPE, OWA, and a paired bootstrap."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .metrics import mase_scale, owa, scaled_errors, smape_terms

__all__ = ["evaluate", "summarize", "per_horizon", "unit_mase", "bootstrap_difference"]


def evaluate(cv: pd.DataFrame, history: pd.DataFrame, season_length: int, models: list[str]) -> pd.DataFrame:
    """One row per (unique_id, cutoff, model, step) with the absolute scaled error, plus sMAPE terms.

    The MASE scale of each window is the in-sample seasonal-naive MAE of that
    window's own training part (everything up to its cutoff), so no window sees
    its own test values.
    """
    rows = []
    hist = {uid: g for uid, g in history.groupby("unique_id", sort=False)}
    for (uid, cutoff), w in cv.groupby(["unique_id", "cutoff"], sort=False):
        g = hist[uid]
        scale = mase_scale(g.loc[g["ds"] <= cutoff, "y"].to_numpy(), season_length)
        y = w["y"].to_numpy(float)
        for m in models:
            f = w[m].to_numpy(float)
            rows.append(pd.DataFrame({"unique_id": uid, "cutoff": cutoff, "model": m, "step": np.arange(1, len(y) + 1),
                                      "scaled_error": scaled_errors(y, f, scale), "smape_term": smape_terms(y, f)}))
    return pd.concat(rows, ignore_index=True)


def summarize(errors: pd.DataFrame, naive2: str | None = "Naive2") -> pd.DataFrame:
    """Mean MASE and sMAPE per model over (series, window) units, and OWA against ``naive2`` when present.

    ``series`` counts distinct series and ``units`` the (series, window) pairs averaged over.
    """
    per = errors.groupby(["model", "unique_id", "cutoff"]).agg(mase=("scaled_error", "mean"),
                                                                smape=("smape_term", "mean")).reset_index()
    undefined = per[per.mase.isna()]
    out = per.groupby("model").agg(mase=("mase", "mean"), smape=("smape", "mean"),
                                   series=("unique_id", "nunique"), units=("mase", "count")).reset_index()
    if naive2 is not None and naive2 in set(out.model):
        ref = out.set_index("model").loc[naive2]
        out["owa"] = owa(out.smape, out.mase, ref.smape, ref.mase)
    out = out.sort_values("mase").reset_index(drop=True)
    out.attrs["notes"] = _undefined_note(undefined)
    return out


def _undefined_note(undefined: pd.DataFrame) -> list[str]:
    """Why some (series, window) units have no MASE: a training part with no change has a scale of zero."""
    if undefined.empty:
        return []
    units = undefined.drop_duplicates(["unique_id", "cutoff"])
    ids = list(dict.fromkeys(units.unique_id))
    shown = ", ".join(repr(u) for u in ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    return [f"{len(units)} (series, window) unit(s) left out of MASE ({shown}): the training part never changes "
            "between seasons, so MASE's scale (the in-sample seasonal-naive error) is 0 and the ratio is undefined"]


def per_horizon(errors: pd.DataFrame) -> pd.DataFrame:
    """MASE by forecast step: mean scaled error at each horizon h = 1 .. H."""
    return errors.groupby(["model", "step"]).scaled_error.mean().rename("mase").reset_index()


def unit_mase(errors: pd.DataFrame) -> pd.DataFrame:
    """MASE of every (model, series, window) unit: the mean scaled error over its horizon."""
    return errors.groupby(["model", "unique_id", "cutoff"]).scaled_error.mean().rename("mase").reset_index()


def bootstrap_difference(errors: pd.DataFrame, a: str, b: str, n_boot: int = 5000, seed: int = 0,
                         min_series: int = 10) -> dict:
    """Paired bootstrap of mean MASE(a) - mean MASE(b) over (series, window) units, resampling whole series.

    The windows of one series share its history and level, so they are not
    independent draws: each bootstrap sample takes series with replacement and
    keeps all of their windows (a cluster bootstrap; with one window per series it
    is the ordinary paired bootstrap). A 95% interval that excludes 0 is called
    significant; with fewer than ``min_series`` series the test is not made.
    ``errors`` is :func:`evaluate`'s frame, or :func:`unit_mase`'s.
    """
    per = errors if "mase" in errors.columns else unit_mase(errors)
    per = per.pivot_table(index=["unique_id", "cutoff"], columns="model", values="mase")[[a, b]].dropna()
    d = (per[a] - per[b]).to_numpy()
    codes, uniq = pd.factorize(per.index.get_level_values("unique_id"))
    sums, counts = np.bincount(codes, weights=d), np.bincount(codes)
    testable = len(uniq) >= min_series
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(uniq), size=(n_boot, len(uniq)))
    boots = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return dict(model=a, against=b, mean_difference=float(d.mean()), ci_low=float(lo), ci_high=float(hi),
                share_of_units_better=float((d < 0).mean()), series=len(uniq), units=len(d), testable=testable,
                significant=bool(testable and (lo > 0 or hi < 0)))
