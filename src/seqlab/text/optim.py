"""Muon: momentum whose update for each weight matrix is replaced by its nearest semi-orthogonal matrix.

For a matrix parameter W with momentum M, Muon steps W <- W - lr * s * orth(M),
where orth(M) = U V^T from the SVD M = U S V^T (every singular value set to one)
and s = sqrt(max(1, rows / cols)). orth is approximated by a few Newton-Schulz
iterations, which need only matrix products. Orthogonalising spreads the step
over all directions of the matrix instead of the few that dominate the raw
gradient, which on small language models reaches a given loss in fewer steps
than AdamW. Embeddings, the output head and vectors (norm gains, biases) are
not hidden-layer matrices and stay with AdamW (see :func:`split_muon_params`).
"""
from __future__ import annotations

import torch

from ..errors import InvalidParameterError

__all__ = ["Muon", "MuonWithAdamW", "embedding_and_head_ids", "newton_schulz", "split_muon_params"]

# Quintic Newton-Schulz coefficients (Jordan et al., 2024): chosen so the iteration pushes
# singular values in (0, 1] towards ~1 fast; it does not converge exactly to 1, which is fine for a step direction.
_NS_COEFFS = (3.4445, -4.7750, 2.0315)


def newton_schulz(g: torch.Tensor, steps: int = 5, eps: float = 1e-7) -> torch.Tensor:
    """Approximate U V^T of ``g = U S V^T`` by ``steps`` quintic Newton-Schulz iterations.

    ``g`` is a matrix (r, c) or a batch of matrices of one shape (..., r, c); each is
    orthogonalised on its own, and a batch costs a few batched products instead of a
    few products per matrix.
    """
    if g.dim() < 2:
        raise InvalidParameterError(f"newton_schulz needs a matrix or a batch of matrices, got shape {tuple(g.shape)}")
    a, b, c = _NS_COEFFS
    shape = g.shape
    x = g.reshape(-1, *shape[-2:])  # (n, r, c)
    # Frobenius norm >= spectral norm, so every singular value is <= 1
    x = x / torch.linalg.matrix_norm(x, keepdim=True).clamp(min=eps)
    tall = x.size(-2) > x.size(-1)
    if tall:
        x = x.mT  # iterate on the smaller Gram matrix
    for _ in range(steps):
        gram = x @ x.mT  # (n, r, r)
        poly = torch.baddbmm(gram, gram, gram, beta=b, alpha=c)  # b G + c G^2, one fused product
        x = torch.baddbmm(x, poly, x, beta=a)  # a X + (b G + c G^2) X
    return (x.mT if tall else x).reshape(shape)


def embedding_and_head_ids(model: torch.nn.Module) -> tuple[set[int], set[int]]:
    """``(embedding ids, head ids)``: the ids of the embeddings' parameters, and of the output head's that are not
    also an embedding's (a head tied to its embedding counts as the embedding).

    The output head is the model's ``lm_head`` or ``head`` module.
    """
    embedding = {id(p) for m in model.modules() if isinstance(m, torch.nn.Embedding) for p in m.parameters()}
    head = set()
    for name in ("lm_head", "head"):
        module = getattr(model, name, None)
        if isinstance(module, torch.nn.Module):
            head |= {id(p) for p in module.parameters()} - embedding
    return embedding, head


def split_muon_params(model: torch.nn.Module) -> tuple[list, list]:
    """``(hidden matrices, everything else)``: embeddings, the output head and vectors go to AdamW.

    The output head is the model's ``lm_head`` or ``head`` module (GPT's is tied to its embedding).
    """
    embedding, head = embedding_and_head_ids(model)
    outside = embedding | head
    seen, hidden, other = set(), [], []
    for p in model.parameters():
        if id(p) in seen or not p.requires_grad:
            continue
        seen.add(id(p))
        (hidden if p.dim() == 2 and id(p) not in outside else other).append(p)
    return hidden, other


