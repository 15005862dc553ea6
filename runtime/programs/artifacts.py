"""Compiled artifacts cached under a content identity, published atomically, verified on reuse.

The identity covers everything the bytes depend on: the emitted MLIR (its SHA-256), the compile
flags and target, the compiler build, the numeric contract, the configuration and the checkpoint's
weight schema.  A build holds an exclusive file lock on its identity (safe under concurrent
processes), writes to a temporary sibling and renames it into place, then writes a manifest with
the artifact's digest; a reader re-hashes the artifact against the manifest and rebuilds it when
they disagree (a truncated or corrupted cache file is never loaded).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ...emitters.audio import AudioModuleSpec, emit_audio_module
from ...emitters.compile import Target, compile_mlir, compiler_version
from ...files import write_atomically

MANIFEST_SCHEMA = "gemma3n-iree-artifact-v1"
Progress = Callable[[str], None]


def default_cache_dir() -> Path:
    env = os.environ.get("GEMMA3N_IREE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gemma3n-iree"


def program_identity(
    mlir: str, target: Target, contract: str, module: str, weight_schema: str, config: str | None = None
) -> dict[str, str]:
    """Everything a compiled program's bytes depend on."""
    identity = {
        "schema": MANIFEST_SCHEMA,
        "mlir_sha256": _sha256(mlir.encode()),
        "flags": " ".join(target.flags()),
        "target": target.cache_key(),
        "compiler": compiler_version(),
        "contract": contract,
        "module": module,
        "weight_schema": weight_schema,
    }
    if config is not None:
        identity["config"] = config
    return identity


@dataclass(frozen=True)
class BuiltArtifact:
    path: Path
    identity: dict[str, str]
    reused: bool


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class ArtifactCache:
    """A directory of `<digest>.vmfb` + `<digest>.json` pairs."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()

    def identity(self, spec: AudioModuleSpec, target: Target, mlir: str, weight_schema: str) -> dict[str, str]:
        return program_identity(
            mlir, target, spec.contract.identity(), spec.identity(), weight_schema, config=spec.config.identity()
        )

    def get_or_build(
        self, spec: AudioModuleSpec, target: Target, weight_schema: str, progress: Progress | None = None
    ) -> BuiltArtifact:
        """The audio artifact of `spec` for `target`, compiled on a miss."""
        mlir = emit_audio_module(spec)
        return self.build(
            "audio",
            mlir,
            self.identity(spec, target, mlir, weight_schema),
            target,
            f"{len(spec.entries)} entry point(s)",
            progress,
        )

    def build(
        self,
        kind: str,
        mlir: str,
        identity: dict[str, str],
        target: Target,
        what: str,
        progress: Progress | None = None,
    ) -> BuiltArtifact:
        """Reuse the verified `<kind>-<digest>.vmfb` of `identity`, or compile `mlir` and publish it."""
        say = progress or (lambda _msg: None)
        digest = _sha256(json.dumps(identity, sort_keys=True).encode())[:32]
        self.root.mkdir(parents=True, exist_ok=True)
        vmfb_path = self.root / f"{kind}-{digest}.vmfb"
        manifest_path = self.root / f"{kind}-{digest}.json"
        with _locked(self.root / f"{kind}-{digest}.lock"):
            if self._verified(vmfb_path, manifest_path, identity):
                return BuiltArtifact(vmfb_path, identity, reused=True)
            if vmfb_path.exists() or manifest_path.exists():
                say(f"cached artifact {vmfb_path.name} failed verification; rebuilding")
            say(f"compiling {what} for {target.describe()} (cache miss) ...")
            vmfb = compile_mlir(mlir, target)
            manifest_path.unlink(missing_ok=True)
            write_atomically(vmfb_path, vmfb)
            manifest = {"identity": identity, "vmfb_sha256": _sha256(vmfb), "vmfb_bytes": len(vmfb)}
            write_atomically(manifest_path, json.dumps(manifest, indent=1, sort_keys=True).encode())
        return BuiltArtifact(vmfb_path, identity, reused=False)

    @staticmethod
    def _verified(vmfb_path: Path, manifest_path: Path, identity: dict[str, str]) -> bool:
        try:
            manifest = json.loads(manifest_path.read_text())
            data = vmfb_path.read_bytes()
        except (OSError, ValueError):
            return False
        return (
            manifest.get("identity") == identity
            and manifest.get("vmfb_bytes") == len(data)
            and manifest.get("vmfb_sha256") == _sha256(data)
        )
