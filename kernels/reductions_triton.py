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

from gemma3n_iree.kernels.triton_numerics import _add, _as_bf16, _iree_exp, _lane_total, _round_to_bf16


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
    MAX_SPLITS: tl.constexpr,
):
    """Y = the text decoder's norm (MLX's two rounding points) of X = round(P[0] + P[1] + ... + P[S-1]): a
    decode-linear kernel's S <= MAX_SPLITS partial sums [S, rows, width], added from +0 in split order (the
    linear's one freedom is its accumulation order), the linear's rounding point, then its norm, in one dispatch
    where the partials' sum and the norm took two. The partials are read once, coalesced (`_partials_rows`); the
    norm is `_mlx_norm_of` X in registers."""
    R: tl.constexpr = ROWS_PER_BLOCK
    x, row, col, live, at = _partials_rows(p_ptr, rows, width, splits, round_bf16, R, THREADS, MAX_SPLITS)
    y = _mlx_norm_of(x, w_ptr, col, width, eps_bits, round_bf16, R, THREADS)
    tl.store(y_ptr + at, y, mask=live)


@triton.jit
def _partials_rows(
    p_ptr, rows, width, splits, round_bf16, R: tl.constexpr, THREADS: tl.constexpr, MAX_SPLITS: tl.constexpr
):
    """This program's R rows of a decode linear's [S, rows, width] partials (the call keeps max(S, N) x rows x width
    < 2^31): X = round(P[0] + ... + P[S-1]) from +0 in split order, every load in flight at once (unrolled to
    MAX_SPLITS, the absent ones masked: adding +0 to a sum that began at +0 changes no bit), with the rows, the
    columns (THREADS x 8), the mask of real elements and their offsets."""
    row = tl.program_id(0) * R + tl.arange(0, R)
    col = tl.arange(0, THREADS * 8)
    live = (row[:, None] < rows) & (col[None, :] < width)
    at = row[:, None] * width + col[None, :]
    x = tl.full((R, THREADS * 8), 0.0, tl.float32)
    for s in tl.static_range(MAX_SPLITS):
        x = x + tl.load(
            p_ptr + s * rows * width + at, mask=live & (tl.full(live.shape, s, tl.int32) < splits), other=0.0
        )
    if round_bf16:
        x = _round_to_bf16(x)
    return x, row, col, live, at


@triton.jit
def rms_norm_partials_residual(
    p_ptr,
    w_ptr,
    res_ptr,
    add_ptr,
    y_ptr,
    rows,
    width,
    splits,
    eps_bits,
    scale_bits,
    round_bf16,
    round_residual,
    round_add,
    round_scale,
    THREADS: tl.constexpr,
    ROWS_PER_BLOCK: tl.constexpr,
    MAX_SPLITS: tl.constexpr,
    ADD: tl.constexpr,
    SCALE: tl.constexpr,
):
    """`rms_norm_partials`, then the residual after it: Y = round(RES + norm); with ADD, Y = round(Y + ADD_); with
    SCALE, Y = round(Y * scale) (the attention residual: RES the layer's input, ADD_ its LAuReL output, scale
    2^-0.5; the MLP's: RES alone). Each rounding is its push constant's (the contract's point)."""
    R: tl.constexpr = ROWS_PER_BLOCK
    x, row, col, live, at = _partials_rows(p_ptr, rows, width, splits, round_bf16, R, THREADS, MAX_SPLITS)
    y = tl.load(res_ptr + at, mask=live, other=0.0) + _mlx_norm_of(
        x, w_ptr, col, width, eps_bits, round_bf16, R, THREADS
    )
    if round_residual:
        y = _round_to_bf16(y)
    if ADD:
        y = y + tl.load(add_ptr + at, mask=live, other=0.0)
        if round_add:
            y = _round_to_bf16(y)
    if SCALE:
        y = y * scale_bits.to(tl.float32, bitcast=True)
        if round_scale:
            y = _round_to_bf16(y)
    tl.store(y_ptr + at, y, mask=live)


