"""How a module's ops are written for a target, where IREE 3.13 compiles one form far better on that target and
the other form is the one proven elsewhere. Every form computes what the contract says; only the order in which
a contraction's F32 sum of exact products accumulates differs (inside the accumulation envelope,
contracts/envelope.py). BENCHMARKS.md, "The CPU path", has the measurements.

* **The SSCP convolutions** (BF16 operands into an F32 result). On llvm-cpu IREE 3.13 lowers a mixed-type
  `stablehlo.convolution` to loops it does not vectorise (the second SSCP convolution of a 30 s clip: 3 GFLOP/s
  on a 2-core Zen 5, 560 ms, more than a third of the encoder once the linears are data-tiled); neither its
  experimental convolution data tiling nor its img2col pass helps (the first ran as slowly, the second fails to
  compile mixed types at the tiny shapes). As an im2col matmul (`sscp_conv.im2col.mlir.j2`) it is data-tiled
  like every linear: its SSCP block 616 -> 62 ms. CUDA keeps the convolution, the form every H200 parity run
  was made with, and so does the diagnostic contract whose convolutions have BF16 results: its evidence is what
  a backend does with a BF16-result convolution (it accumulates in BF16), where a BF16-result matmul on
  llvm-cpu accumulates in F32.
* **The type a BF16 contraction reads.** llvm-cpu's data tiling (emitters/targets.py) packs a BF16 matmul for
  the CPU's BF16 dot-product instruction (x86 AVX512-BF16, Arm BF16); on a CPU without one IREE 3.13 lowers the
  packed BF16 tiles to code 30x slower than no data tiling (2.6 against 75-90 GFLOP/s compiled for Skylake-AVX512
  or Zen 3). There the operands, rounded to BF16 as the contract says, are widened to F32 (exactly: every BF16
  value is an F32 value) and the dot runs on F32 tiles (170-320 GFLOP/s): the same products, summed in F32.
* **Where a multiply and the add that reads it are kept apart.** The contract rounds a product before it is
  added; a backend that contracts the pair into one fused multiply-add rounds once. IREE 3.13's llvm-cpu code
  marks F32 arithmetic `contract` (x86 then emits `vfmadd`), so there a product the contract rounds on its own
  is materialised behind an optimization barrier. Its CUDA code does not: every F32 multiply and add is emitted
  as `mul.rn.f32` / `add.rn.f32`, whose explicit rounding forbids ptxas to fuse them (tests/test_fma_free.py
  holds the PTX to that). There the barrier is pure cost: a `util.optimization_barrier` ends the stream's
  execution region and the host waits for the device at each one (four a decoder layer from AltUp, 140 host
  round trips in an E4B decode step), so on cuda the pair is written plainly.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..contracts.policy import NumericContract
from .targets import Target

CONVOLUTION = "convolution"
IM2COL = "im2col"
CONV_LOWERINGS: tuple[str, ...] = (CONVOLUTION, IM2COL)

#: The CPU features (LLVM's names, as `compile.cpu_features` reads them) of a BF16 dot-product instruction that
#: IREE 3.13's data-tiled BF16 matmuls use: x86's `vdpbf16ps`, Arm's `bfdot`/`bfmmla`.
BF16_DOT_FEATURES = frozenset({"+avx512bf16", "+bf16"})


@dataclass(frozen=True)
class Lowering:
    """The forms a module is written in. `conv`: the SSCP convolutions' (`CONV_LOWERINGS`); `widen_bf16`: BF16
    contraction operands are read by the dot as F32 (a CPU without a BF16 dot instruction); `unfused_mul_add`:
    the backend rounds an F32 multiply and the add that reads it separately, so no barrier keeps them apart."""

    conv: str = CONVOLUTION
    widen_bf16: bool = False
    unfused_mul_add: bool = False

    def __post_init__(self) -> None:
        if self.conv not in CONV_LOWERINGS:
            raise ValueError(f"unknown convolution lowering {self.conv!r}; choose one of {', '.join(CONV_LOWERINGS)}")

    @property
    def identity(self) -> str:
        """Names the forms (module identities)."""
        return (
            f"conv={self.conv}"
            + (":dots=f32" if self.widen_bf16 else "")
            + (":mul-add=rn" if self.unfused_mul_add else "")
        )

    def dot_dtype(self, contract: NumericContract) -> str:
        """The operand type a contraction's dot reads under `contract`."""
        return "f32" if self.widen_bf16 else contract.operand_dtype


#: The forms every module had before llvm-cpu was tuned (a barrier between each kept product and its add).
DEFAULT_LOWERING = Lowering()
#: What IREE compiles well on cuda: the defaults, without the barriers its `.rn` arithmetic does not need.
CUDA_LOWERING = Lowering(unfused_mul_add=True)


def lowering_for(target: Target, contract: NumericContract) -> Lowering:
    """The forms for `target` under `contract`: on llvm-cpu the SSCP convolutions as im2col matmuls (F32 results)
    and, on a CPU without a BF16 dot instruction, BF16 operands widened to F32 at the dot; on cuda
    `CUDA_LOWERING`."""
    if not target.is_cpu:
        return CUDA_LOWERING
    from .compile import cpu_features

    return Lowering(
        conv=IM2COL if contract.sscp_conv_result_dtype == "f32" else CONVOLUTION,
        widen_bf16=contract.operand_dtype == "bf16" and not (BF16_DOT_FEATURES & cpu_features(target)),
    )
