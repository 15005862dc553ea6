"""Cross-checks of the two test oracles: the float64 numpy reference (written from the spec) and
Hugging Face transformers (random weights). They share nothing but the checkpoint names, so their
agreement to float32 rounding error is evidence that both read the spec the same way.

Test-only dependencies: ``pip install torch==2.13.0 transformers==5.24.0``.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the HF oracle needs torch (pip install torch==2.13.0)")
pytest.importorskip(
    "transformers.models.gemma3n",
    reason="the HF oracle needs transformers with gemma3n (pip install transformers==5.24.0)",
)

from oracles.configs import REAL, TINY  # noqa: E402
from oracles.hf_oracle import (  # noqa: E402
    build_hf_modules,
    hf_param_shapes,
    make_hf_modules,
    run_hf,
    state_dict_hf_names,
)
from oracles.reference_f64 import forward_f64  # noqa: E402

PARAMS_TXT = Path(__file__).resolve().parents[1].parent / "shared" / "spec" / "gemma3n-audio-params.txt"
RTOL = 1e-5  # fp32 HF vs float64: rounding error only


def rel_l2(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(got, np.float64) - want) / np.linalg.norm(want))


def log_mel_like(t: int, seed: int, bins: int = 128) -> np.ndarray:
    """Random [t, bins] log-mel-like frames: N(-4, 2^2) plus a slow loudness envelope.

    The envelope makes the frame statistics drift over time, which is what separates the
    cumulative group norm's running variance (spec 3.1) from the exact variance of all frames.
    """
    rng = np.random.default_rng(seed)
    envelope = 3.0 * np.sin(np.arange(t) / 7.0)[:, None]
    return (rng.normal(-4.0, 2.0, (t, bins)) + envelope).astype(np.float32)


def out_lengths(t: int, reduction: int) -> tuple[int, int, int]:
    t0 = math.ceil(t / 2)
    t1 = math.ceil(t0 / 2)
    return t0, t1, math.ceil(t1 / reduction)


@pytest.fixture(scope="module")
def tiny() -> tuple[object, object, dict[str, np.ndarray]]:
    encoder, embedder = make_hf_modules(TINY, seed=0)
    return encoder, embedder, state_dict_hf_names(encoder, embedder)


@pytest.mark.parametrize("t", [16, 17, 100, 203])
def test_f64_matches_hf_fp32(tiny, t: int) -> None:
    encoder, embedder, weights = tiny
    mel = log_mel_like(t, seed=t)
    ref = forward_f64(weights, mel, TINY)
    hf = run_hf(encoder, embedder, mel)
    t_out = out_lengths(t, TINY["conf_reduction_factor"])[2]
    assert ref["encoded_reduced"].shape == hf["encoded"].shape == (t_out, TINY["hidden_size"])
    assert ref["soft_post_norm"].shape == (t_out, TINY["text_hidden_size"])
    assert ref["hard_post_norm"].shape == (TINY["vocab_size"], TINY["text_hidden_size"])
    errs = {
        "encoded": rel_l2(hf["encoded"], ref["encoded_reduced"]),
        "soft_post_norm": rel_l2(hf["soft_post_norm"], ref["soft_post_norm"]),
        "hard_post_norm": rel_l2(hf["hard_post_norm"], ref["hard_post_norm"]),
    }
    assert all(e <= RTOL for e in errs.values()), errs


@pytest.mark.parametrize("t", [17, 203])
def test_f64_stages_match_hf_fp32(tiny, t: int) -> None:
    """Every intermediate the HF modules expose agrees too, in the layouts forward_f64 documents."""
    encoder, embedder, weights = tiny
    mel = log_mel_like(t, seed=1000 + t)
    ref = forward_f64(weights, mel, TINY)
    hf = run_hf(encoder, embedder, mel, stages=True)
    t0, t1, _ = out_lengths(t, TINY["conf_reduction_factor"])
    c0, c1 = TINY["sscp_conv_channel_size"]
    want_shapes = {
        "sscp_conv_0": (t0, 64, c0),
        "sscp_conv_1": (t1, 32, c1),
        "input_projection": (t1, TINY["hidden_size"]),
    }
    for i, t_i in ((0, t0), (1, t1)):
        for stat in (
            "sum_at_time",
            "cumulative_sum",
            "mean",
            "squared_at_time",
            "cumulative_squared",
            "variance",
            "stabilized_variance",
            "inverse_stddev",
        ):
            assert ref[f"sscp_conv_{i}_norm_{stat}"].shape == (t_i,)
        for k in ("convolution", "norm"):
            want_shapes[f"sscp_conv_{i}_{k}"] = want_shapes[f"sscp_conv_{i}"]
    for layer in range(TINY["conf_num_hidden_layers"]):
        for k in ("feed_forward_start", "attention", "light_conv", "feed_forward_end", "final_norm"):
            want_shapes[f"conformer.{layer}.{k}"] = (t1, TINY["hidden_size"])
    assert set(want_shapes) <= set(hf)
    errs = {}
    for name, shape in want_shapes.items():
        assert ref[name].shape == hf[name].shape == shape, name
        assert ref[name].dtype == np.float64
        errs[name] = rel_l2(hf[name], ref[name])
    assert max(errs.values()) <= RTOL, errs


@pytest.mark.parametrize(
    "window",
    [
        dict(conf_attention_chunk_size=4, conf_attention_context_left=5, conf_attention_context_right=2),
        dict(conf_attention_chunk_size=5, conf_attention_context_left=20, conf_attention_context_right=3),
        dict(conf_attention_context_left=1),
    ],
)
def test_direct_attention_window_other_geometries(window: dict[str, int]) -> None:
    """The direct window d = i - j in [-right, left - 1] matches HF's blocks for other geometries too."""
    cfg = {**TINY, **window}
    encoder, embedder = make_hf_modules(cfg, seed=3)
    mel = log_mel_like(203, seed=7)
    ref = forward_f64(state_dict_hf_names(encoder, embedder), mel, cfg)
    hf = run_hf(encoder, embedder, mel)
    assert rel_l2(hf["encoded"], ref["encoded_reduced"]) <= RTOL


