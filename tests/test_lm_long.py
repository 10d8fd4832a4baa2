"""The ten-minute recipes: the whole-split loss scores every validation token once, the marks read the curve, and
each recipe builds the model it names."""
import math

import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from seqlab.experiments.lm_long import (CHECKPOINTS_S, DEFAULT_RECIPE, FIVE_MINUTE_RECIPE, RECIPES, best_within,
                                        five_minute_config, lever, long_config, marks, run_long, split_loss)
from seqlab.nn import GPT, GPTConfig, LSTMConfig, LSTMLanguageModel


def slow_split_loss(model, ids, block):
    """Token by token: target j is predicted from the window it falls in (the last window ends at the last token)."""
    n = len(ids)
    full = (n - 1) // block
    total = 0.0
    for j in range(1, n):
        if j - 1 < full * block:
            s = (j - 1) // block * block
        else:
            s = n - 1 - block
        logits, _ = model(ids[s:s + block][None])
        total += F.cross_entropy(logits[0, j - 1 - s][None], ids[j][None]).item()
    return total / (n - 1)


@pytest.mark.parametrize("n", [41, 49, 50])  # a tail of 8, none (49 = 1 + 6 x 8), one
@pytest.mark.parametrize("kind", ["gpt", "lstm"])
def test_split_loss_scores_every_token_once_with_its_windows_context(n, kind):
    torch.manual_seed(0)
    model = (GPT(GPTConfig(vocab_size=7, block_size=8, num_layers=1, num_heads=2, d_model=16)) if kind == "gpt"
             else LSTMLanguageModel(LSTMConfig(vocab_size=7, d_model=8, hidden_size=16, block_size=8))).eval()
    ids = torch.randint(0, 7, (n,), generator=torch.Generator().manual_seed(1))
    assert split_loss(model, ids, 8, batch=3) == pytest.approx(slow_split_loss(model, ids, 8), rel=1e-5)
    assert not model.training


def test_best_within_and_marks_read_the_curve():
    curve = pd.DataFrame({"iter": [10, 20, 30, 40], "seconds": [50.0, 110.0, 290.0, 601.0],
                          "val_loss": [2.0, 1.8, 1.9, 1.5]})
    assert best_within(curve, 60) == 2.0
    assert best_within(curve, 300) == 1.8  # the best so far, not the last
    assert math.isnan(best_within(curve, 10))
    assert marks(curve, 600) == {"best_60s": 2.0, "best_120s": 1.8, "best_300s": 1.8, "best_600s": 1.8}
    assert list(marks(curve, 120)) == ["best_60s", "best_120s"]
    assert CHECKPOINTS_S == (60, 120, 300, 600)


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_each_recipe_builds_its_model(name):
    r = RECIPES[name]
    model = r.make(65)
    assert model.config.block_size == r.train.block_size
    for key, value in r.shape.items():
        assert getattr(model.config, key) == value
    assert r.model.upper() in r.describe()


def test_a_lever_changes_the_training_or_the_shape_and_nothing_else():
    base = RECIPES["lstm-wide"]
    r = lever("lstm-wide/dtype=float32/block_size=256/hidden_size=768/muon_lr=0.04")
    assert (r.train.dtype, r.train.block_size, r.train.muon_lr) == ("float32", 256, 0.04)
    assert r.shape == {**base.shape, "block_size": 256, "hidden_size": 768}
    assert r.train.batch_size == base.train.batch_size and r.name.startswith("lstm-wide/")
    model = r.make(65)
    assert (model.config.block_size, model.config.hidden_size) == (256, 768)
    assert lever("gpt-wide") == RECIPES["gpt-wide"]


@pytest.mark.parametrize("spec, match", [("lstm-huge", "unknown recipe"), ("lstm-wide/dtype", "key=value"),
                                         ("lstm-wide/=3", "key=value"), ("lstm-wide/dtype=f64", "dtype")])
def test_a_bad_lever_is_refused(spec, match):
    with pytest.raises(ValueError, match=match):
        lever(spec)


def test_the_stored_runs_config_names_its_recipe_and_loss():
    c = long_config()
    assert c["recipe"] == DEFAULT_RECIPE and c["seconds"] == 600.0 and len(c["seeds"]) == 3
    assert "whole validation split" in c["final_loss"]


def test_the_five_minute_runs_config_records_its_changed_rate_and_budget():
    five, ten = five_minute_config(), long_config()
    assert five["recipe"] == FIVE_MINUTE_RECIPE and five["seconds"] == 300.0 and five["seeds"] == ten["seeds"]
    assert (five["train"]["muon_lr"], ten["train"]["muon_lr"]) == (0.03, 0.02)
    # the same model and every other setting: the rate and the budget are the only changes
    assert five["shape"] == ten["shape"]
    assert {k for k in five["train"] if five["train"][k] != ten["train"][k]} == {"muon_lr"}


def test_a_short_run_fitted_to_seconds_ends_within_them():
    torch.manual_seed(0)
    ids = torch.randint(0, 20, (3000,), generator=torch.Generator().manual_seed(2))
    # float32: in bfloat16 a step of this recipe took over 6 s on a CPU without native bfloat16
    recipe = lever("gpt-chapter/dtype=float32")
    curve, whole, steps = run_long(recipe, ids[:2700], ids[2700:], 20, 2.0, 5, evaluations=4)
    # the run stops at the first step that ends past its budget: within one step of it
    per_step = curve["seconds"].iloc[-1] / steps
    assert steps >= 1 and curve["seconds"].iloc[-1] <= 2.0 + max(1.0, 1.5 * per_step)
    assert curve["seconds"].is_monotonic_increasing and math.isfinite(whole)
