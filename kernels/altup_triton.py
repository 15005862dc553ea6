"""AltUp's predict and correct steps of a decoder layer, each in one kernel (build time only: imports triton).

In IREE's code each step is six or five dispatches per layer (the router's norm, its scaled BF16 operand, the
router's decode linear, the partials' sum with tanh and the coefficients, then the streams' mix), a few
microseconds of work each: a decode step of E4B launched 315 of them. Here one program per token does the whole
step of `altup_predict.mlir.j2` / `altup_correct.mlir.j2` around the router of `altup_router.mlir.j2`:

* the router's RMS norm of the token's row of X (the active stream, or the activated output), the same code as the
  norm kernel's MLX variant (`reductions_triton._normalized`), times `scale`, rounded (`router.scale`);
* the router's linear: the BF16 operand against each of the 4 router rows, F32 products added in a tree (a
  linear's accumulation order is the contract's freedom), rounded; tanh in IREE's arithmetic, kept F32;
* the coefficients, clip(W) as F32, each the 4 modalities' products added left to right (`sequential`);
* predict: out_i = round((((C_i0 X_0 + C_i1 X_1) + C_i2 X_2) + C_i3 X_3) + X_i);
  correct: out_i = round(innovation * (C_i + 1) + P_i), innovation = round(A - P_active).

Every product and add rounds on its own (FMA contraction is off in the build). The four modalities come out of
their vector by splits (`_four`), not by sums with zeros, so no sign of a zero changes on the way. AltUp has 4
streams in every Gemma 3n configuration; N is compiled in and must be 4. `THREADS` is the norm's schedule block
(`lane_threads(width, 8)`), so a row is THREADS x 8 columns, the ones past `width` masked.
"""

from __future__ import annotations

import triton
import triton.language as tl

from gemma3n_iree.kernels.reductions_triton import _clamp, _normalized
from gemma3n_iree.kernels.triton_numerics import _add, _iree_tanh, _round_to_bf16


@triton.jit
def _four(v):
    """The four scalars of a [4] vector, exactly (reshapes and splits, no arithmetic)."""
    even, odd = tl.split(tl.reshape(v, (2, 2)))  # [v0, v2], [v1, v3]
    v0, v2 = tl.split(even)
    v1, v3 = tl.split(odd)
    return v0, v1, v2, v3


@triton.jit
def _modalities(
    x_ptr,
    row,
    rows,
    w_norm_ptr,
    w_router_ptr,
    width,
    eps_bits,
    scale_bits,
    round_bf16,
    round_scale,
    THREADS: tl.constexpr,
    N: tl.constexpr,
):
    """tanh(round(round(round(norm(X[row]) * scale) as BF16 . W_router[k]))) for k < N: the router's [N] F32
    modalities of one row of X [rows, width]."""
    y, _, _ = _normalized(
        x_ptr,
        w_norm_ptr,
        row + tl.full((1,), 0, tl.int32),
        rows,
        width,
        eps_bits,
        tl.full((), 0x7F800000, tl.int32),  # no clamp (+inf)
        round_bf16,
        1,
        THREADS,
        True,
    )
    scaled = y * scale_bits.to(tl.float32, bitcast=True)
    if round_scale:
        scaled = _round_to_bf16(scaled)
    operand = _round_to_bf16(scaled)  # the linear's BF16 operand (a BF16 value passes unchanged)
    col = tl.arange(0, THREADS * 8)
    k = tl.arange(0, N)
    w = tl.load(w_router_ptr + k[:, None] * width + col[None, :], mask=col[None, :] < width, other=0.0)
    routed = tl.reduce(operand * w.to(tl.float32), 1, _add)  # past `width`: 0 * 0
    if round_bf16:
        routed = _round_to_bf16(routed)
    return _iree_tanh(routed)


