"""Compile audio module specs once per test session and load them with given weights."""

from __future__ import annotations

import functools
import shutil
import tempfile
from pathlib import Path

import numpy as np

from gemma3n_iree.emitters.audio import AudioModuleSpec, emit_audio_module
from gemma3n_iree.emitters.compile import compile_mlir, parse_target
from gemma3n_iree.runtime.session import AudioSession


@functools.cache
def compiled_cpu(spec: AudioModuleSpec) -> bytes:
    return compile_mlir(emit_audio_module(spec), parse_target("llvm-cpu", None))


def load_session(spec: AudioModuleSpec, weights: dict[str, np.ndarray]) -> AudioSession:
    """The llvm-cpu artifact of `spec` with `weights` (checkpoint name -> BF16 array) as parameters."""
    from safetensors.numpy import save_file

    directory = Path(tempfile.mkdtemp(prefix="gemma3n-test-"))
    try:
        save_file(weights, str(directory / "model.safetensors"))
        return AudioSession(compiled_cpu(spec), [directory / "model.safetensors"])
    finally:  # the session holds the file open and mapped; the data lives until it is released
        shutil.rmtree(directory)
