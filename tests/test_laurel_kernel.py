"""The committed LAuReL tail kernel (kernels/laurel_triton.py) computes the decoder's LAuReL exactly.

The kernel's Triton source runs here in Triton's interpreter (numpy arithmetic, IEEE F32, no FMA) on the left
linear's partial sums, against the emulation (`contracts.decoder_ops.laurel`) bit for bit: both linears rounded to
BF16 (their F32 order is the contract's freedom: the emulation sums exactly, the kernel its partials in split order
and its rank in chunks, and both round to the same BF16 on these rows), the norm on the contract's schedule, the
residual rounded. The PTX rebuilds byte for byte and takes the parameter list IREE's custom dispatch passes.
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
from gemma3n_iree.kernels.laurel import LAUREL_SM90, RANK
from gemma3n_iree.model.decoder_config import builtin_decoder_config

E4B = builtin_decoder_config("e4b")
LAYER = 2
SPLITS = 16


def bf16_values(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def split_partials(xn: np.ndarray, w_left: np.ndarray, splits: int) -> np.ndarray:
    """[splits, tokens, rank]: each K range's products summed exactly, as F32 (what the decode-linear kernel hands
    over, up to its own F32 order within a range)."""
    ranges = np.split(np.arange(xn.shape[-1]), splits)
    return np.stack([(xn[:, r].astype(np.float64) @ w_left[:, r].T.astype(np.float64)) for r in ranges]).astype(
        np.float32
    )


@pytest.fixture(scope="module")
def run():
    launch = interpreted_kernels("laurel_triton.py")  # skips without triton and torch
    import torch

    def as_bf16(a: np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(a).astype(ml_dtypes.bfloat16).view(np.int16)).view(torch.bfloat16)

    def kernel(partials: np.ndarray, w_right: np.ndarray, w_norm: np.ndarray, xn: np.ndarray) -> np.ndarray:
        splits, tokens, rank = partials.shape
        width = xn.shape[1]
        call = LAUREL_SM90.call(
            lane_threads(width, 8),
            tokens,
            width,
            rank,
            splits,
            E4B.rms_norm_eps,
            {"round_bf16": True, "round_residual": True},
        )
        out = torch.zeros((tokens, width), dtype=torch.float32)
        inputs = [torch.from_numpy(np.ascontiguousarray(partials)), as_bf16(w_right), as_bf16(w_norm), as_bf16(xn)]
        launch(call.file.entry, call.workgroups, *inputs, out, *call.constants, **dict(call.file.constexprs))
        return out.numpy()

    return kernel


@pytest.mark.parametrize("tokens", [1, 3])
def test_the_tail_is_the_emulations_laurel_bit_for_bit(run, tokens):
    rng = np.random.default_rng(tokens)
    d = E4B.hidden_size
    at = f"layers.{LAYER}.laurel."
    w = {
        at + "linear_left": bf16_values(rng.standard_normal((RANK, d)) / np.sqrt(d)),
        at + "linear_right": bf16_values(rng.standard_normal((d, RANK)) / np.sqrt(RANK)),
        at + "post_laurel_norm": bf16_values(1 + 0.1 * rng.standard_normal(d)),
    }
    xn = bf16_values(rng.standard_normal((tokens, d)) * np.exp(rng.uniform(-3, 3, (tokens, 1))))
    expected = D.laurel(MLX_CUDA_V1, E4B, w, LAYER, xn)
    got = run(split_partials(xn, w[at + "linear_left"], SPLITS), w[at + "linear_right"], w[at + "post_laurel_norm"], xn)
    differ = got.view(np.uint32) != expected.view(np.uint32)
    assert not differ.any(), f"{differ.sum()} of {differ.size} values differ"


def test_the_right_linear_is_read_in_the_weights_layout(run):
    """The kernel reads R as [width, rank]: the same weight with its rank columns permuted gives another output."""
    rng = np.random.default_rng(7)
    d = E4B.hidden_size
    w_left = bf16_values(rng.standard_normal((RANK, d)) / np.sqrt(d))
    w_right = bf16_values(rng.standard_normal((d, RANK)) / np.sqrt(RANK))
    w_norm = bf16_values(np.ones(d))
    xn = bf16_values(rng.standard_normal((1, d)))
    base = run(split_partials(xn, w_left, SPLITS), w_right, w_norm, xn)
    order = rng.permutation(RANK)
    assert (run(split_partials(xn, w_left, SPLITS), w_right[:, order], w_norm, xn) != base).any()


@pytest.mark.parametrize("threads", [256])
def test_ptx_is_committed_and_takes_irees_parameters(threads, tmp_path):
    file = LAUREL_SM90.files[threads]
    ptx = rebuilt_ptx(file, tmp_path)
    assert entry_parameters(ptx, file.entry) == [".u64"] * len(file.signature.pointers) + [".u32"] * len(
        file.signature.constants
    )
    ops = f32_arithmetic(ptx)
    assert set(ops) <= {"mul.rn.f32", "add.rn.f32", "div.rn.f32"}  # each rounds alone: no fused multiply-add