@triton.jit
def _coefficient(w_ptr, at, clip, m0, m1, m2, m3):
    """((m0 W[at] + m1 W[at + 1]) + m2 W[at + 2]) + m3 W[at + 3], W clipped to +-clip as F32 (`at`: a vector)."""
    acc = m0 * _clamp(tl.load(w_ptr + at).to(tl.float32), clip)
    acc = acc + m1 * _clamp(tl.load(w_ptr + at + 1).to(tl.float32), clip)
    acc = acc + m2 * _clamp(tl.load(w_ptr + at + 2).to(tl.float32), clip)
    return acc + m3 * _clamp(tl.load(w_ptr + at + 3).to(tl.float32), clip)


@triton.jit
def altup_predict(
    s_ptr,
    w_norm_ptr,
    w_router_ptr,
    w_coefs_ptr,
    out_ptr,
    tokens,
    width,
    active,
    eps_bits,
    scale_bits,
    clip_bits,
    round_bf16,
    round_scale,
    round_out,
    THREADS: tl.constexpr,
    N: tl.constexpr,
):
    # One program per token t; S and OUT are [N, tokens, width].
    t = tl.program_id(0)
    mods = _modalities(
        s_ptr, active * tokens + t, N * tokens, w_norm_ptr, w_router_ptr, width, eps_bits, scale_bits,
        round_bf16, round_scale, THREADS, N,
    )  # fmt: skip
    m0, m1, m2, m3 = _four(mods)
    clip = clip_bits.to(tl.float32, bitcast=True)
    i = tl.arange(0, N)
    col = tl.arange(0, THREADS * 8)
    live = col[None, :] < width
    rows = s_ptr + (i[:, None] * tokens + t).to(tl.int64) * width + col[None, :]  # [N (stream i), columns]
    # C[i, j] = coefs[(i * N + j) * N + k] over k: column j of C for every output stream i at once
    mix = _coefficient(w_coefs_ptr, (i * N + 0) * N, clip, m0, m1, m2, m3)[:, None] * tl.load(
        s_ptr + (0 * tokens + t).to(tl.int64) * width + col[None, :], mask=live, other=0.0
    )
    for j in tl.static_range(1, N):
        x_j = tl.load(s_ptr + (j * tokens + t).to(tl.int64) * width + col[None, :], mask=live, other=0.0)
        mix = mix + _coefficient(w_coefs_ptr, (i * N + j) * N, clip, m0, m1, m2, m3)[:, None] * x_j
    out = mix + tl.load(rows, mask=live, other=0.0)
    if round_out:
        out = _round_to_bf16(out)
    tl.store(out_ptr + (i[:, None] * tokens + t).to(tl.int64) * width + col[None, :], out, mask=live)


@triton.jit
def altup_correct(
    p_ptr,
    a_ptr,
    w_norm_ptr,
    w_router_ptr,
    w_coefs_ptr,
    out_ptr,
    tokens,
    width,
    active,
    eps_bits,
    scale_bits,
    clip_bits,
    round_bf16,
    round_scale,
    round_innovation,
    round_out,
    THREADS: tl.constexpr,
    N: tl.constexpr,
):
    # One program per token t; P and OUT are [N, tokens, width], A [tokens, width].
    t = tl.program_id(0)
    mods = _modalities(
        a_ptr, t, tokens, w_norm_ptr, w_router_ptr, width, eps_bits, scale_bits, round_bf16, round_scale, THREADS, N
    )
    m0, m1, m2, m3 = _four(mods)
    clip = clip_bits.to(tl.float32, bitcast=True)
    i = tl.arange(0, N)
    col = tl.arange(0, THREADS * 8)
    live = col < width
    coefs = _coefficient(w_coefs_ptr, i * N, clip, m0, m1, m2, m3) + 1.0  # [N]: C_i + 1
    a = tl.load(a_ptr + t.to(tl.int64) * width + col, mask=live, other=0.0)
    predicted = tl.load(p_ptr + (active * tokens + t).to(tl.int64) * width + col, mask=live, other=0.0)
    innovation = a - predicted
    if round_innovation:
        innovation = _round_to_bf16(innovation)
    at = (i[:, None] * tokens + t).to(tl.int64) * width + col[None, :]
    out = innovation[None, :] * coefs[:, None] + tl.load(p_ptr + at, mask=live[None, :], other=0.0)
    if round_out:
        out = _round_to_bf16(out)
    tl.store(out_ptr + at, out, mask=live[None, :])
