"""§14.61 Neural forecasting: windows, scaling, global models (on AirPassengers).

The steps the page calls, in order: :func:`split`, :func:`window_table`,
:func:`nbeats_anatomy`, :func:`masked_window`, :func:`forecasts` (classical, GRU and
N-BEATS, with AutoETS's 80% and 95% intervals), :func:`holdout_scores`,
:func:`residual_table` and :func:`figure`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..forecast import Forecaster, NeuralConfig, NeuralForecaster, air_passengers
from ..forecast.metrics import mase
from ..forecast.nbeats import NBeats, NBeatsConfig, NBeatsForecaster, Panel
from ..forecast.neural import masked_scale, window_cuts
from ..claims import claim_source, verdict
from ..threads import single_threaded
from .base import section

H, SEASON = 12, 12
#: the GRU of this section: a small one, trained on the one series
GRU_STEPS, GRU_BATCH, SEED = 600, 64, 1
#: N-BEATS on one series: three members (input 2h, 3h, 4h) of the chapter's architecture, trained briefly
NBEATS = NBeatsConfig(width=256, layers=2, blocks=3, batch_size=512, max_steps=250, ema=0.999, history=5.0)
NBEATS_INPUTS = (2.0, 3.0, 4.0)
LEVELS = (80, 95)
#: the masking check (the page's cell): the first MASK_SHORT months as a history shorter than the input, fed to a
#: small untrained N-BEATS (width, layers, blocks) with the masked positions at zero and then at MASK_PUSH
MASK_SHORT, MASK_WIDTH, MASK_LAYERS, MASK_BLOCKS, MASK_PUSH = 9, 64, 2, 3, 1e3
MODELS = ("SeasonalNaive", "AutoETS", "GRU", "N-BEATS")
COLORS = {"observed": "#737373", "SeasonalNaive": "#D8433B", "AutoETS": "#7FB069", "GRU": "#3B7DD8",
          "N-BEATS": "#8E44AD"}


def split(df: pd.DataFrame | None = None):
    """AirPassengers with its last year held out: ``(df, train, test)``."""
    df = air_passengers() if df is None else df
    return df, df.iloc[:-H], df.iloc[-H:]


def window_table(y: np.ndarray, input_size: int = 2 * SEASON, h: int = H) -> pd.DataFrame:
    """How one series becomes supervised examples: the count of windows and the scale of the first and last."""
    y = np.asarray(y, float)
    i, t = window_cuts([len(y)], input_size, h)
    X, M, _, _ = Panel([y], pad=input_size).windows(i, t, input_size, h)
    scale = masked_scale(X, M)[:, 0]
    first = int(t[0])  # a series shorter than input_size + h has one window, its input partly masked
    return pd.DataFrame([dict(series_length=len(y), input_size=input_size, horizon=h, windows=len(X),
                              first_window_inputs=f"y[{max(first - input_size, 0)}:{first}]",
                              first_window_target=f"y[{first}:{first + h}]",
                              scale_first=float(scale[0]), scale_last=float(scale[-1]))])


def nbeats_anatomy(config: NBeatsConfig = NBEATS, h: int = H, input_multiple: float = 2.0) -> pd.DataFrame:
    """One member's modules with their parameter counts and output shapes, for a batch of 8 windows."""
    import torch

    c = NBeatsConfig(**{**config.__dict__, "input_multiple": input_multiple})
    L = c.input_size(h)
    torch.manual_seed(SEED)
    net = NBeats(L, h, c.width, c.layers, c.blocks, c.stack, SEASON, c.level)
    x, m = torch.randn(8, L), torch.ones(8, L)
    rows, residual = [], x
    with torch.no_grad():
        for k, block in enumerate(net.blocks):
            hidden = block.fc(residual)
            back, fore = block.basis(hidden)
            rows.append(dict(block=k + 1, module="FullyConnected", input=str(tuple(residual.shape)),
                             output=str(tuple(hidden.shape)), parameters=_count(block.fc)))
            rows.append(dict(block=k + 1, module=type(block.basis).__name__, input=str(tuple(hidden.shape)),
                             output=f"{tuple(back.shape)} and {tuple(fore.shape)}", parameters=_count(block.basis)))
            residual = (residual - back) * m
    rows.append(dict(block=0, module="NBeats (whole member)", input=str(tuple(x.shape)),
                     output=str(tuple(net(x, m).shape)), parameters=_count(net)))
    return pd.DataFrame(rows)


