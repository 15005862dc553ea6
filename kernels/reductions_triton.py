"""The contract's row reductions as GPU kernels (build time only: imports triton).

`lane_xor_sum` is the pinned 32-lane XOR row sum; `rms_norm` is the whole RMS norm of the
`rms_norm` template around that same sum (with the clamp before it) in one dispatch, which reads its
rows of X twice (for the sum, then, mostly from cache, to normalize them), and `rms_norm_residual`
adds the conformer module's residual after it; `rms_norm_partials` is the text decoder's norm of a decode
linear's partial sums (their sum and the linear's rounding first).

S[r] = sum over X[r, :width] in exactly the schedule of `contracts.emulation.lane_xor_sum`: thread t
of a block of THREADS adds its `reads` adjacent values serially from +0 (squared first when
`square`), each warp of 32 threads combines them with the shfl_xor butterfly (masks 16, 8, 4, 2, 1;
the value lane 0 ends with), and the warp totals, zero-padded to 32 lanes, pass the butterfly once
more. Triton tensors have value semantics, so the adds below are that tree whatever thread holds
what; FMA contraction is off in the build, so every square and add rounds on its own.

In IREE's StableHLO the same schedule is about a dozen dispatches (one per butterfly level, each
tiled by IREE's heuristics); here it is one pass over the rows. THREADS (a power of two, 32..1024)
fixes the tensor shapes and is compiled in; rows, width, reads and square are runtime arguments, so
six PTX files serve every reduction of every configuration.
"""

from __future__ import annotations

import triton
import triton.language as tl

from gemma3n_iree.kernels.triton_numerics import _iree_exp, _round_to_bf16, _warp_sum


@triton.jit
def _pad_double(v, R: tl.constexpr, N: tl.constexpr):
    """[R, N] -> [R, 2N]: the values, then N lanes of +0."""
    return tl.reshape(tl.permute(tl.join(v, tl.full((R, N), 0.0, tl.float32)), (0, 2, 1)), (R, 2 * N))


@triton.jit
def _pad_to_32(v, R: tl.constexpr, N: tl.constexpr):
    """[R, N] -> [R, 32] with +0 in lanes N..31 (N a power of two, 2..32)."""
    if N <= 2:
        v = _pad_double(v, R, 2)
    if N <= 4:
        v = _pad_double(v, R, 4)
    if N <= 8:
        v = _pad_double(v, R, 8)
    if N <= 16:
        v = _pad_double(v, R, 16)
    return v


