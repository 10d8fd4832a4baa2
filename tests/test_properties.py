"""Property-based guards on the input boundary: random options, texts and series end in valid output or one
clear error line (exit 2), never a traceback or an internal error."""
import json

import numpy as np
import pandas as pd
import pytest
from conftest import tiny_checkpoint
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from seqlab.cli import main
from seqlab.text.corpus import load_tinyshakespeare

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
TINY = ["--max-iters", "2", "--block-size", "8", "--batch-size", "2", "--eval-interval", "1", "--d-model", "8",
        "--num-layers", "1", "--num-heads", "2", "--warmup", "0"]


def outcome(capsys, argv):
    """Exit code and output; fails on anything but (0, output) or (2, one error line)."""
    code = main(argv)
    out = capsys.readouterr()
    assert code in (0, 2), (argv, code, out.err[-2000:])
    event(f"exit {code}")  # --hypothesis-show-statistics shows how many examples got through
    if code == 2:
        lines = out.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("seqlab: error: "), (argv, out.err)
    return code, out.out, out.err


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return tiny_checkpoint(tmp_path_factory.mktemp("prop"), 3000, TINY)


def _number_text():
    return st.one_of(st.integers(-10 ** 25, 10 ** 25).map(str),
                     st.floats(allow_nan=True, allow_infinity=True).map(repr),
                     st.sampled_from(["", "x", "1e-320", "1e300", "-0", "0x10", " 3", "inf", "-inf", "nan"]))


def _valid_or_not(valid):
    return st.one_of(valid.map(str), valid.map(str), _number_text())


@SETTINGS
@given(temperature=_valid_or_not(st.floats(1e-6, 5.0)), top_k=st.one_of(st.none(), _valid_or_not(st.integers(1, 80))),
       top_p=st.one_of(st.none(), _valid_or_not(st.floats(0.0, 1.0))),
       min_p=st.one_of(st.none(), _valid_or_not(st.floats(0.0, 1.0))),
       new=st.integers(-3, 30).map(str), seed=_valid_or_not(st.integers(0, 2 ** 40)), prompt=st.text(max_size=12),
       greedy=st.booleans())
def test_sampling_options(capsys, checkpoint, temperature, top_k, top_p, min_p, new, seed, prompt, greedy):
    argv = ["lm", "sample", "--checkpoint", str(checkpoint), "--temperature", temperature, "--max-new-tokens", new,
            "--seed", seed, "--prompt", prompt]
    for name, v in (("--top-k", top_k), ("--top-p", top_p), ("--min-p", min_p)):
        if v is not None:
            argv += [name, v]
    if greedy:
        argv.append("--greedy")
    code, out, _ = outcome(capsys, argv)
    if code == 0:
        assert out.startswith(prompt)


#: values each training option accepts beside TINY (d-model 8, 2 heads of even width, 2 iterations)
VALID_TRAINING = {"--batch-size": st.integers(1, 8), "--block-size": st.integers(2, 32),
                  "--d-model": st.integers(1, 8).map(lambda k: 4 * k), "--num-heads": st.sampled_from([1, 2, 4]),
                  "--num-layers": st.integers(1, 3), "--max-iters": st.integers(1, 5), "--lr": st.floats(1e-5, 0.1),
                  "--muon-lr": st.floats(1e-4, 0.1), "--warmup": st.integers(0, 2), "--eval-interval": st.integers(1, 5),
                  "--seed": st.integers(0, 2 ** 40), "--vocab-size": st.integers(260, 400),
                  "--schedule-seconds": st.floats(0.05, 0.5)}
GPT_ONLY = ("--num-layers", "--num-heads")


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(option=st.sampled_from(sorted(VALID_TRAINING)), model=st.sampled_from(["gpt", "lstm"]),
       tokenizer=st.sampled_from(["char", "bpe"]), valid=st.booleans(), data=st.data())
