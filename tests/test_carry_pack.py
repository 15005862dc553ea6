"""`scripts/carry_pack.py`: programs packed here come back byte for byte there, and a damaged one is refused."""

from __future__ import annotations

import lzma
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "scripts"))
import carry_pack  # noqa: E402


def test_packed_programs_unpack_to_the_same_bytes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    programs = {Path(".gpu/prefill/e4b/a.vmfb"): b"PTX " * 50_000, Path(".gpu/t17/decoder.vmfb"): bytes(range(256))}
    for path, data in programs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    carry_pack.main(["pack", ".gpu/prefill"])
    carry_pack.main(["pack", ".gpu/t17/decoder.vmfb"])  # a second pack adds to the manifest
    assert (carry_pack.CARRY / ".gpu/prefill/e4b/a.vmfb.xz").stat().st_size < 200_000 // 20
    there = tmp_path / "there"
    written = carry_pack.unpack(root=there)
    assert sorted(written) == sorted(there / p for p in programs)
    for path, data in programs.items():
        assert (there / path).read_bytes() == data


def test_a_damaged_pack_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    program = Path(".gpu/step/e4b/x.vmfb")
    program.parent.mkdir(parents=True)
    program.write_bytes(b"one program")
    carry_pack.pack([program.parent])
    (carry_pack.CARRY / f"{program}.xz").write_bytes(lzma.compress(b"another program"))
    with pytest.raises(SystemExit, match="x.vmfb: SHA-256 differs"):
        carry_pack.unpack(root=tmp_path / "there")
    with pytest.raises(SystemExit, match="nothing: no files to pack"):
        carry_pack.pack([Path("nothing")])
