"""Executable specification of the prefill stage: merge + dense per-layer inputs under a contract.

Mirrors `templates/token_merge.mlir.j2` and `templates/dense_ple.mlir.j2` op for op (same rounding
points, constants and the 32-lane x 8-read XOR schedule of the width-256 norm), on the same inputs the
compiled entry takes (host-gathered BF16 rows, the hard audio table, the encoder's audio rows, the row
map and the real length).  `dense_ple` can be fed the artifact's own projection output
(`projection_linear`), so everything after the one contraction can be checked bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..model.text_config import TextConfig
from . import emulation as E
from .policy import NumericContract

F32 = np.float32


def scaled_text_rows(c: NumericContract, cfg: TextConfig, text_rows: np.ndarray) -> np.ndarray:
    """round(embed_tokens[id] * sqrt(hidden)), the scale as the contract's frameworks hold it (BF16 45.25)."""
    return E.rnd(c, (np.asarray(text_rows, F32) * E.contract_scalar(c, cfg.hidden_size**0.5)).astype(F32))


def merge(
    c: NumericContract,
    cfg: TextConfig,
    ids: np.ndarray,
    text_rows: np.ndarray,
    hard_table: np.ndarray,
    audio_rows: np.ndarray | None,
    row_map: np.ndarray | None,
    length: int,
) -> np.ndarray:
    """inputs_embeds [C, hidden]: scaled text rows, hard audio rows, soft rows at placeholders, zero tail."""
    ids = np.asarray(ids, np.int64)
    text = scaled_text_rows(c, cfg, text_rows)
    is_audio = ids >= cfg.audio_vocab_offset
    hard_index = np.where(is_audio, ids - cfg.audio_vocab_offset, cfg.audio_vocab_size - 1)
    out = np.where(is_audio[:, None], np.asarray(hard_table, F32)[hard_index], text).astype(F32)
    if audio_rows is not None and len(audio_rows):
        row_map = np.asarray(row_map, np.int64)
        soft = np.asarray(audio_rows, F32)[np.clip(row_map, 0, len(audio_rows) - 1)]
        out = np.where((row_map >= 0)[:, None], soft, out).astype(F32)
    live = np.arange(len(ids)) < length
    return np.where(live[:, None], out, F32(0)).astype(F32)


def dense_ple(
    c: NumericContract,
    cfg: TextConfig,
    embeds: np.ndarray,
    ple_rows: np.ndarray,
    w_proj: np.ndarray,
    w_norm: np.ndarray,
    length: int,
    projection_linear: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """per_layer_inputs [C, layers, 256] and its named intermediates."""
    cap = embeds.shape[0]
    layers, pd = cfg.num_hidden_layers, cfg.hidden_size_per_layer_input
    token = E.rnd(c, (np.asarray(ple_rows, F32) * E.contract_scalar(c, pd**0.5)).astype(F32))
    linear = E.linear(c, embeds, w_proj) if projection_linear is None else np.asarray(projection_linear, F32)
    projected = E.rnd(c, (linear * E.contract_scalar(c, cfg.hidden_size**-0.5)).astype(F32))
    normed = E.mlx_rms_norm(c, projected.reshape(cap * layers, pd), w_norm, cfg.rms_norm_eps)
    summed = E.rnd(c, (normed.reshape(cap, layers, pd) + token.reshape(cap, layers, pd)).astype(F32))
    scaled = E.rnd(c, (summed * E.contract_scalar(c, 2.0**-0.5)).astype(F32))
    live = np.arange(cap) < length
    out = np.where(live[:, None, None], scaled, F32(0)).astype(F32)
    return {
        "ple_projection_linear": linear,
        "ple_projected": projected,
        "ple_token": token,
        "ple_normed": normed.reshape(cap, layers, pd),
        "per_layer_inputs": out,
    }
