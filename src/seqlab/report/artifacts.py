"""Committed results of heavy computations, verified against a manifest before use.

An artifact set is a folder under ``seqlab/artifacts/NAME`` with its files and a
``manifest.json``: the configuration that produced them, the seqlab version, and
each file's size and sha256. Loading checks all three; a missing, changed or
stale file raises :class:`ArtifactError` that says how to regenerate it
(``HEAVY_EVAL=1``). Nothing is read with pickle: CSV, JSON and safetensors only.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from .. import __version__

__all__ = ["ArtifactError", "heavy_eval", "artifact_dir", "write_artifacts", "verify_artifacts", "read_artifact_csv",
           "read_artifact_json"]

ROOT = Path(__file__).resolve().parents[1] / "artifacts"
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"", "0", "false", "no", "off"}


class ArtifactError(RuntimeError):
    """An artifact that is missing, altered, or produced by a different configuration."""


def heavy_eval() -> bool:
    """The HEAVY_EVAL gate: true when the environment variable says 1/true/yes/on (default off)."""
    v = os.environ.get("HEAVY_EVAL", "").strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise ValueError(f"HEAVY_EVAL must be 1/0 (or true/false), got {os.environ['HEAVY_EVAL']!r}")


def artifact_dir(name: str, root: Path | None = None) -> Path:
    return (Path(root) if root is not None else ROOT) / name


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_artifacts(name: str, files: dict[str, bytes], config: dict, root: Path | None = None) -> Path:
    """Write ``files`` (name -> bytes) and their manifest; each file and the manifest land atomically."""
    d = artifact_dir(name, root)
    d.mkdir(parents=True, exist_ok=True)
    entries = {}
    for fname, data in files.items():
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{fname}.")
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; artifacts are shared files
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, d / fname)
        entries[fname] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    manifest = {"name": name, "seqlab_version": __version__, "config": config, "files": entries}
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".manifest.")
    os.chmod(tmp, 0o644)
    with os.fdopen(fd, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    os.replace(tmp, d / "manifest.json")
    return d


def verify_artifacts(name: str, expected_config: dict | None = None, root: Path | None = None) -> dict:
    """Check every file of artifact set ``name`` against its manifest; return the manifest."""
    d = artifact_dir(name, root)
    hint = "run the section with HEAVY_EVAL=1 to regenerate it"
    mpath = d / "manifest.json"
    if not mpath.is_file():
        raise ArtifactError(f"artifact set {name!r} is missing ({mpath} not found); {hint}")
    try:
        manifest = json.loads(mpath.read_text())
        files = manifest["files"]
    except (ValueError, KeyError, TypeError):
        raise ArtifactError(f"{mpath} is corrupt; {hint}") from None
    for fname, entry in files.items():
        p = d / fname
        if not p.is_file():
            raise ArtifactError(f"artifact {name}/{fname} is missing; {hint}")
        if p.stat().st_size != entry["bytes"] or _sha(p) != entry["sha256"]:
            raise ArtifactError(f"artifact {name}/{fname} does not match its manifest (changed or corrupt); {hint}")
    if expected_config is not None and manifest.get("config") != json.loads(json.dumps(expected_config)):
        raise ArtifactError(f"artifact set {name!r} is stale: it was produced with a different configuration "
                            f"than this seqlab uses; {hint}")
    return manifest


def read_artifact_csv(name: str, fname: str, root: Path | None = None):
    import pandas as pd

    return pd.read_csv(artifact_dir(name, root) / fname)


def read_artifact_json(name: str, fname: str, root: Path | None = None):
    return json.loads((artifact_dir(name, root) / fname).read_text(encoding="utf-8"))
