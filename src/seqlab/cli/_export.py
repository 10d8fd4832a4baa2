"""``seqlab lm export``: a checkpoint as a Hugging Face model folder."""
from __future__ import annotations

from ._common import UsageError, check_output_dir

__all__ = ["cmd_export"]


def cmd_export(args) -> int:
    from ..text.checkpoint import load_checkpoint, model_kind
    from ..text.export import export_hf

    model, tok, state = load_checkpoint(args.checkpoint)
    if tok is None:
        raise UsageError(f"{args.checkpoint}: the checkpoint has no tokenizer")
    out = check_output_dir(args.out)
    info = {"iteration": state["iteration"], "history": state["history"],
            "text": (state["extra"].get("provenance") or {}).get("text")}
    written = export_hf(model, tok, out, info=info)
    files = ", ".join(p.name for p in written)
    if model_kind(model) == "lstm":
        print(f"wrote {files} to {out}: transformers has no LSTM language model class, so AutoModelForCausalLM "
              "cannot load it; the weights keep seqlab's names beside config.json, and lm sample --checkpoint reads "
              "the folder (AutoTokenizer loads its tokenizer.json)")
        return 0
    arch = "GPT-NeoX" if model.config.positional == "rotary" else "GPT-2"
    print(f"wrote {files} to {out} ({arch} architecture); load it with transformers: "
          f"AutoModelForCausalLM.from_pretrained({str(out)!r}) and AutoTokenizer.from_pretrained(...); with "
          f"trust_remote_code=True it generates past its context of {model.config.block_size} tokens as lm sample "
          "does (README.md in the folder says how)")
    return 0
