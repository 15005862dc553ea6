"""Executable specification: a numpy emulation of every templated op under a numeric contract.

Each function mirrors one template (same op order, same rounding points, same reduction schedule),
computing in float32 exactly as the emitted StableHLO does.  Elementwise ops and the pinned
reductions are therefore reproducible bit for bit; matmuls and convolutions are computed in float64
and rounded to float32 (the exact sum), which a backend's F32 accumulation order may miss by a few
F32 ULPs -- the only legitimate source of difference.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from .policy import NumericContract

F32 = np.float32
BF16_MIN = float(ml_dtypes.finfo(ml_dtypes.bfloat16).min)  # finite mask value (the finfo(bf16).min HF uses)
LANES = 32


# ---------------------------------------------------------------------------------------------- rounding
def round_bf16(x: np.ndarray) -> np.ndarray:
    """Round-to-nearest-even to BF16, kept in an F32 carrier (what `reduce_precision e8m7` does)."""
    return np.asarray(x, F32).astype(ml_dtypes.bfloat16).astype(F32)


def rnd(c: NumericContract, x: np.ndarray, point: str | None = None) -> np.ndarray:
    """A rounding point of the contract (`point` names the few that diagnostic variants may drop)."""
    return round_bf16(x) if c.rounds_at(point) else np.asarray(x, F32)


def operand(c: NumericContract, x: np.ndarray) -> np.ndarray:
    """A contraction operand: BF16 under BF16 contracts (exact for BF16-valued carriers)."""
    return round_bf16(x) if c.operand_dtype == "bf16" else np.asarray(x, F32)


# ---------------------------------------------------------------------------------------------- schedules
def lane_threads(width: int, reads: int) -> int:
    """MLX CUDA block size: the smallest power of two >= 32 covering `width / reads` (at most 1024)."""
    threads = LANES
    while threads * reads < width:
        threads *= 2
    if threads > 1024:
        raise ValueError(f"lane/XOR schedule supports width <= {1024 * reads} for {reads} reads, got {width}")
    return threads


def xor_halve(v: np.ndarray) -> np.ndarray:
    """Lane 0 of a 32-lane shfl_xor butterfly (masks 16, 8, 4, 2, 1) over the last axis."""
    assert v.shape[-1] == LANES
    for m in (16, 8, 4, 2, 1):
        v = (v[..., :m] + v[..., m : 2 * m]).astype(F32)
    return v[..., 0]


def lane_xor_sum(x: np.ndarray, reads: int, square: bool = False) -> np.ndarray:
    """Sum over the last axis with the MLX CUDA block schedule.

    Thread t reads `reads` adjacent values and accumulates them serially from 0 (squared first for
    RMS), each warp of 32 threads reduces with the XOR butterfly, and the warp totals (zero-padded to
    32 lanes) go through the butterfly once more.
    """
    x = np.asarray(x, F32)
    width = x.shape[-1]
    threads = lane_threads(width, reads)
    if square:
        x = (x * x).astype(F32)
    pad = [(0, 0)] * (x.ndim - 1) + [(0, threads * reads - width)]
    v = np.pad(x, pad).reshape(*x.shape[:-1], threads, reads)
    acc = np.zeros(v.shape[:-1], F32)
    for r in range(reads):
        acc = (acc + v[..., r]).astype(F32)
    warps = threads // LANES
    acc = xor_halve(acc.reshape(*x.shape[:-1], warps, LANES))
    if warps == 1:
        return acc[..., 0]
    return xor_halve(np.pad(acc, [(0, 0)] * (acc.ndim - 1) + [(0, LANES - warps)]))


def prefix_scan(x: np.ndarray) -> np.ndarray:
    """Inclusive scan over the last axis with MLX CUDA's one-block hierarchical schedule (17 adds)."""
    x = np.asarray(x, F32)
    rows, width = x.shape
    padded = -(-width // 128) * 128
    if padded > 4096:
        raise ValueError(f"one-block prefix scan supports width <= 4096, got {width}")
    threads, warps = padded // 4, padded // 128
    v = np.pad(x, [(0, 0), (0, padded - width)]).reshape(rows, threads, 4)
    l0 = v[..., 0]
    l1 = (v[..., 1] + l0).astype(F32)
    l2 = (v[..., 2] + l1).astype(F32)
    l3 = (v[..., 3] + l2).astype(F32)
    local = np.stack([l0, l1, l2, l3], axis=-1).reshape(rows, warps, LANES, 4)

    def warp_scan(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = t
        for off in (1, 2, 4, 8, 16):
            shifted = np.concatenate([np.zeros(r.shape[:-1] + (off,), F32), r[..., : LANES - off]], axis=-1)
            r = (r + shifted).astype(F32)
        exclusive = np.concatenate([np.zeros(r.shape[:-1] + (1,), F32), r[..., : LANES - 1]], axis=-1)
        return r, exclusive

    totals = l3.reshape(rows, warps, LANES)
    _, thread_excl = warp_scan(totals)
    warp_totals = (thread_excl[..., LANES - 1] + totals[..., LANES - 1]).astype(F32)
    _, warp_excl = warp_scan(np.pad(warp_totals, [(0, 0), (0, LANES - warps)]))
    warp_excl = warp_excl[:, :warps]
    out = (local + F32(0)).astype(F32)
    out = (out + warp_excl[:, :, None, None]).astype(F32)
    out = (out + thread_excl[..., None]).astype(F32)
    return out.reshape(rows, padded)[:, :width]


# ---------------------------------------------------------------------------------------------- contractions
def exact_f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float64).astype(F32)


def linear(c: NumericContract, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """y = round(x @ W^T) with contract operands and an exact (float64) F32 result."""
    xo = operand(c, x).astype(np.float64)
    wo = operand(c, w).astype(np.float64)
    return rnd(c, exact_f32(xo @ wo.T))


def sscp_conv(c: NumericContract, x: np.ndarray, w_oihw: np.ndarray, stride: tuple[int, int]) -> np.ndarray:
    """Conv2d on NHWC `x` [B,T,F,Cin] with end-padded time (0, kt-1) and symmetric frequency (1, 1)."""
    cout, cin, kt, kf = w_oihw.shape
    xo = operand(c, x).astype(np.float64)
    wo = operand(c, w_oihw).astype(np.float64)
    xp = np.pad(xo, [(0, 0), (0, kt - 1), (1, 1), (0, 0)])
    b, tp, fp, _ = xp.shape
    st, sf = stride
    to, fo = (tp - kt) // st + 1, (fp - kf) // sf + 1
    out = np.zeros((b, to, fo, cout))
    for i in range(kt):
        for j in range(kf):
            patch = xp[:, i : i + st * (to - 1) + 1 : st, j : j + sf * (fo - 1) + 1 : sf, :]
            out += np.einsum("btfc,oc->btfo", patch, wo[:, :, i, j])
    if c.sscp_conv_result_dtype == "bf16":
        # The backend accumulates in the BF16 result type, in an order this emulation does not
        # know; the exact sum rounded once is the closest any order can get (diagnostics only).
        return round_bf16(exact_f32(out))
    return rnd(c, exact_f32(out))


# ---------------------------------------------------------------------------------------------- norms
def rms_norm(c: NumericContract, x: np.ndarray, w: np.ndarray | None, eps: float) -> np.ndarray:
    """round(x * rsqrt(sum(x^2)/D + eps) [* w]) with the 8-read lane/XOR sum of squares."""
    x = np.asarray(x, F32)
    d = x.shape[-1]
    ms = (lane_xor_sum(x, reads=8, square=True) / F32(d)).astype(F32)
    inv = rsqrt((ms + F32(eps)).astype(F32))
    y = (x * inv[..., None]).astype(F32)
    if w is not None:
        y = (y * np.asarray(w, F32)).astype(F32)
    return rnd(c, y)


def rsqrt(x: np.ndarray) -> np.ndarray:
    """1 / sqrt(x), both correctly rounded (the templates take the sqrt in F64: the same bits)."""
    return (F32(1) / np.sqrt(np.asarray(x, F32))).astype(F32)


def cumulative_group_norm(c: NumericContract, x: np.ndarray, w: np.ndarray, eps: float) -> dict[str, np.ndarray]:
    """HF's running cumulative group norm over [B,T,F,C] with every arithmetic boundary named."""
    b, t, f, ch = x.shape
    n = F32(f * ch)

    def sum_at_time(v: np.ndarray) -> np.ndarray:
        per_freq = lane_xor_sum(v.reshape(b * t * f, ch), reads=4)
        return lane_xor_sum(per_freq.reshape(b * t, f), reads=4).reshape(b, t)

    s = sum_at_time(x)
    cs = prefix_scan(s)
    count = ((np.arange(t, dtype=F32) + F32(1)) * n).astype(F32)
    mean = (cs / count).astype(F32)
    centered = (x - mean[:, :, None, None]).astype(F32)
    sq = (centered * centered).astype(F32)
    sqs = sum_at_time(sq)
    csq = prefix_scan(sqs)
    var = (csq / count).astype(F32)
    stab = (var + F32(eps)).astype(F32)
    inv = rsqrt(stab)
    out = rnd(c, ((centered * inv[:, :, None, None]).astype(F32) * np.asarray(w, F32)).astype(F32), "sscp_norm")
    return {
        "norm_sum_at_time": s,
        "norm_cumulative_sum": cs,
        "norm_mean": mean,
        "norm_squared_at_time": sqs,
        "norm_cumulative_squared": csq,
        "norm_variance": var,
        "norm_stabilized_variance": stab,
        "norm_inverse_stddev": inv,
        "norm": out,
    }


# ---------------------------------------------------------------------------------------------- elementwise
def logistic(x: np.ndarray) -> np.ndarray:
    return (F32(1) / (F32(1) + np.exp(-np.asarray(x, F32)))).astype(F32)


def silu(c: NumericContract, x: np.ndarray) -> np.ndarray:
    return rnd(c, (x * logistic(x)).astype(F32))


def clamp(x: np.ndarray, limit: float) -> np.ndarray:
    return np.clip(x, -F32(limit), F32(limit)).astype(F32)


def softplus(x: np.ndarray) -> np.ndarray:
    """torch's softplus (threshold 20): x above the threshold, else log1p(exp(x))."""
    x = np.asarray(x, F32)
    return np.where(x > F32(20), x, np.log1p(np.exp(x)).astype(F32)).astype(F32)


def affine_dequantize(
    words: np.ndarray, scales: np.ndarray, biases: np.ndarray, bits: int, group_size: int
) -> np.ndarray:
    """MLX affine dequantization, `sequential` order: round_bf16(round_bf16(q * scale) + bias).

    Words are little-endian uint32 holding 32/bits values, least significant first.
    """
    per_word = 32 // bits
    words = np.asarray(words, np.uint32)
    shifts = np.arange(per_word, dtype=np.uint32) * np.uint32(bits)
    q = ((words[..., None] >> shifts) & np.uint32((1 << bits) - 1)).reshape(*words.shape[:-1], -1)
    s = np.repeat(np.asarray(scales, F32), group_size, axis=-1)
    b = np.repeat(np.asarray(biases, F32), group_size, axis=-1)
    return round_bf16(round_bf16(q.astype(F32) * s) + b)


def timing_signal(positions: np.ndarray, channels: int) -> np.ndarray:
    """HF's relative timing signal: concat(sin, cos) of positions x inverse timescales, in F32."""
    num = channels // 2
    log_inc = math.log(1.0e4 / 1.0) / max(num - 1, 1)
    inv = (F32(1.0) * np.exp(np.arange(num, dtype=F32) * F32(-log_inc))).astype(F32)
    scaled = (np.asarray(positions, F32)[:, None] * inv[None, :]).astype(F32)
    return np.concatenate([np.sin(scaled), np.cos(scaled)], axis=-1).astype(F32)


def query_scale(head_dim: int) -> float:
    """transformers' q_scale = head_dim^-0.5 / softplus(0), as F32."""
    return float(np.float32(head_dim**-0.5 / math.log(2.0)))


# ---------------------------------------------------------------------------------------------- prefill (merge + dense PLE)
def contract_scalar(c: NumericContract, value: float) -> np.float32:
    """A model constant as the contract's frameworks hold it: BF16 under BF16-rounding contracts
    (transformers casts `embed_scale` & co. to the activation dtype; MLX converts a Python scalar to
    the array's dtype), the F32 value otherwise."""
    v = F32(value)
    return F32(round_bf16(np.array(v))[()]) if c.round_bf16 else v


def mlx_rms_norm(c: NumericContract, x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    """MLX `fast.rms_norm`: round(round(x * rsqrt(sum(x^2)/D + eps)) * w), two rounding points
    (spec gemma3n-audio §8.4; numeric-contracts §3(f)), with the 8-read lane/XOR sum of squares
    (width 256: 32 lanes x 8 reads, one warp)."""
    x = np.asarray(x, F32)
    d = x.shape[-1]
    ms = (lane_xor_sum(x, reads=8, square=True) / F32(d)).astype(F32)
    inv = rsqrt((ms + F32(eps)).astype(F32))
    normed = rnd(c, (x * inv[..., None]).astype(F32))
    return rnd(c, (normed * np.asarray(w, F32)).astype(F32))