def _count(module) -> int:
    return int(sum(p.numel() for p in module.parameters()))


def masked_window(y: np.ndarray, input_size: int) -> pd.DataFrame:
    """The input window of a series shorter than the input: observed values with mask 1, the rest 0 with mask 0."""
    X, M = Panel([np.asarray(y, float)], input_size).last(input_size)
    Xp, _ = Panel([np.asarray(y, float)], input_size, short="pad").last(input_size)
    return pd.DataFrame({"position": np.arange(-input_size, 0), "value": X[0], "mask": M[0].astype(int),
                         "padded_instead": Xp[0]})


def masked_change(y: np.ndarray, seed: int = SEED, input_size: int = 2 * H) -> pd.DataFrame:
    """The largest change of an untrained N-BEATS's forecast when the masked positions of ``y``'s input window
    hold ``MASK_PUSH`` instead of zero (the ``moved`` of :func:`mask_claims`)."""
    import torch

    window = masked_window(y, input_size=input_size)
    torch.manual_seed(seed)
    net = NBeats(input_size, H, width=MASK_WIDTH, layers=MASK_LAYERS, blocks=MASK_BLOCKS)
    x = torch.tensor(window.value.to_numpy(), dtype=torch.float32)[None]
    m = torch.tensor(window["mask"].to_numpy(), dtype=torch.float32)[None]
    with torch.no_grad():
        moved = (net(x, m) - net(x + (1 - m) * MASK_PUSH, m)).abs().max().item()
    return pd.DataFrame([dict(history=len(y), input_size=input_size, masked=int((window["mask"] == 0).sum()),
                              pushed_to=MASK_PUSH, max_forecast_change=moved)])


def forecasts(train: pd.DataFrame, seed: int = SEED, levels=LEVELS) -> pd.DataFrame:
    """Hold-out forecasts of SeasonalNaive, AutoETS (with its own intervals), a GRU and an N-BEATS ensemble."""
    with single_threaded():
        # the chapter's numbers are the CPU's on every machine (a GPU's differ in the last bits)
        gru = NeuralForecaster("gru", config=NeuralConfig(max_steps=GRU_STEPS, batch_size=GRU_BATCH, seed=seed),
                               season_length=SEASON, device="cpu")
        nbeats = NBeatsForecaster(NBEATS, input_multiples=NBEATS_INPUTS, seeds=(seed,),
                                  season_length=SEASON, workers=1, device="cpu")
        fc = Forecaster(["SeasonalNaive", "AutoETS", gru, nbeats], freq="ME",
                        season_length=SEASON).forecast(H, train)
        bands = Forecaster(["AutoETS"], freq="ME", season_length=SEASON).forecast(H, train, level=list(levels),
                                                                                  intervals="native")
    return fc.merge(bands.drop(columns="AutoETS"), on=["unique_id", "ds"], how="left", validate="one_to_one")


def holdout_scores(fc: pd.DataFrame, train: pd.DataFrame, test: pd.DataFrame, levels=LEVELS) -> pd.DataFrame:
    """Hold-out MASE of each model; for AutoETS also how many of the 12 months its intervals cover."""
    rows = []
    y = test.y.to_numpy()
    for m in MODELS:
        row = dict(model=m, mase=mase(y, fc[m], train.y, SEASON))
        if m == "AutoETS":
            for lv in levels:
                lo, hi = fc[f"AutoETS-lo-{lv}"].to_numpy(), fc[f"AutoETS-hi-{lv}"].to_numpy()
                row[f"coverage_{lv}"] = float(((y >= lo) & (y <= hi)).mean())
        rows.append(row)
    return pd.DataFrame(rows)


