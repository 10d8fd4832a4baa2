"""§14.63's numbers recomputed from the stored forecasts and the raw data, with utilsforecast and plain numpy.

Nothing here calls seqlab's scoring code: the MASE, sMAPE and coverage come from utilsforecast, the
conformal bounds from a few lines of numpy written from the definition (the finite-sample quantile of the
scaled absolute errors of the earlier windows, per step), and the combinations from the stored members. What
they give must equal what the committed tables (and so the pages) print, to the last few bits.
"""
import math

import numpy as np
import pandas as pd
import pytest
from utilsforecast import losses  # a test dependency: the recomputation must run, never skip

from seqlab.experiments import forecast as fx
from seqlab.forecast.data import air_passengers, competition
from seqlab.store import artifact_dir, read_artifact_csv, verify_artifacts



def _history(key):
    if key == "air":
        return air_passengers(), 12
    name, group = key.split("/")
    train, test, season, _ = competition(name, group)
    return pd.concat([train, test]).sort_values(["unique_id", "ds"], kind="stable"), season


def load_stored(root=None, datasets=None):
    """The stored forecasts of every set, with the combinations formed from their members, and the raw data."""
    datasets = fx.DATASETS if datasets is None else datasets
    f = pd.read_csv(artifact_dir(fx.NAME, root) / "forecasts.csv.gz", float_precision="round_trip",
                    dtype={"unique_id": str}, low_memory=False)
    out = {}
    for label, (key, _) in datasets.items():
        hist, season = _history(key)
        g = f[f.dataset == label].drop(columns="dataset").copy()
        hist = hist.assign(unique_id=hist.unique_id.map(str))
        for col in ("ds", "cutoff"):
            g[col] = g[col].astype(hist.ds.dtype) if hist.ds.dtype.kind in "iu" else pd.to_datetime(g[col])
        for name, parts in fx.COMBINATIONS.items():  # the combinations are the plain means of their members
            g[name] = g[list(parts)].mean(axis=1)
        g["window"] = g.groupby("unique_id").cutoff.rank(method="dense", ascending=False).astype(int) - 1
        out[label] = (g, hist, season)
    return out


@pytest.fixture(scope="module")
def stored():
    verify_artifacts(fx.NAME, fx.experiment_config())
    return load_stored()


MODELS = fx.CLASSICAL_MODELS + list(fx.NEURAL) + list(fx.COMBINATIONS)


def _scopes(label, g):
    scopes = {"all windows": g} if g.window.max() > 0 else {}
    if label != "AirPassengers":
        scopes["official hold-out"] = g[g.window == 0]
    return scopes


def _unit_mase(g, hist, season, models):
    m = losses.mase(g[["unique_id", "ds", "cutoff", "y", *models]], models, season, hist[["unique_id", "ds", "y"]])
    return m.replace([np.inf, -np.inf], np.nan)  # a zero scale: no MASE, as in the tables


def test_summary_mase_and_smape(stored):
    check_summary_mase_and_smape(stored)


def check_summary_mase_and_smape(stored, root=None):
    summary = read_artifact_csv(fx.NAME, "summary.csv", root)
    checked = 0
    for label, (g, hist, season) in stored.items():
        for scope, e in _scopes(label, g).items():
            mase = _unit_mase(e, hist, season, MODELS)
            smape = losses.smape(e[["unique_id", "cutoff", "y", *MODELS]], MODELS)
            row = summary[(summary.dataset == label) & (summary.scope == scope)].set_index("model")
            for model in MODELS:
                assert row.mase[model] == pytest.approx(mase[model].mean(), rel=1e-12), (label, scope, model)
                assert row.smape[model] == pytest.approx(200 * smape[model].mean(), rel=1e-12), (label, scope, model)
                checked += 1
    assert checked == len(MODELS) * sum(len(_scopes(k, v[0])) for k, v in stored.items())


def test_unit_mase_and_significance(stored):
    check_unit_mase_and_significance(stored)


def _key(cutoff: pd.Series) -> pd.Series:
    """A cutoff as text that reads the same from a date, a timestamp or a period number."""
    return cutoff.astype(str).str.replace(" 00:00:00", "", regex=False)


