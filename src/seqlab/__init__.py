"""seqlab: a companion to Chapter 14, Part 3 -- recurrence and attention."""

__version__ = "0.1.0"
