"""The two contractions of a decode step's attention, written in Triton and built ahead of time (build time only).

A decode step has one query per sequence, so per (sequence, KV head) its `groups` query heads form a tiny
matrix against that sequence's cached rows. IREE 3.13 ran these as batch matmuls of 4 rows whose tiling read
a 4096-row key cache at a few GB/s (4.9 ms a full layer on the H200). Here each program streams BC cached
rows of one (sequence, KV head) along the head dimension, coalesced, on the tensor cores:

* `decode_scores`: S[b, h, g, c] = q[b, h * G + g, :] . k[at[b] + c, h, :] in F32, every column c of `columns`;
* `decode_values`: O[s, b, h, g, :] = sum over the s-th of S column ranges of p[b, h, g, c] * v[at[b] + c, h, :],
  F32 partials the template adds before the output's rounding point.

`k` and `v` are rows of [kv_heads, head_dim] (the KV cache seen as one row per (slot, row), or a prompt's own
keys), sequence b's `columns` rows starting at row `at[b]`: a decode step reads its sequences' rows where the
cache holds them, with no gathered copy (at batch 64 a full layer's copy was 268 MB).

Everything between them (mask, max, exp, the pinned denominator, the division and its rounding) stays the
template's. Both are the contract's contractions: BF16 operands, F32 accumulation, each program summing its
range in order, so a result depends only on its own sequence's rows: bit-identical from call to call and for
every batch width.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def decode_scores(
    q_ptr, k_ptr, at_ptr, s_ptr, kv_heads, groups, columns, ROWS: tl.constexpr, BC: tl.constexpr, DIMS: tl.constexpr
):
    # Program order: column tiles fastest, then KV heads, then sequences.
    pid = tl.program_id(0)
    tiles = columns // BC  # the emitter guarantees columns % BC == 0
    tile = pid % tiles
    head = (pid // tiles) % kv_heads
    seq = pid // (tiles * kv_heads)

    g = tl.arange(0, ROWS)
    c = tile * BC + tl.arange(0, BC)
    d = tl.arange(0, DIMS)
    q_rows = (seq * kv_heads + head) * groups + g
    q = tl.load(q_ptr + q_rows[:, None].to(tl.int64) * DIMS + d[None, :], mask=g[:, None] < groups, other=0.0)
    k_rows = (tl.load(at_ptr + seq) + c) * kv_heads + head
    k = tl.load(k_ptr + k_rows[None, :].to(tl.int64) * DIMS + d[:, None])
    scores = tl.dot(q, k)
    s_rows = (seq * kv_heads + head) * groups + g
    tl.store(s_ptr + s_rows[:, None].to(tl.int64) * columns + c[None, :], scores, mask=g[:, None] < groups)


@triton.jit
def decode_values(
    p_ptr, v_ptr, at_ptr, o_ptr, kv_heads, groups, columns, S, ROWS: tl.constexpr, BC: tl.constexpr, DIMS: tl.constexpr
):
    # Program order: KV heads fastest, then column ranges, then sequences.
    pid = tl.program_id(0)
    head = pid % kv_heads
    split = (pid // kv_heads) % S
    seq = pid // (kv_heads * S)
    span = columns // S  # the emitter guarantees columns % (S * BC) == 0

    g = tl.arange(0, ROWS)
    c = split * span + tl.arange(0, BC)
    d = tl.arange(0, DIMS)
    p_rows = (seq * kv_heads + head) * groups + g
    p_tile = p_ptr + p_rows[:, None].to(tl.int64) * columns + c[None, :]
    v_tile = v_ptr + ((tl.load(at_ptr + seq) + c[:, None]) * kv_heads + head).to(tl.int64) * DIMS + d[None, :]
    acc = tl.full((ROWS, DIMS), 0.0, tl.float32)
    for _ in range(0, span // BC):
        p = tl.load(p_tile, mask=g[:, None] < groups, other=0.0)
        v = tl.load(v_tile)
        acc = tl.dot(p, v, acc)
        p_tile += BC
        v_tile += BC * kv_heads * DIMS
    batch = tl.num_programs(0) // (kv_heads * S)
    o_rows = ((split * batch + seq) * kv_heads + head) * groups + g
    tl.store(o_ptr + o_rows[:, None].to(tl.int64) * DIMS + d[None, :], acc, mask=g[:, None] < groups)
