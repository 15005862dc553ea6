"""One builder per op family: choose the specialisation, name it, render its template once.

Every method returns a `Func` (symbol + call signature) so that callers, and the templates that call
them, never restate another op's types.  Symbols encode the specialisation
(`rms_norm_N750_D1536_scaled`), so a shape used twice is rendered once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..contracts.emulation import lane_threads
from ..contracts.policy import NumericContract
from .render import Func, ModuleBuilder, tensor_type as tensor


def f32(shape: Sequence[int]) -> str:
    return tensor(shape, "f32")


def _dims(shape: Sequence[int]) -> str:
    return "x".join(str(d) for d in shape)


@dataclass
class OpEmitter:
    """Renders op-family templates into `module` under numeric contract `contract`."""

    module: ModuleBuilder
    contract: NumericContract

    def _add(self, template: str, func: Func, calls: Sequence[Func] = (), **params: object) -> Func:
        return self.module.add(template, func, calls, c=self.contract, **params)

    # ------------------------------------------------------------------ reduction schedules
    def lane_xor_sum(self, rows: int, width: int, reads: int, square: bool = False) -> Func:
        threads = lane_threads(width, reads)
        symbol = f"lane_xor_sum_R{rows}_W{width}_X{reads}{'_sq' if square else ''}"
        func = Func(symbol, (f32([rows, width]),), (f32([rows]),))
        return self._add("lane_xor_sum.mlir.j2", func, rows=rows, width=width, reads=reads, threads=threads,
                         square=square)

    def prefix_scan(self, rows: int, width: int) -> Func:
        padded = -(-width // 128) * 128
        if padded > 4096:
            raise ValueError(f"the one-block prefix scan supports at most 4096 values per row, got {width}")
        func = Func(f"prefix_scan_R{rows}_W{width}", (f32([rows, width]),), (f32([rows, width]),))
        return self._add("prefix_scan.mlir.j2", func, rows=rows, width=width, padded=padded,
                         threads=padded // 4, warps=padded // 128)

    # ------------------------------------------------------------------ quantization
    def affine_dequant(self, rows: int, cols: int, bits: int, group_size: int) -> Func:
        if bits not in (4, 8):
            raise ValueError(f"affine dequantization supports 4 or 8 bits, got {bits}")
        if cols % group_size or (cols * bits) % 32:
            raise ValueError(f"{cols} columns do not split into groups of {group_size} / 32-bit words")
        per_word = 32 // bits
        func = Func(f"affine_dequant_{rows}x{cols}_b{bits}_g{group_size}",
                    (tensor([rows, cols // per_word], "ui32"), tensor([rows, cols // group_size], "bf16"),
                     tensor([rows, cols // group_size], "bf16")),
                    (tensor([rows, cols], "bf16"),))
        return self._add("affine_dequant.mlir.j2", func, rows=rows, cols=cols, bits=bits, group_size=group_size,
                         per_word=per_word, groups=cols // group_size)

    # ------------------------------------------------------------------ masks and the mel boundary
    def valid_mask(self, clips: int, frames: int, stride: int) -> Func:
        func = Func(f"valid_mask_B{clips}_T{frames}_S{stride}", (tensor([clips], "i32"),),
                    (tensor([clips, frames], "i1"),))
        return self._add("valid_mask.mlir.j2", func, b=clips, t=frames, stride=stride)

    def mask_frames(self, shape: Sequence[int]) -> Func:
        shape = list(shape)
        func = Func(f"mask_frames_{_dims(shape)}", (f32(shape), tensor(shape[:2], "i1")), (f32(shape),))
        return self._add("mask_frames.mlir.j2", func, shape=shape)

    def mel_boundary(self, clips: int, frames: int, mel: int) -> Func:
        func = Func(f"mel_boundary_B{clips}_T{frames}_M{mel}", (f32([clips, frames, mel]),),
                    (f32([clips, frames, mel, 1]),))
        return self._add("mel_boundary.mlir.j2", func, b=clips, t=frames, mel=mel)

    # ------------------------------------------------------------------ SSCP
    def sscp_conv(self, clips: int, frames: int, freq: int, cin: int, cout: int, kernel: tuple[int, int],
                  stride: tuple[int, int], weight_layout: str, w_dtype: str = "bf16") -> Func:
        kt, kf = kernel
        to, fo = (frames - 1) // stride[0] + 1, (freq + 2 - kf) // stride[1] + 1
        if weight_layout == "oihw":  # transformers: [out, in, kt, kf]
            w_shape, to_hwio = [cout, cin, kt, kf], [2, 3, 1, 0]
        elif weight_layout == "ohwi":  # mlx: [out, kt, kf, in]
            w_shape, to_hwio = [cout, kt, kf, cin], [1, 2, 3, 0]
        else:
            raise ValueError(f"unknown convolution weight layout {weight_layout!r}")
        result = self.contract.sscp_conv_result_dtype
        func = Func(f"sscp_conv_B{clips}_T{frames}_F{freq}_C{cin}x{cout}_S{stride[0]}x{stride[1]}_I{self.contract.operand_dtype}"
                    f"_R{result}_{weight_layout}", (f32([clips, frames, freq, cin]), tensor(w_shape, w_dtype)),
                    (f32([clips, to, fo, cout]),))
        return self._add("sscp_conv.mlir.j2", func, b=clips, t=frames, f=freq, cin=cin, cout=cout, kt=kt, kf=kf,
                         to=to, fo=fo, stride=list(stride), w_shape=w_shape, w_dtype=w_dtype, to_hwio=to_hwio,
                         result_dtype=result)

    def cumulative_group_norm(self, clips: int, frames: int, freq: int, channels: int, eps: float,
                              w_dtype: str = "bf16") -> Func:
        sum_channels = self.lane_xor_sum(clips * frames * freq, channels, reads=4)
        sum_freq = self.lane_xor_sum(clips * frames, freq, reads=4)
        scan = self.prefix_scan(clips, frames)
        x = f32([clips, frames, freq, channels])
        stat = f32([clips, frames])
        func = Func(f"cumulative_group_norm_B{clips}_T{frames}_F{freq}_C{channels}", (x, tensor([channels], w_dtype)),
                    (x,) + (stat,) * 8)
        return self._add("cumulative_group_norm.mlir.j2", func, calls=[sum_channels, sum_freq, scan], b=clips,
                         t=frames, f=freq, ch=channels, eps=eps, w_dtype=w_dtype, sum_channels=sum_channels,
                         sum_freq=sum_freq, scan=scan)

    # ------------------------------------------------------------------ dense layers
    def linear(self, lead: Sequence[int], k: int, out: int, w_dtype: str = "bf16") -> Func:
        lead = list(lead)
        n = 1
        for d in lead:
            n *= d
        func = Func(f"linear_{_dims(lead)}_K{k}_N{out}_I{self.contract.operand_dtype}",
                    (f32(lead + [k]), tensor([out, k], w_dtype)), (f32(lead + [out]),))
        return self._add("linear.mlir.j2", func, lead=lead, n=n, k=k, out=out, w_dtype=w_dtype)

    def rms_norm(self, lead: Sequence[int], d: int, eps: float, scaled: bool = True, w_dtype: str = "bf16") -> Func:
        lead = list(lead)
        n = 1
        for dim in lead:
            n *= dim
        sumsq = self.lane_xor_sum(n, d, reads=8, square=True)
        args = (f32(lead + [d]),) + ((tensor([d], w_dtype),) if scaled else ())
        func = Func(f"rms_norm_{_dims(lead)}_D{d}_{'scaled' if scaled else 'noscale'}", args, (f32(lead + [d]),))
        return self._add("rms_norm.mlir.j2", func, calls=[sumsq], lead=lead, n=n, d=d, eps=eps, scaled=scaled,
                         w_dtype=w_dtype, sumsq=sumsq)
