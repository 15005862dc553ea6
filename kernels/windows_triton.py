"""The chunked attention's key/value context windows as one copy kernel (build time only: imports triton).

W[b, u, h, c, :] = X[b, u * chunk + c - past, h, :] for context slot c of query block u, and zero
where that frame is before the first or past the last one. This is the template's pad, block view
and concatenation of consecutive blocks, written straight into the [clip, block, head, slot, dim]
layout the attention's batched matmuls read, so no transpose follows. A copy of BF16 values and
zeros: the same bits as the template's. One workgroup per (clip, block, head).
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def context_windows(x_ptr, w_ptr, frames, blocks, heads, head_dim, chunk, past, context,
                    SLOTS: tl.constexpr, DIMS: tl.constexpr):
    window = tl.program_id(0)  # = (clip * blocks + block) * heads + head, the output's leading index
    head = window % heads
    block = (window // heads) % blocks
    clip = window // (heads * blocks)
    slot = tl.arange(0, SLOTS)
    dim = tl.arange(0, DIMS)
    frame = block * chunk + slot - past
    present = (slot < context) & (frame >= 0) & (frame < frames)
    source = x_ptr + ((clip * frames + frame)[:, None].to(tl.int64) * heads + head) * head_dim + dim[None, :]
    values = tl.load(source, mask=present[:, None] & (dim[None, :] < head_dim), other=0.0)
    target = w_ptr + (window.to(tl.int64) * context + slot[:, None]) * head_dim + dim[None, :]
    tl.store(target, values, mask=(slot[:, None] < context) & (dim[None, :] < head_dim))
