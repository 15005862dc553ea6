"""Build the committed GPU kernels from their Triton source (needs `pip install triton`, no GPU).

    python -m gemma3n_iree.kernels.build        # rewrites kernels/*.ptx and kernels/*.json

Why the PTX is post-processed: IREE's CUDA custom dispatch launches a kernel with exactly its
bindings' pointers followed by its push constants, while Triton appends two scratch pointers (global
and profile scratch) to every kernel's parameter list. The GEMM uses neither, so the build checks
that the PTX never reads them and removes them from the entry's declaration; the result has the
parameter list IREE passes. The PTX ISA version is pinned to 8.4 because the H200's driver (580,
CUDA 13.0) rejects the 9.4 that Triton's bundled toolchain would write.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from .registry import GEMM_SM90, GemmKernel, KERNEL_DIR

PTX_VERSION = 84  # PTX ISA 8.4: wgmma needs 8.0; the driver accepts up to 9.0

_SCRATCH_PARAMS = re.compile(
    r",\n\t\.param \.u64 \.ptr \.global \.align 1 (?P<name>\w+)_param_6,"
    r"\n\t\.param \.u64 \.ptr \.global \.align 1 \w+_param_7\n\)")


def strip_scratch_params(ptx: str, entry: str) -> str:
    """Drop Triton's two trailing scratch-pointer parameters, refusing if the kernel reads them."""
    if re.search(rf"\[{entry}_param_[67]\]", ptx):
        raise RuntimeError(f"{entry} reads a Triton scratch pointer; it cannot run through IREE's dispatch ABI")
    stripped, count = _SCRATCH_PARAMS.subn("\n)", ptx)
    if count != 1:
        raise RuntimeError(f"{entry}: expected one entry with Triton's two scratch parameters, found {count}")
    return stripped


def build_gemm(kernel: GemmKernel = GEMM_SM90, out_dir: Path = KERNEL_DIR) -> Path:
    os.environ["TRITON_DEFAULT_FP_FUSION"] = "0"  # no FMA contraction outside tl.dot
    os.environ["TRITON_DISABLE_LINE_INFO"] = "1"  # no source paths in the PTX: rebuilds are byte-identical
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from .gemm_sm90_triton import gemm_bf16_nt

    tile = kernel.tile
    source = ASTSource(
        fn=gemm_bf16_nt,
        signature={"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32",
                   "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "GROUP_M": "constexpr"},
        constexprs={"BM": tile.bm, "BN": tile.bn, "BK": tile.bk, "GROUP_M": tile.group_m},
        # 16-byte aligned pointers, N and K multiples of 16: promises the emitter checks per call.
        attrs={(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 4, 5)},
    )
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": tile.warps, "num_stages": tile.stages, "ptx_version": PTX_VERSION})
    ptx = strip_scratch_params(compiled.asm["ptx"], kernel.entry)
    if compiled.metadata.shared != kernel.shared_bytes:
        raise RuntimeError(f"{kernel.entry}: Triton allocates {compiled.metadata.shared} bytes of shared memory, "
                           f"the registry says {kernel.shared_bytes}")
    ptx_path = out_dir / kernel.ptx_file
    ptx_path.write_text(ptx)
    manifest = {"entry": kernel.entry, "ptx_sha256": hashlib.sha256(ptx.encode()).hexdigest(),
                "triton": triton.__version__, "ptx_version": PTX_VERSION, "shared_bytes": compiled.metadata.shared,
                "threads": kernel.threads}
    (out_dir / kernel.manifest_file).write_text(json.dumps(manifest, indent=2) + "\n")
    return ptx_path


if __name__ == "__main__":
    print(build_gemm())
