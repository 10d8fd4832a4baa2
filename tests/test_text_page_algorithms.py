"""The text page's BPE training loop, compiled from the page and held equal to the library's ``BPETokenizer``
(which updates pair counts incrementally instead of recounting), on a hand-worked case and on random texts."""
from collections import Counter

import pytest
from conftest import page_functions
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.text import BPETokenizer
from seqlab.text.tokenizers import PRE_SPLIT


@pytest.fixture(scope="module")
def page_code():
    return page_functions("text", ("merge", "train_bpe"), {"Counter": Counter, "PRE_SPLIT": PRE_SPLIT})


def test_hand_worked(page_code):
    """aaabdaaabac: aa (4 times) first; then ab and 256+a tie at 2 and the smaller pair (a, b) wins; then 256+257."""
    a, b = ord("a"), ord("b")
    assert page_code["train_bpe"]("aaabdaaabac", 3) == {(a, a): 256, (a, b): 257, (256, 257): 258}
    assert page_code["merge"]([a, a, a, b], (a, a), 256) == [256, a, b]  # left to right, no overlap


@pytest.mark.parametrize("text, merges", [
    ("the king and the queen thank the men", 20),
    ("hello, hello! 123 123 ...", 50),
    ("ééé ü 日本語 日本", 30),
    ("a", 5),
])
def test_page_bpe_equals_the_library(page_code, text, merges):
    assert page_code["train_bpe"](text, merges) == BPETokenizer().train(text, vocab_size=256 + merges).merges


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab c.\né"), min_size=1, max_size=60), merges=st.integers(0, 25))
def test_page_bpe_equals_the_library_on_random_texts(page_code, text, merges):
    assert page_code["train_bpe"](text, merges) == BPETokenizer().train(text, vocab_size=256 + merges).merges


def test_the_pages_training_loop_trains_the_small_gpt():
    """§14.57's visible training cell, run as the page runs it but for a few steps on a slice of the corpus:
    the chapter's optimizer lowers the cross-entropy of the small GPT it defines in view."""
    import torch

    from seqlab.book.build import PAGES
    from seqlab.book.cells import code_cells
    from seqlab.text.corpus import load_tinyshakespeare

    [cell] = [c for c in code_cells(PAGES / "text.md") if c.visible and "for step in range(SMALL_STEPS)" in c.source]
    torch.manual_seed(0)
    ns = {"torch": torch, "corpus": load_tinyshakespeare()[:20000], "SMALL_STEPS": 40, "SMALL_BATCH": 4,
          "SMALL_WIDTH": 32, "SMALL_LAYERS": 1}
    exec(compile(cell.source, "text.md", "exec"), ns)
    losses = ns["losses"]
    assert len(losses) == 40 and sum(losses[-5:]) / 5 < losses[0] - 0.5
