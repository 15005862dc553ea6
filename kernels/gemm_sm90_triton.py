"""The Hopper BF16 GEMM, written in Triton and built ahead of time (build time only: imports triton).

C[M, N] = bf16_round(A[M, K] @ B[N, K]^T) with BF16 operands and an F32 accumulator: exactly the
linear layer of the numeric contract (BF16 operands, F32 accumulation, then one BF16 rounding, round
to nearest even). B is the checkpoint's [out, in] weight, so no transpose is materialized.

Triton lowers `tl.dot` on sm_90a to wgmma with a cp.async multi-stage pipeline, the Hopper tensor-core
path that IREE 3.13's own CUDA code generation never emits. Each output tile owns its whole K loop, in
order, so a result depends only on its row of A and its row of B: bit-identical from call to call and
independent of M (batching). M is a runtime argument, so one kernel serves every shape bucket.

With SILU the store applies the feed-forward's activation to the rounded result first: the
template's round(y * logistic(y)) with IREE's logistic, 1 / (exp(-y) + 1) (IREE's polynomial exp,
an IEEE division), so the up-projection hands the down-projection its BF16 operand directly.
"""

from __future__ import annotations

import triton
import triton.language as tl

from gemma3n_iree.kernels.triton_numerics import _iree_exp, _round_to_bf16


@triton.jit
def gemm_bf16_nt(a_ptr, b_ptr, c_ptr, M, N, K,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                 SILU: tl.constexpr):
    # Grouped tile order: GROUP_M row tiles share each column sweep, so B tiles stay in L2.
    pid = tl.program_id(0)
    tiles_m = (M + BM - 1) // BM
    tiles_n = (N + BN - 1) // BN
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % group_rows
    tile_n = (pid % per_group) // group_rows

    rows = tile_m * BM + tl.arange(0, BM)
    cols = tile_n * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    a_tile = a_ptr + rows[:, None].to(tl.int64) * K + ks[None, :]
    b_tile = b_ptr + cols[None, :].to(tl.int64) * K + ks[:, None]
    acc = tl.full((BM, BN), 0.0, tl.float32)
    for _ in range(0, K // BK):  # the emitter guarantees K % BK == 0
        a = tl.load(a_tile, mask=rows[:, None] < M, other=0.0)
        b = tl.load(b_tile, mask=cols[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BK
        b_tile += BK
    c_tile = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]
    if SILU:
        y = _round_to_bf16(acc)
        acc = _round_to_bf16(y * tl.math.div_rn(1.0, _iree_exp(-y) + 1.0))  # BF16-valued: the store is exact
    tl.store(c_tile, acc.to(tl.bfloat16), mask=(rows[:, None] < M) & (cols[None, :] < N))
