"""Text for language models: tokenizers, corpora, training and checkpoints, sampling and generation, scoring, export.

The tokenizers load with the package; every other name loads its module (and torch) on first use, so a
program that only tokenizes does not pay for torch.
"""
from ..lazy import lazy_names

from .tokenizers import (BPETokenizer, CharTokenizer, Tokenizer, TokenizerFormatError, UnknownTokenError,
                         WordTokenizer, load_tokenizer)

#: public name -> the module that defines it, imported on first access
_LAZY = {
    **dict.fromkeys(("CorpusError", "read_text_file", "load_tinyshakespeare", "split_train_val"), "corpus"),
    **dict.fromkeys(("TrainConfig", "TrainResult", "TrainingDiverged"), "train_config"),
    "train_lm": "training",
    **dict.fromkeys(("load_checkpoint", "CheckpointError", "CheckpointMismatchError"), "checkpoint"),
    **dict.fromkeys(("LogitsProcessor", "RepetitionPenalty", "NoRepeatNGram", "SuppressTokens", "Temperature",
                     "TopK", "TopP", "MinP", "build_processors", "apply_processors", "sample_next",
                     "NoTokenLeftError"), "sampling"),
    **dict.fromkeys(("generate", "StopOnStrings"), "generation"),
    **dict.fromkeys(("score_text", "TextScore"), "scoring"),
    **dict.fromkeys(("export_hf", "load_hf", "ExportError"), "export"),
    **dict.fromkeys(("distinct_n", "repetition_rate"), "metrics"),
}

__all__ = ["Tokenizer", "CharTokenizer", "WordTokenizer", "BPETokenizer", "load_tokenizer", "TokenizerFormatError",
           "UnknownTokenError", *_LAZY]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
