"""seqlab's cached generation against transformers' ``generate`` on the same weights.

Target (issue 59): seqlab takes at most 1.0x transformers' time, for rotary (exported as GPT-NeoX)
and learned positions (exported as GPT-2), on 1 and 2 threads, with identical greedy tokens.
Two shapes per positional scheme: the chapter's GPT (4 blocks, 4 heads, width 128) and nanoGPT's
Shakespeare shape (6 blocks, 6 heads, width 384), each with a context of 1024 so that a 256-token
prompt and 500 new tokens fit; a 65-character vocabulary. Each time is the best of ``--repeats``
runs, the two libraries interleaved so that load falls on both alike.

Run alone on a quiet machine: python benchmarks/bench_generation_hf.py [--repeats 3] [--json PATH]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import string
import tempfile
import time

import torch

from seqlab.experiments.lm import chapter_gpt_config
from seqlab.machine import cpu_model
from seqlab.nn import GPT
from seqlab.text import CharTokenizer
from seqlab.text.tokenizers import UNK
from seqlab.text.export import export_hf
from seqlab.text.generation import generate
from seqlab.text.processors import SuppressTokens

#: the export's generation_config.json bans the unknown-character token; seqlab's side bans it too
UNK_ID = 0

PROMPT, NEW = 256, 500
ALPHABET = string.ascii_letters + " \n.,;:!?'-&$3"


#: (blocks, heads, width) of each shape
SHAPES = {"chapter": (4, 4, 128), "nanogpt": (6, 6, 384)}


def _model(positional: str, shape: str) -> GPT:
    torch.manual_seed(0)
    layers, heads, width = SHAPES[shape]
    cfg = dataclasses.replace(chapter_gpt_config(len(ALPHABET)), block_size=1024, num_layers=layers,
                              num_heads=heads, d_model=width, d_ff=4 * width, positional=positional)
    model = GPT(cfg).eval()
    with torch.no_grad():  # weights away from their initial values, so greedy choices are not near ties
        for p in model.parameters():
            p.add_(0.2 * torch.randn_like(p))
    return model


def _best(fn, repeats: int) -> tuple[float, torch.Tensor]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def measure(positional: str, shape: str, threads: int, repeats: int) -> dict:
    """One row: both libraries' best times and whether their tokens agree (the thread count is restored)."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _measure(positional, shape, threads, repeats)
    finally:
        torch.set_num_threads(before)


def _measure(positional: str, shape: str, threads: int, repeats: int) -> dict:
    from transformers import AutoModelForCausalLM

    model = _model(positional, shape)
    prompt = torch.randint(0, len(ALPHABET), (1, PROMPT), generator=torch.Generator().manual_seed(1))
    tok = CharTokenizer().train(ALPHABET)
    with tempfile.TemporaryDirectory() as d:
        export_hf(model, tok, d)
        hf = AutoModelForCausalLM.from_pretrained(d).eval()

    def ours():
        with torch.inference_mode():
            return generate(model, prompt, NEW, [SuppressTokens([UNK_ID])], greedy=True)

    def theirs():
        with torch.inference_mode():
            return hf.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=NEW, do_sample=False,
                               pad_token_id=0)

    assert tok.token_to_id[UNK] == UNK_ID
    ours(), theirs()  # warm-up: first-call allocations and kernel selection
    t_ours, t_theirs, out_ours, out_theirs = float("inf"), float("inf"), None, None
    for _ in range(repeats):
        t, out_ours = _best(ours, 1)
        t_ours = min(t_ours, t)
        t, out_theirs = _best(theirs, 1)
        t_theirs = min(t_theirs, t)
    return {"positional": positional, "shape": shape, "threads": threads, "seqlab_s": t_ours, "transformers_s": t_theirs,
            "ratio": t_ours / t_theirs, "identical": bool(torch.equal(out_ours, out_theirs)),
            "new_tokens": int(out_ours.size(1) - PROMPT)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--shapes", nargs="+", choices=tuple(SHAPES), default=list(SHAPES))
    ap.add_argument("--json", help="write the rows here, full precision")
    args = ap.parse_args(argv)
    import transformers

    cpu = f"{cpu_model()} ({torch.backends.cpu.get_cpu_capability()})"  # the model name alone can hide the kind
    print(f"{cpu}, torch {torch.__version__}, "
          f"transformers {transformers.__version__}; prompt {PROMPT}, {NEW} new tokens, best of {args.repeats}")
    rows = []
    for shape, positional in [(s, p) for s in args.shapes for p in ("rotary", "learned")]:
        for threads in args.threads:
            r = measure(positional, shape, threads, args.repeats)
            rows.append(r)
            ok = r["ratio"] <= 1.0 and r["identical"]
            print(f"  {shape:8s} {positional:8s} {threads} thread(s): seqlab {r['seqlab_s']:6.3f} s "
                  f"({NEW / r['seqlab_s']:5.0f} tok/s)  transformers {r['transformers_s']:6.3f} s "
                  f"({NEW / r['transformers_s']:5.0f} tok/s)  ratio {r['ratio']:.3f}  "
                  f"identical {r['identical']}  {'PASS' if ok else 'FAIL'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "cpu": cpu, "torch": torch.__version__, "transformers": transformers.__version__}, f,
                      indent=1)
    return rows


if __name__ == "__main__":
    main()
