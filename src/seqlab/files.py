"""Files as a reader finds them: each one whole (:func:`atomic_write`), and a folder's set of outputs whole.

Every file seqlab writes goes through :func:`atomic_write`: a temporary file in the
same folder, moved over the target with ``os.replace``, so a reader sees the old
file or the new one, never half of one.

A command that writes several files into one folder (``forecast evaluate --output``,
``seqlab run --out``) writes them through :class:`OutputSet`: the files are made in a
staging folder inside the target, and only when all of them exist are they moved
into place, with ``seqlab-manifest.json`` rewritten last to record which files the
command wrote, when, with their sizes and sha256. While the files move,
``seqlab-INCOMPLETE.txt`` marks the folder and Ctrl-C waits; an interrupted run
therefore leaves the previous complete set, or (killed during the moves) a folder
that says it is incomplete, never a silent mix of two runs.

Every writer of a folder (an :class:`OutputSet`, a training run's checkpoints) holds
:func:`folder_lock` while it works, so a second writer is refused at once, with one
line naming the holder, instead of the two finishing in a race.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
import signal
import stat
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

from .errors import SeqlabError

__all__ = ["atomic_write", "remove_orphans", "sha256_file", "OutputSet", "OutputFolderError", "FolderInUseError",
           "folder_lock", "read_regular_file", "NotRegularFileError", "MANIFEST", "INCOMPLETE", "FILE_MODE", "LOCK"]

#: every file seqlab writes is readable by all and writable by its owner
FILE_MODE = 0o644
_TMP_SUFFIX = ".seqlab-tmp"
#: the record of an output folder's complete sets, and the mark of one being moved into place
MANIFEST, INCOMPLETE = "seqlab-manifest.json", "seqlab-INCOMPLETE.txt"
_STAGING = ".seqlab-staging-"
#: the writer's lock of a folder, which also records who holds it (pid, then the command)
LOCK = ".lock"
#: the folders this process holds, with how many holders inside it: the lock is re-entrant within a process
_held: dict[Path, list] = {}
_held_guard = threading.Lock()


class OutputFolderError(SeqlabError, OSError):
    """An output folder that cannot take the set of files: a name in it is held by something else."""


class FolderInUseError(SeqlabError, OSError):
    """Another process is writing into the same folder."""


def _holder(folder: Path) -> str:
    try:
        pid, _, command = (folder / LOCK).read_text(encoding="utf-8").strip().partition(" ")
    except (OSError, UnicodeDecodeError):
        return "another process"
    return f"pid {pid}" + (f", `{command}`" if command else "") if pid else "another process"


def _acquire(path: Path):
    """A descriptor holding an exclusive lock on ``path``, or None while another process holds it.

    The holder removes the file as it releases it (a folder keeps no trace of a finished writer), so a
    lock won on a file that was meanwhile removed is no lock: it is checked, and taken again on the new file.
    """
    import fcntl

    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


class _FolderLock:
    """One process's hold on a folder: an flock on ``.lock`` (filelock where there is no fcntl), which names
    the holder and dies with its process."""

    def __init__(self, folder: Path, command: str):
        self.path = folder / LOCK
        try:
            import fcntl  # noqa: F401
        except ImportError:  # Windows: filelock's msvcrt lock, and the file stays
            from filelock import FileLock, Timeout

            self.fd, self.portable = None, FileLock(str(self.path), timeout=0)
            try:
                self.portable.acquire()
            except Timeout:
                raise FolderInUseError(f"{folder} is in use by another writer; wait for it to finish or choose "
                                       "another folder") from None
            return
        self.portable, self.fd = None, _acquire(self.path)
        if self.fd is None:
            raise FolderInUseError(f"{folder} is in use by another writer ({_holder(folder)}); wait for it to "
                                   "finish or choose another folder")
        os.ftruncate(self.fd, 0)
        os.write(self.fd, f"{os.getpid()} {' '.join(command.split())}\n".encode("utf-8", "replace"))

    def release(self) -> None:
        if self.portable is not None:
            self.portable.release()
            return
        try:
            self.path.unlink()  # before the lock is let go: see _acquire
        except OSError:
            pass
        os.close(self.fd)


@contextmanager
def folder_lock(folder, command: str):
    """Hold ``folder``'s writer lock while the block runs; a writer in another process is refused at once.

    The lock is an OS lock on ``folder/.lock``, which holds the writer's pid and command (quoted by
    :class:`FolderInUseError`) and is removed when the writer finishes; a killed writer's lock dies with
    its process. Within one process the lock is re-entrant (a command that writes a set into the folder
    it trains in holds it once).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    key = folder.resolve()
    with _held_guard:
        if key in _held:
            _held[key][1] += 1
        else:
            _held[key] = [_FolderLock(folder, command), 1]
    try:
        yield
    finally:
        with _held_guard:
            _held[key][1] -= 1
            if _held[key][1] == 0:
                _held.pop(key)[0].release()


