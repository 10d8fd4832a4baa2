"""§14.47 LSTM and GRU gating: input-gradient reach by lag, over width, and the forget-gate bias."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch
import torch.nn as nn

from ..analysis.gradients import input_gradient_reach
from ..claims import claim_source, require, verdict
from ..plotting.theme import PALETTE
from ..results import once
from ..threads import single_threaded
from ._util import wide_by_lag
from .base import section

#: the chapter's settings: sequence length, widths of the surface, seeds, forget-gate biases
T = 80
WIDTHS = (8, 16, 32, 64, 128)
#: the width of the cells in the reach table (the surface varies it)
REACH_WIDTH = 32
SEED = 31
#: the initialisations the ratios are repeated over: the chapter's seed and the next two (no training)
SEEDS = (31, 32, 33)
FORGET_SEED = 33
FORGET_BIASES = (-1.0, 0.0, 1.0, 2.0)
#: the hand-written cells against PyTorch's: seed, batch, steps, input and hidden width (the page's cells)
MATCH_SEED, MATCH_B, MATCH_T, MATCH_IN, MATCH_H = 0, 4, 20, 8, 16


def reach_table(seed: int = SEED) -> pd.DataFrame:
    rows = []
    for cell in ("rnn", "lstm", "gru"):
        g = input_gradient_reach(cell, T=T, d=REACH_WIDTH, seed=seed)
        for t in range(T):
            rows.append(dict(cell=cell.upper(), step=t + 1, lag=T - 1 - t, g=max(float(g[t]), 1e-30)))
    return pd.DataFrame(rows)


def reach_surface(cell: str, seed: int) -> np.ndarray:
    """log10 input-gradient magnitude, rows = widths, columns = lag 0 .. T-1."""
    return np.stack([np.log10(np.maximum(input_gradient_reach(cell, T=T, d=d, seed=seed)[::-1], 1e-30))
                     for d in WIDTHS])


def forget_bias_table(seed: int = FORGET_SEED, biases=FORGET_BIASES) -> pd.DataFrame:
    rows = []
    for fb in biases:
        g = input_gradient_reach("lstm", T=T, d=32, seed=seed, forget_bias=fb)
        rows.append(dict(forget_bias=fb, grad_at_lag_40=float(g[39]), grad_at_lag_70=float(g[9])))
    return pd.DataFrame(rows)


def surface_gap_table(seed: int = SEED, widths=WIDTHS) -> pd.DataFrame:
    """The 3D surface in numbers: for each width, where the LSTM's input gradient is above the RNN's.

    Columns: width, the first lag at which the LSTM is above (NaN: never within T steps), whether it is
    above at every lag from 40 on, how many of the T lags it is above at, and the ratio LSTM/RNN at lag T-1.
    """
    rows = []
    for d in widths:
        rnn = np.maximum(input_gradient_reach("rnn", T=T, d=d, seed=seed)[::-1], 1e-30)  # index = lag
        lstm = np.maximum(input_gradient_reach("lstm", T=T, d=d, seed=seed)[::-1], 1e-30)
        above = lstm > rnn
        rows.append(dict(width=d, first_lag_lstm_above=int(np.argmax(above)) if above.any() else np.nan,
                         lstm_above_from_lag_40=bool(above[40:].all()), lags_lstm_above=int(above.sum()),
                         ratio_at_last_lag=float(lstm[-1] / rnn[-1])))
    return pd.DataFrame(rows)


def reach_ratios(seeds=SEEDS, widths=WIDTHS) -> pd.DataFrame:
    """Each initialisation (seed) and width: the LSTM's and GRU's input gradient at lag T-1 over the RNN's, and
    whether the LSTM is above the RNN at every lag from 40 on (the cells of :func:`surface_gap_table`)."""
    rows = []
    with single_threaded():  # tiny cells: one thread is many times faster than two under load
        for seed, d in ((s, w) for s in seeds for w in widths):
            g = {c: np.maximum(input_gradient_reach(c, T=T, d=d, seed=seed)[::-1], 1e-30)  # index = lag
                 for c in ("rnn", "lstm", "gru")}
            rows.append(dict(seed=seed, width=d, lstm_over_rnn=float(g["lstm"][-1] / g["rnn"][-1]),
                             gru_over_rnn=float(g["gru"][-1] / g["rnn"][-1]),
                             lstm_above_from_lag_40=bool((g["lstm"][40:] > g["rnn"][40:]).all())))
    return pd.DataFrame(rows)


def ratio_spread(ratios: pd.DataFrame) -> pd.DataFrame:
    """Per width, over the seeds of :func:`reach_ratios`: the lowest and highest LSTM/RNN (and GRU/RNN) ratio at
    lag T-1, and
    in how many initialisations the LSTM is above at that lag and at every lag from 40 on."""
    g = ratios.groupby("width")
    return pd.DataFrame(dict(lowest=g.lstm_over_rnn.min(), highest=g.lstm_over_rnn.max(),
                             gru_lowest=g.gru_over_rnn.min(), gru_highest=g.gru_over_rnn.max(),
                             seeds_above=g.lstm_over_rnn.apply(lambda r: int((r > 1).sum())),
                             seeds_above_from_40=g.lstm_above_from_lag_40.sum().astype(int),
                             seeds=g.size())).reset_index()


@torch.no_grad()
def unroll_difference(cell: str, seed: int = MATCH_SEED) -> float:
    """Largest difference between ``seqlab.nn.unroll`` (the hand-written ``cell``, "lstm" or "gru") and PyTorch's
    fused module given the same weights, on the input the page draws: the input of :func:`match_claims`."""
    from ..nn import unroll

    torch.manual_seed(seed)
    lstm = nn.LSTM(input_size=MATCH_IN, hidden_size=MATCH_H, batch_first=True)
    x = torch.randn(MATCH_B, MATCH_T, MATCH_IN)
    module = lstm
    if cell == "gru":
        torch.manual_seed(seed)
        module = nn.GRU(input_size=MATCH_IN, hidden_size=MATCH_H, batch_first=True)
    return (unroll(module, x) - module(x)[0]).abs().max().item()


@claim_source
def match_claims(max_difference: float, cell: str) -> list:
    """The hand-written cell equals PyTorch's to float rounding (1e-5)."""
    return [verdict(f"s47_{cell}_match", max_difference < 1e-5, max_difference=max_difference)]


