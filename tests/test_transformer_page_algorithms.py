"""The transformer page's own cells (layer norm eq-layernorm, multi-head attention, the gradient probe, the warm-up
eq-warmup, the training loop, the FLOP counts eq-flops and the measured crossover), compiled from the page and held
equal to the library functions that ``seqlab run`` and the stored experiments use."""
import math

import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from conftest import page_functions

from seqlab.analysis.complexity import attention_flops, crossover, recurrent_flops
from seqlab.chapter import s14_53, s14_55
from seqlab.nn import EncoderLayer, Seq2SeqTransformer
from seqlab.nn.multihead import MultiHeadAttention
from seqlab.tasks import fit_seq2seq, random_tokens

NAMES = ("layer_norm", "multi_head", "block_gradients", "warmup_lr", "train", "attention_flops", "lstm_flops",
         "crossover_T")


@pytest.fixture(scope="module")
def page():
    return page_functions("transformer", NAMES, {
        "torch": torch, "F": F, "math": math, "EncoderLayer": EncoderLayer, "crossover": crossover,
        "D_MODEL": s14_53.D_MODEL, "N_HEADS": s14_53.N_HEADS, "D_FF": s14_53.D_FF, "DEPTH": s14_53.DEPTH})


@pytest.mark.parametrize("d, seed", [(4, 0), (16, 1), (64, 2)])
def test_page_layer_norm_equals_torch_and_the_chapter(page, d, seed):
    torch.manual_seed(seed)
    ln = torch.nn.LayerNorm(d)
    with torch.no_grad():
        ln.weight.normal_()
        ln.bias.normal_()
        z = 3 * torch.randn(2, 5, d) + 1
        ours = page["layer_norm"](z, ln)
        assert torch.allclose(ours, ln(z), atol=1e-5)
        assert torch.equal(ours, s14_53.layer_norm(ln, z))


@pytest.mark.parametrize("d_model, heads, t", [(8, 2, 3), (32, 4, 10), (64, 4, 7)])
def test_page_multi_head_equals_the_library(page, d_model, heads, t):
    torch.manual_seed(d_model + heads)
    mha = MultiHeadAttention(d_model, heads)
    z = torch.randn(2, t, d_model)
    with torch.no_grad():
        ours = page["multi_head"](z, mha)
        assert torch.allclose(ours, mha(z)[0], atol=1e-5)
        assert torch.allclose(ours, s14_53.multi_head(mha, z), atol=1e-6)


@pytest.mark.parametrize("norm_first", [True, False])
def test_page_gradient_probe_is_the_chapters(page, norm_first):
    ours = page["block_gradients"](norm_first, s14_53.SEED, depth=s14_53.DEPTH)
    assert ours == s14_53.layer_gradients(norm_first, s14_53.SEED)


@pytest.mark.parametrize("lr, warmup", [(0.03, 4), (0.01, 1)])
def test_page_warmup_is_the_training_loops(page, lr, warmup):
    steps = warmup + 3
    used = s14_53.warmup_rates(lr, warmup, steps)
    assert [page["warmup_lr"](s, lr, warmup) for s in range(steps)] == used


def test_page_training_loop_is_the_library_loop(page):
    """The page's loop gives fit_seq2seq's losses bit for bit, so its run is the stored experiment's."""
    def fresh():
        torch.manual_seed(5)
        src = random_tokens(16, 5, 6, torch.Generator().manual_seed(5))
        return Seq2SeqTransformer(8, d_model=8, num_heads=2, d_ff=16), src, src.flip(1)

    net, src, tgt = fresh()
    ours = page["train"](net, src, tgt, 12, 0.01)
    net, src, tgt = fresh()
    assert ours == fit_seq2seq(net, src, tgt, 12, 0.01).losses


@pytest.mark.parametrize("T, d", [(16, 32), (100, 7), (2048, 256)])
def test_page_flop_counts_are_the_librarys(page, T, d):
    assert page["attention_flops"](T, d) == attention_flops(T, d)
    assert page["lstm_flops"](T, d) == recurrent_flops(T, d, "lstm")
    assert page["attention_flops"](2 * d, d) == page["lstm_flops"](2 * d, d)  # eq-flop-crossover


def test_page_crossovers_are_the_chapters(page):
    ref = s14_55.cost_reference()
    grid, training = ref["grid"], ref["training"]
    cross = s14_55.crossovers(grid, training).set_index("d")
    fwd = page["crossover_T"](grid, "ratio_attention_to_lstm")
    trn = page["crossover_T"](training, "train_ratio_attention_to_lstm")
    pd.testing.assert_series_equal(pd.Series(fwd, dtype=float), cross.measured_T_star, check_names=False,
                                   check_index_type=False)
    pd.testing.assert_series_equal(pd.Series(trn, dtype=float), cross.training_T_star, check_names=False,
                                   check_index_type=False)
