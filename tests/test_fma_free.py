"""Where a product the contract rounds on its own needs a barrier before its add, and where it does not.

A fused multiply-add rounds once where the contract rounds the product and then the sum. IREE 3.13's llvm-cpu
code marks F32 arithmetic `contract`, so LLVM fuses such a pair there: the templates keep the product behind an
optimization barrier (`_macros.mlir.j2`'s `keep`). Its CUDA code rounds every F32 multiply and add explicitly
(`mul.rn.f32`, `add.rn.f32`), which ptxas may not fuse either; there the barrier only costs time (the host waits
for the device at each one), so `CUDA_LOWERING` writes the pair plainly (emitters/lowering.py). Both facts are
held here on what IREE emits, so a compiler that starts fusing on cuda, or stops on llvm-cpu, fails this file.
"""

from __future__ import annotations

import collections
import re

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters.compile import compile_mlir, parse_target
from gemma3n_iree.emitters.decoder import DecoderModuleSpec, emit_decoder_module
from gemma3n_iree.emitters.kernels import select_kernels
from gemma3n_iree.emitters.lowering import CUDA_LOWERING, lowering_for
from gemma3n_iree.model.decoder_config import builtin_decoder_config

SM90 = parse_target("cuda", "sm_90")
#: An F32 arithmetic instruction of PTX: its operation and modifiers (`fma.rn.f32`, `mul.rn.f32`, `add.f32`, ...).
_PTX_ARITHMETIC = re.compile(r"^\s*((?:mul|add|sub)(?:\.\w+)*\.f32)\s", re.M)
#: An LLVM floating-point multiply, add or subtract with the flags it carries.
_LLVM_ARITHMETIC = re.compile(r"= (fmul|fadd|fsub)((?: (?:fast|contract|reassoc|nnan|ninf|nsz|arcp|afn))*) ")


def test_cuda_rounds_every_multiply_and_add_on_its_own(tmp_path):
    """The tiny decoder's program under both contracts (decode and prefill entries), as IREE generates it for
    cuda: no F32 multiply, add or subtract in its LLVM IR carries a flag that allows contraction (`contract`,
    `fast`), so LLVM's NVPTX backend, which fuses only such flagged pairs unless a function or the target allows
    it, fuses none and selects the explicitly rounded forms; and every one in its PTX is explicitly rounded
    (`.rn`: ptxas fuses only unrounded `mul.f32`/`add.f32`)."""
    texts = []
    for contract in (MLX_CUDA_V1, F32_REFERENCE):
        spec = DecoderModuleSpec(
            builtin_decoder_config("tiny"),
            contract,
            2,
            16,
            prompts=(16,),
            batches=(1,),
            kernels=select_kernels("auto", SM90, contract),
            lowering=lowering_for(SM90, contract),
        )
        assert spec.lowering == CUDA_LOWERING
        dump = tmp_path / contract.name
        compile_mlir(
            emit_decoder_module(spec),
            SM90,
            [f"--iree-hal-dump-executable-intermediates-to={dump}", f"--iree-hal-dump-executable-binaries-to={dump}"],
        )
        texts += [(path, path.read_text()) for path in sorted(dump.glob("*.optimized.ll")) + sorted(dump.glob("*.ptx"))]
    llvm = collections.Counter(
        (op, flags.strip())
        for path, text in texts
        if path.suffix == ".ll"
        for op, flags in _LLVM_ARITHMETIC.findall(text)
    )
    assert llvm, "no LLVM arithmetic found"
    contractible = {key: n for key, n in llvm.items() if {"fast", "contract"} & set(key[1].split())}
    assert not contractible, f"LLVM arithmetic that may be contracted: {contractible}"
    assert not any('"unsafe-fp-math"="true"' in text for path, text in texts if path.suffix == ".ll")
    ptx = collections.Counter(
        op for path, text in texts if path.suffix == ".ptx" for op in _PTX_ARITHMETIC.findall(text)
    )
    assert ptx, "no PTX arithmetic found"
    unrounded = {op: n for op, n in ptx.items() if ".rn" not in op}
    assert not unrounded, f"F32 arithmetic ptxas may contract: {unrounded}"


def test_llvm_cpu_fuses_a_multiply_and_its_add(tmp_path):
    """Why llvm-cpu keeps the barrier: IREE marks the pair `contract` there, and x86 fuses it."""
    mlir = """
func.func @main(%a: tensor<64xf32>, %b: tensor<64xf32>, %c: tensor<64xf32>) -> tensor<64xf32> {
  %p = stablehlo.multiply %a, %b : tensor<64xf32>
  %s = stablehlo.add %p, %c : tensor<64xf32>
  return %s : tensor<64xf32>
}
"""
    cpu = parse_target("llvm-cpu:x86-64-v3")
    assert not lowering_for(cpu, MLX_CUDA_V1).unfused_mul_add
    compile_mlir(mlir, cpu, [f"--iree-hal-dump-executable-intermediates-to={tmp_path}"])
    (assembly,) = tmp_path.glob("*.s")
    assert re.search(r"\bvfmadd\w*ps\b", assembly.read_text())
