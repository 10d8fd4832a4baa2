"""§14.47.1 The GRU: parameter counts against closed-form formulas."""
from __future__ import annotations

import time

import pandas as pd
import torch
import torch.nn as nn

from ..analysis.params import GATE_BLOCKS, count_parameters, recurrent_parameters
from ..claims import claim_source, require, verdict
from ..threads import single_threaded
from ._util import machine_table, provenance
from .base import section
from .s14_47 import match_claims, unroll_difference

D_H, D_IN = 128, 64
#: the training-step timing: batch, sequence length, steps per repeat, repeats, seed (one torch thread)
STEP_BATCH, STEP_T, STEP_N, STEP_REPEATS, STEP_SEED = 32, 50, 5, 15, 47


def parameter_formulas(d_h: int = D_H, d_in: int = D_IN) -> pd.DataFrame:
    """Counted parameters of PyTorch's RNN, GRU and LSTM beside the two-bias formula and the chapter's one-bias one."""
    rows = []
    for cell, module, gates, chapter_formula in (("RNN", nn.RNN, 0, "d(d+m)+d"), ("GRU", nn.GRU, 2, "3d(d+m)+3d"),
                                                 ("LSTM", nn.LSTM, 3, "4d(d+m)+4d")):
        g = GATE_BLOCKS[cell.lower()]
        counted = count_parameters(module(d_in, d_h))
        rows.append(dict(cell=cell, gates=gates, parameters=counted, formula=f"{g}d(d+m)+{2 * g}d",
                         formula_value=recurrent_parameters(cell, d_h, d_in, bias_vectors=2),
                         chapter_formula=chapter_formula,
                         chapter_formula_value=recurrent_parameters(cell, d_h, d_in, bias_vectors=1)))
    return pd.DataFrame(rows).replace({"formula": {"1d(d+m)+2d": "d(d+m)+2d"}})


def _training_step(cell: nn.Module, head: nn.Linear, opt, x, y) -> None:
    opt.zero_grad(set_to_none=True)
    out, _ = cell(x)
    loss = nn.functional.mse_loss(head(out[:, -1]), y)
    loss.backward()
    opt.step()


def step_times(d_h: int = D_H, d_in: int = D_IN, batch: int = STEP_BATCH, T: int = STEP_T, steps: int = STEP_N,
               repeats: int = STEP_REPEATS, seed: int = STEP_SEED) -> pd.DataFrame:
    """Seconds per training step (forward, backward, Adam) of ``nn.GRU`` and ``nn.LSTM``, one torch thread.

    Each repeat times ``steps`` steps of each cell, the two cells alternating within a
    repeat so that a change in the machine's speed hits both; after one untimed warm-up
    repeat. One row per cell and repeat: ``seconds_per_step``.
    """
    rows = []
    with single_threaded():
        torch.manual_seed(seed)
        x, y = torch.randn(batch, T, d_in), torch.randn(batch, 1)
        setups = {}
        for name, cls in (("GRU", nn.GRU), ("LSTM", nn.LSTM)):
            cell, head = cls(d_in, d_h, batch_first=True), nn.Linear(d_h, 1)
            setups[name] = (cell, head, torch.optim.Adam([*cell.parameters(), *head.parameters()], lr=1e-3))
        for r in range(repeats + 1):
            for name, (cell, head, opt) in setups.items():
                t0 = time.perf_counter()
                for _ in range(steps):
                    _training_step(cell, head, opt, x, y)
                if r:  # repeat 0 warms up
                    rows.append(dict(cell=name, repeat=r, seconds_per_step=(time.perf_counter() - t0) / steps))
    return pd.DataFrame(rows)


def step_time_summary(times: pd.DataFrame) -> pd.DataFrame:
    """Median, lowest and highest milliseconds per step for each cell."""
    ms = times.assign(ms=times.seconds_per_step * 1e3).groupby("cell").ms
    return pd.DataFrame(dict(median_ms=ms.median(), min_ms=ms.min(), max_ms=ms.max(),
                             repeats=ms.size())).reset_index()


def step_reference():
    """The stored reference for :func:`step_times` (``HEAVY_EVAL=1`` measures it again)."""
    from ..experiments.timing import reference

    config = dict(d_h=D_H, d_in=D_IN, batch=STEP_BATCH, T=STEP_T, steps=STEP_N, repeats=STEP_REPEATS,
                  seed=STEP_SEED, threads=1)
    return reference("gru_lstm_step", lambda: {"step_times": step_times()}, config)


@claim_source
def count_claims(formulas: pd.DataFrame) -> list:
    """The two-bias formula equals the count, the chapter's one-bias formula does not, and GRU/LSTM = 3/4."""
    f = formulas.set_index("cell")
    ratio = f.parameters["GRU"] / f.parameters["LSTM"]
    return [
        require("s471_formula_counts", (f.parameters == f.formula_value).all(),
                counted=f.parameters.to_dict(), formula=f.formula_value.to_dict()),
        require("s471_chapter_formula_undercounts", (f.parameters > f.chapter_formula_value).all(),
                counted=f.parameters.to_dict(), chapter=f.chapter_formula_value.to_dict()),
        verdict("s471_ratio", abs(ratio - 0.75) < 1e-12, ratio=ratio),
    ]


@claim_source
def step_time_claims(summary: pd.DataFrame) -> list:
    """The LSTM's training step was the faster one on the reference machine: its slowest repeat beat the GRU's
    fastest (the ratio of the medians says by how much)."""
    s = summary.set_index("cell")
    gru, lstm = float(s.median_ms["GRU"]), float(s.median_ms["LSTM"])
    gru_faster, lstm_faster = s.max_ms["GRU"] < s.min_ms["LSTM"], s.max_ms["LSTM"] < s.min_ms["GRU"]
    return [verdict("s471_speed", bool(lstm_faster), gru_ms=gru, lstm_ms=lstm, ratio=gru / lstm,
                    gru_faster=bool(gru_faster), gru_slowest=s.max_ms["GRU"], gru_fastest=s.min_ms["GRU"],
                    lstm_slowest=s.max_ms["LSTM"], lstm_fastest=s.min_ms["LSTM"])]


@section("14.47.1", "The GRU")
def run(ctx):
    df = parameter_formulas()
    ref = step_reference()
    steps = step_time_summary(ref["step_times"])
    verdicts = [*match_claims(unroll_difference("gru"), "gru"), *count_claims(df), *step_time_claims(steps)]
    tables = {"param_formulas": df, "step_time_reference": steps, "timing_machines": machine_table(ref)}
    return tables, [], [provenance("timing_gru_lstm_step"), *verdicts]
