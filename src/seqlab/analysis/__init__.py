"""Measurement tools: gradient by lag, softmax saturation, parameter counts, cost."""
