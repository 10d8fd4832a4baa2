"""Derived seeds stay valid torch seeds for every base seed the CLI accepts (up to 2**62)."""
import json
from dataclasses import replace

import pytest
import torch

from seqlab.cli import main
from seqlab.forecast.nbeats import NBeatsConfig, NBeatsForecaster


@pytest.mark.parametrize("base", [2 ** 61, 2 ** 62])
def test_member_seeds_of_huge_base_seeds_are_valid(base):
    members = NBeatsForecaster((NBeatsConfig(), NBeatsConfig(stack="interpretable")), input_multiples=(2.0, 3.0),
                               seeds=(base, base + 1)).member_configs()
    seeds = [c.seed for c in members]
    assert all(0 <= s < 2 ** 63 for s in seeds) and len(set(seeds)) == len(seeds)
    for s in seeds[:2]:
        torch.manual_seed(s)  # raised "Overflow when unpacking long long" before


def test_member_seeds_of_ordinary_base_seeds_are_unchanged():
    members = NBeatsForecaster((NBeatsConfig(), NBeatsConfig()), input_multiples=(2.0, 3.0, 4.0)).member_configs()
    assert [c.seed for c in members] == [1000, 1001, 1002, 1100, 1101, 1102]


def test_section_14_61_runs_with_the_largest_seed(monkeypatch, capsys, tmp_path):
    from seqlab.chapter import s14_61

    monkeypatch.setattr(s14_61, "GRU_STEPS", 2)
    monkeypatch.setattr(s14_61, "NBEATS", replace(s14_61.NBEATS, max_steps=2, width=16, batch_size=8))
    code = main(["run", "14.61", "--seed", str(2 ** 62), "--no-figures", "--json", "--out", str(tmp_path)])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert json.loads(out.out)["section"] == "14.61"
