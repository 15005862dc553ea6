"""The committed context-window kernel (kernels/windows_triton.py) copies exactly the template's windows.

Its Triton source runs in Triton's interpreter against a numpy statement of the windows (slot c of
query block u holds frame u * chunk + c - past, zero outside the clip); the PTX is rebuilt byte for
byte; the attention emits it for keys and values and feeds the batched matmuls from it directly.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

from gemma3n_iree.contracts.policy import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.emitters.kernels import select_kernels
from gemma3n_iree.emitters.probe import probe_module
from gemma3n_iree.kernels import WINDOWS_SM90
from gemma3n_iree.kernels.build import build_windows

from triton_interpreter import interpreted_kernels

SM90 = parse_target("cuda", "sm_90")


def _windows(x: np.ndarray, chunk: int, past: int) -> np.ndarray:
    """[B, T, H, hd] -> [B, U, H, chunk + past, hd]: the definition, one slot at a time."""
    b, t, h, hd = x.shape
    blocks, context = -(-t // chunk), chunk + past
    out = np.zeros((b, blocks, h, context, hd), x.dtype)
    for u in range(blocks):
        for c in range(context):
            frame = u * chunk + c - past
            if 0 <= frame < t:
                out[:, u, :, c] = x[:, frame]
    return out


@pytest.mark.parametrize("clips,frames,heads,head_dim,chunk,past", [
    (2, 25, 2, 32, 12, 12),   # the tiny configuration: a partial last block
    (1, 37, 8, 192, 12, 12),  # the real head width
    (3, 7, 1, 5, 4, 8),       # odd sizes, three blocks of context
])
def test_kernel_writes_the_windows(clips, frames, heads, head_dim, chunk, past):
    launch = interpreted_kernels("windows_triton.py")  # skips without triton and torch
    import torch

    x = np.random.default_rng(frames).standard_normal((clips, frames, heads, head_dim)).astype(ml_dtypes.bfloat16)
    want = _windows(x, chunk, past)
    got = torch.full(want.shape, float("nan"), dtype=torch.bfloat16)  # every slot must be written
    source = torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
    blocks = want.shape[1]
    launch("context_windows", clips * blocks * heads, source, got, frames, blocks, heads, head_dim, chunk, past,
           chunk + past, SLOTS=WINDOWS_SM90.slots, DIMS=WINDOWS_SM90.dims)
    assert np.array_equal(got.view(torch.int16).numpy(), want.view(np.int16))


def test_rebuilding_gives_the_committed_bytes_and_the_dispatch_abi(tmp_path):
    pytest.importorskip("triton", reason="the `kernels` extra (triton) rebuilds the PTX")
    build_windows(WINDOWS_SM90, tmp_path)
    for path in (WINDOWS_SM90.file.ptx_path(), WINDOWS_SM90.file.manifest_path()):
        assert (tmp_path / path.name).read_bytes() == path.read_bytes()
    ptx = WINDOWS_SM90.file.ptx_path().read_text()
    entry = re.search(r"\.visible \.entry context_windows\((.*?)\n\)", ptx, re.S)
    assert [p.strip().split()[1] for p in entry.group(1).strip().split(",")] == [".u64"] * 2 + [".u32"] * 7


def test_the_attention_reads_its_key_and_value_windows_from_the_kernel():
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    text = probe_module(MLX_CUDA_V1, lambda e: e.attention(8, 750, 1536, 8, 12, 12, 50.0, 1e-6, 1e10),
                        kernels=linked)
    calls = re.findall(r'hal.dispatch.extern "context_windows"\(%\w+(?:, %\w+){7}\) : \(tensor<8x750x8x192xbf16>'
                       r"(?:, i32){7}\) -> tensor<8x63x8x24x192xbf16>", text)
    assert len(calls) == 2  # keys and values
    assert "arith.constant 4032 : index" in text  # one workgroup per (clip, block, head): 8 * 63 * 8
    plain = probe_module(MLX_CUDA_V1, lambda e: e.attention(8, 750, 1536, 8, 12, 12, 50.0, 1e-6, 1e10))
    assert "context_windows" not in plain
    # IREE's version concatenates two blocks for keys and for values; the kernel version concatenates
    # only the key-validity mask, as both do.
    assert plain.count("stablehlo.concatenate") - text.count("stablehlo.concatenate") == 2


def test_an_f32_contract_keeps_iree_windows():
    """The kernel copies BF16 operands; under f32-reference the operands are F32, so IREE builds them."""
    linked = select_kernels("auto", SM90, F32_REFERENCE)
    text = probe_module(F32_REFERENCE, lambda e: e.attention(2, 25, 64, 2, 12, 12, 50.0, 1e-6, 1e10), kernels=linked)
    assert "context_windows" not in text and '"lane_xor_sum"' in text  # the row kernels still serve it
    assert not re.search(r"hal.dispatch.extern [^\n]*-> tensor<[0-9x]*bf16>", text)  # nothing comes back as BF16
