"""Compile audio module specs once per test session and load them with given weights."""

from __future__ import annotations

import dataclasses
import functools
import shutil
import tempfile
from pathlib import Path

import numpy as np

from gemma3n_iree.emitters.audio import AudioModuleSpec, emit_audio_module
from gemma3n_iree.emitters.compile import Target, compile_mlir, parse_target
from gemma3n_iree.emitters.lowering import lowering_for
from gemma3n_iree.runtime.encoder.audio_session import AudioSession

CPU = parse_target("llvm-cpu", None)


@functools.cache
def compiled_cpu(spec: AudioModuleSpec, target: Target = CPU) -> bytes:
    """`spec` compiled as the product compiles it for the llvm-cpu `target` (in that target's forms)."""
    lowered = dataclasses.replace(spec, lowering=lowering_for(target, spec.contract))
    return compile_mlir(emit_audio_module(lowered), target)


def load_session(spec: AudioModuleSpec, weights: dict[str, np.ndarray], target: Target = CPU) -> AudioSession:
    """The llvm-cpu artifact of `spec` for `target` (default: this machine's CPU) with `weights` (checkpoint
    name -> BF16 array) as parameters."""
    from safetensors.numpy import save_file

    directory = Path(tempfile.mkdtemp(prefix="gemma3n-test-"))
    try:
        save_file(weights, str(directory / "model.safetensors"))
        return AudioSession(compiled_cpu(spec, target), [directory / "model.safetensors"])
    finally:  # the session holds the file open and mapped; the data lives until it is released
        shutil.rmtree(directory)
