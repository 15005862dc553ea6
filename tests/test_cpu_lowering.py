"""llvm-cpu's forms of the contractions (emitters/targets.py CPU_CONTRACTION_FLAGS, emitters/lowering.py).

The SSCP convolutions are written as im2col matmuls for llvm-cpu and every matmul is data-tiled there; both
only change the order in which each output's F32 sum of exact BF16 products accumulates. Checked here
against an independent float64 convolution written in this file: every output within the rigorous bound of
F32 summation in any order (gamma_K * sum |x w|) plus one rounding step of the contract, for both forms,
both weight layouts and both production contracts; and a data-tiled linear's rows do not depend on how
many rows share the call.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from conftest import compile_cpu, run_vmfb

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1, get_contract
from gemma3n_iree.contracts.metrics import bf16_ulp, f32_accumulation_bound
from gemma3n_iree.emitters.compile import compile_mlir, parse_target
from gemma3n_iree.emitters.lowering import CONV_LOWERINGS, CONVOLUTION, IM2COL, Lowering, lowering_for
from gemma3n_iree.emitters.probe import probe_module

CPU = parse_target("llvm-cpu")
BF16 = ml_dtypes.bfloat16


def _run(text: str, *args: np.ndarray, cpu: str = "host") -> list[np.ndarray]:
    """The llvm-cpu artifact of `text` (for `cpu`) called on `args`: its results."""
    return run_vmfb(compile_cpu(text, cpu), *args)


def _conv_module(contract, conv: str, args: tuple) -> str:
    return probe_module(contract, lambda e: e.sscp_conv(*args), lowering=Lowering(conv))


def _exact_conv(x: np.ndarray, w_ohwi: np.ndarray, stride: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The SSCP convolution in float64 (time padded by kt-1 at the end, frequency by 1 on each side), and the
    same with |x| and |w|: the sum of the magnitudes of each output's products."""
    _, kt, kf, _ = w_ohwi.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, kt - 1), (1, 1), (0, 0)))
    to = (x.shape[1] - 1) // stride[0] + 1
    fo = (x.shape[2] + 2 - kf) // stride[1] + 1
    exact = np.zeros((x.shape[0], to, fo, w_ohwi.shape[0]))
    magnitude = np.zeros_like(exact)
    for dt in range(kt):
        for df in range(kf):
            window = xp[
                :, dt : dt + stride[0] * (to - 1) + 1 : stride[0], df : df + stride[1] * (fo - 1) + 1 : stride[1]
            ]
            tap = w_ohwi[:, dt, df, :].astype(np.float64)
            exact += np.einsum("btfc,oc->btfo", window, tap)
            magnitude += np.einsum("btfc,oc->btfo", np.abs(window), np.abs(tap))
    return exact, magnitude


def test_the_cpu_writes_the_convolutions_as_matmuls():
    assert lowering_for(CPU, MLX_CUDA_V1).conv == lowering_for(CPU, F32_REFERENCE).conv == IM2COL
    assert lowering_for(parse_target("cuda", "sm_90"), MLX_CUDA_V1) == Lowering(unfused_mul_add=True)
    # the diagnostic whose evidence is a BF16-result convolution keeps the convolution everywhere
    assert lowering_for(CPU, get_contract("mlx-cuda-v1-bf16-conv")).conv == CONVOLUTION
    with pytest.raises(ValueError, match="unknown convolution lowering 'winograd'; choose one of convolution, im2col"):
        Lowering("winograd")


