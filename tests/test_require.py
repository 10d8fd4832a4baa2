"""conftest.require: a missing optional dependency skips on a user's machine and fails under CI."""
import pytest
from conftest import require


def test_present_module_is_returned(monkeypatch):
    import json

    for ci in ("", "true"):
        monkeypatch.setenv("CI", ci)
        assert require("json") is json


@pytest.mark.parametrize("ci,outcome", [("", pytest.skip.Exception), ("0", pytest.skip.Exception),
                                        ("true", pytest.fail.Exception), ("1", pytest.fail.Exception)])
def test_missing_module_skips_or_fails(monkeypatch, ci, outcome):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="seqlab_no_such_module"):
        require("seqlab_no_such_module")
