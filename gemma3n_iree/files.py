"""Atomic file writes: the one way every artifact, result and report reaches its path.

The bytes go to a temporary sibling, are flushed and fsynced, and are renamed over the destination;
then the directory is fsynced so the rename itself survives a crash.  A reader therefore sees the
old file or the complete new one, never a partial one, and a crash never leaves a truncated file
under the destination's name.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


@contextmanager
def atomic_writer(path: str | Path) -> Iterator[BinaryIO]:
    """A binary handle whose contents appear under `path` only when the block completes (the parent
    folder is created if needed); on an exception the temporary file is removed and `path` is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def write_atomically(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` atomically (see `atomic_writer`)."""
    with atomic_writer(path) as handle:
        handle.write(data)


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
