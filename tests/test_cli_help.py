"""``--help`` is the CLI's reference: every option says what it does, and its default in one form."""
from __future__ import annotations

import argparse
import re

import pytest

from seqlab.cli import build_parser, main


def _options(parser, path=("seqlab",)):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, child in a.choices.items():
                yield from _options(child, (*path, name))
        elif a.option_strings and a.dest != "help" and "--version" not in a.option_strings:
            yield " ".join(path), a


def test_every_option_has_help_and_writes_its_default_one_way():
    missing, other_form, silent = [], [], []
    for command, a in _options(build_parser()):
        text, flag = a.help or "", f"{command} {a.option_strings[-1]}"
        if not text.strip():
            missing.append(flag)
        if re.search(r"default", text, re.I) and not re.search(r"\(default: [^)]+\)", text):
            other_form.append(flag)
        # an option that takes a value says its default, or when it is needed ("(required without --model)")
        if a.nargs is None and not a.required and "(default: " not in text and "(required" not in text:
            silent.append(flag)
    assert not missing and not other_form and not silent, (missing, other_form, silent)


def test_a_default_of_zero_is_shown():
    text = {a.option_strings[-1]: a.help for command, a in _options(build_parser()) if command == "seqlab lm train"}
    assert text["--dropout"].endswith("(default: %(default)s)")


@pytest.mark.parametrize("command", [["lm", "eval"], ["lm", "sample", "--max-new-tokens", "1"]])
def test_more_threads_than_cores_is_said(tmp_path, capsys, monkeypatch, command):
    from conftest import tiny_checkpoint

    from seqlab.cli import _common

    ckpt = tiny_checkpoint(tmp_path, 5_000, ["--max-iters", "1", "--batch-size", "2", "--block-size", "8",
                                             "--d-model", "8", "--num-layers", "1", "--num-heads", "1"])
    capsys.readouterr()
    monkeypatch.setattr(_common, "available_cores", lambda: 2)
    assert main([*command, "--checkpoint", str(ckpt), "--threads", "3"]) == 0
    assert "seqlab: note: --threads 3 is more than the 2 core(s) this process can use" in capsys.readouterr().err
