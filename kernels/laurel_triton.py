"""LAuReL's tail in one kernel (build time only: imports triton): from the left linear's partial sums to the layer's
LAuReL output, one program per token.

`laurel.mlir.j2` at a decode step was four dispatches after the left linear's decode-linear kernel: the partials'
sum (IREE's reduction), the right linear (IREE's `vecmat_2048x64`), the norm kernel and the residual (fused by IREE
into the attention residual's elementwise). Here:

* left = round(P[0] + ... + P[S-1]) per rank column (the left linear's partials in split order: a linear's
  accumulation order is the contract's freedom), its BF16 operand;
* right = round(left . R[c]) for every column c, the products added in rank chunks of 8 (the same freedom);
* out = round(X + norm(right)), the norm the decoder's two-rounding norm on the contract's schedule
  (`reductions_triton._mlx_norm_of`, the partials-norm kernel's code), X the layer's normalized input (BF16).

Every product and add rounds on its own (FMA contraction is off in the build). RANK (64 in E2B and E4B) is compiled
in; a row is THREADS x 8 columns (`lane_threads(width, 8)`), the ones past `width` masked.
"""

from __future__ import annotations

import triton
import triton.language as tl

from gemma3n_iree.kernels.reductions_triton import _mlx_norm_of
from gemma3n_iree.kernels.triton_numerics import _add, _round_to_bf16


@triton.jit
def laurel_tail(
    p_ptr,
    r_ptr,
    w_ptr,
    x_ptr,
    out_ptr,
    tokens,
    width,
    splits,
    eps_bits,
    round_bf16,
    round_residual,
    THREADS: tl.constexpr,
    RANK: tl.constexpr,
    MAX_SPLITS: tl.constexpr,
):
    # One program per token t; P is [splits, tokens, RANK] F32, R [width, RANK] and X [tokens, width] BF16.
    t = tl.program_id(0)
    col = tl.arange(0, THREADS * 8)
    live = col < width
    chunk = tl.arange(0, 8)
    right = tl.full((THREADS * 8,), 0.0, tl.float32)
    for c in tl.static_range(RANK // 8):
        k = c * 8 + chunk
        left = tl.full((8,), 0.0, tl.float32)
        for s in tl.static_range(MAX_SPLITS):
            at = (s * tokens + t) * RANK + k
            left = left + tl.load(p_ptr + at, mask=tl.full((8,), s, tl.int32) < splits, other=0.0)
        if round_bf16:
            left = _round_to_bf16(left)
        operand = _round_to_bf16(left)  # the right linear's BF16 operand (a BF16 value passes unchanged)
        r = tl.load(r_ptr + col[:, None].to(tl.int64) * RANK + k[None, :], mask=live[:, None], other=0.0)
        right = right + tl.reduce(r.to(tl.float32) * operand[None, :], 1, _add)
    if round_bf16:
        right = _round_to_bf16(right)
    y = _mlx_norm_of(right[None, :], w_ptr, col, width, eps_bits, round_bf16, 1, THREADS)
    row = t.to(tl.int64) * width + col
    x = tl.load(x_ptr + row, mask=live, other=0.0).to(tl.float32)
    out = x + tl.reshape(y, (THREADS * 8,))
    if round_residual:
        out = _round_to_bf16(out)
    tl.store(out_ptr + row, out, mask=live)
