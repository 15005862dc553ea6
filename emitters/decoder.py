"""Compose the text decoder program: prefill and decode entries over one resident KV cache.

One module holds the language model's weights (IREE parameters bound by checkpoint tensor name: every tensor
of `decoder_weight_specs` but the host-only `embed_tokens_per_layer`) and its KV cache
(`contracts/kv_cache.py`'s layout for `slots` sequences of up to `capacity` positions, plus one scratch slot):
ONE mutable `util.global` [slots + 1, rows, kv_heads, head_dim] in which each owning layer's keys and values
occupy their own row range, updated in place (a prompt's rows by `dynamic_update_slice`, a decode step's by
one `scatter` per layer and K/V into the global seen as one row per (slot, row), its indices computed on the
device once per step for every layer and distinct by construction, so the scatter's `unique_indices` promise
holds and IREE spreads its rows over threads: `decoder_layer.attend.decode_own.mlir.j2` says why; IREE keeps a
mutable global in one device buffer and runs the update as a read-write dispatch on it: no copy of the cache
per call, `tests/test_decoder_program.py` guards it on the stream dialect, and a step writes exactly
`KVCacheLayout.decode_write_bytes`, `tests/test_dispatch_counts.py`). One global, not one per layer and K/V:
IREE 3.13's stream-level global fusion merges mutable globals whose stores it folds away (the in-place
updates), so two per-layer caches of the same type silently became one buffer. Entries (emitters/entries.py):

* `decoder_prefill_c{capacity}_s{slots}_t{T}`, one per prompt bucket T <= capacity: a prompt's inputs_embeds
  and per_layer_inputs (the prefill stage's outputs, zero-padded to T) at positions 0..L-1 into one slot;
  returns the logits of position L-1. The KV-shared layers run on that row only (spec §7.5);
* `decoder_prefill_batch_c{capacity}_s{slots}_t{T}_p{P}`, one per prompt bucket T and number of prompts P of
  `prompt_batches`: P prompts, each into its own slot, in one call; their rows share every row-wise op (the
  linears read each weight once for all of them), each prompt's attention and cache writes are the one-prompt
  entry's, so a prompt gets the bits it gets alone (`tests/test_decoder_program.py`); a padding prompt has
  length 0 and a slot of its own (`runtime/text/decoder.padding_slots`), and puts back the rows it finds there;
* `decoder_decode_c{capacity}_s{slots}_x{context}_b{B}`, one per (context bucket, batch): one new token per
  sequence, each at its own position in its own slot (positions < context: full-attention layers read only
  the first `context` rows). A batch padded to B uses the scratch slot `slots` for its padding rows (each
  writes its own scratch rows);
* `decoder_top_k_b{B}_k{k}`, one per decode batch B (and B = 1 for the prefill entries) when the program has a
  top-k (`top_k`, default 20: OpenAI's largest `top_logprobs`): the k most likely tokens of B rows of logits
  (a prefill or decode entry's logits result, passed back on the device);
* `decoder_sample_b{B}`, one per call width when the program samples (`sampling`): a token drawn from each of
  B rows of logits with each row's temperature, top-k, top-p, seed and counter (`contracts/sampling.py`), with
  its logit and the row's largest (its log-probability's inputs), run like the top-k entry on the logits
  where they lie;
* `decoder_cache_c{capacity}_s{slots}`: one slot's rows of every owning layer (tests, diagnostics).

Prefill and decode entries return the logits and, computed from them on the device (`token_select`,
`contracts/decoder_ops.token_select`), each row's greedy token, its log-softmax and the count and first index
of its non-finite logits: results stay on the device until read (IREE's runtime hands back device arrays;
`runtime/programs/session.py` copies only the results a call names), so a caller that needs only tokens gets B ids,
log-probabilities and counts back and the logits never cross to the host.

The RoPE tables of the positions are inputs (`contracts/decoder_ops.rope_tables`, computed by the host), so
every backend rotates by the same bits.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from ..contracts.decoder_policy import decoder_contract_identity
from ..contracts.kv_cache import KVCacheLayout
from ..contracts.policy import NumericContract
from ..model.audio_weights import HF_LAYOUT, WeightLayout
from ..model.decoder_config import DecoderConfig
from ..model.decoder_weights import HOST_TABLES, decoder_weight_specs, layer_weight_names
from .decoder_kernels import attention_launches, value_partials_splits
from .decoder_norms import carrier
from .decoder_ops import DecoderOpEmitter
from .entries import (
    DecoderCacheEntry,
    DecoderDecodeEntry,
    DecoderPrefillBatchEntry,
    DecoderPrefillEntry,
    DecoderSampleEntry,
    DecoderTopKEntry,
    EntryPoint,
)
from .kernels import IREE_CODEGEN, LinkedKernels
from .lowering import DEFAULT_LOWERING, Lowering
from .render import Func, ModuleBuilder, tensor_type
from .shared_ops import template_variant
from .specialisations import DecodeLinears, DecoderLayer

PARAMETER_SCOPE = "model"
DEFAULT_PROMPT_BUCKETS: tuple[int, ...] = (64, 256, 1024, 4096)
DEFAULT_BATCHES: tuple[int, ...] = (1, 8, 32)
#: The top-k of the `decoder_top_k` entries: OpenAI's largest `top_logprobs`.
TOP_LOGPROBS = 20
#: What the prefill and decode entries return, in order (the reflection's `gemma3n.outputs`).
SELECTION_OUTPUTS: tuple[str, ...] = ("logits", "token", "logprob", "nonfinite", "first_nonfinite")
TOP_K_OUTPUTS: tuple[str, ...] = ("top_tokens", "top_logprobs")
#: What the `decoder_sample` entries return, in order: the drawn token, its logit and the row's largest logit.
SAMPLE_OUTPUTS: tuple[str, ...] = ("sampled", "sampled_logit", "top_logit")


class DecoderBucketError(ValueError):
    """A requested decoder program cannot be built (a bucket past the capacity, no entries)."""


@dataclass(frozen=True)
class DecoderModuleSpec:
    """Everything an emitted decoder program depends on (and hence its identity)."""

    cfg: DecoderConfig
    contract: NumericContract
    slots: int
    capacity: int
    prompts: tuple[int, ...]
    batches: tuple[int, ...]
    contexts: tuple[int, ...] = ()  # decode context buckets; default: the capacity alone
    layout: WeightLayout = HF_LAYOUT
    #: committed Hopper kernels (`emitters/kernels.py`): the row sums everywhere, the GEMM for prompt-sized
    #: linears (`decoder_ops.GEMM_MIN_ROWS`); none by default (IREE's code generation)
    kernels: LinkedKernels = IREE_CODEGEN
    #: the forms the target's code generation wants (emitters/lowering.py lowering_for)
    lowering: Lowering = DEFAULT_LOWERING
    #: k of the `decoder_top_k` entries (0: none)
    top_k: int = TOP_LOGPROBS
    #: numbers of prompts (>= 2) a `decoder_prefill_batch` entry takes at once, per prompt bucket (none: one
    #: prompt per prefill call)
    prompt_batches: tuple[int, ...] = ()
    #: `decoder_sample` entries (temperature, top-k, top-p and a seed on the device), one per call width
    sampling: bool = False

    def __post_init__(self) -> None:
        if self.slots < 1 or self.capacity < 1:
            raise DecoderBucketError(f"slots ({self.slots}) and capacity ({self.capacity}) must be positive")
        if self.capacity > self.cfg.max_position_embeddings:
            raise DecoderBucketError(
                f"capacity {self.capacity} exceeds max_position_embeddings {self.cfg.max_position_embeddings}"
            )
        for name, values, limit in (
            ("prompt bucket", self.prompts, self.capacity),
            ("decode context", self.context_buckets, self.capacity),
            ("batch", self.batches, self.slots),
            ("prompt batch", self.prompt_batches, self.slots),
        ):
            for v in values:
                if not 1 <= v <= limit:
                    raise DecoderBucketError(f"{name} {v} must be in [1, {limit}]")
        if self.prompt_batches and (1 in self.prompt_batches or not self.prompts):
            raise DecoderBucketError(
                f"prompt batches {sorted(set(self.prompt_batches))} must be >= 2 (one prompt is a prefill entry) "
                "and need a prompt bucket"
            )
        if not self.prompts and not self.batches:
            raise DecoderBucketError("a decoder program needs at least one prefill or decode entry")
        if not 0 <= self.top_k <= self.cfg.vocab_size:
            raise DecoderBucketError(f"top-k {self.top_k} must be in [0, {self.cfg.vocab_size}]")
        rows = self.slot_rows
        if self.batches and 2 * max(self.batches) > rows:
            raise DecoderBucketError(
                f"batch {max(self.batches)} needs {2 * max(self.batches)} scratch rows for its padding rows' "
                f"distinct writes; a slot has {rows}"
            )
        if (self.slots + 1) * rows >= 2**31:
            raise DecoderBucketError(f"{self.slots + 1} slots of {rows} cache rows overflow the int32 row index")

    @property
    def context_buckets(self) -> tuple[int, ...]:
        return tuple(sorted(set(self.contexts))) or (self.capacity,)

    @property
    def slot_rows(self) -> int:
        """Rows of one slot in the cache global: every owning layer's keys, then its values."""
        layout = self.kv_layout
        return sum(2 * layout.rows(layer) for layer in range(layout.layers))

    @property
    def kv_layout(self) -> KVCacheLayout:
        """The cache as `contracts/kv_cache.py` describes it (the program adds one scratch slot)."""
        return KVCacheLayout.for_config(self.cfg, self.contract, self.slots, self.capacity)

    @property
    def prefill_entries(self) -> list[DecoderPrefillEntry]:
        return [DecoderPrefillEntry(self.capacity, self.slots, t) for t in sorted(set(self.prompts))]

    @property
    def prefill_batch_entries(self) -> list[DecoderPrefillBatchEntry]:
        return [
            DecoderPrefillBatchEntry(self.capacity, self.slots, t, p)
            for t in sorted(set(self.prompts))
            for p in sorted(set(self.prompt_batches))
        ]

    @property
    def decode_entries(self) -> list[DecoderDecodeEntry]:
        return [
            DecoderDecodeEntry(self.capacity, self.slots, x, b)
            for x in self.context_buckets
            for b in sorted(set(self.batches))
        ]

    @property
    def call_widths(self) -> list[int]:
        """The rows of logits a call can return: each decode batch and prompt batch (1 for the prefill entries)."""
        return sorted(set(self.batches) | ({1} if self.prompts else set()) | set(self.prompt_batches))

    @property
    def top_k_entries(self) -> list[DecoderTopKEntry]:
        """One per call width, when the program has a top-k."""
        return [DecoderTopKEntry(b, self.top_k) for b in self.call_widths] if self.top_k else []

    @property
    def sample_entries(self) -> list[DecoderSampleEntry]:
        """One per call width, when the program samples."""
        return [DecoderSampleEntry(b) for b in self.call_widths] if self.sampling else []

    @property
    def entry_points(self) -> list[EntryPoint]:
        return [
            *self.prefill_entries,
            *self.prefill_batch_entries,
            *self.decode_entries,
            *self.top_k_entries,
            *self.sample_entries,
            DecoderCacheEntry(self.capacity, self.slots),
        ]

    def identity(self) -> str:
        return "|".join(
            [
                "gemma3n-decoder-module-v1",
                self.cfg.identity(),
                decoder_contract_identity(self.contract),
                self.layout.name,
                f"slots={self.slots}",
                f"capacity={self.capacity}",
                "prompts=" + ",".join(map(str, sorted(set(self.prompts)))),
                "contexts=" + ",".join(map(str, self.context_buckets)),
                "batches=" + ",".join(map(str, sorted(set(self.batches)))),
                f"kernels={self.kernels.identity}",
                "lowering=" + self.lowering.identity,
                f"top_k={self.top_k}",
            ]
            + (
                ["prompt_batches=" + ",".join(map(str, sorted(set(self.prompt_batches))))]
                if self.prompt_batches
                else []
            )
            + (["sampling"] if self.sampling else [])
        )

    def digest(self) -> str:
        return hashlib.sha256(self.identity().encode()).hexdigest()


