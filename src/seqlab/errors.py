"""The exceptions seqlab raises for bad input, all under one base class.

Everything derived from :class:`SeqlabError` describes something the caller can
fix (a bad file, option, parameter or artifact); the CLI reports it as one line
and exit code 2. Any other exception is a bug in seqlab and is reported as one.
Each class also derives from the built-in exception a Python user would expect
(``ValueError`` for bad values, ``KeyError`` for an unknown name), so existing
``except ValueError`` code keeps working.
"""
from __future__ import annotations

__all__ = ["SeqlabError", "InvalidParameterError", "MissingColumnError", "InvalidTypeError", "ShapeError"]


class SeqlabError(Exception):
    """Base class of every error that reports bad input rather than a bug."""


class InvalidParameterError(SeqlabError, ValueError):
    """A parameter outside its valid range (a negative length, a probability above one, ...)."""


class ShapeError(InvalidParameterError):
    """A tensor of the wrong shape (wrong rank, mismatched lengths, a mask that does not broadcast, ...)."""


class MissingColumnError(SeqlabError, KeyError):
    """A table lacks a column the call needs; the message names it."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class InvalidTypeError(SeqlabError, TypeError):
    """An argument of the wrong kind (a list where a table is needed, ...)."""
