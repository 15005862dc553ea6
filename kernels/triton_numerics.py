"""Triton arithmetic shared by the kernels (build time only: imports triton), each the exact
counterpart of an emulation in `contracts/`.

- `_round_to_bf16`: the contract's BF16 rounding point (`emulation.round_bf16`);
- `_warp_sum`: lane 0 of the 32-lane shfl_xor butterfly (`emulation.xor_halve`); `_lane_total`: a block's
  per-thread sums through every warp's butterfly, then the warp totals' (`emulation.lane_xor_sum`);
- `_iree_exp`, `_iree_tanh`: IREE 3.13's F32 exp and tanh (`iree_math.exp`, `iree_math.tanh`), the
  same fused multiply-adds in the same order, so a kernel replacing IREE's code for an op that uses
  them gives IREE's bits. The kernels are built with FMA contraction off, so every `*` and `+`
  rounds on its own, as in IREE's code, and `tl.fma` is the only fused operation.
"""

from __future__ import annotations

import struct

import triton
import triton.language as tl


def _f32(bits: int) -> tl.constexpr:
    """An F32 constant given by its bits (a Python float holding exactly that F32 value)."""
    return tl.constexpr(struct.unpack("<f", struct.pack("<I", bits))[0])


# IREE 3.13's constants, bit for bit (contracts/iree_math.py)
_LOG2E = _f32(0x3FB8AA3B)
_LN2_HI_NEG = _f32(0xBF318000)
_LN2_LO = _f32(0x395E8083)
_EXP_P0 = _f32(0x39506967)
_EXP_P1 = _f32(0x3AB743CE)
_EXP_P2 = _f32(0x3C088908)
_EXP_P3 = _f32(0x3D2AA9C1)
_EXP_P4 = _f32(0x3E2AAAAA)
_TANH_LIMIT = _f32(0x40FFF644)
_TANH_P0 = _f32(0xA59F25C0)
_TANH_P1 = _f32(0x2A61337E)
_TANH_P2 = _f32(0xAEBD37FF)
_TANH_P3 = _f32(0x335C0041)
_TANH_P4 = _f32(0x3779434A)
_TANH_P5 = _f32(0x3A270DED)
_TANH_P6 = _f32(0x3BA059DC)
_TANH_Q0 = _f32(0x35A0D3D8)
_TANH_Q1 = _f32(0x38F895D6)
_TANH_Q2 = _f32(0x3B14AA05)
_TANH_Q3 = _f32(0x3BA059DD)


@triton.jit
def _xor_level(v, R: tl.constexpr, G: tl.constexpr, M: tl.constexpr):
    """One butterfly level on [R, G, 2M]: lane l < M gets v[l] + v[l + M] (what lane 0 needs)."""
    lo, hi = tl.split(tl.permute(tl.reshape(v, (R, G, 2, M)), (0, 1, 3, 2)))
    return lo + hi


@triton.jit
def _warp_sum(v, R: tl.constexpr, G: tl.constexpr):
    """[R, G, 32] -> [R, G]: lane 0 of the 32-lane shfl_xor butterfly of each of G warps."""
    v = _xor_level(v, R, G, 16)
    v = _xor_level(v, R, G, 8)
    v = _xor_level(v, R, G, 4)
    v = _xor_level(v, R, G, 2)
    v = _xor_level(v, R, G, 1)
    return tl.reshape(v, (R, G))


@triton.jit
def _pad_double(v, R: tl.constexpr, N: tl.constexpr):
    """[R, N] -> [R, 2N]: the values, then N lanes of +0."""
    return tl.reshape(tl.permute(tl.join(v, tl.full((R, N), 0.0, tl.float32)), (0, 2, 1)), (R, 2 * N))


@triton.jit
def _pad_to_32(v, R: tl.constexpr, N: tl.constexpr):
    """[R, N] -> [R, 32] with +0 in lanes N..31 (N a power of two, 2..32)."""
    if N <= 2:
        v = _pad_double(v, R, 2)
    if N <= 4:
        v = _pad_double(v, R, 4)
    if N <= 8:
        v = _pad_double(v, R, 8)
    if N <= 16:
        v = _pad_double(v, R, 16)
    return v


