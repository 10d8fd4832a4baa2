"""The seqlab a reader installs: a wheel of the running seqlab, offered beside the chapter's pages.

A page names a place a student can get seqlab from. The site carries it: the build writes
``downloads/seqlab-VERSION-py3-none-any.whl``, made from the package that built the pages (its
files, and the metadata pip installed with it: version, dependencies, extras), so the wheel a
reader downloads is the code that computed every number on the page. It works the same from an
editable checkout and from an installed wheel, with no build tools and no network.
"""
from __future__ import annotations

import base64
import hashlib
import zipfile
from importlib import metadata
from pathlib import Path

__all__ = ["wheel_name", "write_wheel", "DOWNLOADS"]

#: the site's folder for files a reader downloads (relative to the site's root)
DOWNLOADS = "downloads"


def wheel_name() -> str:
    """The wheel's file name for the running seqlab (``seqlab-0.1.0-py3-none-any.whl``)."""
    return f"seqlab-{metadata.version('seqlab')}-py3-none-any.whl"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _package_files(root: Path):
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".lock"):
            yield path


def write_wheel(folder: Path) -> Path:
    """Write the running seqlab as a wheel into ``folder`` and return its path (a complete file or none)."""
    import seqlab

    version = metadata.version("seqlab")
    info = f"seqlab-{version}.dist-info"
    root = Path(seqlab.__file__).resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / wheel_name()
    partial = target.with_suffix(".partial")
    records = []
    meta = metadata.distribution("seqlab").read_text("METADATA") or f"Metadata-Version: 2.1\nName: seqlab\n" \
                                                                    f"Version: {version}\n"
    extra = {f"{info}/METADATA": meta.encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: seqlab.book.wheel\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n",
             f"{info}/entry_points.txt": (metadata.distribution("seqlab").read_text("entry_points.txt")
                                          or "").encode()}
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for path in _package_files(root):
            name = "seqlab/" + path.relative_to(root).as_posix()
            data = path.read_bytes()
            z.writestr(name, data)
            records.append(_record_line(name, data))
        for name, data in extra.items():
            z.writestr(name, data)
            records.append(_record_line(name, data))
        z.writestr(f"{info}/RECORD", "\n".join(records + [f"{info}/RECORD,,"]) + "\n")
    partial.replace(target)
    return target
