"""Which committed GPU kernels a module links on a target (`--kernels`).

IREE 3.13's CUDA code generation emits Ampere `mma.sync` GEMMs that reach 85-140 TFLOP/s on an H200
(notes B.6/B.7), and splits each pinned 32-lane XOR sum into about a dozen dispatches, one per
butterfly level. On Hopper the emitters can instead call committed kernels (`kernels/`) through
IREE's custom dispatch (`hal.dispatch.extern`); the module stays one self-contained `.vmfb` because
the compiler embeds each kernel's PTX. Each kernel computes exactly what the template it replaces
computes:

- the GEMM: the contract's linear (BF16 operands, F32 accumulation, one BF16 rounding), so it is
  only linked under a contract with BF16 operands that rounds there;
- the lane sums and RMS norms: the contract's reduction schedule and the norm's arithmetic, the same
  operations in the same order: they serve every contract;
- the attention's core (products, relative shift, soft cap, mask, softmax, P.V): the contract's
  matmuls (BF16 operands, F32 accumulation) and, between them, the template's elementwise
  operations and pinned sum with IREE's own exp and tanh, so only under a contract with BF16
  operands that rounds after each op; it hands its result to the output projection as BF16;
- the light convolution's GLU and depthwise taps, its norm with the SiLU after it, and the
  feed-forward's SiLU: the template's elementwise arithmetic with IREE's own exp, under the same
  contracts as the attention;

A shape a kernel does not cover keeps IREE's code; the function's symbol says which (`_Ksm90`). What each
kernel takes, covers and launches is its specification in `kernels/` (`KernelCall`); a module links a
set of verified files (`LinkedKernels`), and a call becomes a `Launch` where its file is linked.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from ..contracts.policy import NumericContract
from ..kernels import KERNEL_FILES, KernelCall, KernelFile, Launch, VerifiedKernel
from .targets import Target

KERNEL_SET = "triton-sm90"
#: "auto": the Hopper kernels wherever they apply; "iree": IREE's code generation everywhere.
KERNEL_CHOICES: tuple[str, ...] = ("auto", "iree", KERNEL_SET)
HOPPER_ARCHS = ("sm_90", "sm_90a")
KERNELS_HELP = (
    "Committed GPU kernels: auto = on cuda sm_90, the Hopper kernels for every pinned 32-lane sum "
    "and RMS norm and, under a BF16 contract, the wgmma GEMM for the linear layers, the attention "
    "core, the light convolution's GLU and taps and the SiLU; IREE's own code generation "
    "elsewhere; iree = always IREE's; triton-sm90 = require all of them."
)


class KernelChoiceError(ValueError):
    """Kernels were requested for a target or contract they cannot serve."""


@dataclass(frozen=True)
class LinkedKernels:
    """The verified kernel files a module links, in the registry's order (none: IREE's code generation
    everywhere). `complete`: every file of the set, rather than only those that serve every contract."""

    files: tuple[VerifiedKernel, ...] = ()
    complete: bool = False
    _by_stem: dict[str, VerifiedKernel] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_stem", {f.stem: f for f in self.files})

    @property
    def identity(self) -> str:
        """Names the set and hashes every linked file (cache identity, entry reflection)."""
        if not self.files:
            return "iree"
        digest = hashlib.sha256("".join(f.sha256 for f in self.files).encode()).hexdigest()
        return f"{KERNEL_SET}{'' if self.complete else '-row-kernels-only'}@{digest[:16]}"

    def links(self, file: KernelFile) -> bool:
        return file.stem in self._by_stem

    def launch(self, call: KernelCall | None) -> Launch | None:
        """`call` on its linked file, or None where IREE's code does the op (no call: a shape the kernel
        does not cover; or its file not linked)."""
        if call is None or call.file.stem not in self._by_stem:
            return None
        return Launch(self._by_stem[call.file.stem], call)


#: No kernel: IREE's own code generation everywhere.
IREE_CODEGEN = LinkedKernels()


def _why_not_hopper(target: Target) -> str | None:
    if not target.is_cuda or target.cuda_arch not in HOPPER_ARCHS:
        return f"they are Hopper (sm_90) kernels and the target is {target}"
    return None


def bf16_rounding(contract: NumericContract) -> bool:
    """BF16 operands and a BF16 rounding after each op: what the GEMM (and every `bf16_rounding_only`
    kernel) implements, and when a matmul operand is a BF16 value a kernel may hand over as BF16."""
    return contract.operand_dtype == "bf16" and contract.rounds_at(None)


def select_kernels(choice: str, target: Target, contract: NumericContract) -> LinkedKernels:
    """The kernels the module links (`IREE_CODEGEN`: none)."""
    if choice not in KERNEL_CHOICES:
        raise KernelChoiceError(f"unknown kernel set {choice!r}; choose one of {', '.join(KERNEL_CHOICES)}")
    if choice == "iree":
        return IREE_CODEGEN
    reason = _why_not_hopper(target)
    if reason is None and choice != "auto" and not bf16_rounding(contract):
        reason = (
            f"contract {contract.name} does not use BF16 operands with a BF16 rounding after each "
            "linear, which the GEMM kernel implements"
        )
    if reason is not None:
        if choice == "auto":
            return IREE_CODEGEN
        raise KernelChoiceError(f"--kernels {choice} is not available: {reason}")
    complete = bf16_rounding(contract)
    return LinkedKernels(tuple(f.verify() for f in KERNEL_FILES if complete or not f.bf16_rounding_only), complete)
