"""The light convolution's kernels compute the template's light convolution bit for bit.

`glu_depthwise` (kernels/conv_triton.py) and the norm kernel's SiLU variant
(kernels/reductions_triton.py) run in Triton's interpreter against the contract's emulation, with
IREE's own logistic (`contracts.iree_math`): the GLU, the causal taps summed in tap order from the
first product, the rounding points. The PTX is rebuilt byte for byte; the light convolution emits
one dispatch for the GLU and taps and one for the norm and its SiLU.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from kernel_files import assert_only_irees_exp_is_fused, entry_parameters, rebuilt_ptx
from triton_interpreter import interpreted_kernels

from gemma3n_iree.contracts import iree_math
from gemma3n_iree.contracts.emulation import clamp, rms_norm, round_bf16
from gemma3n_iree.contracts.policy import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.emitters.kernels import select_kernels
from gemma3n_iree.emitters.probe import probe_module
from gemma3n_iree.kernels import GLU_DEPTHWISE_SM90, RMS_NORMS_SM90, rms_norm_call

SM90 = parse_target("cuda", "sm_90")


def _bf16(x: np.ndarray):
    import torch

    return torch.from_numpy(np.ascontiguousarray(x.astype(ml_dtypes.bfloat16)).view(np.int16)).view(torch.bfloat16)


def _glu_taps(gates: np.ndarray, taps: np.ndarray) -> np.ndarray:
    """The light-conv template from its start projection to the rounded convolution, IREE's logistic."""
    t, d = gates.shape[1], gates.shape[2] // 2
    glu = round_bf16(gates[..., :d] * iree_math.logistic(gates[..., d:]))
    padded = np.pad(glu, [(0, 0), (taps.shape[0] - 1, 0), (0, 0)])
    acc = (padded[:, 0:t] * taps[0]).astype(np.float32)
    for j in range(1, taps.shape[0]):
        acc = (acc + (padded[:, j : j + t] * taps[j]).astype(np.float32)).astype(np.float32)
    return round_bf16(acc)


@pytest.mark.parametrize("clips,frames,channels,taps", [(2, 25, 64, 5), (1, 37, 1536, 5), (3, 7, 48, 3)])
def test_glu_depthwise_is_the_templates_glu_and_taps(clips, frames, channels, taps):
    launch = interpreted_kernels("conv_triton.py")  # skips without triton and torch
    import torch

    rng = np.random.default_rng(frames)
    gates = round_bf16(
        rng.standard_normal((clips, frames, 2 * channels)) * np.exp2(rng.integers(-4, 5, (clips, frames, 2 * channels)))
    )
    weights = round_bf16(rng.standard_normal((taps, channels)) * 0.3)
    # Zero values at the first frame and negative taps on some channels: every product there is -0, so
    # the result is -0 only if the sum starts from the first product (as the template's does), not from +0.
    gates[0, 0, :channels] = 0.0
    weights[:, :8] = -np.abs(weights[:, :8])
    with np.errstate(over="ignore"):
        want = _glu_taps(gates, weights)
    got = torch.full((clips, frames, channels), float("nan"))
    launch(
        "glu_depthwise",
        GLU_DEPTHWISE_SM90.workgroups(clips, frames, channels),
        _bf16(gates),
        torch.from_numpy(weights),
        got,
        frames,
        channels,
        taps,
        FRAMES=GLU_DEPTHWISE_SM90.frames,
        CHANNELS=GLU_DEPTHWISE_SM90.channels,
    )
    assert np.array_equal(got.numpy().view(np.uint32), want.view(np.uint32))
    assert (np.signbit(want) & (want == 0)).any()  # negative zeros are among the compared values


def test_norm_kernel_applies_the_silu_after_the_norm():
    launch = interpreted_kernels("reductions_triton.py")
    import torch

    rng = np.random.default_rng(3)
    rows, width = 19, 1536
    x = (rng.standard_normal((rows, width)) * np.exp2(rng.integers(-8, 8, (rows, width)))).astype(np.float32)
    w = round_bf16(rng.standard_normal(width))
    kernel = RMS_NORMS_SM90["silu_bf16", 256]
    got = torch.zeros((rows, width), dtype=torch.bfloat16)
    bits = lambda v: int(np.float32(v).view(np.int32))  # noqa: E731
    launch(
        "rms_norm",
        kernel.workgroups(rows),
        torch.from_numpy(x),
        _bf16(w),
        got,
        rows,
        width,
        bits(1e-6),
        bits(10.0),
        1,
        THREADS=kernel.block_threads,
        ROWS_PER_BLOCK=kernel.rows_per_workgroup,
        SILU=True,
    )
    y = rms_norm(MLX_CUDA_V1, clamp(x, 10.0), w, 1e-6)
    want = round_bf16(y * iree_math.logistic(y))
    got_bits = got.view(torch.int16).numpy().astype(np.uint16).astype(np.uint32) << 16
    assert np.array_equal(got_bits, want.view(np.uint32))


def test_rebuilding_gives_the_committed_bytes_and_the_dispatch_abi(tmp_path):
    ptx = rebuilt_ptx(GLU_DEPTHWISE_SM90.file, tmp_path)
    assert entry_parameters(ptx, "glu_depthwise") == [".u64"] * 3 + [".u32"] * 3
    assert_only_irees_exp_is_fused(ptx)
    assert set(re.findall(r"\bcvt\.rmi[a-z0-9.]*", ptx)) == {"cvt.rmi.ftz.f32.f32"}  # exp's floor (see attention)


def test_the_light_convolution_is_two_kernels_between_its_projections():
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    build = lambda e: e.light_conv(8, 750, 1536, 5, 1e-6, 1e10, "d1k")  # noqa: E731
    text = probe_module(MLX_CUDA_V1, build, kernels=linked)
    assert re.search(
        r'hal.dispatch.extern "glu_depthwise"\([^)]*\) : \(tensor<8x750x3072xbf16>, tensor<5x1536xf32>, '
        r"i32, i32, i32\) -> tensor<8x750x1536xf32>",
        text,
    )
    assert "arith.constant 4512 : index" in text  # 8 clips x 47 blocks of 16 frames x 12 blocks of 128 channels
    assert str(RMS_NORMS_SM90["silu_bf16", 256].file.ptx_path()) in text
    for gone in ("stablehlo.logistic", "stablehlo.pad", "stablehlo.slice"):
        assert gone not in text
    plain = probe_module(MLX_CUDA_V1, build)
    assert "stablehlo.logistic" in plain and "stablehlo.pad" in plain


def test_an_f32_contract_keeps_irees_light_convolution():
    """The GLU kernel and the norm's SiLU variant round to BF16; under f32-reference neither is linked."""
    linked = select_kernels("auto", SM90, F32_REFERENCE)
    norm = lambda output: rms_norm_call(output, 256, 6000, 1536, "bf16", 1e-6, 10.0, rounds=False)  # noqa: E731
    assert not linked.links(GLU_DEPTHWISE_SM90.file) and linked.launch(norm("silu_bf16")) is None
    assert linked.launch(norm("f32")) is not None  # the plain norms still serve it
    text = probe_module(F32_REFERENCE, lambda e: e.light_conv(2, 25, 64, 5, 1e-6, 1e10, "d1k"), kernels=linked)
    assert "glu_depthwise" not in text and "stablehlo.logistic" in text
