"""The bottom layer: the HEAVY_EVAL switch and the verified artifact store.

An artifact set is a folder under ``seqlab/artifacts/NAME`` with its files and a
``manifest.json``: the configuration that produced them, the seqlab version, and
each file's size and sha256. Loading checks all three; a missing, changed or
stale file raises :class:`ArtifactError` that says how to regenerate it
(``HEAVY_EVAL=1``). Nothing is read with pickle: CSV, JSON and safetensors only.

Its files are written whole through :func:`seqlab.files.atomic_write`.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from . import __version__
from .errors import InvalidParameterError, SeqlabError
from .files import atomic_write, remove_orphans, sha256_file

__all__ = ["ArtifactError", "heavy_eval", "artifact_dir", "artifact_sets", "write_artifacts", "verify_artifacts",
           "read_artifact_csv", "read_artifact_json", "ROOT"]

ROOT = Path(__file__).resolve().parent / "artifacts"
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"", "0", "false", "no", "off"}


class ArtifactError(SeqlabError, RuntimeError):
    """An artifact that is missing, altered, or produced by a different configuration."""


def heavy_eval() -> bool:
    """The HEAVY_EVAL gate: true when the environment variable says 1/true/yes/on (default off)."""
    v = os.environ.get("HEAVY_EVAL", "").strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise InvalidParameterError(f"HEAVY_EVAL must be 1/0 (or true/false), got {os.environ['HEAVY_EVAL']!r}")


def artifact_dir(name: str, root: Path | None = None) -> Path:
    return (Path(root) if root is not None else ROOT) / name


def artifact_sets(root: Path | None = None) -> list[str]:
    """Names of the artifact sets present under ``root`` (default: the package's own)."""
    base = Path(root) if root is not None else ROOT
    return sorted(p.parent.name for p in base.glob("*/manifest.json"))


def write_artifacts(name: str, files: dict[str, bytes], config: dict, root: Path | None = None) -> Path:
    """Write ``files`` (name -> bytes) and then their manifest, each atomically."""
    d = artifact_dir(name, root)
    d.mkdir(parents=True, exist_ok=True)
    remove_orphans(d)
    entries = {}
    for fname, data in files.items():
        atomic_write(d / fname, data)
        entries[fname] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    manifest = {"name": name, "seqlab_version": __version__, "config": config, "files": entries}
    atomic_write(d / "manifest.json", json.dumps(manifest, indent=1, sort_keys=True))
    return d


def _manifest_files(manifest, mpath: Path, hint: str) -> dict[str, tuple[int, str]]:
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not files:
        raise ArtifactError(f"{mpath} is corrupt: 'files' must map file names to their size and sha256; {hint}")
    out = {}
    for fname, entry in files.items():
        ok = isinstance(entry, dict) and isinstance(entry.get("bytes"), int) and isinstance(entry.get("sha256"), str)
        if not ok or "/" in fname or fname.startswith("."):
            raise ArtifactError(f"{mpath} is corrupt: bad entry for {fname!r}; {hint}")
        out[fname] = (entry["bytes"], entry["sha256"])
    return out


def verify_artifacts(name: str, expected_config: dict | None = None, root: Path | None = None,
                     hint: str = "run the section with HEAVY_EVAL=1 to regenerate it") -> dict:
    """Check every file of artifact set ``name`` against its manifest; return the manifest. ``hint`` ends each
    error: how to make the set again."""
    d = artifact_dir(name, root)
    mpath = d / "manifest.json"
    if not mpath.is_file():
        raise ArtifactError(f"artifact set {name!r} is missing ({mpath} not found); {hint}")
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise ArtifactError(f"{mpath} is corrupt (not JSON); {hint}") from None
    for fname, (size, sha) in _manifest_files(manifest, mpath, hint).items():
        p = d / fname
        if not p.is_file():
            raise ArtifactError(f"artifact {name}/{fname} is missing; {hint}")
        if p.stat().st_size != size or sha256_file(p) != sha:
            raise ArtifactError(f"artifact {name}/{fname} does not match its manifest (changed or corrupt); {hint}")
    if expected_config is not None and manifest.get("config") != json.loads(json.dumps(expected_config)):
        raise ArtifactError(f"artifact set {name!r} is stale: it was produced with a different configuration "
                            f"than this seqlab uses; {hint}")
    return manifest


def read_artifact_csv(name: str, fname: str, root: Path | None = None):
    import pandas as pd

    # round_trip: a value written with 17 significant digits reads back as the same float
    return pd.read_csv(artifact_dir(name, root) / fname, float_precision="round_trip")


def read_artifact_json(name: str, fname: str, root: Path | None = None):
    return json.loads((artifact_dir(name, root) / fname).read_text(encoding="utf-8"))
