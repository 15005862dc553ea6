"""Executable specification of the text decoder program: prefill, batched decode steps, greedy generation.

* `prefill(c, cfg, w, cache, slot, inputs_embeds, per_layer_inputs)` runs a prompt (the prefill stage's two
  outputs, positions 0..S-1) into one cache slot and returns the last position's logits;
* `decode_step(c, cfg, w, cache, slots, positions, text_rows, ple_rows)` advances a batch of sequences by one
  token each, every sequence at its own position in its own slot; the token's inputs are what the host
  gathers (its `embed_tokens` and `embed_tokens_per_layer` rows) and are embedded as the prefill stage
  embeds a prompt (`embed_rows`);
* `greedy(...)` is spec §7.4's loop over both.

Semantics are transformers' (spec gemma3n-text §3-§7): KV-shared layers attend over their producer's keys
and values of the same call (prefill: the whole prompt, not the cropped ring), their queries rotated at their
own positions; numerics are the contract's (`decoder_policy.py`).  Every row is computed on its own
(`decoder_ops`), and the key columns are laid out the same way in prefill and decode (`kv_cache.py`), so a
sequence's results do not depend on its batch, and prefill(S) + decode steps equal prefill(S + k) bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import numpy as np

from ..model.decoder_config import DecoderConfig
from . import decoder_ops as D
from . import prefill as P
from .decoder_ops import CORRECTLY_ROUNDED, Transcendentals, Weights, weight
from .kv_cache import KVCache, column_positions, visible_columns
from .policy import NumericContract

F32 = np.float32


# ---------------------------------------------------------------------------------------------- inputs
def token_rows(
    cfg: DecoderConfig, w: Weights, ids: Sequence[int], dtype: np.dtype = F32
) -> tuple[np.ndarray, np.ndarray]:
    """The host's gathers for tokens: `embed_tokens[id]` [T, D] and `embed_tokens_per_layer[id']` [T, L*P]
    (id' = id inside the per-layer vocabulary, else 0), as `dtype`.  Every id reads its own `embed_tokens` row, as
    `Gemma3nForCausalLM` does (released checkpoints' rows from 262144 on are copies of row 0)."""
    ids = np.asarray(ids, np.int64)
    bad = (ids < 0) | (ids >= cfg.vocab_size)
    if bad.any():
        raise ValueError(f"token id {int(ids[bad][0])} outside the vocabulary [0, {cfg.vocab_size})")
    per_layer_ids = np.where(ids < cfg.vocab_size_per_layer_input, ids, 0)
    return (
        np.asarray(w["embed_tokens"])[ids].astype(dtype),
        np.asarray(w["embed_tokens_per_layer"])[per_layer_ids].astype(dtype),
    )


def embed_rows(
    c: NumericContract, cfg: DecoderConfig, w: Weights, text_rows: np.ndarray, ple_rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Host-gathered rows -> (inputs_embeds [T, D], per_layer_inputs [T, L, P]), row by row, with the prefill
    stage's own functions (scaled text rows; dense PLE: projection, width-P norm, token part, 2^-0.5)."""
    embeds = P.scaled_text_rows(c, cfg, text_rows)
    w_proj, w_norm = weight(w, "per_layer_model_projection"), weight(w, "per_layer_projection_norm")
    pli = np.stack(
        [
            P.dense_ple(c, cfg, embeds[i : i + 1], ple_rows[i : i + 1], w_proj, w_norm, 1)["per_layer_inputs"][0]
            for i in range(len(embeds))
        ]
    )
    return embeds, pli


def text_inputs(
    c: NumericContract, cfg: DecoderConfig, w: Weights, ids: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """A text-only prompt's (inputs_embeds, per_layer_inputs), as the prefill stage computes them."""
    return embed_rows(c, cfg, w, *token_rows(cfg, w, ids))


# ---------------------------------------------------------------------------------------------- one layer
class KeyValueSource(Protocol):
    """Where a layer's attention gets its keys and values: a prompt's own (prefill) or the cache (decode)."""

    def attend(
        self,
        c: NumericContract,
        layer: int,
        q: np.ndarray,
        kv: tuple[np.ndarray, np.ndarray] | None,
        fn: Transcendentals,
        queries: np.ndarray,
    ) -> np.ndarray:
        """Attended values [T, H, hd] of queries q at positions `queries`; `kv`: this layer's own new K/V
        (None for a KV-shared layer)."""


class _PrefillAttention:
    """K/V for a prompt at positions 0..S-1: owning layers write the cache slot; producers publish the whole
    prompt's K/V to the shared layers of their type; every query's key columns in kv_cache.py's order."""

    def __init__(self, cfg: DecoderConfig, cache: KVCache, slot: int, length: int) -> None:
        self.cfg, self.cache, self.slot, self.length = cfg, cache, slot, length
        self.published: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def attend(
        self,
        c: NumericContract,
        layer: int,
        q: np.ndarray,
        kv: tuple[np.ndarray, np.ndarray] | None,
        fn: Transcendentals,
        queries: np.ndarray,
    ) -> np.ndarray:
        cfg, kind = self.cfg, self.cfg.layer_types[layer]
        if kv is not None:
            k, v = kv
            rows = self.cache.layout.rows(layer)
            for p in range(max(0, self.length - rows) if cfg.is_sliding(layer) else 0, self.length):
                self.cache.write(layer, self.slot, p, k[p], v[p])
            if layer == cfg.kv_store_layers.get(kind):
                self.published[kind] = (k, v)
        else:
            k, v = self.published[kind]
        sliding = cfg.is_sliding(layer)
        width = self.cache.layout.rows(cfg.kv_producers[layer]) if sliding else self.length
        columns = np.stack(
            [
                np.where(
                    visible_columns(sliding, int(p), width, cfg.sliding_window),
                    column_positions(sliding, int(p), width, cfg.sliding_window),
                    -1,
                )
                for p in queries
            ]
        )
        return D.attention_core(c, q, k, v, columns, fn)


class _DecodeAttention:
    """One token per sequence: owning layers write their row, then every query reads its slot's columns."""

    def __init__(self, cfg: DecoderConfig, cache: KVCache, slots: Sequence[int], positions: Sequence[int]) -> None:
        self.cfg, self.cache, self.slots, self.positions = cfg, cache, list(slots), list(positions)

    def attend(
        self,
        c: NumericContract,
        layer: int,
        q: np.ndarray,
        kv: tuple[np.ndarray, np.ndarray] | None,
        fn: Transcendentals,
        queries: np.ndarray,
    ) -> np.ndarray:
        cfg = self.cfg
        if kv is not None:
            for b, (slot, p) in enumerate(zip(self.slots, self.positions)):
                self.cache.write(layer, slot, p, kv[0][b], kv[1][b])
        producer = cfg.kv_producers[layer]
        sliding, rows = cfg.is_sliding(layer), self.cache.layout.rows(producer)
        out = np.empty_like(q)
        for b, (slot, p) in enumerate(zip(self.slots, self.positions)):
            columns = np.where(visible_columns(sliding, p, rows, cfg.sliding_window), np.arange(rows), -1)[None]
            out[b : b + 1] = D.attention_core(
                c, q[b : b + 1], self.cache.keys[producer][slot], self.cache.values[producer][slot], columns, fn
            )
        return out


def decoder_layer(
    c: NumericContract,
    cfg: DecoderConfig,
    w: Weights,
    layer: int,
    streams: np.ndarray,
    per_layer_input: np.ndarray,
    positions: np.ndarray,
    attention: KeyValueSource,
    fn: Transcendentals,
    stages: dict[str, np.ndarray] | None = None,
) -> np.ndarray:
    """One decoder layer on the streams [n, T, D] of T tokens at `positions` (spec §4)."""
    at = f"layers.{layer}."
    predictions = D.altup_predict(c, cfg, w, layer, streams, fn)
    active = predictions[cfg.altup_active_idx]
    xn = D.rms_norm(c, cfg, active, weight(w, at + "input_layernorm"))
    lau = D.laurel(c, cfg, w, layer, xn)
    theta = cfg.rope_theta_sliding if cfg.is_sliding(layer) else cfg.rope_theta_full
    cos, sin = D.rope_tables(c, theta, cfg.head_dim, positions)
    q = D.project_queries(c, cfg, w, layer, xn, cos, sin)
    kv = D.project_keys_values(c, cfg, w, layer, xn, cos, sin) if cfg.owns_kv(layer) else None
    attended = attention.attend(c, layer, q, kv, fn, positions)
    h = D.attention_residual(c, cfg, w, layer, active, attended, lau)
    h = D.mlp(c, cfg, w, layer, h, fn)
    corrected = D.altup_correct(c, cfg, w, layer, predictions, h, fn)
    out = D.ple_gate(c, cfg, w, layer, corrected, per_layer_input, fn)
    if stages is not None:
        stages[at + "predictions"], stages[at + "attention"], stages[at + "mlp"] = predictions, attended, h
        stages[at + "output"] = out
    return out


# ---------------------------------------------------------------------------------------------- program entries
def prefill(
    c: NumericContract,
    cfg: DecoderConfig,
    w: Weights,
    cache: KVCache,
    slot: int,
    inputs_embeds: np.ndarray,
    per_layer_inputs: np.ndarray,
    *,
    fn: Transcendentals = CORRECTLY_ROUNDED,
    shared_layers_last_row_only: bool = True,
    stages: dict[str, np.ndarray] | None = None,
    forced_inputs: Mapping[int, np.ndarray] | None = None,
) -> np.ndarray:
    """Run a prompt (positions 0..S-1) into cache slot `slot`; returns the last position's logits [V].

    With `shared_layers_last_row_only` (spec §7.5) the KV-shared layers, which write no cache, run on the last
    prompt row only; every row being computed on its own, that changes no bit of the result.  With
    `forced_inputs`, layer l reads its input streams [n, S, D] from `forced_inputs[l]` (another run's, e.g. a
    compiled program's or transformers') instead of the previous layer's output: each layer's result is then
    this contract's evaluation of that one layer on the other run's inputs (a local check).
    """
    embeds = np.asarray(inputs_embeds, F32)
    pli = np.asarray(per_layer_inputs, F32)
    length = len(embeds)
    _check_slot(cache, slot)
    if not 1 <= length <= cache.layout.capacity:
        raise ValueError(f"prompt of {length} positions does not fit the KV cache capacity {cache.layout.capacity}")
    if pli.shape != (length, cfg.num_hidden_layers, cfg.hidden_size_per_layer_input):
        raise ValueError(
            f"per_layer_inputs has shape {pli.shape}, expected "
            f"{(length, cfg.num_hidden_layers, cfg.hidden_size_per_layer_input)}"
        )
    attention = _PrefillAttention(cfg, cache, slot, length)
    streams = D.altup_init(c, cfg, w, embeds)
    rows = np.arange(length)
    for layer in range(cfg.num_hidden_layers):
        if forced_inputs is not None and layer in forced_inputs:
            streams = np.asarray(forced_inputs[layer], F32)[:, rows]
        if shared_layers_last_row_only and layer == cfg.first_kv_shared_layer:
            streams, rows = streams[:, -1:], rows[-1:]
        streams = decoder_layer(c, cfg, w, layer, streams, pli[rows, layer], rows, attention, fn, stages)
    return D.logits(c, cfg, w, streams[:, -1:], fn)[0]


def decode_step(
    c: NumericContract,
    cfg: DecoderConfig,
    w: Weights,
    cache: KVCache,
    slots: Sequence[int],
    positions: Sequence[int],
    text_rows: np.ndarray,
    ple_rows: np.ndarray,
    *,
    fn: Transcendentals = CORRECTLY_ROUNDED,
    stages: dict[str, np.ndarray] | None = None,
) -> np.ndarray:
    """One token for each of B sequences: sequence b is at `positions[b]` in cache slot `slots[b]` (the positions
    before it already in the cache).  Returns logits [B, V]."""
    slots, positions = [int(s) for s in slots], [int(p) for p in positions]
    if not (len(slots) == len(positions) == len(text_rows) == len(ple_rows)) or not slots:
        raise ValueError(
            f"decode step needs one slot, position, text row and per-layer row per sequence, got "
            f"{len(slots)}, {len(positions)}, {len(text_rows)}, {len(ple_rows)}"
        )
    if len(set(slots)) != len(slots):
        raise ValueError(f"a decode step advances each slot once, got slots {slots}")
    for slot, p in zip(slots, positions):
        _check_slot(cache, slot)
        if not 0 <= p < cache.layout.capacity:
            raise ValueError(f"position {p} is outside the KV cache capacity {cache.layout.capacity}")
    embeds, pli = embed_rows(c, cfg, w, np.asarray(text_rows, F32), np.asarray(ple_rows, F32))
    attention = _DecodeAttention(cfg, cache, slots, positions)
    streams = D.altup_init(c, cfg, w, embeds)
    where = np.asarray(positions)
    for layer in range(cfg.num_hidden_layers):
        streams = decoder_layer(c, cfg, w, layer, streams, pli[:, layer], where, attention, fn, stages)
    return D.logits(c, cfg, w, streams, fn)


def _check_slot(cache: KVCache, slot: int) -> None:
    if not 0 <= slot < cache.layout.slots:
        raise ValueError(f"slot {slot} outside the KV cache's {cache.layout.slots} slots")


def greedy(
    c: NumericContract,
    cfg: DecoderConfig,
    w: Weights,
    cache: KVCache,
    slot: int,
    inputs_embeds: np.ndarray,
    per_layer_inputs: np.ndarray,
    max_new_tokens: int,
    stop_ids: Sequence[int] | None = None,
    *,
    fn: Transcendentals = CORRECTLY_ROUNDED,
    rows: Callable[[Sequence[int]], tuple[np.ndarray, np.ndarray]] | None = None,
    on_token: Callable[[int], None] | None = None,
) -> tuple[list[int], list[np.ndarray]]:
    """Spec §7.4: prefill, then one decode step per new token; a token is the first index of the largest logit.
    Stops after emitting a stop id (default: the config's eos ids; pass () to ignore them) or `max_new_tokens`
    tokens.  `rows(ids)` gathers a token's host rows (default `token_rows`).  Returns the tokens and the
    logits each was picked from."""
    stops = set(cfg.eos_token_ids if stop_ids is None else stop_ids)
    gather = rows or (lambda ids: token_rows(cfg, w, ids))
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    position = len(inputs_embeds)
    step_logits = [prefill(c, cfg, w, cache, slot, inputs_embeds, per_layer_inputs, fn=fn)]
    tokens: list[int] = []
    while True:
        token = int(np.argmax(step_logits[-1]))
        tokens.append(token)
        if on_token is not None:
            on_token(token)
        if token in stops or len(tokens) == max_new_tokens:
            return tokens, step_logits
        if position >= cache.layout.capacity:
            raise ValueError(
                f"generation reached the KV cache capacity {cache.layout.capacity} after {len(tokens)} tokens"
            )
        text, ple = gather([token])
        step_logits.append(decode_step(c, cfg, w, cache, [slot], [position], text, ple, fn=fn)[0])
        position += 1