@dataclass(frozen=True)
class _Weight:
    symbol: str
    key: str
    shape: tuple[int, ...]
    dtype: str = "bf16"


#: The cache global's symbol.
CACHE_GLOBAL = "kv_cache"


@dataclass(frozen=True)
class _Cache:
    """Where one owning layer's keys and values live in the cache global's rows."""

    keys: int  # row offset of the keys
    values: int  # row offset of the values
    rows: list[int]  # [rows, kv_heads, head_dim] of one slot
    ring: bool  # a sliding layer's ring: position p in row p mod window


@dataclass
class _Layer:
    index: int
    func: Func
    owns: bool
    sliding: bool
    producer: int
    weights: list[str]
    first_shared: bool = False


@dataclass
class _Entry:
    entry: EntryPoint
    layers: list[_Layer] = field(default_factory=list)
    init: Func | None = None
    head: Func | None = None
    embedding: Func | None = None
    select: Func | None = None  # token_select on the entry's logits (top-k entries: the top-k selection)
    outputs: str = ",".join(SELECTION_OUTPUTS)

    @property
    def name(self) -> str:
        return self.entry.symbol

    @property
    def tokens(self) -> int:
        return self.entry.tokens  # type: ignore[attr-defined]

    @property
    def batch(self) -> int:
        return self.entry.batch  # type: ignore[attr-defined]

    @property
    def prompts(self) -> int:
        return self.entry.prompts  # type: ignore[attr-defined]

    @property
    def shared(self) -> bool:
        return any(not layer.owns for layer in self.layers)


