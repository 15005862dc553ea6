"""Build the committed GPU kernels from their Triton source (needs `pip install triton`, no GPU).

    python -m gemma3n_iree.kernels.build        # rewrites kernels/*.ptx and kernels/*.json

Why the PTX is post-processed: IREE's CUDA custom dispatch launches a kernel with exactly its
bindings' pointers followed by its push constants, while Triton appends two scratch pointers (global
and profile scratch) to every kernel's parameter list. The kernels use neither, so the build checks
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

from .registry import (ATTENTION_SM90, GEMM_SM90, GLU_DEPTHWISE_SM90, KERNEL_DIR, LANE_SUMS_SM90, RMS_NORMS_SM90,
                       SILU_SM90, AttentionKernel, ConvKernel, ElementwiseKernel, GemmKernel, KernelFile, RowKernel)

PTX_VERSION = 84  # PTX ISA 8.4: wgmma needs 8.0; the driver accepts up to 9.0
SM90 = 90


def strip_scratch_params(ptx: str, entry: str) -> str:
    """Drop Triton's two trailing scratch-pointer parameters, refusing if the kernel reads them."""
    params = re.findall(rf"\.param [^\n]*\b{entry}_param_(\d+)", ptx)
    if len(params) < 2:
        raise RuntimeError(f"{entry}: expected one entry with Triton's two scratch parameters, found 0")
    first, second = len(params) - 2, len(params) - 1
    if re.search(rf"\[{entry}_param_({first}|{second})\]", ptx):
        raise RuntimeError(f"{entry} reads a Triton scratch pointer; it cannot run through IREE's dispatch ABI")
    scratch = re.compile(rf",\n\t\.param \.u64 \.ptr \.global \.align 1 {entry}_param_{first},"
                         rf"\n\t\.param \.u64 \.ptr \.global \.align 1 {entry}_param_{second}\n\)")
    stripped, count = scratch.subn("\n)", ptx)
    if count != 1:
        raise RuntimeError(f"{entry}: expected one entry with Triton's two scratch parameters, found {count}")
    return stripped


