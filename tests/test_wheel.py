"""The seqlab wheel a page offers is the running seqlab, installable by pip with its metadata."""
import base64
import hashlib
import subprocess
import sys
import zipfile

from conftest import patient

from seqlab.book.wheel import wheel_name, write_wheel


def test_the_wheel_holds_the_package_and_a_record_pip_can_verify(tmp_path):
    path = write_wheel(tmp_path / "downloads")
    assert path.name == wheel_name() and not list(tmp_path.glob("downloads/*.partial"))
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        info = wheel_name().split("-py3")[0] + ".dist-info"
        assert {"seqlab/__init__.py", "seqlab/book/pages/text.md", f"{info}/METADATA", f"{info}/RECORD"} <= names
        assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
        metadata = z.read(f"{info}/METADATA").decode()
        assert "Name: seqlab" in metadata and "Requires-Dist: torch" in metadata
        record = dict(line.split(",", 1) for line in z.read(f"{info}/RECORD").decode().splitlines())
        assert set(record) == names
        for name in ("seqlab/__init__.py", f"{info}/METADATA"):  # each line is the file's true sha256 and size
            data = z.read(name)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert record[name] == f"sha256={digest},{len(data)}"


def test_pip_installs_the_wheel_and_it_imports_from_there(tmp_path):
    path = write_wheel(tmp_path)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile", "--target",
                    str(target), str(path)], check=True, capture_output=True, timeout=patient(300))
    p = subprocess.run([sys.executable, "-c", "import seqlab.book.wheel as w; print(w.__file__)"],
                       env={"PYTHONPATH": str(target), "PATH": ""}, capture_output=True, text=True,
                       timeout=patient(120), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().startswith(str(target))
