"""seqlab's trainer on one CUDA GPU: the chapter's recipes, and nanoGPT's GPU recipe for shakespeare_char.

Runs, each on the bundled tinyshakespeare with the chapter's 90/10 split, each timing training steps only:
  1. the chapter's GPT and LSTM with the chapter's recipe (CHAPTER_TRAIN, 750 steps), in float32 and in
     bfloat16 autocast: tokens per second and the final validation loss, beside the CPU's figures for the
     same recipe (the chapter's artifacts);
  2. nanoGPT's GPU recipe (config/train_shakespeare_char.py: 6 layers, 6 heads, width 384, context 256,
     dropout 0.2, batch 64, AdamW 1e-3 to 1e-4 over 5,000 steps after 100 warm-up steps, beta2 0.99, weight
     decay 0.1, clipping 1.0, no biases, learned positions, tied head) through seqlab's trainer in bfloat16,
     evaluated as nanoGPT evaluates (200 batches every 250 steps); nanoGPT reports 1.4697;
  3. run 2's model compiled (``TrainConfig.compile``) for a few hundred steps: the compile's cost and the
     compiled steps' speed against run 2's eager steps;
  4. the same model with seqlab's Muon recipe, its cosine fitted to half of run 2's training time.

One GPU gives no NCCL all-reduce to measure; the launcher's NCCL path runs as one process (``torchrun
--nproc_per_node=1 ... --device cuda``) outside this script. Results print as they come and, with ``--json
PATH``, go to PATH after every run (full precision), so a run cut short keeps what it measured.

    python benchmarks/bench_lm_gpu.py [--json results.json] [--only chapter,nanogpt,compile,muon]
    python benchmarks/bench_lm_gpu.py --smoke      # the same code path on the CPU, a few steps each (no figures)
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import asdict, replace

import torch

from seqlab.experiments.lm import CHAPTER_TRAIN, chapter_gpt_config, chapter_lstm_config, load_lm_artifacts
from seqlab.nn import GPT, GPTConfig, LSTMLanguageModel
from seqlab.text import CharTokenizer
from seqlab.text.corpus import load_tinyshakespeare, split_train_val
from seqlab.text.training import TrainConfig, train_lm

#: nanoGPT's reported best validation loss for config/train_shakespeare_char.py on one GPU
NANOGPT_GPU_LOSS = 1.4697
RUNS = ("chapter", "nanogpt", "compile", "muon")


def nanogpt_gpu_model(vocab_size: int) -> GPTConfig:
    """nanoGPT's shakespeare_char shape: 6 layers, 6 heads, width 384, context 256, dropout 0.2, no biases."""
    return GPTConfig(vocab_size=vocab_size, block_size=256, num_layers=6, num_heads=6, d_model=384, dropout=0.2,
                     bias=False, positional="learned", tie_weights=True)


#: nanoGPT's shakespeare_char training recipe, in seqlab's settings
NANOGPT_GPU_TRAIN = TrainConfig(max_iters=5000, batch_size=64, block_size=256, learning_rate=1e-3, min_lr=1e-4,
                                warmup_iters=100, weight_decay=0.1, beta1=0.9, beta2=0.99, grad_clip=1.0,
                                eval_interval=250, eval_iters=200, seed=1337, optimizer="adamw", device="cuda",
                                dtype="bfloat16")
#: seqlab's recipe at that shape: Muon for the hidden matrices, the chapter's rates (not tuned at this scale)
MUON_GPU_TRAIN = replace(NANOGPT_GPU_TRAIN, optimizer="muon", learning_rate=CHAPTER_TRAIN.learning_rate,
                         min_lr=CHAPTER_TRAIN.min_lr, muon_lr=CHAPTER_TRAIN.muon_lr, warmup_iters=50)


def _summary(name: str, res, config: TrainConfig, **extra) -> dict:
    rows = res.history
    last = rows[-1]
    return {"run": name, "steps": res.iterations, "train_seconds": last["seconds"],
            "tokens_per_s": last["tokens_per_s"], "final_val_loss": last["val_loss"],
            "best_val_loss": min(r["val_loss"] for r in rows), "history": rows,
            "config": asdict(config), **extra}


def _print(r: dict) -> None:
    shown = {"reference": "nanoGPT's {:.4f}", "cpu_val_loss": "CPU {:.4f}", "cpu_tokens_per_s": "CPU {:,.0f} tokens/s"}
    extra = "".join(f"; {form.format(r[k])}" for k, form in shown.items() if r.get(k) is not None)
    print(f"  {r['run']}: {r['steps']} steps in {r['train_seconds']:.1f} s, {r['tokens_per_s']:,.0f} tokens/s, "
          f"val loss {r['final_val_loss']:.4f} (best {r['best_val_loss']:.4f}){extra}", flush=True)


