"""The experiment's artifacts: run it (HEAVY_EVAL), rescore stored forecasts, and load the verified tables."""
from __future__ import annotations

import gzip
import time

import pandas as pd

from ...forecast.neural import NeuralConfig
from ...parallel import run_calls
from ...store import artifact_dir, heavy_eval, read_artifact_csv, verify_artifacts, write_artifacts
from .scoring import _attach, _score_sets
from .sets import _sets_from_forecasts
from .settings import DATASETS, NAME, NBeatsPlan, NEURAL, NEURAL_CONFIG, experiment_config, nbeats_plan
from .training import _cost, _global_job, _train


def _typed(frame: pd.DataFrame, columns=("cutoff", "ds")) -> pd.DataFrame:
    """CSV mixes AirPassengers' dates with the competition sets' period numbers; give each set its own type back."""
    parts = []
    for _, g in frame.groupby("dataset", sort=False):
        g = g.copy()
        for col in columns:
            c = pd.to_numeric(g[col], errors="coerce")
            g[col] = c.astype("int64") if c.notna().all() else pd.to_datetime(g[col])
        parts.append(g)
    return pd.concat(parts)


def _csv(frame: pd.DataFrame) -> bytes:
    """Full precision: 17 significant digits read back as the same float."""
    return frame.to_csv(index=False, float_format="%.17g").encode()


def stored_forecasts(root=None) -> pd.DataFrame:
    """Every stored forecast of the artifact set (``forecasts.csv.gz``), each set's dates or periods typed back."""
    return _typed(pd.read_csv(artifact_dir(NAME, root) / "forecasts.csv.gz", float_precision="round_trip",
                              dtype={"unique_id": str}, low_memory=False))


def holdout_forecasts(dataset: str, root=None):
    """``(frame, source)``: the stored forecasts of ``dataset``'s official hold-out (each series' last window), with
    a column per classical combination and the series ids of the raw data; and that data set's source (history,
    season)."""
    from .scoring import add_combinations
    from .sets import _load, official_holdout

    f = stored_forecasts(root)
    f = official_holdout(f[f.dataset == dataset].drop(columns="dataset"))
    src = _load(DATASETS[dataset][0])
    ids = {str(u): u for u in src.history.unique_id.unique()}
    return add_combinations(f.assign(unique_id=f.unique_id.map(ids))), src


TRAINING_FILES = ("forecasts.csv.gz", "timings.csv", "nbeats_selection.csv", "nbeats_members.csv",
                  "nbeats_ablation.csv", "nbeats_recipe.csv", "nbeats_rounds.csv")


def score_forecast_artifacts(root=None, log=print, *, datasets: dict | None = None, config: dict | None = None):
    """Step 5 from the stored forecasts alone: rewrite every scored table of the artifact set.

    The trainings' files (:data:`TRAINING_FILES`) are verified and kept as they are; the
    summaries, significance tests, intervals, residuals and the rounds' hold-out MASE are
    computed again from ``forecasts.csv.gz`` and the raw data. ``config``: the manifest's
    (default: the stored one).
    """
    manifest = verify_artifacts(NAME, config, root)
    config = manifest["config"] if config is None else config
    datasets = {k: tuple(v) for k, v in config["datasets"].items()} if datasets is None else datasets
    raw = {f: (artifact_dir(NAME, root) / f).read_bytes() for f in TRAINING_FILES}
    forecasts = stored_forecasts(root)
    sets = _sets_from_forecasts(forecasts, datasets)
    scored = _score_sets(sets, forecasts, log)
    rounds = read_artifact_csv(NAME, "nbeats_rounds.csv", root).drop(columns=["last_window_mase"], errors="ignore")
    rounds = rounds.merge(pd.DataFrame(scored["rounds"]), on=["dataset", "round"], how="left", validate="one_to_one")
    files = dict(raw) | {"nbeats_rounds.csv": _csv(rounds),
                         "summary.csv": _csv(pd.concat(scored["summary"])),
                         "per_horizon.csv": _csv(pd.concat(scored["horizon"])),
                         "significance.csv": _csv(pd.DataFrame(scored["tests"])),
                         "unit_mase.csv": _csv(pd.concat(scored["units"])),
                         "residuals.csv": _csv(pd.concat(scored["residuals"])),
                         "intervals.csv": _csv(pd.concat(scored["intervals"], ignore_index=True)),
                         "interval_groups.csv": _csv(pd.concat(scored["groups"], ignore_index=True))}
    write_artifacts(NAME, files, config, root)


def run_forecast_experiment(root=None, log=print, *, datasets: dict | None = None,
                            neural_config: NeuralConfig | None = None, nbeats: NBeatsPlan | None = None,
                            workers: int | None = None) -> None:
    """Cross-validate every model on every data set and write the artifact set.

    ``datasets`` (label -> (loader key, windows)), ``neural_config`` and ``nbeats``
    default to the chapter's; smaller ones make a quick run (a smaller ``neural_config``
    alone brings a one-member N-BEATS of the same size, see :func:`nbeats_plan`) whose
    manifest records what it used. ``workers``: processes for the trainings. The
    trainings' results are written first, so that scoring can be run again from them
    (:func:`score_forecast_artifacts`) without training anything.
    """
    datasets = DATASETS if datasets is None else datasets
    neural_config = NEURAL_CONFIG if neural_config is None else neural_config
    plan = nbeats_plan(neural_config) if nbeats is None else nbeats
    config = experiment_config(datasets, neural_config, plan)
    t_run = time.perf_counter()
    raw = _train(datasets, neural_config, plan, workers, log)
    log(f"trainings: {time.perf_counter() - t_run:.0f} s")
    f = raw["forecasts"]
    first = ["dataset", "unique_id", "ds", "cutoff", "y"]
    f = f[first + [c for c in f.columns if c not in first]].assign(unique_id=lambda x: x.unique_id.map(str))
    files = {"forecasts.csv.gz": gzip.compress(_csv(f), mtime=0), "timings.csv": _csv(raw["timings"]),
             "nbeats_selection.csv": _csv(raw["selection"]), "nbeats_members.csv": _csv(raw["members"]),
             "nbeats_ablation.csv": _csv(raw["ablation"]), "nbeats_recipe.csv": _csv(raw["recipe"]),
             "nbeats_rounds.csv": _csv(raw["rounds"])}
    write_artifacts(NAME, files, config, root)
    score_forecast_artifacts(root, log, datasets=datasets, config=config)
    log(f"whole run: {time.perf_counter() - t_run:.0f} s")


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
    tables[-1] = _typed(tables[-1], ("cutoff",))
    return (*tables, mode)


