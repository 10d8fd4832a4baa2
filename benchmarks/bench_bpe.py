"""BPE training CPU time against Hugging Face `tokenizers`, same corpus and vocabulary, in one run.

Target (issue: tokenization): seqlab's BPE at vocabulary 512 on tinyshakespeare <= 10x the
CPU time of `tokenizers`. Also prints bytes per token for both (compression).
Usage: python benchmarks/bench_bpe.py [PATH_TO_A_UTF8_TEXT] (default: the tinyshakespeare seqlab ships)
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from seqlab.text import BPETokenizer
from seqlab.text.corpus import load_tinyshakespeare, read_text_file


def main():
    text = read_text_file(Path(sys.argv[1])) if len(sys.argv) > 1 else load_tinyshakespeare()
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    t0 = time.process_time()
    ours = BPETokenizer().train(text, 512)
    t_ours = time.process_time() - t0
    ref = Tokenizer(models.BPE())
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    ref.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=512, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    t0 = time.process_time()
    ref.train_from_iterator([text], trainer)
    t_ref = time.process_time() - t0
    n = len(text.encode("utf-8"))
    bpt_ours, bpt_ref = n / len(ours.encode(text)), n / len(ref.encode(text).ids)
    print(f"BPE training, vocabulary 512, {n:,} bytes")
    print(f"  seqlab     {t_ours:6.2f} s CPU   {bpt_ours:.4f} bytes/token")
    print(f"  tokenizers {t_ref:6.2f} s CPU   {bpt_ref:.4f} bytes/token")
    ratio = t_ours / t_ref
    print(f"  CPU-time ratio {ratio:.2f} (target <= 10: {'PASS' if ratio <= 10 else 'FAIL'}); "
          f"compression ratio {bpt_ours / bpt_ref:.4f} (target within 2%)")


if __name__ == "__main__":
    main()
