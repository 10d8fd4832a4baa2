"""The last raw errors, each now one clear line: astronomically large counts, non-finite weights, lone surrogates,
and neural forecasts that say up front what they will train."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from seqlab.cli import main
from seqlab.forecast.origins import rolling_origin_splits
from seqlab.nn import GPT, GPTConfig
from seqlab.text.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from seqlab.text.tokenizers import (BPETokenizer, CharTokenizer, UnencodableTextError, WordTokenizer,
                                    check_encodable)

HUGE = "100000000000000000000"


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("seqlab: error: "), err
    return err[0]


@pytest.fixture
def short_csv(tmp_path):
    t = np.arange(30)
    path = tmp_path / "short.csv"
    pd.DataFrame({"ds": t + 1, "a": 50 + np.sin(t), "b": 80 + np.cos(t)}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("extra", [["--windows", HUGE], ["--step", HUGE, "--windows", "2"], ["--horizon", HUGE]])
def test_an_astronomical_count_is_one_line_before_any_allocation(short_csv, extra, capsys):
    args = ["forecast", "evaluate", "--csv", str(short_csv), "--horizon", "2", "--models", "Naive", *extra]
    assert main(args) == 2
    line = _one_error_line(capsys)
    assert "too short" in line or "needs at least" in line, line


def test_windows_beyond_every_series_are_said_to_be_empty(short_csv, capsys):
    args = ["forecast", "evaluate", "--csv", str(short_csv), "--horizon", "2", "--models", "Naive",
            "--min-train-length", "5"]
    assert main([*args, "--windows", HUGE]) == 0
    huge = capsys.readouterr()
    assert f"seqlab: note: only the last 12 of the {HUGE} windows have a series with 5 observations to train on; " \
           "the earlier ones are empty" in huge.err
    assert main([*args, "--windows", "12"]) == 0
    twelve = capsys.readouterr()
    assert twelve.out == huge.out and "empty" not in twelve.err


def test_the_split_arithmetic_needs_no_list_of_the_windows():
    with pytest.raises(ValueError, match="too short for 100000000000000000000 windows"):
        rolling_origin_splits(30, 2, 10 ** 20, 1)
    assert rolling_origin_splits(30, 2, 3, 4) == [20, 24, 28]


def _checkpoint_with(tmp_path, value: float):
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=5, block_size=8, d_model=8, num_heads=2, num_layers=1))
    with torch.no_grad():
        model.blocks[0].self_attn.Wq.weight[0, 0] = value  # the checksums are of these very weights
    tok = CharTokenizer().train("abcd")  # four characters and <unk>
    save_checkpoint(tmp_path / "ck", model, tokenizer=tok)
    return tmp_path / "ck"


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused_at_load_naming_the_tensor(tmp_path, value, capsys):
    ck = _checkpoint_with(tmp_path, value)
    with pytest.raises(CheckpointError, match=r"weights are not finite: tensor model\.blocks\.0\.self_attn\.Wq\.weight"):
        load_checkpoint(ck)
    assert main(["lm", "sample", "--checkpoint", str(ck), "--max-new-tokens", "5"]) == 2
    line = _one_error_line(capsys)
    assert "weights are not finite" in line and "processors" not in line


def test_finite_weights_still_load(tmp_path):
    load_checkpoint(_checkpoint_with(tmp_path, 3.0))


TOKENIZERS = [CharTokenizer, WordTokenizer, BPETokenizer]


def _train(cls, text):
    return cls().train(text, 260) if cls is BPETokenizer else cls().train(text)


@pytest.mark.parametrize("cls", TOKENIZERS, ids=lambda c: c.__name__)
def test_a_lone_surrogate_is_refused_by_train_and_encode_naming_its_position(cls, tmp_path):
    with pytest.raises(UnencodableTextError, match=r"character 4 is a lone surrogate U\+D800"):
        _train(cls, "ab c\ud800d")
    tok = _train(cls, "ab cd ab")
    with pytest.raises(UnencodableTextError, match=r"character 1 is a lone surrogate U\+DFFF"):
        tok.encode("a\udfff")
    tok.save(tmp_path / "t.tok")  # what trained can always be saved
    assert isinstance(UnencodableTextError("x"), ValueError)


@pytest.mark.parametrize("cls", TOKENIZERS, ids=lambda c: c.__name__)
def test_nul_characters_round_trip_through_train_save_and_load(cls, tmp_path):
    text = "a\0b c\0\0d a\0b"
    tok = _train(cls, text)
    tok.save(tmp_path / "t.tok")
    again = type(tok).load(tmp_path / "t.tok")
    assert again.encode(text) == tok.encode(text)
    if cls is not WordTokenizer:  # words drop nothing but may split differently; chars and bytes are exact
        assert again.decode(again.encode(text)) == text


def test_check_encodable_passes_valid_text_through():
    assert check_encodable("naïve ☃ \0") == "naïve ☃ \0"


def test_a_prompt_or_stop_string_with_a_lone_surrogate_is_one_line(tmp_path, capsys):
    ck = _checkpoint_with(tmp_path, 0.5)
    assert main(["lm", "sample", "--checkpoint", str(ck), "--prompt", "ab\udcff"]) == 2
    assert "--prompt is not valid Unicode: character 2 is a lone surrogate U+DCFF" in _one_error_line(capsys)
    assert main(["lm", "sample", "--checkpoint", str(ck), "--stop", "\udcff"]) == 2
    assert "not valid Unicode" in _one_error_line(capsys)


def test_n_beats_says_what_it_will_train_and_what_it_masks_before_it_starts(tmp_path, capsys):
    from seqlab.cli._forecast_report import work_notes
    from seqlab.forecast.nbeats import NBeatsForecaster

    t = np.arange(30)
    path = tmp_path / "s.csv"
    pd.DataFrame({"ds": t + 1, "a": 50 + np.sin(t), "b": 80 + np.cos(t)}).to_csv(path, index=False)
    assert main(["forecast", "evaluate", "--csv", str(path), "--horizon", "12", "--models", "N-BEATS",
                 "--max-steps", "2", "--members", "3", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "seqlab: note: N-BEATS trains 3 member(s), 6 steps in all, at each of 1 window(s): 6 steps before the " \
           "first forecast\n" in err
    # the default's input of 2h: 24 points reach past the 18 observations before the origin
    assert "seqlab: note: N-BEATS's input windows reach 24 points; at the first origin 2 of 2 series have fewer " \
           "(the shortest 18): the missing points are masked (left out of the network's input)\n" in err
    # the I+G ensemble of §14.63 pads them instead, and says so
    ig = NBeatsForecaster.ig_ensemble(12, max_steps=2, members=3)
    (_, short), = [work_notes([ig], [18, 18], 8, 1, None, 12)]
    assert short.endswith("the missing points are padded with each series' first value")


def test_the_recurrent_forecasters_say_their_steps_and_that_they_mask_short_histories():
    from seqlab.cli._forecast_report import work_notes as _work_notes

    before = [30 - 10 - (2 - 1) * 5] * 2  # observations before the first of 2 windows 5 apart, horizon 10
    notes = _work_notes(["Naive", "LSTM"], before, h=10, windows=2, levels=[80], season=1)
    assert notes == [
        "LSTM trains for up to 1,500 steps (fewer if its validation loss stops improving) at each of 2 window(s) and "
        "again at each calibration origin's window: 3,000 steps before the first forecast",
        "LSTM's input windows reach 20 points; at the first origin 2 of 2 series have fewer (the shortest 15): the "
        "missing points are zeros the network reads as missing (a second input channel marks each observed point)"]
    assert _work_notes(["Naive", "AutoETS"], before, h=10, windows=2, levels=[], season=1) == []
