"""One builder per decoder op family (contracts/decoder_policy.py): choose the specialisation, name it, render
its template once.

`DecoderOpEmitter` extends `DecoderAttentionOps` (emitters/decoder_attention.py: the attention's families, from the
queries, keys and values to the output projection's residual), itself on `DecoderNormOps` (emitters/decoder_norms.py:
the decoder's linear, sums and norms, on the audio stage's `OpEmitter`, whose `linear`, `lane_xor_sum`,
`mlx_rms_norm` and `dense_ple` the decoder reuses: the same computations), with the decoder's other families. Every method returns a
`Func` whose signature callers and templates use, and reads its constants from the contract as the emulation
(`contracts/decoder_ops.py`) does, so the template and the emulation hold the same F32 values.
"""

from __future__ import annotations

from ..contracts import decoder_ops as D
from ..contracts.decoder_policy import DENOMINATOR_READS
from ..kernels import Launch, summed_gemv_call
from .decoder_attention import DecoderAttentionOps
from .decoder_norms import BF16, bf16_tensor, carrier
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
    DecodeLinears,
    DecoderEmbedding,
    DecoderHead,
    DecoderMlp,
    GaussianTopk,
    GeluTanh,
    Laurel,
    PleGate,
    RmsMagnitude,
    ScaledLinear,
    TokenSelect,
)

#: transformers' floor on the AltUp magnitudes' mean square (the contract holds it as its scalar).
MAGNITUDE_FLOOR = 1e-5
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


class DecoderOpEmitter(SamplingOps, DecoderAttentionOps):
    """Renders the decoder's op-family templates; `cfg` supplies eps, widths and the AltUp layout."""

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

    # ------------------------------------------------------------------ LAuReL
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
