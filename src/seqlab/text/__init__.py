"""Text: tokenizers (character, word, byte-level BPE)."""
from .tokenizers import BPETokenizer, CharTokenizer, Tokenizer, TokenizerFormatError, WordTokenizer, load_tokenizer

__all__ = ["BPETokenizer", "CharTokenizer", "Tokenizer", "TokenizerFormatError", "WordTokenizer", "load_tokenizer"]
