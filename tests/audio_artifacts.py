"""Compile audio module specs once per test session and load them with given weights."""

from __future__ import annotations

import dataclasses
import functools
import shutil
import tempfile
from pathlib import Path

import numpy as np

from gemma3n_iree.emitters.audio import AudioModuleSpec, emit_audio_module
from gemma3n_iree.emitters.compile import compile_mlir, parse_target
from gemma3n_iree.emitters.lowering import conv_lowering
from gemma3n_iree.runtime.session import AudioSession

CPU = parse_target("llvm-cpu", None)


@functools.cache
def compiled_cpu(spec: AudioModuleSpec) -> bytes:
    """`spec` compiled as the product compiles it for llvm-cpu (with that target's convolution lowering)."""
    return compile_mlir(emit_audio_module(dataclasses.replace(spec, conv=conv_lowering(CPU, spec.contract))), CPU)


def load_session(spec: AudioModuleSpec, weights: dict[str, np.ndarray]) -> AudioSession:
    """The llvm-cpu artifact of `spec` with `weights` (checkpoint name -> BF16 array) as parameters."""
    from safetensors.numpy import save_file

    directory = Path(tempfile.mkdtemp(prefix="gemma3n-test-"))
    try:
        save_file(weights, str(directory / "model.safetensors"))
        return AudioSession(compiled_cpu(spec), [directory / "model.safetensors"])
    finally:  # the session holds the file open and mapped; the data lives until it is released
        shutil.rmtree(directory)
