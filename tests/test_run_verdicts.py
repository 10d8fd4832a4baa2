"""What `seqlab run` hands on besides its tables: the verdicts of the claim sources, and where the numbers come from."""
import re

import pandas as pd
import pytest

from seqlab.chapter import base
from seqlab.chapter._util import provenance
from seqlab.claims import ClaimError, require, reporting, verdict


def test_a_false_required_claim_raises_unless_reported():
    with pytest.raises(ClaimError, match="s99_premise"):
        require("s99_premise", False, gap=2.0)
    with reporting():
        c = require("s99_premise", False, gap=2.0)
    assert (c.name, c.holds, c.required, c.evidence) == ("s99_premise", False, True, {"gap": 2.0})
    with pytest.raises(ClaimError):  # the block ends: raising again
        require("s99_premise", False)


def test_a_run_at_other_seeds_reports_a_false_premise(monkeypatch):
    """At the chapter's seeds a false required claim stops the run; with --seed it is one of the verdicts."""

    def run(ctx):
        holds = ctx.seed(45) == 45  # the premise holds at the chapter's seed only
        return {"t": pd.DataFrame({"x": [1]})}, [], [provenance("forecast"), require("s99_premise", holds, seed=ctx.seed(45)),
                                                     verdict("s99_reading", True)]

    monkeypatch.setitem(base._SECTIONS, "14.45", base._Entry("14.45", "a section", __name__, run))
    res = base.run_section("14.45", figures=False)
    assert [c["name"] for c in res.claims] == ["s99_premise", "s99_reading"] and res.claims[0]["holds"]
    assert res.notes == [provenance("forecast")]
    res = base.run_section("14.45", figures=False, seed=7)
    assert res.claims[0] == {"name": "s99_premise", "holds": False, "required": True, "evidence": {"seed": 7}}
    assert list(res.tables) == ["t"]

    def broken(ctx):
        return {}, [], [require("s99_premise", False)]

    monkeypatch.setitem(base._SECTIONS, "14.45", base._Entry("14.45", "a section", __name__, broken))
    with pytest.raises(ClaimError):
        base.run_section("14.45", figures=False)


def test_provenance_names_the_sets_and_the_mode(monkeypatch):
    monkeypatch.delenv("HEAVY_EVAL", raising=False)
    assert provenance("forecast") == "Results loaded from verified artifacts (artifact set 'forecast', every file's " \
                                     "sha256 checked)."
    assert provenance(["lm", "lm_sweep", "timing_lm_steps"], "trained now (HEAVY_EVAL=1)") == (
        "Results trained now (HEAVY_EVAL=1) (artifact sets 'lm', 'lm_sweep' and 'timing_lm_steps', every file's "
        "sha256 checked).")
    monkeypatch.setenv("HEAVY_EVAL", "1")
    assert re.match(r"Results measured now \(HEAVY_EVAL=1\) \(artifact set 'x',", provenance("x", heavy="measured now"))
