"""LAuReL's tail after the left linear's decode-linear kernel, in one kernel (`laurel_triton.py`).

One file per norm schedule block size (`SCHEDULE_THREADS`, as the RMS norms): the norm keeps the contract's 8-read
lane/XOR schedule of THREADS threads, so a row of up to THREADS x 8 values is one program's.
"""

from __future__ import annotations

from dataclasses import dataclass

from .gemv import MAX_SPLITS
from .reductions import SCHEDULE_THREADS
from .spec import KernelCall, KernelFile, KernelSignature, Pointer, PushConstant

#: LAuReL's rank in Gemma 3n E2B and E4B, compiled into the files.
RANK = 64

SIGNATURE = KernelSignature(
    source="laurel_triton",
    entry="laurel_tail",
    inputs=(Pointer("p", "f32"), Pointer("r", "bf16"), Pointer("w", "bf16"), Pointer("x", "bf16")),
    output=Pointer("out", "f32"),
    constants=(
        PushConstant("tokens"),
        PushConstant("width"),
        PushConstant("splits"),
        PushConstant("eps_bits", f32=True),
        PushConstant("round_bf16"),
        PushConstant("round_residual"),
    ),
    constexprs=("THREADS", "RANK", "MAX_SPLITS"),
)


@dataclass(frozen=True)
class LaurelKernels:
    """The tail's files, by the norm's schedule block size."""

    files: dict[int, KernelFile]

    @staticmethod
    def supports(rank: int, width: int, threads: int, splits: int) -> bool:
        return rank == RANK and width <= threads * 8 and threads in SCHEDULE_THREADS and 1 <= splits <= MAX_SPLITS

    def call(
        self, threads: int, tokens: int, width: int, rank: int, splits: int, eps: float, rounds: dict[str, bool]
    ) -> KernelCall | None:
        """The tail of `tokens` rows of `width` from the left linear's `splits` partials (`rounds`: round_bf16,
        round_residual), or None for a shape the files do not cover."""
        if not self.supports(rank, width, threads, splits):
            return None
        return self.files[threads].call(tokens, tokens=tokens, width=width, splits=splits, eps_bits=eps, **rounds)


LAUREL_SM90 = LaurelKernels(
    {
        t: KernelFile(
            f"laurel_tail_t{t}_sm90",
            SIGNATURE,
            warps=max(4, t // 32),
            constexprs=(("THREADS", t), ("RANK", RANK), ("MAX_SPLITS", MAX_SPLITS)),
            bf16_rounding_only=True,  # the right linear reads BF16 operands
        )
        for t in SCHEDULE_THREADS
    }
)
