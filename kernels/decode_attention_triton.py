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

Both are the contract's contractions: BF16 operands, F32 accumulation, each program summing its
range in order, so a result depends only on its own sequence's rows: bit-identical from call to call and for
every batch width.

Between them, `decode_softmax` is the template's softmax of one row of scores per program, in the template's
operations and order (in IREE's code five dispatches: the mask's positions, the masked scores, their maximum,
the pinned denominator, the rounded quotients): the columns a sequence cannot see (a full layer's past its
position, a sliding layer's ring slots not yet written) masked to the BF16 minimum, e = exp(masked - max) in
IREE's exp, the denominator the contract's block sum over the columns in column order (`THREADS` threads of
`READS` adjacent values, `passes` blocks of them: `decoder_ops.block_sum`), probabilities round(e /
denominator) with an IEEE division, written as the BF16 operand of the values product.
"""

from __future__ import annotations

import triton
import triton.language as tl

from gemma3n_iree.kernels.triton_numerics import _add, _as_bf16, _iree_exp, _lane_total, _round_to_bf16


@triton.jit
def _max_keeping_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _masked_scores(s_row, col, columns, position, window, mask_value):
    """A row's scores at `col` where the sequence at `position` sees that column, else `mask_value`:
    a full layer (window 0) sees columns <= position; a sliding layer's ring column c holds position
    p - ((p - c) mod window), seen once written (>= 0)."""
    s = tl.load(s_row + col, mask=col < columns, other=0.0)
    held = position - (position - col + window) % tl.maximum(window, 1)
    visible = tl.where(window == 0, col <= position, held >= 0)
    return tl.where(visible, s, mask_value)


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


@triton.jit
def _row_blocks(THREADS: tl.constexpr, READS: tl.constexpr):
    """A row read in blocks of THREADS x READS columns: thread t holds its READS adjacent columns of a block as one
    row of a [THREADS, READS] tile (a block is one coalesced load, not READS dependent ones). Returns each value's
    read index and its column in the block."""
    read = tl.arange(0, READS)[None, :]
    return read, tl.arange(0, THREADS)[:, None] * READS + read


@triton.jit
def _add_by_thread(acc, e, read, READS: tl.constexpr):
    """Thread t adds its READS values of block `e` to its serial sum in column order; picking value r out of its row
    adds +0s to it, which leaves every e (>= +0 or NaN) as it is."""
    for r in tl.static_range(READS):
        acc = acc + tl.reduce(tl.where(read == r, e, 0.0), 1, _add)
    return acc


@triton.jit
def decode_softmax(
    s_ptr, pos_ptr, p_ptr, heads, columns, window, passes, mask_bits, THREADS: tl.constexpr, READS: tl.constexpr
):
    # One program per row of scores [sequences * heads, columns]; a row's sequence is row // heads.
    row = tl.program_id(0)
    position = tl.load(pos_ptr + row // heads)
    mask_value = mask_bits.to(tl.float32, bitcast=True)
    s_row = s_ptr + row.to(tl.int64) * columns
    p_row = p_ptr + row.to(tl.int64) * columns
    read, block = _row_blocks(THREADS, READS)
    span = THREADS * READS
    top = tl.full((THREADS, READS), float("-inf"), tl.float32)
    for k in range(passes):
        col = k * span + block
        x = _masked_scores(s_row, col, columns, position, window, mask_value)
        top = _max_keeping_nan(top, tl.where(col < columns, x, float("-inf")))
    top_row = tl.reduce(tl.reduce(top, 1, _max_keeping_nan), 0, _max_keeping_nan)
    # thread t adds its values of every block serially, pass after pass
    acc = tl.full((THREADS,), 0.0, tl.float32)
    for k in range(passes):
        col = k * span + block
        e = _iree_exp(_masked_scores(s_row, col, columns, position, window, mask_value) - top_row)
        e = tl.where(col < columns, e, 0.0)
        acc = _add_by_thread(acc, e, read, READS)
    denominator = tl.reshape(_lane_total(tl.reshape(acc, (1, THREADS)), 1, THREADS), (1, 1))
    for k in range(passes):
        col = k * span + block
        e = _iree_exp(_masked_scores(s_row, col, columns, position, window, mask_value) - top_row)
        probs = _round_to_bf16(tl.math.div_rn(e, denominator))
        tl.store(p_row + col, _as_bf16(probs), mask=col < columns)


@triton.jit
def _prompt_scores(s_row, slot, summed, columns, position, window, mask_value):
    """A prompt row's score read as the denominator's `slot`: a full layer's (window 0) slots are its columns in
    order, seen when <= position; a sliding layer's are its ring of `summed` slots, slot r holding position
    p - ((p - r) mod window), seen once >= 0 (every held position is inside the window). Returns the score (the
    mask value where unseen) and whether the slot holds a seen column."""
    held = position - (position - slot + window) % tl.maximum(window, 1)
    col = tl.where(window == 0, slot, held)
    seen = tl.where(window == 0, (slot <= position).to(tl.int32), (held >= 0).to(tl.int32)) != 0
    seen = seen & (slot < summed) & (col < columns)
    s = tl.load(s_row + col, mask=seen, other=0.0)
    return tl.where(seen, s, mask_value), seen


@triton.jit
def prompt_softmax(
    s_ptr,
    pos_ptr,
    p_ptr,
    queries,
    groups,
    columns,
    window,
    summed,
    passes,
    mask_bits,
    THREADS: tl.constexpr,
    READS: tl.constexpr,
):
    # One program per row of a prompt's scores [kv_heads, queries, groups, columns] (the template's layout): a
    # row's query is (row // groups) % queries. The maximum and the denominator read the denominator's `summed`
    # slots in `passes` blocks (`_prompt_scores`); the probabilities are written for every column in position
    # order. The maximum is over the seen scores and, as the template's over every masked column, the mask value
    # wherever a prompt column is hidden from the query (exact in any order).
    row = tl.program_id(0)
    position = tl.load(pos_ptr + (row // groups) % queries)
    mask_value = mask_bits.to(tl.float32, bitcast=True)
    s_row = s_ptr + row.to(tl.int64) * columns
    p_row = p_ptr + row.to(tl.int64) * columns
    read, block = _row_blocks(THREADS, READS)
    span = THREADS * READS
    top = tl.full((THREADS, READS), float("-inf"), tl.float32)
    for k in range(passes):
        slot = k * span + block
        x, seen = _prompt_scores(s_row, slot, summed, columns, position, window, mask_value)
        top = _max_keeping_nan(top, tl.where(seen, x, float("-inf")))
    top_row = tl.reduce(tl.reduce(top, 1, _max_keeping_nan), 0, _max_keeping_nan)
    seen_count = tl.minimum(position + 1, tl.where(window == 0, columns, window))
    top_row = tl.where(seen_count < columns, _max_keeping_nan(top_row, mask_value), top_row)
    # thread t adds its values of every block serially, as `decode_softmax` does; a full layer's hidden columns
    # add exp(mask - max) as the template's do, a sliding ring's unheld slots add nothing
    acc = tl.full((THREADS,), 0.0, tl.float32)
    for k in range(passes):
        slot = k * span + block
        x, seen = _prompt_scores(s_row, slot, summed, columns, position, window, mask_value)
        e = _iree_exp(x - top_row)
        e = tl.where((slot < summed) & (tl.where(window == 0, 1, seen.to(tl.int32)) != 0), e, 0.0)
        acc = _add_by_thread(acc, e, read, READS)
    denominator = tl.reshape(_lane_total(tl.reshape(acc, (1, THREADS)), 1, THREADS), (1, 1))
    for k in range((columns + span - 1) // span):
        col = k * span + block
        seen = (col <= position) & (tl.where(window == 0, 1, (col > position - window).to(tl.int32)) != 0)
        s = tl.load(s_row + col, mask=seen & (col < columns), other=0.0)
        e = _iree_exp(tl.where(seen, s, mask_value) - top_row)
        probs = _round_to_bf16(tl.math.div_rn(e, denominator))
        tl.store(p_row + col, _as_bf16(probs), mask=col < columns)
