"""§14.46 Recurrent networks: one cell applied at every step, parameters independent of T."""
from __future__ import annotations

import pandas as pd
import torch
import torch.nn as nn

from ..analysis.params import count_parameters, recurrent_parameters
from ..claims import claim_source, require
from ._util import shape_str
from .base import section

SEED = 11


@claim_source
def count_claims(counted: int, d_h: int, d_in: int) -> list:
    """PyTorch's RNN holds d(d+m) weights and two bias vectors, not the one bias of the equation."""
    return [require("s46_two_biases", counted == recurrent_parameters("rnn", d_h, d_in, bias_vectors=2)
                    != recurrent_parameters("rnn", d_h, d_in, bias_vectors=1), counted=counted,
                    two_biases=recurrent_parameters("rnn", d_h, d_in, bias_vectors=2),
                    one_bias=recurrent_parameters("rnn", d_h, d_in, bias_vectors=1))]


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
                                one_bias_parameters=recurrent_parameters("rnn", 16, 4, bias_vectors=1))])
    length_check = pd.DataFrame(lengths, columns=["length", "output_shape"])
    return {"rnn_shapes": shapes, "length_check": length_check}, [], count_claims(params, 16, 4)
