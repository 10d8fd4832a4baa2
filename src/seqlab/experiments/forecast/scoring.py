"""The experiment's scores: point accuracy per scope, horizon and series, combinations, residual bias, and the
native and conformal intervals overall and by series-length group."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...forecast.combination import combine_columns
from ...forecast.evaluation import bootstrap_difference, evaluate, per_horizon, summarize, unit_mase
from ...forecast.intervals import conformal_from_windows, interval_columns, min_calibration_size
from ...forecast.origins import TrainingWindow
from .sets import DataSet, length_groups, official_holdout, window_index
from .settings import CLASSICAL_ENTRIES, CLASSICAL_MODELS, COMBINATIONS, LEVELS, NEURAL, ROUND_NAMES


def native_interval_models(cv: pd.DataFrame) -> list[str]:
    """The models of a cross-validation frame whose intervals are their own (``cv.attrs["intervals"]``)."""
    return [m for m, kind in cv.attrs.get("intervals", {}).items() if kind == "native"]


def _interval_scores(cv: pd.DataFrame, d: dict, names: list[str]) -> pd.DataFrame:
    """Coverage, Winkler score, scaled pinball loss and scaled CRPS of the 80% and 95% intervals of one set.

    Conformal intervals for every model, each window calibrated on the windows before it;
    scored on the official hold-out (a competition set) or on every window with enough
    calibration scores (AirPassengers: one series, so its three earlier windows give three
    scores per step, fewer than the four an 80% interval needs, and none is scored).
    Native intervals (statsforecast's own) on the same windows, or on all four of
    AirPassengers.
    """
    point = cv[["unique_id", "ds", "cutoff", "y", *names]]
    conf = conformal_from_windows(point, d.history, d.season, names, LEVELS)
    need = max(min_calibration_size(v) for v in LEVELS)
    j = window_index(conf)
    counts = conf.attrs["calibration_scores"]
    ok = [w for w, n in counts.items() if n >= need]
    if d.official:
        ok = [w for w in ok if w == 0]
    rows = []
    native = _native_models(cv)
    for kind, frame, models, keep in (("conformal", conf, names, np.isin(j, ok)),
                                      ("native", cv, native, np.isin(window_index(cv), [0] if d.official
                                                                      else list(range(d.windows))))):
        if not keep.any() or not models:
            continue
        e = evaluate(frame[keep], d.history, d.season, models, level=list(LEVELS))
        s = summarize(e, naive2=None)
        cal = min(counts[w] for w in ok) if kind == "conformal" else np.nan
        # series whose scored window is their first: their band is built from other series' errors alone
        borrowed = sum(conf.attrs["borrowed"].get(w, 0) for w in ok) if kind == "conformal" else np.nan
        rows.append(s.assign(kind=kind, scope="official hold-out" if d.official else "all windows",
                             calibration_scores=cal, borrowed_series=borrowed))
    return pd.concat(rows, ignore_index=True)


def add_combinations(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with a column per :data:`COMBINATIONS` entry, made by the library's combinations
    (:func:`seqlab.forecast.combination.combine_columns`)."""
    return combine_columns(frame, COMBINATIONS)


def _interval_groups(cv: pd.DataFrame, d: "DataSet", names: list[str]) -> pd.DataFrame:
    """Coverage of the last window's intervals by length group and by horizon step (competition sets only).

    Three kinds: conformal with the scores pooled over all series, conformal calibrated
    within each length group (Mondrian), and statsforecast's own intervals. One row per
    (model, kind, grouping, group). ``calibrated_on_l`` says where a Mondrian group's
    l% band comes from: its own group, or every series where its own group holds too few
    scores (:func:`~seqlab.forecast.intervals.conformal_from_windows`'s fallback).
    """
    if not d.official:
        return pd.DataFrame()
    point = cv[["unique_id", "ds", "cutoff", "y", *names]]
    groups = length_groups(d)
    lengths = pd.Series([len(y) for y in d.win[0].series], index=d.win[0].ids)
    mondrian = conformal_from_windows(point, d.history, d.season, names, LEVELS, groups=groups)
    fell = {(f["group"], f["level"]) for f in mondrian.attrs["fallbacks"] if f["window"] == 0}
    kinds = {"conformal": (conformal_from_windows(point, d.history, d.season, names, LEVELS), names),
             "conformal by length group": (mondrian, names),
             "native": (cv, _native_models(cv))}
    rows = []
    for kind, (frame, models) in kinds.items():
        last = frame[window_index(frame) == 0]
        step = last.groupby(["unique_id", "cutoff"]).cumcount() + 1
        group = last.unique_id.map(groups)
        for m in models:
            inside = {lv: ((last.y >= last[f"{m}-lo-{lv}"]) & (last.y <= last[f"{m}-hi-{lv}"])).astype(float)
                      for lv in LEVELS}
            for by, key in (("length", group), ("step", step)):
                for g, idx in key.groupby(key).groups.items():
                    ids = last.unique_id[idx].unique()
                    own = kind == "conformal by length group" and by == "length"
                    rows.append(dict(model=m, kind=kind, by=by, group=str(g), series=len(ids),
                                     shortest=int(lengths[ids].min()), longest=int(lengths[ids].max()),
                                     **{f"coverage_{lv}": float(inside[lv][idx].mean()) for lv in LEVELS},
                                     **{f"calibrated_on_{lv}": ("every series" if (g, lv) in fell else "own group")
                                        if own else "" for lv in LEVELS}))
    return pd.DataFrame(rows)


def _native_models(frame: pd.DataFrame) -> list[str]:
    """The classical models whose own intervals the forecasts hold."""
    return [m for m in CLASSICAL_MODELS if all(c in frame.columns for c in interval_columns(m, LEVELS))]


def _score_sets(sets: dict, forecasts: pd.DataFrame, log) -> dict[str, list]:
    """Step 5: errors, summaries, per-horizon MASE, significance, residuals and intervals of every data set."""
    out = {k: [] for k in ("summary", "horizon", "tests", "units", "residuals", "intervals", "rounds", "groups")}
    names = CLASSICAL_MODELS + list(NEURAL) + list(COMBINATIONS)
    for label, d in sets.items():
        cv = add_combinations(forecasts[forecasts.dataset == label].drop(columns="dataset"))
        err = evaluate(cv, d.history, d.season, names, level=[])
        out["intervals"].append(_interval_scores(cv, d, names).assign(dataset=label))
        out["groups"].append(_interval_groups(cv, d, names).assign(dataset=label))
        out["units"].append(unit_mase(err).assign(dataset=label))
        out["residuals"].append(_residuals(cv, d.win, names, d.official, d.windows).assign(dataset=label))
        s, ph, sig = _score(label, d.official, d.windows, err, d.h, d.season, log)
        out["summary"] += s
        out["horizon"] += ph
        out["tests"] += sig
        last = cv[window_index(cv) == 0]
        for r, name in ROUND_NAMES.items():
            e = evaluate(last, d.history, d.season, [name], level=[])
            out["rounds"].append(dict(dataset=label, round=r, last_window_mase=float(unit_mase(e).mase.mean())))
    return out


def _attach(cv: pd.DataFrame, windows: list[TrainingWindow], preds: dict, h: int) -> pd.DataFrame:
    """The cross-validation frame with one column per global model, matched by (series, window, step)."""
    keyed = cv.assign(j=window_index(cv), step=cv.groupby(["unique_id", "cutoff"]).cumcount())
    for name, by_window in preds.items():
        parts = [pd.DataFrame({"unique_id": np.repeat(list(f), h), "j": j, "step": np.tile(np.arange(h), len(f)),
                               name: np.concatenate([np.asarray(v, float) for v in f.values()])})
                 for j, f in by_window.items()]
        keyed = keyed.merge(pd.concat(parts), on=["unique_id", "j", "step"], how="left", validate="one_to_one")
    if keyed[list(preds)].isna().any().any():
        raise RuntimeError("a global model left a window without forecasts")
    return keyed.drop(columns=["j", "step"])


def _residuals(cv: pd.DataFrame, windows: list[TrainingWindow], names: list[str], official: bool,
               n_windows: int) -> pd.DataFrame:
    """The residual check: mean signed scaled error (forecast - actual) / MASE scale by model and step, per scope.

    A mean near zero at every step says the forecasts are not biased; MASE alone
    cannot tell over- from under-forecasting.
    """
    scale = pd.concat([pd.DataFrame({"unique_id": w.ids, "j": w.j, "scale": w.scale}) for w in windows])
    c = cv.assign(j=window_index(cv), step=cv.groupby(["unique_id", "cutoff"]).cumcount() + 1)
    c = c.merge(scale, on=["unique_id", "j"], how="left", validate="many_to_one")
    c = c[c.scale > 0]
    scopes = {"all windows": c} if n_windows > 1 else {}
    if official:
        scopes["official hold-out"] = c[c.j == 0]
    rows = []
    for scope, e in scopes.items():
        for m in names:
            r = (e[m] - e.y) / e.scale
            g = pd.DataFrame({"step": e.step, "r": r, "over": r > 0}).groupby("step")
            rows.append(pd.DataFrame({"scope": scope, "model": m, "step": g.r.mean().index,
                                      "mean_scaled_error": g.r.mean().to_numpy(),
                                      "share_over": g.over.mean().to_numpy()}))
    return pd.concat(rows, ignore_index=True)


def _score(label: str, official: bool, windows: int, err: pd.DataFrame, h: int, season: int,
           log) -> tuple[list, list, list]:
    """Summary, per-horizon and significance rows of one data set in each of its scopes."""
    summaries, horizons, tests = [], [], []
    scopes = {"all windows": err} if windows > 1 else {}
    if official:  # AirPassengers has none
        scopes["official hold-out"] = official_holdout(err)
    for scope, e in scopes.items():
        s = summarize(e).assign(dataset=label, scope=scope, horizon=h, season_length=season)
        summaries.append(s)
        horizons.append(per_horizon(e).assign(dataset=label, scope=scope))
        ranked = s.sort_values("mase", kind="stable")
        single = ranked[ranked.model.isin(CLASSICAL_MODELS)].model.iloc[0]
        entry = ranked[ranked.model.isin(CLASSICAL_ENTRIES)].model.iloc[0]
        against = {"best classical model": single, "best classical entry": entry}
        for name in [*NEURAL, "N-BEATS + Combination"]:
            for baseline, b in against.items():
                tests.append(bootstrap_difference(e, name, b) | {"dataset": label, "scope": scope,
                                                                 "baseline": baseline})
        log(f"{label} ({scope}):\n{s[['model', 'mase', 'smape', 'owa', 'units']].to_string(index=False)}")
    return summaries, horizons, tests
