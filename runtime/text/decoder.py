"""The text decoder on IREE: one loaded program, its resident weights and KV cache, prefill and decode calls.

    session = DecoderSession.from_checkpoint(vmfb, "~/models/gemma-3n-E4B-it", device="cuda")
    logits = session.prefill(slot=0, inputs_embeds=e, per_layer_inputs=t)        # [V], the prompt's last position
    logits = session.decode(slots=[0, 2], positions=[17, 5], token_ids=[4368, 17])  # [2, V]
    chosen = session.decode_greedy(slots=[0, 2], positions=[18, 6], token_ids=[9, 3], top_k=5)  # TokenSelection
    firsts = session.prefill_batch_greedy([1, 3], [e1, e3], [t1, t3])  # two prompts in one call (batched entries)
    tokens, _ = greedy(session, 0, e, t, max_new_tokens=64)

One `VmContext` holds one copy of the weights (IREE parameters read from the checkpoint's safetensors) and the
KV cache (mutable globals of the program, updated in place by every call: nothing of the cache crosses to the
host). A decode call gathers its tokens' `embed_tokens` and `embed_tokens_per_layer` rows on the host from the
checkpoint's memory maps (the per-layer table never reaches the device) and computes their RoPE tables
(`contracts/decoder_ops.rope_tables`, the contract's bits); inputs and results go through the page-locked
staging buffers of `runtime/programs/session.py`. A call is padded to the smallest compiled bucket that holds it: a
prompt with zero rows, a batch with rows that write the program's scratch slot, a batched prefill with prompts
of no positions (`padding_slots`); their results are dropped.

What crosses back: `prefill` / `decode` copy the logits (F32 [B, V]: 67 MB a step at batch 64 of Gemma 3n's
262400 tokens); `prefill_greedy` / `decode_greedy` copy only the entry's token selection, computed on the device
from the same logits (`decoder_ops.TokenSelection`: each row's greedy token, its F32 log-probability and its
non-finite count, 16 bytes a row), plus, when asked, the top k tokens and log-probabilities (the program's
`decoder_top_k` entry run on the logits while they are still on the device: 8k bytes a row), tokens drawn by
temperature, top-k, top-p and a seed (`sample=SampleRows(...)`: the program's `decoder_sample` entry, run the
same way; 12 bytes a row) and the logits.

Slots: each sequence has its own; a slot is reused by prefilling it again. The program decides what a query
sees from positions alone (kv_cache.py), so rows a previous sequence left in a reused slot are never visible.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import ml_dtypes
import numpy as np

from ...contracts import decoder as DEC
from ...contracts import decoder_ops as D
from ...contracts.decoder_policy import decoder_contract_identity
from ...contracts.policy import NumericContract, get_contract
from ...contracts.sampling import SampleRows, sampled_logprob
from ...emitters.compile import Target
from ...emitters.decoder import (
    SAMPLE_OUTPUTS,
    SELECTION_OUTPUTS,
    TOP_K_OUTPUTS,
    DecoderModuleSpec,
    emit_decoder_module,
)
from ...emitters.entries import (
    DecoderCacheEntry,
    DecoderDecodeEntry,
    DecoderPrefillBatchEntry,
    DecoderPrefillEntry,
    DecoderSampleEntry,
    DecoderTopKEntry,
)
from ...model.audio_weights import HF_LAYOUT, WeightLayout
from ...model.checkpoint_config import CheckpointConfig
from ...model.decoder_config import DecoderConfig
from ...model.decoder_weights import read_decoder_weights
from ..programs.artifacts import ArtifactCache, BuiltArtifact, program_identity
from ..programs.session import Followup, LoadedProgram, SessionError

BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.float32


@dataclass(frozen=True)
class DecoderLayoutInfo:
    """What a loaded program's entries say about it."""

    slots: int
    capacity: int
    prompts: tuple[int, ...]
    contexts: tuple[int, ...]
    batches: tuple[int, ...]
    top_k: int = 0  # the k of its top-k entries (0: none)
    prompt_batches: tuple[int, ...] = ()  # numbers of prompts its batched prefill entries take


