"""Executable specification of the text decoder's op families under a numeric contract (numpy, F32 carriers).

One pure function per op family of `decoder_policy.FAMILIES`, each rounding exactly at the table's points
(`rnd` looks every point up) and reducing with the table's schedules, so a template that does the same
operations in the same order produces the same bits.  Two freedoms remain, as in the audio stage:

* contractions (`linear`, the attention's q.k and P.v) are computed exactly (float64 products of the
  contract's operands, summed in float64) and rounded once to F32; a backend's F32 accumulation order may
  land on a neighbouring value, which the accumulation envelope (`envelope.py`) judges.  They are evaluated
  row by row (one query, one token), so a token's values never depend on how many rows share the call:
  batching, prefill versus decode and the length of a prompt do not change them;
* `exp`, `tanh` (and the token selection's `log`) are the F32 functions of the backend: `CORRECTLY_ROUNDED`
  (float64 rounded to F32, the same bits on every machine) by default, `IREE_MATH` (IREE 3.13's
  polynomials, `iree_math.py`) to hold a compiled program to its own functions.

Weights are addressed by logical name (`decoder_weights.py`) as float32 arrays of BF16 values (any float
dtype is accepted).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..model.decoder_config import DecoderConfig
from . import emulation as E
from . import iree_math
from .decoder_policy import DENOMINATOR_READS, MEAN_READS, rounds
from .policy import NumericContract

F32 = np.float32
Weights = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class Transcendentals:
    """The F32 `exp`, `tanh` and `log` (the token selection's, `token_select`) of a backend."""

    name: str
    exp: Callable[[np.ndarray], np.ndarray]
    tanh: Callable[[np.ndarray], np.ndarray]
    log: Callable[[np.ndarray], np.ndarray]


def _rounded(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    def f32(x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", under="ignore"):
            return fn(np.asarray(x, F32).astype(np.float64)).astype(F32)

    return f32


CORRECTLY_ROUNDED = Transcendentals("correctly-rounded", _rounded(np.exp), _rounded(np.tanh), _rounded(np.log))
IREE_MATH = Transcendentals("iree-3.13", iree_math.exp, iree_math.tanh, iree_math.log)


def weight(w: Weights, name: str) -> np.ndarray:
    try:
        return np.asarray(w[name], F32)
    except KeyError:
        raise KeyError(f"decoder weight {name!r} is missing") from None


# ---------------------------------------------------------------------------------------------- rounding, schedules
def rnd(c: NumericContract, x: np.ndarray, point: str) -> np.ndarray:
    """The decoder's rounding point `point` (`decoder_policy.POINTS`) under contract `c`."""
    return E.round_bf16(x) if rounds(c, point) else np.asarray(x, F32)


def block_schedule(width: int, reads: int, max_threads: int = 1024) -> tuple[int, int]:
    """`block_sum`'s (threads, passes) for rows of `width`: the lane/XOR block covering the row, at most
    `max_threads` threads of `reads` values, and how many such blocks the row is read in."""
    threads = E.lane_threads(min(width, max_threads * reads), reads)
    return threads, max(1, -(-width // (threads * reads)))


def block_sum(x: np.ndarray, reads: int, max_threads: int = 1024) -> np.ndarray:
    """Sum over the last axis with the MLX CUDA block schedule, looping past one block.

    `lane_xor_sum`'s schedule (thread t sums `reads` adjacent values serially from 0, the warps' XOR
    butterfly, the warp totals' butterfly) with at most `max_threads` threads: a longer row is read in
    passes of `max_threads * reads` values, each thread accumulating its values of every pass serially.
    It equals `lane_xor_sum` whenever that fits one block, and trailing zeros never change it (a value's
    thread and position in its thread depend on its column only), so a row's sum does not depend on how
    many masked columns follow it.
    """
    x = np.asarray(x, F32)
    width = x.shape[-1]
    threads, passes = block_schedule(width, reads, max_threads)
    span = threads * reads
    lead = x.shape[:-1]
    v = np.pad(x, [(0, 0)] * len(lead) + [(0, passes * span - width)]).reshape(*lead, passes, threads, reads)
    acc = np.zeros(lead + (threads,), F32)
    for k in range(passes):
        for r in range(reads):
            acc = (acc + v[..., k, :, r]).astype(F32)
    warps = threads // E.LANES
    acc = E.xor_halve(acc.reshape(*lead, warps, E.LANES))
    if warps == 1:
        return acc[..., 0]
    return E.xor_halve(np.pad(acc, [(0, 0)] * len(lead) + [(0, E.LANES - warps)]))


def mean(c: NumericContract, x: np.ndarray) -> np.ndarray:
    """Row mean [.., 1]: round(round(block_sum(x)) * round(1/W)) (mx.mean)."""
    total = rnd(c, block_sum(x, MEAN_READS), "mean.sum")
    return rnd(c, total * E.contract_scalar(c, 1.0 / x.shape[-1]), "mean.scale")[..., None]


def sequential_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a [.., K] @ b [N, K]^T in F32, products rounded one by one and added left to right (no FMA)."""
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    acc = (a[..., 0:1] * b[:, 0]).astype(F32)
    for k in range(1, a.shape[-1]):
        acc = (acc + (a[..., k : k + 1] * b[:, k]).astype(F32)).astype(F32)
    return acc


# ---------------------------------------------------------------------------------------------- contractions
def exact_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a [.., K] @ b [N, K]^T, float64 operands, one row at a time (the same order whatever the row count),
    rounded to F32."""
    rows = a.reshape(-1, a.shape[-1])
    bt = b.T
    out = np.empty((rows.shape[0], b.shape[0]), F32)
    for i in range(rows.shape[0]):
        out[i] = (rows[i] @ bt).astype(F32)
    return out.reshape(*a.shape[:-1], b.shape[0])


def linear(c: NumericContract, x: np.ndarray, w: np.ndarray, point: str) -> np.ndarray:
    """round(x @ W^T): the contract's operands, an exactly rounded F32 result, then rounding point `point`."""
    xo = E.operand(c, x).astype(np.float64)
    wo = E.operand(c, w).astype(np.float64)
    return rnd(c, exact_rows(xo, wo), point)


def rms_norm(c: NumericContract, cfg: DecoderConfig, x: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """mx.fast.rms_norm: round(round(x * rsqrt(sum(x^2)/W + eps)) * w), the sum of squares on the 8-read
    lane/XOR schedule; the same bits as the prefill stage's `emulation.mlx_rms_norm`.  Without a weight
    (v_norm) the second point multiplies by 1 (exact)."""
    x = np.asarray(x, F32)
    ms = (E.lane_xor_sum(x, reads=8, square=True) / F32(x.shape[-1])).astype(F32)
    inv = E.rsqrt((ms + F32(cfg.rms_norm_eps)).astype(F32))
    normalized = rnd(c, (x * inv[..., None]).astype(F32), "rms_norm.normalized")
    scale = np.ones(x.shape[-1], F32) if w is None else np.asarray(w, F32)
    return rnd(c, (normalized * scale).astype(F32), "rms_norm.scaled")


# ---------------------------------------------------------------------------------------------- AltUp
def rms_magnitude(c: NumericContract, x: np.ndarray, floor: np.float32 | None = None) -> np.ndarray:
    """round(sqrt(max(mean(round(x^2)), floor))) [.., 1]."""
    ms = mean(c, rnd(c, x * x, "altup.square"))
    if floor is not None:
        ms = np.maximum(ms, floor)
    return rnd(c, np.sqrt(ms), "altup.root")


def rescale(c: NumericContract, x: np.ndarray, target: np.ndarray) -> np.ndarray:
    """x * (target / magnitude(x)), MLX's order, transformers' 1e-5 floor on the mean square."""
    m = rms_magnitude(c, x, E.contract_scalar(c, 1e-5))
    ratio = rnd(c, target / m, "altup.ratio")
    return rnd(c, x * ratio, "altup.scaled")


def altup_init(c: NumericContract, cfg: DecoderConfig, w: Weights, embeds: np.ndarray) -> np.ndarray:
    """inputs_embeds [T, D] -> the AltUp streams [n, T, D] (stream 0 is the embedding itself)."""
    target = rms_magnitude(c, embeds)
    streams = [np.asarray(embeds, F32)]
    for i in range(cfg.altup_num_inputs - 1):
        projected = linear(c, embeds, weight(w, f"altup_projections.{i}"), "altup.projection")
        streams.append(rescale(c, projected, target))
    return np.stack(streams)


def altup_collapse(c: NumericContract, cfg: DecoderConfig, w: Weights, streams: np.ndarray) -> np.ndarray:
    """The streams [n, T, D] -> one [T, D]: streams 1.. through the unembed projections, rescaled to stream 0's
    magnitude, then their mean (F32 sum in stream order, times 1/n)."""
    target = rms_magnitude(c, streams[0])
    total = np.asarray(streams[0], F32)
    for i in range(1, cfg.altup_num_inputs):
        projected = linear(c, streams[i], weight(w, f"altup_unembed_projections.{i - 1}"), "altup.projection")
        total = (total + rescale(c, projected, target)).astype(F32)
    total = rnd(c, total, "collapse.sum")
    return rnd(c, total * E.contract_scalar(c, 1.0 / cfg.altup_num_inputs), "collapse.scale")


def router(
    c: NumericContract, cfg: DecoderConfig, w: Weights, at: str, x: np.ndarray, fn: Transcendentals
) -> np.ndarray:
    """Modalities [T, n] of stream x: tanh(round(round(router_norm(x) * (1/D)) @ W^T)), kept in F32."""
    r = rms_norm(c, cfg, x, weight(w, at + "altup.router_norm"))
    r = rnd(c, r * E.contract_scalar(c, 1.0 / cfg.hidden_size), "router.scale")
    routed = linear(c, r, weight(w, at + "altup.modality_router"), "router.linear")
    return rnd(c, fn.tanh(routed), "router.tanh")


def _coefficients(cfg: DecoderConfig, w: Weights, name: str) -> np.ndarray:
    coefs = weight(w, name)
    if cfg.altup_coef_clip is None:
        return coefs
    return np.clip(coefs, -F32(cfg.altup_coef_clip), F32(cfg.altup_coef_clip)).astype(F32)


def altup_predict(
    c: NumericContract, cfg: DecoderConfig, w: Weights, layer: int, streams: np.ndarray, fn: Transcendentals
) -> np.ndarray:
    """streams [n, T, D] -> predictions [n, T, D]: pred_i = round(sum_j C[i, j] X_j + X_i), all in F32."""
    at, n = f"layers.{layer}.", cfg.altup_num_inputs
    modalities = router(c, cfg, w, at, streams[cfg.altup_active_idx], fn)
    coefs = rnd(
        c, sequential_matmul(modalities, _coefficients(cfg, w, at + "altup.prediction_coefs")), "predict.coefs"
    ).reshape(-1, n, n)  # [T, i, j]
    out = []
    for i in range(n):
        mix = (coefs[:, i, 0:1] * streams[0]).astype(F32)
        for j in range(1, n):
            mix = (mix + (coefs[:, i, j : j + 1] * streams[j]).astype(F32)).astype(F32)
        mix = rnd(c, mix, "predict.mix")
        out.append(rnd(c, mix + streams[i], "predict.out"))
    return np.stack(out)


def altup_correct(
    c: NumericContract,
    cfg: DecoderConfig,
    w: Weights,
    layer: int,
    predictions: np.ndarray,
    activated: np.ndarray,
    fn: Transcendentals,
) -> np.ndarray:
    """corr_i = round(F32((activated - pred_active) * c_i) + pred_i), c = modalities @ clip(W)^T + 1 in F32."""
    at = f"layers.{layer}."
    modalities = router(c, cfg, w, at, activated, fn)
    coefs = sequential_matmul(modalities, _coefficients(cfg, w, at + "altup.correction_coefs"))
    coefs = rnd(c, (coefs + F32(1.0)).astype(F32), "correct.coefs")
    innovation = rnd(c, activated - predictions[cfg.altup_active_idx], "correct.innovation")
    out = []
    for i in range(cfg.altup_num_inputs):
        product = rnd(c, (innovation * coefs[:, i : i + 1]).astype(F32), "correct.product")
        out.append(rnd(c, product + predictions[i], "correct.out"))
    return np.stack(out)


# ---------------------------------------------------------------------------------------------- LAuReL, MLP, PLE gate
def laurel(c: NumericContract, cfg: DecoderConfig, w: Weights, layer: int, xn: np.ndarray) -> np.ndarray:
    at = f"layers.{layer}.laurel."
    left = linear(c, xn, weight(w, at + "linear_left"), "laurel.left")
    right = linear(c, left, weight(w, at + "linear_right"), "laurel.right")
    return rnd(c, xn + rms_norm(c, cfg, right, weight(w, at + "post_laurel_norm")), "laurel.residual")


#: gelu_tanh's constants: 0.5 x (1 + tanh(GELU_SQRT (x + GELU_CUBIC x^3))), held as the contract holds scalars.
GELU_CUBIC = 0.044715
GELU_SQRT = math.sqrt(2.0 / math.pi)


def gelu_tanh(c: NumericContract, x: np.ndarray, fn: Transcendentals) -> np.ndarray:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) as mlx.nn.gelu_approx evaluates it, op by op."""
    x = np.asarray(x, F32)
    cube = rnd(c, ((x * x).astype(F32) * x).astype(F32), "gelu.cube")
    term = rnd(c, E.contract_scalar(c, GELU_CUBIC) * cube, "gelu.cubic_term")
    inner = rnd(c, x + term, "gelu.inner")
    scaled = rnd(c, E.contract_scalar(c, GELU_SQRT) * inner, "gelu.scaled_inner")
    one_plus = rnd(c, F32(1.0) + rnd(c, fn.tanh(scaled), "gelu.tanh"), "gelu.one_plus")
    half = rnd(c, E.contract_scalar(c, 0.5) * x, "gelu.half_x")
    return rnd(c, half * one_plus, "gelu.out")


def sparsity_multiplier(c: NumericContract, sparsity: float) -> np.float32:
    """z = Phi^-1(sparsity) as an F32 (transformers' icdf; 0.95 -> 1.6448535919), then the contract's dtype."""
    return E.contract_scalar(c, float(F32(NormalDist().inv_cdf(sparsity))))


def gaussian_topk(c: NumericContract, g: np.ndarray, sparsity: float) -> np.ndarray:
    """relu(g - (mean + std * z)): keeps the values above the Gaussian (1 - sparsity) quantile of the row."""
    mu = mean(c, g)
    centered = rnd(c, g - mu, "sparsity.centered")
    std = rnd(c, np.sqrt(mean(c, rnd(c, centered * centered, "sparsity.square"))), "sparsity.std")
    spread = rnd(c, std * sparsity_multiplier(c, sparsity), "sparsity.std_scaled")
    cutoff = rnd(c, mu + spread, "sparsity.cutoff")
    return np.maximum(rnd(c, g - cutoff, "sparsity.shifted"), F32(0)).astype(F32)


def mlp(
    c: NumericContract, cfg: DecoderConfig, w: Weights, layer: int, h: np.ndarray, fn: Transcendentals
) -> np.ndarray:
    """h + post_feedforward_norm(down(act(gate(f)) * up(f))), f = pre_feedforward_norm(h)."""
    at = f"layers.{layer}."
    f = rms_norm(c, cfg, h, weight(w, at + "pre_feedforward_layernorm"))
    gate = linear(c, f, weight(w, at + "mlp.gate_proj"), "mlp.gate")
    if cfg.activation_sparsity[layer] > 0:
        gate = gaussian_topk(c, gate, cfg.activation_sparsity[layer])
    act = gelu_tanh(c, gate, fn)
    up = linear(c, f, weight(w, at + "mlp.up_proj"), "mlp.up")
    down = linear(c, rnd(c, act * up, "mlp.product"), weight(w, at + "mlp.down_proj"), "mlp.down")
    return rnd(c, h + rms_norm(c, cfg, down, weight(w, at + "post_feedforward_layernorm")), "residual.mlp")


def ple_gate(
    c: NumericContract,
    cfg: DecoderConfig,
    w: Weights,
    layer: int,
    corrected: np.ndarray,
    per_layer_input: np.ndarray,
    fn: Transcendentals,
) -> np.ndarray:
    """Inject the layer's per-layer input [T, P] into streams 1.. of the corrected streams [n, T, D]."""
    at = f"layers.{layer}."
    first = corrected[cfg.altup_active_idx]
    if cfg.altup_correct_scale:
        first = rnd(c, first * weight(w, at + "altup.correct_output_scale"), "ple_gate.scale")
    gate = gelu_tanh(c, linear(c, first, weight(w, at + "per_layer_input_gate"), "ple_gate.linear"), fn)
    product = rnd(c, gate * np.asarray(per_layer_input, F32), "ple_gate.product")
    projected = linear(c, product, weight(w, at + "per_layer_projection"), "ple_gate.projection")
    injected = rms_norm(c, cfg, projected, weight(w, at + "post_per_layer_input_norm"))
    return np.stack(
        [corrected[0]] + [rnd(c, corrected[i] + injected, "ple_gate.residual") for i in range(1, cfg.altup_num_inputs)]
    )


# ---------------------------------------------------------------------------------------------- RoPE, attention
def rope_inv_freq(theta: float, head_dim: int) -> np.ndarray:
    """inv_freq[i] = 1 / theta^(2i / head_dim): the power correctly rounded to F32, then an F32 reciprocal."""
    exponents = (np.arange(0, head_dim, 2, dtype=F32) / F32(head_dim)).astype(F32)
    return (F32(1.0) / np.power(np.float64(theta), exponents.astype(np.float64)).astype(F32)).astype(F32)


def rope_tables(
    c: NumericContract, theta: float, head_dim: int, positions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin [T, head_dim] at `positions`: angle f32(p) * inv_freq in F32 (transformers' fp32 angle, large
    positions losing precision as there), cos/sin correctly rounded to F32, then the `rope.table` point."""
    angle = (np.asarray(positions, np.int64).astype(F32)[:, None] * rope_inv_freq(theta, head_dim)).astype(F32)
    angle = np.concatenate([angle, angle], axis=-1).astype(np.float64)
    return rnd(c, np.cos(angle).astype(F32), "rope.table"), rnd(c, np.sin(angle).astype(F32), "rope.table")


def apply_rope(c: NumericContract, x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x [T, heads, hd] -> round(round(x cos) + round(rotate_half(x) sin)), rotate_half = (-x2, x1)."""
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    a = rnd(c, x * cos[:, None, :], "rope.x_cos")
    b = rnd(c, rotated * sin[:, None, :], "rope.rot_sin")
    return rnd(c, a + b, "rope.sum")


def attention_probs(c: NumericContract, scores: np.ndarray, seen: np.ndarray, fn: Transcendentals) -> np.ndarray:
    """The softmax of F32 scores [.., C] over their columns: columns not `seen` (broadcast to the scores) masked
    to the BF16 minimum, e = exp(masked - max), round(e / denominator) (`attention.probs`), the denominator the
    block sum of e in column order."""
    masked = np.where(seen, scores, F32(E.BF16_MIN)).astype(F32)
    top = masked.max(axis=-1, keepdims=True)
    e = fn.exp((masked - top).astype(F32))
    return rnd(c, (e / block_sum(e, DENOMINATOR_READS)[..., None]).astype(F32), "attention.probs")


def attention_core(
    c: NumericContract, q: np.ndarray, keys: np.ndarray, values: np.ndarray, columns: np.ndarray, fn: Transcendentals
) -> np.ndarray:
    """Grouped attention of queries q [T, H, hd] over key/value rows [R, K, hd].

    `columns` [T, C] gives, for each query, the row read at each key column (-1: not visible); column order is
    the summation order of the softmax denominator (kv_cache.py).  Query head h reads K/V head h // (H / K).
    Returns the attended values [T, H, hd].
    """
    t, heads, hd = q.shape
    kv_head = np.arange(heads) // (heads // keys.shape[1])
    qo = E.operand(c, q).astype(np.float64)
    ko = E.operand(c, keys).astype(np.float64)
    vo = E.operand(c, values).astype(np.float64)
    out = np.empty((t, heads, hd), F32)
    for i in range(t):
        cols = np.asarray(columns[i])
        seen = cols >= 0
        rows = np.where(seen, cols, 0)
        k = ko[rows][:, kv_head, :].transpose(1, 0, 2)  # [H, C, hd]
        scores = rnd(c, (qo[i][:, None, :] * k).sum(-1).astype(F32), "attention.scores")
        probs = attention_probs(c, scores, seen[None, :], fn)
        v = vo[rows][:, kv_head, :].transpose(1, 0, 2)  # [H, C, hd]
        weighted = E.operand(c, probs).astype(np.float64)[:, :, None] * v
        out[i] = rnd(c, np.cumsum(weighted, axis=1)[:, -1, :].astype(F32), "attention.output")
    return out


def project_queries(
    c: NumericContract, cfg: DecoderConfig, w: Weights, layer: int, xn: np.ndarray, cos: np.ndarray, sin: np.ndarray
) -> np.ndarray:
    at = f"layers.{layer}.self_attn."
    q = linear(c, xn, weight(w, at + "q_proj"), "attention.q_proj").reshape(-1, cfg.num_attention_heads, cfg.head_dim)
    return apply_rope(c, rms_norm(c, cfg, q, weight(w, at + "q_norm")), cos, sin)


def project_keys_values(
    c: NumericContract, cfg: DecoderConfig, w: Weights, layer: int, xn: np.ndarray, cos: np.ndarray, sin: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Keys (k_norm, RoPE) and values (v_norm) [T, K, hd] of an owning layer, as the KV cache stores them."""
    at = f"layers.{layer}.self_attn."
    shape = (-1, cfg.num_key_value_heads, cfg.head_dim)
    k = linear(c, xn, weight(w, at + "k_proj"), "attention.k_proj").reshape(shape)
    k = apply_rope(c, rms_norm(c, cfg, k, weight(w, at + "k_norm")), cos, sin)
    v = rms_norm(c, cfg, linear(c, xn, weight(w, at + "v_proj"), "attention.v_proj").reshape(shape), None)
    return k, v


def attention_residual(
    c: NumericContract,
    cfg: DecoderConfig,
    w: Weights,
    layer: int,
    active: np.ndarray,
    attended: np.ndarray,
    lau: np.ndarray,
) -> np.ndarray:
    """((a + post_attention_norm(o_proj(attn))) + laurel) * 2^-0.5, each op rounded."""
    at = f"layers.{layer}."
    o = linear(c, attended.reshape(attended.shape[0], -1), weight(w, at + "self_attn.o_proj"), "attention.o_proj")
    o = rms_norm(c, cfg, o, weight(w, at + "post_attention_layernorm"))
    h = rnd(c, rnd(c, active + o, "residual.attention") + lau, "residual.laurel")
    return rnd(c, h * E.contract_scalar(c, 2.0**-0.5), "residual.scale")


# ---------------------------------------------------------------------------------------------- head
def logits(c: NumericContract, cfg: DecoderConfig, w: Weights, streams: np.ndarray, fn: Transcendentals) -> np.ndarray:
    """The streams [n, T, D] -> soft-capped logits [T, V]: collapse, final norm, tied head, tanh(x/cap)*cap."""
    y = rms_norm(c, cfg, altup_collapse(c, cfg, w, streams), weight(w, "norm"))
    out = linear(c, y, weight(w, "embed_tokens"), "head.linear")
    cap = cfg.final_logit_softcapping
    if cap is None:
        return out
    capped = rnd(c, fn.tanh(rnd(c, out / E.contract_scalar(c, cap), "softcap.divide")), "softcap.tanh")
    return rnd(c, capped * E.contract_scalar(c, cap), "softcap.scale")


# ---------------------------------------------------------------------------------------------- token selection
#: The widest chunk the top-k's first stage reads (`top_k_chunk`).
TOP_K_CHUNK = 128


@dataclass(frozen=True)
class TokenSelection:
    """The token selection of R rows of logits (`token_select`, `token_top_k`): what a program's prefill and
    decode entries return beside the logits, and what a caller that needs no logits reads back.

    `token` is the first index of the largest logit (`numpy.argmax`: ties go to the lowest index); `logprob`
    its log-softmax in F32.  A row with a non-finite logit has no token: `nonfinite` counts them and
    `first_nonfinite` is the first one's index (the vocabulary size when there is none); its other fields
    are meaningless.  `top_tokens` / `top_logprobs` (when asked): the k most likely tokens, by logit
    descending and index ascending among equal logits (`top_tokens[:, 0] == token`), and their
    log-softmax; `logits`: the row's logits, when the caller asked for them too; `sampled` /
    `sampled_logprob`: the tokens drawn for the rows that sample (greedy rows' values are meaningless)."""

    token: np.ndarray  # int32 [R]
    logprob: np.ndarray  # float32 [R]
    nonfinite: np.ndarray  # int32 [R]
    first_nonfinite: np.ndarray  # int32 [R]
    top_tokens: np.ndarray | None = None  # int32 [R, k]
    top_logprobs: np.ndarray | None = None  # float32 [R, k]
    logits: np.ndarray | None = None  # float32 [R, V]
    sampled: np.ndarray | None = None  # int32 [R]: each sampling row's drawn token (contracts/sampling.py)
    sampled_logprob: np.ndarray | None = None  # float32 [R]: its log-softmax (`sampling.sampled_logprob`)

    def __len__(self) -> int:
        return len(self.token)

    def rows(self, n: int) -> TokenSelection:
        """The first n rows (a padded call's real ones)."""
        return TokenSelection(*(None if v is None else v[:n] for v in self._fields()))

    def with_top_k(self, k: int) -> TokenSelection:
        """The first k of the top tokens (k <= the computed k), or none for k = 0."""
        if k == 0:
            return dataclasses.replace(self, top_tokens=None, top_logprobs=None)
        assert self.top_tokens is not None and k <= self.top_tokens.shape[1], k
        return dataclasses.replace(self, top_tokens=self.top_tokens[:, :k], top_logprobs=self.top_logprobs[:, :k])

    def _fields(self) -> list[np.ndarray | None]:
        return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _normalizer(x: np.ndarray, fn: Transcendentals) -> tuple[np.ndarray, np.ndarray]:
    """The row maxima m and L = log(sum(exp(x - m))) in F32: F32 differences, the backend's exp, the sum on
    the softmax denominators' block schedule, the backend's log."""
    top = x.max(axis=-1)
    e = fn.exp((x - top[:, None]).astype(F32))
    return top, fn.log(block_sum(e, DENOMINATOR_READS))


def token_select(logits: np.ndarray, fn: Transcendentals = CORRECTLY_ROUNDED) -> TokenSelection:
    """The greedy token of each row of logits [R, V] and its log-softmax (F32: -L, `_normalizer`; the token's
    x - m is 0), with the rows' non-finite counts.  A row with a NaN has the token V."""
    x = np.asarray(logits, F32)
    vocab = x.shape[-1]
    column = np.arange(vocab, dtype=np.int32)
    with np.errstate(all="ignore"):
        top, log_sum = _normalizer(x, fn)
        token = np.where(x == top[:, None], column, np.int32(vocab)).min(axis=-1).astype(np.int32)
    bad = ~np.isfinite(x)
    return TokenSelection(
        token,
        (-log_sum).astype(F32),
        bad.sum(axis=-1).astype(np.int32),
        np.where(bad, column, np.int32(vocab)).min(axis=-1).astype(np.int32),
    )


def top_k_chunk(vocab: int, k: int) -> int:
    """The top-k's chunk width: the largest power of two <= TOP_K_CHUNK that leaves at least k chunks."""
    if not 1 <= k <= vocab:
        raise ValueError(f"top-k needs 1 <= k <= vocabulary size, got k = {k} for {vocab} tokens")
    width = 1
    while 2 * width <= TOP_K_CHUNK and vocab // (2 * width) >= k:
        width *= 2
    return width


def _select(values: np.ndarray, index: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k first (value, index) pairs of each row by value descending, index ascending (indices distinct):
    pair j is the largest of those after pair j - 1 in that order (a max, then the lowest index holding it).
    Rows with fewer than k pairs end with (-inf, the sentinel) pairs; the sentinel is larger than any index."""
    sentinel = np.int32(np.iinfo(np.int32).max)
    picked_v, picked_i = [], []
    for j in range(k):
        if j == 0:
            eligible = np.ones(values.shape, bool)
        else:
            v, i = picked_v[-1][:, None], picked_i[-1][:, None]
            eligible = (values < v) | ((values == v) & (index > i))
        best = np.where(eligible, values, F32(-np.inf)).max(axis=-1)
        picked_v.append(best.astype(F32))
        picked_i.append(np.where(eligible & (values == best[:, None]), index, sentinel).min(axis=-1).astype(np.int32))
    return np.stack(picked_v, axis=-1), np.stack(picked_i, axis=-1)


def token_top_k(logits: np.ndarray, k: int, fn: Transcendentals = CORRECTLY_ROUNDED) -> tuple[np.ndarray, np.ndarray]:
    """The k most likely tokens of each row of logits [R, V] (ids int32 [R, k], by logit descending, ties by
    index ascending) and their log-softmax (F32: (x - m) + logprob, `token_select`'s logprob = -L; the first is
    the greedy token's exactly), in two stages that read the logits once:

    1. the row, padded with -inf to G chunks of `top_k_chunk` columns, gives each chunk's maximum, and the k
       best chunks are selected by (maximum descending, chunk ascending);
    2. the k best of those k chunks' columns are selected by (logit descending, index ascending).

    Exact: a chunk outside the k best has k chunks before it, each holding a column before all of its own, so
    none of its columns is among the k best.  Rows with a non-finite logit give meaningless results."""
    x = np.asarray(logits, F32)
    rows, vocab = x.shape
    width = top_k_chunk(vocab, k)
    chunks = -(-vocab // width)
    padded = np.full((rows, chunks * width), F32(-np.inf))
    padded[:, :vocab] = x
    grid = padded.reshape(rows, chunks, width)
    with np.errstate(all="ignore"):
        maxima = grid.max(axis=-1)
        _, best_chunks = _select(maxima, np.broadcast_to(np.arange(chunks, dtype=np.int32), maxima.shape), k)
        best_chunks = np.clip(best_chunks, 0, chunks - 1)
        candidates = np.take_along_axis(grid, best_chunks[:, :, None], axis=1).reshape(rows, k * width)
        columns = (best_chunks[:, :, None] * width + np.arange(width, dtype=np.int32)).reshape(rows, k * width)
        values, ids = _select(candidates, columns.astype(np.int32), k)
        logprob = token_select(x, fn).logprob
        return ids, ((values - values[:, :1]).astype(F32) + logprob[:, None]).astype(F32)


def logprob_error_bound(vocab: int, logprob: np.ndarray, shift: np.ndarray | float = 0.0) -> np.ndarray:
    """A bound on |F32 log-softmax - the float64 log-softmax of the same F32 logits| for a row of `vocab`
    logits, at a computed log-probability `logprob` whose logit is `shift` below the row's maximum (0: the
    greedy token).  With u = 2^-24 and p the softmax, to first order:

    * each exp(x - m) is off by u |x - m| (the F32 difference) + 2u (IREE's exp: 1.4u measured), which moves
      the sum by u (sum_i p_i |x_i - m| + 2) <= u (ln V + 2) relative (sum_i p_i |x_i - m| <= the entropy of p);
    * the block sum of V positive terms, d adds deep (passes x reads per thread, then 5 + 5 butterfly
      levels), is off by at most d u relative;
    * the log (within 1 ulp <= 2u relative of L <= ln V; IREE's: 0.8 ulp measured);
    * for another token, the F32 difference x - m (u |x - m|) and the final add (u |logprob|).

    For V = 262400: d = 270, 309.4u = 1.8e-5 for the greedy token."""
    reads = DENOMINATOR_READS
    depth = block_schedule(vocab, reads)[1] * reads + 10
    u = 2.0**-24
    shift = np.abs(np.asarray(shift, np.float64))
    return u * (3 * math.log(vocab) + 2 + depth) + u * (shift + np.abs(np.asarray(logprob, np.float64)) * (shift > 0))
