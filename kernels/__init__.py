"""GPU kernels built ahead of time and linked into modules through IREE's custom-dispatch path."""

from .registry import (ATTENTION_SM90, GEMM_SM90, GLU_DEPTHWISE_SM90, LANE_SUMS_SM90, RMS_NORMS_SM90, SILU_SM90,
                       AttentionKernel, ConvKernel, ElementwiseKernel, GemmKernel, GemmTile, KernelFile,
                       KernelFileError, RowKernel, VerifiedKernel)

__all__ = ["ATTENTION_SM90", "AttentionKernel", "ConvKernel", "ElementwiseKernel", "GEMM_SM90", "GLU_DEPTHWISE_SM90",
           "GemmKernel", "GemmTile", "KernelFile", "KernelFileError", "LANE_SUMS_SM90", "RMS_NORMS_SM90", "RowKernel",
           "SILU_SM90", "VerifiedKernel"]