@triton.jit
def _mlx_norm_of(x, w_ptr, col, width, eps_bits, round_bf16, R: tl.constexpr, THREADS: tl.constexpr):
    """The text decoder's norm (MLX's two rounding points) of rows X [R, THREADS * 8] held in registers (zeros past
    `width`): the sum of squares is the 8-read schedule, thread t's reads being columns 8t .. 8t + 7 in order (each
    picked out of its thread's eight by a sum with seven zeros, which is exact)."""
    squares = tl.reshape(x * x, (R, THREADS, 8))
    read = tl.arange(0, 8)[None, None, :]
    acc = tl.full((R, THREADS), 0.0, tl.float32)
    for k in tl.static_range(8):
        acc = acc + tl.reduce(tl.where(read == k, squares, 0.0), 2, _add)
    total = _lane_total(acc, R, THREADS)
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
    return y


@triton.jit
def rms_norm_partials_streams(
    p_ptr,
    w_ptr,
    s_ptr,
    y_ptr,
    rows,
    width,
    splits,
    eps_bits,
    round_bf16,
    round_residual,
    THREADS: tl.constexpr,
    ROWS_PER_BLOCK: tl.constexpr,
    MAX_SPLITS: tl.constexpr,
    N: tl.constexpr,
):
    """`rms_norm_partials` added to AltUp's streams after the first: S and Y are [N, rows, width], Y[0] = S[0] and
    Y[i] = round(S[i] + norm) (the per-layer input's injection, `ple_gate.mlir.j2`)."""
    R: tl.constexpr = ROWS_PER_BLOCK
    x, row, col, live, at = _partials_rows(p_ptr, rows, width, splits, round_bf16, R, THREADS, MAX_SPLITS)
    y = _mlx_norm_of(x, w_ptr, col, width, eps_bits, round_bf16, R, THREADS)
    tl.store(y_ptr + at, tl.load(s_ptr + at, mask=live, other=0.0), mask=live)
    for i in tl.static_range(1, N):
        out = tl.load(s_ptr + i * rows * width + at, mask=live, other=0.0) + y
        if round_residual:
            out = _round_to_bf16(out)
        tl.store(y_ptr + i * rows * width + at, out, mask=live)


@triton.jit
def rms_norm_partials_kv(
    p_ptr,
    w_ptr,
    cos_ptr,
    sin_ptr,
    y_ptr,
    rows,
    width,
    splits,
    heads,
    eps_bits,
    round_bf16,
    round_x_cos,
    round_rot_sin,
    round_sum,
    THREADS: tl.constexpr,
    ROWS_PER_BLOCK: tl.constexpr,
    MAX_SPLITS: tl.constexpr,
    ROPE: tl.constexpr,
):
    """`rms_norm_partials` of a decode step's key or value heads, handed to the KV cache as BF16: rows are
    (token, head) pairs of `width` = THREADS x 8 values; with ROPE, RoPE after the norm (`rope.mlir.j2`: round(x cos)
    + round(rotate_half(x) sin), rounded; rotate_half(x) = (-x2, x1), cos and sin the token's rows of
    [tokens, width] tables). The BF16 store is the cache's round-to-nearest-even conversion."""
    R: tl.constexpr = ROWS_PER_BLOCK
    C: tl.constexpr = THREADS * 8
    x, row, col, live, at = _partials_rows(p_ptr, rows, width, splits, round_bf16, R, THREADS, MAX_SPLITS)
    y = _mlx_norm_of(x, w_ptr, col, width, eps_bits, round_bf16, R, THREADS)
    if ROPE:
        table = (row // heads)[:, None] * width + col[None, :]
        cos = tl.load(cos_ptr + table, mask=live, other=0.0)
        sin = tl.load(sin_ptr + table, mask=live, other=0.0)
        first, second = tl.split(tl.permute(tl.reshape(y, (R, 2, C // 2)), (0, 2, 1)))  # the two halves
        rotated = tl.reshape(tl.permute(tl.join(-second, first), (0, 2, 1)), (R, C))
        a = y * cos
        if round_x_cos:
            a = _round_to_bf16(a)
        b = rotated * sin
        if round_rot_sin:
            b = _round_to_bf16(b)
        y = a + b
        if round_sum:
            y = _round_to_bf16(y)
    tl.store(y_ptr + at, _as_bf16(_round_to_bf16(y)), mask=live)
