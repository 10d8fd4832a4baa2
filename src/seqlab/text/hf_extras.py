"""What an exported folder carries beside its weights: generation past the context, a generation config and a
model card.

seqlab's sampler (``lm sample``) conditions on the last ``block_size`` tokens once the text outgrows the
context, re-encoding that window at positions 0 to ``block_size - 1``. GPT-2 cannot look past its position
table at all, and GPT-NeoX would keep attending to the whole history, so neither built-in class continues a
text the way the model was trained to. ``modeling_seqlab.py`` subclasses each with that window and nothing
else; ``AutoModelForCausalLM.from_pretrained(folder, trust_remote_code=True)`` loads it, and its greedy tokens
equal ``lm sample --greedy`` at any length. Without ``trust_remote_code`` transformers uses its own class,
which gives the same logits within the context.
"""
from __future__ import annotations

import math

__all__ = ["MODELING_FILE", "MODELING_SOURCE", "auto_map", "generation_config", "model_card"]

MODELING_FILE = "modeling_seqlab.py"
#: the subclasses transformers loads with trust_remote_code=True (no seqlab import: it runs without seqlab)
MODELING_SOURCE = '''"""transformers' GPT-2 and GPT-NeoX, continuing a text past the context as seqlab does.

Once the text is longer than the context, each step reads the last `context` tokens
afresh, at positions 0 to context - 1 (no cache past that point, as in seqlab's
`lm sample`). Within the context nothing differs from the built-in classes.
Written by `seqlab lm export`.
"""
from transformers import GPT2LMHeadModel, GPTNeoXForCausalLM


class _SlidingWindow:
    def _context(self) -> int:
        c = self.config
        return getattr(c, "n_positions", None) or c.max_position_embeddings

    def generate(self, *args, **kwargs):
        # a cache holds keys of positions the window no longer has: every step sees its whole window instead
        kwargs.setdefault("use_cache", False)
        return super().generate(*args, **kwargs)

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kwargs):
        limit = self._context()
        if input_ids is not None and input_ids.shape[1] > limit:
            input_ids = input_ids[:, -limit:]
            attention_mask = None if attention_mask is None else attention_mask[:, -limit:]
            position_ids = None  # the window starts at position 0, as in training
            kwargs.pop("cache_position", None)
        return super().forward(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                               **kwargs)


class SeqlabGPT2LMHeadModel(_SlidingWindow, GPT2LMHeadModel):
    pass


class SeqlabGPTNeoXForCausalLM(_SlidingWindow, GPTNeoXForCausalLM):
    pass
'''


def auto_map(rotary: bool) -> dict:
    """config.json's pointer to the class above (used only with ``trust_remote_code=True``)."""
    name = "SeqlabGPTNeoXForCausalLM" if rotary else "SeqlabGPT2LMHeadModel"
    return {"AutoModelForCausalLM": f"{MODELING_FILE[:-3]}.{name}"}


def generation_config(pad_token_id: int, unknown_id: int | None) -> dict:
    """Greedy by default, no end token (the model never ends a text on its own, as in ``lm sample``), a pad id
    so that batched generation needs no warning, and the unknown token suppressed, as ``lm sample`` suppresses
    it (it is a placeholder, not text)."""
    return {"do_sample": False, "bos_token_id": None, "eos_token_id": None, "pad_token_id": pad_token_id,
            "suppress_tokens": [] if unknown_id is None else [unknown_id], "use_cache": True,
            "_from_model_config": False}


def _fmt(x) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.4f}"


def model_card(kind: str, context: int, vocab_size: int, tokenizer_kind: str, info: dict | None) -> str:
    """README.md of the folder: what the model is, its context, how to load it, and what it was trained on."""
    info = info or {}
    text = info.get("text") or {}
    history = info.get("history") or []
    last = history[-1] if history else {}
    best = min(history, key=lambda r: r.get("val_loss", math.inf)) if history else {}
    per_char = "val_nats_per_char" in last
    unit = "nats per character" if per_char else "nats per token"
    key = "val_nats_per_char" if per_char else "val_loss"
    lines = [
        "---", "library_name: transformers", "tags: [seqlab, causal-lm]", "---", "",
        f"# A {kind} language model exported by seqlab", "",
        f"- **Context:** {context} tokens. Past it, `lm sample` and this folder's `modeling_seqlab.py` condition "
        f"each step on the last {context} tokens.",
        f"- **Tokenizer:** {tokenizer_kind}, {vocab_size} tokens (`tokenizer.json`); no end-of-text token, so a "
        "text ends where `max_new_tokens` ends it.",
        f"- **Training text:** {text.get('name', 'not recorded')}"
        + (f" ({text['characters']:,} characters, sha256 {text['sha256'][:16]}…)" if "sha256" in text else ""),
        f"- **Trained for:** {info['iteration']:,} iterations" if "iteration" in info else "- **Trained for:** not recorded",
        f"- **Validation loss ({unit}, sampled windows):** last {_fmt(last.get(key))}, best {_fmt(best.get(key))}",
        "", "## Load it", "", "```python", "from transformers import AutoModelForCausalLM, AutoTokenizer",
        "tok = AutoTokenizer.from_pretrained(FOLDER)",
        "# trust_remote_code=True: the window past the context, exactly as seqlab generates",
        "model = AutoModelForCausalLM.from_pretrained(FOLDER, trust_remote_code=True)",
        "ids = tok(\"ROMEO:\", return_tensors=\"pt\")[\"input_ids\"]",
        f"out = model.generate(ids, max_new_tokens={3 * context}, do_sample=False)", "```", "",
        f"Without `trust_remote_code`, transformers' own class gives the same logits within {context} tokens; "
        + ("GPT-2 cannot go past its position table." if kind == "GPT-2" else
           "past them it attends to the whole history, which the model never saw in training."),
        "", "Score it on a text with `seqlab lm eval --checkpoint FOLDER --text FILE --split all`.", "",
    ]
    return "\n".join(lines)
