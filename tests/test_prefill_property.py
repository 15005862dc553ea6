"""Property tests of the prefill stage's ops: compiled for llvm-cpu and run through IREE, each equals its
numpy contract emulation BIT FOR BIT (uint32 patterns), on hypothesis-drawn inputs.

* `mlx_rms_norm` at width 256: the dense per-layer inputs' norm, 32 lanes x 8 adjacent reads from 0 (one
  warp), the XOR butterfly 16, 8, 4, 2, 1, IEEE 1/sqrt, then MLX's two rounding points.
* `dense_ple`: the whole head (token rows x 16, projection x 2048^-0.5-style constant, the norm above,
  the sum, x 2^-0.5, zero tail).  Its one contraction is made exact by construction (integer-valued
  operands times powers of two: every partial sum is exact in F32, so any accumulation order gives the
  emulation's value), which leaves every other op to be checked bit for bit.
* `token_merge`: scaled text rows, hard audio rows by id, soft rows by row map, zero tail.

The strategies and the subnormal handling (IREE's CPU runtime flushes subnormals) are those of
tests/test_schedules_property.py, whose docstring explains them.
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
import pytest
from conftest import _invoker, assert_bits_equal, compile_cpu
from hypothesis import given
from hypothesis import strategies as st
from test_schedules_property import PROPERTY, bf16_weights, daz, emulate, f32_arrays, note_values

from gemma3n_iree.contracts import emulation as em
from gemma3n_iree.contracts import prefill as emulated
from gemma3n_iree.contracts.policy import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters.probe import probe_module
from gemma3n_iree.model.text_config import TextConfig

F32 = np.float32
BF16 = ml_dtypes.bfloat16
CONTRACTS = [MLX_CUDA_V1, F32_REFERENCE]
EPS = 1e-6
PD = 256


@functools.cache
def runner(contract, op: str, *args):
    """The compiled probe of `OpEmitter.<op>(*args)`; unlike conftest's run_vmfb it passes 0-d arrays
    (the real length) through unchanged (np.ascontiguousarray would make them 1-d)."""
    fn = _invoker(compile_cpu(probe_module(contract, lambda o: getattr(o, op)(*args))), "main")

    def run(*inputs: np.ndarray) -> list[np.ndarray]:
        out = fn(*inputs)
        out = out if isinstance(out, (tuple, list)) else (out,)
        return [np.array(o.to_host(), copy=True) for o in out]

    return run


# ---------------------------------------------------------------------------------------------- width-256 norm
# Subnormal ranges as for test_rms_norm_bit_exact: BF16-valued |x| in [2^-40, 1e30 overlays], weights 0 or
# |w| in [2^-20, 2^20]; intermediate x * inv stays normal or is exactly 0 (see that test's comment).
@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
@PROPERTY
@given(data=st.data())
def test_mlx_rms_norm_256_bit_exact(contract, data):
    rows = 6  # 3 prompt rows x 2 layers
    run = runner(contract, "mlx_rms_norm", rows, PD, EPS)
    x = data.draw(f32_arrays((rows, PD), 2.0**-40, scales=(1.0, 1e-3, 1e3, 1e15), bf16=True), label="x")
    w = data.draw(bf16_weights(PD), label="w")
    (got,) = run(x, w)
    note_values(x, got)
    want = emulate(em.mlx_rms_norm, contract, daz(x), daz(w).astype(F32), EPS)
    assert_bits_equal(got, want, f"mlx_rms_norm {contract.name}")


def test_mlx_rms_norm_rounds_twice():
    """The two rounding points are observable: a single rounding of x * inv * w differs on some input."""
    run = runner(MLX_CUDA_V1, "mlx_rms_norm", 6, PD, EPS)
    rng = np.random.default_rng(0)
    x = em.round_bf16(rng.standard_normal((6, PD)).astype(F32))
    w = (1.0 + 0.1 * rng.standard_normal(PD)).astype(BF16)
    (got,) = run(x, w)
    assert_bits_equal(got, em.mlx_rms_norm(MLX_CUDA_V1, x, w.astype(F32), EPS), "two roundings")
    once = em.rms_norm(MLX_CUDA_V1, x, w.astype(F32), EPS)  # the audio norms' single rounding
    assert (got != once).any()


# ---------------------------------------------------------------------------------------------- dense PLE head
TINY = TextConfig(hidden_size=48, num_hidden_layers=2, vocab_size_per_layer_input=512)
CAP = 4


@st.composite
def exact_operands(draw, shape: tuple[int, ...], exponent: int) -> np.ndarray:
    """Integers in [-8, 8] times 2^exponent (BF16-valued; products and their sums are exact in F32)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return (rng.integers(-8, 9, size=shape).astype(F32) * F32(2.0**exponent)).astype(F32)


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
@PROPERTY
@given(data=st.data())
def test_dense_ple_bit_exact(contract, data):
    cfg = TINY
    h, p = cfg.hidden_size, cfg.ple_width
    run = runner(contract, "dense_ple", CAP, h, cfg.num_hidden_layers, PD, EPS)
    a = data.draw(st.integers(-12, 12), label="embeds exponent")
    b = data.draw(st.integers(-12, 12), label="projection exponent")
    embeds = data.draw(exact_operands((CAP, h), a), label="embeds")
    w_proj = data.draw(exact_operands((p, h), b), label="w_proj").astype(BF16)
    token = data.draw(
        f32_arrays(
            (CAP, p),
            2.0**-40,
            kinds=("gauss", "pairs", "all_equal", "signed_zeros", "small_ints"),
            scales=(1.0, 1e-3, 1e3),
            bf16=True,
            specials=(0.0, -0.0, 1.0),
        ),
        label="token",
    )
    w_norm = data.draw(bf16_weights(PD, 2.0**-8, 2.0**8), label="w_norm")
    length = data.draw(st.integers(0, CAP), label="length")
    got_ple, got_linear = run(embeds, token.astype(BF16), w_proj, w_norm, np.array(length, np.int32))
    want = emulate(
        emulated.dense_ple, contract, cfg, embeds, daz(token), w_proj.astype(F32), w_norm.astype(F32), length
    )
    assert_bits_equal(got_linear, want["ple_projection_linear"], "projection (exact by construction)")
    assert_bits_equal(got_ple, want["per_layer_inputs"], f"dense_ple {contract.name}")


