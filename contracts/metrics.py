"""Distances between two results of the same contract, in the units the contract rounds to."""

from __future__ import annotations

import numpy as np


def bf16_order(x: np.ndarray) -> np.ndarray:
    """Monotone integer key of BF16 values (the upper half of F32 bits) with +0 and -0 equal."""
    bits = (np.ascontiguousarray(x, np.float32).view(np.uint32) >> 16).astype(np.int64)
    magnitude = bits & 0x7FFF
    return np.where(bits & 0x8000, 0x8000 - magnitude, 0x8000 + magnitude)


def bf16_ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many BF16 values lie between a and b (0 for equal values, ±0 equal)."""
    return np.abs(bf16_order(a) - bf16_order(b))


def relative_l2(got: np.ndarray, want: np.ndarray) -> float:
    want64 = np.asarray(want, np.float64)
    norm = np.linalg.norm(want64)
    diff = np.linalg.norm(np.asarray(got, np.float64) - want64)
    return float(diff / norm) if norm else float(diff)


def f32_accumulation_bound(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Largest legitimate error of `x @ w.T` summed in F32 in any order: gamma_K * sum |x_k w_k|.

    gamma_K = K u / (1 - K u) with u = 2^-24 is the classic bound on recursive summation of K
    terms in any association order (each product of BF16 values is exact in F32).
    """
    k = x.shape[-1]
    u = 2.0**-24
    gamma = k * u / (1 - k * u)
    return gamma * (np.abs(np.asarray(x, np.float64)) @ np.abs(np.asarray(w, np.float64)).T)


def bf16_ulp(x: np.ndarray) -> np.ndarray:
    """Spacing of BF16 values at |x| (2^(e-7) for normal values)."""
    x = np.abs(np.asarray(x, np.float64))
    exponent = np.floor(np.log2(np.maximum(x, 2.0**-126)))
    return 2.0 ** (exponent - 7)
