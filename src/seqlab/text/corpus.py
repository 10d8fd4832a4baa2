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
from ..files import atomic_write

__all__ = ["CorpusError", "read_text_file", "load_tinyshakespeare", "download_tinyshakespeare", "TINY_SHAKESPEARE_SHA256",
           "split_train_val"]

TINY_SHAKESPEARE_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
TINY_SHAKESPEARE_URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"


class CorpusError(SeqlabError, ValueError):
    """A corpus that cannot be used: missing, empty, binary, not UTF-8, or failing its checksum.

    Example:
        >>> read_text_file("no-such-file.txt")
        Traceback (most recent call last):
        ...
        seqlab.text.corpus.CorpusError: no-such-file.txt: no such file
    """


#: how much of a file is checked (NUL bytes, UTF-8) before the rest is read
_PROBE_BYTES = 2 ** 20


def read_text_file(path, *, max_bytes: int | None = None) -> str:
    """The UTF-8 text of ``path``; empty, binary, non-UTF-8 or (with ``max_bytes``) too large files raise :class:`CorpusError`.

    The size and the first MiB are checked before the whole file is read, so a wrong file
    (a binary, a multi-gigabyte dump) is refused without loading it.

    Args:
        path: the file.
        max_bytes: the largest file accepted (default: no limit).

    Returns:
        The file's text.

    Raises:
        CorpusError: a missing, unreadable, empty, binary, non-UTF-8 or too large file, or not a regular file.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "input.txt")
        >>> _ = open(path, "w", encoding="utf-8").write("To be, or not to be")
        >>> read_text_file(path)
        'To be, or not to be'
    """
    import codecs
    import stat

    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise CorpusError(f"{path}: no such file") from None
    except OSError as e:
        raise CorpusError(f"{path}: cannot be read ({e.strerror or e})") from None
    if stat.S_ISDIR(st.st_mode):
        raise CorpusError(f"{path}: is a directory, not a text file")
    if not stat.S_ISREG(st.st_mode):
        raise CorpusError(f"{path}: not a regular file (a device, pipe or socket); give a text file")
    if max_bytes is not None and st.st_size > max_bytes:
        raise CorpusError(f"{path}: {st.st_size / 2 ** 20:,.0f} MiB is more text than fits in memory once tokenized "
                          f"(at most {max_bytes / 2 ** 20:,.0f} MiB here); use a part of it")
    try:
        with open(path, "rb") as f:
            head = f.read(_PROBE_BYTES)
            _check_bytes(head, path, final=len(head) < _PROBE_BYTES)
            data = head + f.read()
    except PermissionError:
        raise CorpusError(f"{path}: cannot be read (permission denied)") from None
    if not data:
        raise CorpusError(f"{path}: the file is empty")
    if not data.strip():
        raise CorpusError(f"{path}: the file holds only whitespace ({len(data):,} bytes), no text")
    _check_bytes(data, path, final=True)
    return codecs.decode(data, "utf-8")


def _check_bytes(data: bytes, path: Path, *, final: bool) -> None:
    import codecs

    nul = data.find(b"\x00")
    if nul >= 0:
        raise CorpusError(f"{path}: looks binary (a NUL byte at offset {nul:,}), not text")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=final)
    except UnicodeDecodeError as e:
        raise CorpusError(f"{path}: not valid UTF-8 (byte {e.start})") from None


def _check_sha(data: bytes, where: str) -> None:
    digest = hashlib.sha256(data).hexdigest()
    if digest != TINY_SHAKESPEARE_SHA256:
        raise CorpusError(f"{where}: sha256 {digest[:12]}... does not match tinyshakespeare's {TINY_SHAKESPEARE_SHA256[:12]}...")


def load_tinyshakespeare(path=None) -> str:
    """tinyshakespeare (1,115,394 characters): from ``path`` if given, else the copy shipped with seqlab.

    Args:
        path: a copy of the file to read instead (checked against the same sha256).

    Returns:
        The text.

    Raises:
        CorpusError: a copy whose sha256 is not tinyshakespeare's, or a file :func:`read_text_file` refuses.

    Example:
        >>> text = load_tinyshakespeare()
        >>> len(text), text[:14]
        (1115394, 'First Citizen:')
    """
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
    """First (1 - val_fraction) of the token stream for training, the rest for validation (nanoGPT's 90/10).

    Args:
        ids: the token ids (a list, array or 1-D tensor).
        val_fraction: the share held out, in (0, 1).

    Returns:
        ``(train, val)``, two slices of ``ids``.

    Raises:
        InvalidParameterError: ``val_fraction`` outside (0, 1).

    Example:
        >>> split_train_val(list(range(10)))
        ([0, 1, 2, 3, 4, 5, 6, 7, 8], [9])
    """
    if not 0.0 < val_fraction < 1.0:
        raise InvalidParameterError(f"val_fraction must lie in (0, 1), got {val_fraction}")
    n = int(len(ids) * (1 - val_fraction))
    return ids[:n], ids[n:]
