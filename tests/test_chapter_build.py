"""`seqlab chapter build` before any page runs: its options, its progress lines, the kernels' quiet log, and the
pages shipped as package data. (The build itself is tests/test_book.py.)"""
import io
import json
import logging
from pathlib import Path, PurePosixPath

import pytest
from conftest import MYST_NOTEBOOK_HEADER, patient
from hypothesis import given
from hypothesis import strategies as st

from seqlab.book import build
from seqlab.book.progress import Progress, clock
from seqlab.cli import build_parser, main


def one_error_line(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("seqlab: error: "), err
    return err[0]


@pytest.mark.parametrize("pages", [",", "", " , ", " "])
def test_pages_naming_no_page_is_a_usage_error(capsys, tmp_path, pages):
    line = one_error_line(capsys, ["chapter", "build", "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "c"),
                                   "--pages", pages])
    assert "names no page" in line
    assert not (tmp_path / "site").exists() and not (tmp_path / "c").exists()


@pytest.mark.parametrize("pages,words", [("attention,,text", "empty name"), ("attention,attention", "more than once"),
                                         ("index", "unknown page 'index'"), ("Attention", "unknown page")])
def test_bad_page_lists(pages, words):
    with pytest.raises(build.BookError, match=words) as e:
        build.check_pages(pages)
    assert isinstance(e.value, ValueError)


def test_page_lists_that_are_fine():
    every = build.available_pages()
    assert build.check_pages(None) == every
    assert build.check_pages(" text , attention") == ["text", "attention"]  # the order given is kept
    assert build.check_pages(",".join(every)) == every


@pytest.mark.parametrize("out,words", [("", "needs a folder name"), ("  ", "needs a folder name"),
                                       ("/proc/seqlab-site", "cannot write in /proc")])
def test_out_that_cannot_be_written(capsys, tmp_path, out, words):
    line = one_error_line(capsys, ["chapter", "build", "--out", out, "--cache", str(tmp_path / "c"), "--pages",
                                   "attention"])
    assert words in line


def test_out_under_a_file_and_cache_inside_the_site(capsys, tmp_path):
    f = tmp_path / "file"
    f.write_text("keep")
    line = one_error_line(capsys, ["chapter", "build", "--out", str(f / "site"), "--cache", str(tmp_path / "c")])
    assert f"{f} exists and is not a directory" in line and f.read_text() == "keep"
    site = tmp_path / "site"
    line = one_error_line(capsys, ["chapter", "build", "--out", str(site), "--cache", str(site / "cache")])
    assert "is inside --out" in line and not site.exists()


def test_one_default_output_folder():
    import argparse

    cli = build_parser().parse_args(["chapter", "build"])
    module = argparse.ArgumentParser()
    build.add_arguments(module)
    direct = module.parse_args([])
    assert cli.out == direct.out == str(build.DEFAULT_OUT) and not build.DEFAULT_OUT.is_absolute()
    assert cli.pages is direct.pages is None and cli.cache is direct.cache is None


def test_default_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("SEQLAB_CACHE_DIR", str(tmp_path / "mine"))
    assert build.default_cache() == tmp_path / "mine"
    monkeypatch.delenv("SEQLAB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert build.default_cache() == tmp_path / "xdg" / "seqlab"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert build.default_cache() == Path.home() / ".cache" / "seqlab"


def test_progress_lines_and_time_left(tmp_path, monkeypatch):
    now = [100.0]
    monkeypatch.setattr("seqlab.book.progress.time.perf_counter", lambda: now[0])
    stream, record = io.StringIO(), tmp_path / "seconds.json"
    estimates = {"a": 10.0, "b": 30.0}
    p = Progress(estimates, record, stream)
    p.begin(["a", "b", "c", "index"], {"a": "```{code-cell}", "b": "", "c": "```{code-cell}", "index": "# text"})
    assert p.estimates["index"] == 0.0 and "c" not in p.estimates  # no cell: no time; c: unknown
    p.start("a")
    now[0] += 12.0
    p.finish("a")
    # b as estimated, c as the mean estimated page with cells, the index nothing
    assert p.time_left() == pytest.approx(estimates["b"] + (estimates["a"] + estimates["b"]) / 2)
    assert stream.getvalue() == f"[1/4] a ... 12.0 s (elapsed 12 s, about {clock(p.time_left())} left)\n"
    for doc in ("b", "c", "index"):
        p.start(doc)
        now[0] += 1.0
        p.finish(doc)
    assert p.time_left() is None and stream.getvalue().splitlines()[-1] == "[4/4] index ... 1.0 s (elapsed 15 s)"

    assert json.loads(record.read_text()) == {"a": 12.0, "b": 1.0, "c": 1.0, "index": 1.0}


def test_progress_without_estimates_uses_the_mean_so_far():
    p = Progress(stream=io.StringIO())
    p.begin(["a", "b", "c"])
    p.done["a"] = 20.0
    assert p.time_left() == 40.0


def test_clock():
    assert [clock(s) for s in (0.4, 42, 59.6, 125, 3600)] == ["0 s", "42 s", "1 min 00 s", "2 min 05 s",
                                                                "60 min 00 s"]


def test_kernel_config_drops_only_the_transport_warning():
    logger = logging.getLogger("IPKernelApp")
    before = list(logger.filters)
    try:
        exec(build._KERNEL_CONFIG, {})
        (quiet,) = [f for f in logger.filters if f not in before]
        record = lambda msg: logging.LogRecord("IPKernelApp", logging.WARNING, __file__, 1, msg, None, None)
        assert not quiet.filter(record("Kernel is running over TCP without encryption. All communication ..."))
        assert quiet.filter(record("Kernel died"))
    finally:
        logger.filters[:] = before


def test_every_page_file_is_package_data():
    """pyproject's globs for seqlab.book cover every file of the pages' folder, so a wheel builds the chapter."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.10 has no tomllib")  # stdlib from 3.11
    config = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["seqlab.book"]
    scratch = {"__pycache__", "_build", ".ipynb_checkpoints"}  # what running Sphinx or Jupyter by hand leaves
    files = [f for f in build.PAGES.rglob("*") if f.is_file() and not scratch & set(f.parts)]
    assert {"index.md", "conf.py"} <= {f.name for f in files}
    for f in files:
        rel = PurePosixPath(f.relative_to(build.PAGES.parent).as_posix())
        assert any(rel.match(g) and len(rel.parts) == len(PurePosixPath(g).parts) for g in globs), rel


def test_the_build_reads_its_pages_from_the_package():
    assert build.PAGES.is_relative_to(Path(build.__file__).parent) and (build.PAGES / "conf.py").is_file()
    assert build.available_pages() == sorted(f.stem for f in build.PAGES.glob("*.md") if f.stem != "index")


def test_progress_in_a_lane_writes_whole_lines_for_pages_with_cells(tmp_path, monkeypatch):
    now = [0.0]
    monkeypatch.setattr("seqlab.book.progress.time.perf_counter", lambda: now[0])
    stream, record = io.StringIO(), tmp_path / "lane1-seconds.json"
    p = Progress({}, record, stream, lane="1")
    p.begin(["a", "index"], {"a": "```{code-cell}", "index": "# text"})
    for doc, secs in (("a", 61.0), ("index", 0.5)):
        p.start(doc)
        assert stream.getvalue() == ("" if doc == "a" else "  lane 1: a 61.0 s (elapsed 1 min 01 s)\n")
        now[0] += secs
        p.finish(doc)
    assert stream.getvalue() == "  lane 1: a 61.0 s (elapsed 1 min 01 s)\n"  # the index has no cells: no line
    assert json.loads(record.read_text()) == {"a": 61.0, "index": 0.5}


def test_plan_lanes_deals_the_longest_page_first_to_the_least_loaded_lane():
    from seqlab.book.lanes import plan_lanes

    estimates = {"recurrence": 79.0, "text": 61.0, "forecasting": 55.0, "attention": 35.0, "transformer": 35.0,
                 "summary": 11.0}
    # by hand: 79 | 61; forecasting to the lighter lane (61 -> 116); attention to 79 (-> 114); transformer to 114
    # (-> 149); summary to 116 (-> 127)
    assert plan_lanes(list(estimates), estimates, 2) == [["recurrence", "attention", "transformer"],
                                                         ["text", "forecasting", "summary"]]
    assert plan_lanes(["a", "b", "c"], {}, 2) == [["a", "c"], ["b"]]  # no estimates: equal costs, by name
    assert plan_lanes(["a"], {}, 2) == [["a"]] and plan_lanes([], {}, 2) == []
    assert plan_lanes(["a", "b"], {"a": 5.0}, 1) == [["a", "b"]]
    with pytest.raises(ValueError, match="lanes must be >= 1"):
        plan_lanes(["a"], {}, 0)
    from seqlab.book.lanes import lane_pages

    assert lane_pages(["attention", "summary", "text"]) == ["attention", "text"]  # the summary quotes the others


@given(st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0, 500)), st.integers(1, 4))
def test_plan_lanes_runs_every_page_once(estimates, lanes):
    from seqlab.book.lanes import plan_lanes

    pages = sorted(set("abcdef") | set(estimates))
    plan = plan_lanes(pages, estimates, lanes)
    assert sorted(p for lane in plan for p in lane) == pages and 1 <= len(plan) <= lanes and all(plan)


def test_merge_lane_times_keeps_older_pages_and_drops_the_index(tmp_path):
    from seqlab.book.lanes import merge_lane_times

    record = tmp_path / "page-seconds.json"
    record.write_text(json.dumps({"a": 1.0, "b": 2.0}))
    (tmp_path / "lane1-seconds.json").write_text(json.dumps({"a": 10.0, "index": 0.1}))
    (tmp_path / "lane2-seconds.json").write_text("{not json")
    merge_lane_times(tmp_path, record)
    assert json.loads(record.read_text()) == {"a": 10.0, "b": 2.0}


_TINY_PAGE = MYST_NOTEBOOK_HEADER + """# {name}

```{{code-cell}} ipython3
{code}
```
"""


def _tiny_book(tmp_path, monkeypatch, codes: dict[str, str]) -> Path:
    """A two-page book with the chapter's conf.py, built with seqlab's build (no MathJax download: a stand-in)."""
    import shutil

    pages = tmp_path / "pages"
    shutil.copytree(build.PAGES / "_static", pages / "_static")
    shutil.copy(build.PAGES / "conf.py", pages / "conf.py")
    (pages / "index.md").write_text("# Tiny\n\n```{toctree}\n" + "\n".join(codes) + "\n```\n")
    for name, code in codes.items():
        (pages / f"{name}.md").write_text(_TINY_PAGE.format(name=name, code=code))
    (tmp_path / "cache" / "vendor" / "mathjax").mkdir(parents=True)
    (tmp_path / "cache" / "vendor" / "mathjax" / "tex-chtml.js").write_text("// stand-in")
    monkeypatch.setattr(build, "PAGES", pages)
    monkeypatch.setattr(build, "verify_all_artifacts", lambda: None)
    monkeypatch.setattr(build.lanes, "lane_count", lambda: 2)
    monkeypatch.delenv("SEQLAB_RESULTS", raising=False)
    return pages


def test_pages_run_in_two_lanes_once_each_then_build_from_the_cache(tmp_path, monkeypatch, capfd):
    from jupyter_cache import get_cache

    _tiny_book(tmp_path, monkeypatch, {"one": "print(1 + 1)", "two": "print('two')"})
    assert build.build(tmp_path / "site", None, tmp_path / "cache") == 0
    err = capfd.readouterr().err
    assert "executing 2 page(s) in 2 lanes: one | two" in err
    assert sorted(line.split(":")[1].split()[0] for line in err.splitlines() if line.startswith("  lane ")) == \
        ["one", "two"]
    assert [line.split("]")[0] for line in err.splitlines() if line.startswith("[")] == ["[1/3", "[2/3", "[3/3"]
    (jc,) = (tmp_path / "cache").glob("jupyter-heavy*")
    records = {Path(r.uri).stem: r.pk for r in get_cache(jc).list_cache_records()}
    assert sorted(records) == ["one", "two"]
    (cell,) = get_cache(jc).get_cache_bundle(records["one"]).nb.cells
    assert cell.outputs[0]["text"] == "2\n"
    assert not (tmp_path / "cache" / "lanes").exists()
    import nbformat

    executed = build._stage((tmp_path / "cache").resolve(), (tmp_path / "site").resolve()).parent / "jupyter_execute"
    for name in ("one", "two"):  # as the lane's kernel ran it, not as the cache gives it back
        (cell,) = [c for c in nbformat.read(executed / f"{name}.ipynb", as_version=4).cells if c.cell_type == "code"]
        assert cell.execution_count == 1, name
    # warm: nothing left to execute, no lanes
    assert build.build(tmp_path / "site", None, tmp_path / "cache") == 0
    assert "executing" not in capfd.readouterr().err


def test_a_failing_page_in_a_lane_fails_the_build(tmp_path, monkeypatch, capfd):
    _tiny_book(tmp_path, monkeypatch, {"good": "x = 1", "bad": "raise ValueError('a broken cell')"})
    assert build.build(tmp_path / "site", None, tmp_path / "cache") == 1
    err = capfd.readouterr().err
    assert "a broken cell" in err and "seqlab: error: chapter build failed" in err
    assert not (tmp_path / "site" / "index.html").exists()


def test_cache_writes_take_turns(tmp_path):
    """The lanes share one execution cache: with seqlab.book.cache_lock installed, a write waits for the folder's
    write lock, so two lanes never interleave jupyter-cache's record, file and trimming steps."""
    import threading
    import time

    import nbformat
    from filelock import FileLock
    from jupyter_cache import get_cache
    from jupyter_cache.cache.main import CacheBundleIn

    from seqlab.book import cache_lock

    cache_lock.install()
    cache_lock.install()  # idempotent: one lock, not two nested
    cache = get_cache(tmp_path / "cache")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1", execution_count=1)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    done = []
    with FileLock(str(tmp_path / "cache" / "seqlab-write.lock")):
        t = threading.Thread(target=lambda: done.append(cache.cache_notebook_bundle(
            CacheBundleIn(nb, uri=str(tmp_path / "one.ipynb")), check_validity=False)))
        t.start()
        time.sleep(0.5)
        assert t.is_alive() and not cache.list_cache_records()  # waiting for the lock, nothing written
    t.join(timeout=patient(30))
    assert done and len(cache.list_cache_records()) == 1
