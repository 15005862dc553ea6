"""Which form an op family is written in for a target, where IREE 3.13 compiles one form far better on that
target and the other form is the one proven elsewhere. Both forms compute what the contract says; only the
order in which a contraction's F32 sum accumulates differs (inside the accumulation envelope,
contracts/envelope.py).

The SSCP convolutions (BF16 operands into an F32 result): on llvm-cpu IREE 3.13 lowers a mixed-type
`stablehlo.convolution` to loops it does not vectorise (the second SSCP convolution of a 30 s clip ran at
3 GFLOP/s on a 2-core Zen 5: 560 ms, more than a third of the whole encoder once the linears are
data-tiled), and neither its experimental convolution data tiling nor its img2col pass helps (the first
ran as slowly, the second fails to compile mixed types at the tiny shapes). Written as an im2col matmul
(`sscp_conv.im2col.mlir.j2`), the convolution is data-tiled like every linear: 45 ms (BENCHMARKS.md, "The
CPU path"). CUDA keeps the convolution, the form every H200 parity run was made with, and so does the
diagnostic contract whose SSCP convolutions have BF16 results: its evidence is what a backend does with a
BF16-result convolution (it accumulates in BF16), where a BF16-result matmul on llvm-cpu accumulates in F32.
"""

from __future__ import annotations

from ..contracts.policy import NumericContract
from .targets import Target

CONVOLUTION = "convolution"
IM2COL = "im2col"
CONV_LOWERINGS: tuple[str, ...] = (CONVOLUTION, IM2COL)


def conv_lowering(target: Target, contract: NumericContract) -> str:
    """The form of the SSCP convolutions for `target` under `contract`: im2col on llvm-cpu (F32 results), the
    convolution on cuda and for BF16-result convolutions."""
    return IM2COL if target.is_cpu and contract.sscp_conv_result_dtype == "f32" else CONVOLUTION


def check_conv_lowering(name: str) -> str:
    """`name` if it is a known form of the SSCP convolutions, else a ValueError naming the choices."""
    if name not in CONV_LOWERINGS:
        raise ValueError(f"unknown convolution lowering {name!r}; choose one of {', '.join(CONV_LOWERINGS)}")
    return name
