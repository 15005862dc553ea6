"""The chunked local attention's core as one kernel (build time only: imports triton).

From the projections' results (queries, keys, values: BF16 [clip, frame, head, dim]), the
per-dimension query scale (F32) and the projected relative positions (BF16 [position, head, dim]), it
computes what the attention template computes between them, in the template's order and with its
rounding points:

    q        = round(q * scale)                 the per-dimension query scale
    v        = v where the frame is valid, else 0
    content  = round(q . k)                     over the block's context window (zero outside the clip)
    rel      = round(q . P)                     relative positions past .. 0
    logits   = round(content + shift(rel))      out[w, c] = rel[w, c - w] for 0 <= c - w <= past, else 0
    capped   = round(tanh(logits / cap) * cap)  IREE's tanh (triton_numerics._iree_tanh)
    masked   = capped where past >= c - w >= 0 and the key frame is valid, else the BF16 minimum
    probs    = round(exp(masked - max) / sum)   IREE's exp; the sum in the pinned 32-lane schedule
    attended = round(probs . v)                 written as BF16 [clip, frame, head, dim]

The three products take BF16 operands and accumulate in F32 on the tensor cores (the contract's
matmul; only their accumulation order is free). Everything else is elementwise or the pinned sum,
done with the same operations as IREE's code for the template (IEEE divisions, no FMA contraction,
IREE's polynomial exp and tanh), so it gives the same bits.

One workgroup per (clip, block, head): ROWS >= the chunk of queries against SLOTS >= the context of
keys, DIMS >= the head width; padding rows, slots and dims are zeros and never stored. In IREE's
code the same attention is about twenty dispatches per block with three transposes of the queries,
keys and context between them.
"""

from __future__ import annotations

import triton
import triton.language as tl

from gemma3n_iree.kernels.triton_numerics import _as_bf16, _iree_exp, _iree_tanh, _round_to_bf16, _warp_sum


@triton.jit
def _max_keeping_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def attention_core(
    q_ptr,
    scale_ptr,
    k_ptr,
    v_ptr,
    pos_ptr,
    valid_ptr,
    out_ptr,
    frames,
    blocks,
    heads,
    head_dim,
    chunk,
    past,
    cap_bits,
    mask_bits,
    ROWS: tl.constexpr,
    SLOTS: tl.constexpr,
    DIMS: tl.constexpr,
):
    window = tl.program_id(0)  # (clip * blocks + block) * heads + head
    head = window % heads
    block = (window // heads) % blocks
    clip = window // (heads * blocks)
    row = tl.arange(0, ROWS)
    slot = tl.arange(0, SLOTS)
    dim = tl.arange(0, DIMS)
    in_dim = dim[None, :] < head_dim

    query = block * chunk + row
    query_live = (row < chunk) & (query < frames)
    query_at = ((clip * frames + query)[:, None].to(tl.int64) * heads + head) * head_dim + dim[None, :]
    scale = tl.load(scale_ptr + dim, mask=dim < head_dim, other=0.0)
    q = tl.load(q_ptr + query_at, mask=query_live[:, None] & in_dim, other=0.0).to(tl.float32)
    q = _as_bf16(_round_to_bf16(q * scale[None, :]))

    key = block * chunk + slot - past
    context = chunk + past
    key_live = (slot < context) & (key >= 0) & (key < frames)
    key_at = ((clip * frames + key)[:, None].to(tl.int64) * heads + head) * head_dim + dim[None, :]
    key_valid = key_live & (tl.load(valid_ptr + clip * frames + key, mask=key_live, other=0) != 0)
    k = tl.load(k_ptr + key_at, mask=key_live[:, None] & in_dim, other=0.0)
    # Masked slots have probability 0, but 0 * v is NaN for a non-finite v: values of invalid frames are 0
    v = tl.load(v_ptr + key_at, mask=key_valid[:, None] & in_dim, other=0.0)
    pos_at = (slot[:, None] * heads + head) * head_dim + dim[None, :]
    pos = tl.load(pos_ptr + pos_at, mask=(slot[:, None] <= past) & in_dim, other=0.0)

    content = _round_to_bf16(tl.dot(q, tl.trans(k)))
    rel = _round_to_bf16(tl.dot(q, tl.trans(pos)))
    lag = slot[None, :] - row[:, None]
    in_band = (lag >= 0) & (lag <= past)
    shifted = tl.gather(rel, tl.where(in_band, lag, 0), axis=1)
    logits = _round_to_bf16(content + tl.where(in_band, shifted, 0.0))

    cap = cap_bits.to(tl.float32, bitcast=True)
    capped = _round_to_bf16(_iree_tanh(tl.math.div_rn(logits, cap)) * cap)
    masked = tl.where(in_band & key_valid[None, :], capped, mask_bits.to(tl.float32, bitcast=True))
    masked = tl.where(slot[None, :] < context, masked, float("-inf"))  # padding slots: not in the row
    top = tl.reduce(masked, 1, _max_keeping_nan)
    e = tl.where(slot[None, :] < context, _iree_exp(masked - top[:, None]), 0.0)
    total = tl.reshape(_warp_sum(tl.reshape(e, (ROWS, 1, SLOTS)), ROWS, 1), (ROWS,))
    probs = _round_to_bf16(tl.math.div_rn(e, total[:, None]))

    attended = _round_to_bf16(tl.dot(_as_bf16(probs), v))
    tl.store(out_ptr + query_at, _as_bf16(attended), mask=query_live[:, None] & in_dim)
