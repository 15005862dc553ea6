"""GPU kernels built ahead of time and linked into modules through IREE's custom-dispatch path.

Each family's specification (`gemm.py`, `gemv.py`, `reductions.py`, `attention.py`, `decode_attention.py`,
`altup.py`, `conv.py`, `activation.py`) sits next to its Triton source (`*_triton.py`, build time only); `ptx/` holds the
generated files.
"""

from .activation import SILU_SM90, ElementwiseKernel
from .altup import ALTUP_SM90, AltupKernels
from .attention import ATTENTION_SM90, AttentionKernel
from .conv import GLU_DEPTHWISE_SM90, ConvKernel
from .decode_attention import DECODE_ATTENTION_SM90, DecodeAttentionKernels
from .gemm import GEMM_SM90, GemmKernel
from .gemv import (
    GELU_PRODUCT_POINTS,
    GEMV_GELU_PRODUCT_SM90,
    GEMV_GROUPS_SM90,
    GEMV_SCALED_SM90,
    GEMV_SM90,
    GEMV_SUMMED_SM90,
    GemvGroupKernel,
    GemvKernel,
    gelu_product_call,
    gemv_call,
    gemv_group_call,
    scaled_gemv_call,
    summed_gemv_call,
)
from .reductions import (
    LANE_SUMS_SM90,
    PARTIAL_NORM_KV_SM90,
    PARTIAL_NORM_RESIDUALS_SM90,
    PARTIAL_NORM_STREAMS_SM90,
    PARTIAL_NORMS_SM90,
    RMS_NORMS_SM90,
    RowKernel,
    lane_sum_call,
    partial_norm_call,
    partial_norm_kv_call,
    partial_norm_residual_call,
    partial_norm_streams_call,
    rms_norm_call,
)
from .registry import KERNEL_FILES
from .spec import (
    KernelCall,
    KernelFile,
    KernelFileError,
    KernelSignature,
    Launch,
    Pointer,
    PushConstant,
    VerifiedKernel,
)

__all__ = [
    "ALTUP_SM90",
    "AltupKernels",
    "ATTENTION_SM90",
    "AttentionKernel",
    "ConvKernel",
    "DECODE_ATTENTION_SM90",
    "DecodeAttentionKernels",
    "ElementwiseKernel",
    "GEMM_SM90",
    "GELU_PRODUCT_POINTS",
    "GEMV_GELU_PRODUCT_SM90",
    "GEMV_GROUPS_SM90",
    "GEMV_SCALED_SM90",
    "GEMV_SM90",
    "GEMV_SUMMED_SM90",
    "GLU_DEPTHWISE_SM90",
    "GemmKernel",
    "GemvGroupKernel",
    "GemvKernel",
    "KERNEL_FILES",
    "KernelCall",
    "KernelFile",
    "KernelFileError",
    "KernelSignature",
    "LANE_SUMS_SM90",
    "PARTIAL_NORMS_SM90",
    "PARTIAL_NORM_KV_SM90",
    "PARTIAL_NORM_RESIDUALS_SM90",
    "PARTIAL_NORM_STREAMS_SM90",
    "Launch",
    "Pointer",
    "PushConstant",
    "RMS_NORMS_SM90",
    "RowKernel",
    "SILU_SM90",
    "VerifiedKernel",
    "gelu_product_call",
    "gemv_call",
    "gemv_group_call",
    "lane_sum_call",
    "partial_norm_call",
    "partial_norm_kv_call",
    "partial_norm_residual_call",
    "partial_norm_streams_call",
    "scaled_gemv_call",
    "summed_gemv_call",
    "rms_norm_call",
]
