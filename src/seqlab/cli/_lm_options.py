"""The options of ``seqlab lm train``, ``lm export`` and ``lm sample``, each checked as argparse reads it."""
from __future__ import annotations

from ..devices import DEVICES, DTYPES, MUON_NS_DTYPES
from ..experiments.lm import CHAPTER_TRAIN, chapter_gpt_config
from ._common import float_in, int_at_least, seed
from ._train_report import STEP_CAP

__all__ = ["add_train_options", "add_export_options", "add_sample_options", "MAX_NEW_TOKENS", "GPT_DEFAULTS"]

#: the chapter's GPT, whose settings are the defaults of the model options
GPT_DEFAULTS = chapter_gpt_config(vocab_size=1)

#: the most tokens one `lm sample` generates
MAX_NEW_TOKENS = 100_000
_LR = float_in(1e-8, 10.0)  # outside this, AdamW and Muon either cannot move or overflow at once

# Fixed caps where neither the text nor the checkpoint decides. The sizes of the model and batch are bounded
# by the memory estimate before training; these caps keep that estimate's arithmetic finite (a width of 10**200
# overflowed it) and say at once that a value is a typo. Step counts stop at the step count of a run fitted
# to --schedule-seconds: a billion steps is eleven days of training even at a millisecond a step.
_STEP_WHY = "a billion steps, days of training even at a millisecond a step"
_STEPS, _STEPS_OR_NONE = int_at_least(1, STEP_CAP, _STEP_WHY), int_at_least(0, STEP_CAP, _STEP_WHY)
_MEMORY = "a generous cap; what fits in memory is checked before training"
#: sequences in a batch, and tokens in a context: 2**20 each
MAX_SEQUENCES = MAX_CONTEXT = 2 ** 20
MAX_LAYERS, MAX_HEADS, MAX_WIDTH = 1024, 4096, 65536
#: more than any vocabulary here has tokens (a character one has at most Unicode's 1,114,112 code points)
MAX_TOP_K = 2 ** 21
#: no text here repeats an n-gram that long by chance; each step compares N tokens at every earlier position
MAX_NGRAM = 1024


