"""Single-op probe modules: one op function behind a public entry, for property tests and probes."""

from __future__ import annotations

from typing import Callable

from ..contracts.policy import NumericContract
from .kernels import IREE_CODEGEN, LinkedKernels
from .ops import OpEmitter
from .render import Func, ModuleBuilder


def probe_module(contract: NumericContract, build: Callable[[OpEmitter], Func], name: str = "main",
                 kernels: LinkedKernels = IREE_CODEGEN) -> str:
    """A module whose entry `name` calls the op that `build` renders; returns verified MLIR text."""
    module = ModuleBuilder("probe")
    func = build(OpEmitter(module, contract, kernels))
    module.add_raw(f"entry:{name}", "probe_entry.mlir.j2", calls=[func], name=name, func=func)
    return module.build()
