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
"""

from __future__ import annotations

import triton
import triton.language as tl


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
):
    """The partials of one (M tile, N tile, K range): BK columns at a time, in K order."""
    span = K // S
    rows = tile_m * BM + tl.arange(0, BM)
    cols = tile_n * BN + tl.arange(0, BN)
    ks = split * span + tl.arange(0, BK)
    a_tile = a_ptr + rows[:, None].to(tl.int64) * K + ks[None, :]
    b_tile = b_ptr + cols[None, :].to(tl.int64) * K + ks[:, None]
    acc = tl.full((BM, BN), 0.0, tl.float32)
    for _ in range(0, span // BK):
        a = tl.load(a_tile, mask=rows[:, None] < M, other=0.0)
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
