"""The collection of series, once: one structure for the rolling origins, the conformal scores and N-BEATS' windows.

A :class:`Panel` keeps the series end to end in one flat array: series ``i`` is
``y[starts[i] : starts[i] + lengths[i]]``. That is what :class:`~seqlab.forecast.Forecaster` cuts
its origins from. The global models read training windows from a second view of the same data,
built on first use: a left-padded array ``V`` (N, pad + n_max) with its mask ``M`` of observed
points, and ``Q[i, t]``, the MASE scale of ``y_i[:t]`` (:func:`~seqlab.forecast.metrics.mase_scales`).
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError
from .metrics import mase_scales

__all__ = ["Panel"]


class Panel:
    """Series end to end in one array, with the padded window view N-BEATS trains on.

    ``Panel(series, pad, season, short)``: ``series`` a list of 1-D arrays. For windows, series i sits at
    ``V[i, pad : pad + n_i]``; the ``pad`` positions before it are zeros with mask 0 (``short="mask"``), or repeat
    the first value with mask 1 (``short="pad"``, the older scheme: made-up history that looks observed). The
    window with cut ``t`` (t observed points before the target) has input ``y[t - L : t]`` =
    ``V[i, pad + t - L : pad + t]`` and target ``y[t : t + h]``; its MASE scale is ``Q[i, t]``: lag ``season``
    when ``t > season``, else lag 1. :meth:`from_frame` builds one from a long ``unique_id, ds, y`` frame.
    """

    def __init__(self, series, pad: int = 0, season: int = 1, short: str = "mask", ids=None, frame=None, x=None):
        if short not in ("mask", "pad"):
            raise InvalidParameterError(f"short must be mask or pad, got {short!r}")
        series = [np.asarray(y, float) for y in series]
        self.lengths = np.array([len(y) for y in series], np.int64)
        self.starts = np.r_[0, np.cumsum(self.lengths)[:-1]].astype(np.int64)
        self.y = np.concatenate(series) if series else np.zeros(0)
        self.ids = pd.Index(range(len(series)) if ids is None else ids)
        self.frame = frame
        self.pad, self.season, self.short = int(pad), int(season), short
        #: regressors, one row per observation end to end like ``y`` (rows, k); None without any
        self.x = None if x is None else np.asarray(x, float).reshape(len(self.y), -1)

    @classmethod
    def from_frame(cls, df: pd.DataFrame, exog=(), **kw) -> "Panel":
        """A validated long frame, the series in order of first appearance, each one contiguous (``frame``), with
        the regressor columns ``exog`` kept in ``frame`` and ``x``."""
        exog = list(exog)
        codes, ids = pd.factorize(df["unique_id"], sort=False)
        order = np.argsort(codes, kind="stable")
        frame = df.iloc[order][["unique_id", "ds", "y", *exog]].reset_index(drop=True)
        lengths = np.bincount(codes, minlength=len(ids))
        y = frame["y"].to_numpy(float)
        x = frame[exog].to_numpy(float) if exog else None
        return cls(np.split(y, np.cumsum(lengths)[:-1]), ids=ids, frame=frame, x=x, **kw)

    def exog_windows(self, i: np.ndarray, t: np.ndarray, L: int, h: int):
        """The regressors over each window's input (B, L, k), zero before a series' start, and over its target
        (B, h, k), as :meth:`windows` cuts ``y``; the target's part must lie within the series."""
        k = self.x.shape[1]
        width = self.pad + int(self.lengths.max())
        VX = np.zeros((len(self.lengths), width, k))
        for s in range(len(self.lengths)):
            n = int(self.lengths[s])
            VX[s, self.pad : self.pad + n] = self.x[self.starts[s] : self.starts[s] + n]
        cols = (self.pad + t - L)[:, None] + np.arange(L)
        past = VX[i[:, None], cols]
        future = VX[i[:, None], (self.pad + t)[:, None] + np.arange(h)] if h else None
        return past, future

    @property
    def n(self) -> np.ndarray:
        """The series' lengths (the window view's name for them)."""
        return self.lengths

    def series(self, i: int) -> np.ndarray:
        return self.y[self.starts[i] : self.starts[i] + self.lengths[i]]

    def rows(self, series, cuts):
        """Row positions of the first ``cuts[k]`` observations of series ``series[k]``, stacked."""
        if len(series) == 0:
            return np.zeros(0, np.int64)
        return np.concatenate([np.arange(s, s + c) for s, c in zip(self.starts[series], cuts)])

    @functools.cached_property
    def _padded(self):
        n_max = int(self.lengths.max())
        width = self.pad + n_max
        V = np.zeros((len(self.lengths), width), np.float32)
        M = np.zeros((len(self.lengths), width), np.float32)
        Q = np.full((len(self.lengths), n_max + 1), np.nan)  # Q[i, t]: MASE scale of y_i[:t]
        for i in range(len(self.lengths)):
            y = self.series(i)
            V[i, self.pad : self.pad + len(y)] = y
            M[i, self.pad : self.pad + len(y)] = 1
            if self.short == "pad":
                V[i, : self.pad], M[i, : self.pad] = y[0], 1
            Q[i, : len(y) + 1] = mase_scales(y, self.season)
        return V, M, Q

    @property
    def V(self) -> np.ndarray:
        return self._padded[0]

    @property
    def M(self) -> np.ndarray:
        return self._padded[1]

    @property
    def Q(self) -> np.ndarray:
        return self._padded[2]

    def windows(self, i: np.ndarray, t: np.ndarray, L: int, h: int = 0):
        """Inputs X (B, L), their mask, targets Y (B, h) and the MASE scales q (B,) of the windows cut at ``t``."""
        V, M, Q = self._padded
        cols = (self.pad + t - L)[:, None] + np.arange(L)
        X, Mk = V[i[:, None], cols], M[i[:, None], cols]
        Y = V[i[:, None], (self.pad + t)[:, None] + np.arange(h)] if h else None
        return X, Mk, Y, Q[i, t]

    def last(self, L: int):
        """The input window at each series' end (t = n_i): what a forecast from the origin reads."""
        i = np.arange(len(self.lengths))
        X, Mk, _, _ = self.windows(i, self.lengths, L)
        return X, Mk