def weight_symbol(logical: str) -> str:
    return "w_" + logical.replace(".", "_")


def _short(logical: str) -> str:
    """A layer weight's argument name inside the layer function (`layers.3.self_attn.q_proj` -> `%w_self_attn_q_proj`)."""
    return "%w_" + logical.split(".", 2)[2].replace(".", "_")


def _normalized_input_reads(owns: bool, grouped: bool) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """A layer's linears of the normalized input %xn (their weights, by reader: LAuReL, the queries, the keys and
    values where the layer owns them) and what each reader is called with before its other arguments: %xn and its
    weights, or (`grouped`: one launch gave their partial sums, `%inputs#i` in the linears' order) its members'
    partial sums, LAuReL taking %xn too for its residual."""
    linears = {
        "laurel": ["%w_laurel_linear_left"],
        "query": ["%w_self_attn_q_proj"],
        "kv_proj": ["%w_self_attn_k_proj", "%w_self_attn_v_proj"] if owns else [],
    }
    if not grouped:
        return linears, {name: ["%xn", *weights] for name, weights in linears.items()}
    members = iter(f"%inputs#{i}" for i in range(sum(len(w) for w in linears.values())))
    reads = {name: [next(members) for _ in weights] for name, weights in linears.items()}
    reads["laurel"].insert(0, "%xn")
    return linears, reads


