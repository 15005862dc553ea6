"""One builder per op family: choose the specialisation, name it, render its template once.

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
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..contracts.emulation import BF16_MIN, lane_threads, query_scale, timing_signal
from ..contracts.policy import NumericContract
from ..kernels import (
    ATTENTION_SM90,
    GEMM_SM90,
    GLU_DEPTHWISE_SM90,
    SILU_SM90,
    Launch,
    lane_sum_call,
    rms_norm_call,
)
from .kernels import IREE_CODEGEN, LinkedKernels, bf16_rounding
from .lowering import DEFAULT_LOWERING, IM2COL, Lowering
from .render import Func, ModuleBuilder
from .render import tensor_type as tensor
from .specialisations import (
    AffineDequant,
    Attention,
    AudioOutput,
    ConformerBlock,
    CumulativeGroupNorm,
    DensePle,
    Embedder,
    FeedForward,
    LaneXorSum,
    LightConv,
    Linear,
    MaskFrames,
    MelBoundary,
    MlxRmsNorm,
    PrefixScan,
    Reduction,
    RmsNorm,
    SscpBlock,
    SscpConv,
    TokenMerge,
    ValidMask,
)

if TYPE_CHECKING:
    from ..model.audio_config import AudioConfig
    from ..model.audio_weights import WeightLayout


def f32(shape: Sequence[int]) -> str:
    return tensor(shape, "f32")


def template_variant(name: str, kernel: bool) -> str:
    """The template of `name` (an op, or a part of one) that calls a linked kernel, or IREE's own code."""
    return f"{name}.kernel.mlir.j2" if kernel else f"{name}.mlir.j2"


def hex_blob(values: np.ndarray) -> str:
    """Little-endian F32 bytes as an MLIR dense hex literal: bit-exact and compact."""
    return "0x" + np.ascontiguousarray(values, dtype="<f4").tobytes().hex().upper()


