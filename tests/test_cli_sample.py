"""``seqlab lm sample``: the new decoding options, several samples, stop strings, prompt files, and the usage errors."""
import pytest
from conftest import tiny_checkpoint
import torch

from seqlab.cli import main
from seqlab.cli._common import MAX_SEED
from seqlab.cli._sample import stop_string
from seqlab.text.checkpoint import load_checkpoint
from seqlab.text.generation import generate
from seqlab.text.sampling import SuppressTokens, build_processors
from seqlab.text.tokenizers import UNK

TINY = ["--max-iters", "20", "--block-size", "16", "--batch-size", "4", "--eval-interval", "10", "--d-model", "16",
        "--num-layers", "1", "--num-heads", "2", "--warmup", "2"]


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    return tiny_checkpoint(tmp_path_factory.mktemp("sample"), 6000, TINY)


def sample(capsys, ckpt, *options):
    code = main(["lm", "sample", "--checkpoint", str(ckpt), *options])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out, out.err


def usage_error(capsys, ckpt, *options) -> str:
    code = main(["lm", "sample", "--checkpoint", str(ckpt), *options])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("seqlab: error: "), err
    return lines[0]


def library(ckpt, prompt, new, seed=0, greedy=False, **settings):
    """What the library generates for these settings: the CLI must print exactly this text."""
    model, tok, _ = load_checkpoint(ckpt)
    procs = [SuppressTokens([tok.token_to_id[UNK]]), *build_processors(**settings)]
    idx = torch.tensor([tok.encode(prompt)])
    out = generate(model, idx, new, procs, greedy=greedy, generator=torch.Generator().manual_seed(seed))
    return tok.decode(out[0, idx.size(1):].tolist()), out[0].tolist()


def test_existing_options_print_what_the_library_generates(capsys, ckpt):
    out, _ = sample(capsys, ckpt, "--prompt", "ROMEO:", "--max-new-tokens", "40", "--seed", "3", "--top-k", "10",
                    "--temperature", "0.8")
    text, _ = library(ckpt, "ROMEO:", 40, seed=3, temperature=0.8, top_k=10)
    assert out == "ROMEO:" + text + "\n"


@pytest.mark.parametrize("options,settings", [
    (["--repetition-penalty", "1.8"], dict(repetition_penalty=1.8)),
    (["--no-repeat-ngram-size", "3", "--top-p", "0.9"], dict(no_repeat_ngram_size=3, top_p=0.9)),
    (["--repetition-penalty", "1.3", "--no-repeat-ngram-size", "2", "--min-p", "0.05", "--temperature", "1.2"],
     dict(repetition_penalty=1.3, no_repeat_ngram_size=2, min_p=0.05, temperature=1.2)),
])
def test_history_options_print_what_the_library_generates(capsys, ckpt, options, settings):
    out, _ = sample(capsys, ckpt, "--prompt", "KING:", "--max-new-tokens", "60", "--seed", "7", *options)
    text, _ = library(ckpt, "KING:", 60, seed=7, **settings)
    assert out == "KING:" + text + "\n"


def test_greedy_with_no_repeat_ngram_never_repeats_a_trigram(capsys, ckpt):
    out, _ = sample(capsys, ckpt, "--prompt", "ROMEO:", "--max-new-tokens", "50", "--greedy",
                    "--no-repeat-ngram-size", "3")
    text, ids = library(ckpt, "ROMEO:", 50, greedy=True, no_repeat_ngram_size=3)
    assert out == "ROMEO:" + text + "\n"
    trigrams = list(zip(ids, ids[1:], ids[2:]))
    assert len(trigrams) == len(set(trigrams)) == len(ids) - 2
    plain, _ = sample(capsys, ckpt, "--prompt", "ROMEO:", "--max-new-tokens", "50", "--greedy")
    plain_text, plain_ids = library(ckpt, "ROMEO:", 50, greedy=True)
    assert plain == "ROMEO:" + plain_text + "\n"
    # a barely trained model loops under greedy decoding; the ban is what removes the repeats
    assert len(set(zip(plain_ids, plain_ids[1:], plain_ids[2:]))) < len(plain_ids) - 2