def residual_table(fc: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
    """The residual check: forecast errors (forecast - actual, the sign of §14.63's check) over the held-out year.

    A positive error over-forecasts; ``months_under`` counts the months with a negative error.
    """
    y = test.y.to_numpy()
    rows = []
    for m in MODELS:
        e = fc[m].to_numpy() - y
        rows.append(dict(model=m, mean_error=float(e.mean()), months_under=int((e < 0).sum()),
                         error_in_peak=float(e[np.argmax(y)]), mean_abs_error=float(np.abs(e).mean())))
    return pd.DataFrame(rows)


#: the competition collections of §14.63: (name, group) -> label
COLLECTIONS = {("M3", "monthly"): "M3 monthly", ("M3", "yearly"): "M3 yearly",
               ("Tourism", "quarterly"): "Tourism quarterly", ("M1", "yearly"): "M1 yearly"}


def collections(sets=COLLECTIONS) -> pd.DataFrame:
    """What a global model has to learn from in each competition set: series, lengths and cut points.

    ``cuts`` counts every (series, t) with at least two observed values before the cut and a
    full horizon after it (``n - h - 1`` per series of training length ``n``): the windows a
    model can train on when the missing part of a short input is masked, as N-BEATS does.
    """
    from ..forecast import competition

    rows = []
    for (name, group), label in sets.items():
        train, _, season, h = competition(name, group)
        n = train.groupby("unique_id").size().to_numpy()
        rows.append(dict(dataset=label, series=len(n), horizon=h, shortest=int(n.min()),
                         median_length=float(np.median(n)), longest=int(n.max()),
                         cuts=int(np.maximum(n - h - 1, 0).sum())))
    return pd.DataFrame(rows)


@claim_source
def windows_claims(windows: pd.DataFrame):
    """Does the series grow from the first input window to the last (so raw levels would differ)?"""
    w = windows.iloc[0]
    return [verdict("s61_grows", w.scale_last > w.scale_first, scale_first=w.scale_first, scale_last=w.scale_last)]


@claim_source
def mask_claims(moved: float):
    """Is the forecast blind to what the masked positions hold?"""
    return [verdict("s61_mask", moved == 0, moved=moved)]


@claim_source
def residual_claims(resid: pd.DataFrame):
    """Which way seasonal naive errs on the held-out year, and whether that is the lag of a growing series."""
    r = resid.set_index("model")
    under, bias = int(r.months_under["SeasonalNaive"]), float(r.mean_error["SeasonalNaive"])
    lags = under > H / 2 and bias < 0
    return [verdict("s61_snaive_lags", lags, months_under=under, mean_error=bias)]


def figure(df: pd.DataFrame, fc: pd.DataFrame, level: int = 95):
    """History, the held-out year and every model's forecast, with AutoETS's ``level``% interval as a band."""
    from plotnine import aes, geom_ribbon

    from ..plotting import line_pair

    hist = df.assign(series="observed")[["ds", "y", "series"]]
    parts = [hist] + [fc[["ds", m]].rename(columns={m: "y"}).assign(series=m) for m in MODELS]
    long = pd.concat(parts, ignore_index=True)
    long = long[long.ds >= df.ds.iloc[-5 * SEASON]]
    gg, fig = line_pair(long, "ds", "y", "series", title="AirPassengers: the last year held out",
                        subtitle=f"The last five years; shaded: AutoETS's {level}% prediction interval",
                        xlab="Month", ylab="Passengers (thousands)", colors=COLORS)
    band = fc[["ds", f"AutoETS-lo-{level}", f"AutoETS-hi-{level}"]].rename(
        columns={f"AutoETS-lo-{level}": "lo", f"AutoETS-hi-{level}": "hi"})
    gg += geom_ribbon(aes(x="ds", ymin="lo", ymax="hi"), data=band, inherit_aes=False, fill="#7FB069", alpha=0.2)
    fig.add_scatter(x=list(band.ds) + list(band.ds[::-1]), y=list(band.hi) + list(band.lo[::-1]), fill="toself",
                    fillcolor="rgba(127,176,105,0.2)", line=dict(width=0), name=f"AutoETS {level}%",
                    hoverinfo="skip")
    return gg, fig


@section("14.61", "Neural forecasting: windows, scaling, global models")
def run(ctx):
    df, train, test = split()
    windows = window_table(train.y.to_numpy())
    fc = forecasts(train, seed=ctx.seed(SEED))
    scores = holdout_scores(fc, train, test)
    resid = residual_table(fc, test)
    anatomy = nbeats_anatomy()
    masking = masked_change(train.y.to_numpy()[:MASK_SHORT], seed=ctx.seed(SEED))
    notes = [*windows_claims(windows), *mask_claims(float(masking.max_forecast_change.iloc[0])),
             *residual_claims(resid)]
    figs = []
    if ctx.figures:
        gg, fig = figure(df, fc)
        figs = ctx.save("airpassengers_forecast", gg, fig)
    return {"windows": windows, "holdout_mase": scores, "forecasts": fc, "nbeats_anatomy": anatomy,
            "residuals": resid, "mask_check": masking}, figs, notes
