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


def test_relative_l2_is_the_distance_over_the_second_runs_norm(tmp_path, capsys):
    b = np.ones((1, 2, 4), np.float32)
    a = b.copy()
    a[0, 1, 3] = 3.0  # one logit 2 away from a run of norm sqrt(8)
    np.savez(tmp_path / "a.npz", w2=a)
    np.savez(tmp_path / "b.npz", w2=b)
    _, report = compare(tmp_path / "a.npz", tmp_path / "b.npz", capsys)
    assert report["w2"]["relative_l2_finite"] == pytest.approx(2 / np.sqrt(8))


def test_reference_is_transformers_fed_one_token_at_a_time(tmp_path, capsys):
    """`reference` runs each width's sequences in one forward pass and saves [steps, width, V]: the logits
    transformers gives when the same tokens arrive one step at a time through its cache (what the program's `run`
    feeds), sequence by sequence."""
    torch = pytest.importorskip("torch")
    sys.path.insert(0, "scripts")
    from decode_logits import tokens
    from oracles import hf_decoder as H
    from synthetic_text import ensure_random_decoder
    from transformers import DynamicCache

    from gemma3n_iree.model.decoder_config import builtin_decoder_config
    from gemma3n_iree.model.decoder_weights import decoder_weight_specs, read_decoder_weights

    cfg = builtin_decoder_config("tiny")
    checkpoint = ensure_random_decoder(tmp_path / "tiny", cfg, seed=0)
    saved = sys.argv
    sys.argv = [SCRIPT, "reference", "--checkpoint", str(checkpoint), "--out", str(tmp_path / "t_{dtype}.npz")]
    sys.argv += ["--widths", "1", "2", "--steps", "3", "--dtype", "bf16", "fp32"]
    try:
        runpy.run_path(SCRIPT, run_name="__main__")
    finally:
        sys.argv = saved
    capsys.readouterr()
    got = np.load(tmp_path / "t_fp32.npz")
    assert np.load(tmp_path / "t_bf16.npz")["w2"].shape == got["w2"].shape
    assert got["w1"].shape == (3, 1, cfg.vocab_size) and got["w2"].shape == (3, 2, cfg.vocab_size)

    specs = decoder_weight_specs(cfg)
    mapped = read_decoder_weights(checkpoint, cfg)
    model = H.model_from_tensors(cfg, {specs[k].key: v for k, v in mapped.items()})
    for b in range(2):
        cache = DynamicCache(config=model.config)
        with torch.no_grad():
            for step in range(3):
                ids = torch.tensor([[tokens(2, step)[b]]])
                out = model(input_ids=ids, past_key_values=cache, use_cache=True).logits[0, -1].numpy()
                np.testing.assert_allclose(got["w2"][step, b], out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["w1"][:, 0], got["w2"][:, 0], rtol=1e-5, atol=1e-5)  # the same tokens