@triton.jit
def _clamp(x, clip):
    """clamp(x, -clip, clip) with NaN kept (what StableHLO's clamp lowers to); clip = +inf: x itself."""
    return tl.minimum(tl.maximum(x, -clip, propagate_nan=tl.PropagateNan.ALL), clip, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _schedule_sum(
    x_ptr, row, rows, width, reads, square, clip, R: tl.constexpr, THREADS: tl.constexpr, CLAMP: tl.constexpr
):
    """[R] sums of rows `row` of X [rows, width] (clamped to +-clip first with CLAMP) in the schedule."""
    thread = tl.arange(0, THREADS)
    first = row[:, None].to(tl.int64) * width + thread[None, :] * reads
    live = row[:, None] < rows
    acc = tl.full((R, THREADS), 0.0, tl.float32)
    for k in range(reads):
        col = thread[None, :] * reads + k
        v = tl.load(x_ptr + first + k, mask=live & (col < width), other=0.0).to(tl.float32)  # BF16 X: exact
        if CLAMP:
            v = _clamp(v, clip)
        if square:
            v = v * v
        acc = acc + v
    return _lane_total(acc, R, THREADS)


@triton.jit
def _lane_total(acc, R: tl.constexpr, THREADS: tl.constexpr):
    """[R, THREADS] per-thread sums -> [R]: each warp's butterfly, then the warp totals' (zero-padded to 32)."""
    WARPS: tl.constexpr = THREADS // 32
    total = _warp_sum(tl.reshape(acc, (R, WARPS, 32)), R, WARPS)
    if WARPS > 1:
        total = _warp_sum(tl.reshape(_pad_to_32(total, R, WARPS), (R, 1, 32)), R, 1)
    return tl.reshape(total, (R,))


@triton.jit
def lane_xor_sum(x_ptr, s_ptr, rows, width, reads, square, THREADS: tl.constexpr, ROWS_PER_BLOCK: tl.constexpr):
    row = tl.program_id(0) * ROWS_PER_BLOCK + tl.arange(0, ROWS_PER_BLOCK)
    total = _schedule_sum(x_ptr, row, rows, width, reads, square, 0.0, ROWS_PER_BLOCK, THREADS, False)
    tl.store(s_ptr + row, total, mask=row < rows)


@triton.jit
def _normalized(
    x_ptr,
    w_ptr,
    row,
    rows,
    width,
    eps_bits,
    clip_bits,
    round_bf16,
    R: tl.constexpr,
    THREADS: tl.constexpr,
    MLX: tl.constexpr = False,
):
    """round(clamp(X) * (1 / sqrt(sum(clamp(X)^2) / width + eps)) * W) for rows `row`, as [R, THREADS * 8];
    with MLX, round(round(X * (1 / sqrt(...))) * W): MLX's `fast.rms_norm`, which rounds before the weight too.

    Returns the values, their offsets and the mask of real elements. The sum of squares is the 8-read
    schedule; the divisions are IEEE (div.rn) and the square root is correctly rounded (sqrt.rn: the
    bits the template gets from its F64 sqrt rounded to F32, since F64 carries more than twice F32's
    precision); `round_bf16` is the contract's rounding point. Scalars arrive as F32 bit patterns
    because push constants are 32-bit integers; clip is +inf where the template has no clamp.
    """
    clip = clip_bits.to(tl.float32, bitcast=True)
    col = tl.arange(0, THREADS * 8)
    live = (row[:, None] < rows) & (col[None, :] < width)
    at = row[:, None].to(tl.int64) * width + col[None, :]
    total = _schedule_sum(x_ptr, row, rows, width, 8, 1, clip, R, THREADS, True)
    eps = eps_bits.to(tl.float32, bitcast=True)
    stab = tl.math.div_rn(total, width.to(tl.float32)) + eps
    inv = tl.math.div_rn(tl.full((R,), 1.0, tl.float32), tl.math.sqrt_rn(stab))
    x = _clamp(tl.load(x_ptr + at, mask=live, other=0.0).to(tl.float32), clip)
    w = tl.load(w_ptr + col, mask=col < width, other=0.0).to(tl.float32)
    y = x * inv[:, None]
    if MLX:
        if round_bf16:
            y = _round_to_bf16(y)
    y = y * w[None, :]
    if round_bf16:
        y = _round_to_bf16(y)
    return y, at, live


@triton.jit
def rms_norm(
    x_ptr,
    w_ptr,
    y_ptr,
    rows,
    width,
    eps_bits,
    clip_bits,
    round_bf16,
    THREADS: tl.constexpr,
    ROWS_PER_BLOCK: tl.constexpr,
    SILU: tl.constexpr = False,
    MLX: tl.constexpr = False,
):
    """Y = the scaled RMS norm of clamp(X): F32 carrier, or BF16 when Y feeds a matmul (BF16-valued);
    with SILU (rounding contracts only), Y = round(y * logistic(y)) of the rounded norm y, with IREE's
    logistic 1 / (exp(-y) + 1): the light convolution's norm and activation; with MLX, the text decoder's
    two-rounding norm (`_normalized`)."""
    row = tl.program_id(0) * ROWS_PER_BLOCK + tl.arange(0, ROWS_PER_BLOCK)
    y, at, live = _normalized(
        x_ptr, w_ptr, row, rows, width, eps_bits, clip_bits, round_bf16, ROWS_PER_BLOCK, THREADS, MLX
    )
    if SILU:
        y = _round_to_bf16(y * tl.math.div_rn(1.0, _iree_exp(-y) + 1.0))
    tl.store(y_ptr + at, y.to(y_ptr.dtype.element_ty), mask=live)


@triton.jit
def rms_norm_residual(
    x_ptr,
    w_ptr,
    res_ptr,
    y_ptr,
    rows,
    width,
    eps_bits,
    clip_bits,
    weight_bits,
    round_bf16,
    THREADS: tl.constexpr,
    ROWS_PER_BLOCK: tl.constexpr,
):
    """Y = round(RES + norm(clamp(X)) * weight): a conformer module's norm and residual in one dispatch."""
    row = tl.program_id(0) * ROWS_PER_BLOCK + tl.arange(0, ROWS_PER_BLOCK)
    y, at, live = _normalized(x_ptr, w_ptr, row, rows, width, eps_bits, clip_bits, round_bf16, ROWS_PER_BLOCK, THREADS)
    res = tl.load(res_ptr + at, mask=live, other=0.0)
    out = res + y * weight_bits.to(tl.float32, bitcast=True)
    if round_bf16:
        out = _round_to_bf16(out)
    tl.store(y_ptr + at, out, mask=live)


@triton.jit
def _summed(p_ptr, at, live, splits, stride, round_bf16):
    """round(P[0] + P[1] + ... + P[S-1]) at offsets `at` of one partial (`stride` elements apart), from +0 in
    split order: a decode linear's partial sums (its one freedom is its accumulation order), then its rounding."""
    x = tl.full(at.shape, 0.0, tl.float32)
    for s in range(splits):
        x = x + tl.load(p_ptr + s * stride + at, mask=live, other=0.0)  # the call keeps S x stride < 2^31
    if round_bf16:
        x = _round_to_bf16(x)
    return x


@triton.jit
def rms_norm_partials(
    p_ptr,
    w_ptr,
    y_ptr,
    rows,
    width,
    splits,
    eps_bits,
    round_bf16,
    THREADS: tl.constexpr,
    ROWS_PER_BLOCK: tl.constexpr,
):
    """Y = the text decoder's norm (MLX's two rounding points) of X = round(the sum of a decode-linear kernel's
    S partials [S, rows, width]), in one dispatch where the partials' sum and the norm took two. X is formed
    twice from the partials, as the RMS norm reads X twice: in the 8-read schedule's layout for the sum of
    squares, then row by row to normalize."""
    R: tl.constexpr = ROWS_PER_BLOCK
    row = tl.program_id(0) * R + tl.arange(0, R)
    stride = rows * width
    thread = tl.arange(0, THREADS)
    acc = tl.full((R, THREADS), 0.0, tl.float32)
    for k in range(8):
        col = thread[None, :] * 8 + k
        v = _summed(
            p_ptr, row[:, None] * width + col, (row[:, None] < rows) & (col < width), splits, stride, round_bf16
        )
        acc = acc + v * v
    total = _lane_total(acc, R, THREADS)
    col = tl.arange(0, THREADS * 8)
    live = (row[:, None] < rows) & (col[None, :] < width)
    at = row[:, None] * width + col[None, :]
    x = _summed(p_ptr, at, live, splits, stride, round_bf16)
    eps = eps_bits.to(tl.float32, bitcast=True)
    stab = tl.math.div_rn(total, width.to(tl.float32)) + eps
    inv = tl.math.div_rn(tl.full((R,), 1.0, tl.float32), tl.math.sqrt_rn(stab))
    y = x * inv[:, None]
    if round_bf16:
        y = _round_to_bf16(y)
    w = tl.load(w_ptr + col, mask=col < width, other=0.0).to(tl.float32)
    y = y * w[None, :]
    if round_bf16:
        y = _round_to_bf16(y)
    tl.store(y_ptr + at, y, mask=live)
