"""Synthetic sequence tasks with a known answer: recall by offset (one attention layer) and copy and reversal
(encoder-decoders), each with its training loop and its scores."""
from .offsets import (IGNORE, OffsetAttention, OffsetFit, accuracy_by_position, attention_by_offset, fit_offset_model,
                      offset_accuracy, offset_task)
from .seq2seq import Seq2SeqFit, after_first_error, fit_seq2seq, random_tokens, token_accuracy

__all__ = ["offset_task", "OffsetAttention", "OffsetFit", "fit_offset_model", "offset_accuracy",
           "accuracy_by_position", "attention_by_offset", "IGNORE", "random_tokens", "fit_seq2seq", "Seq2SeqFit",
           "token_accuracy", "after_first_error"]