# ---------------------------------------------------------------------------------------------- merge
@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
@PROPERTY
@given(data=st.data())
def test_token_merge_bit_exact(contract, data):
    cfg, cap, clips = TINY, 16, 1
    h, audio_rows, vocab = cfg.hidden_size, clips * 188, cfg.audio_vocab_size
    run = runner(contract, "token_merge", cap, h, vocab, cfg.audio_vocab_offset, audio_rows)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    audio_share = data.draw(st.floats(0.0, 1.0), label="audio id share")
    ids = np.where(
        rng.random(cap) < audio_share,
        rng.integers(cfg.audio_vocab_offset, cfg.vocab_size, cap),
        rng.integers(0, cfg.vision_vocab_offset, cap),
    ).astype(np.int32)
    row_map = np.where(rng.random(cap) < 0.5, rng.integers(0, audio_rows, cap), -1).astype(np.int32)
    text = data.draw(f32_arrays((cap, h), 2.0**-100, bf16=True, scales=(1.0, 1e-3, 1e3, 1e30)), label="text")
    hard = em.round_bf16(rng.standard_normal((vocab, h)).astype(F32))
    audio = em.round_bf16(rng.standard_normal((audio_rows, h)).astype(F32))
    length = data.draw(st.integers(0, cap), label="length")
    (got,) = run(ids, text.astype(BF16), hard, audio, row_map, np.array(length, np.int32))
    want = emulate(emulated.merge, contract, cfg, ids, daz(text), hard, audio, row_map, length)
    assert_bits_equal(got, want, f"token_merge {contract.name}")
