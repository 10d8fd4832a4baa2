"""§14.46 Recurrent networks: one cell applied at every step, parameters independent of T."""
from __future__ import annotations

import pandas as pd
import torch
import torch.nn as nn

from ..analysis.params import count_parameters, recurrent_parameters
from ._util import shape_str
from .base import section

SEED = 11


@section("14.46", "Recurrent networks")
def run(ctx):
    torch.manual_seed(ctx.seed(SEED))
    rnn = nn.RNN(input_size=4, hidden_size=16, num_layers=1, batch_first=True)
    x_seq = torch.randn(8, 25, 4)  # 8 sequences, 25 steps, 4 features
    with torch.no_grad():
        out, h_n = rnn(x_seq)
        lengths = [(length, shape_str(rnn(torch.randn(2, length, 4))[0])) for length in (25, 200)]
    params = count_parameters(rnn)
    shapes = pd.DataFrame([dict(output_shape=shape_str(out), final_hidden_shape=shape_str(h_n), parameters=params,
                                formula_parameters=recurrent_parameters("rnn", 16, 4),
                                note="parameter count does not depend on sequence length")])
    length_check = pd.DataFrame(lengths, columns=["length", "output_shape"])
    notes = [f"352 = 16*(16+4) + 2*16: PyTorch keeps two bias vectors (b_ih and b_hh); the boxed equation's single "
             f"b would give {16 * 20 + 16}."]
    return {"rnn_shapes": shapes, "length_check": length_check}, [], notes
