"""IREE 3.13's F32 `exp`, `tanh` and `log`, operation for operation, so a kernel can be held to their bits.

IREE does not call a math library for `stablehlo.exponential`, `stablehlo.tanh` and `stablehlo.log`: it expands them
into MLIR's polynomial approximations (fused multiply-adds, a floor, one division, an exponent
built from integer bits), on CUDA and on llvm-cpu alike. The LLVM IR IREE emits for them
(`--iree-hal-dump-executable-intermediates-to`) is the source of every constant and every operation
order below (`log` as llvm-cpu compiles it; the CUDA backend's `log` has not been read). A GPU kernel that
replaces IREE's code for an op that uses them (the attention's soft cap and softmax) must produce these
bits, not the correctly rounded function; `tests/test_iree_math.py` checks this emulation against IREE's
compiled code, and the kernel against this emulation.
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


_LOG_MIN_NORMAL = f32_from_bits(0x00800000)
_LOG_SQRT_HALF = f32_from_bits(0x3F3504F3)
_LOG_LN2 = f32_from_bits(0x3F317218)
#: Cephes' logf polynomial in three interleaved chains (p0 x + p1, p3 x + p4, p6 x + p7, ...).
_LOG_POLY = tuple(
    f32_from_bits(b)
    for b in (
        0x3D9021BB,
        0xBDEBD1B8,
        0xBDFE5D4F,
        0x3E11E9BF,
        0x3E4CCEAC,
        0xBE7FFFFC,
        0x3DEF251A,
        0xBE2AAE50,
        0x3EAAAAAA,
    )
)


def log(x: np.ndarray) -> np.ndarray:
    """IREE's F32 natural logarithm (MLIR's polynomial approximation): x = m 2^e with m in [sqrt(1/2), sqrt(2)),
    log x = e ln 2 + (m - 1) - (m - 1)^2 / 2 + (m - 1)^3 p(m - 1); inputs below the smallest normal are read
    as it, x < 0 (and NaN) give NaN, 0 gives -inf and +inf gives +inf."""
    x = np.asarray(x, F32)
    with np.errstate(invalid="ignore"):
        clamped = np.where(~(x <= _LOG_MIN_NORMAL), x, _LOG_MIN_NORMAL).astype(F32)  # NaN passes
    bits = clamped.view(np.uint32)
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(F32)  # [0.5, 1)
    e = ((bits >> np.uint32(23)).astype(np.int32).astype(F32) - F32(126)).astype(F32)
    small = m < _LOG_SQRT_HALF
    e = (e - np.where(small, F32(1), F32(0))).astype(F32)
    r = ((m - F32(1)).astype(F32) + np.where(small, m, F32(0))).astype(F32)
    r2 = (r * r).astype(F32)
    r3 = (r2 * r).astype(F32)
    p = _LOG_POLY
    a = fma(fma(p[0], r, p[1]), r, p[6])
    b = fma(fma(p[2], r, p[3]), r, p[7])
    c = fma(fma(p[4], r, p[5]), r, p[8])
    y = (fma(fma(a, r3, b), r3, c) * r3).astype(F32)
    y = fma(F32(-0.5), r2, y)
    y = fma(e, _LOG_LN2, (r + y).astype(F32))
    with np.errstate(invalid="ignore"):
        y = np.where(x == F32(np.inf), F32(np.inf), y)
        y = np.where(~(x >= F32(0)), F32(np.nan), y)
        return np.where(x == F32(0), F32(-np.inf), y).astype(F32)


def logistic(x: np.ndarray) -> np.ndarray:
    """IREE's F32 logistic: 1 / (exp(-x) + 1) with its exp and an IEEE division."""
    with np.errstate(over="ignore"):
        return (F32(1) / (exp(-np.asarray(x, F32)) + F32(1)).astype(F32)).astype(F32)
