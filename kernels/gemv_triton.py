"""The decode-step linear, written in Triton and built ahead of time (build time only: imports triton).

P[s, M, N] = A[M, K_s] @ B[N, K_s]^T in F32, for each of S consecutive K ranges K_s of K / S columns: the
partial sums of the contract's linear for the few rows (M <= 64) of a decode step. The emitter adds the S
partials and rounds once to BF16 (`linear.gemv.mlir.j2`), so the linear is still BF16 operands, F32
accumulation, one rounding. B is the checkpoint's [out, in] weight: each program streams BN whole weight
rows along K (coalesced, each weight byte read once per M tile), where IREE's own matvec code read the
[16384, 2048] down-projection at ~31 GB/s. Splitting K gives a narrow output (N = 2048 with K = 16384)
enough programs to keep the H200's 132 SMs streaming.

Each program owns one (M tile, N tile, K range) and sums its K range in order, so a result depends only
on its row of A, its row of B and S: bit-identical from call to call and for every batch width M.

NARROW serves outputs narrower than one column tile (AltUp's 4-output router): N is then any width, the last
tile's columns past N masked (their weight rows never read, their partials never stored).

The pair and quad entries serve two or four linears of one input (the MLP's gate and up; LAuReL's left linear
and q, k, v) in one launch: their column tiles side by side, each member's partials [S, M, N_i] stored one after
the other in P. A member's tile is the single entry's tile, so its partials are the single launch's bits.

The GELU-product entry serves the MLP's gate and up where neither is split (E4B's 16,384 outputs): each program
computes both linears' tiles of its columns and hands the down-projection round(gelu_tanh(gate) * up) as BF16, the
elementwise dispatch between them folded in.
"""

from __future__ import annotations

import triton
import triton.language as tl

from gemma3n_iree.kernels.triton_numerics import _as_bf16, _from_bf16, _iree_tanh, _round_to_bf16


