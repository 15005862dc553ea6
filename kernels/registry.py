"""Every committed GPU kernel file, in one list: what the build writes and what a module may link.

A file is verified against the one manifest (`ptx/manifest.json`: its SHA-256 and build parameters)
when it is linked, so a damaged or hand-edited file is an error rather than a different program.
"""

from __future__ import annotations

from pathlib import Path

from .activation import SILU_SM90
from .altup import ALTUP_SM90
from .attention import ATTENTION_SM90
from .conv import GLU_DEPTHWISE_SM90
from .decode_attention import DECODE_ATTENTION_SM90
from .gemm import GEMM_SM90
from .gemv import GEMV_GELU_PRODUCT_SM90, GEMV_GROUPS_SM90, GEMV_SCALED_SM90, GEMV_SM90, GEMV_SUMMED_SM90
from .reductions import (
    LANE_SUMS_SM90,
    PARTIAL_NORM_KV_SM90,
    PARTIAL_NORM_RESIDUALS_SM90,
    PARTIAL_NORM_STREAMS_SM90,
    PARTIAL_NORMS_SM90,
    RMS_NORMS_SM90,
)
from .spec import KernelFile

#: The Triton sources (kernels/*_triton.py).
KERNEL_DIR = Path(__file__).resolve().parent

#: In the order a linked set's identity hashes them (changing it renames every cached artifact): the
#: kernels that serve only BF16-rounding contracts, then the lane sums and the RMS norms.
KERNEL_FILES: tuple[KernelFile, ...] = (
    GEMM_SM90.file,
    *(kernel.file for kernel in GEMV_SM90),
    *(kernel.file for kernel in GEMV_GROUPS_SM90),
    *(kernel.file for kernel in GEMV_GELU_PRODUCT_SM90),
    *(kernel.file for kernel in GEMV_SCALED_SM90),
    *(kernel.file for kernel in GEMV_SUMMED_SM90),
    ATTENTION_SM90.file,
    DECODE_ATTENTION_SM90.scores,
    DECODE_ATTENTION_SM90.values,
    *(DECODE_ATTENTION_SM90.softmax[t] for t in sorted(DECODE_ATTENTION_SM90.softmax)),
    *(DECODE_ATTENTION_SM90.prompt_softmax[t] for t in sorted(DECODE_ATTENTION_SM90.prompt_softmax)),
    *(ALTUP_SM90.predict[t] for t in sorted(ALTUP_SM90.predict)),
    *(ALTUP_SM90.correct[t] for t in sorted(ALTUP_SM90.correct)),
    GLU_DEPTHWISE_SM90.file,
    SILU_SM90.file,
    *(LANE_SUMS_SM90[t].file for t in sorted(LANE_SUMS_SM90)),
    *(RMS_NORMS_SM90[key].file for key in sorted(RMS_NORMS_SM90)),
    *(PARTIAL_NORMS_SM90[t].file for t in sorted(PARTIAL_NORMS_SM90)),
    *(PARTIAL_NORM_RESIDUALS_SM90[key].file for key in sorted(PARTIAL_NORM_RESIDUALS_SM90)),
    *(PARTIAL_NORM_STREAMS_SM90[t].file for t in sorted(PARTIAL_NORM_STREAMS_SM90)),
    *(PARTIAL_NORM_KV_SM90[key].file for key in sorted(PARTIAL_NORM_KV_SM90)),
)
