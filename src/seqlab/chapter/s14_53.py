"""§14.53 The Transformer block: residual paths, layer normalization, feed-forward; pre-LN vs post-LN."""
from __future__ import annotations

import pandas as pd
import torch
import torch.nn as nn

from ..analysis.params import count_parameters, encoder_layer_parameters
from ..nn.transformer import EncoderLayer
from ._util import shape_str
from .base import section

D_MODEL, N_HEADS, D_FF, DEPTH = 64, 4, 256, 12


def layer_gradients(norm_first: bool, seed: int) -> list[float]:
    """Gradient norm of each block's parameters in a fresh 12-block stack, for a fixed random linear loss."""
    torch.manual_seed(seed)
    blocks = nn.ModuleList(EncoderLayer(D_MODEL, N_HEADS, D_FF, norm_first=norm_first) for _ in range(DEPTH))
    final = nn.LayerNorm(D_MODEL)
    x = torch.randn(8, 32, D_MODEL)
    G = torch.randn(8, 32, D_MODEL)
    h = x
    for b in blocks:
        h = b(h)
    if norm_first:
        h = final(h)  # pre-LN stacks end with a LayerNorm
    (h * G).sum().backward()
    return [torch.sqrt(sum((p.grad ** 2).sum() for p in b.parameters())).item() for b in blocks]


def block_walkthrough(seed: int):
    """One pre-LN block applied step by step to a (2, 10, d) input: ``(shapes table, block, x)``."""
    torch.manual_seed(seed)
    block = EncoderLayer(D_MODEL, N_HEADS, D_FF, norm_first=True)
    x = torch.randn(2, 10, D_MODEL)
    with torch.no_grad():
        a = block.norm1(x)
        attn = block.self_attn(a)[0]
        h = x + attn
        ff = block.ff(block.norm2(h))
        y = h + ff
    shapes = pd.DataFrame([
        dict(step="input x", shape=shape_str(x)),
        dict(step="LayerNorm(x)", shape=shape_str(a)),
        dict(step="MultiHead(LN x) (4 heads of 16)", shape=shape_str(attn)),
        dict(step="x + attention (residual)", shape=shape_str(h)),
        dict(step=f"FFN: {D_MODEL} -> {D_FF} -> {D_MODEL}", shape=shape_str(ff)),
        dict(step="output = h + FFN(LN h)", shape=shape_str(y)),
    ])
    return shapes, block, x


def parameter_table(block: EncoderLayer) -> pd.DataFrame:
    """Counted parameters of each part of a block beside the closed form."""
    attention, ff = count_parameters(block.self_attn), count_parameters(block.ff)
    norms = count_parameters(block.norm1) + count_parameters(block.norm2)
    return pd.DataFrame([
        dict(part="attention (W^Q, W^K, W^V, W^O + biases)", parameters=attention,
             formula="4d^2 + 4d", formula_value=4 * D_MODEL ** 2 + 4 * D_MODEL),
        dict(part="feed-forward", parameters=ff, formula="2 d d_ff + d_ff + d",
             formula_value=2 * D_MODEL * D_FF + D_FF + D_MODEL),
        dict(part="two LayerNorms", parameters=norms, formula="4d", formula_value=4 * D_MODEL),
        dict(part="block total", parameters=count_parameters(block), formula="4d^2 + 2 d d_ff + 9d + d_ff",
             formula_value=encoder_layer_parameters(D_MODEL, D_FF)),
    ])


def torch_equality(seed: int, x: torch.Tensor) -> pd.DataFrame:
    """Largest difference between seqlab's block and torch.nn.TransformerEncoderLayer with the same weights."""
    rows = []
    for norm_first in (True, False):
        torch.manual_seed(seed)
        ours = EncoderLayer(D_MODEL, N_HEADS, D_FF, norm_first=norm_first).eval()
        ref = ours.to_torch().eval()
        with torch.no_grad():
            diff = (ours(x) - ref(x)).abs().max().item()
        rows.append(dict(variant="pre-LN" if norm_first else "post-LN",
                         max_abs_difference_vs_torch_TransformerEncoderLayer=diff))
    return pd.DataFrame(rows)


def gradients_by_depth(seed: int) -> pd.DataFrame:
    rows = [dict(variant=name, layer=i + 1, grad_norm=g)
            for norm_first, name in ((True, "pre-LN"), (False, "post-LN"))
            for i, g in enumerate(layer_gradients(norm_first, seed))]
    return pd.DataFrame(rows)


def _notes(grads: pd.DataFrame) -> list[str]:
    g = grads.pivot(index="layer", columns="variant", values="grad_norm")
    return [
        "A block is two residual sub-layers: x + Attention(LN x), then h + FFN(LN h) (pre-LN). Each residual adds "
        "an identity path with derivative 1, the depth-wise twin of the LSTM's additive cell path.",
        f"At initialization, across {DEPTH} blocks: post-LN's parameter gradients range "
        f"{g['post-LN'].min():.3g}-{g['post-LN'].max():.3g} (last/first = {g['post-LN'].iloc[-1] / g['post-LN'].iloc[0]:.2f}), "
        f"pre-LN's {g['pre-LN'].min():.3g}-{g['pre-LN'].max():.3g} (last/first = "
        f"{g['pre-LN'].iloc[-1] / g['pre-LN'].iloc[0]:.2f}). Post-LN puts a LayerNorm on the residual path itself, "
        "so the gradient to early blocks passes through every normalization; this is why post-LN needs "
        "learning-rate warm-up (Xiong et al., 2020).",
        "seqlab's EncoderLayer equals torch.nn.TransformerEncoderLayer given the same weights (table `torch_equality`).",
    ]


@section("14.53", "The Transformer block")
def run(ctx):
    seed = ctx.seed(91)
    shapes, block, x = block_walkthrough(seed)
    grads = gradients_by_depth(seed)
    figs = []
    if ctx.figures:
        from ..plotting import line_pair

        gg, fig = line_pair(grads, "layer", "grad_norm", "variant", points=True, log_y=True,
                            title="Gradient by depth at initialization: pre-LN vs post-LN",
                            subtitle=f"{DEPTH} blocks, d_model = {D_MODEL}; norm of each block's parameter gradient",
                            xlab="Block (1 = nearest the input)", ylab="Gradient norm (log scale)",
                            colors={"pre-LN": "#3B7DD8", "post-LN": "#D8433B"})
        figs = ctx.save("pre_post_ln", gg, fig)
    tables = {"block_shapes": shapes, "block_parameters": parameter_table(block),
              "torch_equality": torch_equality(seed, x), "ln_gradients": grads}
    return tables, figs, _notes(grads)
