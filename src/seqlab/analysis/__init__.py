"""Measurements on models: gradients by lag, softmax saturation, parameter counts, cost, probes, and the statistics
that judge many comparisons or one difference against seed noise.

Each name loads its module on first use, so importing one measurement does not import the others' dependencies
(scipy, pandas).
"""
from ..lazy import lazy_names

#: public name -> the module that defines it, imported on first access
_LAZY = {
    **dict.fromkeys(("grad_by_lag", "input_gradient_reach", "RECURRENT_CELLS"), "gradients"),
    **dict.fromkeys(("logit_spread", "attention_entropy", "attention_saturation", "entropy_surface"), "softmax"),
    **dict.fromkeys(("count_parameters", "recurrent_parameters", "multihead_parameters", "encoder_layer_parameters",
                     "decoder_layer_parameters", "GATE_BLOCKS"), "params"),
    **dict.fromkeys(("attention_flops", "attention_core_flops", "recurrent_flops", "flop_crossover", "crossover",
                     "gflops", "line_fit", "time_call", "time_training_step", "fused_rnn_kernels",
                     "peak_cpu_memory"), "complexity"),
    **dict.fromkeys(("linear_probe", "lagged_token_probe"), "probe"),
    "holm": "multiple",
    **dict.fromkeys(("seed_noise", "seed_noise_pvalues"), "seeds"),
}

__all__ = list(_LAZY)


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
