"""Reusable PyTorch modules: attention, multi-head attention, positional encodings, Transformer blocks."""
from .attention import AdditiveAttention, causal_mask, dot_attention, padding_mask, scaled_dot_product_attention
from .lstm_lm import LSTMConfig, LSTMLanguageModel, RecurrentState
from .multihead import KVCache, MultiHeadAttention
from .positional import LearnedPositionalEncoding, RotaryEmbedding, SinusoidalPositionalEncoding, sinusoidal_encoding
from .recurrent import set_forget_bias
from .seq2seq import Seq2Seq
from .transformer import GPT, DecoderLayer, EncoderLayer, FeedForward, GPTConfig

__all__ = [
    "AdditiveAttention", "causal_mask", "dot_attention", "padding_mask", "scaled_dot_product_attention",
    "KVCache", "MultiHeadAttention", "LSTMConfig", "LSTMLanguageModel", "RecurrentState",
    "LearnedPositionalEncoding", "RotaryEmbedding", "SinusoidalPositionalEncoding", "sinusoidal_encoding",
    "set_forget_bias", "Seq2Seq", "GPT", "GPTConfig", "DecoderLayer", "EncoderLayer", "FeedForward",
]
