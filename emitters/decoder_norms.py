"""The decoder's linear layer, sums and RMS norms: the pieces every decoder op family composes.

`DecoderNormOps` extends the audio stage's `OpEmitter` with the decoder's configuration (`cfg`), its linear (the
GEMM kernel only for prompt-sized rows, the decode-linear kernel for a step's), the block sum and row mean of its
reduction schedule, its MLX-style RMS norm and the norm of a projection; `DecoderOpEmitter`
(emitters/decoder_ops.py: AltUp, attention, MLP, head, embedding, token selection) builds on it.

Why a module of its own: these are the decoder's shared vocabulary, kept apart from the layer families that use
them so each file reads as one level of the decoder.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from ..contracts import decoder_ops as D
from ..contracts.decoder_policy import MEAN_READS
from ..contracts.emulation import contract_scalar, lane_threads
from ..kernels import GEMM_SM90, Launch, gemv_call, gemv_group_call, partial_norm_call, scaled_gemv_call
from ..model.decoder_config import DecoderConfig
from .decoder_kernels import LayerKernels
from .kernels import LinkedKernels, bf16_rounding
from .ops import OpEmitter
from .render import Func
from .render import tensor_type as tensor
from .shared_ops import f32
from .specialisations import (
    BlockSum,
    DecodeLinears,
    MlxRmsNorm,
    PartialsSum,
    ProjectedNorm,
    RowMean,
    ScaledLinear,
)

BF16 = "bf16"


#: The linked GEMM kernel serves linears of at least this many rows (a prompt's): its tiles are 128 rows, so a
#: decode step's few rows would leave almost all of each tile empty and use a handful of SMs (they call the
#: decode-linear kernel where it covers the shape, IREE's code elsewhere).
GEMM_MIN_ROWS = 64


def bf16_tensor(shape: list[int] | tuple[int, ...]) -> str:
    return tensor(list(shape), BF16)


def carrier(norm: Func) -> str:
    """The dtype a norm's result travels in: BF16 from the kernel that feeds a linear, else F32."""
    return BF16 if norm.result_types[0].endswith("xbf16>") else "f32"


