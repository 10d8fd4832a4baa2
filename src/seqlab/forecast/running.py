"""The Forecaster's one run: every model fitted at the target origins, the conformal ones again at their
calibration origins, and the bands those errors give. :class:`~seqlab.forecast.Forecaster` calls it for
``forecast``, ``fit`` and ``cross_validation`` alike."""
from __future__ import annotations

import numpy as np

from .calibration import CalibrationPlan, conformal_bounds
from .checks import check_bounded, check_fit_lengths, check_size
from .fitted import capture_neural
from .origins import OriginRunner
from .panel import Panel

__all__ = ["forecast_origins"]


def forecast_origins(fc, panel: Panel, series, offsets, h: int, levels, intervals: str, calibration_windows,
                 calibration_step, min_cut: int, bounded: bool = False, windows: bool = False,
                 keep: dict | None = None, exog=(), future=None):
    """Forecasts (and intervals for ``levels``) of the Forecaster ``fc``'s models at the target origins:
    ``({column: (K, h)}, kinds, notes)``. ``exog``: the regressors (columns of the panel), ``future`` their values
    after each series' end, (series, h, k), for targets at the end; ``keep`` receives what a fit keeps.

    Every model is fitted at the targets (:class:`~seqlab.forecast.origins.OriginRunner`); the models whose
    intervals are conformal are fitted again at the calibration origins of a
    :class:`~seqlab.forecast.calibration.CalibrationPlan`, and their bounds come from the errors there.
    """
    series, offsets = np.asarray(series, np.int64), np.asarray(offsets, np.int64)
    kinds = {}
    if levels:
        for m in fc.models:
            native = intervals == "native" and getattr(m, "native_intervals", False)
            kinds[m.name] = "native" if native else "conformal"
    conformal = [m for m in fc.models if kinds.get(m.name) == "conformal"]
    native_levels = levels if any(k == "native" for k in kinds.values()) else None
    plan = None
    if conformal:
        plan = CalibrationPlan.build(panel, offsets, h, levels, min_cut, calibration_windows, calibration_step)
        if bounded:
            check_bounded(conformal, panel, plan, levels, min_cut)
        kinds["_calibration"] = {"windows": plan.windows, "step": plan.step}
    cal_s = plan.series if plan else np.zeros(0, np.int64)
    cal_o = plan.origin_offsets if plan else np.zeros(0, np.int64)
    all_s, all_o = np.r_[series, cal_s].astype(np.int64), np.r_[offsets, cal_o].astype(np.int64)
    pairs = np.unique(np.c_[all_s, all_o], axis=0)
    top = max([int(pairs[:, 1].max())] + ([int(v.max()) for v in plan.offsets.values()] if plan else []))
    check_size(panel, pairs, len(series), h, len(fc._columns(fc.names, levels)), top)
    keys = np.full((len(panel.ids), top + 1), -1, np.int64)
    keys[pairs[:, 0], pairs[:, 1]] = np.arange(len(pairs))
    store = {"_size": len(pairs), "_keys": keys}
    target = np.zeros(len(pairs), bool)
    target[keys[series, offsets]] = True
    check_fit_lengths(fc.models, panel, series, offsets, windows)
    runner = OriginRunner(fc.n_jobs, fc.engine, fc._progress, exog, future)
    runner.run(fc.models, panel, series, offsets, h, native_levels, store)
    if keep is not None:  # the weights of the fits at the targets, before calibration fits replace them
        keep["neural"] = capture_neural(fc.models)
    notes = runner.run_calibration(conformal, panel, pairs[~target], h, store)
    out = {c: store[c][keys[series, offsets]] for c in store if not c.startswith("_")}
    if conformal:
        bounds, more = conformal_bounds(panel, pairs, keys, store, series, offsets, plan,
                                        [m.name for m in conformal], levels, h, fc.season_length, out,
                                        None if keep is None else keep.setdefault("quantiles", {}))
        out.update(bounds)
        notes += more + plan.notes
    return out, kinds, notes