def atomic_write(path, data: bytes | str | Callable[[str], None], mode: int = FILE_MODE) -> Path:
    """Write ``data`` (bytes, text, or a function that writes a given path) to ``path`` atomically.

    The temporary file lives beside the target (``.NAME.XXXX.seqlab-tmp``) and is
    removed if writing fails; a process killed mid-write leaves it behind, and
    :func:`remove_orphans` clears such leftovers.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=_TMP_SUFFIX)
    try:
        if callable(data):
            os.close(fd)
            data(tmp)
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, mode)  # mkstemp creates 0600
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def remove_orphans(directory, older_than_s: float = 0.0) -> list[Path]:
    """Delete temporary files that killed writers left in ``directory``; returns what was removed.

    Call it only where no other writer can be active (for example under a run's lock).
    """
    removed = []
    now = time.time()
    for p in Path(directory).glob(f".*{_TMP_SUFFIX}"):
        try:
            if now - p.stat().st_mtime >= older_than_s:
                p.unlink()
                removed.append(p)
        except FileNotFoundError:
            pass
    return removed


class NotRegularFileError(SeqlabError, OSError):
    """A path that names a folder, a pipe, a socket or a device where a regular file is read."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "folder"), (stat.S_ISFIFO, "named pipe"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "special file"


def read_regular_file(path) -> bytes:
    """The bytes of ``path``, which must be a regular file: it is opened without blocking and checked before a
    byte is read, so a FIFO or a device cannot hang the reader or stream forever. Raises FileNotFoundError,
    :class:`NotRegularFileError` (naming what the path is), or the OSError of the read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(f"{path}: a {_kind(mode)}, not a regular file")
        chunks = []
        while block := os.read(fd, 1 << 20):
            chunks.append(block)
        return b"".join(chunks)
    finally:
        os.close(fd)


def sha256_file(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


class _SignalsHeld:
    """Ctrl-C and SIGTERM wait while the block runs, and are raised again once it ends.

    Python runs its signal handlers in the main thread whichever thread the signal
    reached, so the handlers themselves are swapped for one that only notes the
    signal (a thread's signal mask would not do: another thread may take it).
    Outside the main thread nothing can be held, and nothing is.
    """

    def __enter__(self):
        self.held, self.noted = threading.current_thread() is threading.main_thread(), []
        if self.held:
            self.previous = {sig: signal.signal(sig, self._note) for sig in (signal.SIGINT, signal.SIGTERM)}
        return self

    def _note(self, signum, frame):
        self.noted.append(signum)

    def __exit__(self, *exc):
        if self.held:
            for sig, handler in self.previous.items():
                signal.signal(sig, handler)
            if self.noted:
                signal.raise_signal(self.noted[0])  # delivered now, to the handler it was meant for
        return False


class OutputSet:
    """Files that belong together, written into ``folder`` as one complete set per :meth:`commit`.

    ``path(name)`` gives where to write ``name`` now (inside a staging folder);
    ``commit()`` moves every file written so far into ``folder`` and records them in
    the manifest under ``command``. A set that is never committed (an error, Ctrl-C)
    leaves ``folder`` as it was. Use it as a context manager: leaving the block
    removes the staging folder, and staging folders of writers that were killed are
    removed when the next set opens.
    """

    def __init__(self, folder, command: str):
        self.folder, self.command = Path(folder), command
        self._lock = folder_lock(self.folder, command)
        self._lock.__enter__()  # a second writer is refused here, before any work
        try:
            self._clear_dead_staging()
            self.staging = Path(tempfile.mkdtemp(prefix=f"{_STAGING}{os.getpid()}-", dir=self.folder))
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise
        #: true once a commit has moved its files in and recorded them
        self.committed = False

    def _clear_dead_staging(self) -> None:
        for old in self.folder.glob(f"{_STAGING}*"):
            try:
                pid = int(old.name[len(_STAGING):].split("-")[0])
            except ValueError:
                continue
            if not _pid_alive(pid):
                shutil.rmtree(old, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def path(self, name: str) -> Path:
        """Where to write the file ``name`` of this set (a plain name or a relative path inside the folder)."""
        rel = Path(name)
        if rel.is_absolute() or ".." in rel.parts or rel.name in (MANIFEST, INCOMPLETE) or not rel.parts:
            raise ValueError(f"{name!r} is not a file name this set can hold")
        target = self.staging / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def final(self, staged: Path) -> Path:
        """Where a staged file will be once committed."""
        return self.folder / Path(staged).relative_to(self.staging)

    def commit(self) -> list[Path]:
        """Move every staged file into the folder and record them; returns their final paths.

        A name the folder holds as something other than a file (a folder, say) is refused before anything
        moves, with :class:`OutputFolderError`.
        """
        staged = sorted(p for p in self.staging.rglob("*") if p.is_file() and not p.name.endswith(_TMP_SUFFIX))
        if not staged:
            return []
        for target in [*(self.final(p) for p in staged), self.folder / MANIFEST, self.folder / INCOMPLETE]:
            blocked = self._blocker(target)
            if blocked is not None:
                path, kind = blocked
                raise OutputFolderError(f"{path} is {kind}, where this command writes its output "
                                        f"{target.relative_to(self.folder)}: move it away or choose another folder; "
                                        "nothing was moved in")
        entries = {}
        for p in staged:
            entries[p.relative_to(self.staging).as_posix()] = {"bytes": p.stat().st_size, "sha256": sha256_file(p)}
        moved = []
        with _SignalsHeld():
            mark = self.folder / INCOMPLETE
            atomic_write(mark, f"{self.command} was moving its files here when it stopped; the files listed in "
                               f"{MANIFEST} are the last complete set, the others may be from either run\n")
            manifest = self._read_manifest()
            written = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
            for p in staged:
                target = self.final(p)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.chmod(p, FILE_MODE)
                os.replace(p, target)
                moved.append(target)
            for name, entry in entries.items():
                manifest["files"][name] = {**entry, "command": self.command, "written": written}
            atomic_write(self.folder / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
            mark.unlink()
            self.committed = True
        return moved

    def fate(self) -> str:
        """What an interrupt left in the folder, in words for the stop message."""
        if self.committed:
            return f"this run's files were moved into {self.folder} before the stop"
        if (self.folder / INCOMPLETE).exists():
            return f"{self.folder} is marked incomplete ({INCOMPLETE}): run the command again"
        return f"{self.folder} keeps what it held before; none of this run's files were moved in"

    def _blocker(self, target: Path):
        """``(path, what it is)`` when something in the folder stands where ``target`` must go, else None."""
        if target.is_dir():
            return target, "a folder"
        for parent in target.relative_to(self.folder).parents[:-1]:  # the folders between, not the folder itself
            if (self.folder / parent).exists() and not (self.folder / parent).is_dir():
                return self.folder / parent, "a file"
        return None

    def _read_manifest(self) -> dict:
        try:
            manifest = json.loads((self.folder / MANIFEST).read_text(encoding="utf-8"))
            if isinstance(manifest, dict) and isinstance(manifest.get("files"), dict):
                return manifest
        except (OSError, ValueError):
            pass
        return {"format": "seqlab-outputs-1", "files": {}}  # none yet, or unreadable: start the record anew

    def close(self) -> None:
        """Remove the staging folder and release the folder's lock (once; later calls do nothing)."""
        if self._lock is None:
            return
        shutil.rmtree(self.staging, ignore_errors=True)
        lock, self._lock = self._lock, None
        lock.__exit__(None, None, None)