def check_unit_mase_and_significance(stored, root=None):
    units = read_artifact_csv(fx.NAME, "unit_mase.csv", root)
    sig = read_artifact_csv(fx.NAME, "significance.csv", root)
    for label, (g, hist, season) in stored.items():
        mase = _unit_mase(g, hist, season, MODELS).assign(cutoff=lambda x: _key(x.cutoff))
        u = units[units.dataset == label].assign(unique_id=lambda x: x.unique_id.map(str),
                                                 cutoff=lambda x: _key(x.cutoff))
        wide = u.pivot_table(index=["unique_id", "cutoff"], columns="model", values="mase", dropna=False)
        joined = mase.set_index(["unique_id", "cutoff"])[MODELS].join(wide[MODELS], rsuffix="_stored", how="outer")
        for model in MODELS:
            np.testing.assert_allclose(joined[model], joined[f"{model}_stored"], rtol=1e-12, equal_nan=True)
        # each test's mean difference and share of units won, from the recomputed unit MASE
        holdout = _unit_mase(g[g.window == 0], hist, season, MODELS)
        by_scope = {"all windows": mase, "official hold-out": holdout}
        for r in sig[sig.dataset == label].itertuples():
            e = by_scope[r.scope]
            d = (e[r.model] - e[r.against]).dropna()
            assert r.mean_difference == pytest.approx(d.mean(), rel=1e-10, abs=1e-15)
            assert r.share_of_units_better == pytest.approx((d < 0).mean(), abs=1e-15)


def test_rounds_last_window(stored):
    check_rounds_last_window(stored)


def check_rounds_last_window(stored, root=None):
    rounds = read_artifact_csv(fx.NAME, "nbeats_rounds.csv", root)
    for r in rounds.itertuples():
        g, hist, season = stored[r.dataset]
        name = fx.ROUND_NAMES[r.round]
        m = _unit_mase(g[g.window == 0], hist, season, [name])
        assert r.last_window_mase == pytest.approx(m[name].mean(), rel=1e-12)


def _scales(g, hist, season):
    """In-sample seasonal-naive MAE of each (series, cutoff)'s training part."""
    parts = {uid: s for uid, s in hist.groupby("unique_id")}
    out = {}
    for uid, cut in g[["unique_id", "cutoff"]].drop_duplicates().itertuples(index=False):
        y = parts[uid].y[parts[uid].ds <= cut].to_numpy(float)
        out[(uid, cut)] = np.mean(np.abs(y[season:] - y[:-season])) if len(y) > season else np.nan
    return out


def test_interval_coverage(stored):
    check_interval_coverage(stored)


def check_interval_coverage(stored, root=None):
    iv = read_artifact_csv(fx.NAME, "intervals.csv", root)
    for label, (g, hist, season) in stored.items():
        scales = _scales(g, hist, season)
        g = g.assign(step=g.groupby(["unique_id", "cutoff"]).cumcount(),
                     scale=[scales[k] for k in zip(g.unique_id, g.cutoff)])
        for r in iv[iv.dataset == label].itertuples():
            if r.kind == "native":
                e = g if label == "AirPassengers" else g[g.window == 0]
                for lv in fx.LEVELS:
                    c = losses.coverage(e[["unique_id", "cutoff", "y", r.model, f"{r.model}-lo-{lv}",
                                           f"{r.model}-hi-{lv}"]], [r.model], lv)
                    assert getattr(r, f"coverage_{lv}") == pytest.approx(c[r.model].mean(), rel=1e-12)
                continue
            assert label != "AirPassengers"  # one series: too few calibration scores for a conformal interval
            e = g[g.window == 0].copy()
            cal = g[g.window > 0]
            score = (cal.y - cal[r.model]).abs() / cal.scale.where(cal.scale > 0)
            for lv in fx.LEVELS:
                q = {}
                for step, s in score.groupby(cal.step):
                    s = np.sort(s.dropna().to_numpy())
                    q[step] = s[math.ceil((len(s) + 1) * lv / 100) - 1]
                half = e.step.map(q) * e.scale.where(e.scale > 0)
                e[f"{r.model}-lo-{lv}"], e[f"{r.model}-hi-{lv}"] = e[r.model] - half, e[r.model] + half
                ok = e.scale > 0
                c = losses.coverage(e[ok][["unique_id", "cutoff", "y", r.model, f"{r.model}-lo-{lv}",
                                           f"{r.model}-hi-{lv}"]], [r.model], lv)
                assert getattr(r, f"coverage_{lv}") == pytest.approx(c[r.model].mean(), rel=1e-12), (label, r.model)
