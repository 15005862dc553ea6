"""The content-addressed artifact cache (`runtime.programs.artifacts.ArtifactCache`) on a tiny one-bucket module.

The module is compiled for real once (and once more by the concurrency test, in two processes);
the reuse and rebuild tests count calls to a stand-in compiler that returns those same bytes, since
what they check is the cache's bookkeeping, not the compiler.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import multiprocessing
from pathlib import Path

import numpy as np
import pytest

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters.audio import AudioModuleSpec
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.runtime.encoder.audio_session import AudioSession
from gemma3n_iree.runtime.programs import artifacts as artifacts_mod
from gemma3n_iree.runtime.programs.artifacts import ArtifactCache
from gemma3n_iree.runtime.synthetic import write_random_checkpoint

CFG = builtin_config("tiny")
SPEC = AudioModuleSpec(CFG, MLX_CUDA_V1, (64,), (1,))
SCHEMA = "weight-schema-of-the-test"


def target():
    return parse_target("llvm-cpu")


def files_in(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


@pytest.fixture(scope="module")
def real_vmfb(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """The cache root after one real build, and the compiled bytes."""
    root = tmp_path_factory.mktemp("first-build")
    built = ArtifactCache(root).get_or_build(SPEC, target(), SCHEMA)
    assert not built.reused
    return root, built.path.read_bytes()


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_random_checkpoint(tmp_path_factory.mktemp("ck"), CFG, seed=0)


class CountingCompiler:
    """Stands in for `compile_mlir`: counts calls and returns the real artifact's bytes."""

    def __init__(self, vmfb: bytes) -> None:
        self.vmfb = vmfb
        self.calls = 0

    def __call__(self, mlir: str, target) -> bytes:
        self.calls += 1
        return self.vmfb


@pytest.fixture
def compiler(monkeypatch: pytest.MonkeyPatch, real_vmfb) -> CountingCompiler:
    counting = CountingCompiler(real_vmfb[1])
    monkeypatch.setattr(artifacts_mod, "compile_mlir", counting)
    return counting


def forbid_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(mlir, target):
        raise AssertionError("the cache compiled although a verified artifact was there")

    monkeypatch.setattr(artifacts_mod, "compile_mlir", fail)


def check_manifest(path: Path, identity: dict[str, str]) -> None:
    manifest = json.loads(path.with_suffix(".json").read_text())
    data = path.read_bytes()
    assert manifest["identity"] == identity
    assert manifest["vmfb_bytes"] == len(data) and manifest["vmfb_sha256"] == hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------------- reuse


def test_first_build_publishes_artifact_and_manifest(real_vmfb, checkpoint):
    root, vmfb = real_vmfb
    (path,) = root.glob("*.vmfb")
    assert path.read_bytes() == vmfb
    identity = json.loads(path.with_suffix(".json").read_text())["identity"]
    check_manifest(path, identity)
    assert identity["weight_schema"] == SCHEMA and identity["contract"] == MLX_CUDA_V1.identity()
    assert identity["config"] == CFG.identity() and identity["module"] == SPEC.identity()
    # nothing half-written is left next to it (temporary files are renamed into place)
    assert all(not name.endswith(".tmp") for name in files_in(root))
    session = AudioSession(path, [checkpoint / "model.safetensors"])
    assert session.buckets == [(64, 1)]
    out = session.run(np.zeros((1, 64, 128), np.float32), np.array([64], np.int32))
    assert out["audio_features"].shape == (1, 188, CFG.text_hidden_size)


def test_second_get_or_build_reuses_without_compiling(real_vmfb, monkeypatch):
    root, _ = real_vmfb
    forbid_compiling(monkeypatch)
    messages: list[str] = []
    for cache in (ArtifactCache(root), ArtifactCache(root)):  # also a fresh instance on the same folder
        built = cache.get_or_build(SPEC, target(), SCHEMA, messages.append)
        assert built.reused and built.path.parent == root
    assert messages == []  # nothing to report: no compile, no rebuild


# ---------------------------------------------------------------------------------------------- corruption


def corrupt_truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def corrupt_flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def corrupt_empty(path: Path) -> None:
    path.write_bytes(b"")


def corrupt_manifest(path: Path) -> None:
    path.with_suffix(".json").write_text("{ not json")


def corrupt_manifest_identity(path: Path) -> None:
    manifest_path = path.with_suffix(".json")
    manifest = json.loads(manifest_path.read_text())
    manifest["identity"]["compiler"] = "some other compiler"
    manifest_path.write_text(json.dumps(manifest))


def remove_manifest(path: Path) -> None:
    path.with_suffix(".json").unlink()


def remove_vmfb(path: Path) -> None:
    path.unlink()


