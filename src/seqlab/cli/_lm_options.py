"""The options of ``seqlab lm train``, ``lm export`` and ``lm sample``, each checked as argparse reads it."""
from __future__ import annotations

from ..devices import DEVICES, DTYPES, MUON_NS_DTYPES
from ..experiments.lm import CHAPTER_TRAIN, chapter_gpt_config
from ._common import float_in, int_at_least, nonnegative_int, positive_int, seed

__all__ = ["add_train_options", "add_export_options", "add_sample_options", "MAX_NEW_TOKENS", "GPT_DEFAULTS"]

#: the chapter's GPT, whose settings are the defaults of the model options
GPT_DEFAULTS = chapter_gpt_config(vocab_size=1)

#: the most tokens one `lm sample` generates
MAX_NEW_TOKENS = 100_000
_LR = float_in(1e-8, 10.0)  # outside this, AdamW and Muon either cannot move or overflow at once


def add_train_options(t) -> None:
    """``seqlab lm train``'s options; the chapter's recipe supplies every default."""
    c = CHAPTER_TRAIN
    t.add_argument("--text", default=None, help="UTF-8 text file (default: the bundled tinyshakespeare)")
    t.add_argument("--out", default="checkpoints/lm", help="checkpoint folder (resumed if it holds one)")
    t.add_argument("--model", choices=("gpt", "lstm"), default="gpt")
    t.add_argument("--tokenizer", choices=("char", "bpe"), default="char")
    t.add_argument("--vocab-size", type=int_at_least(256, 65536), default=None,
                   help="BPE vocabulary size (default 512; needs --tokenizer bpe)")
    t.add_argument("--max-iters", type=positive_int, default=None,
                   help=f"iterations in all (default {c.max_iters}; with --schedule-seconds, no limit); on resume a "
                        "larger value extends the run")
    t.add_argument("--max-time", type=float_in(0.0, 1e7, low_open=True), default=None, metavar="SECONDS",
                   help="stop (with an evaluation and a checkpoint) after this much training time, counted across "
                        "resumes (default: no limit)")
    t.add_argument("--schedule-seconds", type=float_in(0.0, 1e7, low_open=True), default=None, metavar="SECONDS",
                   help="fit the schedule to this much training time: warm-up in steps, the cosine over the "
                        "seconds, and the run ends within them")
    t.add_argument("--batch-size", type=positive_int, default=c.batch_size,
                   help="sequences per step, over all processes together")
    t.add_argument("--block-size", type=positive_int, default=c.block_size, help="context length in tokens")
    t.add_argument("--num-layers", type=positive_int, default=None, help=f"GPT only (default {GPT_DEFAULTS.num_layers})")
    t.add_argument("--num-heads", type=positive_int, default=None, help=f"GPT only (default {GPT_DEFAULTS.num_heads})")
    t.add_argument("--d-model", type=positive_int, default=GPT_DEFAULTS.d_model,
                   help="model width (the LSTM: embedding width, and half its hidden size)")
    t.add_argument("--positional", choices=("rotary", "learned", "sinusoidal"), default=None,
                   help=f"position information of the GPT (default {GPT_DEFAULTS.positional})")
    _add_optimizer_options(t)