@dataclass
class OpEmitter:
    """Renders op-family templates into `module` under numeric contract `contract`."""

    module: ModuleBuilder
    contract: NumericContract
    #: the committed Hopper kernels the module links (`IREE_CODEGEN`: none)
    kernels: LinkedKernels = IREE_CODEGEN
    #: the forms the target's code generation wants (emitters/lowering.py)
    lowering: Lowering = DEFAULT_LOWERING

    @property
    def widened(self) -> bool:
        """Whether the dots read BF16 operands as F32 (the symbols of the contractions say so)."""
        return self.lowering.dot_dtype(self.contract) != self.contract.operand_dtype

    def _add(self, template: str, func: Func, calls: Sequence[Func] = (), **params: object) -> Func:
        """Render `template` with the contract `c`, `dot`, the operand type its contractions' dots read, and
        `unfused_mul_add` (the target needs no barrier to keep a product from its add)."""
        return self.module.add(
            template,
            func,
            calls,
            c=self.contract,
            dot=self.lowering.dot_dtype(self.contract),
            unfused_mul_add=self.lowering.unfused_mul_add,
            **params,
        )

    # ------------------------------------------------------------------ reduction schedules
    def lane_xor_sum(self, rows: int, width: int, reads: int, square: bool = False) -> Func:
        threads = lane_threads(width, reads)
        kernel = self.kernels.launch(lane_sum_call(threads, rows, width, reads, square))
        spec = LaneXorSum(rows, width, reads, square, kernel=kernel is not None)
        func = Func(spec.symbol, (f32([rows, width]),), (f32([rows]),))
        return self._add(
            template_variant("lane_xor_sum", kernel is not None),
            func,
            rows=rows,
            width=width,
            reads=reads,
            threads=threads,
            square=square,
            kernel=kernel,
        )

    def prefix_scan(self, rows: int, width: int) -> Func:
        padded = -(-width // 128) * 128
        if padded > 4096:
            raise ValueError(f"the one-block prefix scan supports at most 4096 values per row, got {width}")
        func = Func(PrefixScan(rows, width).symbol, (f32([rows, width]),), (f32([rows, width]),))
        return self._add(
            "prefix_scan.mlir.j2", func, rows=rows, width=width, padded=padded, threads=padded // 4, warps=padded // 128
        )

    # ------------------------------------------------------------------ quantization
    def affine_dequant(self, rows: int, cols: int, bits: int, group_size: int) -> Func:
        if bits not in (4, 8):
            raise ValueError(f"affine dequantization supports 4 or 8 bits, got {bits}")
        if cols % group_size or (cols * bits) % 32:
            raise ValueError(f"{cols} columns do not split into groups of {group_size} / 32-bit words")
        per_word = 32 // bits
        func = Func(
            AffineDequant((rows, cols), bits, group_size).symbol,
            (
                tensor([rows, cols // per_word], "ui32"),
                tensor([rows, cols // group_size], "bf16"),
                tensor([rows, cols // group_size], "bf16"),
            ),
            (tensor([rows, cols], "bf16"),),
        )
        return self._add(
            "affine_dequant.mlir.j2",
            func,
            rows=rows,
            cols=cols,
            bits=bits,
            group_size=group_size,
            per_word=per_word,
            groups=cols // group_size,
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

    # ------------------------------------------------------------------ dense layers
    def linear(
        self,
        lead: Sequence[int],
        k: int,
        out: int,
        w_dtype: str = "bf16",
        x_dtype: str = "f32",
        kernel_bf16: bool = False,
    ) -> Func:
        """y = round(x @ W^T); `x_dtype` "bf16" takes an input already in the BF16 operand type. A decode step's
        linear calls the decode-linear kernel (`_decode_linear`), a larger one the GEMM kernel where linked.
        With `kernel_bf16`, the GEMM kernel's BF16 result is handed over as it is where the kernel serves the
        shape (an F32 carrier elsewhere)."""
        lead = list(lead)
        n = math.prod(lead)
        gemv = self._decode_linear(n, out, k)
        gemm = None if gemv is not None else self.kernels.launch(GEMM_SM90.call(n, out, k))
        bf16_result = gemm is not None and kernel_bf16
        splits = gemv.call.constant("S") if gemv is not None else None
        spec = Linear(
            tuple(lead),
            k,
            out,
            self.contract.operand_dtype,
            x_dtype,
            kernel=gemm is not None or gemv is not None,
            bf16_result=bf16_result,
            widened=self.widened,
            splits=splits,
        )
        y = tensor(lead + [out], self.contract.operand_dtype) if bf16_result else f32(lead + [out])
        func = Func(spec.symbol, (tensor(lead + [k], x_dtype), tensor([out, k], w_dtype)), (y,))
        kernel = {"gemv": gemv, "splits": splits} if gemv is not None else {"gemm": gemm, "bf16_result": bf16_result}
        return self._add(
            "linear.gemv.mlir.j2" if gemv is not None else template_variant("linear", gemm is not None),
            func,
            lead=lead,
            n=n,
            k=k,
            out=out,
            w_dtype=w_dtype,
            x_dtype=x_dtype,
            **kernel,
        )

    def _decode_linear(self, rows: int, out: int, k: int) -> Launch | None:
        """The decode-linear kernel's launch for a linear of `rows` rows: none in the audio stages, whose
        linears are prompt-sized (their few-row ones, the attention's relative positions, keep the GEMM, whose
        BF16 result the attention kernel reads); the decoder's emitter serves its decode steps with it."""
        return None

    @staticmethod
    def _carrier(producer: Func, lead: Sequence[int], width: int) -> str:
        """The dtype `producer` hands its [*lead, width] result over in: BF16 from a kernel, else F32."""
        return "bf16" if producer.result_types[0] == tensor(list(lead) + [width], "bf16") else "f32"

    def _linear_reading(self, producer: Func, lead: Sequence[int], k: int, out: int, kernel_bf16: bool = False) -> Func:
        """The linear layer that reads `producer`'s result, in whatever carrier it hands over (F32 or BF16)."""
        return self.linear(lead, k, out, x_dtype=self._carrier(producer, lead, k), kernel_bf16=kernel_bf16)

    def _linear_feeding(
        self, launch: Launch | None, producer: Func, lead: Sequence[int], k: int, out: int
    ) -> tuple[Launch | None, Func]:
        """The linear layer reading `producer` whose result the kernel `launch` reads as BF16, and that
        launch; the launch becomes None where the GEMM kernel does not serve the shape (the linear's
        result is then an F32 carrier, which only IREE's code for the op takes)."""
        linear = self._linear_reading(producer, lead, k, out, kernel_bf16=launch is not None)
        return (launch if self._carrier(linear, lead, out) == "bf16" else None), linear

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

    # ------------------------------------------------------------------ prefill: merge + dense per-layer inputs
    def mlx_rms_norm(self, rows: int, d: int, eps: float, w_dtype: str = "bf16") -> Func:
        """MLX fast rms_norm on [rows, d]: two rounding points (x * inv, then * w); 8-read lane/XOR sum."""
        sumsq = self.lane_xor_sum(rows, d, reads=8, square=True)
        func = Func(MlxRmsNorm(rows, d).symbol, (f32([rows, d]), tensor([d], w_dtype)), (f32([rows, d]),))
        return self._add(
            "mlx_rms_norm.mlir.j2", func, calls=[sumsq], n=rows, d=d, eps=eps, w_dtype=w_dtype, sumsq=sumsq
        )

    def token_merge(self, cap: int, hidden: int, audio_vocab: int, audio_offset: int, audio_rows: int) -> Func:
        """Scaled text rows, hard audio rows for audio-vocabulary ids, soft rows at placeholders, zero tail."""
        from ..contracts.emulation import contract_scalar

        audio_args = (f32([audio_rows, hidden]), tensor([cap], "i32")) if audio_rows else ()
        func = Func(
            TokenMerge(cap, hidden, audio_rows).symbol,
            (
                tensor([cap], "i32"),
                tensor([cap, hidden], "bf16"),
                f32([audio_vocab, hidden]),
                *audio_args,
                tensor([], "i32"),
            ),
            (f32([cap, hidden]),),
        )
        return self._add(
            "token_merge.mlir.j2",
            func,
            cap=cap,
            h=hidden,
            vocab=audio_vocab,
            offset=audio_offset,
            audio=audio_rows,
            embed_scale=float(contract_scalar(self.contract, hidden**0.5)),
        )

    def dense_ple(self, cap: int, hidden: int, layers: int, per_layer: int, eps: float, w_dtype: str = "bf16") -> Func:
        """The dense per-layer inputs [cap, layers, per_layer] from the merged embeddings and host-gathered rows."""
        from ..contracts.emulation import contract_scalar

        p = layers * per_layer
        linear = self.linear([cap], hidden, p, w_dtype)
        norm = self.mlx_rms_norm(cap * layers, per_layer, eps, w_dtype)
        func = Func(
            DensePle(cap, hidden, layers, per_layer).symbol,
            (
                f32([cap, hidden]),
                tensor([cap, p], "bf16"),
                tensor([p, hidden], w_dtype),
                tensor([per_layer], w_dtype),
                tensor([], "i32"),
            ),
            (f32([cap, layers, per_layer]), f32([cap, p])),
        )
        c = self.contract
        return self._add(
            "dense_ple.mlir.j2",
            func,
            calls=[linear, norm],
            cap=cap,
            h=hidden,
            layers=layers,
            pd=per_layer,
            p=p,
            w_dtype=w_dtype,
            linear=linear,
            norm=norm,
            tok_scale=float(contract_scalar(c, per_layer**0.5)),
            proj_scale=float(contract_scalar(c, hidden**-0.5)),
            in_scale=float(contract_scalar(c, 2.0**-0.5)),
        )
