"""GPU kernels built ahead of time and linked into modules through IREE's custom-dispatch path."""

from .registry import (GEMM_SM90, LANE_SUMS_SM90, RMS_NORMS_SM90, GemmKernel, GemmTile, KernelFile, KernelFileError,
                       RowKernel, VerifiedKernel, WINDOWS_SM90, WindowKernel)

__all__ = ["GEMM_SM90", "LANE_SUMS_SM90", "RMS_NORMS_SM90", "GemmKernel", "GemmTile", "KernelFile", "KernelFileError",
           "RowKernel", "VerifiedKernel", "WINDOWS_SM90", "WindowKernel"]