def test_training_options(capsys, tmp_path_factory, option, model, tokenizer, valid, data):
    """Any value ends in a checkpoint or one error line; a valid value (that applies to the model) trains."""
    value = data.draw(VALID_TRAINING[option].map(str) if valid else _number_text(), label="value")
    d = tmp_path_factory.mktemp("opt")
    text = d / "t.txt"
    text.write_text(load_tinyshakespeare()[:2500], encoding="utf-8")
    drop = {option} | (set(GPT_ONLY) if model == "lstm" else set())
    base = [a for i, a in enumerate(TINY) if a not in drop and (i == 0 or TINY[i - 1] not in drop)]
    if option in ("--batch-size", "--block-size", "--d-model", "--max-iters", "--num-layers"):
        try:  # keep valid values small enough to train in a moment
            if int(value) > 64:
                value = "64"
        except ValueError:
            pass
    code, _, _ = outcome(capsys, ["lm", "train", "--text", str(text), "--out", str(d / "c"), "--model", model,
                                  "--tokenizer", tokenizer, *base, option, value])
    if valid:
        applies = not (model == "lstm" and option in GPT_ONLY) and not (option == "--vocab-size" and tokenizer == "char")
        assert code == (0 if applies else 2), (option, value, model, tokenizer)
        assert (d / "c" / "checkpoint.safetensors").is_file() == applies


@SETTINGS
@given(data=st.one_of(st.binary(max_size=400), st.text(min_size=1, max_size=400).map(lambda s: s.encode("utf-8"))))
def test_text_bytes(capsys, tmp_path_factory, data):
    d = tmp_path_factory.mktemp("bytes")
    f = d / "t.txt"
    f.write_bytes(data * 30)
    code, _, _ = outcome(capsys, ["lm", "train", "--text", str(f), "--out", str(d / "c"), *TINY])
    if code == 0:
        assert (d / "c" / "checkpoint.safetensors").is_file()


_VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64), st.integers(-10 ** 20, 10 ** 20),
                    st.booleans(), st.sampled_from(["", "abc", "1,5", "NA"]))


@st.composite
def frames(draw):
    n_series = draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["int", "int", "MS", "ME", "D", "junk", "mixed"]))
    rows = []
    for s in range(n_series):
        uid = draw(st.sampled_from(["a", "b", "zz", "", " ", "7"])) if draw(st.integers(0, 3)) == 0 else f"s{s}"
        n = draw(st.one_of(st.integers(1, 40), st.integers(30, 40), st.integers(30, 40)))
        if kind == "int":
            start = draw(st.integers(-5, 5))
            step = draw(st.sampled_from([1, 1, 1, 2]))
            ds = [start + step * i for i in range(n)]
        elif kind == "junk":
            ds = draw(st.lists(st.text(max_size=6), min_size=n, max_size=n))
        elif kind == "mixed":
            ds = [str(d.date()) if i % 3 else d.strftime("%m/%d/%Y")
                  for i, d in enumerate(pd.date_range("2001-01-01", periods=n, freq="MS"))]
        else:
            ds = [str(d) for d in pd.date_range("2001-01-01", periods=n, freq=kind)]
        clean = draw(st.integers(0, 3)) > 0
        base = 100 + np.sin(np.arange(n)) * 10
        ys = list(base) if clean else [draw(_VALUES) for _ in range(n)]
        if draw(st.booleans()) and n > 2:  # shuffle rows of this series
            order = draw(st.permutations(list(range(n))))
            ds, ys = [ds[i] for i in order], [ys[i] for i in order]
        rows += [{"unique_id": uid, "ds": a, "y": b} for a, b in zip(ds, ys)]
    return pd.DataFrame(rows)


@SETTINGS
@given(df=frames(), horizon=st.integers(1, 8), season=st.integers(1, 6), windows=st.integers(1, 3),
       models=st.sampled_from(["Naive", "Naive,SeasonalNaive", "Naive2,SeasonalNaive", "RandomWalkWithDrift"]))
def test_random_series(capsys, tmp_path_factory, df, horizon, season, windows, models):
    f = tmp_path_factory.mktemp("csv") / "s.csv"
    df.to_csv(f, index=False)
    code, out, _ = outcome(capsys, ["forecast", "evaluate", "--csv", str(f), "--horizon", str(horizon), "--season",
                                    str(season), "--windows", str(windows), "--models", models])
    if code == 0:
        lines = out.strip().splitlines()
        assert lines[0].split()[:2] == ["model", "mase"]
        assert {ln.split()[0] for ln in lines[1:]} == set(models.split(","))


@SETTINGS
@given(section=st.one_of(st.sampled_from(["14.45", "14.46", "14.50.2", "14.52", "14.99", "", "all.", "14.46.1x"]),
                         st.text(max_size=8)),
       seed=st.one_of(st.none(), _number_text()))
def test_run_options(capsys, section, seed):
    argv = ["run", section, "--json", "--no-figures"] + (["--seed", seed] if seed is not None else [])
    code, out, _ = outcome(capsys, argv)
    if code == 0:
        assert json.loads(out)["section"] == section
