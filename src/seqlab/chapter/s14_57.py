"""§14.57 A character-level language model (heavy: trained under HEAVY_EVAL, else loaded)."""
from __future__ import annotations

import math

import pandas as pd

from ..analysis.params import count_parameters
from ..experiments.lm import CHAPTER_TRAIN, chapter_lstm_config
from ..nn import LSTMLanguageModel
from ._lm import lm
from .base import section


@section("14.57", "A character-level language model")
def run(ctx):
    gpt, tok, curves, samples, _, manifest, mode = lm()
    last = curves.sort_values("iter").groupby("model").tail(1).set_index("model")
    lstm_params = count_parameters(LSTMLanguageModel(chapter_lstm_config(tok.vocab_size)))
    summary = pd.DataFrame([
        dict(model=m, parameters=count_parameters(gpt) if m == "GPT" else lstm_params, iterations=int(r["iter"]),
             seconds=r.seconds, tokens_per_s=r.tokens_per_s, val_loss_nats=r.val_loss,
             val_bits_per_char=r.val_bpc, uniform_baseline_nats=math.log(tok.vocab_size))
        for m, r in last.iterrows()])
    g, l_ = last.loc["GPT"], last.loc["LSTM"]
    notes = [
        f"Results {mode} (artifact set 'lm', seqlab {manifest['seqlab_version']}, every file's sha256 checked).",
        f"90/10 split of tinyshakespeare, {tok.vocab_size - 1} characters + <unk>. Same loop, same data order and the "
        f"same wall-clock budget ({g.seconds:.0f} s): the Transformer reaches {g.val_loss:.3f} nats "
        f"({g.val_bpc:.3f} bits/char), the LSTM {l_.val_loss:.3f} ({l_.val_bpc:.3f}); uniform guessing is "
        f"{math.log(tok.vocab_size):.3f} nats.",
        f"Training recipe: Muon (lr {CHAPTER_TRAIN.muon_lr}, momentum {CHAPTER_TRAIN.muon_momentum}) for hidden "
        f"matrices and AdamW (lr {CHAPTER_TRAIN.learning_rate}, decay on embedding and output matrices) for the rest, "
        f"{CHAPTER_TRAIN.warmup_iters} warm-up steps and cosine decay over {CHAPTER_TRAIN.max_iters} steps, batch "
        f"{CHAPTER_TRAIN.batch_size} x {CHAPTER_TRAIN.block_size}, clipping at {CHAPTER_TRAIN.grad_clip}. Seconds "
        "count training steps only, not evaluations.",
        (f"At this size and budget the recurrent baseline is ahead by {g.val_loss - l_.val_loss:.3f} nats: with a "
         "64-character context and about a minute and a half of CPU the LSTM's cheaper steps and built-in recency bias pay off; "
         "attention's advantages (parallel training over long contexts, direct access to distant tokens) need "
         "longer contexts and more compute than this experiment spends." if l_.val_loss < g.val_loss else
         f"The Transformer is ahead by {l_.val_loss - g.val_loss:.3f} nats at the same budget."),
        "Sample (temperature 1.0): " + samples["temperature 1.0"][:160].replace("\n", " / "),
    ]
    figs = []
    if ctx.figures:
        from ..plotting import line_pair

        gg, fig = line_pair(curves, "seconds", "val_loss", "model", points=True,
                            title="Validation loss against training time",
                            subtitle="Character-level tinyshakespeare; the same loop and budget for both models",
                            xlab="Seconds of training (2 CPU cores)", ylab="Validation loss (nats/char)",
                            colors={"GPT": "#7FB069", "LSTM": "#3B7DD8"})
        figs = ctx.save("lm_loss_curves", gg, fig)
    return {"lm_summary": summary, "loss_curves": curves}, figs, notes