def _add_optimizer_options(t) -> None:
    """The optimizer, its rates and schedule, and where and how the run executes."""
    c = CHAPTER_TRAIN
    t.add_argument("--optimizer", choices=("muon", "adamw"), default=c.optimizer,
                   help="muon: Muon for hidden matrices, AdamW for the rest; adamw: AdamW for all")
    t.add_argument("--lr", type=_LR, default=c.learning_rate, help="peak AdamW learning rate")
    t.add_argument("--muon-lr", type=_LR, default=c.muon_lr, help="peak Muon learning rate")
    t.add_argument("--embedding-lr", type=_LR, default=None,
                   help="peak AdamW learning rate of the token embedding (default: --lr)")
    t.add_argument("--head-lr", type=_LR, default=None,
                   help="peak AdamW learning rate of an untied output head (default: --lr)")
    t.add_argument("--dropout", type=float_in(0.0, 0.9), default=0.0,
                   help="dropout probability in training (the GPT: after attention, the MLP and the embedding; "
                        "the LSTM: on its embedding, between its layers and on its outputs)")
    t.add_argument("--untied-head", action="store_true",
                   help="GPT only: an output head of its own instead of the token embedding's transpose")
    t.add_argument("--qk-norm", action="store_true",
                   help="GPT only: a LayerNorm on each head's queries and keys before the scores (QK-norm)")
    t.add_argument("--muon-momentum-warmup", type=positive_int, default=None, metavar="STEPS",
                   help="raise Muon's momentum linearly from 0.85 to 0.95 over STEPS steps (default: 0.95 throughout)")
    t.add_argument("--weight-decay", type=float_in(0.0, 10.0), default=c.weight_decay,
                   help="AdamW's decoupled weight decay of embeddings and other matrices outside Muon")
    t.add_argument("--warmup", type=nonnegative_int, default=None,
                   help=f"warm-up iterations (default {c.warmup_iters}, at most --max-iters)")
    t.add_argument("--eval-interval", type=positive_int, default=c.eval_interval,
                   help="iterations between validation evaluations (and checkpoints)")
    t.add_argument("--seed", type=seed, default=c.seed)
    t.add_argument("--threads", type=int_at_least(1, 1024), default=1,
                   help="torch threads (default 1: more threads than free cores slows training down)")
    t.add_argument("--device", choices=DEVICES, default="auto", help="auto: CUDA when present, else the CPU")
    t.add_argument("--dtype", choices=DTYPES, default="float32", help="bfloat16: autocast the forward pass")
    t.add_argument("--muon-ns-dtype", choices=MUON_NS_DTYPES, default="auto",
                   help="Muon's Newton-Schulz products: auto runs a --dtype bfloat16 run's in bfloat16 (as "
                        "torch.optim.Muon) where the CPU or GPU has native bfloat16 products, in float32 elsewhere, "
                        "and a float32 run's in float32; the run's header says which")
    t.add_argument("--compile", action="store_true", help="torch.compile the model for training")
    t.add_argument("--grad-accum-steps", type=positive_int, default=1,
                   help="micro-batches per step and process; --batch-size stays the global batch")
    t.add_argument("--nproc", type=int_at_least(1, 256), default=1,
                   help="data-parallel processes on this machine (as torchrun --standalone --nproc_per_node)")
    t.add_argument("--restart", action="store_true", help="ignore an existing checkpoint in --out and start over")


def add_export_options(x) -> None:
    """``seqlab lm export``'s options."""
    x.add_argument("--checkpoint", required=True)
    x.add_argument("--format", choices=("hf",), default="hf",
                   help="hf: config.json, model.safetensors, tokenizer.json (GPT-2 or GPT-NeoX architecture)")
    x.add_argument("--out", required=True, help="the folder to write (one complete set, with a manifest)")


def add_sample_options(s) -> None:
    """``seqlab lm sample``'s options."""
    from ._sample import MAX_SAMPLES, stop_string

    s.add_argument("--checkpoint", required=True)
    prompt = s.add_mutually_exclusive_group()  # None defaults, so an explicit --prompt "" still conflicts
    prompt.add_argument("--prompt", default=None, help="text to continue (default: start from a new line)")
    prompt.add_argument("--prompt-file", default=None, metavar="PATH",
                        help="UTF-8 file whose whole text, final newline included, is the prompt")
    s.add_argument("--max-new-tokens", type=int_at_least(0, MAX_NEW_TOKENS), default=300)
    # None means "not given": --greedy refuses the sampling options only when they are given
    s.add_argument("--temperature", type=float_in(0.0, 100.0, low_open=True), default=None, help="default 1")
    s.add_argument("--top-k", type=positive_int, default=None)
    s.add_argument("--top-p", type=float_in(0.0, 1.0), default=None)
    s.add_argument("--min-p", type=float_in(0.0, 1.0), default=None)
    s.add_argument("--repetition-penalty", type=float_in(0.001, 100.0), default=None,
                   help="above 1, tokens already in the text get less likely (Hugging Face's rule); default 1")
    s.add_argument("--no-repeat-ngram-size", type=nonnegative_int, default=None, metavar="N",
                   help="never complete an N-gram already in the text (prompt included); 0: off")
    s.add_argument("--stop", action="append", type=stop_string, default=None, metavar="TEXT",
                   help="end a sample where TEXT is generated, printing the text before it; repeatable; "
                        "\\n, \\t, \\r and \\\\ are escapes")
    s.add_argument("--num-samples", type=int_at_least(1, MAX_SAMPLES), default=1, metavar="N",
                   help="print N samples, each under a header; sample i (from 0) uses --seed + i")
    s.add_argument("--batch-size", type=int_at_least(1, MAX_SAMPLES), default=1, metavar="N",
                   help="generate up to N of the --num-samples together (each with its own seed, the same text as "
                        "alone); the first of each batch streams, the others print when it ends")
    s.add_argument("--threads", type=int_at_least(1, 1024), default=1,
                   help="torch threads (more threads than free cores slows sampling down)")
    s.add_argument("--greedy", action="store_true", help="always the most likely token; --repetition-penalty and "
                   "--no-repeat-ngram-size still apply")
    s.add_argument("--seed", type=seed, default=0)
    s.add_argument("--device", choices=DEVICES, default="auto", help="auto: CUDA when present, else the CPU "
                   "(a seed gives the same text on every device: the draws run on the CPU)")
