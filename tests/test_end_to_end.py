"""The whole audio stage on the tiny configuration, compiled for llvm-cpu and run through IREE.

* mlx-cuda-v1: equal to the numpy emulation of the contract bit for bit, except where a
  contraction's F32 accumulation order (the backend's vs the emulation's exact float64 sum) lands
  on the other side of a BF16 rounding boundary: one BF16 ULP in a few elements, then propagated;
  on this machine's CPU and compiled for one without a BF16 dot instruction (its dots read F32).
* f32-reference: every stage within 1e-5 relative L2 of an independent float64 forward of the spec
  (tests/oracles/reference_f64.py), i.e. F32 rounding noise only.
* a clip's rows do not depend on the bucket it is padded into or on what it is batched with.
"""

from __future__ import annotations

import numpy as np
import pytest
from audio_artifacts import load_session
from oracles.reference_f64 import forward_f64

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.contracts import encoder as emulated
from gemma3n_iree.contracts.metrics import bf16_ulp, f32_accumulation_bound
from gemma3n_iree.emitters.audio import AudioModuleSpec
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.model.audio_weights import audio_weight_specs
from gemma3n_iree.runtime.synthetic import random_weights

CFG = builtin_config("tiny")
SEED = 7


def speechlike_mel(rng: np.random.Generator, clips: int, frames: int) -> np.ndarray:
    """Log-mel-like values with a slow loudness swing (so cumulative statistics move over time)."""
    t = np.arange(frames)[None, :, None]
    return (rng.normal(-4.0, 2.0, (clips, frames, 128)) + 3.0 * np.sin(t / 7.0)).astype(np.float32)


@pytest.fixture(scope="module")
def weights() -> dict[str, np.ndarray]:
    return random_weights(CFG, SEED)


@pytest.fixture(scope="module")
def logical(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {s.logical: weights[s.key].astype(np.float32) for s in audio_weight_specs(CFG)}


#: This machine's CPU, and one without a BF16 dot instruction that it also runs (x86-64 with AVX2): there the
#: contractions read their BF16 operands as F32 (emitters/lowering.py).
CPUS = {"host": parse_target("llvm-cpu"), "no-bf16-dot": parse_target("llvm-cpu:x86-64-v3")}


@pytest.fixture(scope="module", params=sorted(CPUS))
def mlx_session(weights, request):
    return load_session(AudioModuleSpec(CFG, MLX_CUDA_V1, (61, 100), (1, 2), stages=True), weights, CPUS[request.param])


@pytest.fixture(scope="module")
def f32_session(weights):
    return load_session(AudioModuleSpec(CFG, F32_REFERENCE, (100,), (1,), stages=True), weights)


# Linear stages with their (input stage, weight): where the F32 accumulation order of the backend
# and the emulation's exact sum may round to different BF16 values.
LINEAR_STAGES = {
    "input_projection": None,
    "soft_linear": ("soft_norm", "embed.projection"),
    "hard_linear": ("hard_norm", "embed.projection"),
}


def test_mlx_cuda_v1_matches_emulation(mlx_session, logical):
    """Bit-exact up to the first contraction whose F32 accumulation order flips a BF16 rounding.

    What we achieve on llvm-cpu: every schedule-pinned stage is bit-exact.  The first stage that
    differs (if any) must be a linear layer, and each of its differing elements must lie within the
    rigorous F32 summation error bound (gamma_K * sum|x w|) plus one BF16 rounding step of the exact
    value: a legitimate accumulation-order difference, not a bug.
    """
    rng = np.random.default_rng(1)
    mel = speechlike_mel(rng, 2, 100)
    frames = np.array([100, 61], np.int32)
    mel[1, 61:] = 0.0
    got = mlx_session.run(mel, frames)
    want = emulated.encode(MLX_CUDA_V1, CFG, logical, mel, frames)
    assert set(got) == set(want)
    np.testing.assert_array_equal(got["valid_tokens"], want["valid_tokens"])
    graph_order = [n for n in got if n not in ("audio_features", "encoder_hidden", "valid_tokens")]
    first = next((n for n in graph_order if not np.array_equal(got[n], want[n])), None)
    if first is None:
        return
    assert first in LINEAR_STAGES and LINEAR_STAGES[first], f"first divergence at {first}, not a linear layer"
    source, weight = LINEAR_STAGES[first]
    np.testing.assert_array_equal(got[source], want[source])
    bound = f32_accumulation_bound(want[source], logical[weight]) + bf16_ulp(want[first])
    excess = np.abs(got[first].astype(np.float64) - want[first]) - bound
    assert excess.max() <= 0, f"{first}: a difference exceeds the accumulation envelope by {excess.max():.3g}"


def _valid_slice(name: str, value: np.ndarray, frames: int) -> np.ndarray:
    """The part of one clip's stage tensor that a single unpadded run of `frames` frames computes."""
    t0 = -(-frames // 2)
    t1 = -(-t0 // 2)
    tout = -(-t1 // 4)
    if name.startswith("sscp_conv_0"):
        return value[:t0]
    if name.startswith("sscp_conv_1"):
        return value[:t1]
    if name == "input_projection" or name.startswith("conformer."):
        return value[:t1]
    if name in ("encoded_reduced", "soft_norm", "soft_linear", "soft_post_norm"):
        return value[:tout]
    return value


@pytest.mark.parametrize("frames", [100, 77])
def test_f32_reference_matches_float64_spec_at_every_stage(f32_session, weights, frames):
    rng = np.random.default_rng(frames)
    mel = np.zeros((1, 100, 128), np.float32)
    mel[0, :frames] = speechlike_mel(rng, 1, frames)[0]
    got = f32_session.run(mel, np.array([frames], np.int32))
    reference = forward_f64(weights, mel[0, :frames].astype(np.float64), _hf_cfg())
    compared = []
    for name, ref in reference.items():
        ours = _valid_slice(name, got[name][0] if name != "hard_post_norm" else got[name], frames)
        assert ours.shape == ref.shape, (name, ours.shape, ref.shape)
        rel = np.linalg.norm(ours - ref) / np.linalg.norm(ref)
        assert rel <= 1e-5, f"{name}: relative L2 {rel:.2e} > 1e-5"
        compared.append(name)
    assert len(compared) >= 30


def test_clip_rows_do_not_depend_on_bucket_or_batch(mlx_session):
    rng = np.random.default_rng(3)
    clip = speechlike_mel(rng, 1, 61)[0]
    alone = mlx_session.run(clip[None], np.array([61], np.int32))
    padded = np.zeros((2, 100, 128), np.float32)
    padded[0, :61] = clip
    padded[1] = speechlike_mel(rng, 1, 100)[0]
    batched = mlx_session.run(padded, np.array([61, 100], np.int32))
    for name in ("audio_features", "encoder_hidden", "valid_tokens"):
        np.testing.assert_array_equal(batched[name][0], alone[name][0], err_msg=name)
    assert alone["valid_tokens"][0] == -(-61 // 16)


def _hf_cfg() -> dict:
    cfg = dict(CFG.__dict__)
    cfg["vocab_offset"] = CFG.vocab_offset
    return cfg
