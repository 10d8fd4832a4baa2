"""§14.63's comparison: classical baselines against global neural forecasters on competition data.

``HEAVY_EVAL=1`` recomputes it (several minutes) and rewrites
``seqlab/artifacts/forecast``; otherwise the committed, manifest-verified CSVs load.
"""
from __future__ import annotations

import time

import pandas as pd

from ..forecast.core import Forecaster
from ..forecast.data import air_passengers, competition
from ..forecast.evaluation import bootstrap_difference, evaluate, per_horizon, summarize, unit_mase
from ..forecast.neural import NeuralConfig, NeuralForecaster
from ..store import heavy_eval, read_artifact_csv, verify_artifacts, write_artifacts

__all__ = ["DATASETS", "SCOPES", "CLASSICAL_MODELS", "min_train_length", "official_holdout", "experiment_config",
           "run_forecast_experiment", "forecast_results"]

NAME = "forecast"
CLASSICAL_MODELS = ["Naive", "SeasonalNaive", "RandomWalkWithDrift", "Naive2", "AutoETS", "Theta", "AutoTheta"]
NEURAL = {"GRU": "gru", "Transformer": "transformer"}
#: name -> (loader, windows). The last window of a competition set is its official hold-out; earlier windows
#: step back one horizon at a time and include only the series long enough for them (see min_train_length).
#: M1 yearly is kept to its hold-out: it is there for the published AutoTheta anchor.
DATASETS = {"AirPassengers": ("air", 4), "M3 monthly": ("M3/monthly", 3), "M3 yearly": ("M3/yearly", 3),
            "Tourism quarterly": ("Tourism/quarterly", 3), "M1 yearly": ("M1/yearly", 1)}
#: "all windows" averages over every (series, window) pair; "official hold-out" scores the competition's own
#: test period only (AirPassengers has none: its four rolling windows are the design)
SCOPES = ("all windows", "official hold-out")
NEURAL_CONFIG = NeuralConfig(hidden_size=64, max_steps=1500, batch_size=256, learning_rate=1e-3, val_check_steps=100,
                             patience=5, seed=1)


def experiment_config(datasets: dict | None = None, neural_config: NeuralConfig | None = None) -> dict:
    from dataclasses import asdict

    datasets = DATASETS if datasets is None else datasets
    neural_config = NEURAL_CONFIG if neural_config is None else neural_config
    return {"datasets": {k: list(v) for k, v in datasets.items()}, "classical": CLASSICAL_MODELS,
            "neural": NEURAL, "neural_config": asdict(neural_config), "airpassengers_h": 12,
            "min_train_length": "max(2 h, h + 2 season)", "scopes": list(SCOPES)}


def min_train_length(h: int, season: int) -> int:
    """Shortest training part a series may have in a rolling window: two horizons, or a horizon plus two seasons.

    The neural models hold the last horizon of it out for early stopping, and the
    seasonal models need two full seasons in what remains.
    """
    return max(2 * h, h + 2 * season)


def official_holdout(err: pd.DataFrame) -> pd.DataFrame:
    """Each series' last window (the official hold-out of a competition set)."""
    return err[err.cutoff == err.groupby("unique_id").cutoff.transform("max")]


def _load(key: str):
    if key == "air":
        df = air_passengers()
        return df, None, 12, 12
    name, group = key.split("/")
    return competition(name, group)


def _score(label: str, key: str, windows: int, err: pd.DataFrame, h: int, season: int, log) -> tuple[list, list, list]:
    """Summary, per-horizon and significance rows of one data set in each of its scopes."""
    summaries, horizons, tests = [], [], []
    scopes = {"all windows": err} if windows > 1 else {}
    if key != "air":  # AirPassengers has no official hold-out
        scopes["official hold-out"] = official_holdout(err)
    for scope, e in scopes.items():
        s = summarize(e).assign(dataset=label, scope=scope, horizon=h, season_length=season)
        summaries.append(s)
        horizons.append(per_horizon(e).assign(dataset=label, scope=scope))
        best_classical = s[s.model.isin(CLASSICAL_MODELS)].sort_values("mase").model.iloc[0]
        for name in NEURAL:
            tests.append(bootstrap_difference(e, name, best_classical) | {"dataset": label, "scope": scope})
        log(f"{label} ({scope}):\n{s[['model', 'mase', 'smape', 'owa', 'units']].to_string(index=False)}")
    return summaries, horizons, tests