def nbeats_results(root=None) -> dict:
    """The N-BEATS evidence and the residual check of the last run (verified artifacts).

    ``selection``: validation MASE of every (step count, ensemble size), the chosen one
    marked; ``members``: each member's own validation MASE; ``ablation``: one change at
    a time; ``rounds``: the choice within each pool of members (generic only, then generic
    + interpretable), its validation MASE and its MASE on the last window (the official
    hold-out of a competition set); ``recipe``: round 3's rule applied to the ablation (what was adopted);
    ``residuals``: mean signed scaled error by data set,
    scope, model and step.
    """
    verify_artifacts(NAME, experiment_config(), root)
    out = {k: read_artifact_csv(NAME, f"nbeats_{k}.csv", root)
           for k in ("selection", "members", "ablation", "rounds", "recipe")}
    out["residuals"] = read_artifact_csv(NAME, "residuals.csv", root)
    return out


def interval_results(root=None) -> pd.DataFrame:
    """Coverage, Winkler, scaled pinball and scaled CRPS of every model's 80% and 95% intervals on every set.

    One row per (data set, model, kind): ``kind`` is ``conformal`` (calibrated on the earlier
    windows of the same run) or ``native`` (statsforecast's own); ``calibration_scores`` is the
    fewest conformal scores behind any step.
    """
    verify_artifacts(NAME, experiment_config(), root)
    return read_artifact_csv(NAME, "intervals.csv", root)


def interval_group_results(root=None) -> pd.DataFrame:
    """Coverage of the last window's intervals by length group and by step, pooled and Mondrian conformal and native
    (one row per data set, model, kind, grouping and group; competition sets only)."""
    verify_artifacts(NAME, experiment_config(), root)
    return read_artifact_csv(NAME, "interval_groups.csv", root)


def retrain_global_models(root=None, log=print, workers: int | None = None) -> None:
    """The GRU and Transformer retrained on every stored window, everything else of the artifact set kept.

    A change that touches only those two models (how their windows are cut, say) needs their
    forecasts again, not the N-BEATS search's two hours: their columns of ``forecasts.csv.gz``
    and their seconds in ``timings.csv`` are replaced, and every scored table is computed
    again (:func:`score_forecast_artifacts`). ``HEAVY_EVAL=1`` still reruns the whole experiment.
    """
    config = verify_artifacts(NAME, None, root)["config"]
    datasets = {k: tuple(v) for k, v in config["datasets"].items()}
    d = artifact_dir(NAME, root)
    forecasts = stored_forecasts(root)
    sets = _sets_from_forecasts(forecasts, datasets)
    neural = NeuralConfig(**config["neural_config"])
    calls, tags = [], []
    for label, ds in sets.items():
        for w in ds.win:
            for name in ("GRU", "Transformer"):
                calls.append((_global_job, (NEURAL[name], name, neural, ds.season, w.frame, ds.h)))
                tags.append((label, name, w.j))
    log(f"{len(calls)} trainings of the GRU and Transformer")
    preds: dict = {}
    seconds: dict = {}
    for (label, name, j), (out, secs) in zip(tags, run_calls(calls, workers=workers, cost=_cost)):
        preds.setdefault(label, {}).setdefault(name, {})[j] = out
        seconds[(label, name)] = seconds.get((label, name), 0.0) + secs
    parts = []
    for label, ds in sets.items():
        cv = forecasts[forecasts.dataset == label].drop(columns=["dataset", "GRU", "Transformer"])
        order = list(forecasts.columns)
        parts.append(_attach(cv, ds.win, preds[label], ds.h).assign(dataset=label)[order])
    new = pd.concat(parts, ignore_index=True).assign(unique_id=lambda x: x.unique_id.map(str))
    timings = pd.read_csv(d / "timings.csv")
    for (label, name), secs in seconds.items():
        timings.loc[timings.dataset == label, f"{name.lower()}_seconds"] = secs
    timings["seconds"] = timings[[c for c in timings.columns if c.endswith("_seconds")]].sum(axis=1)
    files = {f: (d / f).read_bytes() for f in TRAINING_FILES}
    files |= {"forecasts.csv.gz": gzip.compress(_csv(new), mtime=0), "timings.csv": _csv(timings)}
    write_artifacts(NAME, files, config, root)
    score_forecast_artifacts(root, log, config=config)


def chosen_nbeats(dataset: str = "M3 monthly", root=None, round: int = 3) -> tuple[int, int]:
    """``(steps, members)`` the last run chose for ``dataset`` on its validation windows in ``round`` (2 or 3)."""
    sel = nbeats_results(root)["selection"]
    row = sel[(sel.dataset == dataset) & (sel["round"] == round) & sel.chosen].iloc[0]
    return int(row.steps), int(row.members)
