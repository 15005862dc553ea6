"""`gemma3n_iree.files`: the one atomic write. A reader sees the old file or the whole new one; a failed
write leaves the destination and the folder as they were; the file and its folder are fsynced."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gemma3n_iree import files
from gemma3n_iree.files import atomic_writer, write_atomically


def test_writes_creates_the_folder_and_replaces(tmp_path: Path):
    path = tmp_path / "new" / "out.bin"
    write_atomically(path, b"first")
    write_atomically(path, b"second")
    assert path.read_bytes() == b"second"
    assert sorted(p.name for p in path.parent.iterdir()) == ["out.bin"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path):
    path = tmp_path / "out.npz"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="interrupted"), atomic_writer(path) as handle:
        handle.write(b"partial")
        raise RuntimeError("interrupted")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.npz"]


def test_the_file_and_its_folder_are_fsynced_around_the_rename(tmp_path: Path, monkeypatch):
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append("fsync folder" if os.path.isdir(f"/proc/self/fd/{fd}") else "fsync file")
        real_fsync(fd)

    def replace(src, dst) -> None:
        events.append("replace")
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "fsync", fsync)
    monkeypatch.setattr(files.os, "replace", replace)
    write_atomically(tmp_path / "out.json", b"{}")
    assert events == ["fsync file", "replace", "fsync folder"]
