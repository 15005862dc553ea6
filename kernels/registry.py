"""The GPU kernels the emitters may link into a module, and how to check that a file is the one built.

A kernel is described here (tile or block shape, launch size) and built by `build.py` into a PTX
file with a JSON manifest beside it. Loading verifies the PTX against the manifest's SHA-256, so a
damaged or hand-edited file is an error rather than a different program.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent


class KernelFileError(RuntimeError):
    """A committed kernel file is missing or does not match its manifest."""


@dataclass(frozen=True)
class VerifiedKernel:
    """A committed PTX file whose content matched its manifest: what a template links."""

    entry: str
    ptx_path: str
    sha256: str
    threads: int
    shared_bytes: int


@dataclass(frozen=True)
class KernelFile:
    """One committed PTX file (`<stem>.ptx` with `<stem>.json`) and the launch it was built for."""

    stem: str
    entry: str
    warps: int

    @property
    def threads(self) -> int:
        return self.warps * 32

    def ptx_path(self) -> Path:
        return KERNEL_DIR / f"{self.stem}.ptx"

    def manifest_path(self) -> Path:
        return KERNEL_DIR / f"{self.stem}.json"

    def verify(self) -> VerifiedKernel:
        """The file's verified identity (raises KernelFileError on any mismatch with the manifest)."""
        ptx, manifest = self.ptx_path(), self.manifest_path()
        try:
            data = ptx.read_bytes()
            recorded = json.loads(manifest.read_text())
        except (OSError, ValueError) as err:
            raise KernelFileError(f"kernel {self.stem}: cannot read {ptx.name} / {manifest.name}: {err}") from err
        digest = hashlib.sha256(data).hexdigest()
        if recorded.get("ptx_sha256") != digest or recorded.get("entry") != self.entry:
            raise KernelFileError(f"kernel {self.stem}: {ptx} does not match {manifest.name} "
                                  f"(sha256 {digest}, manifest {recorded.get('ptx_sha256')}); "
                                  "rebuild with `python -m gemma3n_iree.kernels.build`")
        if recorded.get("threads") != self.threads or not isinstance(recorded.get("shared_bytes"), int):
            raise KernelFileError(f"kernel {self.stem}: manifest launch size differs from the registry")
        return VerifiedKernel(self.entry, str(ptx), digest, self.threads, recorded["shared_bytes"])


@dataclass(frozen=True)
class GemmTile:
    bm: int
    bn: int
    bk: int
    warps: int
    stages: int
    group_m: int = 8


