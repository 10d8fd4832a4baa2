"""Text corpora: read a user's file with clear errors, or the tinyshakespeare corpus.

tinyshakespeare ships inside seqlab (gzip, 434 kB) and is checked against its
published sha256 on every load, so nothing downloads at run time. ``download``
fetches the public copy into a cache for users who want it from the source.
"""
from __future__ import annotations

import gzip
import hashlib
import os
import urllib.error
import urllib.request
from importlib import resources
from pathlib import Path

from ..errors import InvalidParameterError, SeqlabError
from ..store import atomic_write

__all__ = ["CorpusError", "read_text_file", "load_tinyshakespeare", "download_tinyshakespeare", "TINY_SHAKESPEARE_SHA256",
           "split_train_val"]

TINY_SHAKESPEARE_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
TINY_SHAKESPEARE_URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"


class CorpusError(SeqlabError, ValueError):
    """A corpus that cannot be used: missing, empty, binary, not UTF-8, or failing its checksum."""


def read_text_file(path) -> str:
    """The UTF-8 text of ``path``; empty, binary or non-UTF-8 files raise :class:`CorpusError`."""
    path = Path(path)
    if path.is_dir():
        raise CorpusError(f"{path}: is a directory, not a text file")
    if not path.is_file():
        raise CorpusError(f"{path}: no such file")
    data = path.read_bytes()
    if not data.strip():
        raise CorpusError(f"{path}: the file is empty")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise CorpusError(f"{path}: looks binary (a NUL byte at offset {nul:,}), not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CorpusError(f"{path}: not valid UTF-8 (byte {e.start})") from None


def _check_sha(data: bytes, where: str) -> None:
    digest = hashlib.sha256(data).hexdigest()
    if digest != TINY_SHAKESPEARE_SHA256:
        raise CorpusError(f"{where}: sha256 {digest[:12]}... does not match tinyshakespeare's {TINY_SHAKESPEARE_SHA256[:12]}...")


def load_tinyshakespeare(path=None) -> str:
    """tinyshakespeare (1,115,394 characters): from ``path`` if given, else the copy shipped with seqlab."""
    if path is not None:
        text = read_text_file(path)
        _check_sha(text.encode("utf-8"), str(path))
        return text
    data = gzip.decompress(resources.files("seqlab.data").joinpath("tinyshakespeare.txt.gz").read_bytes())
    _check_sha(data, "seqlab's packaged tinyshakespeare")
    return data.decode("utf-8")


def download_tinyshakespeare(cache_dir=None, url: str = TINY_SHAKESPEARE_URL, timeout: float = 30) -> Path:
    """Fetch the public copy into ``cache_dir`` (default ``~/.cache/seqlab``), verify its sha256, return the path.

    Offline, or on a checksum mismatch, raises :class:`CorpusError` with what to do instead.
    """
    cache = Path(cache_dir or os.environ.get("SEQLAB_CACHE", Path.home() / ".cache" / "seqlab"))
    target = cache / "tinyshakespeare.txt"
    if target.is_file():
        _check_sha(target.read_bytes(), str(target))
        return target
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            data = r.read()
    except (urllib.error.URLError, OSError) as e:
        raise CorpusError(f"cannot download tinyshakespeare ({e}); you appear to be offline: pass a local file "
                          "with --text PATH, or use the copy shipped with seqlab") from None
    _check_sha(data, url)
    cache.mkdir(parents=True, exist_ok=True)
    return atomic_write(target, data)


def split_train_val(ids, val_fraction: float = 0.1):
    """First (1 - val_fraction) of the token stream for training, the rest for validation (nanoGPT's 90/10)."""
    if not 0.0 < val_fraction < 1.0:
        raise InvalidParameterError(f"val_fraction must lie in (0, 1), got {val_fraction}")
    n = int(len(ids) * (1 - val_fraction))
    return ids[:n], ids[n:]
