"""Scoring rolling-origin forecasts: MASE per series/window/horizon, sMAPE, OWA, interval scores, a paired bootstrap."""
from __future__ import annotations

import numbers
import re

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError, InvalidTypeError, MissingColumnError
from .data import ForecastDataError
from .intervals import check_levels, levels_in, quantile_columns
from .metrics import crps_terms, mase_scale, owa, pinball_terms, scaled_errors, smape_terms, winkler_terms

__all__ = ["evaluate", "summarize", "per_horizon", "unit_mase", "bootstrap_difference", "AVERAGES"]

#: how :func:`summarize` averages the (series, window) units
AVERAGES = ("units", "series")


def evaluate(cv: pd.DataFrame, history: pd.DataFrame, season_length: int | None = None,
             models: list[str] | None = None, level=None) -> pd.DataFrame:
    """One row per (unique_id, cutoff, model, step) with the absolute scaled error, plus sMAPE terms.

    ``season_length`` defaults to the one the cross-validation frame carries
    (``cv.attrs["season_length"]``, set by :meth:`~seqlab.forecast.Forecaster.cross_validation`); a frame read
    back from a file carries none, so give it then. ``models`` defaults to every forecast column of ``cv``.

    The MASE scale of each window is the in-sample seasonal-naive MAE of that
    window's own training part (everything up to its cutoff), so no window sees
    its own test values.

    When ``cv`` has prediction intervals (``Model-lo-80`` ...; ``level=None`` takes the levels
    every model has, ``level=[]`` none) each row also has, per level ``l``: ``coverage_l``
    (1 when y lies in the interval, else 0) and ``winkler_l`` (the Winkler score divided by the
    same MASE scale: M4's MSIS at 95%); and over the quantiles the intervals imply (their
    bounds, with the point forecast as the median): ``pinball`` (the mean pinball loss over
    the quantiles, divided by the scale), ``crps_term`` (the quantile approximation of the
    CRPS, unscaled) and ``abs_y`` (for the scaled CRPS, the sum of one over the other).

    Example:
        >>> from seqlab.forecast import Forecaster
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 13), "y": [1.0, 3, 2, 4, 3, 5, 4, 6, 5, 7, 6, 8]})
        >>> cv = Forecaster(["Naive", "RandomWalkWithDrift"]).cross_validation(h=2, df=df, n_windows=2, step_size=2)
        >>> errors = evaluate(cv, df)
        >>> errors[errors.model == "Naive"].round(4)
          unique_id  cutoff  model  step  scaled_error  smape_term
        0         a       8  Naive     1        0.6364     18.1818
        1         a       8  Naive     2        0.6364     15.3846
        4         a      10  Naive     1        0.6429     15.3846
        5         a      10  Naive     2        0.6429     13.3333
    """
    if not isinstance(cv, pd.DataFrame):
        raise InvalidTypeError(f"cv must be a pandas DataFrame, got {type(cv).__name__}")
    models = _check_models(_model_columns(cv) if models is None else models)
    _need_columns(cv, "the cross-validation frame", ["unique_id", "cutoff", "y", *models])
    _need_columns(history, "the history", ["unique_id", "ds", "y"])
    season_length = _season_of(cv, season_length)
    if cv.empty:
        raise ForecastDataError("the cross-validation frame has no rows")
    absent = pd.Index(cv["unique_id"].unique()).difference(pd.Index(history["unique_id"].unique()))
    if len(absent):
        raise ForecastDataError(f"series {absent[0]!r} of the cross-validation frame is not in the history")
    if level is None:
        levels = levels_in(cv.columns, models)
    else:
        levels = check_levels(level) if not (hasattr(level, "__len__") and len(level) == 0) else []
        missing = [c for m in models for c in quantile_columns(m, levels).values() if c not in cv.columns]
        if missing:
            raise ForecastDataError(f"the cross-validation frame has no column {missing[0]!r}; run it with "
                                    f"level={levels}")
    rows = []
    hist = {uid: g for uid, g in history.groupby("unique_id", sort=False)}
    for (uid, cutoff), w in cv.groupby(["unique_id", "cutoff"], sort=False):
        g = hist[uid]
        scale = mase_scale(g.loc[g["ds"] <= cutoff, "y"].to_numpy(), season_length)
        y = w["y"].to_numpy(float)
        for m in models:
            f = w[m].to_numpy(float)
            cols = {"unique_id": uid, "cutoff": cutoff, "model": m, "step": np.arange(1, len(y) + 1),
                    "scaled_error": scaled_errors(y, f, scale), "smape_term": smape_terms(y, f)}
            if levels:
                for lv in levels:
                    lo, hi = w[f"{m}-lo-{lv}"].to_numpy(float), w[f"{m}-hi-{lv}"].to_numpy(float)
                    cols[f"coverage_{lv}"] = ((y >= lo) & (y <= hi)).astype(float)
                    cols[f"winkler_{lv}"] = _scaled(winkler_terms(y, lo, hi, lv), scale)
                qs = {q: w[c].to_numpy(float) for q, c in quantile_columns(m, levels).items()}
                cols["pinball"] = _scaled(np.mean([pinball_terms(y, f_q, q) for q, f_q in qs.items()], axis=0), scale)
                cols["crps_term"] = crps_terms(y, qs)
                cols["abs_y"] = np.abs(y)
            rows.append(pd.DataFrame(cols))
    return pd.concat(rows, ignore_index=True)


