"""The GPU kernels the emitters may link into a module, and how to check that a file is the one built.

A kernel is described here (tile shape, launch size) and built by `build.py` into a PTX file with a
JSON manifest beside it. Loading verifies the PTX against the manifest's SHA-256, so a damaged or
hand-edited file is an error rather than a different program.
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

    name: str
    entry: str
    arch: str
    tile: GemmTile
    shared_bytes: int

    @property
    def ptx_file(self) -> str:
        return f"{self.entry}_{self.arch}.ptx"

    @property
    def manifest_file(self) -> str:
        return f"{self.entry}_{self.arch}.json"

    @property
    def threads(self) -> int:
        return self.tile.warps * 32

    def supports(self, n: int, k: int) -> bool:
        """Shapes the kernel's compile-time promises cover (N, K multiples of 16, K of the K tile)."""
        return n % 16 == 0 and k % self.tile.bk == 0

    def workgroups(self, m: int, n: int) -> int:
        return -(-m // self.tile.bm) * -(-n // self.tile.bn)

    def ptx_path(self) -> Path:
        return KERNEL_DIR / self.ptx_file

    def ptx_sha256(self) -> str:
        """The verified content hash of the committed PTX (raises KernelFileError on any mismatch)."""
        ptx, manifest = self.ptx_path(), KERNEL_DIR / self.manifest_file
        try:
            data = ptx.read_bytes()
            recorded = json.loads(manifest.read_text())
        except (OSError, ValueError) as err:
            raise KernelFileError(f"kernel {self.name}: cannot read {ptx.name} / {manifest.name}: {err}") from err
        digest = hashlib.sha256(data).hexdigest()
        if recorded.get("ptx_sha256") != digest or recorded.get("entry") != self.entry:
            raise KernelFileError(f"kernel {self.name}: {ptx} does not match {manifest.name} "
                                  f"(sha256 {digest}, manifest {recorded.get('ptx_sha256')}); "
                                  "rebuild with `python -m gemma3n_iree.kernels.build`")
        if recorded.get("shared_bytes") != self.shared_bytes or recorded.get("threads") != self.threads:
            raise KernelFileError(f"kernel {self.name}: manifest launch size differs from the registry")
        return digest


#: 128x256 output tiles, K tile 64, 8 warps, 3 pipeline stages: the fastest of six tilings measured on
#: the H200 for the encoder's four GEMM shapes (BENCHMARKS.md, "Tile survey").
GEMM_SM90 = GemmKernel(name="triton-sm90", entry="gemm_bf16_nt", arch="sm90",
                       tile=GemmTile(bm=128, bn=256, bk=64, warps=8, stages=3), shared_bytes=147456)
