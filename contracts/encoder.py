"""Executable specification of the whole audio stage: the encoder and embedder under a contract.

Mirrors the emitted module op for op (same masks, blocking, rounding points and schedules), so its
stage tensors can be compared with the compiled artifact's stage outputs one by one.  Weights are
given by logical name (see `gemma3n_iree.model.audio_weights`), as float32 arrays of BF16 values in the
checkpoint's layout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP, AudioConfig
from . import emulation as E
from .policy import NumericContract

F32 = np.float32
Weights = Mapping[str, np.ndarray]


def feed_forward(c: NumericContract, cfg: AudioConfig, x: np.ndarray, w: Callable[[str], np.ndarray]) -> np.ndarray:
    eps, clip = cfg.rms_norm_eps, cfg.gradient_clipping
    h = E.rms_norm(c, E.clamp(x, clip), w("pre_layer_norm"), eps)
    h = E.silu(c, E.linear(c, h, w("ffw_layer_1")))
    h = E.linear(c, h, w("ffw_layer_2"))
    h = E.rms_norm(c, E.clamp(h, clip), w("post_layer_norm"), eps)
    return E.rnd(c, (x + (h * F32(cfg.conf_residual_weight)).astype(F32)).astype(F32))


def _context_blocks(x: np.ndarray, blocks: int, chunk: int, max_past: int) -> np.ndarray:
    """[B, T, ...] -> [B, U, chunk + max_past, ...]: slot c of block u is frame u*chunk - max_past + c."""
    b, t = x.shape[:2]
    nb = max_past // chunk
    pad = [(0, 0), (max_past, (blocks + nb) * chunk - max_past - t)] + [(0, 0)] * (x.ndim - 2)
    xb = np.pad(x, pad).reshape(b, blocks + nb, chunk, *x.shape[2:])
    return np.concatenate([xb[:, i : i + blocks] for i in range(nb + 1)], axis=2)


def attention_core(
    c: NumericContract,
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    pos: np.ndarray,
    valid: np.ndarray,
    chunk: int,
    past: int,
    cap: float,
    exp: Callable[[np.ndarray], np.ndarray] = np.exp,
    tanh: Callable[[np.ndarray], np.ndarray] = np.tanh,
) -> np.ndarray:
    """The attention between its projections: scaled queries, keys and values [B, T, H, hd] and the
    projected relative positions [past + 1, H, hd] -> the attended values [B, T, H, hd].

    `exp` and `tanh` are the F32 functions the backend uses (numpy's by default; IREE's own are in
    `iree_math`, which is what a kernel replacing IREE's code must match)."""
    b, t, heads, hd = q.shape
    blocks, ctx = -(-t // chunk), chunk + past
    q_blk = np.pad(q, [(0, 0), (0, blocks * chunk - t), (0, 0), (0, 0)]).reshape(b, blocks, chunk, heads, hd)
    k_ctx, v_ctx = (_context_blocks(a, blocks, chunk, past) for a in (k, v))
    key_valid = _context_blocks(valid, blocks, chunk, past)
    # the template zeroes the values of invalid key slots (a query whose every key is masked, i.e. a
    # padded one, then attends to zeros rather than to the padding's values)
    v_ctx = np.where(key_valid[..., None, None], v_ctx, F32(0)).astype(F32)
    qo, ko, vo = (E.operand(c, a).astype(np.float64) for a in (q_blk, k_ctx, v_ctx))
    content = E.rnd(c, E.exact_f32(np.einsum("buwnh,bucnh->bunwc", qo, ko)))
    rel = E.rnd(c, E.exact_f32(np.einsum("buwnh,fnh->bunwf", qo, E.operand(c, pos).astype(np.float64))))
    shifted = np.zeros(rel.shape[:-1] + (ctx,), F32)
    for wi in range(chunk):
        for f in range(past + 1):
            if wi + f < ctx:
                shifted[..., wi, wi + f] = rel[..., wi, f]
    logits = E.rnd(c, (content + shifted).astype(F32))
    cap = F32(cap)
    capped = E.rnd(c, (tanh((logits / cap).astype(F32)).astype(F32) * cap).astype(F32))
    lag = np.arange(ctx)[None, :] - np.arange(chunk)[:, None]
    band = (lag >= 0) & (lag <= past)
    allowed = band[None, None, None] & key_valid[:, :, None, None, :]
    masked = np.where(allowed, capped, F32(E.BF16_MIN)).astype(F32)
    e = exp((masked - masked.max(axis=-1, keepdims=True)).astype(F32)).astype(F32)
    probs = E.rnd(c, (e / E.lane_xor_sum(e, reads=1)[..., None]).astype(F32))
    attended = E.rnd(c, E.exact_f32(np.einsum("bunwc,bucnh->bunwh", E.operand(c, probs).astype(np.float64), vo)))
    return attended.transpose(0, 1, 3, 2, 4).reshape(b, blocks * chunk, heads, hd)[:, :t]


def attention(
    c: NumericContract, cfg: AudioConfig, x: np.ndarray, valid: np.ndarray, w: Callable[[str], np.ndarray]
) -> np.ndarray:
    b, t, d = x.shape
    heads, hd = cfg.conf_num_attention_heads, cfg.head_dim
    eps, clip = cfg.rms_norm_eps, cfg.gradient_clipping
    h = E.rms_norm(c, E.clamp(x, clip), w("pre_attn_norm"), eps)
    q, k, v = (E.linear(c, h, w(n)).reshape(b, t, heads, hd) for n in ("q_proj", "k_proj", "v_proj"))
    softplus = E.rnd(c, E.softplus(w("per_dim_scale")))
    scale = E.rnd(c, (softplus * F32(E.query_scale(hd))).astype(F32))
    q = E.rnd(c, (q * scale).astype(F32))
    signal = E.timing_signal(np.arange(cfg.max_past, -1, -1), d)
    pos = E.linear(c, signal, w("pos_proj")).reshape(cfg.max_past + 1, heads, hd)
    attended = attention_core(
        c, q, k, v, pos, valid, cfg.conf_attention_chunk_size, cfg.max_past, cfg.conf_attention_logit_cap
    )
    o = E.linear(c, attended.reshape(b, t, d), w("post"))
    o = E.rms_norm(c, E.clamp(o, clip), w("post_norm"), eps)
    return E.rnd(c, (x + o).astype(F32))


def light_conv(c: NumericContract, cfg: AudioConfig, x: np.ndarray, w: Callable[[str], np.ndarray]) -> np.ndarray:
    b, t, d = x.shape
    k = cfg.conf_conv_kernel_size
    eps, clip = cfg.rms_norm_eps, cfg.gradient_clipping
    g = E.linear(c, E.rms_norm(c, x, w("pre_layer_norm"), eps), w("linear_start"))
    glu = E.rnd(c, (g[..., :d] * E.logistic(g[..., d:])).astype(F32))
    taps = w("depthwise_conv1d").reshape(d, k).T.astype(F32)
    padded = np.pad(glu, [(0, 0), (k - 1, 0), (0, 0)])
    acc = (padded[:, 0:t] * taps[0]).astype(F32)
    for j in range(1, k):
        acc = (acc + (padded[:, j : j + t] * taps[j]).astype(F32)).astype(F32)
    h = E.rms_norm(c, E.clamp(E.rnd(c, acc), clip), w("conv_norm"), eps)
    out = E.linear(c, E.silu(c, h), w("linear_end"))
    return E.rnd(c, (out + x).astype(F32))


def valid_frames(frames: np.ndarray, length: int, stride: int) -> np.ndarray:
    return (np.arange(length)[None, :] * stride) < np.asarray(frames)[:, None]


def encode(
    c: NumericContract,
    cfg: AudioConfig,
    weights: Weights,
    mel: np.ndarray,
    frames: np.ndarray,
    *,
    conv_layout: str = "oihw",
    forced: Mapping[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Run the audio stage on a padded bucket [B, T, mel] with per-clip valid frame counts.

    With `forced`, every stage reads its inputs from `forced` (another run's stage tensors, e.g. a
    compiled artifact's) instead of from this emulation's previous stage: each result is then the
    emulation of that one stage applied to the other run's own inputs (a local check).
    """
    b, t, _ = mel.shape
    w = lambda name: np.asarray(weights[name], F32)  # noqa: E731
    stages: dict[str, np.ndarray] = {}

    def source(name: str) -> np.ndarray:
        return forced[name] if forced is not None and name in forced else stages[name]

    x = np.where(valid_frames(frames, t, 1)[..., None], mel, F32(0)).astype(F32)
    stages["mel"] = E.rnd(c, x)
    previous, stride = "mel", 1
    for i in range(2):
        conv_w = w(f"sscp.conv_{i}.weight")
        if conv_layout == "ohwi":
            conv_w = conv_w.transpose(0, 3, 1, 2)
        stride *= cfg.sscp_conv_stride_size[i][0]
        x = source(previous)
        x = x[..., None] if i == 0 else x
        stages[f"sscp_conv_{i}_convolution"] = E.sscp_conv(c, x, conv_w, tuple(cfg.sscp_conv_stride_size[i]))
        norm = E.cumulative_group_norm(
            c, source(f"sscp_conv_{i}_convolution"), w(f"sscp.conv_{i}.norm"), cfg.sscp_conv_group_norm_eps
        )
        for key, value in norm.items():
            stages[f"sscp_conv_{i}_{key}"] = value
        act = np.maximum(source(f"sscp_conv_{i}_norm"), F32(0))
        valid = valid_frames(frames, act.shape[1], stride)
        stages[f"sscp_conv_{i}"] = np.where(valid[:, :, None, None], act, F32(0)).astype(F32)
        previous = f"sscp_conv_{i}"
    x = source("sscp_conv_1")
    t1 = x.shape[1]
    valid1 = valid_frames(frames, t1, stride)
    stages["input_projection"] = E.linear(c, x.reshape(b, t1, -1), w("sscp.input_proj"))
    previous = "input_projection"
    for layer in range(cfg.conf_num_hidden_layers):
        at = f"conformer.{layer}."
        sub = lambda prefix: lambda name: w(f"{at}{prefix}.{name}")  # noqa: E731 - scoped weight lookup
        stages[at + "feed_forward_start"] = feed_forward(c, cfg, source(previous), sub("ffw_layer_start"))
        stages[at + "attention"] = attention(c, cfg, source(at + "feed_forward_start"), valid1, sub("attention"))
        masked = np.where(valid1[..., None], source(at + "attention"), F32(0)).astype(F32)
        stages[at + "light_conv"] = light_conv(c, cfg, masked, sub("lconv1d"))
        stages[at + "feed_forward_end"] = feed_forward(c, cfg, source(at + "light_conv"), sub("ffw_layer_end"))
        stages[at + "final_norm"] = E.rms_norm(
            c, E.clamp(source(at + "feed_forward_end"), cfg.gradient_clipping), w(at + "norm"), cfg.rms_norm_eps
        )
        previous = at + "final_norm"
    r = cfg.conf_reduction_factor
    reduced_valid = valid1[:, ::r]
    stages["encoded_reduced"] = np.where(reduced_valid[..., None], source(previous)[:, ::r], F32(0)).astype(F32)
    for prefix, rows_in, norm_w in (
        ("soft", source("encoded_reduced"), "embed.soft_norm"),
        ("hard", w("embed.embedding"), "embed.hard_norm"),
    ):
        stages[f"{prefix}_norm"] = E.rms_norm(c, rows_in, w(norm_w), cfg.rms_norm_eps)
        stages[f"{prefix}_linear"] = E.linear(c, source(f"{prefix}_norm"), w("embed.projection"))
        stages[f"{prefix}_post_norm"] = E.rms_norm(c, source(f"{prefix}_linear"), None, cfg.rms_norm_eps)
    rows = AUDIO_SOFT_TOKENS_PER_CLIP
    reduced = source("encoded_reduced")
    tout = reduced.shape[1]
    valid_tokens = reduced_valid.sum(axis=1).astype(np.int32)
    keep = np.arange(rows)[None, :] < valid_tokens[:, None]
    soft_rows = np.pad(source("soft_post_norm"), [(0, 0), (0, rows - tout), (0, 0)])
    stages["audio_features"] = np.where(keep[..., None], soft_rows, source("hard_post_norm")[-1]).astype(F32)
    stages["encoder_hidden"] = np.pad(reduced, [(0, 0), (0, rows - tout), (0, 0)])
    stages["valid_tokens"] = valid_tokens
    return stages