def _need_columns(frame, what: str, columns) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise InvalidTypeError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MissingColumnError(f"{what} has no column {missing[0]!r} (its columns: "
                                 f"{', '.join(map(str, frame.columns[:12]))})")


def _check_models(models) -> list:
    if isinstance(models, (str, bytes)) or not hasattr(models, "__iter__"):
        raise InvalidTypeError(f"models must be a list of model (column) names, got {models!r}")
    models = list(models)
    if not models:
        raise InvalidParameterError("models lists no model")
    return models


def _model_columns(cv: pd.DataFrame) -> list[str]:
    """The forecast columns of a cross-validation frame: all but the keys, the actuals and interval bounds."""
    return [c for c in cv.columns if c not in ("unique_id", "ds", "cutoff", "y")
            and not re.search(r"-(lo|hi)-\d+(\.\d+)?$", str(c))]


def _season_of(cv: pd.DataFrame, season_length) -> int:
    """``season_length``, or the frame's own; the two must agree when both are there."""
    carried = cv.attrs.get("season_length")
    if season_length is None:
        if carried is None:
            raise InvalidParameterError("give season_length: this cross-validation frame does not carry one (a "
                                        "frame read back from a file loses Forecaster.cross_validation's attrs)")
        return _check_season(carried)
    season_length = _check_season(season_length)
    if carried is not None and int(carried) != season_length:
        raise InvalidParameterError(f"season_length={season_length} disagrees with the {carried} the "
                                    "cross-validation frame was made with")
    return season_length


def _check_season(season_length) -> int:
    if isinstance(season_length, (bool, np.bool_)) or not isinstance(season_length, numbers.Integral) \
            or season_length < 1:
        raise InvalidParameterError(f"season_length must be a whole number >= 1, got {season_length!r}")
    return int(season_length)


def _scaled(values: np.ndarray, scale: float) -> np.ndarray:
    return values / scale if scale > 0 else np.full_like(values, np.nan)


