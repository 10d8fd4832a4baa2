"""Reusable PyTorch modules: attention, multi-head attention, positional encodings, Transformer blocks."""
from .attention import AdditiveAttention, causal_mask, dot_attention, padding_mask, scaled_dot_product_attention
from .lstm_lm import LSTMConfig, LSTMLanguageModel, RecurrentState
from .multihead import KVCache, MultiHeadAttention
from .positional import LearnedPositionalEncoding, RotaryEmbedding, SinusoidalPositionalEncoding, sinusoidal_encoding
from .recurrent import gru_cell, lstm_cell, set_forget_bias, unroll
from .seq2seq import Seq2Seq
from .seq2seq_transformer import Seq2SeqTransformer, shift_right, source_mask
from .transformer import GPT, DecoderLayer, EncoderLayer, FeedForward, GPTConfig, config_record

__all__ = [
    "AdditiveAttention", "causal_mask", "dot_attention", "padding_mask", "scaled_dot_product_attention",
    "KVCache", "MultiHeadAttention", "LSTMConfig", "LSTMLanguageModel", "RecurrentState",
    "LearnedPositionalEncoding", "RotaryEmbedding", "SinusoidalPositionalEncoding", "sinusoidal_encoding",
    "set_forget_bias", "lstm_cell", "gru_cell", "unroll", "Seq2Seq", "Seq2SeqTransformer", "shift_right",
    "source_mask", "GPT", "GPTConfig", "config_record", "DecoderLayer", "EncoderLayer", "FeedForward",
]