class _ProgramEmitter:
    def __init__(self, spec: DecoderModuleSpec) -> None:
        self.spec, self.cfg = spec, spec.cfg
        self.module = ModuleBuilder("gemma3n_decoder")
        self.ops = DecoderOpEmitter(self.module, spec.contract, spec.kernels, spec.lowering, cfg=spec.cfg)
        layout = spec.kv_layout
        self.layout = layout
        cfg = self.cfg
        self.cache_dtype = layout.dtype
        self.caches, offset = [], 0
        for layer in range(layout.layers):
            rows = layout.rows(layer)
            shape = [rows, cfg.num_key_value_heads, cfg.head_dim]
            self.caches.append(_Cache(offset, offset + rows, shape, layout.sliding[layer]))
            offset += 2 * rows
        self.slot_rows = offset
        self.cache_type = tensor_type([spec.slots + 1, offset, cfg.num_key_value_heads, cfg.head_dim], layout.dtype)
        #: the same buffer as one row per (slot, row): what a decode step's scatter and gathers index
        self.flat_type = tensor_type([(spec.slots + 1) * offset, cfg.num_key_value_heads, cfg.head_dim], layout.dtype)

    # ------------------------------------------------------------------ one layer
    def layer(self, phase: str, tokens: int, layer: int, columns: int, prompts: int = 1) -> Func:
        """Layer `layer`'s function for `tokens` rows: prefill reads `prompts` prompts of `columns` = `tokens`
        positions each, their rows one after another (a KV-shared layer runs on each prompt's last row); decode
        reads `columns` cache rows of full layers."""
        cfg, ops = self.cfg, self.ops
        if phase == "prefill" and columns != tokens:
            raise ValueError(f"a prefill layer reads its own {tokens} prompt rows, not {columns}")
        if prompts < 1 or (prompts > 1 and phase != "prefill"):
            raise ValueError(f"{prompts} prompts: only a prefill layer runs several prompts at once")
        owns, sliding = cfg.owns_kv(layer), cfg.is_sliding(layer)
        producer = cfg.kv_producers[layer]
        n, d, p, hd = cfg.altup_num_inputs, cfg.hidden_size, cfg.hidden_size_per_layer_input, cfg.head_dim
        k = cfg.num_key_value_heads
        width, sparsity = cfg.intermediate_sizes[layer], cfg.activation_sparsity[layer]
        ring = self.layout.rows(producer)
        window = cfg.sliding_window if sliding else None
        per_prompt = 1 if (phase == "prefill" and not owns) else tokens  # one prompt's query rows
        queries = per_prompt * prompts
        attn_columns = (ring if sliding else columns) if phase == "decode" else columns
        norm = ops.norm(queries, d, feeds_linear=True)  # its only readers are linears (and LAuReL's residual)
        x_dtype = carrier(norm)
        cache_rows = self.cache_dtype if phase == "decode" else None  # a decode step's K/V only feed the cache
        inputs = ops.attention_inputs(queries, x_dtype, cache_rows if owns else None) if phase == "decode" else None
        splits = DecodeLinears.from_symbol(inputs.symbol).splits if inputs else None
        # a decode step's value products handed to the output projection unsummed, where its kernel reads them
        value_splits = (
            value_partials_splits(ops.kernels, self.spec.contract, cfg, queries, attn_columns, sliding)
            if phase == "decode"
            else None
        )
        calls = {
            "predict": ops.altup_predict(queries),
            "norm": norm,
            "laurel": ops.laurel(queries, x_dtype, splits),
            "query": ops.query_projection(queries, x_dtype, splits),
            "residual": ops.attention_residual(queries, value_splits),
            "mlp": ops.mlp(queries, width, sparsity),
            "correct": ops.altup_correct(queries),
            "ple_gate": ops.ple_gate(queries),
        }
        q_dtype = "bf16" if calls["query"].result_types[0].endswith("xbf16>") else "f32"
        calls["core"] = ops.attention_core(
            phase, per_prompt, attn_columns, sliding, ring, self.flat_type, q_dtype, value_splits is not None
        )
        if owns:
            calls["kv_proj"] = ops.key_value_projection(queries, x_dtype, cache_rows, splits)
        linears, reads = _normalized_input_reads(owns, inputs is not None)
        x = tensor_type([n, queries, d], "f32")
        args = [
            ("%streams", x),
            ("%ple", tensor_type([queries, p], "f32")),
            ("%cos", tensor_type([queries, hd], "f32")),
            ("%sin", tensor_type([queries, hd], "f32")),
            # each prompt's positions 0..T-1 (an owning prefill layer), else each query row's position
            ("%qpos", tensor_type([tokens if phase == "prefill" and owns else queries], "i32")),
        ]
        results = [("%out", x)]
        kv = tensor_type([prompts * tokens, k, hd], "f32")
        offsets = [("%cache", self.cache_type), ("%offset_k", "tensor<i32>"), ("%offset_v", "tensor<i32>")]
        scalar = "tensor<i32>" if prompts == 1 else tensor_type([prompts], "i32")
        if phase == "prefill" and owns:
            args += [("%length", scalar), ("%slot", scalar)] + offsets
            results += [("%cache_out", self.cache_type), ("%kv#0", kv), ("%kv#1", kv)]
        elif phase == "prefill":
            args += [("%keys", kv), ("%values", kv)]
        else:
            at = tensor_type([tokens, 1], "i32")
            args += [("%cache", self.cache_type), ("%k_at", at), ("%v_at", at)]
            if owns:
                args += [("%k_write", at), ("%v_write", at)]
                results += [("%cache_out", self.cache_type)]
        specs = decoder_weight_specs(cfg, self.spec.layout)
        args += [(_short(name), tensor_type(specs[name].shape, "bf16")) for name in layer_weight_names(cfg, layer)]
        kind = "own" if owns else "shared"
        spec = DecoderLayer(
            phase,
            queries,
            d,
            width,
            kind,
            attn_columns,
            window,
            sparsity if sparsity > 0 else None,
            prompts if prompts > 1 else None,
        )
        func = Func(spec.symbol, tuple(t for _, t in args), tuple(t for _, t in results))
        write_part = (
            "decoder_layer.write_prefill.ring.mlir.j2" if sliding else "decoder_layer.write_prefill.rows.mlir.j2"
        )
        return self.module.add(
            "decoder_layer.mlir.j2",
            func,
            calls=[*([inputs] if inputs else []), *calls.values()],
            c=self.spec.contract,
            args=args,
            results=results,
            streams=n,
            tokens=queries,
            d=d,
            active=cfg.altup_active_idx,
            attend_part=f"decoder_layer.attend.{phase}_{kind}{'_batch' if prompts > 1 else ''}.mlir.j2",
            read_part=template_variant(
                "decoder_layer.read_decode",
                phase == "decode"
                and attention_launches(ops.kernels, cfg, phase, queries, attn_columns, sliding) is not None,
            ),
            write_part=write_part,
            prompts=prompts,
            rows=tokens,
            heads=cfg.num_attention_heads,
            kv_heads=k,
            head_dim=hd,
            window=window,
            ring=ring,
            columns=attn_columns,
            cache_dtype=self.cache_dtype,
            cache_type=self.cache_type,
            flat_type=self.flat_type,
            slot_rows=self.slot_rows,
            inputs=inputs,
            inputs_args=["%xn", *(w for weights in linears.values() for w in weights)],
            laurel_args=[*reads["laurel"], "%w_laurel_linear_right", "%w_laurel_post_laurel_norm"],
            query_args=[*reads["query"], "%w_self_attn_q_norm", "%cos", "%sin"],
            kv_args=[*reads["kv_proj"], "%w_self_attn_k_norm", "%cos", "%sin"],
            **calls,
        )

    def layers(self, phase: str, tokens: int, columns: int, prompts: int = 1) -> list[_Layer]:
        cfg = self.cfg
        out = []
        for layer in range(cfg.num_hidden_layers):
            producer = cfg.kv_producers[layer]
            out.append(
                _Layer(
                    layer,
                    self.layer(phase, tokens, layer, columns, prompts),
                    cfg.owns_kv(layer),
                    cfg.is_sliding(layer),
                    producer,
                    ["%" + weight_symbol(name) for name in layer_weight_names(cfg, layer)],
                    first_shared=layer == cfg.first_kv_shared_layer,
                )
            )
        return out

    # ------------------------------------------------------------------ the module
    def emit(self) -> str:
        spec, cfg, ops = self.spec, self.cfg, self.ops
        weights = [
            _Weight(weight_symbol(logical), s.key, s.shape)
            for logical, s in decoder_weight_specs(cfg, spec.layout).items()
            if logical not in HOST_TABLES
        ]
        n = cfg.altup_num_inputs
        prefills, decodes, calls = [], [], []
        for entry in spec.prefill_entries:
            e = _Entry(
                entry,
                self.layers("prefill", entry.tokens, entry.tokens),
                ops.altup_init(entry.tokens),
                ops.decoder_head(1),
                select=ops.token_select(1),
            )
            prefills.append(e)
        prefill_batches = [
            _Entry(
                entry,
                self.layers("prefill", entry.tokens, entry.tokens, entry.prompts),
                ops.altup_init(entry.tokens * entry.prompts),
                ops.decoder_head(entry.prompts),
                select=ops.token_select(entry.prompts),
            )
            for entry in spec.prefill_batch_entries
        ]
        for entry in spec.decode_entries:
            e = _Entry(
                entry,
                self.layers("decode", entry.batch, entry.context),
                ops.altup_init(entry.batch),
                ops.decoder_head(entry.batch),
                ops.decoder_embedding(entry.batch),
                ops.token_select(entry.batch),
            )
            decodes.append(e)
        top_ks = [
            _Entry(entry, select=ops.token_select(entry.batch, entry.k), outputs=",".join(TOP_K_OUTPUTS))
            for entry in spec.top_k_entries
        ]
        samples = [
            _Entry(entry, select=ops.token_sample(entry.batch), outputs=",".join(SAMPLE_OUTPUTS))
            for entry in spec.sample_entries
        ]
        for e in prefills + prefill_batches + decodes + top_ks + samples:
            calls += [layer.func for layer in e.layers]
            calls += [f for f in (e.init, e.head, e.embedding, e.select) if f is not None]
        cache_entry = _Entry(
            DecoderCacheEntry(spec.capacity, spec.slots),
            outputs=",".join(f"{kind}_{i}" for i in range(len(self.caches)) for kind in ("keys", "values")),
        )
        self.module.add_raw(
            "entry",
            "decoder_entry.mlir.j2",
            calls=calls,
            c=spec.contract,
            unfused_mul_add=spec.lowering.unfused_mul_add,
            weights=weights,
            caches=self.caches,
            cache_global=CACHE_GLOBAL,
            cache_type=self.cache_type,
            slot_rows=self.slot_rows,
            capacity=spec.capacity,
            window=cfg.sliding_window,
            cache_dtype=self.cache_dtype,
            scope=PARAMETER_SCOPE,
            prefills=prefills,
            prefill_batches=prefill_batches,
            decodes=decodes,
            top_ks=top_ks,
            samples=samples,
            cache_reads=[cache_entry],
            slots=spec.slots,
            d=cfg.hidden_size,
            layers=cfg.num_hidden_layers,
            per_layer=cfg.hidden_size_per_layer_input,
            vocab=cfg.vocab_size,
            head_dim=cfg.head_dim,
            streams=n,
            contract_identity=decoder_contract_identity(spec.contract),
            altup_projections=[f"%w_altup_projections_{i}" for i in range(n - 1)],
            head_weights=[f"%w_altup_unembed_projections_{i}" for i in range(n - 1)] + ["%w_norm", "%w_embed_tokens"],
            embedding_weights=["%w_per_layer_model_projection", "%w_per_layer_projection_norm"],
        )
        return self.module.build()


def emit_decoder_module(spec: DecoderModuleSpec) -> str:
    """Render and verify the decoder program; returns MLIR text ready for `iree-compile`."""
    return _ProgramEmitter(spec).emit()