@pytest.mark.parametrize("contract", [MLX_CUDA_V1, F32_REFERENCE], ids=lambda c: c.name)
@pytest.mark.parametrize("conv", CONV_LOWERINGS)
@pytest.mark.parametrize(
    "clips,frames,freq,cin,cout,layout",
    [(2, 61, 128, 1, 8, "oihw"), (1, 31, 64, 8, 4, "ohwi"), (2, 40, 32, 16, 8, "oihw")],
)
def test_both_forms_are_the_convolution_up_to_accumulation_order(
    contract, conv, clips, frames, freq, cin, cout, layout
):
    rng = np.random.default_rng(frames + cin)
    x = rng.normal(0.0, 1.0, (clips, frames, freq, cin)).astype(BF16).astype(np.float32)
    w_ohwi = rng.normal(0.0, 0.2, (cout, 3, 3, cin)).astype(BF16)
    w = w_ohwi if layout == "ohwi" else np.ascontiguousarray(np.transpose(w_ohwi, (0, 3, 1, 2)))
    got = _run(_conv_module(contract, conv, (clips, frames, freq, cin, cout, (3, 3), (2, 2), layout)), x, w)[0]
    exact, magnitude = _exact_conv(x, w_ohwi, (2, 2))
    k = 9 * cin
    u = 2.0**-24
    summation = k * u / (1 - k * u) * magnitude
    rounding = bf16_ulp(exact) if contract.round_bf16 else np.abs(exact) * u
    excess = np.abs(got.astype(np.float64) - exact) - summation - rounding
    assert got.shape == exact.shape
    assert excess.max() <= 0, f"an output is {excess.max():.3g} outside the accumulation envelope"


def test_a_data_tiled_linears_rows_do_not_depend_on_the_rows_beside_them():
    rng = np.random.default_rng(5)
    x = rng.normal(0.0, 1.0, (1, 200, 96)).astype(BF16).astype(np.float32)
    w = rng.normal(0.0, 0.1, (80, 96)).astype(BF16)
    outputs = {
        rows: _run(probe_module(MLX_CUDA_V1, lambda e, rows=rows: e.linear([1, rows], 96, 80)), x[:, :rows], w)[0]
        for rows in (1, 7, 64, 200)
    }
    for rows, y in outputs.items():
        np.testing.assert_array_equal(y[0], outputs[200][0, :rows], err_msg=f"{rows} rows")


def _three_way_linear(rows: int, k: int, n: int) -> str:
    """A rounded linear whose result leaves the dispatch three ways (kept, clamped, squared), as the input
    projection's does into the first feed-forward's norm."""
    x, w, y = f"tensor<{rows}x{k}xf32>", f"tensor<{n}x{k}xbf16>", f"tensor<{rows}x{n}xf32>"
    return f"""module @probe {{
  func.func @main(%x: {x}, %w: {w}) -> ({y}, {y}, {y}) {{
    %a = stablehlo.convert %x : ({x}) -> tensor<{rows}x{k}xbf16>
    %d = stablehlo.dot_general %a, %w, contracting_dims = [1] x [1] : (tensor<{rows}x{k}xbf16>, {w}) -> {y}
    %r = stablehlo.reduce_precision %d, format = e8m7 : {y}
    %lo = stablehlo.constant dense<-1.0e10> : tensor<f32>
    %hi = stablehlo.constant dense<1.0e10> : tensor<f32>
    %c = stablehlo.clamp %lo, %r, %hi : (tensor<f32>, {y}, tensor<f32>) -> {y}
    %s = stablehlo.multiply %c, %c : {y}
    return %r, %c, %s : {y}, {y}, {y}
  }}
}}"""


def test_the_data_tiling_path_compiles_a_masked_attention_and_a_linear_read_three_ways():
    """IREE 3.13's default data-tiling path (from dispatch creation) fails on a masked attention (a pack of i1)
    and on a linear read three ways at the input projection's shape (49 KiB of stack); the path the CPU
    target uses (from global optimization) compiles both, and computes the linear."""
    from gemma3n_iree.model.audio_config import builtin_config

    tiny = builtin_config("tiny")
    attention = probe_module(
        MLX_CUDA_V1,
        lambda e: e.attention(1, 25, tiny.hidden_size, tiny.conf_num_attention_heads, 12, 12, 50.0, 1e-6, 1e10),
    )
    assert compile_mlir(attention, CPU)
    rng = np.random.default_rng(2)
    x = rng.normal(0.0, 1.0, (96, 1024)).astype(BF16).astype(np.float32)
    w = rng.normal(0.0, 0.05, (1536, 1024)).astype(BF16)
    kept, clamped, squared = _run(_three_way_linear(96, 1024, 1536), x, w)
    exact = x.astype(np.float64) @ w.astype(np.float64).T
    envelope = f32_accumulation_bound(x, w.astype(np.float32)) + bf16_ulp(exact)
    assert (np.abs(kept - exact) <= envelope).all()
    np.testing.assert_array_equal(clamped, kept)
    np.testing.assert_array_equal(squared, kept * kept)