class Muon(torch.optim.Optimizer):
    """Muon for matrix parameters: ``torch.optim.Muon``'s update, with Newton-Schulz in float32.

    The update is torch's (Nesterov momentum kept as an exponential average,
    the same quintic coefficients, the ``sqrt(max(1, rows / cols))`` learning-rate
    scale, decoupled weight decay); ``tests/test_optim.py`` checks one step against
    ``torch.optim.Muon``. Torch runs the iteration in bfloat16, which CPUs without
    native bfloat16 emulate: on the chapter's GPT that made a training step about
    5x slower, so by default the iteration runs in the parameters' dtype.
    ``ns_dtype=torch.bfloat16`` runs it in bfloat16 as torch does, for hardware with
    native bfloat16 matmuls (a GPU, or a CPU with AMX), where it is the cheaper one.
    """

    def __init__(self, params, lr: float = 0.02, momentum: float = 0.95, weight_decay: float = 0.0,
                 ns_steps: int = 5, eps: float = 1e-7, *, ns_dtype: torch.dtype | None = None):
        if lr <= 0:
            raise InvalidParameterError(f"lr must be > 0, got {lr}")
        if not 0 <= momentum < 1:
            raise InvalidParameterError(f"momentum must lie in [0, 1), got {momentum}")
        if weight_decay < 0 or ns_steps < 1 or eps <= 0:
            raise InvalidParameterError("need weight_decay >= 0, ns_steps >= 1 and eps > 0")
        if ns_dtype is not None and not (isinstance(ns_dtype, torch.dtype) and ns_dtype.is_floating_point):
            raise InvalidParameterError(f"ns_dtype must be a floating-point torch dtype or None, got {ns_dtype!r}")
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay, ns_steps=ns_steps, eps=eps))
        self.ns_dtype = ns_dtype  # how the step is computed, not what it is: kept out of the groups and the state
        for group in self.param_groups:
            if group["lr"] <= 0:
                raise InvalidParameterError(f"lr must be > 0, got {group['lr']}")
            for p in group["params"]:
                if p.dim() != 2:
                    raise InvalidParameterError(f"Muon updates matrices only; got a parameter of shape "
                                                f"{tuple(p.shape)} (give it to AdamW)")

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, mu, wd = group["lr"], group["momentum"], group["weight_decay"]
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            for p in params:
                if "momentum_buffer" not in self.state[p]:
                    self.state[p]["momentum_buffer"] = torch.zeros_like(p)
            grads = [p.grad for p in params]
            bufs = [self.state[p]["momentum_buffer"] for p in params]
            torch._foreach_lerp_(bufs, grads, 1 - mu)
            looks = torch._foreach_lerp(grads, bufs, mu)  # Nesterov look-ahead
            # matrices of one shape are orthogonalised together, in one batch
            by_shape: dict[tuple, list[int]] = {}
            for i, p in enumerate(params):
                by_shape.setdefault((tuple(p.shape), p.dtype), []).append(i)
            for (shape, dtype), members in by_shape.items():
                batch = torch.stack([looks[i] for i in members])  # (n, r, c)
                if self.ns_dtype is not None:
                    batch = batch.to(self.ns_dtype)
                directions = newton_schulz(batch, group["ns_steps"], group["eps"]).to(dtype)
                scale = max(1.0, shape[0] / shape[1]) ** 0.5
                for i, direction in zip(members, directions):
                    params[i].mul_(1 - lr * wd)
                    params[i].add_(direction, alpha=-lr * scale)
        return loss


class MuonWithAdamW:
    """Muon for the hidden matrices and ``torch.optim.AdamW`` for the rest, stepped as one optimizer.

    ``param_groups`` lists Muon's groups first (each marked ``muon=True``), then
    AdamW's (``muon=False``); ``state_dict`` is one torch-style dict over both, so a
    checkpoint holds a single optimizer state.
    """

    def __init__(self, muon_groups: list[dict], adamw_groups: list[dict], *, ns_dtype: torch.dtype | None = None):
        if not muon_groups or not adamw_groups:
            raise InvalidParameterError("MuonWithAdamW needs at least one Muon group and one AdamW group")
        self.muon = Muon([dict(g, muon=True) for g in muon_groups], ns_dtype=ns_dtype)
        self.adamw = torch.optim.AdamW([dict(g, muon=False) for g in adamw_groups])

    @property
    def param_groups(self) -> list[dict]:
        return self.muon.param_groups + self.adamw.param_groups

    @property
    def state(self):
        return {**self.muon.state, **self.adamw.state}

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.muon.zero_grad(set_to_none)
        self.adamw.zero_grad(set_to_none)

    def step(self, closure=None):
        loss = self.muon.step(closure)
        self.adamw.step()
        return loss

    def state_dict(self) -> dict:
        m, a = self.muon.state_dict(), self.adamw.state_dict()
        offset = sum(len(g["params"]) for g in m["param_groups"])
        groups = m["param_groups"] + [dict(g, params=[i + offset for i in g["params"]]) for g in a["param_groups"]]
        return {"state": {**m["state"], **{i + offset: s for i, s in a["state"].items()}}, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        groups = state_dict["param_groups"]
        flags = [bool(g.get("muon")) for g in groups]
        want = [True] * len(self.muon.param_groups) + [False] * len(self.adamw.param_groups)
        if flags != want:
            raise InvalidParameterError(f"optimizer state has groups {flags} (muon?), this optimizer has {want}")
        n_muon = len(self.muon.param_groups)
        offset = sum(len(g["params"]) for g in groups[:n_muon])
        state = state_dict["state"]
        self.muon.load_state_dict({"state": {i: s for i, s in state.items() if i < offset},
                                   "param_groups": groups[:n_muon]})
        self.adamw.load_state_dict({"state": {i - offset: s for i, s in state.items() if i >= offset},
                                    "param_groups": [dict(g, params=[i - offset for i in g["params"]])
                                                     for g in groups[n_muon:]]})