@triton.jit
def _lane_total(acc, R: tl.constexpr, THREADS: tl.constexpr):
    """[R, THREADS] per-thread sums -> [R]: each warp's butterfly, then the warp totals' (zero-padded to 32)."""
    WARPS: tl.constexpr = THREADS // 32
    total = _warp_sum(tl.reshape(acc, (R, WARPS, 32)), R, WARPS)
    if WARPS > 1:
        total = _warp_sum(tl.reshape(_pad_to_32(total, R, WARPS), (R, 1, 32)), R, 1)
    return tl.reshape(total, (R,))


@triton.jit
def _round_to_bf16(y):
    """Round to nearest even BF16, kept in F32, in integer ops (Triton's interpreter truncates on `.to`).

    Carrying into the exponent is what makes values past BF16's largest finite round to infinity;
    NaN stays NaN.
    """
    bits = y.to(tl.uint32, bitcast=True)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).to(tl.float32, bitcast=True)
    return tl.where(y != y, y, rounded)


@triton.jit
def _iree_exp(x):
    """IREE's F32 exponential: 2^k * (1 + r + r^2 p(r)), k = floor(x log2 e + 1/2) clamped to +-127.

    NaN keeps NaN (the comparisons are ordered, so the clamps leave it; the exponent is then taken
    from 0). k = -127 builds the scale +0, which is how IREE flushes the far negative tail to zero.
    """
    x = tl.where(x < -87.8, -87.8, x)
    x = tl.where(x > 88.8, 88.8, x)
    k = tl.floor(tl.fma(x, _LOG2E, 0.5))
    k = tl.where(k < -127.0, -127.0, k)
    k = tl.where(k > 127.0, 127.0, k)
    r = tl.fma(k, _LN2_HI_NEG, x)
    r = tl.fma(k, _LN2_LO, r)
    p = tl.fma(r, _EXP_P0, _EXP_P1)
    p = tl.fma(p, r, _EXP_P2)
    p = tl.fma(p, r, _EXP_P3)
    p = tl.fma(p, r, _EXP_P4)
    p = tl.fma(p, r, 0.5)
    y = tl.fma(p, r * r, r) + 1.0
    exponent = tl.where(k != k, 0.0, k).to(tl.int32)
    return y * ((exponent << 23) + 0x3F800000).to(tl.float32, bitcast=True)


@triton.jit
def _iree_tanh(x):
    """IREE's F32 tanh: x below |x| < 4e-4, else p(x^2) x / q(x^2) on x clamped to +-7.998..., with an
    IEEE division."""
    c = tl.where(x >= _TANH_LIMIT, _TANH_LIMIT, x)
    c = tl.where(c <= -_TANH_LIMIT, -_TANH_LIMIT, c)
    x2 = c * c
    p = tl.fma(x2, _TANH_P0, _TANH_P1)
    p = tl.fma(x2, p, _TANH_P2)
    p = tl.fma(x2, p, _TANH_P3)
    p = tl.fma(x2, p, _TANH_P4)
    p = tl.fma(x2, p, _TANH_P5)
    p = tl.fma(x2, p, _TANH_P6)
    q = tl.fma(x2, _TANH_Q0, _TANH_Q1)
    q = tl.fma(x2, q, _TANH_Q2)
    q = tl.fma(x2, q, _TANH_Q3)
    return tl.where(tl.abs(x) < 4e-4, c, tl.math.div_rn(c * p, q))


@triton.jit
def _as_bf16(y):
    """A BF16-valued F32 as BF16: its upper 16 bits (the same bits `.to(tl.bfloat16)` gives on the GPU;
    Triton's interpreter converts subnormals wrongly)."""
    return (y.to(tl.uint32, bitcast=True) >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)


@triton.jit
def _from_bf16(x):
    """BF16 to F32 by its bits (exact, as `.to(tl.float32)` is on the GPU; Triton's interpreter converts
    BF16 subnormals wrongly, and the SiLU's test covers every BF16 value)."""
    return (x.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)


@triton.jit
def _add(a, b):
    """The combine of a `tl.reduce` sum (`tl.sum`'s own is not interpretable under the tests' import)."""
    return a + b