@triton.jit
def _splitk_tile(
    a_ptr,
    b_ptr,
    p_ptr,
    M,
    N,
    K,
    S,
    tile_m,
    tile_n,
    split,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    NARROW: tl.constexpr,
    s_ptr=None,
    round_in=0,
    SCALED: tl.constexpr = False,
    a_splits=1,
    SUMMED: tl.constexpr = False,
):
    """The partials of one (M tile, N tile, K range): BK columns at a time, in K order. SCALED: A is F32 and each
    of its columns is multiplied by S_[k] (BF16) and rounded where `round_in` says, then read as BF16. SUMMED: A
    is `a_splits` F32 partial sums [a_splits, M, K] of another linear, added in order from zero and rounded where
    `round_in` says (`partials_sum.mlir.j2`'s sum and rounding), then read as BF16."""
    span = K // S
    rows = tile_m * BM + tl.arange(0, BM)
    cols = tile_n * BN + tl.arange(0, BN)
    ks = split * span + tl.arange(0, BK)
    a_tile = a_ptr + rows[:, None].to(tl.int64) * K + ks[None, :]
    b_tile = b_ptr + cols[None, :].to(tl.int64) * K + ks[:, None]
    acc = tl.full((BM, BN), 0.0, tl.float32)
    for _ in range(0, span // BK):
        if SUMMED:
            a = tl.full((BM, BK), 0.0, tl.float32)
            for j in range(0, a_splits):
                a += tl.load(a_tile + j * M * K, mask=rows[:, None] < M, other=0.0)
            if round_in:
                a = _round_to_bf16(a)
            a = _as_bf16(_round_to_bf16(a))  # the linear's BF16 operand
        else:
            a = tl.load(a_tile, mask=rows[:, None] < M, other=0.0)
        if SCALED:
            scaled = a * _from_bf16(tl.load(s_ptr + ks))[None, :]
            if round_in:
                scaled = _round_to_bf16(scaled)
            a = _as_bf16(_round_to_bf16(scaled))  # the linear's BF16 operand
            ks += BK
        if NARROW:
            b = tl.load(b_tile, mask=cols[None, :] < N, other=0.0)
        else:
            b = tl.load(b_tile)
        acc = tl.dot(a, b, acc)
        a_tile += BK
        b_tile += BK
    p_tile = p_ptr + (split * M + rows[:, None]).to(tl.int64) * N + cols[None, :]
    if NARROW:
        tl.store(p_tile, acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
    else:
        tl.store(p_tile, acc, mask=rows[:, None] < M)


@triton.jit
def gemv_bf16_nt_splitk(
    a_ptr, b_ptr, p_ptr, M, N, K, S, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, NARROW: tl.constexpr
):
    # Program order: M tiles fastest, so the programs reading one weight tile for several M tiles run
    # side by side and share it through L2; then N tiles, then K ranges.
    pid = tl.program_id(0)
    tiles_m = (M + BM - 1) // BM
    if NARROW:
        tiles_n = (N + BN - 1) // BN
    else:
        tiles_n = N // BN  # the emitter guarantees N % BN == 0 (but NARROW) and K % (S * BK) == 0
    tile_m = pid % tiles_m
    tile_n = (pid // tiles_m) % tiles_n
    split = pid // (tiles_m * tiles_n)
    _splitk_tile(a_ptr, b_ptr, p_ptr, M, N, K, S, tile_m, tile_n, split, BM, BN, BK, NARROW)


@triton.jit
def _program_tile(M, N, BM: tl.constexpr, BN: tl.constexpr):
    """The single entry's program order: M tiles fastest, then N tiles, then K ranges."""
    pid = tl.program_id(0)
    tiles_m = (M + BM - 1) // BM
    tiles_n = N // BN
    return pid % tiles_m, (pid // tiles_m) % tiles_n, pid // (tiles_m * tiles_n)


@triton.jit
def gemv_bf16_nt_scaled_splitk(
    a_ptr, s_ptr, b_ptr, p_ptr, M, N, K, S, round_scale, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    """The single entry's partials of round(A * S_) @ B^T for F32 A and a BF16 scale per column of A (the per-layer
    input gate's round(corrected * correct_output_scale), `ple_gate.scale`), the scaling done as A is read."""
    tile_m, tile_n, split = _program_tile(M, N, BM, BN)
    _splitk_tile(a_ptr, b_ptr, p_ptr, M, N, K, S, tile_m, tile_n, split, BM, BN, BK, False, s_ptr, round_scale, True)


@triton.jit
def gemv_bf16_nt_summed_splitk(
    a_ptr, b_ptr, p_ptr, M, N, K, S, a_splits, round_a, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    """The single entry's partials of round(sum of A's partials) @ B^T, for A handed over as another decode linear's
    `a_splits` F32 partial sums (LAuReL's left linear, read by its right one): their sum and rounding done as A is
    read, in the order and at the point `partials_sum.mlir.j2` has them."""
    tile_m, tile_n, split = _program_tile(M, N, BM, BN)
    _splitk_tile(
        a_ptr, b_ptr, p_ptr, M, N, K, S, tile_m, tile_n, split, BM, BN, BK, False, None, round_a, False, a_splits, True
    )


@triton.jit
def gemv_bf16_nt_splitk_pair(
    a_ptr, b0_ptr, b1_ptr, p_ptr, M, N0, N1, K, S, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    # The single entry's program order over the members' column tiles side by side.
    pid = tl.program_id(0)
    tiles_m = (M + BM - 1) // BM
    t0 = N0 // BN
    tiles_n = t0 + N1 // BN
    tile_m = pid % tiles_m
    tile_n = (pid // tiles_m) % tiles_n
    split = pid // (tiles_m * tiles_n)
    if tile_n < t0:
        _splitk_tile(a_ptr, b0_ptr, p_ptr, M, N0, K, S, tile_m, tile_n, split, BM, BN, BK, False)
    else:
        p1_ptr = p_ptr + (S * M).to(tl.int64) * N0
        _splitk_tile(a_ptr, b1_ptr, p1_ptr, M, N1, K, S, tile_m, tile_n - t0, split, BM, BN, BK, False)


@triton.jit
def gemv_bf16_nt_splitk_quad(
    a_ptr,
    b0_ptr,
    b1_ptr,
    b2_ptr,
    b3_ptr,
    p_ptr,
    M,
    N0,
    N1,
    N2,
    N3,
    K,
    S,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m = (M + BM - 1) // BM
    t0 = N0 // BN
    t1 = t0 + N1 // BN
    t2 = t1 + N2 // BN
    tiles_n = t2 + N3 // BN
    tile_m = pid % tiles_m
    tile_n = (pid // tiles_m) % tiles_n
    split = pid // (tiles_m * tiles_n)
    rows_s = (S * M).to(tl.int64)
    if tile_n < t0:
        _splitk_tile(a_ptr, b0_ptr, p_ptr, M, N0, K, S, tile_m, tile_n, split, BM, BN, BK, False)
    elif tile_n < t1:
        p1_ptr = p_ptr + rows_s * N0
        _splitk_tile(a_ptr, b1_ptr, p1_ptr, M, N1, K, S, tile_m, tile_n - t0, split, BM, BN, BK, False)
    elif tile_n < t2:
        p2_ptr = p_ptr + rows_s * (N0 + N1)
        _splitk_tile(a_ptr, b2_ptr, p2_ptr, M, N2, K, S, tile_m, tile_n - t1, split, BM, BN, BK, False)
    else:
        p3_ptr = p_ptr + rows_s * (N0 + N1 + N2)
        _splitk_tile(a_ptr, b3_ptr, p3_ptr, M, N3, K, S, tile_m, tile_n - t2, split, BM, BN, BK, False)


@triton.jit
def _rounded(y, at):
    """The contract's BF16 rounding where its point `at` (a push constant) rounds."""
    if at:
        y = _round_to_bf16(y)
    return y


@triton.jit
def gemv_bf16_nt_gelu_product(
    a_ptr,
    g_ptr,
    u_ptr,
    y_ptr,
    M,
    N,
    K,
    k_cubic_bits,
    k_sqrt_bits,
    round_linear,
    round_cube,
    round_cubic_term,
    round_inner,
    round_scaled_inner,
    round_tanh,
    round_one_plus,
    round_half_x,
    round_out,
    round_product,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    """The MLP's product of a decode step without a K split: gate = round(A @ G^T) and up = round(A @ U^T) on the
    single entry's tiles (each program both tiles of its columns, so each sum is the unsplit launch's), then
    Y = round(gelu_tanh(gate) * up) (`gelu_tanh.mlir.j2` op by op, IREE's tanh, every rounding point a push
    constant; `mlp.product`), stored as the BF16 operand of the down-projection."""
    pid = tl.program_id(0)
    tiles_m = (M + BM - 1) // BM
    tile_m = pid % tiles_m
    tile_n = pid // tiles_m
    rows = tile_m * BM + tl.arange(0, BM)
    cols = tile_n * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    a_tile = a_ptr + rows[:, None].to(tl.int64) * K + ks[None, :]
    g_tile = g_ptr + cols[None, :].to(tl.int64) * K + ks[:, None]
    u_tile = u_ptr + cols[None, :].to(tl.int64) * K + ks[:, None]
    acc_g = tl.full((BM, BN), 0.0, tl.float32)
    acc_u = tl.full((BM, BN), 0.0, tl.float32)
    for _ in range(0, K // BK):
        a = tl.load(a_tile, mask=rows[:, None] < M, other=0.0)
        acc_g = tl.dot(a, tl.load(g_tile), acc_g)
        acc_u = tl.dot(a, tl.load(u_tile), acc_u)
        a_tile += BK
        g_tile += BK
        u_tile += BK
    x = _rounded(acc_g, round_linear)
    up = _rounded(acc_u, round_linear)
    cube = _rounded(x * x * x, round_cube)
    term = _rounded(k_cubic_bits.to(tl.float32, bitcast=True) * cube, round_cubic_term)
    inner = _rounded(x + term, round_inner)
    scaled = _rounded(k_sqrt_bits.to(tl.float32, bitcast=True) * inner, round_scaled_inner)
    one_plus = _rounded(1.0 + _rounded(_iree_tanh(scaled), round_tanh), round_one_plus)
    act = _rounded(_rounded(0.5 * x, round_half_x) * one_plus, round_out)
    y = _round_to_bf16(_rounded(act * up, round_product))  # the down-projection's BF16 operand (exact)
    tl.store(y_ptr + rows[:, None].to(tl.int64) * N + cols[None, :], _as_bf16(y), mask=rows[:, None] < M)