def summarize(errors: pd.DataFrame, naive2: str | None = "Naive2", average: str = "units") -> pd.DataFrame:
    """Mean MASE and sMAPE per model, OWA against ``naive2`` when present, and interval scores when scored.

    Each (series, window) pair is a unit: its MASE is the mean scaled error over its
    horizon. ``average`` says how the units are averaged into the headline columns:

    * ``"units"`` (the default): the mean over all units, so a series counts once per window
      it takes part in. Every unit is one forecast made and scored the same way; when every
      series has every window (the default of :meth:`Forecaster.cross_validation`, and any
      single hold-out such as the M competitions') it equals the per-series mean, and it is
      what the chapter's tables and the bootstrap (which resamples series, keeping their
      units) use;
    * ``"series"``: the mean of each series' units first, then over series, so every series
      counts once (how the published anchors average; it differs from ``"units"`` only when
      series take part in different numbers of windows, as with ``min_train_length``).

    The other average of MASE is always reported beside it (``mase_series`` or
    ``mase_units``). ``series`` counts distinct series and ``units`` the (series, window)
    pairs with a MASE. With interval columns from :func:`evaluate`: ``coverage_l``
    (empirical coverage of the l% interval), ``winkler_l`` (Winkler score over MASE's scale),
    ``spl`` (scaled pinball loss over the interval quantiles and the median) and ``scrps``
    (scaled CRPS: per unit, the summed quantile CRPS over the summed |y|).

    Example:
        >>> from seqlab.forecast import Forecaster
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 13), "y": [1.0, 3, 2, 4, 3, 5, 4, 6, 5, 7, 6, 8]})
        >>> cv = Forecaster(["Naive", "RandomWalkWithDrift"]).cross_validation(h=2, df=df, n_windows=2, step_size=2)
        >>> summarize(evaluate(cv, df), naive2="Naive").round(4)
                         model    mase    smape  series  units    owa  mase_series
        0                Naive  0.6396  15.5711       1      2  1.000       0.6396
        1  RandomWalkWithDrift  0.6623  15.9202       1      2  1.029       0.6623
    """
    if not isinstance(average, str) or average not in AVERAGES:
        raise InvalidParameterError(f"average must be one of {', '.join(AVERAGES)}, got {average!r}")
    _need_columns(errors, "the errors frame (from evaluate)", ["model", "unique_id", "cutoff", "scaled_error",
                                                                "smape_term"])
    interval = [c for c in errors.columns if c.startswith(("coverage_", "winkler_"))]
    interval = sorted(interval, key=lambda c: (float(c.split("_", 1)[1]), c.split("_", 1)[0]))
    agg = dict(mase=("scaled_error", "mean"), smape=("smape_term", "mean"), **{c: (c, "mean") for c in interval})
    scored = "pinball" in errors.columns
    if scored:
        agg |= dict(spl=("pinball", "mean"), crps_sum=("crps_term", "sum"), abs_y_sum=("abs_y", "sum"))
    per = errors.groupby(["model", "unique_id", "cutoff"]).agg(**agg).reset_index()
    metrics = ["mase", "smape", *interval]
    if scored:
        per["scrps"] = per.crps_sum / (per.abs_y_sum + np.finfo(np.float64).eps)
        per = per.drop(columns=["crps_sum", "abs_y_sum"])
        metrics += ["spl", "scrps"]
    undefined = per[per.mase.isna()]
    by_units = per.groupby("model")[metrics].mean()
    by_series = per.groupby(["model", "unique_id"])[metrics].mean().groupby("model").mean()
    head, other, other_name = (by_units, by_series, "mase_series") if average == "units" else \
        (by_series, by_units, "mase_units")
    counts = per.groupby("model").agg(series=("unique_id", "nunique"), units=("mase", "count"))
    out = head[["mase", "smape"]].join(counts).reset_index()
    if naive2 is not None and naive2 in set(out.model):
        ref = out.set_index("model").loc[naive2]
        out["owa"] = owa(out.smape, out.mase, ref.smape, ref.mase)
    out[other_name] = other["mase"].reindex(out.model).to_numpy()
    for c in metrics[2:]:
        out[c] = head[c].reindex(out.model).to_numpy()
    out = out.sort_values("mase").reset_index(drop=True)
    out.attrs["notes"] = _undefined_note(undefined)
    out.attrs["average"] = average
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
    """MASE by forecast step: mean scaled error at each horizon h = 1 .. H.

    Example:
        >>> from seqlab.forecast import Forecaster
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 13), "y": [1.0, 3, 2, 4, 3, 5, 4, 6, 5, 7, 6, 8]})
        >>> cv = Forecaster(["Naive", "RandomWalkWithDrift"]).cross_validation(h=2, df=df, n_windows=2, step_size=2)
        >>> per_horizon(evaluate(cv, df)).round(4)
                         model  step    mase
        0                Naive     1  0.6396
        1                Naive     2  0.6396
        2  RandomWalkWithDrift     1  1.0812
        3  RandomWalkWithDrift     2  0.2435
    """
    _need_columns(errors, "the errors frame (from evaluate)", ["model", "step", "scaled_error"])
    return errors.groupby(["model", "step"]).scaled_error.mean().rename("mase").reset_index()


def unit_mase(errors: pd.DataFrame) -> pd.DataFrame:
    """MASE of every (model, series, window) unit: the mean scaled error over its horizon.

    Example:
        >>> from seqlab.forecast import Forecaster
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 13), "y": [1.0, 3, 2, 4, 3, 5, 4, 6, 5, 7, 6, 8]})
        >>> cv = Forecaster(["Naive", "RandomWalkWithDrift"]).cross_validation(h=2, df=df, n_windows=2, step_size=2)
        >>> unit_mase(evaluate(cv, df)).round(4)
                         model unique_id  cutoff    mase
        0                Naive         a       8  0.6364
        1                Naive         a      10  0.6429
        2  RandomWalkWithDrift         a       8  0.6818
        3  RandomWalkWithDrift         a      10  0.6429
    """
    _need_columns(errors, "the errors frame (from evaluate)", ["model", "unique_id", "cutoff", "scaled_error"])
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

    Example:
        >>> units = pd.DataFrame({"model": ["A"] * 4 + ["B"] * 4, "unique_id": list("wxyz") * 2, "cutoff": 10,
        ...                       "mase": [0.5, 0.6, 0.7, 0.8, 1.0, 1.0, 1.0, 1.0]})
        >>> r = bootstrap_difference(units, "A", "B", n_boot=200, min_series=2)
        >>> round(r["mean_difference"], 4), r["series"], r["significant"]
        (-0.35, 4, True)
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