@dataclass
class DecoderNormOps(OpEmitter):
    """Renders the decoder's linear, sums and norms; `cfg` supplies eps, widths and the AltUp layout."""

    cfg: DecoderConfig | None = None

    @property
    def _cfg(self) -> DecoderConfig:
        assert self.cfg is not None, "DecoderOpEmitter needs the decoder configuration"
        return self.cfg

    def _scalar(self, value: float) -> float:
        return float(contract_scalar(self.contract, value))

    def linear(
        self, lead, k: int, out: int, w_dtype: str = "bf16", x_dtype: str = "f32", kernel_bf16: bool = False
    ) -> Func:
        """`OpEmitter.linear`; the GEMM kernel (where linked) only for prefill-sized linears (`GEMM_MIN_ROWS`), so
        whether a linear calls it is a function of its shape, as its symbol says."""
        if math.prod(lead) >= GEMM_MIN_ROWS or not self.kernels.links(GEMM_SM90.file):
            return super().linear(lead, k, out, w_dtype, x_dtype, kernel_bf16)
        without_gemm = LinkedKernels(
            tuple(f for f in self.kernels.files if f.stem != GEMM_SM90.file.stem), self.kernels.complete
        )
        return OpEmitter.linear(
            dataclasses.replace(self, kernels=without_gemm), lead, k, out, w_dtype, x_dtype, kernel_bf16
        )

    @property
    def _layer_kernels(self) -> LayerKernels:
        """Which committed kernels serve this program's layer families (emitters/decoder_kernels.py)."""
        return LayerKernels(self.kernels, self.contract, self._cfg)

    def _decode_linear(self, rows: int, out: int, k: int) -> Launch | None:
        """A decode step's linear (up to 64 rows) in the decode-linear kernel, where linked and it covers the
        shape (`kernels/gemv.py`)."""
        return self.kernels.launch(gemv_call(rows, out, k))

    def decode_linears(self, tokens: int, k: int, outs: tuple[int, ...], x_dtype: str = "f32") -> Func | None:
        """The partial sums of a decode step's linears of one input (`outs` outputs each) in one launch of a
        decode-linear group file (`kernels/gemv.py` `GemvGroupKernel`), where one is linked and covers them;
        None: each stays its own launch. Each member's partials are its own launch's bits."""
        launch = self.kernels.launch(gemv_group_call(tokens, outs, k))
        if launch is None:
            return None
        splits = launch.call.constant("S")
        func = Func(
            DecodeLinears(tokens, k, outs, splits, x_dtype).symbol,
            (tensor([tokens, k], x_dtype), *(bf16_tensor([n, k]) for n in outs)),
            tuple(f32([splits, tokens, n]) for n in outs),
        )
        shape = dict(tokens=tokens, k=k, outs=list(outs), splits=splits, x_dtype=x_dtype)
        return self._add("decode_linears.kernel.mlir.j2", func, gemv=launch, results=func.result_types, **shape)

    def scaled_linear(self, tokens: int, k: int, out: int, point: str) -> Func | None:
        """round(round(x * s) @ W^T) (x F32 [tokens, k], s a BF16 scale per input rounded at `point`) at a decode
        step in one launch of the decode-linear kernel's scaled entry, where linked and it covers the shape; None:
        the scaling stays IREE's elementwise dispatch before the linear."""
        launch = self.kernels.launch(scaled_gemv_call(tokens, out, k, self.contract.rounds_at(point)))
        if launch is None:
            return None
        splits = launch.call.constant("S")
        total = self.partials_sum(splits, tokens, out)
        func = Func(
            ScaledLinear(tokens, k, out, splits).symbol,
            (f32([tokens, k]), bf16_tensor([k]), bf16_tensor([out, k])),
            (f32([tokens, out]),),
        )
        shape = dict(tokens=tokens, k=k, out=out, splits=splits)
        return self._add("scaled_linear.kernel.mlir.j2", func, calls=[total], gemv=launch, total=total, **shape)

    def partials_sum(self, splits: int, tokens: int, out: int) -> Func:
        """A decode linear from its partial sums (`decode_linears`): `linear.gemv.mlir.j2`'s sum and rounding."""
        func = Func(PartialsSum(splits, tokens, out).symbol, (f32([splits, tokens, out]),), (f32([tokens, out]),))
        return self._add("partials_sum.mlir.j2", func, splits=splits, tokens=tokens, out=out)

    # ------------------------------------------------------------------ reductions and norms
    def block_sum(self, rows: int, width: int, reads: int) -> Func:
        """`decoder_ops.block_sum`: the lane/XOR sum when the row fits one block, else passes of 1024 threads."""
        threads, passes = D.block_schedule(width, reads)
        if passes == 1:
            return self.lane_xor_sum(rows, width, reads)
        lanes = self.lane_xor_sum(rows, passes * threads * reads, passes * reads)
        func = Func(BlockSum(rows, width, reads).symbol, (f32([rows, width]),), (f32([rows]),))
        return self._add(
            "block_sum.mlir.j2",
            func,
            calls=[lanes],
            rows=rows,
            width=width,
            reads=reads,
            threads=threads,
            passes=passes,
            lanes=lanes,
        )

    def row_mean(self, rows: int, width: int) -> Func:
        total = self.block_sum(rows, width, MEAN_READS)
        func = Func(RowMean(rows, width).symbol, (f32([rows, width]),), (f32([rows]),))
        return self._add(
            "row_mean.mlir.j2",
            func,
            calls=[total],
            rows=rows,
            width=width,
            reads=MEAN_READS,
            total=total,
            scale=self._scalar(1.0 / width),
        )

    def norm(self, rows: int, d: int, feeds_linear: bool = False) -> Func:
        """The decoder's RMS norm (MLX fast rms_norm, two rounding points): the prefill stage's `mlx_rms_norm`, or
        the same arithmetic in one dispatch of the RMS-norm kernel's MLX variant where it is linked (IREE's code
        takes two: the lane sum, then the normalization). With `feeds_linear` under a contract whose linears read
        BF16 values, the kernel hands its (BF16-valued) result over as BF16 (`carrier` tells which)."""
        eps = self._cfg.rms_norm_eps
        output = BF16 if feeds_linear and bf16_rounding(self.contract) else "f32"
        kernel = self._norm_kernel("mlx" if output == "f32" else "mlx_bf16", [rows], d, BF16, eps, None)
        if kernel is None:
            return self.mlx_rms_norm(rows, d, eps)
        func = Func(
            MlxRmsNorm(rows, d, kernel=True, output=output).symbol,
            (f32([rows, d]), bf16_tensor([d])),
            (tensor([rows, d], output),),
        )
        return self._add(
            "rms_norm.kernel.mlir.j2", func, lead=[rows], n=rows, d=d, w_dtype=BF16, result_dtype=output, kernel=kernel
        )

    def _partials_norm(self, rows: int, width: int, splits: int) -> Launch | None:
        """The partials-norm kernel for a decode linear's `splits` partial sums read as [rows, width] (its sum, the
        linear's rounding, the decoder's norm), where linked."""
        rounds = self.contract.rounds_at(None)
        return self.kernels.launch(
            partial_norm_call(lane_threads(width, 8), rows, width, splits, self._cfg.rms_norm_eps, rounds)
        )

    def projected_norm(self, tokens: int, k: int, out: int, groups: int = 1, x_dtype: str = "f32") -> Func:
        """norm(round(x @ W^T)) on [tokens * groups, out / groups] (a linear whose only reader is the decoder's
        norm: q/k/v per head, the output projection, the MLP's down-projection, the per-layer projection). A
        decode linear the decode-linear kernel serves hands its partial sums to the partials-norm kernel, which
        adds them, rounds and normalizes in one dispatch; elsewhere it is the linear, then the norm. `x_dtype`:
        the input's carrier (BF16 from a norm kernel that feeds the linear)."""
        width, rows = out // groups, tokens * groups
        gemv = self._decode_linear(tokens, out, k)
        splits = gemv.call.constant("S") if gemv is not None else None
        norm_kernel = self._partials_norm(rows, width, splits) if gemv is not None else None
        spec = ProjectedNorm(tokens, k, out, groups, kernel=norm_kernel is not None, x_dtype=x_dtype)
        x = tensor([tokens, k], x_dtype)
        func = Func(spec.symbol, (x, bf16_tensor([out, k]), bf16_tensor([width])), (f32([rows, width]),))
        shape = dict(tokens=tokens, k=k, out=out, rows=rows, width=width, x_dtype=x_dtype)
        if norm_kernel is None:
            linear, norm = self.linear([tokens], k, out, x_dtype=x_dtype), self.norm(rows, width)
            return self._add("projected_norm.mlir.j2", func, calls=[linear, norm], linear=linear, norm=norm, **shape)
        return self._add(
            "projected_norm.kernel.mlir.j2", func, gemv=gemv, splits=splits, norm_kernel=norm_kernel, **shape
        )