def test_hf_bf16_run(tiny) -> None:
    """The bf16 path really runs in bf16 (from_pretrained buffer dtypes, spec 3.6) and stays sane."""
    encoder, embedder, weights = tiny
    mel = log_mel_like(100, seed=5)
    hf = run_hf(encoder, embedder, mel, dtype=torch.bfloat16)
    assert all(v.dtype == np.float32 for v in hf.values())
    bf16 = encoder._bf16_copy
    attn = bf16.conformer[0].attention.attn
    assert attn.relative_position_embedding.inv_timescales.dtype == torch.float32
    assert attn.softcap.dtype == torch.float32
    assert attn.q_scale.dtype == torch.bfloat16
    assert bf16.conformer[0].gradient_clipping.dtype == torch.bfloat16
    assert bf16.conformer[0].ffw_layer_start.ffw_layer_1.weight.dtype == torch.bfloat16
    ref = forward_f64(weights, mel, TINY)
    err = rel_l2(hf["encoded"], ref["encoded_reduced"])
    assert 1e-4 < err < 5e-2, err  # bf16-sized drift, neither fp32-exact nor broken
    assert rel_l2(hf["soft_post_norm"], ref["soft_post_norm"]) < 5e-2


def test_random_weights_deterministic_and_nontrivial() -> None:
    a = state_dict_hf_names(*make_hf_modules(TINY, seed=11))
    b = state_dict_hf_names(*make_hf_modules(TINY, seed=11))
    c = state_dict_hf_names(*make_hf_modules(TINY, seed=12))
    assert a.keys() == b.keys() == c.keys()
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert all(not np.array_equal(a[k], c[k]) for k in a)
    for k, v in a.items():
        assert v.dtype == np.float32
        if k.endswith("per_dim_scale"):
            assert np.std(v) > 0.1
        elif v.ndim == 1:
            assert np.all(v != 1.0) and np.std(v) > 0.03, k


def _spec_params() -> dict[str, tuple[int, ...]]:
    lines = PARAMS_TXT.read_text().splitlines()
    return {
        name: tuple(ast.literal_eval(shape))
        for name, shape in (ln.split("\t") for ln in lines if ln and not ln.startswith("#"))
    }


@pytest.mark.skipif(not PARAMS_TXT.exists(), reason="shared/spec/gemma3n-audio-params.txt not present")
def test_real_config_param_names_and_shapes() -> None:
    """The real-size modules (built on the meta device) have exactly the 273 checkpoint tensors."""
    want = _spec_params()
    assert len(want) == 273
    with torch.device("meta"):
        encoder, embedder = build_hf_modules(REAL)
    assert hf_param_shapes(encoder, embedder) == want


@pytest.mark.skipif(not PARAMS_TXT.exists(), reason="shared/spec/gemma3n-audio-params.txt not present")
def test_tiny_state_dict_follows_checkpoint_pattern(tiny) -> None:
    """state_dict_hf_names gives the checkpoint's names (layers 0..1 of the 273) with matching shapes."""
    encoder, embedder, weights = tiny
    layers = TINY["conf_num_hidden_layers"]
    want = [
        k for k in _spec_params() if ".conformer." not in k or int(k.split(".conformer.")[1].split(".")[0]) < layers
    ]
    assert sorted(weights) == sorted(want)
    assert {k: v.shape for k, v in weights.items()} == hf_param_shapes(encoder, embedder)
