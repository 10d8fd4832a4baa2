"""Linear probes: how much of a token a hidden state carries, read by a softmax regression fitted on other sequences."""
from __future__ import annotations

import pandas as pd
import torch
import torch.nn.functional as F

from ..errors import InvalidParameterError

__all__ = ["linear_probe", "lagged_token_probe"]


def linear_probe(train_x: torch.Tensor, train_y: torch.Tensor, test_x: torch.Tensor, test_y: torch.Tensor,
                 classes: int, steps: int = 300, lr: float = 0.05, seed: int = 0) -> float:
    """Held-out accuracy of a softmax regression ``y ~ softmax(W x + b)`` fitted to ``(train_x, train_y)`` by
    full-batch Adam; ``y`` holds class ids ``0..classes-1``. The features are standardised with the training
    mean and spread, so one learning rate serves any scale of state.

    Args:
        train_x: shape (n, d), the features to fit on.
        train_y: shape (n,), their labels.
        test_x: shape (n', d), the held-out features.
        test_y: shape (n',), their labels.
        classes: number of classes, >= 2.
        steps: Adam steps.
        lr: Adam's learning rate.
        seed: seeds the initial weights.

    Returns:
        The held-out accuracy, in [0, 1].

    Raises:
        InvalidParameterError: features of other shapes or widths, missing labels, an empty set, or labels
            outside ``0..classes-1``.

    Example:
        >>> import torch
        >>> x = torch.randn(200, 4, generator=torch.Generator().manual_seed(0))
        >>> y = (x[:, 0] > 0).long()  # the label is written in the first feature
        >>> linear_probe(x[:100], y[:100], x[100:], y[100:], classes=2, steps=30, lr=0.1) > 0.9
        True
    """
    if train_x.dim() != 2 or test_x.dim() != 2 or train_x.size(1) != test_x.size(1):
        raise InvalidParameterError(f"need (n, d) features of one width, got {tuple(train_x.shape)} and "
                                    f"{tuple(test_x.shape)}")
    if len(train_x) != len(train_y) or len(test_x) != len(test_y) or len(train_x) == 0 or len(test_x) == 0:
        raise InvalidParameterError("every probe feature row needs one label, and neither set may be empty")
    if classes < 2 or int(train_y.min()) < 0 or int(max(train_y.max(), test_y.max())) >= classes:
        raise InvalidParameterError(f"labels must lie in 0..{classes - 1} with classes >= 2")
    mean, std = train_x.mean(0), train_x.std(0).clamp_min(1e-6)
    a, b = ((train_x - mean) / std).detach(), ((test_x - mean) / std).detach()
    gen = torch.Generator().manual_seed(seed)
    W = (torch.randn(a.size(1), classes, generator=gen) * 0.01).requires_grad_()
    bias = torch.zeros(classes, requires_grad=True)
    opt = torch.optim.Adam([W, bias], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(a @ W + bias, train_y).backward()
        opt.step()
    with torch.no_grad():
        return (((b @ W + bias).argmax(-1)) == test_y).float().mean().item()


def lagged_token_probe(H_train: torch.Tensor, X_train: torch.Tensor, H_test: torch.Tensor, X_test: torch.Tensor,
                       vocab: int, lags=(0, 1), **probe) -> pd.DataFrame:
    """For each lag L: how well the state at position j + L tells the token at position j (tokens ``1..vocab``),
    by :func:`linear_probe` fitted on the training sequences' states and scored on the held-out ones.
    ``H_*`` are (n, T, d) states and ``X_*`` (n, T) tokens; chance is one in ``vocab``.

    Args:
        H_train: shape (n, T, d), the states of the training sequences.
        X_train: shape (n, T), their tokens, in ``1..vocab``.
        H_test: shape (n', T, d), the held-out states.
        X_test: shape (n', T), their tokens.
        vocab: number of distinct tokens.
        lags: the lags L, each in ``0..T-1``.
        **probe: passed to :func:`linear_probe` (``steps``, ``lr``, ``seed``).

    Returns:
        A ``pandas.DataFrame`` with one row per lag, its columns ``lag``, ``accuracy`` and ``chance``.

    Raises:
        InvalidParameterError: shapes that do not fit, or a lag outside ``0..T-1``.

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> X = torch.randint(1, 4, (40, 6), generator=g)  # tokens 1..3
        >>> H = torch.nn.functional.one_hot(X - 1, 3).float()  # a state that holds its own token only
        >>> table = lagged_token_probe(H[:20], X[:20], H[20:], X[20:], vocab=3, lags=(0, 1), steps=30, lr=0.1)
        >>> table.lag.tolist(), float(table.accuracy.iloc[0])
        ([0, 1], 1.0)
    """
    if H_train.dim() != 3 or X_train.shape != H_train.shape[:2] or X_test.shape != H_test.shape[:2]:
        raise InvalidParameterError("need (n, T, d) states beside their (n, T) tokens")
    T = X_train.size(1)
    rows = []
    for lag in lags:
        if not 0 <= lag < T:
            raise InvalidParameterError(f"lag must lie in 0..{T - 1}, got {lag}")
        j = torch.arange(T - lag)
        feats = [H[:, j + lag].reshape(-1, H.size(-1)) for H in (H_train, H_test)]  # (n (T - L), d)
        labels = [X[:, j].reshape(-1) - 1 for X in (X_train, X_test)]  # (n (T - L),), ids 0..vocab-1
        acc = linear_probe(feats[0], labels[0], feats[1], labels[1], vocab, **probe)
        rows.append(dict(lag=int(lag), accuracy=acc, chance=1 / vocab))
    return pd.DataFrame(rows)
