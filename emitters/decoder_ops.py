"""One builder per decoder op family (contracts/decoder_policy.py): choose the specialisation, name it, render
its template once.

`DecoderOpEmitter` extends `DecoderNormOps` (emitters/decoder_norms.py: the decoder's linear, sums and norms, on the
audio stage's `OpEmitter`, whose `linear`, `lane_xor_sum`, `mlx_rms_norm` and `dense_ple` the decoder reuses: the
same computations) with the decoder's families. Every method returns a
`Func` whose signature callers and templates use, and reads its constants from the contract as the emulation
(`contracts/decoder_ops.py`) does, so the template and the emulation hold the same F32 values.
"""

from __future__ import annotations

from ..contracts import decoder_ops as D
from ..contracts.decoder_policy import DENOMINATOR_READS
from ..contracts.emulation import BF16_MIN
from ..kernels import Launch, gemv_group_call, summed_gemv_call
from .decoder_kernels import LayerKernels, attention_launches
from .decoder_norms import BF16, DecoderNormOps, bf16_tensor, carrier
from .decoder_sampling import SamplingOps
from .render import Func
from .render import tensor_type as tensor
from .shared_ops import f32, template_variant
from .specialisations import (
    AltupCollapse,
    AltupCorrect,
    AltupInit,
    AltupPredict,
    AltupRescale,
    AltupRouter,
    AttentionResidual,
    DecodeLinears,
    DecoderAttention,
    DecoderEmbedding,
    DecoderHead,
    DecoderMlp,
    GaussianTopk,
    GeluTanh,
    KeyValueProjection,
    Laurel,
    PleGate,
    QueryProjection,
    RmsMagnitude,
    Rope,
    ScaledLinear,
    TokenSelect,
)

#: transformers' floor on the AltUp magnitudes' mean square (the contract holds it as its scalar).
MAGNITUDE_FLOOR = 1e-5
#: The K/V projections' partial sums to the cache's rows (both kernel forms of `key_value_projection`).
CACHE_ROWS_PART = "key_value_projection.rows.kernel.mlir.j2"
#: The MLP's down-projection and residual in their kernels, after its BF16 product (`%product_op`).
MLP_DOWN_PART = "decoder_mlp.down.kernel.mlir.j2"
#: Columns per chunk of the token selection's exact row reductions (maxima, the non-finite count): a row of logits
#: reduces chunk by chunk, then across chunks, so a row of 262,400 spreads over 257 workgroups, not one.
SELECT_CHUNK = 1024


def _mlp_func(spec: DecoderMlp) -> Func:
    """The MLP's function: h and its five weights (pre-norm, gate, up, down, post-norm) in, h + MLP(h) out."""
    x, d, width = f32([spec.tokens, spec.d]), spec.d, spec.width
    weights = ([d], [width, d], [width, d], [d, width], [d])
    return Func(spec.symbol, (x, *(bf16_tensor(shape) for shape in weights)), (x,))