@claim_source
def reach_claims(reach: pd.DataFrame, gaps: pd.DataFrame, ratios: pd.DataFrame, width: int = REACH_WIDTH) -> list:
    """Over the initialisations of ``ratios`` (:func:`reach_ratios`): do the gated cells reach further at ``width``,
    does the LSTM stay above from lag 40 on in most draws, does its lead at the longest lag fail to grow steadily
    with width (the draws of neighbouring widths overlap); all three decay; the erratum's premises (the chapter's
    surface ``gaps``)."""
    g = reach.set_index(["cell", "lag"]).g
    last = int(reach.lag.max())
    decays = {c: bool(g[(c, last)] < g[(c, 1)]) for c in ("RNN", "LSTM", "GRU")}
    narrow = gaps.iloc[0]
    at = ratios[ratios.width == width]
    lstm_lo, lstm_hi, gru_lo, gru_hi = (float(f(at[c])) for c in ("lstm_over_rnn", "gru_over_rnn") for f in (min, max))
    widths = sorted(ratios.width.unique())[1:]  # from the second width up, as the chapter's reading
    wide = ratios[ratios.width.isin(widths)]
    misses = [dict(width=int(r.width), seed=int(r.seed)) for r in wide.itertuples() if not r.lstm_above_from_lag_40]
    spans = {int(w): (float(p.lstm_over_rnn.min()), float(p.lstm_over_rnn.max())) for w, p in wide.groupby("width")}
    ordered = all(spans[a][1] < spans[b][0] for a, b in zip(widths, widths[1:]))
    return [
        verdict("s47_reach", lstm_lo > 1 and gru_lo > 1, width=width, seeds=int(at.seed.nunique()), last_lag=last,
                lstm_lo=lstm_lo, lstm_hi=lstm_hi, gru_lo=gru_lo, gru_hi=gru_hi),
        verdict("s47_decay", all(decays.values()), last_lag=last, **{f"{c}_decays": v for c, v in decays.items()}),
        require("s47_erratum_short_lags", g[("RNN", 1)] > g[("LSTM", 1)] and narrow.lags_lstm_above == 0,
                rnn_lag1=g[("RNN", 1)], lstm_lag1=g[("LSTM", 1)], narrow_width=narrow.width,
                narrow_lags_lstm_above=narrow.lags_lstm_above),
        # most draws, not every one: a draw at a narrow width can miss (the page's reading)
        verdict("s47_wide_above", len(misses) < len(wide) / 2, first_width=int(widths[0]),
                seeds=int(ratios.seed.nunique()), misses=misses, draws=len(wide), kept=len(wide) - len(misses),
                every_draw=not misses),
        # no trend: some width's draws are not all above those of the width before (the draws overlap)
        verdict("s47_gap_no_trend", not ordered, seeds=int(ratios.seed.nunique()), first_width=int(widths[0]),
                spans={w: list(v) for w, v in spans.items()}),
    ]


