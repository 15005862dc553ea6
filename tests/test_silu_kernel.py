"""The committed SiLU kernel (kernels/activation_triton.py) is the template's SiLU, bit for bit.

Its Triton source runs in Triton's interpreter on every BF16 value (NaN, infinities and subnormals
included) against round(x * logistic(x)) with IREE's logistic (`contracts.iree_math`); the PTX is
rebuilt byte for byte; the feed-forward applies it to the up-projection's BF16 result and hands
the down-projection BF16.
"""

from __future__ import annotations

import re

import numpy as np
from kernel_files import assert_only_irees_exp_is_fused, entry_parameters, rebuilt_ptx
from triton_interpreter import interpreted_kernels

from gemma3n_iree.contracts import iree_math
from gemma3n_iree.contracts.emulation import round_bf16
from gemma3n_iree.contracts.policy import MLX_CUDA_V1
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.emitters.kernels import select_kernels
from gemma3n_iree.emitters.probe import probe_module
from gemma3n_iree.kernels import SILU_SM90

SM90 = parse_target("cuda", "sm_90")


def test_kernel_is_the_templates_silu_on_every_bf16_value():
    launch = interpreted_kernels("activation_triton.py")  # skips without triton and torch
    import torch

    bits = np.arange(1 << 16, dtype=np.uint16)
    x = (bits.astype(np.uint32) << 16).view(np.float32)
    got = torch.full((x.size,), float("nan"), dtype=torch.bfloat16)
    with np.errstate(all="ignore"):
        launch(
            "silu_bf16",
            SILU_SM90.workgroups(x.size),
            torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16),
            got,
            x.size,
            BLOCK=SILU_SM90.block,
        )
        want = round_bf16(x * iree_math.logistic(x))
    got_bits = got.view(torch.int16).numpy().view(np.uint16)
    want_bits = (want.view(np.uint32) >> 16).astype(np.uint16)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got.float().numpy()), nan)
    assert np.array_equal(got_bits[~nan], want_bits[~nan])


def test_rebuilding_gives_the_committed_bytes_and_the_dispatch_abi(tmp_path):
    ptx = rebuilt_ptx(SILU_SM90.file, tmp_path)
    assert entry_parameters(ptx, "silu_bf16") == [".u64"] * 2 + [".u32"]
    assert_only_irees_exp_is_fused(ptx)
    assert re.findall(r"\b(?:ld|st)\.global[a-z0-9.]*", ptx) == ["ld.global.v4.b32"] * 4 + ["st.global.v4.b32"] * 4


def test_the_feed_forward_activation_is_one_kernel_between_bf16_gemms():
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    build = lambda e: e.feed_forward(8, 750, 1536, 1e-6, 1e10, 0.5)  # noqa: E731
    text = probe_module(MLX_CUDA_V1, build, kernels=linked)
    assert re.search(
        r'hal.dispatch.extern "silu_bf16"\(%\w+, %\w+\) : \(tensor<36864000xbf16>, i32\) '
        r"-> tensor<36864000xbf16>",
        text,
    )
    assert "arith.constant 9000 : index" in text  # 36,864,000 values / 4096
    assert "stablehlo.logistic" not in text and "xf32> -> tensor<6000x6144" not in text
    assert "stablehlo.logistic" in probe_module(MLX_CUDA_V1, build)
