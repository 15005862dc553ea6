"""IREE 3.13's F32 `exp` and `tanh`, operation for operation, so a kernel can be held to their bits.

IREE does not call a math library for `stablehlo.exponential` and `stablehlo.tanh`: it expands them
into MLIR's polynomial approximations (fused multiply-adds, a floor, one division, an exponent
built from integer bits), on CUDA and on llvm-cpu alike. The LLVM IR IREE emits for them
(`--iree-hal-dump-executable-intermediates-to`) is the source of every constant and every operation
order below. A GPU kernel that replaces IREE's code for an op that uses them (the attention's soft
cap and softmax) must produce these bits, not the correctly rounded function; `tests/test_iree_math.py`
checks this emulation against IREE's compiled code, and the kernel against this emulation.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32


def f32_from_bits(bits: int) -> np.float32:
    return np.array([bits], np.uint32).view(F32)[0]


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """F32 a * b + c with one rounding (numpy has no fused multiply-add).

    The F32 product is exact in F64; the F64 sum is rounded once more to F32, which can differ from a
    single rounding only when that sum lands exactly halfway between two F32 values: the exact
    remainder (two-sum) then says which way the true value lies.
    """
    a, b, c = (np.asarray(v, F32).astype(np.float64) for v in (a, b, c))
    product = a * b
    total = product + c
    virtual = total - product
    remainder = (product - (total - virtual)) + (c - virtual)
    rounded = total.astype(F32)
    with np.errstate(invalid="ignore", over="ignore"):
        neighbour = np.nextafter(rounded, np.where(total > rounded, F32(np.inf), F32(-np.inf)))
        halfway = (rounded.astype(np.float64) + neighbour.astype(np.float64)) / 2 == total
    tie = halfway & (remainder != 0) & np.isfinite(total) & np.isfinite(remainder)
    nudged = np.nextafter(total, np.where(remainder > 0, np.inf, -np.inf)).astype(F32)
    return np.where(tie, nudged, rounded).astype(F32)


_LOG2E = f32_from_bits(0x3FB8AA3B)
_LN2_HI_NEG = f32_from_bits(0xBF318000)
_LN2_LO = f32_from_bits(0x395E8083)
_EXP_POLY = tuple(f32_from_bits(b) for b in (0x39506967, 0x3AB743CE, 0x3C088908, 0x3D2AA9C1, 0x3E2AAAAA))


def exp(x: np.ndarray) -> np.ndarray:
    """IREE's F32 exponential: 2^k * (1 + r + r^2 p(r)), k = floor(x log2 e + 1/2) clamped to +-127."""
    x = np.asarray(x, F32)
    x = np.where(x < F32(-87.8), F32(-87.8), x)
    x = np.where(x > F32(88.8), F32(88.8), x).astype(F32)
    k = np.floor(fma(x, _LOG2E, F32(0.5))).astype(F32)
    k = np.clip(k, F32(-127), F32(127)).astype(F32)
    r = fma(k, _LN2_HI_NEG, x)
    r = fma(k, _LN2_LO, r)
    p = fma(r, _EXP_POLY[0], _EXP_POLY[1])
    for coefficient in (*_EXP_POLY[2:], F32(0.5)):
        p = fma(p, r, coefficient)
    y = (fma(p, (r * r).astype(F32), r) + F32(1)).astype(F32)
    with np.errstate(invalid="ignore"):
        exponent = np.where(np.isnan(k), 0, k).astype(np.int32)
    scale = ((exponent << 23) + np.int32(0x3F800000)).astype(np.int32).view(F32)
    return (y * scale).astype(F32)


_TANH_CLAMP = f32_from_bits(0x40FFF644)
_TANH_NUMERATOR = tuple(
    f32_from_bits(b) for b in (0xA59F25C0, 0x2A61337E, 0xAEBD37FF, 0x335C0041, 0x3779434A, 0x3A270DED, 0x3BA059DC)
)
_TANH_DENOMINATOR = tuple(f32_from_bits(b) for b in (0x35A0D3D8, 0x38F895D6, 0x3B14AA05, 0x3BA059DD))


def tanh(x: np.ndarray) -> np.ndarray:
    """IREE's F32 tanh: x itself below |x| < 4e-4, else the rational p(x^2) x / q(x^2) on x clamped to
    +-7.998..., with an IEEE division."""
    x = np.asarray(x, F32)
    clamped = np.where(x >= _TANH_CLAMP, _TANH_CLAMP, x)
    clamped = np.where(clamped <= -_TANH_CLAMP, -_TANH_CLAMP, clamped).astype(F32)
    x2 = (clamped * clamped).astype(F32)
    p = fma(x2, _TANH_NUMERATOR[0], _TANH_NUMERATOR[1])
    for coefficient in _TANH_NUMERATOR[2:]:
        p = fma(x2, p, coefficient)
    q = fma(x2, _TANH_DENOMINATOR[0], _TANH_DENOMINATOR[1])
    for coefficient in _TANH_DENOMINATOR[2:]:
        q = fma(x2, q, coefficient)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = ((clamped * p).astype(F32) / q).astype(F32)
    return np.where(np.abs(x) < F32(4e-4), clamped, ratio).astype(F32)


def logistic(x: np.ndarray) -> np.ndarray:
    """IREE's F32 logistic: 1 / (exp(-x) + 1) with its exp and an IEEE division."""
    with np.errstate(over="ignore"):
        return (F32(1) / (exp(-np.asarray(x, F32)) + F32(1)).astype(F32)).astype(F32)
