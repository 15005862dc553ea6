"""Float64 evaluation of the Gemma 3n text decoder, written from the spec's text (shared/spec/gemma3n-text.md
§3-§7), not from any implementation, so it can judge both transformers and the project's emulation.

Semantics are the spec's (transformers 5.x): the magnitude floor of AltUp, unclipped AltUp coefficients,
RMSNorm with the weight as a direct multiplier, KV-shared layers reusing the last owning layer of their type
(K/V of the same call, past + current), queries rotated at their own positions, the sliding window
`q - W < k <= q`, the tied soft-capped head.  Everything runs in float64 except what the spec defines in
float32: the RoPE inverse frequencies (an fp32 buffer) and angles (`float32(p) * inv_freq` in fp32), and the
sparsity multiplier z (Phi^-1 computed in fp32).  Deliberately different in *form* from the emulation: a
plain position-ordered cache holding every past position (visibility by mask, no ring), whole-matrix
products, masks with -inf.

Weights are the checkpoint tensors by their transformers names (`model.language_model.` prefix); the
configuration is a `text_config` dict (transformers field names).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from statistics import NormalDist
from typing import Any

import numpy as np

Array = np.ndarray
PREFIX = "model.language_model."


def rms_norm(x: Array, w: Array | None, eps: float) -> Array:
    """Spec §6.1: x / sqrt(mean(x^2) + eps) times w (not 1 + w); v_norm has no weight."""
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return y if w is None else y * w


def gelu_tanh(x: Array) -> Array:
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def inv_freq(theta: float, head_dim: int) -> Array:
    """The fp32 buffer 1 / theta^(2i/head_dim), i = 0 .. head_dim/2 - 1 (as float32)."""
    return (1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)).astype(np.float32)


def rope(x: Array, positions: Array, freqs: Array) -> Array:
    """x [T, heads, hd]: x cos + rotate_half(x) sin with the fp32 angle float32(p) * inv_freq."""
    angle = (np.asarray(positions).astype(np.float32)[:, None] * freqs[None, :]).astype(np.float64)
    angle = np.concatenate([angle, angle], axis=-1)[:, None, :]
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * np.cos(angle) + rotated * np.sin(angle)


class DecoderF64:
    """The decoder of one checkpoint; `cache` is a dict layer -> (keys [P, K, hd], values) of past positions."""

    def __init__(
        self,
        text_config: Mapping[str, Any],
        weights: Mapping[str, Array],
        prefix: str = PREFIX,
        freqs: Mapping[str, Array] | None = None,
    ) -> None:
        t = dict(text_config)
        self.t, self.weights, self.prefix = t, weights, prefix
        self.layers = t["num_hidden_layers"]
        self.eps = t["rms_norm_eps"]
        self.n = t["altup_num_inputs"]
        self.layer_types = t["layer_types"]
        first = self.layers - t["num_kv_shared_layers"]
        self.first_shared = first
        # spec §1.2: a shared layer reuses the last layer of its type below the first shared layer
        self.producer = [
            i if i < first else max(j for j in range(first) if self.layer_types[j] == self.layer_types[i])
            for i in range(self.layers)
        ]
        rope_params = t["rope_parameters"]
        self.freqs = (
            dict(freqs)
            if freqs is not None
            else {kind: inv_freq(rope_params[kind]["rope_theta"], t["head_dim"]) for kind in rope_params}
        )

    def w(self, name: str) -> Array:
        key = self.prefix + name + ("" if name.endswith("correct_output_scale") else ".weight")
        return np.asarray(self.weights[key]).astype(np.float64)

    # ------------------------------------------------------------------ embeddings (§3)
    def embed(self, ids: Array) -> tuple[Array, Array]:
        """(inputs_embeds [S, D], token part of the per-layer inputs [S, L, P]) of text ids."""
        t = self.t
        ids = np.asarray(ids, np.int64)
        e = self.w("embed_tokens")[ids] * math.sqrt(t["hidden_size"])
        pl_ids = np.where((ids >= 0) & (ids < t["vocab_size_per_layer_input"]), ids, 0)
        p = t["hidden_size_per_layer_input"]
        token = self.w("embed_tokens_per_layer")[pl_ids] * math.sqrt(p)
        return e, token.reshape(len(ids), self.layers, p)

    def per_layer_inputs(self, embeds: Array, token: Array) -> Array:
        """§3.3: (RMSNorm(E W^T / sqrt(D)) + T) / sqrt(2), [S, L, P]."""
        t = self.t
        proj = embeds @ self.w("per_layer_model_projection").T / math.sqrt(t["hidden_size"])
        proj = rms_norm(proj.reshape(len(embeds), self.layers, -1), self.w("per_layer_projection_norm"), self.eps)
        return (proj + token) / math.sqrt(2.0)

    # ------------------------------------------------------------------ AltUp (§3.4, §4.1, §4.6, §5)
    @staticmethod
    def _rescale(x: Array, target: Array) -> Array:
        magnitude = np.sqrt(np.maximum(np.mean(x * x, axis=-1, keepdims=True), 1e-5))
        return x * target / magnitude

    def _modalities(self, at: str, x: Array) -> Array:
        r = rms_norm(x, self.w(at + "altup.router_norm"), self.eps) / self.t["hidden_size"]
        return np.tanh(r @ self.w(at + "altup.modality_router").T)

    # ------------------------------------------------------------------ one layer (§4)
    def _layer(self, i: int, x: Array, pli: Array, positions: Array, cache: dict, shared: dict) -> Array:
        t, at = self.t, f"layers.{i}."
        heads, kv_heads, hd = t["num_attention_heads"], t["num_key_value_heads"], t["head_dim"]
        kind = self.layer_types[i]
        steps = len(positions)
        coefs = self._modalities(at, x[t["altup_active_idx"]]) @ self.w(at + "altup.prediction_coefs").T
        coefs = coefs.reshape(steps, self.n, self.n)
        pred = np.stack([sum(coefs[:, a, b : b + 1] * x[b] for b in range(self.n)) + x[a] for a in range(self.n)])
        active = pred[t["altup_active_idx"]]
        xn = rms_norm(active, self.w(at + "input_layernorm"), self.eps)
        lau = xn + rms_norm(
            xn @ self.w(at + "laurel.linear_left").T @ self.w(at + "laurel.linear_right").T,
            self.w(at + "laurel.post_laurel_norm"),
            self.eps,
        )
        freqs = self.freqs[kind]
        q = rms_norm(
            (xn @ self.w(at + "self_attn.q_proj").T).reshape(steps, heads, hd),
            self.w(at + "self_attn.q_norm"),
            self.eps,
        )
        q = rope(q, positions, freqs)
        if i < self.first_shared:
            k = rms_norm(
                (xn @ self.w(at + "self_attn.k_proj").T).reshape(steps, kv_heads, hd),
                self.w(at + "self_attn.k_norm"),
                self.eps,
            )
            k = rope(k, positions, freqs)
            v = rms_norm((xn @ self.w(at + "self_attn.v_proj").T).reshape(steps, kv_heads, hd), None, self.eps)
            past_k, past_v, past_pos = cache.get(
                i, (np.zeros((0, kv_heads, hd)), np.zeros((0, kv_heads, hd)), np.zeros(0, np.int64))
            )
            keys, values = np.concatenate([past_k, k]), np.concatenate([past_v, v])
            key_pos = np.concatenate([past_pos, positions])
            cache[i] = (keys, values, key_pos)
            if self.producer.count(i) > 1:  # a producer: its K/V of this call go to the shared layers
                shared[kind] = (keys, values, key_pos)
        else:
            keys, values, key_pos = shared[kind]
        window = t["sliding_window"]
        allowed = key_pos[None, :] <= positions[:, None]
        if kind == "sliding_attention":
            allowed &= key_pos[None, :] > positions[:, None] - window
        group = heads // kv_heads
        out = np.empty((steps, heads, hd))
        for h in range(heads):
            scores = q[:, h] @ keys[:, h // group].T
            scores = np.where(allowed, scores, -np.inf)
            p = np.exp(scores - scores.max(axis=-1, keepdims=True))
            p /= p.sum(axis=-1, keepdims=True)
            out[:, h] = p @ values[:, h // group]
        attn = rms_norm(
            out.reshape(steps, -1) @ self.w(at + "self_attn.o_proj").T,
            self.w(at + "post_attention_layernorm"),
            self.eps,
        )
        h = (active + attn + lau) / math.sqrt(2.0)
        f = rms_norm(h, self.w(at + "pre_feedforward_layernorm"), self.eps)
        gate = f @ self.w(at + "mlp.gate_proj").T
        sparsity = t["activation_sparsity_pattern"][i]
        if sparsity > 0:
            z = float(np.float32(NormalDist().inv_cdf(sparsity)))  # computed in fp32 (§4.5)
            cutoff = gate.mean(axis=-1, keepdims=True) + gate.std(axis=-1, keepdims=True) * z
            gate = np.maximum(gate - cutoff, 0.0)
        y = (gelu_tanh(gate) * (f @ self.w(at + "mlp.up_proj").T)) @ self.w(at + "mlp.down_proj").T
        h2 = h + rms_norm(y, self.w(at + "post_feedforward_layernorm"), self.eps)
        c = self._modalities(at, h2) @ self.w(at + "altup.correction_coefs").T + 1.0
        innovation = h2 - pred[t["altup_active_idx"]]
        corr = np.stack([innovation * c[:, a : a + 1] + pred[a] for a in range(self.n)])
        first = corr[t["altup_active_idx"]]
        if t.get("altup_correct_scale", True):
            first = first * self.w(at + "altup.correct_output_scale")
        gated = gelu_tanh(first @ self.w(at + "per_layer_input_gate").T) * pli
        injected = rms_norm(
            gated @ self.w(at + "per_layer_projection").T, self.w(at + "post_per_layer_input_norm"), self.eps
        )
        return np.stack([corr[0]] + [corr[a] + injected for a in range(1, self.n)])

    # ------------------------------------------------------------------ whole model (§3-§5)
    def forward(self, embeds: Array, per_layer_inputs: Array, positions: Array, cache: dict) -> Array:
        """Logits [T, V] of T new tokens at `positions` (past positions are in `cache`, which is updated)."""
        t = self.t
        embeds = np.asarray(embeds, np.float64)
        positions = np.asarray(positions, np.int64)
        target = np.sqrt(np.mean(embeds * embeds, axis=-1, keepdims=True))
        x = np.stack(
            [embeds] + [self._rescale(embeds @ self.w(f"altup_projections.{i}").T, target) for i in range(self.n - 1)]
        )
        shared: dict = {}
        for i in range(self.layers):
            x = self._layer(i, x, np.asarray(per_layer_inputs, np.float64)[:, i], positions, cache, shared)
        target = np.sqrt(np.mean(x[0] * x[0], axis=-1, keepdims=True))
        y = np.mean(
            np.stack(
                [x[0]]
                + [
                    self._rescale(x[i] @ self.w(f"altup_unembed_projections.{i - 1}").T, target)
                    for i in range(1, self.n)
                ]
            ),
            axis=0,
        )
        logits = rms_norm(y, self.w("norm"), self.eps) @ self.w("embed_tokens").T
        cap = t.get("final_logit_softcapping")
        return logits if cap is None else np.tanh(logits / cap) * cap

    def prefill_ids(self, ids: Array, cache: dict) -> Array:
        embeds, token = self.embed(ids)
        return self.forward(embeds, self.per_layer_inputs(embeds, token), np.arange(len(ids)), cache)

    def step_ids(self, ids: Array, position: int, cache: dict) -> Array:
        embeds, token = self.embed(ids)
        return self.forward(
            embeds, self.per_layer_inputs(embeds, token), np.arange(position, position + len(ids)), cache
        )
