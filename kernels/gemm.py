"""The Hopper BF16 GEMM (`gemm_sm90_triton.py`): C[M, N] = bf16(A[M, K] @ B[N, K]^T), F32 accumulation."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import KernelCall, KernelFile, KernelSignature, Pointer, PushConstant, TiledKernel

SIGNATURE = KernelSignature(
    source="gemm_sm90_triton",
    entry="gemm_bf16_nt",
    inputs=(Pointer("a", "bf16"), Pointer("b", "bf16")),
    output=Pointer("c", "bf16"),
    # N and K multiples of 16: the tiles' loads and stores are then aligned vectors
    constants=(PushConstant("M"), PushConstant("N", multiple_of_16=True), PushConstant("K", multiple_of_16=True)),
    constexprs=("BM", "BN", "BK", "GROUP_M"),
)


@dataclass(frozen=True)
class GemmKernel(TiledKernel):
    """One output tile of BM x BN per workgroup, K in steps of BK."""

    def supports(self, n: int, k: int) -> bool:
        """Shapes the kernel's compile-time promises cover (N, K multiples of 16, K of the K tile)."""
        return n % 16 == 0 and k % self.bk == 0

    def workgroups(self, m: int, n: int) -> int:
        return -(-m // self.bm) * -(-n // self.bn)

    def call(self, rows: int, cols: int, k: int) -> KernelCall | None:
        """C[rows, cols] = A[rows, k] @ B[cols, k]^T, or None for a shape the kernel does not cover."""
        if not self.supports(cols, k):
            return None
        return self.file.call(self.workgroups(rows, cols), M=rows, N=cols, K=k)


#: 128x256 output tiles, K tile 64, 8 warps, 3 pipeline stages: the fastest of six tilings measured on
#: the H200 for the encoder's four GEMM shapes (BENCHMARKS.md, "Tile survey").
GEMM_SM90 = GemmKernel(
    KernelFile(
        "gemm_bf16_nt_sm90",
        SIGNATURE,
        warps=8,
        stages=3,
        bf16_rounding_only=True,
        constexprs=(("BM", 128), ("BN", 256), ("BK", 64), ("GROUP_M", 8)),
    )
)
