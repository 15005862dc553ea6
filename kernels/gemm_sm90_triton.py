"""The Hopper BF16 GEMM, written in Triton and built ahead of time (build time only: imports triton).

C[M, N] = bf16_round(A[M, K] @ B[N, K]^T) with BF16 operands and an F32 accumulator: exactly the
linear layer of the numeric contract (BF16 operands, F32 accumulation, then one BF16 rounding, round
to nearest even). B is the checkpoint's [out, in] weight, so no transpose is materialized.

Triton lowers `tl.dot` on sm_90a to wgmma with a cp.async multi-stage pipeline, the Hopper tensor-core
path that IREE 3.13's own CUDA code generation never emits. Each output tile owns its whole K loop, in
order, so a result depends only on its row of A and its row of B: bit-identical from call to call and
independent of M (batching). M is a runtime argument, so one kernel serves every shape bucket.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def gemm_bf16_nt(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr
):
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
    tl.store(c_tile, acc.to(tl.bfloat16), mask=(rows[:, None] < M) & (cols[None, :] < N))
