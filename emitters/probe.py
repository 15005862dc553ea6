"""Single-op probe modules: one op function behind a public entry, for property tests and probes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..contracts.policy import NumericContract
from .kernels import IREE_CODEGEN, LinkedKernels
from .lowering import DEFAULT_LOWERING, Lowering
from .ops import OpEmitter
from .render import Func, ModuleBuilder

if TYPE_CHECKING:
    from ..model.decoder_config import DecoderConfig
    from .decoder_ops import DecoderOpEmitter


def probe_module(
    contract: NumericContract,
    build: Callable[[OpEmitter], Func],
    name: str = "main",
    kernels: LinkedKernels = IREE_CODEGEN,
    lowering: Lowering = DEFAULT_LOWERING,
) -> str:
    """A module whose entry `name` calls the op that `build` renders (in the forms `lowering`,
    emitters/lowering.py); returns verified MLIR text."""
    module = ModuleBuilder("probe")
    func = build(OpEmitter(module, contract, kernels, lowering))
    module.add_raw(f"entry:{name}", "probe_entry.mlir.j2", calls=[func], name=name, func=func)
    return module.build()


def decoder_probe_module(
    contract: NumericContract,
    cfg: DecoderConfig,
    build: Callable[[DecoderOpEmitter], Func],
    name: str = "main",
    lowering: Lowering = DEFAULT_LOWERING,
    kernels: LinkedKernels = IREE_CODEGEN,
) -> str:
    """`probe_module` for the decoder's op families (a `DecoderOpEmitter` of configuration `cfg`)."""
    from .decoder_ops import DecoderOpEmitter

    module = ModuleBuilder("probe")
    func = build(DecoderOpEmitter(module, contract, kernels, lowering, cfg=cfg))
    module.add_raw(f"entry:{name}", "probe_entry.mlir.j2", calls=[func], name=name, func=func)
    return module.build()
