"""The attention page's own cells (eq-sdpa with the mask of eq-mask, eq-mha, eq-pe, eq-softmax-grad, the lookup layer),
compiled from the page and held equal to the library functions the rest of the chapter uses."""
import math

import pytest
import torch
from conftest import page_functions

from seqlab.nn import causal_mask, scaled_dot_product_attention, sinusoidal_encoding
from seqlab.nn.multihead import MultiHeadAttention


@pytest.fixture(scope="module")
def page_code():
    return page_functions("attention", ("attention", "positions", "multi_head"), {"torch": torch, "math": math})


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


@pytest.mark.parametrize("d_model, heads, t, bias", [(4, 1, 1, False), (8, 2, 5, False), (12, 3, 7, False),
                                                     (32, 8, 10, False)])
def test_page_multi_head_equals_the_library(page_code, d_model, heads, t, bias):
    torch.manual_seed(d_model + heads)
    layer = MultiHeadAttention(d_model, heads, bias=bias)
    x = torch.randn(3, t, d_model)
    with torch.no_grad():
        out, w = page_code["multi_head"](x, layer.Wq.weight, layer.Wk.weight, layer.Wv.weight, layer.Wo.weight, heads)
        lib_out, lib_w = layer(x, need_weights=True)
        fused_out, _ = layer(x)
    assert w.shape == (3, heads, t, t)
    assert torch.allclose(out, lib_out, atol=1e-6) and torch.allclose(w, lib_w, atol=1e-6)
    assert torch.allclose(out, fused_out, atol=1e-5)


def test_page_multi_head_splits_heads_apart():
    """A hand-worked case: with W^Q = 0 every head's weights are uniform, and with W^V = W^O = I the
    output is the mean of the inputs, whatever the number of heads."""
    ns = page_functions("attention", ("attention", "multi_head"), {"torch": torch, "math": math})
    x = torch.arange(12.0).view(1, 3, 4)
    eye, zero = torch.eye(4), torch.zeros(4, 4)
    for h in (1, 2, 4):
        out, w = ns["multi_head"](x, zero, eye, eye, eye, h)
        assert torch.allclose(w, torch.full((1, h, 3, 3), 1 / 3))
        assert torch.allclose(out, x.mean(1, keepdim=True).expand(1, 3, 4))


@pytest.mark.parametrize("d_k, T, scaled, seed", [(512, 32, False, 63), (512, 32, True, 63), (8, 5, False, 1),
                                                  (64, 16, True, 7)])
def test_softmax_gradient_equals_the_saturation_measurement(d_k, T, scaled, seed):
    """eq-softmax-grad written out on the page: the norm that attention_saturation takes with autograd."""
    from seqlab.analysis.softmax import attention_saturation

    ns = page_functions("attention", ("softmax_gradient",), {"torch": torch, "math": math})
    torch.manual_seed(seed)  # attention_saturation's draw order: Q, K, then G
    Q, K, G = torch.randn(1, T, d_k), torch.randn(1, T, d_k), torch.randn(1, T, T)
    tau = math.sqrt(d_k) if scaled else 1.0
    mine = ns["softmax_gradient"](Q, K, G, tau)
    lib = attention_saturation(d_k, T=T, scaled=scaled, seed=seed)["logit_gradient_norm"]
    assert mine == pytest.approx(lib, rel=1e-4, abs=1e-7)


def _page_lookup():
    """The lookup task's cells (lookup_batch, Lookup, train_lookup) compiled from the page, with the settings the
    page imports from the section module."""
    import ast

    import torch.nn.functional as F
    from torch import nn

    from seqlab.book.build import PAGES
    from seqlab.book.cells import code_cells
    from seqlab.chapter import s14_50
    from seqlab.nn.attention import scaled_dot_product_attention

    ns = {"torch": torch, "math": math, "nn": nn, "F": F, "scaled_dot_product_attention": scaled_dot_product_attention,
          **{k: v for k, v in vars(s14_50).items() if k.isupper()}}
    wanted, found = {"lookup_batch", "Lookup", "train_lookup"}, set()
    for cell in code_cells(PAGES / "attention.md"):
        if not cell.visible:
            continue
        for node in ast.parse(cell.source).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in wanted:
                exec(compile(ast.Module([node], []), "attention.md", "exec"), ns)
                found.add(node.name)
    assert found == wanted, f"visible cells of attention.md define {sorted(wanted)}"
    return ns


def test_page_lookup_training_equals_the_section_module():
    """The lookup layer the page trains in view (scaled and unscaled) is the one `seqlab run 14.50` trains."""
    from seqlab.chapter import s14_50

    page = _page_lookup()
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    for a, b in zip(page["lookup_batch"](50, g1), s14_50.lookup_batch(50, g2)):
        assert torch.equal(a, b)
    test = s14_50.lookup_batch(64, torch.Generator().manual_seed(4))
    for d_k, scaled in ((8, True), (16, False)):
        mine = page["train_lookup"](d_k, scaled, 5, test, steps=6, every=3)
        lib = s14_50.train_lookup(d_k, scaled, 5, test, steps=6, every=3)
        assert [r["step"] for r in mine] == [0, 3, 6]
        assert mine == lib


def test_page_lookup_divides_by_sqrt_dk_only_when_scaled():
    page = _page_lookup()
    for scaled, scale in ((True, 16 ** -0.5), (False, 1.0)):
        torch.manual_seed(0)
        model = page["Lookup"](16, scaled)
        assert model.scale == pytest.approx(scale)
        keys, vals, query, _ = page["lookup_batch"](4, torch.Generator().manual_seed(1))
        logits, alpha = model(keys, vals, query)
        with torch.no_grad():
            x = model.key(keys) + model.value(vals)
            scores = model.Wq(model.key(query)) @ model.Wk(x).transpose(1, 2) * scale
        assert torch.allclose(alpha, scores.softmax(-1), atol=1e-6)
        assert logits.shape == (4, page["LOOKUP_VOCAB"])
