"""The ``{claim}`` role: a hand-worked example of each rule, and every wording written in a page
rendered for both outcomes with the numbers of tests/claim_cases/."""
from __future__ import annotations

import importlib
import json
import pkgutil
import re

import pytest
from claim_cases import CASES
from conftest import MYST_NOTEBOOK_HEADER, REPO

import seqlab.chapter
from seqlab.book.sentences import (TemplateError, not_borne_out, parse, render,
                                    templates)
from seqlab.claims import SOURCES, ClaimError, verdict

for _m in pkgutil.iter_modules(seqlab.chapter.__path__):
    importlib.import_module(f"seqlab.chapter.{_m.name}")

PAGES = sorted((REPO / "src" / "seqlab" / "book" / "pages").glob("*.md"))


def rec(holds, required=False, **evidence):
    return {"holds": holds, "required": required, "evidence": evidence}


def test_the_wording_that_holds_with_its_numbers():
    t = parse("s_x: the gap is {gap:.2f},\n  below {limit} || the gap of {gap:.2f} is not below {limit}")
    assert (t.name, t.if_false) == ("s_x", "the gap of {gap:.2f} is not below {limit}")
    assert render(t, rec(True, gap=0.04321, limit=1)) == "the gap is 0.04, below 1"
    assert render(t, rec(False, gap=1.5, limit=1)) == "the gap of 1.50 is not below 1"


@pytest.mark.parametrize("wording, evidence, shown", [
    ("{x}", {"x": 0.0123456}, "0.0123"),  # a float: three significant digits
    ("{x}", {"x": 2055}, "2055"),  # an int as written
    ("{x:,}", {"x": 1234567}, "1,234,567"),
    ("{x:.1%}", {"x": 0.6471}, "64.7%"),
    ("{x:.1e}", {"x": 8.94e-08}, "8.9e-8"),  # exponents as the glued numbers show them
    ("{x:size} {y:size}", {"x": 12.34, "y": 12345.6}, "12.3 12,346"),
    ("{names!j}", {"names": ["a", "b", "c"]}, "a, b and c"),
    ("{xs!j:.2f}", {"xs": [1, 2.5]}, "1.00 and 2.50"),
    ("{{x}} {x}", {"x": True}, "{x} True"),
    ("{d[LSTM]:.2f}", {"d": {"LSTM": 0.5}}, "0.50"),
    ("{up?rose|fell} by {x:.1f}", {"up": False, "x": 2.25}, "fell by 2.2"),  # a choice by a boolean
    ("a{more? and {more!j}|}.", {"more": ["b", "c"]}, "a and b and c."),  # by a list, quoting it
    ("a{more? and {more!j}|}.", {"more": []}, "a."),
    ("{k} {k?member|members}", {"k": 1}, "1 member"),
    ("{rows*{model} ({c:.0%})}", {"rows": [{"model": "ETS", "c": 0.8}, {"model": "Theta", "c": 0.9}]},
     "ETS (80%) and Theta (90%)"),
    ("{rows*{model}}", {"rows": []}, "none"),
    ("{a?{b?x|y}|z}", {"a": True, "b": False}, "y"),  # choices nest
    ("{{{a?x|y}}}", {"a": True}, "{x}"),
])
def test_each_formatting_rule(wording, evidence, shown):
    assert render(parse(f"n: {wording} || other"), rec(True, **evidence)) == shown


@pytest.mark.parametrize("text, match", [
    ("no name here", "name: wording"),
    ("n: a || b || c", "one wording, or two"),
    ("n: a ||  ", "one wording, or two"),
    ("n: same || same", "same wording"),
])
def test_a_role_that_cannot_be_read(text, match):
    with pytest.raises(TemplateError, match=match):
        parse(text)


@pytest.mark.parametrize("wording, evidence, match", [
    ("{x?a|b|c}", {"x": True}, "flag\\?if true\\|if false"),
    ("{x?a|b}", {"x": 0.5}, "by a boolean or a list"),
    ("{x*{m}}", {"x": [1, 2]}, "list of records"),
    ("{x?a|b", {"x": True}, "not closed"),
    ("a } b", {}, "closing brace"),
])
def test_a_choice_or_list_that_cannot_be_filled(wording, evidence, match):
    with pytest.raises(TemplateError, match=match):
        render(parse(f"n: {wording} || other"), rec(True, **evidence))


def test_a_choice_may_hold_the_outcome_separator_only_outside():
    t = parse("n: {x?a|b} || {x?c|d}")
    assert (t.if_true, t.if_false) == ("{x?a|b}", "{x?c|d}")


def test_a_wording_that_cannot_be_filled():
    with pytest.raises(TemplateError, match="quotes 'gap', which is not in its evidence \\(limit\\)"):
        render(parse("n: {gap} || no {gap}"), rec(True, limit=1))
    with pytest.raises(TemplateError, match="needs !j"):
        render(parse("n: {xs} || none"), rec(True, xs=[1, 2]))
    with pytest.raises(TemplateError, match="is required"):
        render(parse("n: a || b"), rec(True, required=True))
    assert render(parse("n: stated once, {x}"), rec(True, required=True, x=3)) == "stated once, 3"


def test_a_lesson_claim_states_what_holds_and_is_marked_where_a_run_does_not_bear_it_out():
    lesson = parse("n: the gated cells reach {ratio:.2f}x further")
    assert render(lesson, rec(True, ratio=2.345)) == "the gated cells reach 2.35x further"
    marked = render(lesson, rec(False, ratio=0.91, seeds=3, names=["a"]))
    assert marked == ("[not borne out in this run: the gated cells reach 0.91x further "
                      "(evidence: ratio = 0.91; seeds = 3)]")
    assert not_borne_out(lesson, rec(False, ratio=0.91))
    assert not not_borne_out(lesson, rec(True, ratio=2.0))
    assert not not_borne_out(parse("n: a || b"), rec(False))


