"""`scripts/decode_logits.py compare`: two saved decode runs are the same only when every logit's bits are."""

from __future__ import annotations

import json
import runpy
import sys

import numpy as np
import pytest

SCRIPT = "scripts/decode_logits.py"


def compare(a, b, capsys) -> tuple[int, dict]:
    saved = sys.argv
    sys.argv = [SCRIPT, "compare", str(a), str(b)]
    try:
        with pytest.raises(SystemExit) as exit_:
            runpy.run_path(SCRIPT, run_name="__main__")
    finally:
        sys.argv = saved
    return exit_.value.code, json.loads(capsys.readouterr().out)


def test_identical_runs_pass_and_one_bit_fails(tmp_path, capsys):
    logits = np.random.default_rng(0).standard_normal((3, 2, 50)).astype(np.float32)
    np.savez(tmp_path / "a.npz", w2=logits)
    np.savez(tmp_path / "b.npz", w2=logits.copy())
    code, report = compare(tmp_path / "a.npz", tmp_path / "b.npz", capsys)
    assert code == 0 and report["w2"]["bit_identical"] and report["w2"]["differing"] == 0

    moved = logits.copy()
    moved[1, 0, 7] = np.nextafter(moved[1, 0, 7], np.float32(np.inf))
    moved[0, 0, 0], logits[0, 0, 0] = np.float32(-0.0), np.float32(0.0)  # equal values, different bits
    np.savez(tmp_path / "a.npz", w2=logits)
    np.savez(tmp_path / "b.npz", w2=moved)
    code, report = compare(tmp_path / "a.npz", tmp_path / "b.npz", capsys)
    assert code == 1 and not report["w2"]["bit_identical"] and report["w2"]["differing"] == 2
    assert report["w2"]["max_abs_difference_finite"] > 0 and report["w2"]["differing_nan_bits"] == 0


def test_nans_whose_bits_differ_are_counted_apart(tmp_path, capsys):
    a = np.zeros((1, 1, 8), np.float32)
    a[0, 0, 2] = np.nan
    b = a.copy()
    b[0, 0, 2] = -b[0, 0, 2]  # the other sign: the same NaN place, other bits
    np.savez(tmp_path / "a.npz", w1=a)
    np.savez(tmp_path / "b.npz", w1=b)
    code, report = compare(tmp_path / "a.npz", tmp_path / "b.npz", capsys)
    assert code == 1 and report["w1"]["differing"] == report["w1"]["differing_nan_bits"] == 1
    assert report["w1"]["nan"] == [1, 1] and report["w1"]["nan_rows_by_step"] == [1]
