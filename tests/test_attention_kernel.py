"""The committed attention kernel (kernels/attention_triton.py) computes the template's attention.

Its Triton source runs in Triton's interpreter against the contract's emulation of the attention
between the projections (the query scale, then `contracts.encoder.attention_core` with IREE's exp and
tanh from `contracts.iree_math`), bit for bit. The products' accumulation order is the one freedom the
contract leaves, so the data make every product sum exact in F32 (multiples of 1/16 for the
logits), and the values are one-hot per dimension, which makes each attended value one probability
itself: every probability of every query is compared exactly. The PTX is rebuilt byte for byte and
checked for the arithmetic the exactness needs; the attention emits one dispatch for all of it.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from kernel_files import entry_parameters, f32_arithmetic, rebuilt_ptx
from triton_interpreter import interpreted_kernels

from gemma3n_iree.contracts import iree_math
from gemma3n_iree.contracts.emulation import BF16_MIN, round_bf16
from gemma3n_iree.contracts.encoder import attention_core
from gemma3n_iree.contracts.policy import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.emitters.kernels import select_kernels
from gemma3n_iree.emitters.probe import probe_module
from gemma3n_iree.kernels import ATTENTION_SM90

SM90 = parse_target("cuda", "sm_90")
CAP = 50.0


def _bits(value: float) -> int:
    return int(np.float32(value).view(np.int32))


def _case(clips: int, frames: int, heads: int, head_dim: int, chunk: int, past: int, seed: int):
    """Queries, a per-dimension scale (3 * 2^-j: the scaled queries are exact), keys and positions
    whose products sum exactly in F32 (multiples of 2^-11 below 2^11; query rows scaled by 1/4, 1/16
    or 1/64 so that some rows saturate the cap and underflow exp and others spread their
    probability), values that are one-hot per dimension and NaN at some invalid frames (which the
    kernel must zero), a validity mask with short clips, holes and one clip without any valid frame."""
    rng = np.random.default_rng(seed)
    row_scale = 4.0 ** -rng.integers(1, 4, (clips, frames, heads, 1))
    q = rng.integers(-16, 17, (clips, frames, heads, head_dim)) * row_scale
    k = rng.integers(-4, 5, (clips, frames, heads, head_dim)) / 4
    pos = rng.integers(-4, 5, (past + 1, heads, head_dim)) / 4
    valid = np.arange(frames)[None, :] < rng.integers(frames // 2, frames + 1, clips)[:, None]
    valid[:, rng.integers(0, frames, 3)] = False
    valid[-1] = False if clips > 1 else valid[-1]
    context = chunk + past
    one_hot = (np.arange(frames)[:, None] % context) == (np.arange(head_dim)[None, :] % context)
    v = np.where(valid[:, :, None, None], one_hot[None, :, None, :], np.nan)
    v = np.broadcast_to(v, (clips, frames, heads, head_dim))
    scale = 3 * 2.0 ** -rng.integers(1, 4, head_dim)
    return [np.ascontiguousarray(a, np.float32) for a in (q, scale, k, v, pos)] + [valid]


def _bf16(x: np.ndarray):
    import torch

    return torch.from_numpy(np.ascontiguousarray(x.astype(ml_dtypes.bfloat16)).view(np.int16)).view(torch.bfloat16)


@pytest.mark.parametrize(
    "clips,frames,heads,head_dim,chunk,past",
    [
        (2, 25, 2, 32, 12, 12),  # the tiny configuration: a partial last block
        (1, 37, 8, 192, 12, 12),  # the real head width
        (3, 7, 1, 16, 4, 8),  # odd sizes, three blocks of context, a clip with no valid frame
    ],
)
def test_kernel_computes_the_template_attention(clips, frames, heads, head_dim, chunk, past):
    launch = interpreted_kernels("attention_triton.py")  # skips without triton and torch
    import torch

    q, scale, k, v, pos, valid = _case(clips, frames, heads, head_dim, chunk, past, seed=frames)
    with np.errstate(over="ignore", invalid="ignore"):
        want = attention_core(
            MLX_CUDA_V1,
            round_bf16(q * scale),
            k,
            v,
            pos,
            valid,
            chunk,
            past,
            CAP,
            exp=iree_math.exp,
            tanh=iree_math.tanh,
        )
    got = torch.full(q.shape, float("nan"), dtype=torch.bfloat16)  # every value must be written
    blocks = -(-frames // chunk)
    with np.errstate(over="ignore", invalid="ignore"):
        launch(
            "attention_core",
            clips * blocks * heads,
            _bf16(q),
            torch.from_numpy(scale),
            _bf16(k),
            _bf16(v),
            _bf16(pos),
            torch.from_numpy(valid.astype(np.int32)),
            got,
            frames,
            blocks,
            heads,
            head_dim,
            chunk,
            past,
            _bits(CAP),
            _bits(BF16_MIN),
            ROWS=ATTENTION_SM90.rows,
            SLOTS=ATTENTION_SM90.slots,
            DIMS=ATTENTION_SM90.dims,
        )
    got_bits = got.view(torch.int16).numpy().astype(np.uint16).astype(np.uint32) << 16
    assert np.array_equal(got_bits, want.view(np.uint32))
    assert np.count_nonzero((want > 0) & (want < 1)) > want.size // 10  # probabilities strictly inside (0, 1)


def test_rebuilding_gives_the_committed_bytes_and_the_dispatch_abi(tmp_path):
    ptx = rebuilt_ptx(ATTENTION_SM90.file, tmp_path)
    assert entry_parameters(ptx, "attention_core") == [".u64"] * 7 + [".u32"] * 8


def test_the_ptx_does_the_arithmetic_exactness_needs():
    """Every F32 multiply, add and subtract rounds on its own (`.rn`: ptxas may not fuse them), the
    only fused multiply-adds are IREE's exp and tanh (18 per logit, 4 logits per thread), divisions
    are IEEE, no approximate transcendental is used, and the products run on BF16 tensor cores.

    The floor takes the `.ftz` form Triton emits; its input x log2(e) + 1/2 is never subnormal (an
    exact F32 product plus 1/2 is 0 or at least 2^-49 in magnitude), so flushing cannot change it."""
    ptx = ATTENTION_SM90.file.ptx_path().read_text()
    ops = f32_arithmetic(ptx)
    assert {op for op in ops if not op.startswith("div")} <= {"mul.rn.f32", "add.rn.f32", "sub.rn.f32", "fma.rn.f32"}
    assert ops.count("fma.rn.f32") == 18 * 4
    assert {op for op in ops if op.startswith("div")} == {"div.rn.f32"}
    assert not re.search(r"\b(ex2|lg2|tanh|rcp|rsqrt|sqrt)\.approx", ptx)
    assert set(re.findall(r"\bcvt\.rmi[a-z0-9.]*", ptx)) == {"cvt.rmi.ftz.f32.f32"}
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in ptx


def test_the_attention_is_one_dispatch_between_its_projections():
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    text = probe_module(MLX_CUDA_V1, lambda e: e.attention(8, 750, 1536, 8, 12, 12, CAP, 1e-6, 1e10), kernels=linked)
    heads = "tensor<8x750x8x192xbf16>"
    calls = re.findall(
        rf'hal.dispatch.extern "attention_core"\(%[\w-]+(?:, %[\w-]+){{13}}\) : \({heads}, '
        rf"tensor<192xf32>, {heads}, {heads}, tensor<13x8x192xbf16>, tensor<8x750xi32>(?:, i32){{8}}\) "
        rf"-> {heads}",
        text,
    )
    assert len(calls) == 1
    assert "arith.constant 4032 : index" in text  # one workgroup per (clip, block, head): 8 * 63 * 8
    for gone in (
        "stablehlo.dot_general",
        "stablehlo.transpose",
        "stablehlo.tanh",
        '"lane_xor_sum"',
        "tensor<8x750x8x192xf32>",
    ):  # nor F32 heads
        assert gone not in text
    assert not re.search(r"stablehlo.select [^\n]*8x750x8x192", text)  # the kernel zeroes invalid values
    assert text.count("stablehlo.exponential") == 1  # the per-dimension scale's softplus, on 192 values
    # the BF16 result goes to the output projection's GEMM as it is (no F32 round trip)
    assert not re.search(rf"stablehlo.convert %\w+ : \({heads}\) -> tensor<8x750x8x192xf32>", text)
    assert len(re.findall(r'hal.dispatch.extern "gemm_bf16_nt"\(%\w+, %\w+,', text)) == 5  # q, k, v, positions, output
    plain = probe_module(MLX_CUDA_V1, lambda e: e.attention(8, 750, 1536, 8, 12, 12, CAP, 1e-6, 1e10))
    assert "attention_core" not in plain
    assert plain.count("stablehlo.dot_general") == 5 + 3  # the five linear layers and the attention's three


def test_an_f32_contract_keeps_iree_attention():
    """The kernel multiplies BF16 operands and rounds to BF16; under f32-reference neither holds."""
    linked = select_kernels("auto", SM90, F32_REFERENCE)
    text = probe_module(F32_REFERENCE, lambda e: e.attention(2, 25, 64, 2, 12, 12, CAP, 1e-6, 1e10), kernels=linked)
    assert "attention_core" not in text and '"lane_xor_sum"' in text  # the row kernels still serve it
    assert not re.search(r"hal.dispatch.extern [^\n]*-> tensor<[0-9x]*bf16>", text)  # nothing comes back as BF16
