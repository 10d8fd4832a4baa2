"""Split-conformal intervals at forecast origins: where the calibration origins of each target origin lie, and
the bands their scaled errors give.

Each target offset ``o`` calibrates on the windows that end at ``o + h + j * step`` (``j < windows``), so
no calibration window sees the target's test values. The scores and the quantile are those of
:mod:`seqlab.forecast.intervals` (:func:`~seqlab.forecast.intervals.conformal_scores`,
:func:`~seqlab.forecast.intervals.conformal_band`): one split-conformal implementation for the
:class:`~seqlab.forecast.Forecaster` and for stored rolling windows alike.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidParameterError
from .intervals import conformal_band, conformal_scores, default_calibration
from .metrics import mase_scale
from .panel import Panel

__all__ = ["CalibrationPlan", "conformal_bounds"]


@dataclass
class CalibrationPlan:
    """The calibration origins of a batch of target origins: ``offsets[o]`` the calibration offsets of target
    offset ``o``; ``series`` and ``origin_offsets`` every (series, offset) calibration pair with a training part
    of at least ``min_cut`` observations."""

    windows: int
    step: int
    offsets: dict = field(default_factory=dict)
    series: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    origin_offsets: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    notes: list = field(default_factory=list)

    @classmethod
    def build(cls, panel: Panel, offsets, h: int, levels, min_cut: int, calibration_windows: int | None = None,
              calibration_step: int | None = None) -> "CalibrationPlan":
        """The default number of windows and step for ``levels`` (or the ones asked for), cut to what fits.

        Asked-for windows that do not fit are an :class:`~seqlab.errors.InvalidParameterError`; default ones
        that do not fit are reduced, with a note.
        """
        windows, step = default_calibration(levels, len(panel.ids), h)
        windows, step = calibration_windows or windows, calibration_step or step
        # calibration origin j of the last forecast origin trains on the longest series less offset + h + j step
        longest = int(panel.lengths.max())
        room = longest - int(np.min(offsets)) - h - min_cut
        fit = 0 if room < 0 else room // step + 1
        notes = []
        if windows > fit:
            where = (f"the longest series ({longest} observations) holds {fit} before its last forecast origin, "
                     f"each with at least {min_cut} observations to train on")
            if calibration_windows is not None or calibration_step is not None:
                raise InvalidParameterError(
                    f"{windows} calibration window(s) {step} period(s) apart do not fit: {where}; ask for at most "
                    f"{fit}" + (" or a smaller calibration step" if fit < 2 else ""))
            notes.append(f"only {fit} of the {windows} calibration windows fit: {where}")
        plan = cls(int(windows), int(step), notes=notes)
        cal_s, cal_o = [], []
        for o in np.unique(offsets):
            offs = o + h + step * np.arange(windows)
            plan.offsets[int(o)] = offs
            for oc in offs:
                ok = np.flatnonzero(panel.lengths - oc >= min_cut)
                cal_s.append(ok)
                cal_o.append(np.full(len(ok), oc))
        if cal_s:
            plan.series, plan.origin_offsets = np.concatenate(cal_s), np.concatenate(cal_o)
        return plan


def conformal_bounds(panel: Panel, pairs, keys, store: dict, series, offsets, plan: CalibrationPlan, names,
                     levels, h: int, season_length: int, points: dict,
                     quantiles: dict | None = None) -> tuple[dict, list[str]]:
    """Split-conformal bounds at the target origins from the scaled absolute errors of the calibration origins.

    ``store[name]`` holds each model's forecasts at every origin in ``pairs`` (row ``keys[i, o]``);
    ``points[name]`` its forecasts at the targets (``series``, ``offsets``). Returns the columns
    ``name-lo-level`` and ``name-hi-level`` and the notes on bounds that could not be given. ``quantiles``, when
    given, receives each ``(name, level, target offset)``'s quantiles per step, what a stored forecaster keeps.
    """
    cuts_all = panel.lengths[pairs[:, 0]] - pairs[:, 1]
    scale = np.array([mase_scale(panel.y[s : s + c], season_length)
                      for s, c in zip(panel.starts[pairs[:, 0]], cuts_all)])
    scale = np.where(scale > 0, scale, np.nan)
    # actual values after each origin where they are known (calibration origins always have them)
    actual = np.full((len(pairs), h), np.nan)
    for k, (s, c) in enumerate(zip(panel.starts[pairs[:, 0]], cuts_all)):
        end = panel.starts[pairs[k, 0]] + panel.lengths[pairs[k, 0]]
        v = panel.y[s + c : min(s + c + h, end)]
        actual[k, : len(v)] = v
    t_scale = scale[keys[series, offsets]]
    unbounded = 0
    out = {}
    for name in names:
        scores = conformal_scores(actual, store[name], scale)
        for lv in levels:
            lo = np.full((len(series), h), np.nan)
            hi = np.full((len(series), h), np.nan)
            for o, offs in plan.offsets.items():
                rows = np.flatnonzero(offsets == o)
                cal = keys[:, offs].ravel()
                cal = cal[cal >= 0]
                lo[rows], hi[rows], q = conformal_band(points[name][rows], t_scale[rows], scores[cal], lv)
                if quantiles is not None:
                    quantiles[(name, lv, int(o))] = q
                unbounded += int(np.isinf(q).sum()) * len(rows)
            out[f"{name}-lo-{lv}"], out[f"{name}-hi-{lv}"] = lo, hi
    notes = []
    if unbounded:
        notes.append(f"{unbounded} conformal interval value(s) are unbounded: a {max(levels)}% interval needs at "
                     "least l/(1-l) calibration errors per step (19 at 95%); give more series, windows or "
                     "calibration_windows")
    if np.isnan(t_scale).any():
        notes.append("series whose training part never changes between seasons have no conformal interval "
                     "(their MASE scale, which sizes the interval, is 0)")
    return out, notes
