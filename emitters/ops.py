"""One builder per op family of the audio tower, and their composition into its blocks: choose the
specialisation, name it, render its template once.  The families every stage shares (the linear layer, the lane
sums, the prefill's merge and norms) are `SharedOps`' (emitters/shared_ops.py), which `OpEmitter` extends.

Every method returns a `Func` (symbol + call signature) so that callers, and the templates that call
them, never restate another op's types.  Symbols are written by the specialisation dataclasses
(`specialisations.py`: `rms_norm_8x750_D1536_scaled`), so a shape used twice is rendered once.

Where a linked kernel (`kernels.py`) replaces IREE's code for an op or a part of one, the template is
the variant file `<name>.kernel.mlir.j2` instead of `<name>.mlir.j2` (`template_variant`): no template
branches on whether a kernel is linked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..contracts.emulation import BF16_MIN, lane_threads, query_scale, timing_signal
from ..kernels import (
    ATTENTION_SM90,
    GLU_DEPTHWISE_SM90,
    SILU_SM90,
    Launch,
    rms_norm_call,
)
from .kernels import bf16_rounding
from .lowering import IM2COL
from .render import Func
from .render import tensor_type as tensor
from .shared_ops import SharedOps, f32, hex_blob, template_variant
from .specialisations import (
    Attention,
    AudioOutput,
    ConformerBlock,
    CumulativeGroupNorm,
    Embedder,
    FeedForward,
    LightConv,
    MaskFrames,
    MelBoundary,
    PrefixScan,
    Reduction,
    RmsNorm,
    SscpBlock,
    SscpConv,
    ValidMask,
)

if TYPE_CHECKING:
    from ..model.audio_config import AudioConfig
    from ..model.audio_weights import WeightLayout


class OpEmitter(SharedOps):
    """Renders op-family templates into `module` under numeric contract `contract`: the audio tower's families
    and their composition, on the families every stage shares (`SharedOps`)."""

    # ------------------------------------------------------------------ reduction schedules
    def prefix_scan(self, rows: int, width: int) -> Func:
        padded = -(-width // 128) * 128
        if padded > 4096:
            raise ValueError(f"the one-block prefix scan supports at most 4096 values per row, got {width}")
        func = Func(PrefixScan(rows, width).symbol, (f32([rows, width]),), (f32([rows, width]),))
        return self._add(
            "prefix_scan.mlir.j2", func, rows=rows, width=width, padded=padded, threads=padded // 4, warps=padded // 128
        )

    # ------------------------------------------------------------------ masks and the mel boundary
    def valid_mask(self, clips: int, frames: int, stride: int) -> Func:
        func = Func(
            ValidMask(clips, frames, stride).symbol, (tensor([clips], "i32"),), (tensor([clips, frames], "i1"),)
        )
        return self._add("valid_mask.mlir.j2", func, b=clips, t=frames, stride=stride)

    def mask_frames(self, shape: Sequence[int]) -> Func:
        shape = list(shape)
        func = Func(MaskFrames(tuple(shape)).symbol, (f32(shape), tensor(shape[:2], "i1")), (f32(shape),))
        return self._add("mask_frames.mlir.j2", func, shape=shape)

    def mel_boundary(self, clips: int, frames: int, mel: int) -> Func:
        func = Func(
            MelBoundary(clips, frames, mel).symbol, (f32([clips, frames, mel]),), (f32([clips, frames, mel, 1]),)
        )
        return self._add("mel_boundary.mlir.j2", func, b=clips, t=frames, mel=mel)

    # ------------------------------------------------------------------ SSCP
    def sscp_conv(
        self,
        clips: int,
        frames: int,
        freq: int,
        cin: int,
        cout: int,
        kernel: tuple[int, int],
        stride: tuple[int, int],
        weight_layout: str,
        w_dtype: str = "bf16",
    ) -> Func:
        kt, kf = kernel
        to, fo = (frames - 1) // stride[0] + 1, (freq + 2 - kf) // stride[1] + 1
        if weight_layout == "oihw":  # transformers: [out, in, kt, kf]
            w_shape, to_hwio = [cout, cin, kt, kf], [2, 3, 1, 0]
        elif weight_layout == "ohwi":  # mlx: [out, kt, kf, in]
            w_shape, to_hwio = [cout, kt, kf, cin], [1, 2, 3, 0]
        else:
            raise ValueError(f"unknown convolution weight layout {weight_layout!r}")
        result = self.contract.sscp_conv_result_dtype
        im2col = self.lowering.conv == IM2COL
        spec = SscpConv(
            clips,
            frames,
            freq,
            (cin, cout),
            tuple(stride),
            self.contract.operand_dtype,
            result,
            weight_layout,
            im2col=im2col,
            widened=self.widened,
        )
        func = Func(
            spec.symbol, (f32([clips, frames, freq, cin]), tensor(w_shape, w_dtype)), (f32([clips, to, fo, cout]),)
        )
        return self._add(
            "sscp_conv.im2col.mlir.j2" if im2col else "sscp_conv.mlir.j2",
            func,
            b=clips,
            t=frames,
            f=freq,
            cin=cin,
            cout=cout,
            kt=kt,
            kf=kf,
            to=to,
            fo=fo,
            stride=list(stride),
            w_shape=w_shape,
            w_dtype=w_dtype,
            to_hwio=to_hwio,
            to_ohwi=[to_hwio[3], to_hwio[0], to_hwio[1], to_hwio[2]],
            taps=[(dt, df) for dt in range(kt) for df in range(kf)],
            result_dtype=result,
        )

    def cumulative_group_norm(
        self, clips: int, frames: int, freq: int, channels: int, eps: float, w_dtype: str = "bf16"
    ) -> Func:
        sum_channels = self.lane_xor_sum(clips * frames * freq, channels, reads=4)
        sum_freq = self.lane_xor_sum(clips * frames, freq, reads=4)
        scan = self.prefix_scan(clips, frames)
        x = f32([clips, frames, freq, channels])
        stat = f32([clips, frames])
        func = Func(
            CumulativeGroupNorm(clips, frames, freq, channels).symbol,
            (x, tensor([channels], w_dtype)),
            (x,) + (stat,) * 8,
        )
        return self._add(
            "cumulative_group_norm.mlir.j2",
            func,
            calls=[sum_channels, sum_freq, scan],
            b=clips,
            t=frames,
            f=freq,
            ch=channels,
            eps=eps,
            w_dtype=w_dtype,
            sum_channels=sum_channels,
            sum_freq=sum_freq,
            scan=scan,
        )

    # ------------------------------------------------------------------ RMS norms
    def _norm_kernel(
        self,
        output: str,
        lead: Sequence[int],
        d: int,
        w_dtype: str,
        eps: float,
        clip: float | None,
        residual_weight: float | None = None,
    ) -> Launch | None:
        """The linked RMS-norm kernel variant `output` (kernels/reductions.py) for [*lead, d], or None."""
        return self.kernels.launch(
            rms_norm_call(
                output,
                lane_threads(d, 8),
                math.prod(lead),
                d,
                w_dtype,
                eps,
                clip,
                self.contract.rounds_at(None),
                residual_weight,
            )
        )

    def rms_norm(
        self,
        lead: Sequence[int],
        d: int,
        eps: float,
        scaled: bool = True,
        w_dtype: str = "bf16",
        clip: float | None = None,
        feeds_matmul: bool = False,
    ) -> Func:
        """RMS norm over the last axis, of clamp(x, -clip, clip) when `clip` is given. With `feeds_matmul`
        under a contract whose matmul operands are BF16 values, a kernel hands its result over as BF16."""
        lead = list(lead)
        output = "bf16" if feeds_matmul and bf16_rounding(self.contract) else "f32"
        kernel = self._norm_kernel(output, lead, d, w_dtype, eps, clip) if scaled else None
        if kernel is not None:
            return self._norm_by_kernel(
                kernel, RmsNorm(tuple(lead), d, True, clip, kernel=True, output=output), w_dtype
            )
        n = math.prod(lead)
        x = f32(lead + [d])
        spec = RmsNorm(tuple(lead), d, scaled, clip)
        sumsq = self.lane_xor_sum(n, d, reads=8, square=True)
        func = Func(spec.symbol, (x,) + ((tensor([d], w_dtype),) if scaled else ()), (x,))
        return self._add(
            "rms_norm.mlir.j2",
            func,
            calls=[sumsq],
            lead=lead,
            n=n,
            d=d,
            eps=eps,
            scaled=scaled,
            w_dtype=w_dtype,
            clip=clip,
            sumsq=sumsq,
        )

    def rms_norm_silu(self, lead: Sequence[int], d: int, eps: float, clip: float) -> Func | None:
        """round(silu(norm(clamp(x)))) handed to a matmul as BF16, in one kernel; None where it is not
        linked (IREE's code then calls `rms_norm` and applies the SiLU itself)."""
        kernel = self._norm_kernel("silu_bf16", lead, d, "bf16", eps, clip)
        if kernel is None:
            return None
        return self._norm_by_kernel(
            kernel, RmsNorm(tuple(lead), d, True, clip, kernel=True, output="silu_bf16"), "bf16"
        )

    def _norm_by_kernel(self, kernel: Launch, spec: RmsNorm, w_dtype: str) -> Func:
        """A scaled norm in one kernel dispatch; its "bf16" and "silu_bf16" results go to a matmul as BF16."""
        lead, d = list(spec.lead), spec.d
        result_dtype = "f32" if spec.output == "f32" else "bf16"
        func = Func(spec.symbol, (f32(lead + [d]), tensor([d], w_dtype)), (tensor(lead + [d], result_dtype),))
        return self._add(
            "rms_norm.kernel.mlir.j2",
            func,
            lead=lead,
            n=math.prod(lead),
            d=d,
            w_dtype=w_dtype,
            result_dtype=result_dtype,
            kernel=kernel,
        )

    def residual_rms_norm(
        self, lead: Sequence[int], d: int, eps: float, clip: float, weight: float, x_dtype: str = "f32"
    ) -> Func:
        """round(res + norm(clamp(x, -clip, clip)) * weight) for a third argument `res`: a conformer
        module's clamp, post-norm and residual. x may be a GEMM kernel's BF16 result (`x_dtype`), which
        only the kernel reads."""
        lead = list(lead)
        n = math.prod(lead)
        x = f32(lead + [d])
        kernel = self._norm_kernel(
            "residual_bf16" if x_dtype == "bf16" else "residual", lead, d, "bf16", eps, clip, weight
        )
        if x_dtype != "f32" and kernel is None:
            raise ValueError(f"a {x_dtype} input is read only by the residual RMS-norm kernel")
        spec = RmsNorm(tuple(lead), d, True, clip, weight, x_dtype, kernel=kernel is not None)
        func = Func(spec.symbol, (tensor(lead + [d], x_dtype), tensor([d], "bf16"), x), (x,))
        if kernel is not None:
            return self._add(
                "rms_norm_residual.kernel.mlir.j2",
                func,
                lead=lead,
                n=n,
                d=d,
                w_dtype="bf16",
                x_dtype=x_dtype,
                kernel=kernel,
            )
        sumsq = self.lane_xor_sum(n, d, reads=8, square=True)
        return self._add(
            "rms_norm_residual.mlir.j2",
            func,
            calls=[sumsq],
            lead=lead,
            n=n,
            d=d,
            eps=eps,
            scaled=True,
            w_dtype="bf16",
            clip=clip,
            residual_weight=weight,
            sumsq=sumsq,
        )

    def _residual_norm_reading(
        self, producer: Func, lead: Sequence[int], d: int, eps: float, clip: float, weight: float
    ) -> Func:
        """A module's clamp + post-norm + residual, reading `producer`'s result in its carrier."""
        return self.residual_rms_norm(lead, d, eps, clip, weight, x_dtype=self._carrier(producer, lead, d))

    # ------------------------------------------------------------------ conformer modules
    def feed_forward(self, clips: int, frames: int, d: int, eps: float, clip: float, residual_weight: float) -> Func:
        lead = [clips, frames]
        norm = self.rms_norm(lead, d, eps, clip=clip, feeds_matmul=True)
        silu = self.kernels.launch(SILU_SM90.call(clips * frames * 4 * d))
        silu, up = self._linear_feeding(silu, norm, lead, d, 4 * d)
        down = self.linear(lead, 4 * d, d, x_dtype="bf16" if silu else "f32", kernel_bf16=True)
        post_norm = self._residual_norm_reading(down, lead, d, eps, clip, residual_weight)
        x = f32([clips, frames, d])
        func = Func(
            FeedForward(clips, frames, d).symbol,
            (x, tensor([d], "bf16"), tensor([4 * d, d], "bf16"), tensor([d, 4 * d], "bf16"), tensor([d], "bf16")),
            (x,),
        )
        return self._add(
            "feed_forward.mlir.j2",
            func,
            calls=[norm, post_norm, up, down],
            b=clips,
            t=frames,
            d=d,
            w_dtype="bf16",
            norm=norm,
            post_norm=post_norm,
            up=up,
            down=down,
            silu=silu,
            activation_part=template_variant("feed_forward.activation", silu is not None),
        )

    def light_conv(self, clips: int, frames: int, d: int, kernel: int, eps: float, clip: float, dw_layout: str) -> Func:
        lead = [clips, frames]
        norm = self.rms_norm(lead, d, eps, feeds_matmul=True)
        glu_taps = self.kernels.launch(GLU_DEPTHWISE_SM90.call(clips, frames, d, kernel))
        glu_taps, start = self._linear_feeding(glu_taps, norm, lead, d, 2 * d)
        conv_norm = self.rms_norm_silu(lead, d, eps, clip)
        fused_silu = conv_norm is not None
        if conv_norm is None:
            conv_norm = self.rms_norm(lead, d, eps, clip=clip)
        end = self._linear_reading(conv_norm, lead, d, d, kernel_bf16=True)
        dw_shape = {"d1k": [d, 1, kernel], "dk1": [d, kernel, 1]}[dw_layout]
        x = f32(lead + [d])
        func = Func(
            LightConv(clips, frames, d, kernel, dw_layout, kernel=glu_taps is not None).symbol,
            (
                x,
                tensor([d], "bf16"),
                tensor([2 * d, d], "bf16"),
                tensor(dw_shape, "bf16"),
                tensor([d], "bf16"),
                tensor([d, d], "bf16"),
            ),
            (x,),
        )
        return self._add(
            "light_conv.mlir.j2",
            func,
            calls=[norm, conv_norm, start, end],
            b=clips,
            t=frames,
            d=d,
            k=kernel,
            w_dtype="bf16",
            dw_shape=dw_shape,
            norm=norm,
            conv_norm=conv_norm,
            start=start,
            end=end,
            glu_taps=glu_taps,
            glu_taps_part=template_variant("light_conv.glu_taps", glu_taps is not None),
            activation_part=template_variant("light_conv.activation", fused_silu),
            residual_part=template_variant("light_conv.residual", self._carrier(end, lead, d) == "bf16"),
        )

    def attention(
        self,
        clips: int,
        frames: int,
        d: int,
        heads: int,
        chunk: int,
        max_past: int,
        cap: float,
        eps: float,
        clip: float,
    ) -> Func:
        if max_past % chunk:
            raise ValueError(f"attention context: max past {max_past} must be a multiple of the chunk {chunk}")
        hd = d // heads
        blocks = -(-frames // chunk)
        context = chunk + max_past
        positions = max_past + 1
        norm = self.rms_norm([clips, frames], d, eps, clip=clip, feeds_matmul=True)
        lead, operands = [clips, frames], self.contract.operand_dtype
        core = self.kernels.launch(
            ATTENTION_SM90.call(clips, frames, blocks, heads, hd, chunk, max_past, cap, BF16_MIN)
        )
        core, qkv_proj = self._linear_feeding(core, norm, lead, d, d)
        pos_proj = self.linear([positions], d, d)
        signal = timing_signal(np.arange(max_past, -1, -1), d)
        if core is not None:  # the kernel hands the attended values over as BF16 operands
            proj, softmax_sum = self.linear(lead, d, d, x_dtype=operands, kernel_bf16=True), None
        else:
            proj = self.linear(lead, d, d, kernel_bf16=True)
            softmax_sum = self.lane_xor_sum(clips * blocks * heads * chunk, context, reads=1)
        post_norm = self._residual_norm_reading(proj, lead, d, eps, clip, 1.0)
        x = f32([clips, frames, d])
        wm = tensor([d, d], "bf16")
        wn = tensor([d], "bf16")
        func = Func(
            Attention(clips, frames, d, heads, chunk, max_past, kernel=core is not None, widened=self.widened).symbol,
            (x, tensor([clips, frames], "i1"), wn, wm, wm, wm, tensor([hd], "bf16"), wm, wm, wn),
            (x,),
        )
        calls = [norm, post_norm, qkv_proj, proj, pos_proj] + ([softmax_sum] if softmax_sum else [])
        return self._add(
            "attention.mlir.j2",
            func,
            calls=calls,
            b=clips,
            t=frames,
            d=d,
            h=heads,
            hd=hd,
            w=chunk,
            u=blocks,
            p=max_past,
            nb=max_past // chunk,
            cxt=context,
            l=positions,
            cap=cap,
            w_dtype="bf16",
            timing=hex_blob(signal),
            q_scale=query_scale(hd),
            mask_value=BF16_MIN,
            norm=norm,
            post_norm=post_norm,
            qkv_proj=qkv_proj,
            proj=proj,
            pos_proj=pos_proj,
            softmax_sum=softmax_sum,
            core=core,
            core_part=template_variant("attention.core", core is not None),
        )

    # ------------------------------------------------------------------ stage composition
    def sscp_block(
        self, conv: Func, norm: Func, mask: Func, b: int, t: int, f: int, cin: int, to: int, fo: int, cout: int
    ) -> Func:
        y, stat = f32([b, to, fo, cout]), f32([b, to])
        func = Func(
            SscpBlock(b, t, f, (cin, cout)).symbol,
            (f32([b, t, f, cin]), conv.arg_types[1], norm.arg_types[1], tensor([b, to], "i1")),
            (y, y, y) + (stat,) * 8,
        )
        return self._add(
            "sscp_block.mlir.j2",
            func,
            calls=[conv, norm, mask],
            b=b,
            t=t,
            f=f,
            cin=cin,
            to=to,
            fo=fo,
            cout=cout,
            conv=conv,
            norm=norm,
            mask=mask,
        )

    def conformer_block(self, cfg: AudioConfig, b: int, t: int, layout: WeightLayout) -> Func:
        from ..model.audio_weights import BLOCK_WEIGHTS, _block_shape  # local: weights imports config only

        d, eps, clip = cfg.hidden_size, cfg.rms_norm_eps, cfg.gradient_clipping
        ffw = self.feed_forward(b, t, d, eps, clip, cfg.conf_residual_weight)
        attn = self.attention(
            b,
            t,
            d,
            cfg.conf_num_attention_heads,
            cfg.conf_attention_chunk_size,
            cfg.max_past,
            cfg.conf_attention_logit_cap,
            eps,
            clip,
        )
        lconv = self.light_conv(b, t, d, cfg.conf_conv_kernel_size, eps, clip, layout.depthwise_layout)
        norm = self.rms_norm([b, t], d, eps, clip=clip)
        mask = self.mask_frames([b, t, d])
        weight_types = [tensor(_block_shape(cfg, name, layout), "bf16") for name in BLOCK_WEIGHTS]
        x = f32([b, t, d])
        func = Func(ConformerBlock(b, t, d).symbol, (x, tensor([b, t], "i1"), *weight_types), (x,) * 5)
        return self._add(
            "conformer_block.mlir.j2",
            func,
            calls=[ffw, attn, lconv, norm, mask],
            b=b,
            t=t,
            d=d,
            weight_types=weight_types,
            ffw=ffw,
            attn=attn,
            lconv=lconv,
            norm=norm,
            mask=mask,
        )

    def reduction(self, b: int, t: int, d: int, factor: int) -> Func:
        tout = -(-t // factor)
        func = Func(
            Reduction(b, t, d, factor).symbol,
            (f32([b, t, d]), tensor([b, t], "i1")),
            (f32([b, tout, d]), tensor([b, tout], "i1"), tensor([b], "i32")),
        )
        return self._add("reduction.mlir.j2", func, b=b, t=t, d=d, r=factor, tout=tout)

    def embedder(self, lead: Sequence[int], d: int, text_hidden: int, eps: float) -> Func:
        lead = list(lead)
        norm = self.rms_norm(lead, d, eps)
        proj = self.linear(lead, d, text_hidden)
        post_norm = self.rms_norm(lead, text_hidden, eps, scaled=False)
        func = Func(
            Embedder(tuple(lead), d, text_hidden).symbol,
            (f32(lead + [d]), tensor([d], "bf16"), tensor([text_hidden, d], "bf16")),
            (f32(lead + [d]), f32(lead + [text_hidden]), f32(lead + [text_hidden])),
        )
        return self._add(
            "embedder.mlir.j2",
            func,
            calls=[norm, proj, post_norm],
            lead=lead,
            d=d,
            th=text_hidden,
            w_dtype="bf16",
            norm=norm,
            proj=proj,
            post_norm=post_norm,
        )

    def audio_output(self, b: int, tout: int, d: int, text_hidden: int, vocab: int, rows: int) -> Func:
        func = Func(
            AudioOutput(b, tout, d, text_hidden).symbol,
            (f32([b, tout, text_hidden]), f32([vocab, text_hidden]), f32([b, tout, d]), tensor([b], "i32")),
            (f32([b, rows, text_hidden]), f32([b, rows, d])),
        )
        return self._add(
            "audio_output.mlir.j2", func, b=b, tout=tout, d=d, th=text_hidden, vocab=vocab, rows=rows, pad_row=vocab - 1
        )
