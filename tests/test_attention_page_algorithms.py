"""The attention page's own cells (eq-sdpa with the mask of eq-mask, eq-pe), compiled from the page and held
equal to the library functions the rest of the chapter uses."""
import math

import pytest
import torch
from conftest import page_functions

from seqlab.nn import causal_mask, scaled_dot_product_attention, sinusoidal_encoding


@pytest.fixture(scope="module")
def page_code():
    return page_functions("attention", ("attention", "positions"), {"torch": torch, "math": math})


@pytest.mark.parametrize("t_q, t_k, d_k", [(1, 1, 1), (5, 5, 8), (3, 7, 16), (9, 9, 64)])
def test_page_attention_equals_the_library(page_code, t_q, t_k, d_k):
    g = torch.Generator().manual_seed(t_q * 100 + d_k)
    q, k, v = (torch.randn(2, t, d_k, generator=g) for t in (t_q, t_k, t_k))
    out, w = page_code["attention"](q, k, v)
    lib_out, lib_w = scaled_dot_product_attention(q, k, v)
    assert torch.allclose(out, lib_out, atol=1e-6) and torch.allclose(w, lib_w, atol=1e-6)
    if t_q == t_k:
        mask = torch.ones(t_q, t_q).tril().bool()
        assert torch.equal(mask, causal_mask(t_q))
        out, w = page_code["attention"](q, k, v, mask)
        lib_out, lib_w = scaled_dot_product_attention(q, k, v, causal_mask(t_q))
        assert torch.allclose(out, lib_out, atol=1e-6) and torch.allclose(w, lib_w, atol=1e-6)
        assert (w.triu(1) == 0).all()


@pytest.mark.parametrize("n, d", [(1, 2), (8, 4), (50, 16), (128, 64)])
def test_page_positions_equal_the_library(page_code, n, d):
    assert torch.allclose(page_code["positions"](n, d), sinusoidal_encoding(n, d), atol=1e-5)