def run_forecast_experiment(root=None, log=print, *, datasets: dict | None = None,
                            neural_config: NeuralConfig | None = None) -> None:
    """Cross-validate every model on every data set and write the artifact set.

    ``datasets`` (label -> (loader key, windows)) and ``neural_config`` default to
    the chapter's; smaller ones make a quick run whose manifest records what it used.
    """
    datasets = DATASETS if datasets is None else datasets
    neural_config = NEURAL_CONFIG if neural_config is None else neural_config
    config = experiment_config(datasets, neural_config)
    summaries, horizons, tests, timings, units = [], [], [], [], []
    for label, (key, windows) in datasets.items():
        train, test, season, h = _load(key)
        neural = [NeuralForecaster(arch, name=name, config=neural_config, season_length=season)
                  for name, arch in NEURAL.items()]
        fc = Forecaster(CLASSICAL_MODELS + neural, freq=1 if key != "air" else "ME", season_length=season)
        t0 = time.perf_counter()
        cv = fc.cross_validation(train, h, n_windows=windows, test_df=test,
                                 min_train_length=None if key == "air" else min_train_length(h, season))
        secs = time.perf_counter() - t0
        err = evaluate(cv, train if test is None else pd.concat([train, test]), season, fc.names)
        units.append(unit_mase(err).assign(dataset=label))
        s, ph, sig = _score(label, key, windows, err, h, season, log)
        summaries += s
        horizons += ph
        tests += sig
        n_windows = cv.groupby("unique_id").cutoff.nunique()
        timings.append(dict(dataset=label, series=train.unique_id.nunique(), windows=windows,
                            series_windows=int(n_windows.sum()), seconds=secs))
        log(f"{label}: {secs:.0f} s, {int(n_windows.sum())} (series, window) pairs")
    files = {"summary.csv": pd.concat(summaries), "per_horizon.csv": pd.concat(horizons),
             "significance.csv": pd.DataFrame(tests), "timings.csv": pd.DataFrame(timings),
             "unit_mase.csv": pd.concat(units)}
    write_artifacts(NAME, {k: v.to_csv(index=False, float_format="%.6g").encode() for k, v in files.items()}, config,
                    root)


def forecast_results(root=None):
    """``(summary, per_horizon, significance, timings, unit_mase, mode)``; recomputed first under HEAVY_EVAL=1.

    ``unit_mase`` holds the MASE of every (data set, model, series, window), enough to
    redo the significance tests (or any other summary) without refitting.
    """
    mode = "recomputed now (HEAVY_EVAL=1)" if heavy_eval() else "loaded from verified artifacts"
    if heavy_eval():
        run_forecast_experiment(root)
    verify_artifacts(NAME, experiment_config(), root)
    tables = [read_artifact_csv(NAME, f, root) for f in ("summary.csv", "per_horizon.csv", "significance.csv",
                                                          "timings.csv", "unit_mase.csv")]
    tables[-1] = _typed_cutoffs(tables[-1])
    return (*tables, mode)


def _typed_cutoffs(units: pd.DataFrame) -> pd.DataFrame:
    """CSV mixes AirPassengers' dates with the competition sets' period numbers; give each set its own type back."""
    parts = []
    for _, g in units.groupby("dataset", sort=False):
        c = pd.to_numeric(g["cutoff"], errors="coerce")
        parts.append(g.assign(cutoff=c.astype("int64") if c.notna().all() else pd.to_datetime(g["cutoff"])))
    return pd.concat(parts)
