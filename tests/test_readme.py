"""The README's Python examples run as written (each in a fresh interpreter, in a temporary folder)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import patient

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
#: the README's Python examples and the detailed reference's: each runs as written
BLOCKS = [b for doc in (README, REPO / "docs" / "reference.md")
          for b in re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S)]


def test_readme_has_examples():
    assert len(BLOCKS) >= 6


def test_the_readme_is_short_and_undated():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text), "dated benchmark runs belong in docs/benchmarks.md"


def test_every_path_the_readme_names_exists():
    text = README.read_text(encoding="utf-8")
    named = set(re.findall(r"\]\(([^)#]+)\)", text))  # links
    named |= set(re.findall(r"`((?:docs|src|benchmarks|tests|\.ci)/[^`\s]+)`", text))  # paths in code spans
    assert named and all((REPO / p).exists() for p in named), [p for p in named if not (REPO / p).exists()]


def _commands(text: str) -> list[list[str]]:
    import shlex

    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("seqlab "):
                out.append(shlex.split(line)[1:])
    return out


def test_every_readme_command_uses_options_its_help_lists(capsys):
    from seqlab.cli import main

    commands = _commands(README.read_text(encoding="utf-8"))
    assert len(commands) >= 10
    for argv in commands:
        words = [a for a in argv if not a.startswith("-")]
        sub = words[:2] if words[0] in ("lm", "forecast", "chapter") else words[:1]
        with pytest.raises(SystemExit) as e:
            main([*sub, "--help"])
        assert e.value.code == 0
        helped = capsys.readouterr().out
        for option in (a.split("=")[0] for a in argv if a.startswith("--")):
            assert option in helped, (sub, option)


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_readme_example_runs(tmp_path, i):
    script = tmp_path / f"example_{i}.py"
    script.write_text(BLOCKS[i], encoding="utf-8")
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=patient(300))
    assert p.returncode == 0, p.stderr[-2000:]


def test_the_readme_command_for_the_fast_gpt_recipe_trains_that_recipe(tmp_path, monkeypatch):
    """The command line README gives for FAST_GPT_TRAIN builds exactly its settings and fast_gpt_config's model."""
    import shlex
    from dataclasses import asdict

    import seqlab.text.training as training
    from seqlab.cli import main
    from seqlab.experiments.lm import FAST_GPT_TRAIN, fast_gpt_config
    from seqlab.text.corpus import load_tinyshakespeare
    from seqlab.text.schedule import TRAJECTORY_SETTINGS

    text = README.read_text(encoding="utf-8")
    line = re.search(r"^(seqlab lm train [^\n]*--untied-head[^\n]*\\\n[^\n]*)$", text, flags=re.M).group(1)
    argv = shlex.split(line.replace("\\\n", " "))[1:]
    assert argv[argv.index("--out") + 1] == "ckpt"
    argv[argv.index("--out") + 1] = str(tmp_path / "ckpt")
    from seqlab.cli.lm import STEP_CAP

    seconds = float(argv[argv.index("--schedule-seconds") + 1])  # the run's length is its time; no step count
    assert "--max-iters" not in argv
    corpus = tmp_path / "play.txt"
    corpus.write_text(load_tinyshakespeare()[:20_000], encoding="utf-8")
    seen = {}

    def capture(model, train_ids, val_ids, config, **kw):
        seen.update(model=model, config=config)
        raise KeyboardInterrupt  # stop before any training: the settings are what is checked

    monkeypatch.setattr(training, "train_lm", capture)
    assert main([*argv, "--text", str(corpus)]) == 130
    want = FAST_GPT_TRAIN.with_max_iters(STEP_CAP, schedule_seconds=seconds)
    got = seen["config"]
    keys = (*TRAJECTORY_SETTINGS, "schedule_seconds")
    assert {k: getattr(got, k) for k in keys} == {k: getattr(want, k) for k in keys}
    assert (got.max_iters, got.dtype, got.eval_iters) == (STEP_CAP, want.dtype, want.eval_iters)
    assert asdict(seen["model"].config) == asdict(fast_gpt_config(seen["model"].config.vocab_size))