def _has_avx512_bf16() -> bool:
    try:
        return "avx512_bf16" in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False


@pytest.mark.skipif(not _has_avx512_bf16(), reason="the order is that of AVX512-BF16's vdpbf16ps; this CPU has none")
def test_a_data_tiled_bf16_linear_sums_in_the_dot_product_instructions_order():
    """On a CPU with AVX512-BF16 every output is the serial F32 sum of its products taken pairwise, odd element
    first (`vdpbf16ps`), bit for bit: the envelope's `pairs-odd-first` order, not merely inside the envelope."""
    from gemma3n_iree.contracts.emulation import round_bf16
    from gemma3n_iree.contracts.envelope import accumulation_orders

    rng = np.random.default_rng(9)
    x = rng.normal(0.0, 1.0, (1, 64, 97)).astype(BF16).astype(np.float32)  # odd K: the last pair is padded
    w = rng.normal(0.0, 0.1, (48, 97)).astype(BF16)
    got = _run(probe_module(MLX_CUDA_V1, lambda e: e.linear([1, 64], 97, 48)), x, w)[0][0]
    order = dict(accumulation_orders(97))["pairs-odd-first"]
    products = x[0][:, None, :] * w.astype(np.float32)[None, :, :]  # exact: BF16 x BF16 fits F32
    want = round_bf16(np.array([[order(p) for p in row] for row in products], np.float32))
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------------------------- no BF16 dot

#: A CPU without a BF16 dot instruction that this machine (x86-64 with AVX2) also runs: AVX2, FMA, BMI.
NO_BF16_DOT = parse_target("llvm-cpu:x86-64-v3")  # compiled by `_run(..., cpu="x86-64-v3")`


def test_bf16_dots_are_widened_exactly_where_the_cpu_has_no_bf16_dot():
    """The decision is read from the compiler's own CPU features (compile.cpu_features)."""
    from gemma3n_iree.emitters.compile import cpu_features

    assert "+avx512bf16" in cpu_features(parse_target("llvm-cpu:sapphirerapids"))
    assert not lowering_for(parse_target("llvm-cpu:sapphirerapids"), MLX_CUDA_V1).widen_bf16
    assert lowering_for(parse_target("llvm-cpu:skylake-avx512"), MLX_CUDA_V1).widen_bf16
    assert lowering_for(NO_BF16_DOT, MLX_CUDA_V1).widen_bf16
    assert not lowering_for(NO_BF16_DOT, F32_REFERENCE).widen_bf16  # its operands are F32 already
    assert lowering_for(CPU, MLX_CUDA_V1).widen_bf16 == (not {"+avx512bf16", "+bf16"} & cpu_features(CPU))


def test_a_widened_linear_is_the_serial_f32_sum_of_its_bf16_products():
    """Compiled for a CPU without a BF16 dot, a BF16 linear reads its operands as F32 (rounded to BF16 first,
    as the contract says: the input here is not BF16-valued) and sums them serially in F32, bit for bit."""
    from gemma3n_iree.contracts.emulation import round_bf16
    from gemma3n_iree.contracts.envelope import accumulation_orders

    rng = np.random.default_rng(11)
    x = rng.normal(0.0, 1.0, (1, 33, 80)).astype(np.float32)  # F32 values: the operand rounding must happen
    w = rng.normal(0.0, 0.1, (40, 80)).astype(BF16)
    lowering = lowering_for(NO_BF16_DOT, MLX_CUDA_V1)
    text = probe_module(MLX_CUDA_V1, lambda e: e.linear([1, 33], 80, 40), lowering=lowering)
    assert (
        "(tensor<40x80xbf16>) -> tensor<40x80xf32>" in text
        and "reduce_precision %0, format = e8m7 : tensor<33x80xf32>" in text
    )
    got = _run(text, x, w, cpu="x86-64-v3")[0][0]
    sequential = dict(accumulation_orders(80))["sequential"]
    products = round_bf16(x[0])[:, None, :] * w.astype(np.float32)[None, :, :]
    want = round_bf16(np.array([[sequential(p) for p in row] for row in products], np.float32))
    np.testing.assert_array_equal(got, want)