def test_num_samples_are_the_single_runs_with_seed_plus_i(capsys, ckpt):
    base = ["--prompt", "ROMEO:", "--max-new-tokens", "20", "--top-p", "0.95"]
    out, _ = sample(capsys, ckpt, *base, "--num-samples", "3", "--seed", "5")
    singles = [sample(capsys, ckpt, *base, "--seed", str(5 + i))[0] for i in range(3)]
    expected = "\n".join(f"=== sample {i + 1} of 3 (seed {5 + i}) ===\n{singles[i]}" for i in range(3))
    assert out == expected
    assert len(set(singles)) == 3  # different seeds, different samples
    again, _ = sample(capsys, ckpt, *base, "--num-samples", "3", "--seed", "5")
    assert again == out


@pytest.mark.parametrize("extra", [[], ["--stop", "e"], ["--repetition-penalty", "1.3", "--top-k", "20"],
                                   ["--greedy", "--no-repeat-ngram-size", "2"]])
def test_samples_generated_together_are_the_samples_generated_alone(capsys, ckpt, extra):
    base = ["--prompt", "ROMEO:", "--max-new-tokens", "40", "--num-samples", "5", "--seed", "11", *extra]
    alone, _ = sample(capsys, ckpt, *base)
    for batch in ("5", "2", "8"):  # all at once, in batches of 2, 2 and 1, and a batch larger than needed
        together, _ = sample(capsys, ckpt, *base, "--batch-size", batch, "--threads", "2")
        assert together == alone, batch
    assert alone.count("=== sample ") == 5


def test_one_generator_per_row_draws_as_each_row_alone():
    from seqlab.errors import InvalidParameterError
    from seqlab.text.sampling import sample_next

    scores = torch.randn(3, 50, generator=torch.Generator().manual_seed(0))
    rows = sample_next(scores, generator=[torch.Generator().manual_seed(s) for s in (7, 8, 9)])
    alone = [sample_next(scores[i:i + 1], generator=torch.Generator().manual_seed(7 + i)) for i in range(3)]
    assert torch.equal(rows, torch.cat(alone)) and rows.shape == (3, 1)
    with pytest.raises(InvalidParameterError, match="2 generators for 3 rows"):
        sample_next(scores, generator=[torch.Generator(), torch.Generator()])


def test_stop_string_trims_the_output(capsys, ckpt):
    base = ["--prompt", "ROMEO:", "--max-new-tokens", "80", "--seed", "2"]
    full, _ = sample(capsys, ckpt, *base)
    generated = full[len("ROMEO:"):-1]
    stop = generated[30:32]  # a stop string the model does generate
    cut = generated.index(stop)
    out, _ = sample(capsys, ckpt, *base, "--stop", stop)
    assert out == "ROMEO:" + generated[:cut] + "\n"
    # several stop strings: the earliest one wins; one that never occurs changes nothing
    other = generated[50:53]
    out, _ = sample(capsys, ckpt, *base, "--stop", other, "--stop", stop)
    assert out == "ROMEO:" + generated[:min(cut, generated.index(other))] + "\n"
    never = "\u2603"  # not in the training text: the model cannot produce it
    out, err = sample(capsys, ckpt, *base, "--stop", never)
    assert out == full and "--stop" in err and "never be generated" in err


def test_stop_ends_generation_early_for_every_sample(capsys, ckpt):
    base = ["--prompt", "ROMEO:", "--max-new-tokens", "80", "--num-samples", "2"]
    full, _ = sample(capsys, ckpt, *base)
    out, _ = sample(capsys, ckpt, *base, "--stop", "e")
    bodies = [part.split("===\n", 1)[1] for part in out.split("\n=== ")]
    assert len(bodies) == 2 and all("e" not in b[len("ROMEO:"):] for b in bodies)
    assert len(out) < len(full)


def test_stop_string_escapes():
    assert stop_string(r"\n\n") == "\n\n" and stop_string(r"a\tb") == "a\tb"
    assert stop_string(r"a\\n") == "a\\n" and stop_string(r"\q") == "\\q" and stop_string("x") == "x"


def test_prompt_file_is_the_same_as_the_prompt(capsys, ckpt, tmp_path):
    f = tmp_path / "prompt.txt"
    f.write_text("JULIET:\nO Romeo", encoding="utf-8")
    a, _ = sample(capsys, ckpt, "--prompt-file", str(f), "--max-new-tokens", "25", "--seed", "4")
    b, _ = sample(capsys, ckpt, "--prompt", "JULIET:\nO Romeo", "--max-new-tokens", "25", "--seed", "4")
    assert a == b and a.startswith("JULIET:\nO Romeo")