def padding_slots(used: Sequence[int], width: int, slots: int) -> list[int]:
    """The slots a batched prefill's `width - len(used)` padding prompts name: the scratch slot (`slots`) first,
    then the lowest slots no real prompt of the call uses. A padding prompt has length 0, so its write puts back
    the rows its slot holds; distinct slots keep every row of the call's cache scatters distinct."""
    taken = set(used)
    free = [s for s in (slots, *range(slots)) if s not in taken]
    return free[: width - len(used)]


class DecoderSession(LoadedProgram):
    """A compiled decoder program (emit-gemma3n --stage decoder) loaded with a checkpoint's weights."""

    def __init__(
        self,
        vmfb: bytes | str | Path,
        parameter_files: Sequence[str | Path],
        cfg: DecoderConfig,
        host_tables: Mapping[str, np.ndarray],
        device: str = "local-task",
        scope: str = "model",
    ) -> None:
        """`host_tables`: `embed_tokens` and `embed_tokens_per_layer` (memory maps of the checkpoint's BF16
        tensors, e.g. `read_decoder_weights`), gathered one row per new token."""
        super().__init__(vmfb, parameter_files, device, scope)
        self.cfg = cfg
        self.tables = {name: host_tables[name] for name in ("embed_tokens", "embed_tokens_per_layer")}
        # a program has prefill entries, decode entries or both (DecoderModuleSpec); a call of a kind it lacks is
        # refused by name (`_bucket`)
        self.prefills = {e.tokens: name for name, e in self.entry_points(DecoderPrefillEntry, required=False).items()}
        self.prefill_batches = {
            (e.tokens, e.prompts): name
            for name, e in self.entry_points(DecoderPrefillBatchEntry, required=False).items()
        }
        self.decodes = {
            (e.context, e.batch): name for name, e in self.entry_points(DecoderDecodeEntry, required=False).items()
        }
        self.top_ks = {e.batch: (name, e.k) for name, e in self.entry_points(DecoderTopKEntry, required=False).items()}
        self.samplers = {e.batch: name for name, e in self.entry_points(DecoderSampleEntry, required=False).items()}
        cache_entries = self.entry_points(DecoderCacheEntry)
        ((self._cache_entry, cache),) = cache_entries.items()
        self.info = DecoderLayoutInfo(
            cache.slots,
            cache.capacity,
            tuple(sorted(self.prefills)),
            tuple(sorted({x for x, _ in self.decodes})),
            tuple(sorted({b for _, b in self.decodes})),
            min((k for _, k in self.top_ks.values()), default=0),
            tuple(sorted({p for _, p in self.prefill_batches})),
        )
        self.contract = self._contract(self.reflection(self._cache_entry).get("gemma3n.contract", ""))

    @classmethod
    def from_checkpoint(
        cls,
        vmfb: bytes | str | Path,
        checkpoint: str | Path,
        cfg: DecoderConfig | None = None,
        device: str = "local-task",
        layout: WeightLayout = HF_LAYOUT,
    ) -> DecoderSession:
        """The program with the checkpoint's weights: every decoder tensor checked against the configuration
        first (one error listing each missing or mismatched tensor)."""
        from ..safetensors_files import find_safetensors_files

        checkpoint = Path(checkpoint)
        cfg = cfg or CheckpointConfig.read(checkpoint).decoder
        tables = read_decoder_weights(checkpoint, cfg, layout)
        files, _, _ = find_safetensors_files(checkpoint)
        return cls(vmfb, files, cfg, tables, device)

    @staticmethod
    def _contract(identity: str) -> NumericContract:
        contract = get_contract(identity.split("@", 1)[0])
        if decoder_contract_identity(contract) != identity:
            raise SessionError(
                f"the program was built under contract {identity!r}; this version's contract is "
                f"{decoder_contract_identity(contract)!r}: rebuild the program"
            )
        return contract

    # ------------------------------------------------------------------ runtime.text.generate.DecoderBackend
    @property
    def slots(self) -> int:
        return self.info.slots

    @property
    def capacity(self) -> int:
        return self.info.capacity

    @property
    def decode_widths(self) -> tuple[int, ...]:
        return self.info.batches

    @property
    def prefill_widths(self) -> tuple[int, ...]:
        """How many prompts one prefill call takes: 1 (the prefill entries; a program without them refuses the
        call by name), and each batched entry's number."""
        return (1, *self.info.prompt_batches)

    @property
    def prompt_buckets(self) -> tuple[int, ...]:
        return self.info.prompts

    @property
    def max_prompt_tokens(self) -> int:
        return max(self.info.prompts, default=0)

    @property
    def top_k(self) -> int:
        return self.info.top_k

    @property
    def samples(self) -> bool:
        """Whether the program draws sampled tokens (its `decoder_sample` entries)."""
        return bool(self.samplers)

    # ------------------------------------------------------------------ inputs
    @cached_property
    def _rope_rows(self) -> tuple[np.ndarray, ...]:
        """The RoPE tables of every cache position, made once: a row depends on its position alone, and the contract's
        emulated rounding of 64 rows took about 1 ms of a batch-64 step's host time when made per call."""
        return tuple(self._rope_of(np.arange(self.info.capacity)))

    def _rope_of(self, positions: np.ndarray) -> list[np.ndarray]:
        cfg, c = self.cfg, self.contract
        tables = []
        for theta in (cfg.rope_theta_sliding, cfg.rope_theta_full):
            tables += [np.ascontiguousarray(t, F32) for t in D.rope_tables(c, theta, cfg.head_dim, positions)]
        return tables

    def rope_tables(self, positions: np.ndarray) -> list[np.ndarray]:
        """The RoPE inputs of `positions`: cos and sin of the sliding layers, then of the full layers
        (`contracts.decoder_ops.rope_tables`), read from the tables of the cache's positions; positions past them
        (an entry called directly with scratch rows) are computed."""
        positions = np.asarray(positions, np.int64)
        if positions.size and 0 <= positions.min() and positions.max() < self.info.capacity:
            return [table[positions] for table in self._rope_rows]
        return self._rope_of(positions)

    def _check_slot(self, slot: int) -> None:
        if not 0 <= slot < self.info.slots:
            raise SessionError(f"slot {slot} is outside the program's {self.info.slots} slots")

    @staticmethod
    def _bucket(value: int, buckets: Sequence[int], what: str) -> int:
        fitting = [b for b in buckets if b >= value]
        if not fitting:
            raise SessionError(
                f"{what} {value} exceeds the program's largest bucket {max(buckets)}"
                if buckets
                else f"the program has no {what} entries"
            )
        return fitting[0]

    # ------------------------------------------------------------------ calls
    def prefill(self, slot: int, inputs_embeds: np.ndarray, per_layer_inputs: np.ndarray) -> np.ndarray:
        """Run a prompt (the prefill stage's two outputs, positions 0..L-1) into `slot`; the logits [V] of its
        last position."""
        name, args = self._prefill_call(slot, inputs_embeds, per_layer_inputs)
        return self.invoke(name, ("logits",), *args)["logits"]

    def prefill_greedy(
        self,
        slot: int,
        inputs_embeds: np.ndarray,
        per_layer_inputs: np.ndarray,
        top_k: int = 0,
        logits: bool = False,
        sample: SampleRows | None = None,
    ) -> D.TokenSelection:
        """`prefill`, returning the last position's token selection (one row) instead of its logits: its greedy
        token and log-probability, the top `top_k` (<= the program's `top_k`), with `logits` the logits and with
        `sample` a drawn token."""
        name, args = self._prefill_call(slot, inputs_embeds, per_layer_inputs)
        return self._select(name, args, 1, 1, top_k, logits, sample, flat_logits=True)

    def prefill_batch_greedy(
        self,
        slots: Sequence[int],
        inputs_embeds: Sequence[np.ndarray],
        per_layer_inputs: Sequence[np.ndarray],
        top_k: int = 0,
        logits: bool = False,
        sample: SampleRows | None = None,
    ) -> D.TokenSelection:
        """Several prompts, prompt i into `slots[i]`, in one call of the narrowest batched prefill entry that holds
        them (one prompt: `prefill_greedy`): each prompt's last position's token selection, one row each, the
        bits each prompt gets alone. Padding prompts have no positions: they write nothing, each into a slot of
        its own (`padding_slots`), as the cache writes' distinct-rows promise needs."""
        slots = [int(s) for s in slots]
        if not slots or not len(slots) == len(inputs_embeds) == len(per_layer_inputs):
            raise SessionError(
                f"a batched prefill needs one slot, inputs_embeds and per_layer_inputs per prompt, got "
                f"{len(slots)}, {len(inputs_embeds)}, {len(per_layer_inputs)}"
            )
        if len(slots) == 1:
            return self.prefill_greedy(slots[0], inputs_embeds[0], per_layer_inputs[0], top_k, logits, sample)
        if len(set(slots)) != len(slots):
            raise SessionError(f"a batched prefill writes each slot once, got slots {slots}")
        prompts = [self._prompt(slot, e, t) for slot, e, t in zip(slots, inputs_embeds, per_layer_inputs)]
        width = self._bucket(len(prompts), self.info.prompt_batches, "number of prompts")
        bucket = self._bucket(max(len(e) for _, e, _ in prompts), self.info.prompts, "prompt length")
        cfg = self.cfg
        embeds = np.zeros((width, bucket, cfg.hidden_size), F32)
        pli = np.zeros((width, bucket, cfg.num_hidden_layers, cfg.hidden_size_per_layer_input), F32)
        all_slots = np.array(slots + padding_slots(slots, width, self.info.slots), np.int32)
        lengths = np.zeros(width, np.int32)
        for i, (slot, e, t) in enumerate(prompts):
            embeds[i, : len(e)], pli[i, : len(e)], all_slots[i], lengths[i] = e, t, slot, len(e)
        args = [all_slots, lengths, embeds, pli, *self.rope_tables(np.arange(bucket))]
        return self._select(self.prefill_batches[(bucket, width)], args, len(prompts), width, top_k, logits, sample)

    def _prompt(
        self, slot: int, inputs_embeds: np.ndarray, per_layer_inputs: np.ndarray
    ) -> tuple[int, np.ndarray, np.ndarray]:
        """A prompt's inputs, checked: (slot, embeds [L, hidden], per_layer_inputs [L, layers, width]) as F32."""
        cfg = self.cfg
        self._check_slot(slot)
        embeds = np.asarray(inputs_embeds, F32)
        pli = np.asarray(per_layer_inputs, F32)
        length = len(embeds)
        if embeds.shape != (length, cfg.hidden_size) or length < 1:
            raise SessionError(f"inputs_embeds must be [positions >= 1, {cfg.hidden_size}], got {embeds.shape}")
        want = (length, cfg.num_hidden_layers, cfg.hidden_size_per_layer_input)
        if pli.shape != want:
            raise SessionError(f"per_layer_inputs must be {list(want)} for {length} positions, got {list(pli.shape)}")
        return slot, embeds, pli

    def _prefill_call(
        self, slot: int, inputs_embeds: np.ndarray, per_layer_inputs: np.ndarray
    ) -> tuple[str, list[np.ndarray]]:
        cfg = self.cfg
        slot, embeds, pli = self._prompt(slot, inputs_embeds, per_layer_inputs)
        length = len(embeds)
        bucket = self._bucket(length, self.info.prompts, "prompt length")
        padded_embeds = np.zeros((bucket, cfg.hidden_size), F32)
        padded_embeds[:length] = embeds
        padded_pli = np.zeros((bucket,) + pli.shape[1:], F32)
        padded_pli[:length] = pli
        return self.prefills[bucket], [
            np.array(slot, np.int32),
            np.array(length, np.int32),
            padded_embeds,
            padded_pli,
            *self.rope_tables(np.arange(bucket)),
        ]

    def token_rows(self, token_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """The host's gathers for new tokens (`contracts.decoder.token_rows`), as BF16: gathered in BF16 straight
        from the checkpoint's BF16 tables (the same bits as through F32, without two conversions of every row)."""
        return DEC.token_rows(self.cfg, self.tables, token_ids, BF16)

    def decode(self, slots: Sequence[int], positions: Sequence[int], token_ids: Sequence[int]) -> np.ndarray:
        """One token for each sequence: sequence b is at `positions[b]` of slot `slots[b]` (its earlier positions
        already in the cache); returns logits [B, V]."""
        name, args, rows = self._decode_call(slots, positions, token_ids)
        return self.invoke(name, ("logits",), *args)["logits"][:rows]

    def decode_greedy(
        self,
        slots: Sequence[int],
        positions: Sequence[int],
        token_ids: Sequence[int],
        top_k: int = 0,
        logits: bool = False,
        sample: SampleRows | None = None,
    ) -> D.TokenSelection:
        """`decode`, returning each sequence's token selection (B rows) instead of its logits: greedy tokens and
        log-probabilities, the top `top_k` (<= the program's `top_k`), with `logits` the logits and with
        `sample` drawn tokens."""
        name, args, rows = self._decode_call(slots, positions, token_ids)
        return self._select(name, args, rows, len(args[1]), top_k, logits, sample)

    def _select(
        self,
        name: str,
        args: list[np.ndarray],
        rows: int,
        batch: int,
        top_k: int,
        logits: bool,
        sample: SampleRows | None,
        flat_logits: bool = False,
    ) -> D.TokenSelection:
        """Run a prefill or decode entry of `batch` rows (`rows` of them real) and copy back its selection outputs
        (and its logits, with `logits`); with `top_k` the top-k entry of the call's width, with `sample` its sample
        entry, then run on the entry's logits where they lie, on the device (a prefill's [V] logits viewed as
        [1, V])."""
        outputs = SELECTION_OUTPUTS[1:] + (("logits",) if logits else ())
        if not 0 <= top_k <= self.info.top_k:
            raise SessionError(
                f"top_k {top_k} is outside the program's top-k entries (k = {self.info.top_k})"
                if self.info.top_k
                else f"top_k {top_k}: the program was built without top-k entries"
            )
        if sample is not None and not self.samples:
            raise SessionError("this decoder program was built without sampling entries: it decodes greedily only")
        followups = []
        if top_k:
            followups.append(Followup(self.top_ks[batch][0], TOP_K_OUTPUTS))
        if sample is not None:
            followups.append(Followup(self.samplers[batch], SAMPLE_OUTPUTS, sample.arrays(batch)))
        if followups:
            shape = (batch, self.cfg.vocab_size) if flat_logits else None
            out = self.invoke_chained(name, outputs, args, "logits", followups, shape)
        else:
            out = self.invoke(name, outputs, *args)
        selection = D.TokenSelection(
            out["token"],
            out["logprob"],
            out["nonfinite"],
            out["first_nonfinite"],
            out.get("top_tokens"),
            out.get("top_logprobs"),
            out["logits"].reshape(batch, -1) if logits else None,
            out.get("sampled"),
            None if sample is None else sampled_logprob(out["sampled_logit"], out["top_logit"], out["logprob"]),
        )
        return selection.rows(rows).with_top_k(top_k)

    def _decode_call(
        self, slots: Sequence[int], positions: Sequence[int], token_ids: Sequence[int]
    ) -> tuple[str, list[np.ndarray], int]:
        slots, positions, ids = ([int(v) for v in seq] for seq in (slots, positions, token_ids))
        if not slots or not len(slots) == len(positions) == len(ids):
            raise SessionError(
                f"a decode step needs one slot, position and token per sequence, got {len(slots)}, "
                f"{len(positions)}, {len(ids)}"
            )
        if len(set(slots)) != len(slots):
            raise SessionError(f"a decode step advances each slot once, got slots {slots}")
        for slot, p in zip(slots, positions):
            self._check_slot(slot)
            if not 0 <= p < self.info.capacity:
                raise SessionError(f"position {p} is outside the KV cache capacity {self.info.capacity}")
        batch = self._bucket(len(slots), self.info.batches, "batch")
        context = self._bucket(max(positions) + 1, self.info.contexts, "position")
        pad = batch - len(slots)
        text, ple = self.token_rows(ids + [0] * pad)
        scratch = self.info.slots  # the program's extra slot: padding rows write there
        all_positions = np.array(positions + [0] * pad, np.int32)
        return (
            self.decodes[(context, batch)],
            [np.array(slots + [scratch] * pad, np.int32), all_positions, text, ple, *self.rope_tables(all_positions)],
            len(slots),
        )

    def cache(self, slot: int) -> dict[str, np.ndarray]:
        """One slot's rows of every owning layer's keys and values (`keys_{l}`, `values_{l}`: [rows, kv_heads,
        head_dim], kv_cache.py's layout)."""
        self._check_slot(slot)
        return self.invoke(self._cache_entry, self.output_names(self._cache_entry), np.array(slot, np.int32))


def decoder_weight_schema(spec: DecoderModuleSpec) -> str:
    """The checkpoint tensors a program binds (names, shapes, BF16): part of its artifact identity."""
    from ...model.decoder_weights import decoder_weight_specs

    specs = decoder_weight_specs(spec.cfg, spec.layout).values()
    return hashlib.sha256("".join(f"{s.key}:BF16:{list(s.shape)}\n" for s in specs).encode()).hexdigest()


def build_decoder_artifact(
    cache: ArtifactCache, spec: DecoderModuleSpec, target: Target, progress: Callable[[str], None] | None = None
) -> BuiltArtifact:
    """Compile (or reuse, verified) the decoder program of `spec` in the artifact cache's directory."""
    mlir = emit_decoder_module(spec)
    identity = program_identity(
        mlir, target, spec.contract.identity(), spec.identity(), decoder_weight_schema(spec), config=spec.cfg.identity()
    )
    what = (
        f"decoder program: {len(spec.prefill_entries)} prefill and {len(spec.decode_entries)} decode entries, "
        f"{spec.slots} slots x {spec.capacity} positions"
    )
    return cache.build("decoder", mlir, identity, target, what, progress)


def greedy(
    session: DecoderSession,
    slot: int,
    inputs_embeds: np.ndarray,
    per_layer_inputs: np.ndarray,
    max_new_tokens: int,
    stop_ids: Sequence[int] | None = None,
    on_token: Callable[[int], None] | None = None,
) -> tuple[list[int], list[np.ndarray]]:
    """`contracts.decoder.greedy` on the program: prefill, then one decode step per new token (the first index of
    the largest logit), stopping after a stop id (default: the config's eos ids; () ignores them) or
    `max_new_tokens`. Returns the tokens and the logits each was picked from."""
    cfg = session.cfg
    stops = set(cfg.eos_token_ids if stop_ids is None else stop_ids)
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    position = len(inputs_embeds)
    step_logits = [session.prefill(slot, inputs_embeds, per_layer_inputs)]
    tokens: list[int] = []
    while True:
        token = int(np.argmax(step_logits[-1]))
        tokens.append(token)
        if on_token is not None:
            on_token(token)
        if token in stops or len(tokens) == max_new_tokens:
            return tokens, step_logits
        if position >= session.info.capacity:
            raise SessionError(
                f"generation reached the KV cache capacity {session.info.capacity} after {len(tokens)} tokens"
            )
        step_logits.append(session.decode([slot], [position], [token])[0])
        position += 1
