"""The op families every stage's emitter shares, and the rendering under the contract they all go through:
the lane sums, affine dequantization, the linear layer (with the GEMM and decode-linear kernels where linked),
and the prefill stage's merge, MLX RMS norm and dense per-layer inputs, which the decoder reuses.

Why a module of its own: `OpEmitter` (emitters/ops.py: the audio tower's families and their composition) and
`DecoderOpEmitter` (emitters/decoder_ops.py) both build on these, unchanged, so they are written once here
below both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..contracts.emulation import lane_threads
from ..contracts.policy import NumericContract
from ..kernels import (
    GEMM_SM90,
    Launch,
    lane_sum_call,
)
from .kernels import IREE_CODEGEN, LinkedKernels
from .lowering import DEFAULT_LOWERING, Lowering
from .render import Func, ModuleBuilder
from .render import tensor_type as tensor
from .specialisations import (
    AffineDequant,
    DensePle,
    LaneXorSum,
    Linear,
    MlxRmsNorm,
    TokenMerge,
)


def f32(shape: Sequence[int]) -> str:
    return tensor(shape, "f32")


def template_variant(name: str, kernel: bool) -> str:
    """The template of `name` (an op, or a part of one) that calls a linked kernel, or IREE's own code."""
    return f"{name}.kernel.mlir.j2" if kernel else f"{name}.mlir.j2"


def hex_blob(values: np.ndarray) -> str:
    """Little-endian F32 bytes as an MLIR dense hex literal: bit-exact and compact."""
    return "0x" + np.ascontiguousarray(values, dtype="<f4").tobytes().hex().upper()


@dataclass
class SharedOps:
    """Renders op-family templates into `module` under numeric contract `contract`: the families every stage
    shares."""

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
