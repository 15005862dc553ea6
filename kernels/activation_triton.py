"""The feed-forward's SiLU as one elementwise kernel over BF16 (build time only: imports triton).

Y = round(x * logistic(x)) for the up-projection's BF16 result X, with IREE's logistic
1 / (exp(-x) + 1) (IREE's polynomial exp, an IEEE division): the template's `m.silu`, bit for bit,
written as the down-projection's BF16 operand. IREE's own dispatch for it moves its 2 x 2 bytes per
value at about 1.6 TB/s on the H200; this one reads and writes whole 16-byte vectors.

One workgroup per BLOCK values.
"""

from __future__ import annotations

import triton
import triton.language as tl

from gemma3n_iree.kernels.triton_numerics import _as_bf16, _from_bf16, _iree_exp, _round_to_bf16


@triton.jit
def silu_bf16(x_ptr, y_ptr, count, BLOCK: tl.constexpr):
    at = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    live = at < count
    x = _from_bf16(tl.load(x_ptr + at, mask=live, other=0.0))
    y = _round_to_bf16(x * tl.math.div_rn(1.0, _iree_exp(-x) + 1.0))
    tl.store(y_ptr + at, _as_bf16(y), mask=live)
