"""The accumulation envelope: which BF16 results an F32 dot product may legitimately round to.

A backend is free to sum the K products of a matmul or convolution element in any order (serial
forward or backward, pairwise trees, blocks of an MMA tile, split-K partial sums combined at the
end, or a wider accumulator).  Each order gives one F32 sum; their BF16 roundings form the set of
legitimate outcomes.  A backend value inside that set is an accumulation-order effect; a value
outside it is a bug (a dropped rounding point, a wrong operand, a wrong schedule).

x86's BF16 dot-product instruction (`vdpbf16ps`, what llvm-cpu's data-tiled BF16 matmuls run on a CPU
with AVX512-BF16) adds each pair of products odd element first: the `pairs-odd-first` order.

NVIDIA tensor cores (the `mma.sync` instructions IREE's CUDA backend emits) do not add like IEEE
F32: they sum a K-block of exact products with aligned significands and truncate (round toward
zero) into the F32 accumulator.  Those outcomes are modelled by the `tc-*` orders: each block of
16 (or 8, 4) products is summed exactly and added to the accumulator with truncation.

The products of BF16-valued operands are exact in F32, so each order is reproduced exactly here.
The enumeration is bounded (`budget` orders at most) and deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from .emulation import round_bf16

F32 = np.float32
Order = Callable[[np.ndarray], np.float32]


def _sequential(values: np.ndarray) -> np.float32:
    acc = F32(0)
    for v in values:
        acc = F32(acc + v)
    return acc


def _pairs_odd_first(values: np.ndarray) -> np.float32:
    """Serial, each pair (2j, 2j+1) added odd element first: x86's BF16 dot product `vdpbf16ps`, which
    llvm-cpu's data-tiled BF16 matmuls use on a CPU with AVX512-BF16 (K padded with a zero to even)."""
    swapped = np.asarray(values).copy()
    pairs = len(swapped) // 2 * 2
    swapped[0:pairs:2], swapped[1:pairs:2] = values[1:pairs:2], values[0:pairs:2]
    return _sequential(swapped)


def _to_f32_toward_zero(x: float) -> np.float32:
    """Round a float64 to F32 toward zero (truncation)."""
    y = np.float32(x)
    if np.isfinite(y) and abs(float(y)) > abs(x):
        y = np.nextafter(y, np.float32(0))
    return np.float32(y)


def _tensor_core(block: int) -> Order:
    """K-blocks of `block` exact products added to the F32 accumulator with truncation (MMA model)."""

    def order(values: np.ndarray) -> np.float32:
        acc = 0.0
        for i in range(0, len(values), block):
            acc = float(_to_f32_toward_zero(acc + float(np.sum(values[i : i + block], dtype=np.float64))))
        return np.float32(acc)

    return order


def _pairwise(values: np.ndarray) -> np.float32:
    if len(values) == 0:
        return F32(0)
    level = list(values.astype(F32))
    while len(level) > 1:
        nxt = [F32(level[i] + level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def _blocked(block: int, inner: Order, outer: Order) -> Order:
    """Sum `block`-sized chunks with `inner`, then the chunk sums with `outer` (MMA/K-tile shapes)."""

    def order(values: np.ndarray) -> np.float32:
        parts = np.array([inner(values[i : i + block]) for i in range(0, len(values), block)], F32)
        return outer(parts)

    return order


def _split_k(splits: int, inner: Order, outer: Order) -> Order:
    """`splits` contiguous partial sums (split-K), combined at the end."""

    def order(values: np.ndarray) -> np.float32:
        parts = np.array([inner(chunk) for chunk in np.array_split(values, splits) if len(chunk)], F32)
        return outer(parts)

    return order


def _strided(lanes: int, inner: Order, outer: Order) -> Order:
    """Lane j sums elements j, j+lanes, ... (vectorised accumulators), then the lanes are combined."""

    def order(values: np.ndarray) -> np.float32:
        parts = np.array([inner(values[j::lanes]) for j in range(min(lanes, len(values)))], F32)
        return outer(parts)

    return order


def accumulation_orders(k: int, budget: int = 64) -> list[tuple[str, Order]]:
    """Named summation orders for K terms, at most `budget` of them."""
    orders: list[tuple[str, Order]] = [
        ("sequential", _sequential),
        ("reverse", lambda v: _sequential(v[::-1])),
        ("pairs-odd-first", _pairs_odd_first),
        ("pairwise", _pairwise),
        ("ascending-magnitude", lambda v: _sequential(v[np.argsort(np.abs(v), kind="stable")])),
        ("descending-magnitude", lambda v: _sequential(v[np.argsort(-np.abs(v), kind="stable")])),
    ]
    orders += [(f"tc-k{s}-truncating", _tensor_core(s)) for s in (16, 8, 4, 1)]
    sizes = [s for s in (2, 4, 8, 16, 32, 64, 128, 256) if s < k]
    for s in sizes:
        orders.append((f"blocks-{s}", _blocked(s, _sequential, _sequential)))
        orders.append((f"blocks-{s}-pairwise", _blocked(s, _sequential, _pairwise)))
        orders.append((f"lanes-{s}", _strided(s, _sequential, _pairwise)))
    for splits in (2, 3, 4, 8, 16):
        if splits < k:
            orders.append((f"split-k-{splits}", _split_k(splits, _sequential, _sequential)))
            orders.append((f"split-k-{splits}-pairwise", _split_k(splits, _pairwise, _sequential)))
    return orders[:budget]


def exact_f32(products: Iterable[float]) -> np.float32:
    """The exactly rounded sum (what an accumulator wider than F32 gives)."""
    return F32(np.sum(np.asarray(list(products), np.float64)))


def reachable_sums(products: np.ndarray, budget: int = 64) -> dict[str, np.float32]:
    """F32 sum of the products under every enumerated order (plus the exactly rounded sum)."""
    products = np.asarray(products, F32)
    sums = {name: order(products) for name, order in accumulation_orders(len(products), budget)}
    sums["exact"] = exact_f32(products.astype(np.float64))
    return sums


def envelope_bf16(a: np.ndarray, b: np.ndarray, budget: int = 64) -> np.ndarray:
    """Sorted distinct BF16 outcomes of sum(a * b) over the enumerated accumulation orders."""
    products = np.asarray(a, F32) * np.asarray(b, F32)  # exact for BF16-valued operands
    sums = np.array(list(reachable_sums(products, budget).values()), F32)
    return np.unique(round_bf16(sums))


def inside_envelope(observed: float, a: np.ndarray, b: np.ndarray, budget: int = 64) -> bool:
    """Whether a backend's BF16 result for sum(a * b) is a legitimate accumulation outcome."""
    outcomes = envelope_bf16(a, b, budget)
    return bool(np.any(outcomes.view(np.uint32) == np.asarray([observed], F32).view(np.uint32))) or (
        observed == 0 and np.any(outcomes == 0)
    )
