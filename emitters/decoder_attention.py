"""The decoder's attention families (spec gemma3n-text §4): RoPE, the queries, keys and values (one launch for a
decode step's linears of the normalized input where the kernels serve it), the attention core, and the output
projection with its residual.

Why a module of its own: the attention is the decoder's largest family and the one whose decode-step form hands
partial sums between its kernels (`attention_inputs`, `value_partials_splits`); `DecoderOpEmitter`
(emitters/decoder_ops.py) builds the rest of the layer on it.
"""

from __future__ import annotations

from ..contracts.decoder_policy import DENOMINATOR_READS
from ..contracts.emulation import BF16_MIN
from ..kernels import gemv_group_call, summed_gemv_call
from .decoder_kernels import attention_launches, prompt_softmax_launch
from .decoder_norms import BF16, DecoderNormOps, bf16_tensor
from .render import Func
from .render import tensor_type as tensor
from .shared_ops import f32, template_variant
from .specialisations import (
    AttentionResidual,
    DecoderAttention,
    KeyValueProjection,
    QueryProjection,
    Rope,
)

#: The K/V projections' partial sums to the cache's rows (both kernel forms of `key_value_projection`).
CACHE_ROWS_PART = "key_value_projection.rows.kernel.mlir.j2"


class DecoderAttentionOps(DecoderNormOps):
    """Renders the decoder's attention families; `cfg` supplies the heads, widths and the sliding window."""

    def rope(self, tokens: int, heads: int) -> Func:
        hd = self._cfg.head_dim
        x = f32([tokens, heads, hd])
        func = Func(Rope(tokens, heads, hd).symbol, (x, f32([tokens, hd]), f32([tokens, hd])), (x,))
        return self._add("rope.mlir.j2", func, tokens=tokens, heads=heads, head_dim=hd)

    def query_projection(self, tokens: int, x_dtype: str = "f32", partials: int | None = None) -> Func:
        """Queries; with `partials`, the q projection's partial sums of that many K ranges arrive (`attention_inputs`)
        and go to the partials-norm kernel's head-row variant with RoPE (the keys' kernel: the same norm and RoPE),
        whose BF16 rows are what the decode-attention kernels read of the queries."""
        cfg = self._cfg
        h, hd, d = cfg.num_attention_heads, cfg.head_dim, cfg.hidden_size
        if partials is not None:
            func = Func(
                QueryProjection(tokens, d, h, hd, x_dtype, partials).symbol,
                (f32([partials, tokens, h * hd]), bf16_tensor([hd]), f32([tokens, hd]), f32([tokens, hd])),
                (bf16_tensor([tokens, h, hd]),),
            )
            return self._add(
                "query_projection.partials.kernel.mlir.j2",
                func,
                tokens=tokens,
                heads=h,
                head_dim=hd,
                partials=partials,
                norm_rope=self._layer_kernels.head_rows(True, tokens, h, partials),
            )
        projected, rope = self.projected_norm(tokens, d, h * hd, h, x_dtype), self.rope(tokens, h)
        func = Func(
            QueryProjection(tokens, d, h, hd, x_dtype).symbol,
            (
                tensor([tokens, d], x_dtype),
                bf16_tensor([h * hd, d]),
                bf16_tensor([hd]),
                f32([tokens, hd]),
                f32([tokens, hd]),
            ),
            (f32([tokens, h, hd]),),
        )
        return self._add(
            "query_projection.mlir.j2",
            func,
            calls=[projected, rope],
            tokens=tokens,
            d=d,
            heads=h,
            head_dim=hd,
            x_dtype=x_dtype,
            projected=projected,
            rope=rope,
        )

    def key_value_projection(
        self, tokens: int, x_dtype: str = "f32", cache_dtype: str | None = None, partials: int | None = None
    ) -> Func:
        """Keys (k_norm, RoPE) and values (v_norm) [tokens, kv_heads, head_dim], F32; with `cache_dtype` (a decode
        step's, whose only reader is the cache write), in that dtype where the cache-row kernels serve it; with
        `partials` (there), the projections' partial sums of that many K ranges arrive (`attention_inputs`)."""
        cfg = self._cfg
        k, hd, d = cfg.num_key_value_heads, cfg.head_dim, cfg.hidden_size
        kernels = self._layer_kernels.cache_rows(tokens, x_dtype) if cache_dtype == BF16 else None
        if partials is not None:
            if kernels is None:
                raise ValueError("the K/V projections take partial sums only where the cache-row kernels serve them")
            _, keys, values = kernels
            kv = tensor([tokens, k, hd], BF16)
            func = Func(
                KeyValueProjection(tokens, d, k, hd, x_dtype, cache_dtype=BF16, partials=partials).symbol,
                (*(f32([partials, tokens, k * hd]),) * 2, bf16_tensor([hd]), f32([tokens, hd]), f32([tokens, hd])),
                (kv, kv),
            )
            return self._add(
                "key_value_projection.partials.kernel.mlir.j2",
                func,
                cache_dtype=BF16,
                splits=partials,
                rows_part=CACHE_ROWS_PART,
                keys_kernel=keys,
                values_kernel=values,
                tokens=tokens,
                kv_heads=k,
                head_dim=hd,
            )
        rows = BF16 if kernels is not None else "f32"
        kv = tensor([tokens, k, hd], rows)
        weights = (bf16_tensor([k * hd, d]), bf16_tensor([k * hd, d]), bf16_tensor([hd]))
        func = Func(
            KeyValueProjection(tokens, d, k, hd, x_dtype, cache_dtype=rows).symbol,
            (tensor([tokens, d], x_dtype), *weights, f32([tokens, hd]), f32([tokens, hd])),
            (kv, kv),
        )
        shape = dict(tokens=tokens, d=d, kv_heads=k, head_dim=hd, x_dtype=x_dtype)
        if kernels is not None:
            gemv, keys, values = kernels
            splits = gemv.call.constant("S")
            return self._add(
                "key_value_projection.kernel.mlir.j2",
                func,
                cache_dtype=rows,
                splits=splits,
                gemv=gemv,
                rows_part=CACHE_ROWS_PART,
                keys_kernel=keys,
                values_kernel=values,
                **shape,
            )
        projected, rope = self.projected_norm(tokens, d, k * hd, k, x_dtype), self.rope(tokens, k)
        return self._add(
            "key_value_projection.mlir.j2", func, calls=[projected, rope], projected=projected, rope=rope, **shape
        )

    def attention_inputs(self, tokens: int, x_dtype: str, cache_dtype: str | None) -> Func | None:
        """A decode step's linears of the normalized input in one launch (`decode_linears`): LAuReL's left linear and
        q, and k and v in a layer that owns its K/V (`cache_dtype`: its cache's), where a group file covers them and
        each reader takes partial sums (the partials-norm kernel's head rows for q, k and v; LAuReL's right linear in
        the summed entry); None: each its own launch."""
        cfg = self._cfg
        h, k, hd, d = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim, cfg.hidden_size
        owns = cache_dtype is not None
        outs = (cfg.laurel_rank, h * hd) + ((k * hd,) * 2 if owns else ())
        call = gemv_group_call(tokens, outs, d)
        if call is None or self._layer_kernels.head_rows(True, tokens, h, call.constant("S")) is None:
            return None
        if owns and (cache_dtype != BF16 or self._layer_kernels.cache_rows(tokens, x_dtype) is None):
            return None
        r = cfg.laurel_rank
        laurel_reads = summed_gemv_call(tokens, d, r, call.constant("S"), self.contract.rounds_at(None))
        if self._layer_kernels.residual("laurel", tokens, r) is None or self.kernels.launch(laurel_reads) is None:
            return None
        return self.decode_linears(tokens, d, outs, x_dtype)

    # ------------------------------------------------------------------ attention
    def attention_core(
        self,
        phase: str,
        queries: int,
        columns: int,
        sliding: bool,
        ring: int,
        rows: str = "",
        q_dtype: str = "f32",
        partials_out: bool = False,
    ) -> Func:
        """prefill: `queries` over a prompt's `columns` keys (a sliding layer's denominator over its ring of
        `ring` columns); decode: each query over its own `columns` cache rows, gathered as F32 [queries, columns,
        kv_heads, head_dim], or, where the kernels serve it, read where the cache holds them: `rows` (the cache
        seen as one row per (slot, row)) from each sequence's first row ([queries, 1] i32), and the queries may
        arrive as the kernels' operand (`q_dtype` BF16: the query projection's head-row kernel hands them so);
        `partials_out`: the values kernel's partial sums are the result, unsummed ([splits, queries, heads x
        head_dim], `value_partials_splits`), for the output projection's kernel to add and round as it reads them."""
        cfg = self._cfg
        h, k, hd = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        groups = h // k
        window = cfg.sliding_window if sliding else None
        ring_sum = phase == "prefill" and sliding
        summed = ring if ring_sum else columns
        stat_rows = queries * h
        q = f32([queries, h, hd])
        launches = attention_launches(self.kernels, cfg, phase, queries, columns, sliding)
        kernel = launches is not None
        softmax = launches.softmax if launches else None
        prompt_softmax = (
            prompt_softmax_launch(self.kernels, cfg, queries, columns, sliding, summed)
            if phase == "prefill" and not kernel
            else None
        )
        denominator = None if softmax or prompt_softmax else self.block_sum(stat_rows, summed, DENOMINATOR_READS)
        if q_dtype != "f32" and not (phase == "decode" and kernel and q_dtype == self.contract.operand_dtype):
            raise ValueError(f"{q_dtype} queries: only the decode-attention kernels read their operand's dtype")
        if partials_out and not (phase == "decode" and kernel):
            raise ValueError("only the decode-attention kernels hand their value partial sums over unsummed")
        value_splits = launches.values.call.constant("S") if launches else None
        out = f32([value_splits, queries, h * hd]) if partials_out else q
        if phase == "decode" and kernel:
            if not rows.endswith(f"x{self.contract.operand_dtype}>"):
                raise ValueError(
                    f"the decode-attention kernels read {self.contract.operand_dtype} cache rows, not {rows}"
                )
            first = tensor([queries, 1], "i32")
            kv_args = [("%k_rows", rows), ("%k_at", first), ("%v_rows", rows), ("%v_at", first)]
        else:
            kv = f32([columns, k, hd] if phase == "prefill" else [queries, columns, k, hd])
            kv_args = [("%k", kv), ("%v", kv)]
        func = Func(
            DecoderAttention(
                phase,
                queries,
                columns,
                h,
                k,
                hd,
                window,
                ring if ring_sum else None,
                widened=self.widened,
                kernel=kernel,
                q_dtype=q_dtype,
                partials_out=partials_out,
                softmax_kernel=prompt_softmax is not None,
            ).symbol,
            (tensor([queries, h, hd], q_dtype), *(t for _, t in kv_args), tensor([queries], "i32")),
            (out,),
        )
        part = (
            "decoder_attention.denominator.ring.mlir.j2"
            if ring_sum
            else "decoder_attention.denominator.columns.mlir.j2"
        )
        return self._add(
            f"decoder_attention.{phase}.mlir.j2",
            func,
            calls=[denominator] if denominator else [],
            queries=queries,
            columns=columns,
            heads=h,
            kv_heads=k,
            groups=groups,
            head_dim=hd,
            window=window,
            ring=ring,
            reads=DENOMINATOR_READS,
            stat_rows=stat_rows,
            denominator_sum=denominator,
            denominator_part=part,
            kv_args=[(name, "!kv" if name in ("%k", "%v") else t) for name, t in kv_args],  # IREE's: as `!kv`
            q_dtype=q_dtype,
            scores_part=template_variant(f"decoder_attention.{'' if phase == 'decode' else 'prefill_'}scores", kernel),
            values_part=(
                "decoder_attention.prefill_values.bf16_probs.mlir.j2"
                if prompt_softmax
                else template_variant(f"decoder_attention.{'' if phase == 'decode' else 'prefill_'}values", kernel)
            ),
            softmax_part=template_variant(
                f"decoder_attention.{'' if phase == 'decode' else 'prefill_'}softmax",
                (softmax if phase == "decode" else prompt_softmax) is not None,
            ),
            scores_kernel=launches and launches.scores,
            values_kernel=launches and launches.values,
            softmax_kernel=softmax or prompt_softmax,
            value_splits=value_splits,
            out_type=out,
            output_part="decoder_attention.output.partials.mlir.j2"
            if partials_out
            else "decoder_attention.output.mlir.j2",
            mask_value=BF16_MIN,
        )

    def attention_residual(self, tokens: int, partials: int | None = None) -> Func:
        """The output projection and the attention residual; with `partials` (`value_partials_splits`), the
        attention's value partial sums of that many column ranges arrive and the projection's kernel reads them."""
        cfg = self._cfg
        d, h, hd = cfg.hidden_size, cfg.num_attention_heads, cfg.head_dim
        kernels = self._layer_kernels.residual("attention", tokens, h * hd)
        x = f32([tokens, d])
        attended = f32([partials, tokens, h * hd]) if partials else f32([tokens, h, hd])
        func = Func(
            AttentionResidual(tokens, d, h * hd, kernel=kernels is not None, partials=partials).symbol,
            (x, attended, bf16_tensor([d, h * hd]), bf16_tensor([d]), x),
            (x,),
        )
        shape = dict(tokens=tokens, d=d, heads=h, head_dim=hd, width=h * hd)
        if partials is not None:
            round_a = self.contract.rounds_at("attention.output")
            summed = self.kernels.launch(summed_gemv_call(tokens, d, h * hd, partials, round_a))
            if kernels is None or summed is None:
                raise ValueError("the output projection reads the value partial sums only in the summed entry")
            return self._add(
                "attention_residual.summed.kernel.mlir.j2",
                func,
                gemv=summed,
                residual_kernel=kernels[1],
                splits=summed.call.constant("S"),
                partials=partials,
                **shape,
            )
        if kernels is not None:
            gemv, residual = kernels
            splits = gemv.call.constant("S")
            return self._add(
                "attention_residual.kernel.mlir.j2",
                func,
                gemv=gemv,
                residual_kernel=residual,
                splits=splits,
                scale=self._scalar(2.0**-0.5),
                **shape,
            )
        projected = self.projected_norm(tokens, h * hd, d)
        return self._add(
            "attention_residual.mlir.j2",
            func,
            calls=[projected],
            tokens=tokens,
            d=d,
            heads=h,
            head_dim=hd,
            width=h * hd,
            projected=projected,
            scale=self._scalar(2.0**-0.5),
        )