def add_train_options(t) -> None:
    """``seqlab lm train``'s options; the chapter's recipe supplies every default."""
    c = CHAPTER_TRAIN
    t.add_argument("--text", default=None, help="UTF-8 text file (default: the bundled tinyshakespeare)")
    t.add_argument("--out", default="checkpoints/lm", help="checkpoint folder (resumed if it holds one)")
    t.add_argument("--model", choices=("gpt", "lstm"), default="gpt", help="the model the chapter teaches")
    t.add_argument("--tokenizer", choices=("char", "bpe"), default="char",
                   help="char: one token per character; bpe: byte-level byte-pair encoding")
    t.add_argument("--vocab-size", type=int_at_least(256, 65536), default=None,
                   help="BPE vocabulary size; needs --tokenizer bpe (default: 512)")
    t.add_argument("--max-iters", type=_STEPS, default=None,
                   help=f"iterations in all, at most {STEP_CAP:,}; on resume a larger value extends the run "
                        f"(default: {c.max_iters}; with --schedule-seconds, no limit)")
    t.add_argument("--max-time", type=float_in(0.0, 1e7, low_open=True), default=None, metavar="SECONDS",
                   help="stop (with an evaluation and a checkpoint) after this much training time, counted across "
                        "resumes (default: no limit)")
    t.add_argument("--schedule-seconds", type=float_in(0.0, 1e7, low_open=True), default=None, metavar="SECONDS",
                   help="fit the schedule to this much training time: warm-up in steps, the cosine over the "
                        "seconds, and the run ends within them (default: off, the schedule runs over --max-iters)")
    t.add_argument("--batch-size", type=int_at_least(1, MAX_SEQUENCES, _MEMORY), default=c.batch_size,
                   help=f"sequences per step, over all processes together (at most {MAX_SEQUENCES:,}, and what fits "
                        "in memory)")
    t.add_argument("--block-size", type=int_at_least(1, MAX_CONTEXT, _MEMORY), default=c.block_size,
                   help=f"context length in tokens (at most {MAX_CONTEXT:,}, shorter than the text's 10%% "
                        "validation part, and what fits in memory)")
    t.add_argument("--num-layers", type=int_at_least(1, MAX_LAYERS, _MEMORY), default=None,
                   help=f"GPT only; at most {MAX_LAYERS:,}, and what fits in memory "
                        f"(default: {GPT_DEFAULTS.num_layers})")
    t.add_argument("--num-heads", type=int_at_least(1, MAX_HEADS, _MEMORY), default=None,
                   help=f"GPT only; a divisor of --d-model, at most {MAX_HEADS:,} (default: {GPT_DEFAULTS.num_heads})")
    t.add_argument("--d-model", type=int_at_least(1, MAX_WIDTH, _MEMORY), default=GPT_DEFAULTS.d_model,
                   help=f"model width (the LSTM: embedding width, and half its hidden size); at most {MAX_WIDTH:,}, "
                        "and what fits in memory")
    t.add_argument("--positional", choices=("rotary", "learned", "sinusoidal"), default=None,
                   help=f"position information of the GPT (default: {GPT_DEFAULTS.positional})")
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
    t.add_argument("--muon-momentum-warmup", type=_STEPS, default=None, metavar="STEPS",
                   help=f"raise Muon's momentum linearly from 0.85 to 0.95 over STEPS steps, at most {STEP_CAP:,} "
                        "(default: 0.95 throughout)")
    t.add_argument("--weight-decay", type=float_in(0.0, 10.0), default=c.weight_decay,
                   help="AdamW's decoupled weight decay of embeddings and other matrices outside Muon")
    t.add_argument("--warmup", type=_STEPS_OR_NONE, default=None,
                   help=f"warm-up iterations, at most --max-iters and {STEP_CAP:,} (default: {c.warmup_iters}, "
                        "or --max-iters if smaller)")
    t.add_argument("--eval-interval", type=_STEPS, default=c.eval_interval,
                   help=f"iterations between validation evaluations (and checkpoints), at most {STEP_CAP:,}; the "
                        "run's last iteration is always evaluated")
    t.add_argument("--seed", type=seed, default=c.seed, help="seeds the initial weights and the batches' order")
    t.add_argument("--threads", type=int_at_least(1, 1024), default=1,
                   help="torch threads; more threads than free cores slows training down (default: 1)")
    t.add_argument("--device", choices=DEVICES, default="auto", help="auto: CUDA when present, else the CPU")
    t.add_argument("--dtype", choices=DTYPES, default="float32", help="bfloat16: autocast the forward pass")
    t.add_argument("--muon-ns-dtype", choices=MUON_NS_DTYPES, default="auto",
                   help="Muon's Newton-Schulz products: auto runs a --dtype bfloat16 run's in bfloat16 (as "
                        "torch.optim.Muon) where the CPU or GPU has native bfloat16 products, in float32 elsewhere, "
                        "and a float32 run's in float32; the run's header says which")
    t.add_argument("--compile", action="store_true", help="torch.compile the model for training")
    t.add_argument("--grad-accum-steps", type=int_at_least(1, MAX_SEQUENCES, "the most sequences in a batch"),
                   default=1, help="micro-batches per step and process, a divisor of --batch-size per process; "
                                   "--batch-size stays the global batch")
    t.add_argument("--nproc", type=int_at_least(1, 256), default=1,
                   help="data-parallel processes on this machine (as torchrun --standalone --nproc_per_node)")
    t.add_argument("--restart", action="store_true", help="ignore an existing checkpoint in --out and start over")
    t.add_argument("--init-from", default=None, metavar="DIR",
                   help="fine-tune: start from this checkpoint's (or exported folder's) weights and tokenizer, with a "
                        "new optimizer and schedule; the shape comes from DIR, DIR is never written, and characters "
                        "its tokenizer does not know are read as <unk>, refused past 5%% of the text (default: a new model)")


def add_export_options(x) -> None:
    """``seqlab lm export``'s options."""
    x.add_argument("--checkpoint", required=True, help="the checkpoint folder to export (lm train's --out)")
    x.add_argument("--format", choices=("hf",), default="hf",
                   help="hf: config.json, model.safetensors, tokenizer.json (GPT-2 or GPT-NeoX architecture)")
    x.add_argument("--out", required=True, help="the folder to write (one complete set, with a manifest)")


