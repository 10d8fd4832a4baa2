"""The four sequence-problem shapes of §14.45, each as the smallest working module."""
from __future__ import annotations

import torch
import torch.nn as nn

__all__ = ["OneToMany", "ManyToOne", "AlignedManyToMany", "UnalignedManyToMany"]


class OneToMany(nn.Module):
    """Fixed vector (B, d_in) -> sequence (B, T, d_out): the vector seeds the state, steps unroll."""

    def __init__(self, input_size: int, hidden_size: int, output_size: int, steps: int):
        super().__init__()
        self.steps = steps
        self.init = nn.Linear(input_size, hidden_size)
        self.cell = nn.GRUCell(output_size, hidden_size)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.init(x))  # (B, d)
        y = torch.zeros(x.size(0), self.out.out_features, device=x.device)
        ys = []
        for _ in range(self.steps):
            h = self.cell(y, h)
            y = self.out(h)
            ys.append(y)
        return torch.stack(ys, dim=1)  # (B, T, d_out)


class ManyToOne(nn.Module):
    """Sequence (B, T, d_in) -> fixed vector (B, d_out), read from the final state."""

    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.rnn = nn.GRU(input_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, h = self.rnn(x)  # h: (1, B, d)
        return self.out(h[-1])


class AlignedManyToMany(nn.Module):
    """Sequence (B, T, d_in) -> sequence (B, T, d_out), one output per input step."""

    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.rnn = nn.GRU(input_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.rnn(x)[0])


class UnalignedManyToMany(nn.Module):
    """Sequence (B, T, d_in) -> sequence (B, T', d_out): encode to a vector, decode T' steps."""

    def __init__(self, input_size: int, hidden_size: int, output_size: int, out_steps: int):
        super().__init__()
        self.encoder = ManyToOne(input_size, hidden_size, hidden_size)
        self.decoder = OneToMany(hidden_size, hidden_size, output_size, out_steps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.encoder(x))
