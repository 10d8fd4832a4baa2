"""Inputs for the attention page's claims, §14.50–§14.52 (s14_50, s14_50_2, s14_51, s14_52)."""
from __future__ import annotations


def _cases():
    import numpy as np
    import pandas as pd
    import torch

    from seqlab.chapter.s14_50 import SCALED, UNSCALED

    spread = lambda r: pd.DataFrame(dict(d_k=[8, 512], sd_unscaled=[2.83 * r, 22.6 * r], sqrt_d_k=[2.83, 22.6]))

    def sat(ok):
        rows = []
        for d, mw, ent, g, q in ((8, 0.9, 1.9, 2.0, 4.9), (512, 1.0, 0.1, 0.5, 12.0)):
            if not ok:
                mw, ent, g, q = 1.5 - mw, 2.0 - ent, 2.5 - g, 17.0 - q
            rows.append(dict(d_k=d, scaled=UNSCALED, max_attention_weight=mw, attention_entropy=ent,
                             logit_gradient_norm=g, query_gradient_norm=q, gradient_norm=1e-6))
            rows.append(dict(d_k=d, scaled=SCALED, max_attention_weight=0.3 if ok else 0.9,
                             attention_entropy=3.0 if ok else 1.0, logit_gradient_norm=1.3, query_gradient_norm=1.3,
                             gradient_norm=1e-6))
        return pd.DataFrame(rows)

    probe_bad = sat(True).assign(gradient_norm=1.0)

    def curves(good):
        """Two widths, two seeds, the last step only: unscaled loses (good) or wins at the narrow width."""
        rows = []
        for d, u in ((8, 0.1 if good else 0.01), (128, 1.0 if good else 0.005)):
            for seed in (1, 2):
                rows += [dict(d_k=d, scaled=UNSCALED, seed=seed, step=150, loss=u),
                         dict(d_k=d, scaled=SCALED, seed=seed, step=150, loss=0.02)]
        return pd.DataFrame(rows)
    ridge = lambda lo, hi: pd.DataFrame(dict(d_k=[4, 512], divisor=[2.0, 22.6], entropy=[lo, hi]))
    W_diag = torch.tensor([[1.0, 0, 0], [0.3, 0.7, 0], [0.1, 0.2, 0.7]])
    W_off = torch.tensor([[1.0, 0, 0], [0.7, 0.3, 0], [0.1, 0.2, 0.7]])
    checks = lambda post, fused, above=0.0: pd.DataFrame([dict(max_above_diagonal=above, row_sums_min=1.0,
                                                               row_sums_max=1.0, fused_vs_explicit_max_abs=fused,
                                                               mask_after_softmax_row_sum_min=post)])
    leak = lambda a, b: pd.DataFrame(dict(mask=["causal", "none"], max_change_before=[a, b]))

    params = lambda counts: pd.DataFrame(dict(parameters=counts, formula_4_d_model_sq=[262144] * len(counts)))
    div = lambda m, x: pd.DataFrame([dict(mean_pairwise_correlation=m, max_pairwise_correlation=x)])

    def heads(good):
        summary = pd.DataFrame(dict(n_heads=[1, 2, 4], parameters=[100] * 3,
                                    mean_accuracy_both=[0.17, 1.0, 1.0] if good else [0.6, 0.7, 0.8],
                                    worst_accuracy_both=[0.15, 1.0, 1.0] if good else [0.55, 0.6, 0.7],
                                    best_accuracy_both=[0.18, 1.0, 1.0] if good else [0.65, 0.8, 0.9]))
        split = pd.DataFrame(dict(seed=[1, 2], weight_first_offset=[0.41, 0.48] if good else [0.9, 0.1],
                                  weight_second_offset=[0.47, 0.42] if good else [0.05, 0.8],
                                  accuracy_first_target=[0.2, 0.9] if good else [0.3, 0.6],
                                  accuracy_second_target=[0.9, 0.2] if good else [0.4, 0.7]))
        roles = pd.DataFrame(dict(n_heads=[2, 2, 4, 4, 4, 4], head=[0, 1, 0, 1, 2, 3],
                                  main_offset=[1, 3, 1, 3, 1, 3] if good else [1, 1, 1, 1, 1, 1],
                                  main_weight=[0.999, 0.999, 0.9, 0.9, 0.9, 0.9] if good else [0.6] * 6))
        # two seeds; when good, the second is the first again, when not, the second alone would pass
        second = roles.assign(main_offset=[1, 3, 1, 3, 1, 3], main_weight=[0.999] * 2 + [0.9] * 4)
        roles = pd.concat([roles.assign(seed=1), second.assign(seed=2)], ignore_index=True)
        return summary, split, roles

    def order(good):
        o = pd.DataFrame(dict(max_abs_difference=[6e-8, 0.2] if good else [0.1, 1e-4]))
        rot = pd.DataFrame(dict(offset=[7], max_rotation_error=[3e-6 if good else 1e-2]))
        sim = pd.DataFrame(dict(offset=[0, 1, 2], dot_max=[32.0, 28.0, 20.0],
                                dot_min=[32.0, 28.0, 12.0 if good else 1.0], spread=[1e-5, 1e-5, 1e-5 if good else 1e-2]))
        return o, rot, sim, (1e-6 if good else 1e-2)

    def ablation(good, steady=True):
        """Two seeds per setting; ``steady``: every seed's accuracy falls at each step (else one rises once)."""
        ab = pd.DataFrame(dict(positions=["learned", "learned", "none", "none"], seed=[1, 2, 1, 2], n_heads=[4] * 4,
                               accuracy_first_target=[1.0, 1.0, 0.23, 0.24], accuracy_second_target=[1.0, 1.0, 0.23, 0.22],
                               accuracy_both=[1.0, 0.99, 0.03, 0.04] if good else [0.6, 0.7, 0.55, 0.5]))
        curve = [0.35, 0.3, 0.17] if good else [0.17, 0.3, 0.35]
        bump = [0.35, 0.36, 0.17] if not steady else curve
        by = pd.DataFrame(dict(positions=["none"] * 6, seed=[1] * 3 + [2] * 3, position=[4, 5, 6] * 2,
                               accuracy=curve + bump))
        return ab, by

    return {
        "seqlab.chapter.s14_50.spread_claims": [lambda: ((spread(1.001),), {"n": 4000}),
                                                 lambda: ((spread(1.2),), {"n": 4000})],
        "seqlab.chapter.s14_50.saturation_claims": [lambda: ((sat(True),), {"T": 32}),
                                                     lambda: ((sat(False),), {"T": 32}),
                                                     lambda: ((probe_bad,), {"T": 32})],
        "seqlab.chapter.s14_50.training_claims": [lambda: ((curves(True),), {}), lambda: ((curves(False),), {})],
        "seqlab.chapter.s14_50.temperature_claims": [lambda: ((ridge(2.97, 3.15), np.array([0.02, 3.46])), {"T": 32}),
                                                      lambda: ((ridge(1.0, 3.0), np.array([1.0, 2.0])), {"T": 32})],
        "seqlab.chapter.s14_50_2.mask_claims": [lambda: ((W_diag, checks(0.78, 0.0), leak(0.0, 0.5)), {}),
                                                 lambda: ((W_diag, checks(0.78, 0.0), leak(1e-8, 0.5)), {}),
                                                 lambda: ((W_off, checks(0.999, 1e-3), leak(0.1, 0.5)), {}),
                                                 lambda: ((W_diag, checks(0.78, 0.0, above=0.1), leak(0.0, 0.5)), {})],
        "seqlab.chapter.s14_51.parameter_claims": [lambda: ((params([262144] * 3), div(0.0618, 0.202)), {}),
                                                    lambda: ((params([262144] * 3), div(0.1, 0.3)), {}),
                                                    lambda: ((params([262144, 1]), div(0.0618, 0.202)), {})],
        "seqlab.chapter.s14_51.heads_claims": [
            lambda: (heads(True), {"offsets": (1, 3)}), lambda: (heads(False), {"offsets": (1, 3)}),
            lambda: ((heads(True)[0].assign(parameters=[100, 200, 300]), *heads(True)[1:]), {"offsets": (1, 3)})],
        "seqlab.chapter.s14_52.order_claims": [lambda: (order(True), {}), lambda: (order(False), {})],
        "seqlab.chapter.s14_52.ablation_claims": [lambda: (ablation(True), {}), lambda: (ablation(False), {}),
                                                   lambda: (ablation(True, steady=False), {})],
    }


CASES = _cases()
