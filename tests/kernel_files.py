"""Checks every committed kernel's tests share: the PTX rebuilds byte for byte with the manifest's
record, its parameter list, and the F32 arithmetic it contains."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gemma3n_iree.kernels import KernelFile
from gemma3n_iree.kernels.spec import MANIFEST_NAME, PTX_DIR


def committed_manifest() -> dict:
    return json.loads((PTX_DIR / MANIFEST_NAME).read_text())


def rebuilt_ptx(file: KernelFile, tmp_path: Path) -> str:
    """Rebuild `file` from its Triton source into `tmp_path`, assert that the PTX is the committed
    bytes and that the build's record and toolchain are the manifest's, and return the PTX text
    (skips without triton)."""
    pytest.importorskip("triton", reason="the `kernels` extra (triton) rebuilds the PTX")
    from gemma3n_iree.kernels.build import build_file, toolchain

    record = build_file(file, tmp_path)
    assert (tmp_path / f"{file.stem}.ptx").read_bytes() == file.ptx_path().read_bytes(), file.stem
    manifest = committed_manifest()
    assert record == manifest["files"][file.stem]
    assert {key: manifest[key] for key in toolchain()} == toolchain()
    return file.ptx_path().read_text()


def entry_parameters(ptx: str, entry: str) -> list[str]:
    """The PTX entry's parameter types, in order (`.u64` pointers, `.u32` push constants)."""
    match = re.search(rf"\.visible \.entry {entry}\((.*?)\n\)", ptx, re.S)
    return [p.strip().split()[1] for p in match.group(1).strip().split(",")]


def f32_arithmetic(ptx: str) -> list[str]:
    """Every F32 multiply, add, subtract, fused multiply-add and division instruction, in order."""
    return re.findall(r"\b((?:mul|add|sub|fma|div)\.[a-z.]*f32)\b", ptx)


def assert_only_irees_exp_is_fused(ptx: str) -> None:
    """No contraction: the F32 arithmetic all rounds on its own (`.rn`), and the fused multiply-adds
    are exactly IREE's exp (nine for each IEEE division of a logistic)."""
    ops = f32_arithmetic(ptx)
    assert set(ops) == {"mul.rn.f32", "add.rn.f32", "fma.rn.f32", "div.rn.f32"}
    assert ops.count("fma.rn.f32") == 9 * ops.count("div.rn.f32")
