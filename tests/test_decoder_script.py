"""`scripts/decoder_real_shapes.py` (the H200 reference run) on the tiny model, as the README shows it: it writes
its random checkpoint, the references and the report, and `--compare` judges a program's outputs (here the
emulation's own, bit-identical, and a copy with one cache element moved by one BF16 step)."""

from __future__ import annotations

import json
import runpy
import sys

import numpy as np

SCRIPT = "scripts/decoder_real_shapes.py"
SHORT = ["--prompt-length", "16", "--steps", "3", "--capacity", "64"]  # the tiny model: seconds


def run(argv: list[str]) -> None:
    saved = sys.argv
    sys.argv = [SCRIPT, *argv]
    try:
        runpy.run_path(SCRIPT, run_name="__main__")
    finally:
        sys.argv = saved


def test_reference_run_and_program_comparison(tmp_path, capsys):
    contract = "mlx-cuda-v1"
    work, out = tmp_path / "w", tmp_path / "out"
    run(["--variant", "tiny", "--workdir", str(work), "--out", str(out), "--no-transformers", *SHORT])
    report = json.loads((out / "report.json").read_text())
    assert report["mlx-cuda-v1_prefix_consistent"] and report["f32-reference_prefix_consistent"]
    assert report["f32_reference_vs_oracle"]["relative_l2"] <= 1e-5
    refs = np.load(out / "references.npz")
    program = {k.split("/", 1)[1]: refs[k] for k in refs.files if k.startswith(contract + "/")}
    np.savez(tmp_path / "same.npz", **program)
    capsys.readouterr()
    run(
        [
            "--variant",
            "tiny",
            "--workdir",
            str(work),
            "--out",
            str(out),
            "--compare",
            str(tmp_path / "same.npz"),
            *SHORT,
        ]
    )
    same = json.loads(capsys.readouterr().out)["program"]
    assert same["logits_bit_identical"] == 1.0 and same["cache_bit_identical"] == 1.0
    assert same["cache_max_bf16_ulps"] == 0
    moved = dict(program)
    keys = moved["keys_0"].copy()
    keys.view(np.uint32)[0, 0, 0] += 1 << 16  # one BF16 step
    moved["keys_0"] = keys
    np.savez(tmp_path / "moved.npz", **moved)
    run(
        [
            "--variant",
            "tiny",
            "--workdir",
            str(work),
            "--out",
            str(out),
            "--compare",
            str(tmp_path / "moved.npz"),
            *SHORT,
        ]
    )
    moved_report = json.loads(capsys.readouterr().out)["program"]
    assert moved_report["cache_max_bf16_ulps"] == 1 and moved_report["cache_bit_identical"] < 1.0