def chapter_runs(train_ids, val_ids, vocab: int, device: str, steps: int | None) -> list[dict]:
    try:
        curves = load_lm_artifacts()[2]  # the chapter's artifacts: the same recipe trained on the CPU
        last = curves.groupby("model").tail(1).set_index("model")
        cpu_loss = {m: float(last.loc[m, "val_loss"]) for m in last.index}
        cpu_rate = {m: float(last.loc[m, "tokens_per_s"]) for m in last.index}
    except Exception as e:  # a figure beside the run, not a condition of it
        print(f"  (the CPU artifacts did not load: {type(e).__name__}: {e})")
        cpu_loss, cpu_rate = {}, {}
    out = []
    for name, make in (("GPT", lambda: GPT(chapter_gpt_config(vocab))),
                       ("LSTM", lambda: LSTMLanguageModel(chapter_lstm_config(vocab)))):
        for dtype in ("float32", "bfloat16"):
            config = replace(CHAPTER_TRAIN, device=device, dtype=dtype)
            if steps is not None:
                config = config.with_max_iters(steps, eval_interval=steps)
            torch.manual_seed(config.seed)
            res = train_lm(make(), train_ids, val_ids, config)
            r = _summary(f"chapter {name} {dtype}", res, config, cpu_val_loss=cpu_loss.get(name),
                         cpu_tokens_per_s=cpu_rate.get(name))
            _print(r)
            out.append(r)
    return out


def nanogpt_run(train_ids, val_ids, vocab: int, config: TrainConfig, name: str, **extra) -> dict:
    torch.manual_seed(config.seed)
    res = train_lm(GPT(nanogpt_gpu_model(vocab)), train_ids, val_ids, config)
    r = _summary(name, res, config, reference=NANOGPT_GPU_LOSS, **extra)
    _print(r)
    return r


def compile_run(train_ids, val_ids, vocab: int, config: TrainConfig, eager: dict | None) -> dict:
    """Compiled steps: the first evaluation's clock holds the compile; the rate between the two evaluations is the
    compiled steps' own."""
    n = config.max_iters
    c = config.with_max_iters(n, eval_interval=n // 3, eval_iters=10)
    torch.manual_seed(c.seed)
    res = train_lm(GPT(nanogpt_gpu_model(vocab)), train_ids, val_ids, replace(c, compile=True))
    (i1, s1), (i2, s2) = [(r["iter"], r["seconds"]) for r in res.history[:2]]
    steady = (i2 - i1) * c.batch_size * c.block_size / (s2 - s1)
    r = _summary("nanoGPT shape, compiled", res, c, steady_tokens_per_s=steady, first_eval_seconds=s1)
    _print(r)
    print(f"    compiled steps {steady:,.0f} tokens/s after {s1:.1f} s for the first {i1} steps (compile included)"
          + (f"; eager {eager['tokens_per_s']:,.0f} tokens/s, ratio {steady / eager['tokens_per_s']:.2f}"
             if eager else ""), flush=True)
    return r


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", default=None, help="write the results here after every run")
    p.add_argument("--only", default=",".join(RUNS), help=f"comma-separated runs among {', '.join(RUNS)}")
    p.add_argument("--smoke", action="store_true", help="a few steps of each on the CPU: the code path, no figures")
    args = p.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    if unknown := sorted(set(only) - set(RUNS)):
        print(f"error: unknown run(s) {', '.join(unknown)}; choose among {', '.join(RUNS)}", file=sys.stderr)
        return 2
    if not args.smoke and not torch.cuda.is_available():
        print("error: no CUDA GPU visible to torch; --smoke runs the code path on the CPU", file=sys.stderr)
        return 2
    device = "cpu" if args.smoke else "cuda"
    text = load_tinyshakespeare()
    tok = CharTokenizer().train(text)
    train_ids, val_ids = split_train_val(torch.tensor(tok.encode(text)))
    vocab = tok.vocab_size
    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
           "device_name": torch.cuda.get_device_name(0) if device == "cuda" else platform.processor(),
           "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "smoke": args.smoke}
    print(f"seqlab's trainer on {env['device_name']} (torch {env['torch']}, CUDA {env['cuda']})", flush=True)
    results: dict = {"environment": env, "runs": []}

    def keep(r):
        results["runs"].append(r)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)

    nano = replace(NANOGPT_GPU_TRAIN, device=device)
    if args.smoke:
        nano = replace(nano.with_max_iters(6, eval_interval=3, eval_iters=2), batch_size=4)
    eager = None
    if "chapter" in only:
        print("the chapter's recipe (750 steps, batch 24, context 64):", flush=True)
        for r in chapter_runs(train_ids, val_ids, vocab, device, 4 if args.smoke else None):
            keep(r)
    if "nanogpt" in only:
        print("nanoGPT's GPU recipe through seqlab's trainer (bfloat16):", flush=True)
        eager = nanogpt_run(train_ids, val_ids, vocab, nano, "nanoGPT recipe")
        keep(eager)
    if "compile" in only:
        print("nanoGPT's shape compiled (torch.compile):", flush=True)
        c = nano.with_max_iters(6 if args.smoke else 300)
        keep(compile_run(train_ids, val_ids, vocab, c, eager))
    if "muon" in only:
        budget = (eager["train_seconds"] if eager else 60.0) / 2
        muon = replace(MUON_GPU_TRAIN, device=device).with_max_iters(nano.max_iters, schedule_seconds=budget)
        if args.smoke:
            muon = replace(muon, batch_size=4, eval_iters=2, eval_interval=3, schedule_seconds=1.0, max_iters=6)
        print(f"the same model, seqlab's Muon recipe, cosine over {muon.schedule_seconds:.1f} s:", flush=True)
        keep(nanogpt_run(train_ids, val_ids, vocab, muon, "Muon recipe, half the time"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