@pytest.mark.parametrize("content,word", [(None, "no such file"), (b"\x00\x01binary", "binary"),
                                          (b"\xff\xfe bad", "UTF-8"), (b"", "empty")])
def test_bad_prompt_files(capsys, ckpt, tmp_path, content, word):
    f = tmp_path / "prompt.txt"
    if content is not None:
        f.write_bytes(content)
    assert word in usage_error(capsys, ckpt, "--prompt-file", str(f))


def test_unknown_prompt_characters_are_named(capsys, ckpt):
    out, err = sample(capsys, ckpt, "--prompt", "ROMEO \u2603\u00e9\u2603", "--max-new-tokens", "5")
    assert out.startswith("ROMEO \u2603\u00e9\u2603")
    warning = [line for line in err.splitlines() if "prompt" in line]
    assert len(warning) == 1 and warning[0].startswith("seqlab: warning: ")
    assert "'\u2603'" in warning[0] and "'\u00e9'" in warning[0] and "'R'" not in warning[0]
    _, quiet = sample(capsys, ckpt, "--prompt", "ROMEO", "--max-new-tokens", "5")
    assert "warning" not in quiet


@pytest.mark.parametrize("option", [["--temperature", "0.7"], ["--top-k", "5"], ["--top-p", "0.9"],
                                    ["--min-p", "0.1"], ["--temperature", "1"]])
def test_greedy_with_a_sampling_option_is_a_usage_error(capsys, ckpt, option):
    line = usage_error(capsys, ckpt, "--greedy", *option)
    assert "--greedy" in line and option[0] in line


def test_greedy_with_history_options_is_fine(capsys, ckpt):
    out, _ = sample(capsys, ckpt, "--greedy", "--repetition-penalty", "1.5", "--prompt", "A", "--max-new-tokens", "10")
    assert out == "A" + library(ckpt, "A", 10, greedy=True, repetition_penalty=1.5)[0] + "\n"


@pytest.mark.parametrize("options,word", [
    (["--prompt", "x", "--prompt-file", "p.txt"], "--prompt"),
    (["--prompt", "", "--prompt-file", "p.txt"], "--prompt"),
    (["--max-new-tokens", "100001"], "--max-new-tokens"),
    (["--num-samples", "0"], "--num-samples"),
    (["--num-samples", "1001"], "--num-samples"),
    (["--stop", ""], "--stop"),
    (["--repetition-penalty", "0"], "--repetition-penalty"),
    (["--repetition-penalty", "nan"], "--repetition-penalty"),
    (["--repetition-penalty", "-1"], "--repetition-penalty"),
    (["--no-repeat-ngram-size", "-2"], "--no-repeat-ngram-size"),
    (["--no-repeat-ngram-size", "1.5"], "--no-repeat-ngram-size"),
    (["--seed", str(MAX_SEED), "--num-samples", "2"], "--num-samples"),
])
def test_bad_options(capsys, ckpt, options, word):
    assert word in usage_error(capsys, ckpt, *options)


def test_max_new_tokens_bound_itself_is_accepted():
    from seqlab.cli import build_parser

    a = build_parser().parse_args(["lm", "sample", "--checkpoint", "c", "--max-new-tokens", "100000"])
    assert a.max_new_tokens == 100_000 and a.temperature is None and a.prompt is None and a.num_samples == 1


def test_sample_device_option_is_validated_and_cpu_matches_default(capsys, ckpt):
    from seqlab.cli import main

    assert main(["lm", "sample", "--checkpoint", str(ckpt), "--device", "tpu"]) == 2
    assert "--device" in capsys.readouterr().err
    assert sample(capsys, ckpt, "--device", "cpu", "--seed", "3") == sample(capsys, ckpt, "--seed", "3")


def test_a_vanishing_repetition_penalty_is_refused(capsys, ckpt):
    line = usage_error(capsys, ckpt, "--prompt", "ROMEO:", "--repetition-penalty", "1e-300")
    assert "--repetition-penalty" in line and "[0.001, 100]" in line
