"""GPU kernels built ahead of time and linked into modules through IREE's custom-dispatch path."""

from .registry import GEMM_SM90, GemmKernel, GemmTile, KernelFileError

__all__ = ["GEMM_SM90", "GemmKernel", "GemmTile", "KernelFileError"]
