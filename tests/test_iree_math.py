"""`contracts/iree_math.py` is IREE's own exp, tanh and log, and the kernels' Triton versions of exp and tanh are
them too.

The emulation is checked against IREE itself (a module of `stablehlo.exponential` and
`stablehlo.tanh` compiled for llvm-cpu and run) on every BF16 bit pattern, random F32 bit patterns
and dense ranges; the CPU runtime flushes subnormals to zero, the CUDA code does not, so the CPU
comparison leaves out subnormal inputs and results (and shows that those are the only differences).
The Triton helpers (`kernels/triton_numerics.py`) run in Triton's interpreter against the emulation
on the same inputs, subnormals included, bit for bit.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from triton_interpreter import interpreted_kernels

from gemma3n_iree.contracts import iree_math
from gemma3n_iree.emitters.compile import compile_mlir, parse_target

F32 = np.float32
N = 1 << 19


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate(
        [
            (np.arange(1 << 16, dtype=np.uint32) << 16).view(F32),  # every BF16 value, NaN and infinities included
            rng.integers(0, 1 << 32, N - (1 << 16) - (1 << 17), dtype=np.uint64).astype(np.uint32).view(F32),
            np.linspace(-100, 10, 1 << 16, dtype=F32),  # the softmax's range, across exp's clamp at -87.8
            np.linspace(-10, 10, 1 << 16, dtype=F32),  # tanh's polynomial and its clamp at 7.998...
        ]
    )


def _same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))


def _subnormal(x: np.ndarray) -> np.ndarray:
    return (x != 0) & (np.abs(x) < np.finfo(F32).tiny)


def _round_to_f32(exact: Fraction) -> np.float32:
    """Round-to-nearest-even of an exact rational to F32, by comparing the neighbours of a guess."""
    guess = F32(float(exact))
    candidates = [np.nextafter(guess, F32(-np.inf)), guess, np.nextafter(guess, F32(np.inf))]
    distance = [abs(Fraction(float(c)) - exact) for c in candidates]
    best = min(distance)
    ties = [c for c, d in zip(candidates, distance) if d == best]
    return min(ties, key=lambda c: int(np.asarray(c).view(np.uint32)) & 1)


finite_f32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-(2.0**60), max_value=2.0**60)


@settings(max_examples=300, deadline=None)
@given(finite_f32, finite_f32, finite_f32)
def test_fma_rounds_once(a, b, c):
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    # an exact zero takes IEEE's sign (-0 only from -0 + -0), which F64 arithmetic gives exactly
    want = _round_to_f32(exact) if exact else F32(np.float64(a) * np.float64(b) + np.float64(c))
    assert iree_math.fma(F32(a), F32(b), F32(c)).view(np.uint32) == want.view(np.uint32)


def test_fma_breaks_the_double_rounding_tie():
    """a b + c = 1 + 3 2^-24 - 2^-70: just below a midpoint of F32. F64 rounds it onto the midpoint,
    whose F32 tie goes up to 1 + 2^-22; the single rounding gives 1 + 2^-23."""
    a, b, c = F32(2.0**-24 * (1 + 2.0**-23)), F32(1 - 2.0**-23), F32(1 + 2.0**-23)
    assert F32(np.float64(a) * np.float64(b) + np.float64(c)) == F32(1 + 2.0**-22)
    assert iree_math.fma(a, b, c) == F32(1 + 2.0**-23)


MODULE = f"""
func.func @main(%x: tensor<{N}xf32>) -> (tensor<{N}xf32>, tensor<{N}xf32>) {{
  %e = stablehlo.exponential %x : tensor<{N}xf32>
  %t = stablehlo.tanh %x : tensor<{N}xf32>
  return %e, %t : tensor<{N}xf32>, tensor<{N}xf32>
}}
"""


def test_the_emulation_is_what_iree_compiles_exp_and_tanh_to():
    import iree.runtime as rt

    vmfb = compile_mlir(MODULE, parse_target("llvm-cpu"))
    config = rt.Config("local-task")
    context = rt.SystemContext(config=config)
    context.add_vm_module(rt.VmModule.copy_buffer(config.vm_instance, vmfb))
    x = _inputs()
    got_exp, got_tanh = (np.asarray(r) for r in context.modules.module.main(x))
    with np.errstate(all="ignore"):
        want_exp, want_tanh = iree_math.exp(x), iree_math.tanh(x)
        libm_exp = np.exp(x)
    for got, want, at_zero in ((got_exp, want_exp, 1.0), (got_tanh, want_tanh, 0.0)):
        differ = ~_same_bits(got, want)
        assert not (differ & ~(_subnormal(x) | _subnormal(want))).any()
        # the CPU's flush to zero: a subnormal result becomes 0, a subnormal input gives f(0)
        assert np.isin(got[differ], [0.0, at_zero]).all()
    assert not _same_bits(got_exp, libm_exp).all()  # it is not libm's exp: the emulation is needed


LOG_MODULE = f"""
func.func @main(%x: tensor<{N}xf32>) -> tensor<{N}xf32> {{
  %y = stablehlo.log %x : tensor<{N}xf32>
  return %y : tensor<{N}xf32>
}}
"""


def test_the_emulation_is_what_iree_compiles_log_to():
    """The token selection's log (llvm-cpu): the same inputs plus the range of a softmax sum (1 .. 262400);
    within 1 ulp of the correctly rounded log (0.8 measured), and not it."""
    import iree.runtime as rt

    vmfb = compile_mlir(LOG_MODULE, parse_target("llvm-cpu"))
    config = rt.Config("local-task")
    context = rt.SystemContext(config=config)
    context.add_vm_module(rt.VmModule.copy_buffer(config.vm_instance, vmfb))
    x = _inputs()
    x[-(1 << 16) :] = np.linspace(1, 262400, 1 << 16, dtype=F32)
    got = np.asarray(context.modules.module.main(x))
    with np.errstate(all="ignore"):
        want, exact = iree_math.log(x), np.log(x.astype(np.float64))
    differ = ~_same_bits(got, want)
    assert not (differ & ~_subnormal(x)).any()  # the CPU reads a subnormal input as 0: -inf
    normal = (x >= np.finfo(F32).tiny) & np.isfinite(x)
    spacing = np.spacing(np.abs(exact[normal]).astype(F32)).astype(np.float64)
    assert (np.abs(want[normal] - exact[normal]) <= spacing).all()
    assert not _same_bits(want[normal], exact[normal].astype(F32)).all()


def test_the_kernel_helpers_are_the_emulation():
    launch = interpreted_kernels(__file__.replace("test_iree_math.py", "iree_math_probe_kernel.py"))
    import torch

    x = _inputs()
    got_exp, got_tanh = torch.empty(x.size), torch.empty(x.size)
    with np.errstate(all="ignore"):
        launch("exp_and_tanh", x.size // 4096, torch.from_numpy(x), got_exp, got_tanh, x.size, BLOCK=4096)
        assert _same_bits(got_exp.numpy(), iree_math.exp(x)).all()
        assert _same_bits(got_tanh.numpy(), iree_math.tanh(x)).all()
