"""§14.54 Encoder, decoder, and the three attention patterns: self, causal self, cross."""
from __future__ import annotations

import pandas as pd
import torch

from ..analysis.params import count_parameters, decoder_layer_parameters, encoder_layer_parameters
from ..nn.attention import causal_mask
from ..nn.transformer import DecoderLayer, EncoderLayer
from ._util import shape_str
from .base import section

D, H, D_FF = 32, 4, 128


@section("14.54", "Encoder, decoder, and the three attention patterns")
def run(ctx):
    torch.manual_seed(ctx.seed(95))
    T_src, T_tgt = 7, 5
    enc = EncoderLayer(D, H, D_FF).eval()
    dec = DecoderLayer(D, H, D_FF).eval()
    src = torch.randn(1, T_src, D)
    tgt = torch.randn(1, T_tgt, D)
    with torch.no_grad():
        memory = enc(src)
        _, w_self = enc.self_attn(enc.norm1(src), need_weights=True)
        _, w_causal = dec.self_attn(dec.norm1(tgt), is_causal=True, need_weights=True)
        _, w_cross = dec.cross_attn(dec.norm2(tgt), memory, memory, need_weights=True)
        out = dec(tgt, memory)
        # causality: changing the last target position must not move earlier outputs
        tgt2 = tgt.clone()
        tgt2[:, -1] += 5.0
        leak = (dec(tgt2, memory)[:, :-1] - out[:, :-1]).abs().max().item()
    patterns = pd.DataFrame([
        dict(pattern="self (encoder)", queries_from="source", keys_values_from="source", mask="none (or padding)",
             weights_shape=shape_str(w_self[0]), output_shape=shape_str(memory)),
        dict(pattern="causal self (decoder)", queries_from="target", keys_values_from="target so far",
             mask="j <= i", weights_shape=shape_str(w_causal[0]), output_shape=shape_str(out)),
        dict(pattern="cross (decoder -> encoder)", queries_from="target", keys_values_from="encoder memory",
             mask="none (or source padding)", weights_shape=shape_str(w_cross[0]), output_shape=shape_str(out)),
    ])
    params = pd.DataFrame([
        dict(layer="encoder layer", parameters=count_parameters(enc), formula="4d^2 + 2 d d_ff + 9d + d_ff",
             formula_value=encoder_layer_parameters(D, D_FF)),
        dict(layer="decoder layer", parameters=count_parameters(dec), formula="8d^2 + 2 d d_ff + 15d + d_ff",
             formula_value=decoder_layer_parameters(D, D_FF)),
    ])
    checks = pd.DataFrame([dict(future_leak_max_abs=leak,
                                causal_weights_above_diagonal=w_causal[0, :, ~causal_mask(T_tgt)].abs().max().item())])
    rows = []
    for name, w in (("self", w_self), ("causal self", w_causal), ("cross", w_cross)):
        W = w[0, 0]
        rows += [dict(pattern=name, query=i + 1, key=j + 1, w=float(W[i, j]))
                 for i in range(W.size(0)) for j in range(W.size(1))]
    weights = pd.DataFrame(rows)
    notes = ["Self-attention is T_src x T_src, causal self-attention T_tgt x T_tgt with the upper triangle zero, "
             "cross-attention T_tgt x T_src: queries from the decoder, keys and values from the encoder.",
             f"Changing the last target token moves earlier decoder outputs by at most {leak:.3g}: the causal mask "
             "holds through the whole decoder layer, cross-attention and FFN included."]
    figs = []
    if ctx.figures:
        from ..plotting import heatmap_pair

        gg, fig = heatmap_pair(weights, "key", "query", "w", facet="pattern",
                               title="The three attention patterns (head 1, untrained)",
                               subtitle="Self: every source pair. Causal self: only the past. Cross: target queries, "
                                        "source keys", xlab="Key position", ylab="Query position")
        figs = ctx.save("attention_patterns", gg, fig)
    tables = {"attention_patterns": patterns, "layer_parameters": params, "causality_check": checks,
              "pattern_weights": weights}
    return tables, figs, notes
