"""A test kernel that applies the kernels' IREE exp and tanh (kernels/triton_numerics.py) elementwise."""

import triton
import triton.language as tl

from gemma3n_iree.kernels.triton_numerics import _iree_exp, _iree_tanh


@triton.jit
def exp_and_tanh(x_ptr, exp_ptr, tanh_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n)
    tl.store(exp_ptr + i, _iree_exp(x), mask=i < n)
    tl.store(tanh_ptr + i, _iree_tanh(x), mask=i < n)