@dataclass(frozen=True)
class GemmKernel:
    """C = bf16(A @ B^T): A [M, K], B [N, K], C [M, N], all BF16, F32 accumulation."""

    tile: GemmTile
    file: KernelFile

    def supports(self, n: int, k: int) -> bool:
        """Shapes the kernel's compile-time promises cover (N, K multiples of 16, K of the K tile)."""
        return n % 16 == 0 and k % self.tile.bk == 0

    def workgroups(self, m: int, n: int) -> int:
        return -(-m // self.tile.bm) * -(-n // self.tile.bn)


@dataclass(frozen=True)
class RowKernel:
    """A kernel over rows whose reduction follows the contract's schedule of `block_threads` threads.

    Each workgroup takes `rows_per_workgroup` rows: `row_budget` schedule threads' worth in all.
    """

    block_threads: int
    file: KernelFile
    row_budget: int

    @property
    def rows_per_workgroup(self) -> int:
        return max(1, self.row_budget // self.block_threads)

    def workgroups(self, rows: int) -> int:
        return -(-rows // self.rows_per_workgroup)


@dataclass(frozen=True)
class AttentionKernel:
    """The chunked attention's core for up to `rows` queries per block, `slots` context slots (the
    32-lane softmax sum's width, so exactly 32) and `dims` values per head, a multiple of 16 (a
    compile-time promise that lets rows load as vectors)."""

    rows: int
    slots: int
    dims: int
    file: KernelFile

    def supports(self, chunk: int, context: int, head_dim: int) -> bool:
        return chunk <= self.rows and context <= self.slots and head_dim <= self.dims and head_dim % 16 == 0


#: 128x256 output tiles, K tile 64, 8 warps, 3 pipeline stages: the fastest of six tilings measured on
#: the H200 for the encoder's four GEMM shapes (BENCHMARKS.md, "Tile survey").
GEMM_SM90 = GemmKernel(GemmTile(bm=128, bn=256, bk=64, warps=8, stages=3),
                       KernelFile("gemm_bf16_nt_sm90", "gemm_bf16_nt", warps=8))

SCHEDULE_THREADS = (32, 64, 128, 256, 512, 1024)  # the block sizes the contract's lane/XOR schedule allows

#: S = the 32-lane XOR row sum: one kernel per schedule block size; 4 warps. (File names carry the
#: schedule's thread count, `t256`, not the launch's: a workgroup runs several rows' schedules.)
LANE_SUMS_SM90 = {t: RowKernel(t, KernelFile(f"lane_xor_sum_t{t}_sm90", "lane_xor_sum", warps=4), row_budget=2048)
                  for t in SCHEDULE_THREADS}

#: The whole scaled RMS norm of clamp(X) (8-read sum of squares, then the normalization), by output:
#: "f32" carrier, "bf16" for a matmul operand, "residual" = round(RES + norm * weight), "residual_bf16" the
#: same reading X as BF16 (a GEMM kernel's result, handed over without an F32 pass), "silu_bf16" the BF16
#: matmul operand round(silu(norm)) (the light convolution's activation after its norm). 8 warps, since a
#: workgroup then normalizes its rows, reading them again (schedule threads x 8 values each).
RMS_NORM_OUTPUTS = {"f32": ("rms_norm", "rms_norm"), "bf16": ("rms_norm_bf16", "rms_norm"),
                    "residual": ("rms_norm_residual", "rms_norm_residual"),
                    "residual_bf16": ("rms_norm_residual_xbf16", "rms_norm_residual"),
                    "silu_bf16": ("rms_norm_silu_bf16", "rms_norm")}
RMS_NORMS_SM90 = {(out, t): RowKernel(t, KernelFile(f"{stem}_t{t}_sm90", entry, warps=8), row_budget=1024)
                  for out, (stem, entry) in RMS_NORM_OUTPUTS.items() for t in SCHEDULE_THREADS}

@dataclass(frozen=True)
class ConvKernel:
    """The light convolution's GLU and causal depthwise convolution, `frames` x `channels` outputs per
    workgroup; the channel count must be a multiple of 16 (a compile-time promise: vector loads)."""

    frames: int
    channels: int
    file: KernelFile

    def supports(self, channels: int) -> bool:
        return channels % 16 == 0

    def workgroups(self, clips: int, frames: int, channels: int) -> int:
        return clips * -(-frames // self.frames) * -(-channels // self.channels)


@dataclass(frozen=True)
class ElementwiseKernel:
    """An elementwise kernel over `block` values per workgroup; counts must be multiples of 16 (a
    compile-time promise: vector loads and stores) and fit the i32 push constant."""

    block: int
    file: KernelFile

    def supports(self, count: int) -> bool:
        return count % 16 == 0 and count < 2**31

    def workgroups(self, count: int) -> int:
        return -(-count // self.block)


#: 4096 values per workgroup, 4 warps (32 values, four 16-byte vectors, per thread).
SILU_SM90 = ElementwiseKernel(block=4096, file=KernelFile("silu_bf16_sm90", "silu_bf16", warps=4))

#: 16 frames x 128 channels per workgroup, 4 warps.
GLU_DEPTHWISE_SM90 = ConvKernel(frames=16, channels=128, file=KernelFile("glu_depthwise_sm90", "glu_depthwise", warps=4))

#: Up to 16 queries per block (the real config has 12) against up to 32 context slots (24) of up to 256
#: values per head (192); 4 warps.
ATTENTION_SM90 = AttentionKernel(rows=16, slots=32, dims=256,
                                 file=KernelFile("attention_core_sm90", "attention_core", warps=4))