def test_a_verdict_carries_no_sentence():
    v = verdict("s_x", 2 > 1, gap=0.5)
    assert (v.holds, v.evidence, v.required) == (True, {"gap": 0.5}, False)
    with pytest.raises(ValueError, match="non-empty name"):
        verdict("", True)


def _written() -> dict[str, tuple[str, object]]:
    """``name -> (page, template)`` of every ``{claim}`` role in the pages; a name written twice (a verdict the
    summary repeats) must read the same both times."""
    out = {}
    for page in PAGES:
        for t in templates(page.read_text(encoding="utf-8")):
            assert t.name not in out or out[t.name][1] == t, (
                f"{t.name!r} is written one way in {out[t.name][0]} and another in {page.name}")
            out[t.name] = (page.name, t)
    return out


WRITTEN = _written()


def _records(source):
    for make in CASES[source]:
        args, kwargs = make()
        try:
            claims = SOURCES[source](*args, **kwargs)
        except ClaimError:
            continue
        for c in claims:
            yield c.name, {"holds": c.holds, "required": c.required, "evidence": c.evidence}


@pytest.mark.parametrize("source", sorted(CASES))
def test_every_wording_in_the_pages_renders_for_each_outcome(source):
    """Each verdict a source makes has its wordings in a page, and each of them renders with the numbers given."""
    seen: dict[str, set] = {}
    for name, record in _records(source):
        if name in WRITTEN:
            text = render(WRITTEN[name][1], record)
            assert text and not re.search(r"\{\w", text), f"{name!r} rendered {text!r}"
            seen.setdefault(name, set()).add(record["holds"])
        else:
            assert record["required"], (
                f"{source}: verdict {name!r} has no wording in any page (write a {{claim}} role for it)")
    one_sided = sorted(n for n, s in seen.items() if s != {True, False} and WRITTEN[n][1].if_false is not None)
    assert not one_sided, f"{source}: wordings rendered for one outcome only: {one_sided}"


def test_every_wording_in_the_pages_belongs_to_a_claim_source():
    made = {name for source in CASES for name, _ in _records(source)}
    orphans = sorted(set(WRITTEN) - made)
    assert not orphans, f"pages write wordings for claims no source makes: {orphans}"


def _report(text="the gated cells reach further", holds=True, gap=0.5, number="0.123"):
    return {"claims": [{"page": "recurrence", "name": "s47_reach", "holds": holds, "required": False,
                        "text": text, "evidence": {"gap": gap}}],
            "glued": {"recurrence": {"g07_decay": number}}}


def test_compare_finds_each_kind_of_difference(tmp_path, capsys):
    from seqlab.book.compare import compare, main

    same, counts = compare(_report(), _report(text="the gated  cells\nreach further"))
    assert same == [] and counts == {"claims": 1, "numbers": 1}
    diffs, _ = compare(_report(), _report(holds=False, gap=0.6, number="0.124", text="they do not"))
    assert len(diffs) == 4 and any("holds was True, is False" in d for d in diffs)
    assert compare(_report(gap=1.0), _report(gap=1.0 + 1e-12), rel=1e-9)[0] == []
    # the old way glued the sentence under the claim's name; it is compared with the claim's sentence
    old = _report()
    old["glued"]["recurrence"]["s47_reach"] = "the gated cells reach further"
    assert compare(old, _report())[0] == []
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_report()))
    b.write_text(json.dumps(_report(number="9")))
    assert main([str(a), str(b)]) == 1
    assert "1 difference(s)" in capsys.readouterr().out
    assert main([str(a), str(tmp_path / "missing.json")]) == 2


_MINI_PAGE = MYST_NOTEBOOK_HEADER + """# A page

```{{code-cell}} ipython3
from seqlab.book.page import say
from seqlab.claims import verdict
say(verdict("mini_fast", {holds}, gap=0.25))
```

It learns {{claim}}`mini_fast: faster, by {{gap:.2f}} nats`.

:::{{admonition}} How we know
:class: dropdown evidence
One seed.
:::
"""


@pytest.mark.parametrize("holds", [True, False])
def test_a_false_lesson_claim_fails_the_build_and_a_true_one_reads_plainly(holds, tmp_path):
    """The build that a reader and CI run (warnings are errors) stops on a lesson claim its numbers do not bear out;
    the evidence box is a folded box of class ``evidence``."""
    import subprocess
    import sys

    from conftest import patient
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["myst_nb", "seqlab.book.sentences", "seqlab.book.folds"]\n'
                                 'myst_enable_extensions = ["colon_fence"]\nnb_execution_mode = "force"\n'
                                 'nb_execution_in_temp = True\n')
    (src / "index.md").write_text(_MINI_PAGE.format(holds=holds))
    p = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(src), str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=patient(300))
    if holds:
        assert p.returncode == 0, p.stderr
        page = (tmp_path / "out" / "index.html").read_text()
        assert '<span class="claim">faster, by 0.25 nats</span>' in page
        assert "not borne out" not in page  # the evidence box is folded, its title what a reader clicks
        assert ('<details class="admonition dropdown evidence">\n<summary class="admonition-title">How we know'
                '</summary>\n<p>One seed.</p>\n</details>') in page
    else:
        assert p.returncode != 0
        assert "lesson claim 'mini_fast' is false in this run: [not borne out in this run: faster, by 0.25" in p.stderr
