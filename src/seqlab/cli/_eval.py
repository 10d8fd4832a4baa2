"""``seqlab lm eval``: how well a checkpoint (or an exported folder) predicts a text, every token scored once."""
from __future__ import annotations

import json
import sys

from ._common import UsageError, note_threads

__all__ = ["cmd_eval"]

_SPLITS = {"val": "the last 10%, which lm train holds out for validation",
           "train": "the first 90%, which lm train trains on", "all": "the whole text"}


def cmd_eval(args) -> int:
    import torch

    from ..text.corpus import load_tinyshakespeare, read_text_file, split_train_val
    from ..text.scoring import score_ids
    from ._sample import _load, _warn_unknown

    model, tok = _load(args.checkpoint)
    if tok is None:
        raise UsageError(f"{args.checkpoint}: the checkpoint has no tokenizer")
    text = load_tinyshakespeare() if args.text is None else read_text_file(args.text)
    label = "the bundled tinyshakespeare" if args.text is None else args.text
    _warn_unknown(tok, text, label, "each is scored as the unknown token")
    ids = torch.tensor(tok.encode(text))
    if args.split != "all":
        train, val = split_train_val(ids)
        ids = val if args.split == "val" else train
    if len(ids) < 2:
        raise UsageError(f"{label}: its {args.split} part holds {len(ids)} token(s); scoring needs at least 2 "
                         "(use --split all, or a longer text)")
    note_threads(args.threads)
    score = score_ids(model, tok, ids.tolist(), threads=args.threads)
    if args.json:
        payload = {"checkpoint": str(args.checkpoint), "text": label, "split": args.split,
                   "block_size": model.config.block_size, **score.as_dict()}
        json.dump(payload, sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
        return 0
    print(f"{label}, {args.split} split ({_SPLITS[args.split]}): {score.tokens:,} tokens, "
          f"{score.characters:,} characters, scored in windows of {model.config.block_size} tokens")
    print(f"  loss        {score.nats_per_token:.6f} nats/token   {score.bits_per_token:.6f} bits/token")
    print(f"              {score.nats_per_char:.6f} nats/char    {score.bits_per_char:.6f} bits/char")
    print(f"  perplexity  {score.perplexity:.4f} (per token)")
    return 0