def add_eval_options(e) -> None:
    """``seqlab lm eval``'s options."""
    e.add_argument("--checkpoint", required=True, help="a checkpoint folder, or a folder lm export wrote")
    e.add_argument("--text", default=None, help="UTF-8 text file (default: the bundled tinyshakespeare)")
    e.add_argument("--split", choices=("val", "train", "all"), default="val",
                   help="val: the last 10%% of the text, which lm train holds out (its validation loss); train: "
                        "the first 90%%; all: the whole text (for a text held out of training)")
    e.add_argument("--threads", type=int_at_least(1, 1024), default=1,
                   help="torch threads (more threads than free cores slows scoring down)")
    e.add_argument("--json", action="store_true", help="print exactly one JSON object (full precision)")


def add_sample_options(s) -> None:
    """``seqlab lm sample``'s options."""
    from ._sample import MAX_SAMPLES, stop_string

    s.add_argument("--checkpoint", required=True, help="a checkpoint folder, or a folder lm export wrote")
    prompt = s.add_mutually_exclusive_group()  # None defaults, so an explicit --prompt "" still conflicts
    prompt.add_argument("--prompt", default=None, help="text to continue (default: start from a new line)")
    prompt.add_argument("--prompt-file", default=None, metavar="PATH",
                        help="UTF-8 file whose whole text, final newline included, is the prompt (default: none)")
    s.add_argument("--max-new-tokens", type=int_at_least(0, MAX_NEW_TOKENS), default=300,
                   help=f"tokens to generate after the prompt, at most {MAX_NEW_TOKENS:,}")
    # None means "not given": --greedy refuses the sampling options only when they are given
    s.add_argument("--temperature", type=float_in(0.0, 100.0, low_open=True), default=None,
                   help="divide the logits by T: below 1 sharper, above 1 flatter (default: 1)")
    s.add_argument("--top-k", type=int_at_least(1, MAX_TOP_K, "more than any vocabulary has tokens"), default=None,
                   help=f"keep the k most likely tokens, at most {MAX_TOP_K:,}; a k above the vocabulary's size "
                        "keeps every token (default: off)")
    s.add_argument("--top-p", type=float_in(0.0, 1.0), default=None,
                   help="nucleus sampling: keep the most likely tokens whose probabilities sum to p (default: off)")
    s.add_argument("--min-p", type=float_in(0.0, 1.0), default=None,
                   help="keep the tokens at least p times as likely as the most likely one (default: off)")
    s.add_argument("--repetition-penalty", type=float_in(0.001, 100.0), default=None,
                   help="above 1, tokens already in the text get less likely (Hugging Face's rule) (default: 1)")
    s.add_argument("--no-repeat-ngram-size", type=int_at_least(0, MAX_NGRAM, "each step compares N tokens at "
                                                                       "every earlier position"),
                   default=None, metavar="N", help="never complete an N-gram already in the text (prompt included); "
                                                  f"0: off; at most {MAX_NGRAM:,} (default: off)")
    s.add_argument("--stop", action="append", type=stop_string, default=None, metavar="TEXT",
                   help="end a sample where TEXT is generated, printing the text before it; repeatable; "
                        "\\n, \\t, \\r and \\\\ are escapes (default: none)")
    s.add_argument("--num-samples", type=int_at_least(1, MAX_SAMPLES), default=1, metavar="N",
                   help="print N samples, each under a header; sample i (from 0) uses --seed + i")
    s.add_argument("--batch-size", type=int_at_least(1, MAX_SAMPLES), default=1, metavar="N",
                   help="generate up to N of the --num-samples together (each with its own seed, the same text as "
                        "alone); the first of each batch streams, the others print when it ends. Within the context a "
                        "step feeds one new token per sample through the cache, and 8 together ran about 5x faster "
                        "than one at a time; past it every step re-encodes each sample's last context-length "
                        "tokens (what the model was trained on), work a batch does not shrink: about 2x "
                        "(docs/benchmarks.md)")
    s.add_argument("--threads", type=int_at_least(1, 1024), default=1,
                   help="torch threads; more threads than free cores slows sampling down")
    s.add_argument("--greedy", action="store_true", help="always the most likely token; --repetition-penalty and "
                   "--no-repeat-ngram-size still apply")
    s.add_argument("--seed", type=seed, default=0, help="seeds the draws: the same seed gives the same text")
    s.add_argument("--device", choices=DEVICES, default="auto", help="auto: CUDA when present, else the CPU "
                   "(a seed gives the same text on every device: the draws run on the CPU)")