@claim_source
def forget_claims(forget: pd.DataFrame, lag: int = 70) -> list:
    """The gradient at ``lag`` rises with every step up in the forget bias; its gain from a bias of 0 (else the
    lowest) to the highest against the guide (sigma(highest) / sigma(0)) ** lag of a gate set by the bias alone."""
    bias, grad = forget.forget_bias.to_numpy(dtype=float), forget.lag_70.to_numpy(dtype=float)
    base = 0.0 if 0.0 in bias else float(bias[0])
    lo, hi = float(bias[0]), float(bias[-1])
    gain = float(grad[-1] / grad[list(bias).index(base)])
    sig = lambda b: 1 / (1 + math.exp(-b))
    guide = (sig(hi) / sig(base)) ** lag
    rising = bool((np.diff(grad) > 0).all())
    return [
        verdict("s47_forget_bias", rising and gain > 1, gain=gain, rising=rising, lowest=lo, highest=hi, base=base,
                lag=lag),
        verdict("s47_forget_guide", gain < guide, gain=gain, guide=guide, base=base, highest=hi, lag=lag,
                gate_at_base=sig(base), gate_at_highest=sig(hi)),
    ]


def reach_surface_figure(z_lstm: np.ndarray, z_rnn: np.ndarray, widths=WIDTHS):
    """3D: log10 input-gradient magnitude over lag and hidden width, the LSTM's surface and the RNN's."""
    from ..plotting import surface_figure

    lags = np.arange(z_lstm.shape[1])
    return surface_figure(
        [dict(x=lags, y=widths, z=z_lstm, name="LSTM", colorscale="Blues"),
         dict(x=lags, y=widths, z=z_rnn, name="RNN", colorscale="Reds")],
        title="Gradient reach over lag and hidden width: LSTM (blue) vs RNN (red)",
        xlab="Lag (steps back)", ylab="Hidden width", zlab="log10 input-gradient magnitude", log_y=True)


def figure(gt: pd.DataFrame):
    from ..plotting import line_pair

    return line_pair(gt, "lag", "g", "cell", title="How far back the loss at step 80 can influence the input",
                     subtitle="Gradient at each input step, at initialization",
                     xlab="Lag (steps back)", ylab="Input-gradient magnitude (log scale)", log_y=True,
                     reverse_x=True, colors={k: PALETTE[k] for k in ("RNN", "LSTM", "GRU")})


@section("14.47", "LSTM and GRU gating")
def run(ctx):
    seed = ctx.seed(SEED)
    gt = once(reach_table, seed=seed)
    wide = wide_by_lag(gt, "cell", [1, 20, 40, 60, 79])

    forget = forget_bias_table(ctx.seed(FORGET_SEED))

    z_rnn, z_lstm = reach_surface("rnn", seed), reach_surface("lstm", seed)
    surface = pd.DataFrame([dict(width=w, lag=lag, log10_rnn=z_rnn[i, lag], log10_lstm=z_lstm[i, lag])
                            for i, w in enumerate(WIDTHS) for lag in range(T)])

    gaps = once(surface_gap_table, seed=seed, widths=WIDTHS)
    ratios = reach_ratios(seeds=tuple(ctx.seed(s) for s in SEEDS), widths=WIDTHS)
    fb = forget.rename(columns={"grad_at_lag_40": "lag_40", "grad_at_lag_70": "lag_70"})
    verdicts = [*match_claims(unroll_difference("lstm"), "lstm"), *reach_claims(gt, gaps, ratios), *forget_claims(fb)]
    figs = []
    if ctx.figures:
        figs = ctx.save("grad_through_time", *figure(gt))
        figs += ctx.save_plotly("reach_surface_3d", reach_surface_figure(z_lstm, z_rnn))
    tables = {"grad_through_time": gt, "grad_through_time_wide": wide, "forget_bias": forget,
              "reach_surface": surface, "reach_surface_gaps": gaps,
              "reach_ratios": ratios, "reach_ratio_spread": ratio_spread(ratios)}
    return tables, figs, verdicts
