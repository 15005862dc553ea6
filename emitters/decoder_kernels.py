"""Which committed kernels serve a decoder layer's op families on a target (kernels/), as launches.

Each function answers for one family and shape: the launches where every kernel it needs is linked and covers the
shape, else None, and the family's template then keeps IREE's code (and the other kernels). The kernels' rounding
points are push constants read off the contract here, so a template's variant rounds exactly where its IREE form
does. The decode-step kernels fold a layer's small operations into fewer launches; a fold stays only where its
kernel costs no more than the dispatches it replaces (BENCHMARKS.md: two that did not were removed).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..contracts import decoder_ops as D
from ..contracts.decoder_policy import DENOMINATOR_READS
from ..contracts.emulation import BF16_MIN, contract_scalar, lane_threads
from ..contracts.policy import NumericContract
from ..kernels import (
    ALTUP_SM90,
    DECODE_ATTENTION_SM90,
    GELU_PRODUCT_POINTS,
    Launch,
    gelu_product_call,
    gemv_call,
    partial_norm_kv_call,
    partial_norm_residual_call,
    partial_norm_streams_call,
    summed_gemv_call,
)
from ..model.decoder_config import DecoderConfig
from .kernels import LinkedKernels


@dataclass(frozen=True)
class AttentionLaunches:
    """The decode-attention kernels serving one attention core: its two products, and at a decode step the
    softmax between them (a prompt's single row keeps IREE's softmax: its mask is the prompt's)."""

    scores: Launch
    values: Launch
    softmax: Launch | None


def attention_launches(
    kernels: LinkedKernels, cfg: DecoderConfig, phase: str, queries: int, columns: int, sliding: bool
) -> AttentionLaunches | None:
    """The decode-attention kernels where they serve an attention core (a decode step, and a prompt's single query
    row: a KV-shared layer's) and are all linked; None where IREE's code computes it."""
    h, k = cfg.num_attention_heads, cfg.num_key_value_heads
    decode = phase == "decode"
    calls = DECODE_ATTENTION_SM90.calls(queries, k, h // k, columns, cfg.head_dim) if decode or queries == 1 else None
    if calls is None:
        return None
    scores, values = (kernels.launch(call) for call in calls)
    window = cfg.sliding_window if sliding else None
    softmax = (
        kernels.launch(
            DECODE_ATTENTION_SM90.softmax_call(
                queries, h, columns, window, DENOMINATOR_READS, *D.block_schedule(columns, DENOMINATOR_READS), BF16_MIN
            )
        )
        if decode
        else None
    )
    if scores is None or values is None or (decode and softmax is None):
        return None
    return AttentionLaunches(scores, values, softmax)


def prompt_softmax_launch(
    kernels: LinkedKernels, cfg: DecoderConfig, queries: int, columns: int, sliding: bool, summed: int
) -> Launch | None:
    """The prompt-softmax kernel where it serves a prompt's softmax of several query rows over its `columns` (the
    denominator over `summed` columns: a sliding layer's ring), or None (IREE's code: the mask, the maximum, the
    exponentials, the denominator's lane sums and the quotients as dispatches of their own, about half of a
    4,096-token prefill's kernel time on an H100, BENCHMARKS.md)."""
    k = cfg.num_key_value_heads
    window = cfg.sliding_window if sliding else None
    threads, passes = D.block_schedule(summed, DENOMINATOR_READS)
    return kernels.launch(
        DECODE_ATTENTION_SM90.prompt_softmax_call(
            k,
            queries,
            cfg.num_attention_heads // k,
            columns,
            window,
            summed,
            DENOMINATOR_READS,
            threads,
            passes,
            BF16_MIN,
        )
    )


def value_partials_splits(
    kernels: LinkedKernels, contract: NumericContract, cfg: DecoderConfig, queries: int, columns: int, sliding: bool
) -> int | None:
    """At a decode step: how many column ranges the values kernel sums in, where the attention hands its partial
    sums over unsummed (the output projection's summed entry and the residual kernel linked, at most the entry's
    `MAX_SPLITS` ranges); None: the attention adds and rounds them itself."""
    launches = attention_launches(kernels, cfg, "decode", queries, columns, sliding)
    width = cfg.num_attention_heads * cfg.head_dim
    if launches is None or LayerKernels(kernels, contract, cfg).residual("attention", queries, width) is None:
        return None
    splits = launches.values.call.constant("S")
    reads = summed_gemv_call(queries, cfg.hidden_size, width, splits, contract.rounds_at("attention.output"))
    return splits if kernels.launch(reads) is not None else None


#: The rounding point of each single residual after a partials norm (the attention's are its own three).
RESIDUAL_POINTS = {"mlp": "residual.mlp", "laurel": "laurel.residual"}


@dataclass(frozen=True)
class LayerKernels:
    """The kernel choices of one decoder program's layers: its linked kernels, contract and configuration."""

    kernels: LinkedKernels
    contract: NumericContract
    cfg: DecoderConfig

    def decode_linear(self, rows: int, out: int, k: int) -> Launch | None:
        """A decode step's linear (up to 64 rows) in the decode-linear kernel, where linked and it covers the
        shape (`kernels/gemv.py`)."""
        return self.kernels.launch(gemv_call(rows, out, k))

    def altup(self, step: str, tokens: int) -> Launch | None:
        """AltUp's `step` ("predict" or "correct") with its router in one dispatch of the AltUp kernel."""
        cfg, c = self.cfg, self.contract
        n, d = cfg.altup_num_inputs, cfg.hidden_size
        rounds = {"round_bf16": c.rounds_at(None), "round_scale": c.rounds_at("router.scale")}
        if step == "correct":
            rounds["round_innovation"] = c.rounds_at("correct.innovation")
        rounds["round_out"] = c.rounds_at(f"{step}.out")
        threads = lane_threads(d, 8)  # the router norm's schedule (the norm kernel's)
        scale = float(contract_scalar(c, 1.0 / d))
        call = ALTUP_SM90.call(
            step, threads, tokens, n, d, cfg.altup_active_idx, cfg.rms_norm_eps, scale, cfg.altup_coef_clip, rounds
        )
        return self.kernels.launch(call)

    def residual(self, residual: str, tokens: int, k: int) -> tuple[Launch, Launch] | None:
        """A decode linear's kernel (k inputs, the hidden width out) and the partials-norm kernel's `residual`
        after it (`kernels.reductions.RESIDUALS`: the attention's, the MLP's or LAuReL's)."""
        d, c = self.cfg.hidden_size, self.contract
        gemv = self.decode_linear(tokens, d, k)
        if gemv is None:
            return None
        points = ("residual.attention", "residual.laurel", "residual.scale") if residual == "attention" else ()
        rounds = {
            "round_bf16": c.rounds_at(None),
            "round_residual": c.rounds_at(points[0] if points else RESIDUAL_POINTS[residual]),
            "round_add": bool(points) and c.rounds_at(points[1]),
            "round_scale": bool(points) and c.rounds_at(points[2]),
        }
        scale = float(contract_scalar(c, 2.0**-0.5)) if points else 1.0
        splits = gemv.call.constant("S")
        launch = self.kernels.launch(
            partial_norm_residual_call(
                residual, lane_threads(d, 8), tokens, d, splits, self.cfg.rms_norm_eps, scale, rounds
            )
        )
        return None if launch is None else (gemv, launch)

    def gelu_product(self, tokens: int, width: int) -> Launch | None:
        """The MLP's gate, up and round(gelu_tanh(gate) * up) in one launch (BF16 for the down-projection), where a
        file covers it: neither linear split, so each sum is the unsplit launch's."""
        c = self.contract
        rounds = {name: c.rounds_at(point) for name, point in GELU_PRODUCT_POINTS}
        k_cubic, k_sqrt = (float(contract_scalar(c, v)) for v in (D.GELU_CUBIC, D.GELU_SQRT))
        return self.kernels.launch(gelu_product_call(tokens, width, self.cfg.hidden_size, k_cubic, k_sqrt, rounds))

    def ple_tail(self, tokens: int) -> tuple[Launch, Launch] | None:
        """The per-layer projection's decode-linear kernel and the partials-norm kernel's streams variant after it."""
        cfg, c = self.cfg, self.contract
        n, d, p = cfg.altup_num_inputs, cfg.hidden_size, cfg.hidden_size_per_layer_input
        gemv = self.decode_linear(tokens, d, p)
        if gemv is None:
            return None
        rounds = {"round_bf16": c.rounds_at(None), "round_residual": c.rounds_at("ple_gate.residual")}
        splits = gemv.call.constant("S")
        launch = self.kernels.launch(
            partial_norm_streams_call(lane_threads(d, 8), n, tokens, d, splits, cfg.rms_norm_eps, rounds)
        )
        return None if launch is None else (gemv, launch)

    def cache_rows(self, tokens: int, x_dtype: str) -> tuple[Launch, Launch, Launch] | None:
        """The keys' and values' decode-linear kernel and the partials-norm kernel's cache variants after it (keys
        with RoPE, values), BF16 rows as the cache stores them."""
        k, hd, d = self.cfg.num_key_value_heads, self.cfg.head_dim, self.cfg.hidden_size
        gemv = self.decode_linear(tokens, k * hd, d) if x_dtype == "bf16" else None
        if gemv is None:
            return None
        keys, values = (self.head_rows(rope, tokens, k, gemv.call.constant("S")) for rope in (True, False))
        return None if keys is None or values is None else (gemv, keys, values)

    def head_rows(self, rope: bool, tokens: int, heads: int, splits: int) -> Launch | None:
        """The partials-norm kernel's BF16 head-row variant for a decode linear's `splits` partial sums of `tokens`
        x `heads` heads: summed, rounded, normalized per head and (with `rope`) rotated, stored as BF16 (the cache's
        keys and values; the queries the decode-attention kernels read)."""
        cfg, c = self.cfg, self.contract
        hd = cfg.head_dim
        rounds = {
            "round_bf16": c.rounds_at(None),
            "round_x_cos": c.rounds_at("rope.x_cos"),
            "round_rot_sin": c.rounds_at("rope.rot_sin"),
            "round_sum": c.rounds_at("rope.sum"),
        }
        call = partial_norm_kv_call(
            rope, lane_threads(hd, 8), tokens * heads, heads, hd, splits, cfg.rms_norm_eps, rounds
        )
        return self.kernels.launch(call)
