"""One writer at a time into the shared execution cache (a Sphinx extension).

The chapter builds its pages in two lanes, two Sphinx processes that execute into one jupyter-cache folder. Caching a
notebook there is not safe against a second writer: ``cache_notebook_bundle`` creates the database record before it
writes the notebook file, and then trims the cache, reading which records to keep and which to delete in two
queries. A record the other lane commits between those queries is in neither the keep list nor the delete list;
it is deleted, before its file exists, and the build fails with "Notebook file does not exist for cache record".
Holding a file lock around each write makes the lanes' writes take turns; reading the cache is unaffected.
"""
from __future__ import annotations

import functools
from pathlib import Path

_PATCHED = "_seqlab_locked"


def _locked(write):
    @functools.wraps(write)
    def wrapper(self, *args, **kwargs):
        from filelock import FileLock

        with FileLock(str(Path(self.path) / "seqlab-write.lock")):
            return write(self, *args, **kwargs)

    setattr(wrapper, _PATCHED, True)
    return wrapper


def install() -> None:
    """Make every ``cache_notebook_bundle`` of this process hold the cache folder's write lock (idempotent)."""
    from jupyter_cache.cache.main import JupyterCacheBase

    if not getattr(JupyterCacheBase.cache_notebook_bundle, _PATCHED, False):
        JupyterCacheBase.cache_notebook_bundle = _locked(JupyterCacheBase.cache_notebook_bundle)


def setup(app):
    install()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
