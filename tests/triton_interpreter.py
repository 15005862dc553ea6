"""Run a kernel's Triton source on the CPU, in Triton's interpreter (numpy arithmetic).

TRITON_INTERPRET is read when `triton.jit` decorates a function and again at each launch, so the
source is imported under its own module name with the flag set, and each launch sets it again; the
flag is never left set, so building the real PTX in the same session is unaffected. The kernels'
shared helpers (`kernels/triton_numerics.py`, and the row reductions' `kernels/reductions_triton.py` that
other kernels build on) are imported the same way and stand in for the real modules while a source is
imported and while its kernels run, so every helper a kernel calls is an interpreted one.

Triton 3.9's interpreter keeps BF16 values as their 16-bit patterns and hands those to numpy's
matmul as integers; while a kernel runs, `tl.dot` is given the BF16 values instead (exact in F32).
Its F32 matmul then sums in numpy's order, so the tests give it products whose sums are exact.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from gemma3n_iree.kernels.registry import KERNEL_DIR

#: The kernel sources other sources import helpers from, in import order.
SHARED = ("gemma3n_iree.kernels.triton_numerics", "gemma3n_iree.kernels.reductions_triton")


def _dot_of_bf16_values(builder, a, b, d, input_precision, max_num_imprecise_acc):  # noqa: ANN001
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    def values(h):  # noqa: ANN001, ANN202
        return (h.data.astype(np.uint32) << 16).view(np.float32) if h.dtype.scalar == tl.bfloat16 else h.data

    return TensorHandle(np.matmul(values(a), values(b), dtype=d.data.dtype) + d.data, d.dtype.scalar)


def _import_interpreted(path: Path, name: str, patch: pytest.MonkeyPatch, shared: dict[str, ModuleType]) -> ModuleType:
    patch.setenv("TRITON_INTERPRET", "1")
    for module_name, module in shared.items():
        patch.setitem(sys.modules, module_name, module)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def interpreted_kernels(source: str | Path) -> Callable[..., None]:
    """launch(name, grid, *args, **constexprs) for the kernels of `source`: a file name under `kernels/`
    or a path (skips without triton)."""
    pytest.importorskip("triton", reason="the `kernels` extra (triton) runs the kernel source")
    pytest.importorskip("torch", reason="Triton's interpreter takes torch tensors")
    from triton.runtime.interpreter import InterpreterBuilder

    path = KERNEL_DIR / source
    interpret = pytest.MonkeyPatch()
    shared: dict[str, ModuleType] = {}
    for module_name in SHARED:
        with interpret.context() as patch:
            file = KERNEL_DIR / f"{module_name.rsplit('.', 1)[1]}.py"
            shared[module_name] = _import_interpreted(file, module_name, patch, dict(shared))
    with interpret.context() as patch:
        name = f"{path.stem}_interpreted"
        module = _import_interpreted(path, name, patch, shared)

    def launch(kernel: str, grid: int, *args: object, **constexprs: object) -> None:
        with interpret.context() as patch:
            patch.setenv("TRITON_INTERPRET", "1")
            patch.setitem(sys.modules, name, module)  # the interpreter resolves helpers through them
            for module_name, shared_module in shared.items():
                patch.setitem(sys.modules, module_name, shared_module)
            patch.setattr(InterpreterBuilder, "create_dot", _dot_of_bf16_values)
            getattr(module, kernel)[(grid,)](*args, **constexprs)

    return launch
