"""Run a committed kernel's Triton source on the CPU, in Triton's interpreter (numpy arithmetic).

TRITON_INTERPRET is read when `triton.jit` decorates a function and again at each launch, so the
source is imported under its own module name with the flag set, and each launch sets it again; the
flag is never left set, so building the real PTX in the same session is unaffected.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Callable

import pytest

from gemma3n_iree.kernels.registry import KERNEL_DIR


def interpreted_kernels(source: str) -> Callable[..., None]:
    """launch(name, grid, *args, **constexprs) for the kernels of `kernels/<source>` (skips without triton)."""
    pytest.importorskip("triton", reason="the `kernels` extra (triton) runs the kernel source")
    pytest.importorskip("torch", reason="Triton's interpreter takes torch tensors")
    interpret = pytest.MonkeyPatch()
    with interpret.context() as patch:
        patch.setenv("TRITON_INTERPRET", "1")
        spec = importlib.util.spec_from_file_location(f"{source.removesuffix('.py')}_interpreted", KERNEL_DIR / source)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)

    def launch(name: str, grid: int, *args: object, **constexprs: object) -> None:
        with interpret.context() as patch:
            patch.setenv("TRITON_INTERPRET", "1")
            patch.setitem(sys.modules, spec.name, module)  # the interpreter resolves helpers through it
            getattr(module, name)[(grid,)](*args, **constexprs)

    return launch