def _compile(fn, file: KernelFile, signature: dict[str, str], constexprs: dict[str, int],
             aligned: tuple[int, ...], stages: int, out_dir: Path) -> Path:
    """Compile one Triton kernel for sm_90a and write its PTX and manifest under `file`'s stem."""
    os.environ["TRITON_DEFAULT_FP_FUSION"] = "0"  # no FMA contraction outside tl.dot
    os.environ["TRITON_DISABLE_LINE_INFO"] = "1"  # no source paths in the PTX: rebuilds are byte-identical
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    source = ASTSource(fn=fn, signature=signature, constexprs=constexprs,
                       attrs={(i,): [["tt.divisibility", 16]] for i in aligned})
    compiled = triton.compile(source, target=GPUTarget("cuda", SM90, 32),
                              options={"num_warps": file.warps, "num_stages": stages, "ptx_version": PTX_VERSION})
    ptx = strip_scratch_params(compiled.asm["ptx"], file.entry)
    ptx_path = out_dir / f"{file.stem}.ptx"
    ptx_path.write_text(ptx)
    manifest = {"entry": file.entry, "ptx_sha256": hashlib.sha256(ptx.encode()).hexdigest(),
                "triton": triton.__version__, "ptx_version": PTX_VERSION, "shared_bytes": compiled.metadata.shared,
                "threads": file.threads}
    (out_dir / f"{file.stem}.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return ptx_path


def build_gemm(kernel: GemmKernel = GEMM_SM90, out_dir: Path = KERNEL_DIR) -> Path:
    from .gemm_sm90_triton import gemm_bf16_nt

    tile = kernel.tile
    signature = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32",
                 "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "GROUP_M": "constexpr"}
    constexprs = {"BM": tile.bm, "BN": tile.bn, "BK": tile.bk, "GROUP_M": tile.group_m}
    # 16-byte aligned pointers, N and K multiples of 16: promises the emitter checks per call.
    return _compile(gemm_bf16_nt, kernel.file, signature, constexprs, (0, 1, 2, 4, 5), tile.stages, out_dir)


def build_lane_sum(kernel: RowKernel, out_dir: Path = KERNEL_DIR) -> Path:
    from .reductions_triton import lane_xor_sum

    signature = {"x_ptr": "*fp32", "s_ptr": "*fp32", "rows": "i32", "width": "i32", "reads": "i32",
                 "square": "i32", "THREADS": "constexpr", "ROWS_PER_BLOCK": "constexpr"}
    constexprs = {"THREADS": kernel.block_threads, "ROWS_PER_BLOCK": kernel.rows_per_workgroup}
    return _compile(lane_xor_sum, kernel.file, signature, constexprs, (0, 1), 1, out_dir)


def build_rms_norm(kernel: RowKernel, output: str, out_dir: Path = KERNEL_DIR) -> Path:
    """One RMS-norm variant: `output` is its RMS_NORM_OUTPUTS key (f32, bf16, residual, residual_bf16,
    silu_bf16)."""
    from . import reductions_triton

    residual = output.startswith("residual")
    signature = {"x_ptr": "*bf16" if output == "residual_bf16" else "*fp32", "w_ptr": "*bf16", **({"res_ptr": "*fp32"} if residual else {}),
                 "y_ptr": "*bf16" if output.endswith("bf16") and not residual else "*fp32",
                 "rows": "i32", "width": "i32", "eps_bits": "i32", "clip_bits": "i32",
                 **({"weight_bits": "i32"} if residual else {}), "round_bf16": "i32",
                 "THREADS": "constexpr", "ROWS_PER_BLOCK": "constexpr", **({} if residual else {"SILU": "constexpr"})}
    constexprs = {"THREADS": kernel.block_threads, "ROWS_PER_BLOCK": kernel.rows_per_workgroup,
                  **({} if residual else {"SILU": output == "silu_bf16"})}
    aligned = (0, 1, 2, 3) if residual else (0, 1, 2)
    return _compile(getattr(reductions_triton, kernel.file.entry), kernel.file, signature, constexprs, aligned, 1,
                    out_dir)


def build_glu_depthwise(kernel: ConvKernel = GLU_DEPTHWISE_SM90, out_dir: Path = KERNEL_DIR) -> Path:
    from .conv_triton import glu_depthwise

    signature = {"g_ptr": "*bf16", "w_ptr": "*fp32", "y_ptr": "*fp32", "frames": "i32", "channels": "i32",
                 "taps": "i32", "FRAMES": "constexpr", "CHANNELS": "constexpr"}
    constexprs = {"FRAMES": kernel.frames, "CHANNELS": kernel.channels}
    # 16-byte aligned pointers, channels divisible by 16 (the emitter checks it): vector loads and stores
    return _compile(glu_depthwise, kernel.file, signature, constexprs, (0, 1, 2, 4), 1, out_dir)


def build_silu(kernel: ElementwiseKernel = SILU_SM90, out_dir: Path = KERNEL_DIR) -> Path:
    from .activation_triton import silu_bf16

    signature = {"x_ptr": "*bf16", "y_ptr": "*bf16", "count": "i32", "BLOCK": "constexpr"}
    # 16-byte aligned pointers, a count divisible by 16 (the emitter checks it): vector loads and stores
    return _compile(silu_bf16, kernel.file, signature, {"BLOCK": kernel.block}, (0, 1, 2), 1, out_dir)


def build_attention(kernel: AttentionKernel = ATTENTION_SM90, out_dir: Path = KERNEL_DIR) -> Path:
    from .attention_triton import attention_core

    signature = {"q_ptr": "*bf16", "scale_ptr": "*fp32", "k_ptr": "*bf16", "v_ptr": "*bf16", "pos_ptr": "*bf16",
                 "valid_ptr": "*i32",
                 "out_ptr": "*bf16", **{name: "i32" for name in (
                     "frames", "blocks", "heads", "head_dim", "chunk", "past", "cap_bits", "mask_bits")},
                 "ROWS": "constexpr", "SLOTS": "constexpr", "DIMS": "constexpr"}
    constexprs = {"ROWS": kernel.rows, "SLOTS": kernel.slots, "DIMS": kernel.dims}
    # 16-byte aligned pointers and a head width divisible by 16 (the emitter checks it): whole rows of a
    # head are then aligned runs of 16 values, which the loads and stores move as vectors.
    return _compile(attention_core, kernel.file, signature, constexprs, (0, 1, 2, 3, 4, 5, 6, 10), 1, out_dir)


if __name__ == "__main__":
    print(build_gemm())
    for kernel in LANE_SUMS_SM90.values():
        print(build_lane_sum(kernel))
    for (output, _threads), kernel in RMS_NORMS_SM90.items():
        print(build_rms_norm(kernel, output))
    print(build_attention())
    print(build_glu_depthwise())
    print(build_silu())
