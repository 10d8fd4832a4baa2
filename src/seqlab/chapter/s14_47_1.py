"""§14.47.1 The GRU: parameter counts against closed-form formulas."""
from __future__ import annotations

import pandas as pd
import torch.nn as nn

from ..analysis.params import GATE_BLOCKS, count_parameters, recurrent_parameters
from .base import section

D_H, D_IN = 128, 64


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


@section("14.47.1", "The GRU")
def run(ctx):
    df = parameter_formulas()
    gru, lstm = df.set_index("cell").parameters["GRU"], df.set_index("cell").parameters["LSTM"]
    notes = [
        "Erratum: the chapter's formulas count one bias vector per gate block; PyTorch (and R torch) keep two, "
        "b_ih and b_hh, so the count is g d(d+m) + 2 g d. The column `formula` equals the counted parameters; "
        "`chapter_formula_value` shows the single-bias form for comparison.",
        f"GRU/LSTM = {gru}/{lstm} = {gru / lstm:.3f}: the GRU saves exactly 25% (3 blocks instead of 4), as stated.",
    ]
    return {"param_formulas": df}, [], notes
