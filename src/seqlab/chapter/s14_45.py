"""§14.45 The sequence-modelling problem class: four input/output shapes."""
from __future__ import annotations

import pandas as pd
import torch

from ..analysis.params import count_parameters
from ..claims import claim_source, require
from ..nn.problem_shapes import AlignedManyToMany, ManyToOne, OneToMany, UnalignedManyToMany
from ._util import shape_str
from .base import section

#: the chapter's settings: batch, input and output lengths, widths, seed, and the lengths of the variable-length check
B, T, T_OUT, D_IN, D_H, D_OUT = 8, 25, 10, 4, 16, 3
SEED = 45
LENGTHS = (5, 50, 5000)


@claim_source
def length_claims(parameters_by_length: dict) -> list:
    """The many-to-one module holds the same parameters whatever the length it is given."""
    counts = set(parameters_by_length.values())
    return [require("s45_params_fixed", len(counts) == 1, counts=parameters_by_length)]


@section("14.45", "The sequence-modelling problem class")
def run(ctx):
    torch.manual_seed(ctx.seed(SEED))
    d_in, d_h, d_out = D_IN, D_H, D_OUT
    cases = [
        ("One-to-many", "fixed -> sequence", "image captioning, music generation",
         OneToMany(d_in, d_h, d_out, steps=T), torch.randn(B, d_in)),
        ("Many-to-one", "sequence -> fixed", "sentiment classification, ECG diagnosis",
         ManyToOne(d_in, d_h, d_out), torch.randn(B, T, d_in)),
        ("Many-to-many, aligned", "T -> T", "part-of-speech tagging, per-timepoint labelling",
         AlignedManyToMany(d_in, d_h, d_out), torch.randn(B, T, d_in)),
        ("Many-to-many, unaligned", "T -> T'", "translation, summarization, forecasting",
         UnalignedManyToMany(d_in, d_h, d_out, out_steps=T_OUT), torch.randn(B, T, d_in)),
    ]
    rows = []
    for shape, io, examples, module, x in cases:
        with torch.no_grad():
            y = module(x)
        rows.append(dict(shape=shape, input_to_output=io, examples=examples, module=type(module).__name__,
                         input_shape=shape_str(x), output_shape=shape_str(y), parameters=count_parameters(module)))
    # variable length: the same many-to-one module on T = 5 and T = 5000
    m2o = cases[1][3]
    var = []
    for length in LENGTHS:
        with torch.no_grad():
            y = m2o(torch.randn(2, length, d_in))
        var.append(dict(length=length, output_shape=shape_str(y), parameters=count_parameters(m2o)))
    verdicts = length_claims({r["length"]: r["parameters"] for r in var})
    return {"problem_shapes": pd.DataFrame(rows), "variable_length": pd.DataFrame(var)}, [], verdicts
