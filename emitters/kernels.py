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

A shape a kernel does not cover keeps IREE's code; the function's symbol says which (`_Ksm90`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..contracts.emulation import lane_threads
from ..contracts.policy import NumericContract
from ..kernels import ATTENTION_SM90, GEMM_SM90, GLU_DEPTHWISE_SM90, SILU_SM90, LANE_SUMS_SM90, RMS_NORMS_SM90, VerifiedKernel
from .targets import Target

KERNEL_SET = "triton-sm90"
#: "auto": the Hopper kernels wherever they apply; "iree": IREE's code generation everywhere.
KERNEL_CHOICES: tuple[str, ...] = ("auto", "iree", KERNEL_SET)
HOPPER_ARCHS = ("sm_90", "sm_90a")
#: RMS-norm variants that round to BF16 at the template's points whatever the contract says: linked
#: only under contracts that do (the others take every contract's rounding flag).
BF16_ROUNDING_NORMS = ("silu_bf16",)
KERNELS_HELP = ("Committed GPU kernels: auto = on cuda sm_90, the Hopper kernels for every pinned 32-lane sum "
                "and RMS norm and, under a BF16 contract, the wgmma GEMM for the linear layers, the attention "
                "core, the light convolution's GLU and taps and the SiLU; IREE's own code generation "
                "elsewhere; iree = always IREE's; triton-sm90 = require all of them.")


class KernelChoiceError(ValueError):
    """Kernels were requested for a target or contract they cannot serve."""


@dataclass(frozen=True)
class LinkedKernels:
    """The verified kernel files a module links, and the launch each call site needs."""

    gemm: VerifiedKernel | None
    lane_sums: dict[int, VerifiedKernel]
    rms_norms: dict[tuple[str, int], VerifiedKernel]
    attention: VerifiedKernel | None
    glu_depthwise: VerifiedKernel | None
    silu: VerifiedKernel | None

    @property
    def identity(self) -> str:
        """Names the set and hashes every linked file (cache identity, entry reflection)."""
        optional = [k for k in (self.gemm, self.attention, self.glu_depthwise, self.silu) if k is not None]
        files = (optional + [self.lane_sums[t] for t in sorted(self.lane_sums)]
                 + [self.rms_norms[key] for key in sorted(self.rms_norms)])
        digest = hashlib.sha256("".join(f.sha256 for f in files).encode()).hexdigest()
        return f"{KERNEL_SET}{'' if optional else '-row-kernels-only'}@{digest[:16]}"

    def gemm_launch(self, rows: int, cols: int, k: int) -> dict[str, object] | None:
        """The `extern` launch of C[rows, cols] = A[rows, k] @ B[cols, k]^T, or None (IREE's dot)."""
        if self.gemm is None or not GEMM_SM90.supports(cols, k):
            return None
        return _launch(self.gemm, GEMM_SM90.workgroups(rows, cols))

    def lane_sum_launch(self, rows: int, width: int, reads: int) -> dict[str, object]:
        """What the lane-sum template needs to reduce [rows, width] with `reads` reads per thread."""
        block = LANE_SUMS_SM90[lane_threads(width, reads)]
        return _launch(self.lane_sums[block.block_threads], block.workgroups(rows))

    def rms_norm_launch(self, rows: int, width: int, w_dtype: str, output: str) -> dict[str, object] | None:
        """The whole scaled RMS norm of [rows, width] in one dispatch, or None (BF16 weights only).

        `output` is the kernel variant (kernels/registry.py RMS_NORM_OUTPUTS): f32, bf16, residual,
        residual_bf16 or silu_bf16; None too for a variant the set does not link."""
        block = RMS_NORMS_SM90[output, lane_threads(width, 8)]
        kernel = self.rms_norms.get((output, block.block_threads))
        if w_dtype != "bf16" or kernel is None:
            return None
        return _launch(kernel, block.workgroups(rows))

    def attention_launch(self, clips: int, blocks: int, heads: int, chunk: int, context: int,
                         head_dim: int) -> dict[str, object] | None:
        """The attention between its projections as one dispatch, or None: the kernel (linked only under
        a contract with BF16 operands that rounds after each op) covers at most its rows, slots and dims."""
        if self.attention is None or not ATTENTION_SM90.supports(chunk, context, head_dim):
            return None
        return _launch(self.attention, clips * blocks * heads)

    def glu_depthwise_launch(self, clips: int, frames: int, channels: int) -> dict[str, object] | None:
        """The light convolution's GLU and taps as one dispatch, or None (not linked, or channels it
        does not cover)."""
        if self.glu_depthwise is None or not GLU_DEPTHWISE_SM90.supports(channels):
            return None
        return _launch(self.glu_depthwise, GLU_DEPTHWISE_SM90.workgroups(clips, frames, channels))

    def silu_launch(self, count: int) -> dict[str, object] | None:
        """The SiLU of `count` BF16 values as one dispatch, or None (not linked, or a count it does not
        cover)."""
        if self.silu is None or not SILU_SM90.supports(count):
            return None
        return _launch(self.silu, SILU_SM90.workgroups(count))


def _launch(kernel: VerifiedKernel, workgroups: int) -> dict[str, object]:
    return {"entry": kernel.entry, "ptx": kernel.ptx_path, "threads": kernel.threads,
            "shared": kernel.shared_bytes, "workgroups": workgroups}


def kernels_identity(kernels: LinkedKernels | None) -> str:
    """How a module records its kernels (cache identity, entry reflection)."""
    return kernels.identity if kernels is not None else "iree"


def _why_not_hopper(target: Target) -> str | None:
    if not target.is_cuda or target.cuda_arch not in HOPPER_ARCHS:
        return f"they are Hopper (sm_90) kernels and the target is {target}"
    return None


def _gemm_fits(contract: NumericContract) -> bool:
    return contract.operand_dtype == "bf16" and contract.rounds_at(None)


def select_kernels(choice: str, target: Target, contract: NumericContract) -> LinkedKernels | None:
    """The kernels the module links, or None for IREE's own code generation everywhere."""
    if choice not in KERNEL_CHOICES:
        raise KernelChoiceError(f"unknown kernel set {choice!r}; choose one of {', '.join(KERNEL_CHOICES)}")
    if choice == "iree":
        return None
    reason = _why_not_hopper(target)
    if reason is None and choice != "auto" and not _gemm_fits(contract):
        reason = (f"contract {contract.name} does not use BF16 operands with a BF16 rounding after each "
                  "linear, which the GEMM kernel implements")
    if reason is not None:
        if choice == "auto":
            return None
        raise KernelChoiceError(f"--kernels {choice} is not available: {reason}")
    bf16_rounding = _gemm_fits(contract)
    return LinkedKernels(GEMM_SM90.file.verify() if bf16_rounding else None,
                         {t: k.file.verify() for t, k in LANE_SUMS_SM90.items()},
                         {key: k.file.verify() for key, k in RMS_NORMS_SM90.items()
                          if bf16_rounding or key[0] not in BF16_ROUNDING_NORMS},
                         ATTENTION_SM90.file.verify() if bf16_rounding else None,
                         GLU_DEPTHWISE_SM90.file.verify() if bf16_rounding else None,
                         SILU_SM90.file.verify() if bf16_rounding else None)