@pytest.mark.parametrize(
    "corrupt",
    [
        corrupt_truncate,
        corrupt_flip,
        corrupt_empty,
        corrupt_manifest,
        corrupt_manifest_identity,
        remove_manifest,
        remove_vmfb,
    ],
    ids=lambda f: f.__name__,
)
def test_corrupted_cache_entry_is_detected_and_rebuilt(tmp_path, real_vmfb, compiler, corrupt, monkeypatch):
    cache = ArtifactCache(tmp_path)
    first = cache.get_or_build(SPEC, target(), SCHEMA)
    assert not first.reused and compiler.calls == 1
    corrupt(first.path)
    messages: list[str] = []
    rebuilt = cache.get_or_build(SPEC, target(), SCHEMA, messages.append)
    assert not rebuilt.reused and compiler.calls == 2 and rebuilt.path == first.path
    assert rebuilt.path.read_bytes() == real_vmfb[1]
    check_manifest(rebuilt.path, rebuilt.identity)
    assert any("failed verification; rebuilding" in m for m in messages), messages
    forbid_compiling(monkeypatch)
    assert cache.get_or_build(SPEC, target(), SCHEMA).reused


# ---------------------------------------------------------------------------------------------- identity


def test_identity_covers_contract_config_module_target_and_schema(tmp_path, compiler):
    cache = ArtifactCache(tmp_path)
    base = cache.get_or_build(SPEC, target(), SCHEMA)
    variants = {
        "contract": (dataclasses.replace(SPEC, contract=F32_REFERENCE), target(), SCHEMA),
        "config": (dataclasses.replace(SPEC, config=dataclasses.replace(CFG, rms_norm_eps=1e-5)), target(), SCHEMA),
        "module": (dataclasses.replace(SPEC, frame_buckets=(64, 128)), target(), SCHEMA),
        "flags": (SPEC, parse_target("cuda", "sm_80"), SCHEMA),
        "weight_schema": (SPEC, target(), SCHEMA + "-quantized"),
    }
    paths = {base.path}
    for field, (spec, tgt, schema) in variants.items():
        built = cache.get_or_build(spec, tgt, schema)
        assert not built.reused, field
        assert built.path not in paths, f"a changed {field} reused another identity's artifact"
        assert built.identity[field] != base.identity[field], field
        paths.add(built.path)
    assert compiler.calls == 1 + len(variants)
    # the same inputs again: the same identity and artifact
    assert cache.get_or_build(SPEC, target(), SCHEMA).path == base.path
    assert compiler.calls == 1 + len(variants)


# ---------------------------------------------------------------------------------------------- concurrency


def _build_in_child(root: str, marker_dir: str, barrier, results) -> None:
    """Run in a spawned process: wait for the other, then get_or_build with a compiler that leaves a marker."""
    import os

    from gemma3n_iree.runtime.programs import artifacts as module

    real = module.compile_mlir

    def marked(mlir, tgt):
        Path(marker_dir, f"compile-{os.getpid()}").write_text("compiling\n")
        return real(mlir, tgt)

    module.compile_mlir = marked
    try:
        barrier.wait(timeout=120)
        built = module.ArtifactCache(Path(root)).get_or_build(SPEC, parse_target("llvm-cpu"), SCHEMA)
        results.put((str(built.path), built.reused))
    except BaseException as exc:  # reported to the parent rather than lost with the process
        results.put(repr(exc))


def test_concurrent_builds_produce_one_valid_artifact(tmp_path):
    root, markers = tmp_path / "cache", tmp_path / "markers"
    markers.mkdir()
    ctx = multiprocessing.get_context("spawn")  # the IREE compiler is not fork-safe
    barrier, results = ctx.Barrier(2), ctx.Queue()
    workers = [ctx.Process(target=_build_in_child, args=(str(root), str(markers), barrier, results)) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        outcomes = [results.get(timeout=300) for _ in workers]
    finally:
        for w in workers:
            w.join(timeout=60)
    assert all(isinstance(o, tuple) for o in outcomes), outcomes
    assert [w.exitcode for w in workers] == [0, 0]
    (path_a, reused_a), (path_b, reused_b) = outcomes
    assert path_a == path_b
    # exactly one process compiled; the other waited on the lock and reused the published artifact
    assert len(list(markers.iterdir())) == 1
    assert sorted([reused_a, reused_b]) == [False, True]
    path = Path(path_a)
    identity = json.loads(path.with_suffix(".json").read_text())["identity"]
    check_manifest(path, identity)
    assert [n for n in files_in(root) if not n.endswith(".lock")] == sorted([path.name, path.with_suffix(".json").name])
    assert ArtifactCache._verified(path, path.with_suffix(".json"), identity)
