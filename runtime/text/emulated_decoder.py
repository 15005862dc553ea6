"""The decoder interface (`runtime.text.generate.DecoderBackend`) on the numeric contract's executable emulation.

`EmulatedDecoder` runs `contracts/decoder.py` (prefill and batched decode steps over a KV cache with slots)
with a checkpoint's language-model weights: the reference a compiled decoder program is judged against, and
the decoder behind the generation, transcription and serving code until the compiled program exists (they
only see the interface).  It is numpy on the CPU, float64-exact contractions: meant for tests and the tiny
configuration (the weights are held as float32, four times their BF16 size).

`prefill_greedy` / `decode_greedy` select tokens as a compiled program's entries do, with the same functions
(`decoder_ops.token_select` and `token_top_k`, F32, this decoder's transcendentals).

Decode entries are emulated at the given batch widths, batched prefill entries at the given numbers of prompts
(a call wider than the widest is refused, as a compiled program would refuse it); the emulation's results do
not depend on the width (each row, each prompt, is computed on its own), which is the property a compiled
program must have too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...contracts import decoder as DEC
from ...contracts import decoder_ops as D
from ...contracts.decoder_ops import CORRECTLY_ROUNDED, Transcendentals
from ...contracts.kv_cache import KVCache, KVCacheLayout
from ...contracts.policy import DEFAULT_CONTRACT, get_contract
from ...contracts.sampling import SampleRows, sampled_logprob
from ...emitters.prefill import TEXT_PREFIX
from ...model.audio_config import ConfigError
from ...model.audio_weights import HF_LAYOUT, MLX_LAYOUT, WeightLayout
from ...model.checkpoint_config import CheckpointConfig
from ...model.decoder_weights import read_decoder_weights
from ..safetensors_files import find_safetensors_files, read_safetensors_header

DEFAULT_DECODE_WIDTHS = (1, 2, 4, 8)
#: The top-k a selection returns (a compiled program's default, emitters/decoder.py TOP_LOGPROBS).
DEFAULT_TOP_K = 20


def text_layout(checkpoint: str | Path) -> WeightLayout:
    """Which naming the checkpoint's language-model tensors use (transformers' or mlx-vlm's)."""
    files, _, _ = find_safetensors_files(Path(checkpoint))
    names = [n for f in files for n in read_safetensors_header(f)]
    for layout in (HF_LAYOUT, MLX_LAYOUT):
        if any(n.startswith(TEXT_PREFIX[layout.name]) for n in names):
            return layout
    raise ConfigError(
        f"{checkpoint}: no language-model tensors (names starting with "
        f"{' or '.join(repr(p) for p in TEXT_PREFIX.values())})"
    )


class EmulatedDecoder:
    """A `DecoderBackend` computing with the contract's emulation (module docstring)."""

    def __init__(
        self,
        checkpoint: str | Path,
        contract: str = DEFAULT_CONTRACT,
        *,
        slots: int = 4,
        capacity: int | None = None,
        decode_widths: Sequence[int] = DEFAULT_DECODE_WIDTHS,
        prefill_widths: Sequence[int] = (1,),
        transcendentals: Transcendentals = CORRECTLY_ROUNDED,
        top_k: int = DEFAULT_TOP_K,
    ) -> None:
        self.cfg = CheckpointConfig.read(checkpoint).decoder
        self.contract = get_contract(contract)
        weights = read_decoder_weights(checkpoint, self.cfg, text_layout(checkpoint))
        self.weights = {name: np.asarray(w, np.float32) for name, w in weights.items()}
        self.slots = int(slots)
        self.capacity = int(capacity if capacity is not None else self.cfg.max_position_embeddings)
        self.decode_widths = tuple(sorted(set(int(w) for w in decode_widths)))
        self.prefill_widths = tuple(sorted(set(int(w) for w in prefill_widths) | {1}))
        self.prompt_buckets: tuple[int, ...] = ()  # any prompt length that fits the cache
        self.fn = transcendentals
        self.top_k = int(top_k)
        self.samples = True  # the contract's sampler (contracts/sampling.py) on the host
        self.cache = KVCache(KVCacheLayout.for_config(self.cfg, self.contract, self.slots, self.capacity))

    @property
    def max_prompt_tokens(self) -> int:
        return self.capacity  # the emulation prefills prompts of any length that fits the cache

    def close(self) -> None:
        """Nothing to release: the emulation's cache is host memory, freed with the object."""

    def prefill(self, slot: int, inputs_embeds: np.ndarray, per_layer_inputs: np.ndarray) -> np.ndarray:
        return DEC.prefill(
            self.contract, self.cfg, self.weights, self.cache, int(slot), inputs_embeds, per_layer_inputs, fn=self.fn
        )

    def decode(self, slots: Sequence[int], positions: Sequence[int], token_ids: Sequence[int]) -> np.ndarray:
        if len(slots) > self.decode_widths[-1]:
            raise ValueError(
                f"a decode call of {len(slots)} sequences is wider than the widest decode entry "
                f"({self.decode_widths[-1]})"
            )
        text, ple = DEC.token_rows(self.cfg, self.weights, token_ids)
        return DEC.decode_step(
            self.contract, self.cfg, self.weights, self.cache, slots, positions, text, ple, fn=self.fn
        )

    def prefill_greedy(
        self,
        slot: int,
        inputs_embeds: np.ndarray,
        per_layer_inputs: np.ndarray,
        top_k: int = 0,
        logits: bool = False,
        sample: SampleRows | None = None,
    ) -> D.TokenSelection:
        return self._select(self.prefill(slot, inputs_embeds, per_layer_inputs)[None], top_k, logits, sample)

    def decode_greedy(
        self,
        slots: Sequence[int],
        positions: Sequence[int],
        token_ids: Sequence[int],
        top_k: int = 0,
        logits: bool = False,
        sample: SampleRows | None = None,
    ) -> D.TokenSelection:
        return self._select(self.decode(slots, positions, token_ids), top_k, logits, sample)

    def prefill_batch_greedy(
        self,
        slots: Sequence[int],
        inputs_embeds: Sequence[np.ndarray],
        per_layer_inputs: Sequence[np.ndarray],
        top_k: int = 0,
        logits: bool = False,
        sample: SampleRows | None = None,
    ) -> D.TokenSelection:
        if len(slots) > self.prefill_widths[-1]:
            raise ValueError(
                f"a prefill call of {len(slots)} prompts is wider than the widest prefill entry ({self.prefill_widths[-1]})"
            )
        rows = [self.prefill(*args) for args in zip(slots, inputs_embeds, per_layer_inputs)]
        return self._select(np.stack(rows), top_k, logits, sample)

    def _select(self, x: np.ndarray, top_k: int, logits: bool, sample: SampleRows | None) -> D.TokenSelection:
        if not 0 <= top_k <= self.top_k:
            raise ValueError(f"top_k {top_k} is outside this decoder's top-k (k = {self.top_k})")
        selection = D.token_select(x, self.fn)
        top_tokens = top_logprobs = None
        if top_k:
            top_tokens, top_logprobs = D.token_top_k(x, top_k, self.fn)
        sampled = sampled_lp = None
        if sample is not None:
            drawn = sample.draw(x, self.fn)
            sampled, sampled_lp = drawn.token, sampled_logprob(drawn.logit, drawn.top_logit, selection.logprob)
        return dataclasses.replace(
            selection,
            top_tokens=top_tokens,
            top_logprobs=top_logprobs,
            logits=x if logits else None,
            sampled=sampled,
            sampled_logprob=sampled_lp,
        )
