"""Which GEMM implementation a module's linear layers use on a target.

IREE 3.13's CUDA code generation emits Ampere `mma.sync` kernels that reach 85-140 TFLOP/s on an
H200 (notes B.6/B.7). On Hopper the linear layers can instead call a committed wgmma kernel
(`kernels/`) through IREE's custom dispatch (`hal.dispatch.extern`); the module stays one
self-contained `.vmfb` because the compiler embeds the kernel's PTX. The kernel implements exactly
the contract's linear (BF16 operands, F32 accumulation, one BF16 rounding), so it is only eligible
under a contract with BF16 operands that rounds there; everything else keeps IREE's own dot.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..contracts.policy import NumericContract
from ..kernels import GEMM_SM90, GemmKernel
from .targets import Target

#: "auto": the Hopper kernel wherever it applies; "iree": IREE's code generation everywhere.
GEMM_CHOICES: tuple[str, ...] = ("auto", "iree", GEMM_SM90.name)
HOPPER_ARCHS = ("sm_90", "sm_90a")


class GemmChoiceError(ValueError):
    """A GEMM implementation was requested for a target or contract it cannot serve."""


@dataclass(frozen=True)
class LinkedGemm:
    """A committed kernel as the linear template needs it (verified path and content hash)."""

    kernel: GemmKernel
    ptx_path: str
    ptx_sha256: str

    @property
    def identity(self) -> str:
        return f"{self.kernel.name}@{self.ptx_sha256[:16]}"

    def launch(self, rows: int, cols: int) -> dict[str, object]:
        """What the `extern_gemm` macro needs to dispatch C[rows, cols]."""
        return {"entry": self.kernel.entry, "ptx": self.ptx_path, "threads": self.kernel.threads,
                "shared": self.kernel.shared_bytes, "workgroups": self.kernel.workgroups(rows, cols)}


def gemm_identity(gemm: LinkedGemm | None) -> str:
    """How a module records its GEMM implementation (cache identity, entry reflection)."""
    return gemm.identity if gemm is not None else "iree"


def _why_not(target: Target, contract: NumericContract) -> str | None:
    if not target.is_cuda or target.cuda_arch not in HOPPER_ARCHS:
        return f"it is a Hopper (sm_90) kernel and the target is {target}"
    if contract.operand_dtype != "bf16" or not contract.rounds_at(None):
        return f"contract {contract.name} does not use BF16 operands with a BF16 rounding after each linear"
    return None


def select_gemm(choice: str, target: Target, contract: NumericContract) -> LinkedGemm | None:
    """The kernel the linear layers call, or None for IREE's own dot_general."""
    if choice not in GEMM_CHOICES:
        raise GemmChoiceError(f"unknown GEMM implementation {choice!r}; choose one of {', '.join(GEMM_CHOICES)}")
    if choice == "iree":
        return None
    reason = _why_not(target, contract)
    if reason is not None:
        if choice == "auto":
            return None
        raise GemmChoiceError(f"--gemm {choice} is not available: {reason}")
    kernel = GEMM_SM90
    return LinkedGemm(kernel, str(kernel.ptx_path()), kernel.ptx_sha256())