class DecoderOpEmitter(SamplingOps, DecoderNormOps):
    """Renders the decoder's op-family templates; `cfg` supplies eps, widths and the AltUp layout."""

    @property
    def _layer_kernels(self) -> LayerKernels:
        """Which committed kernels serve this program's layer families (emitters/decoder_kernels.py)."""
        return LayerKernels(self.kernels, self.contract, self._cfg)

    # ------------------------------------------------------------------ AltUp
    def rms_magnitude(self, rows: int, d: int, floor: bool) -> Func:
        mean = self.row_mean(rows, d)
        func = Func(RmsMagnitude(rows, d, floor).symbol, (f32([rows, d]),), (f32([rows]),))
        return self._add(
            "rms_magnitude.mlir.j2",
            func,
            calls=[mean],
            rows=rows,
            d=d,
            mean=mean,
            floor=self._scalar(MAGNITUDE_FLOOR) if floor else None,
        )

    def altup_rescale(self, tokens: int, d: int) -> Func:
        magnitude = self.rms_magnitude(tokens, d, floor=True)
        func = Func(AltupRescale(tokens, d).symbol, (f32([tokens, d]), f32([tokens])), (f32([tokens, d]),))
        return self._add("altup_rescale.mlir.j2", func, calls=[magnitude], tokens=tokens, d=d, magnitude=magnitude)

    def altup_init(self, tokens: int) -> Func:
        n, d = self._cfg.altup_num_inputs, self._cfg.hidden_size
        magnitude, projection = self.rms_magnitude(tokens, d, floor=False), self.linear([tokens], d, d)
        rescale = self.altup_rescale(tokens, d)
        func = Func(
            AltupInit(tokens, d, n).symbol,
            (f32([tokens, d]),) + (bf16_tensor([d, d]),) * (n - 1),
            (f32([n, tokens, d]),),
        )
        return self._add(
            "altup_init.mlir.j2",
            func,
            calls=[magnitude, projection, rescale],
            tokens=tokens,
            d=d,
            streams=n,
            magnitude=magnitude,
            projection=projection,
            rescale=rescale,
        )

    def altup_collapse(self, tokens: int) -> Func:
        n, d = self._cfg.altup_num_inputs, self._cfg.hidden_size
        magnitude, projection = self.rms_magnitude(tokens, d, floor=False), self.linear([tokens], d, d)
        rescale = self.altup_rescale(tokens, d)
        func = Func(
            AltupCollapse(tokens, d, n).symbol,
            (f32([n, tokens, d]),) + (bf16_tensor([d, d]),) * (n - 1),
            (f32([tokens, d]),),
        )
        return self._add(
            "altup_collapse.mlir.j2",
            func,
            calls=[magnitude, projection, rescale],
            tokens=tokens,
            d=d,
            streams=n,
            magnitude=magnitude,
            projection=projection,
            rescale=rescale,
            scale=self._scalar(1.0 / n),
        )

    def altup_router(self, tokens: int) -> Func:
        n, d = self._cfg.altup_num_inputs, self._cfg.hidden_size
        norm, linear = self.norm(tokens, d), self.linear([tokens], d, n)
        func = Func(
            AltupRouter(tokens, d, n).symbol,
            (f32([tokens, d]), bf16_tensor([d]), bf16_tensor([n, d])),
            (f32([tokens, n]),),
        )
        return self._add(
            "altup_router.mlir.j2",
            func,
            calls=[norm, linear],
            tokens=tokens,
            d=d,
            streams=n,
            norm=norm,
            linear=linear,
            scale=self._scalar(1.0 / d),
        )

    def altup_predict(self, tokens: int) -> Func:
        cfg = self._cfg
        n, d = cfg.altup_num_inputs, cfg.hidden_size
        kernel = self._layer_kernels.altup("predict", tokens)
        func = Func(
            AltupPredict(tokens, d, n, cfg.altup_active_idx, cfg.altup_coef_clip, kernel=kernel is not None).symbol,
            (f32([n, tokens, d]), bf16_tensor([d]), bf16_tensor([n, d]), bf16_tensor([n * n, n])),
            (f32([n, tokens, d]),),
        )
        if kernel is not None:
            return self._add("altup_predict.kernel.mlir.j2", func, tokens=tokens, d=d, streams=n, kernel=kernel)
        router = self.altup_router(tokens)
        return self._add(
            "altup_predict.mlir.j2",
            func,
            calls=[router],
            tokens=tokens,
            d=d,
            streams=n,
            active=cfg.altup_active_idx,
            clip=cfg.altup_coef_clip,
            router=router,
        )

    def altup_correct(self, tokens: int) -> Func:
        cfg = self._cfg
        n, d = cfg.altup_num_inputs, cfg.hidden_size
        kernel = self._layer_kernels.altup("correct", tokens)
        func = Func(
            AltupCorrect(tokens, d, n, cfg.altup_active_idx, cfg.altup_coef_clip, kernel=kernel is not None).symbol,
            (f32([n, tokens, d]), f32([tokens, d]), bf16_tensor([d]), bf16_tensor([n, d]), bf16_tensor([n, n])),
            (f32([n, tokens, d]),),
        )
        if kernel is not None:
            return self._add("altup_correct.kernel.mlir.j2", func, tokens=tokens, d=d, streams=n, kernel=kernel)
        router = self.altup_router(tokens)
        return self._add(
            "altup_correct.mlir.j2",
            func,
            calls=[router],
            tokens=tokens,
            d=d,
            streams=n,
            active=cfg.altup_active_idx,
            clip=cfg.altup_coef_clip,
            router=router,
        )

    # ------------------------------------------------------------------ LAuReL, RoPE, projections
    def laurel(self, tokens: int, x_dtype: str = "f32", partials: int | None = None) -> Func:
        """LAuReL; with `partials`, its left linear's partial sums of that many K ranges arrive (`attention_inputs`).
        Where xn arrives as BF16 and the kernels serve it, the right linear is the decode-linear kernel (reading the
        left linear's partials where they arrive: their sum and rounding done as it reads them) and the post-LAuReL
        norm and the residual are one dispatch of the partials-norm kernel's LAuReL residual."""
        d, r = self._cfg.hidden_size, self._cfg.laurel_rank
        tail = self._layer_kernels.residual("laurel", tokens, r) if x_dtype == BF16 else None
        summed = None
        if tail is not None and partials is not None:
            summed = self.kernels.launch(summed_gemv_call(tokens, d, r, partials, self.contract.rounds_at(None)))
        inputs = (tensor([tokens, d], x_dtype), f32([partials, tokens, r]) if partials else bf16_tensor([r, d]))
        func = Func(
            Laurel(tokens, d, r, x_dtype, partials, kernel=tail is not None).symbol,
            (*inputs, bf16_tensor([d, r]), bf16_tensor([d])),
            (f32([tokens, d]),),
        )
        shape = dict(tokens=tokens, d=d, rank=r, x_dtype=x_dtype, partials=partials)
        if summed is not None:
            return self._add("laurel.summed.kernel.mlir.j2", func, gemv=summed, residual_kernel=tail[1], **shape)
        if partials is not None:
            raise ValueError("LAuReL takes its left linear's partial sums only where the summed entry reads them")
        left = self.linear([tokens], d, r, x_dtype=x_dtype)
        right = self.projected_norm(tokens, r, d) if tail is None else None  # its only reader: the post-LAuReL norm
        return self._add(
            "laurel.mlir.j2",
            func,
            calls=[left, *([right] if right else [])],
            left=left,
            right=right,
            residual_part=template_variant("laurel.residual", tail is not None),
            gemv=tail[0] if tail else None,
            splits=tail[0].call.constant("S") if tail else None,
            residual_kernel=tail[1] if tail else None,
            **shape,
        )

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
        denominator = None if softmax else self.block_sum(stat_rows, summed, DENOMINATOR_READS)
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
            values_part=template_variant(f"decoder_attention.{'' if phase == 'decode' else 'prefill_'}values", kernel),
            softmax_part=template_variant("decoder_attention.softmax", softmax is not None),
            scores_kernel=launches and launches.scores,
            values_kernel=launches and launches.values,
            softmax_kernel=softmax,
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

    # ------------------------------------------------------------------ MLP and the per-layer input gate
    def gelu_tanh(self, shape: list[int]) -> Func:
        func = Func(GeluTanh(tuple(shape)).symbol, (f32(shape),), (f32(shape),))
        return self._add(
            "gelu_tanh.mlir.j2",
            func,
            shape=list(shape),
            k_cubic=self._scalar(D.GELU_CUBIC),
            k_sqrt=self._scalar(D.GELU_SQRT),
        )

    def gaussian_topk(self, tokens: int, width: int, sparsity: float) -> Func:
        mean = self.row_mean(tokens, width)
        func = Func(GaussianTopk(tokens, width, sparsity).symbol, (f32([tokens, width]),), (f32([tokens, width]),))
        return self._add(
            "gaussian_topk.mlir.j2",
            func,
            calls=[mean],
            tokens=tokens,
            width=width,
            sparsity=sparsity,
            mean=mean,
            z=float(D.sparsity_multiplier(self.contract, sparsity)),
        )

    def mlp(self, tokens: int, width: int, sparsity: float) -> Func:
        """The MLP. At a decode step with the kernels: the gate and up in one launch of the decode-linear kernel's
        pair entry, or with the GELU product where neither is split and no top-k sits between (then the
        down-projection and the residual: three launches in all)."""
        d = self._cfg.hidden_size
        norm = self.norm(tokens, d, feeds_linear=True)
        tail = self._layer_kernels.residual("mlp", tokens, width)
        product = self._layer_kernels.gelu_product(tokens, width) if sparsity == 0 and carrier(norm) == BF16 else None
        if tail is not None and product is not None:
            return self._mlp_gelu_product(tokens, width, norm, product, tail)
        pair = self.decode_linears(tokens, d, (width, width), carrier(norm))
        if pair is None:
            up = self.linear([tokens], d, width, x_dtype=carrier(norm))
            inputs = {"gate_args": ["%f", "%w_gate"], "up_args": ["%f", "%w_up"]}
        else:
            up = self.partials_sum(DecodeLinears.from_symbol(pair.symbol).splits, tokens, width)
            inputs = {"gate_args": ["%gate_up#0"], "up_args": ["%gate_up#1"]}
        down_norm = self.projected_norm(tokens, width, d) if tail is None else None
        gelu = self.gelu_tanh([tokens, width])
        topk = self.gaussian_topk(tokens, width, sparsity) if sparsity > 0 else None
        calls = (
            [norm, *([pair] if pair else []), up]
            + ([down_norm] if down_norm else [])
            + [gelu]
            + ([topk] if topk else [])
        )
        func = _mlp_func(DecoderMlp(tokens, d, width, sparsity if sparsity > 0 else None, kernel=tail is not None))
        return self._add(
            "decoder_mlp.mlir.j2",
            func,
            calls=calls,
            tokens=tokens,
            d=d,
            width=width,
            norm=norm,
            pair=pair,
            up=up,
            down_norm=down_norm,
            gelu=gelu,
            topk=topk,
            **inputs,
            tail_part=template_variant("decoder_mlp.tail", tail is not None),
            down_part=MLP_DOWN_PART,
            gemv=tail[0] if tail else None,
            residual_kernel=tail[1] if tail else None,
            splits=tail[0].call.constant("S") if tail else None,
        )

    def _mlp_gelu_product(self, tokens: int, width: int, norm: Func, product: Launch, tail: tuple[Launch, Launch]):
        """`mlp` at a decode step in the GELU-product kernel, the down-projection's and the residual's."""
        d = self._cfg.hidden_size
        func = _mlp_func(DecoderMlp(tokens, d, width, None, kernel=True, gelu_product=True))
        return self._add(
            "decoder_mlp.gelu_product.kernel.mlir.j2",
            func,
            calls=[norm],
            tokens=tokens,
            d=d,
            width=width,
            norm=norm,
            product_kernel=product,
            down_part=MLP_DOWN_PART,
            gemv=tail[0],
            residual_kernel=tail[1],
            splits=tail[0].call.constant("S"),
        )

    def ple_gate(self, tokens: int) -> Func:
        cfg = self._cfg
        n, d, p = cfg.altup_num_inputs, cfg.hidden_size, cfg.hidden_size_per_layer_input
        tail = self._layer_kernels.ple_tail(tokens)
        scaled = cfg.altup_correct_scale
        gate = (self.scaled_linear(tokens, d, p, "ple_gate.scale") if scaled else None) or self.linear([tokens], d, p)
        scaled_gate = gate.symbol.startswith(ScaledLinear.family)
        projection = self.projected_norm(tokens, p, d) if tail is None else None
        gelu = self.gelu_tanh([tokens, p])
        spec = PleGate(tokens, d, n, p, cfg.altup_active_idx, scaled, kernel=tail is not None, scaled_gate=scaled_gate)
        func = Func(
            spec.symbol,
            (
                f32([n, tokens, d]),
                f32([tokens, p]),
                bf16_tensor([d]),
                bf16_tensor([p, d]),
                bf16_tensor([d, p]),
                bf16_tensor([d]),
            ),
            (f32([n, tokens, d]),),
        )
        return self._add(
            "ple_gate.mlir.j2",
            func,
            calls=[gate] + ([projection] if projection else []) + [gelu],
            tokens=tokens,
            d=d,
            streams=n,
            per_layer=p,
            active=cfg.altup_active_idx,
            scaled=scaled,
            gate=gate,
            gate_part=template_variant("ple_gate.gate", scaled_gate),
            projection=projection,
            gelu=gelu,
            tail_part=template_variant("ple_gate.tail", tail is not None),
            gemv=tail[0] if tail else None,
            streams_kernel=tail[1] if tail else None,
            splits=tail[0].call.constant("S") if tail else None,
        )

    # ------------------------------------------------------------------ the model's ends
    def decoder_head(self, tokens: int) -> Func:
        cfg = self._cfg
        n, d, v = cfg.altup_num_inputs, cfg.hidden_size, cfg.vocab_size
        collapse, norm, linear = self.altup_collapse(tokens), self.norm(tokens, d), self.linear([tokens], d, v)
        cap = cfg.final_logit_softcapping
        func = Func(
            DecoderHead(tokens, d, n, v, cap).symbol,
            (f32([n, tokens, d]),) + (bf16_tensor([d, d]),) * (n - 1) + (bf16_tensor([d]), bf16_tensor([v, d])),
            (f32([tokens, v]),),
        )
        return self._add(
            "decoder_head.mlir.j2",
            func,
            calls=[collapse, norm, linear],
            tokens=tokens,
            d=d,
            streams=n,
            vocab=v,
            cap=None if cap is None else self._scalar(cap),
            collapse=collapse,
            norm=norm,
            linear=linear,
            unembed=[f"%w{i}" for i in range(n - 1)],
        )

    def decoder_embedding(self, tokens: int) -> Func:
        cfg = self._cfg
        d, layers, p = cfg.hidden_size, cfg.num_hidden_layers, cfg.hidden_size_per_layer_input
        ple = self.dense_ple(tokens, d, layers, p, cfg.rms_norm_eps)
        func = Func(
            DecoderEmbedding(tokens, d, layers, p).symbol,
            (
                bf16_tensor([tokens, d]),
                bf16_tensor([tokens, layers * p]),
                bf16_tensor([layers * p, d]),
                bf16_tensor([p]),
            ),
            (f32([tokens, d]), f32([tokens, layers, p])),
        )
        return self._add(
            "decoder_embedding.mlir.j2",
            func,
            calls=[ple],
            tokens=tokens,
            d=d,
            layers=layers,
            per_layer=p,
            ple=ple,
            embed_scale=self._scalar(d**0.5),
        )

    def token_select(self, rows: int, top_k: int = 0, vocab: int | None = None) -> Func:
        """`decoder_ops.token_select` on [rows, vocab] logits (default: the configuration's vocabulary): token,
        logprob, non-finite count, first non-finite column ([rows] each; i32, f32, i32, i32). With `top_k`,
        `decoder_ops.token_top_k` instead: the top ids [rows, k] i32 and their log-softmax [rows, k] f32."""
        v = self._cfg.vocab_size if vocab is None else vocab
        i32 = lambda shape: tensor(shape, "i32")  # noqa: E731
        denominator = self.block_sum(rows, v, DENOMINATOR_READS)
        greedy = self._add(
            "token_select.mlir.j2",
            Func(TokenSelect(rows, v).symbol, (f32([rows, v]),), (i32([rows]), f32([rows]), i32([rows]), i32([rows]))),
            calls=[denominator],
            rows=rows,
            vocab=v,
            reads=DENOMINATOR_READS,
            chunk=SELECT_CHUNK,
            denominator=denominator,
        )
        if not top_k:
            return greedy
        chunk = D.top_k_chunk(v, top_k)
        func = Func(
            TokenSelect(rows, v, top_k, chunk).symbol, (f32([rows, v]),), (i32([rows, top_k]), f32([rows, top_k]))
        )
        return self._add(
            "token_select.top_k.mlir.j2",
            func,
            calls=[greedy],
            rows=rows,
            vocab=v,
            k=top_k,
            chunk=chunk,
            chunks=-(-v // chunk),
            greedy=greedy,
        )
