"""What a tokenizer accepts: text that is a ``str`` UTF-8 can hold, and integer ids; anything else is one error."""
from __future__ import annotations

import operator

from ..errors import InvalidParameterError

__all__ = ["TokenizerInputTypeError", "UnencodableTextError", "check_encodable", "check_int", "check_text"]


class TokenizerInputTypeError(InvalidParameterError, TypeError):
    """Text that is not a ``str``, or token ids that are not integers."""


def check_int(name: str, value) -> int:
    if isinstance(value, bool):
        raise TokenizerInputTypeError(f"{name} must be an int, got a bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TokenizerInputTypeError(f"{name} must be an int, got {type(value).__name__}") from None


class UnencodableTextError(InvalidParameterError, UnicodeError):
    """Text with a character UTF-8 cannot hold (a lone surrogate): no file could store or load it."""


def check_encodable(text: str, what: str = "text") -> str:
    """``text`` itself, if every character has a UTF-8 form; else one error naming the first that has none."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise UnencodableTextError(f"{what} is not valid Unicode: character {e.start:,} is a lone surrogate "
                                   f"U+{ord(text[e.start]):04X}, which UTF-8 cannot encode") from None
    return text


def check_text(text) -> str:
    if not isinstance(text, str):
        raise TokenizerInputTypeError(f"text must be a str, got {type(text).__name__}")
    return check_encodable(text)
