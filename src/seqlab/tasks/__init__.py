"""Synthetic sequence tasks (copy, reversal) and their training loop."""
