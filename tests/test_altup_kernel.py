"""The committed AltUp kernels (kernels/altup_triton.py) compute the decoder's predict and correct steps exactly.

The kernels' Triton source runs here in Triton's interpreter (numpy arithmetic, IEEE F32, no FMA) against the
emulation (`contracts.decoder_ops.altup_predict` / `altup_correct` with IREE's tanh), bit for bit: the router's
norm on the contract's schedule, its linear rounded to BF16 (the one step whose F32 order is free: the emulation
sums exactly, the kernel in a tree, and both round to the same BF16 on these rows), the coefficients added left
to right, every product and add rounded on its own. The PTX rebuilds byte for byte, takes the parameter list
IREE's custom dispatch passes, and contains no fused multiply-add but IREE's tanh's.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from kernel_files import entry_parameters, f32_arithmetic, rebuilt_ptx
from triton_interpreter import interpreted_kernels

from gemma3n_iree.contracts import decoder_ops as D
from gemma3n_iree.contracts.emulation import lane_threads
from gemma3n_iree.contracts.policy import MLX_CUDA_V1
from gemma3n_iree.kernels.altup import ALTUP_SM90, STREAMS
from gemma3n_iree.model.decoder_config import builtin_decoder_config

TINY, E4B = builtin_decoder_config("tiny"), builtin_decoder_config("e4b")
LAYER = 3
ROUNDS = {"round_bf16": True, "round_scale": True}  # mlx-cuda-v1 rounds at every point these kernels have


def bf16_values(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def random_layer(cfg, tokens: int, seed: int) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """AltUp weights of one layer (BF16 values) at the well-conditioned scales, streams [n, T, d] and an
    activated row [T, d] across several binades."""
    rng = np.random.default_rng(seed)
    n, d = cfg.altup_num_inputs, cfg.hidden_size
    at = f"layers.{LAYER}.altup."
    w = {
        at + "router_norm": bf16_values(1 + 0.1 * rng.standard_normal(d)),
        at + "modality_router": bf16_values(rng.standard_normal((n, d)) / np.sqrt(d) * 40),
        at + "prediction_coefs": bf16_values(0.05 * rng.standard_normal((n * n, n))),
        at + "correction_coefs": bf16_values(0.05 * rng.standard_normal((n, n))),
    }
    w[at + "prediction_coefs"][0, 0] = 150.0  # past the clip of 120
    scale = np.exp(rng.uniform(-4, 4, (1, tokens, 1)))
    streams = bf16_values(rng.standard_normal((n, tokens, d)) * scale)
    activated = bf16_values(rng.standard_normal((tokens, d)) * scale[0])
    return w, streams, activated


@pytest.fixture(scope="module")
def run():
    launch = interpreted_kernels("altup_triton.py")  # skips without triton and torch
    import torch

    def as_bf16(a: np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(a).astype(ml_dtypes.bfloat16).view(np.int16)).view(torch.bfloat16)

    def f32(a: np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(a, np.float32))

    def kernel(step: str, cfg, w: dict[str, np.ndarray], streams: np.ndarray, activated: np.ndarray) -> np.ndarray:
        n, tokens, d = streams.shape
        at = f"layers.{LAYER}.altup."
        threads = lane_threads(d, 8)
        args = dict(
            threads=threads,
            tokens=tokens,
            streams=n,
            width=d,
            active=cfg.altup_active_idx,
            eps=cfg.rms_norm_eps,
            scale=D.E.contract_scalar(MLX_CUDA_V1, 1.0 / d),
            clip=cfg.altup_coef_clip,
        )
        weights = [as_bf16(w[at + "router_norm"]), as_bf16(w[at + "modality_router"])]
        if step == "predict":
            call = ALTUP_SM90.call("predict", **args, rounds={**ROUNDS, "round_out": True})
            inputs = [f32(streams), *weights, as_bf16(w[at + "prediction_coefs"])]
        else:
            rounds = {**ROUNDS, "round_innovation": True, "round_out": True}
            call = ALTUP_SM90.call("correct", **args, rounds=rounds)
            inputs = [f32(streams), f32(activated), *weights, as_bf16(w[at + "correction_coefs"])]
        out = torch.zeros(streams.shape, dtype=torch.float32)
        launch(call.file.entry, call.workgroups, *inputs, out, *call.constants, **dict(call.file.constexprs))
        return out.numpy()

    return kernel


def same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.shape == b.shape
    differ = a.view(np.uint32) != b.view(np.uint32)
    assert not differ.any(), f"{differ.sum()} of {differ.size} values differ"


@pytest.mark.parametrize(
    "cfg, tokens", [(TINY, 1), (TINY, 3), (E4B, 1), (E4B, 2)], ids=["tiny1", "tiny3", "e4b1", "e4b2"]
)
def test_predict_is_the_emulation_bit_for_bit(run, cfg, tokens):
    w, streams, _ = random_layer(cfg, tokens, seed=tokens)
    expected = D.altup_predict(MLX_CUDA_V1, cfg, w, LAYER, streams, D.IREE_MATH)
    same_bits(run("predict", cfg, w, streams, None), expected)


@pytest.mark.parametrize(
    "cfg, tokens", [(TINY, 1), (TINY, 3), (E4B, 1), (E4B, 2)], ids=["tiny1", "tiny3", "e4b1", "e4b2"]
)
def test_correct_is_the_emulation_bit_for_bit(run, cfg, tokens):
    w, predictions, activated = random_layer(cfg, tokens, seed=10 + tokens)
    expected = D.altup_correct(MLX_CUDA_V1, cfg, w, LAYER, predictions, activated, D.IREE_MATH)
    same_bits(run("correct", cfg, w, predictions, activated), expected)


def test_the_coefficients_order_shows(run):
    """The emulation's left-to-right coefficient sums are what the kernel matches: the same kernel output
    against coefficients added in another order differs (so the bit-for-bit checks can fail)."""
    cfg = TINY
    w, streams, _ = random_layer(cfg, 3, seed=3)
    at = f"layers.{LAYER}.altup.prediction_coefs"
    reversed_w = dict(w)
    reversed_w[at] = w[at][:, ::-1].copy()
    modalities = D.router(MLX_CUDA_V1, cfg, w, f"layers.{LAYER}.", streams[cfg.altup_active_idx], D.IREE_MATH)
    forward = D.sequential_matmul(modalities, np.clip(w[at], -120, 120))
    backward = D.sequential_matmul(modalities[:, ::-1], np.clip(reversed_w[at], -120, 120))
    assert (forward != backward).any()


@pytest.mark.parametrize("threads", [32, 256])
@pytest.mark.parametrize("step", ["predict", "correct"])
def test_ptx_is_committed_and_takes_irees_parameters(step, threads, tmp_path):
    file = (ALTUP_SM90.predict if step == "predict" else ALTUP_SM90.correct)[threads]
    ptx = rebuilt_ptx(file, tmp_path)
    pointers = len(file.signature.pointers)
    assert entry_parameters(ptx, file.entry) == [".u64"] * pointers + [".u32"] * len(file.signature.constants)
    ops = f32_arithmetic(ptx)
    assert set(ops) <= {"mul.rn.f32", "add.rn.f32", "sub.rn.f32", "fma.rn.f32", "div.rn.f32"}  # each rounds alone
    # the norm's two divisions, then per modality IREE's tanh: 9 fused multiply-adds and a division
    assert ops.count("fma.rn.f32") == 9 * STREAMS and ops.count("div.rn.f32") == 2 + STREAMS
    assert file.constexpr("N") == STREAMS
