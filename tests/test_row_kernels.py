"""The committed row kernels (kernels/reductions_triton.py) compute the contract's arithmetic exactly.

The kernels' Triton source runs here in Triton's interpreter (numpy arithmetic, IEEE F32, no FMA),
against the emulation's `lane_xor_sum` and `rms_norm`, bit for bit. The data spans many binades, so
a sum in any other order gives other bits (checked). The PTX built from that source is pinned by content and
rebuilt byte for byte, and its parameter list is the one IREE's custom dispatch passes. On the H200,
`scripts/device_parity.py --compare-with` shows every stage of the encoder unchanged (BENCHMARKS.md).
"""

from __future__ import annotations

import ast
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_files import entry_parameters, rebuilt_ptx
from triton_interpreter import interpreted_kernels

from gemma3n_iree.contracts import decoder_ops as D
from gemma3n_iree.contracts.decoder_ops import rms_norm as decoder_rms_norm
from gemma3n_iree.contracts.emulation import BF16_MIN, lane_threads, lane_xor_sum, rms_norm, rnd
from gemma3n_iree.contracts.policy import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.emitters.kernels import select_kernels
from gemma3n_iree.emitters.probe import decoder_probe_module, probe_module
from gemma3n_iree.kernels import (
    LANE_SUMS_SM90,
    PARTIAL_NORM_KV_SM90,
    PARTIAL_NORM_RESIDUALS_SM90,
    PARTIAL_NORM_STREAMS_SM90,
    PARTIAL_NORMS_SM90,
    RMS_NORMS_SM90,
    partial_norm_kv_call,
    partial_norm_residual_call,
    partial_norm_streams_call,
)
from gemma3n_iree.kernels.reductions import BF16_RESIDUALS
from gemma3n_iree.kernels.registry import KERNEL_DIR
from gemma3n_iree.model.decoder_config import builtin_decoder_config

SM90 = parse_target("cuda", "sm_90")
# The interpreter's numpy arithmetic warns on the overflowing and NaN rows the tests feed on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in (multiply|add):RuntimeWarning")


@pytest.fixture(scope="module")
def interpreted():
    """The reduction kernels run by Triton's interpreter: lane_sum(x, reads, square), norm(x, w, eps, ...),
    partial_norm(p, w, eps, round_bf16), partial_norm_residual(residual, p, w, res, add, rounds),
    partial_norm_streams(p, w, streams, rounds), partial_norm_kv(p, w, cos, sin, heads, rope, rounds)."""
    run = interpreted_kernels("reductions_triton.py")  # skips without triton and torch
    import torch

    def launch(name: str, kernel, rows: int, *args) -> None:
        run(name, kernel.workgroups(rows), *args, **dict(kernel.file.constexprs))  # the file's own switches

    def lane_sum(x: np.ndarray, reads: int, square: bool) -> np.ndarray:
        rows, width = x.shape
        out = torch.zeros(rows, dtype=torch.float32)
        launch(
            "lane_xor_sum",
            LANE_SUMS_SM90[lane_threads(width, reads)],
            rows,
            torch.from_numpy(np.ascontiguousarray(x)),
            out,
            rows,
            width,
            reads,
            int(square),
        )
        return out.numpy()

    def norm(
        x: np.ndarray,
        w: np.ndarray,
        eps: float,
        round_bf16: bool,
        clip: float = np.inf,
        res: np.ndarray | None = None,
        weight: float = 0.0,
        out_bf16: bool = False,
        x_bf16: bool = False,
        mlx: bool = False,
    ) -> np.ndarray:
        rows, width = x.shape
        bits = lambda v: int(np.float32(v).view(np.int32))  # noqa: E731
        out = torch.zeros((rows, width), dtype=torch.bfloat16 if out_bf16 else torch.float32)
        as_bf16 = lambda a: torch.from_numpy(a.astype(ml_dtypes.bfloat16).view(np.int16)).view(torch.bfloat16)  # noqa: E731
        head = [as_bf16(x) if x_bf16 else torch.from_numpy(np.ascontiguousarray(x)), as_bf16(w)]
        tail = [rows, width, bits(eps), bits(clip)]
        if res is None:
            variant = "mlx" if mlx else "bf16" if out_bf16 else "f32"
            args = head + [out] + tail + [int(round_bf16)]
        else:
            variant = "residual_bf16" if x_bf16 else "residual"
            args = head + [torch.from_numpy(np.ascontiguousarray(res)), out] + tail + [bits(weight), int(round_bf16)]
        kernel = RMS_NORMS_SM90[variant, lane_threads(width, 8)]
        launch(kernel.file.entry, kernel, rows, *args)
        return out.float().numpy()

    def partial_norm(p: np.ndarray, w: np.ndarray, eps: float, round_bf16: bool) -> np.ndarray:
        splits, rows, width = p.shape
        out = torch.zeros((rows, width), dtype=torch.float32)
        as_bf16 = torch.from_numpy(w.astype(ml_dtypes.bfloat16).view(np.int16)).view(torch.bfloat16)
        eps_bits = int(np.float32(eps).view(np.int32))
        kernel = PARTIAL_NORMS_SM90[lane_threads(width, 8)]
        args = [torch.from_numpy(np.ascontiguousarray(p)), as_bf16, out, rows, width, splits, eps_bits]
        launch(kernel.file.entry, kernel, rows, *args, int(round_bf16))
        return out.numpy()

    def partial_norm_residual(
        residual: str, p: np.ndarray, w: np.ndarray, res: np.ndarray, add: np.ndarray, rounds: dict[str, bool]
    ) -> np.ndarray:
        splits, rows, width = p.shape
        out = torch.zeros((rows, width), dtype=torch.float32)
        as_bf16 = torch.from_numpy(w.astype(ml_dtypes.bfloat16).view(np.int16)).view(torch.bfloat16)
        call = partial_norm_residual_call(
            residual, lane_threads(width, 8), rows, width, splits, 1e-6, 2.0**-0.5, rounds
        )
        f32 = lambda a: torch.from_numpy(np.ascontiguousarray(a, np.float32))  # noqa: E731
        residual_in = f32(res).to(torch.bfloat16) if residual in BF16_RESIDUALS else f32(res)
        run(call.file.entry, call.workgroups, f32(p), as_bf16, residual_in, f32(add), out, *call.constants,
            **dict(call.file.constexprs))  # fmt: skip
        return out.numpy()

    def partial_norm_streams(p: np.ndarray, w: np.ndarray, streams: np.ndarray, rounds: dict[str, bool]) -> np.ndarray:
        splits, rows, width = p.shape
        out = torch.zeros(streams.shape, dtype=torch.float32)
        as_bf16 = torch.from_numpy(w.astype(ml_dtypes.bfloat16).view(np.int16)).view(torch.bfloat16)
        call = partial_norm_streams_call(lane_threads(width, 8), streams.shape[0], rows, width, splits, 1e-6, rounds)
        f32 = lambda a: torch.from_numpy(np.ascontiguousarray(a, np.float32))  # noqa: E731
        run(call.file.entry, call.workgroups, f32(p), as_bf16, f32(streams), out, *call.constants,
            **dict(call.file.constexprs))  # fmt: skip
        return out.numpy()

    def partial_norm_kv(
        p: np.ndarray, w: np.ndarray, cos: np.ndarray, sin: np.ndarray, heads: int, rope: bool, rounds: dict[str, bool]
    ) -> np.ndarray:
        splits, rows, width = p.shape
        out = torch.zeros((rows, width), dtype=torch.bfloat16)
        as_bf16 = torch.from_numpy(w.astype(ml_dtypes.bfloat16).view(np.int16)).view(torch.bfloat16)
        call = partial_norm_kv_call(rope, lane_threads(width, 8), rows, heads, width, splits, 1e-6, rounds)
        f32 = lambda a: torch.from_numpy(np.ascontiguousarray(a, np.float32))  # noqa: E731
        run(call.file.entry, call.workgroups, f32(p), as_bf16, f32(cos), f32(sin), out, *call.constants,
            **dict(call.file.constexprs))  # fmt: skip
        return (out.view(torch.int16).numpy().astype(np.uint32) << 16).view(np.float32)

    return lane_sum, norm, partial_norm, partial_norm_residual, partial_norm_streams, partial_norm_kv


def _many_binades(rng: np.random.Generator, rows: int, width: int) -> np.ndarray:
    return (rng.standard_normal((rows, width)) * np.exp2(rng.integers(-30, 30, (rows, width)))).astype(np.float32)


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    """Bit for bit, except that any NaN matches any NaN (payloads are not part of the contract)."""
    nan = np.isnan(want)
    return bool(
        np.array_equal(np.isnan(got), nan) and np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))
    )


# Every schedule the encoder and prefill use (SSCP channel and frequency sums, the softmax over 24
# context slots, RMS norms of 1536 / 2048 / 2560 / 256), and odd widths that pad the last thread.
@pytest.mark.parametrize(
    "width,reads,square",
    [
        (128, 4, False),
        (32, 4, False),
        (24, 1, False),
        (1536, 8, True),
        (2048, 8, True),
        (2560, 8, True),
        (256, 8, True),
        (4100, 8, True),
        (7, 1, False),
        (33, 1, False),
    ],
)
def test_kernel_is_the_contract_schedule_bit_for_bit(interpreted, width, reads, square):
    x = _many_binades(np.random.default_rng(width * 10 + reads), 37, width)
    x[30, 0], x[31, -1], x[32, 0], x[32, -1] = np.nan, np.inf, np.inf, -np.inf  # NaN, +inf, inf - inf
    got = interpreted[0](x, reads, square)
    with np.errstate(invalid="ignore"):
        want = lane_xor_sum(x, reads, square=square)
    assert np.isnan(want[30]) and _same(got, want)
    # The data tells orders apart: numpy's own pairwise sum rounds differently on some rows.
    with np.errstate(invalid="ignore", over="ignore"):
        other = ((x * x) if square else x).sum(axis=1, dtype=np.float32)
    assert not np.array_equal(other[:30].view(np.uint32), want[:30].view(np.uint32))


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(1, 70),
    width=st.integers(1, 600),
    reads=st.sampled_from([1, 4, 8]),
    square=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
)
def test_kernel_matches_the_schedule_for_any_shape(interpreted, rows, width, reads, square, seed):
    x = _many_binades(np.random.default_rng(seed), rows, width)
    got, want = interpreted[0](x, reads, square), lane_xor_sum(x, reads, square=square)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def _norm_case(width: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(width)
    x = (rng.standard_normal((19, width)) * np.exp2(rng.integers(-12, 12, (19, width)))).astype(np.float32)
    x[3] = 0.0  # an all-zero row: the norm is 0 * (1 / sqrt(eps))
    x[5, 1] = np.nan  # a NaN, infinities and values whose squares overflow: what each row becomes is
    x[7, 2], x[9, 0] = np.inf, -np.inf  # the emulation's (NaN everywhere in these rows)
    x[11, :3] = 3.0e38
    return x, rng.standard_normal(width).astype(ml_dtypes.bfloat16).astype(np.float32)


@pytest.mark.parametrize("contract", [MLX_CUDA_V1, F32_REFERENCE], ids=lambda c: c.name)
@pytest.mark.parametrize("width", [1536, 2560, 256, 24, 300, 1000, 5000])  # all six schedule block sizes
def test_norm_kernel_is_the_contract_rms_norm_bit_for_bit(interpreted, contract, width):
    x, w = _norm_case(width)
    got = interpreted[1](x, w, 1e-6, contract.rounds_at(None))
    with np.errstate(over="ignore", invalid="ignore"):
        want = rms_norm(contract, x, w, 1e-6)
    assert np.isnan(want[5]).all() and _same(got, want)


@pytest.mark.parametrize("contract", [MLX_CUDA_V1, F32_REFERENCE], ids=lambda c: c.name)
@pytest.mark.parametrize("weight", [0.5, 1.0])
def test_norm_kernel_with_clamp_and_residual_is_the_conformer_tail(interpreted, contract, weight):
    x, w = _norm_case(1536)
    res = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    clip = float(np.quantile(np.abs(x[np.isfinite(x)]), 0.9))  # a tenth of the values are clamped
    got = interpreted[1](x, w, 1e-6, contract.rounds_at(None), clip=clip, res=res, weight=weight)
    with np.errstate(over="ignore", invalid="ignore"):
        norm = rms_norm(contract, np.clip(x, -clip, clip), w, 1e-6)  # the clamp keeps the NaN
    want = rnd(contract, (res + (norm * np.float32(weight)).astype(np.float32)).astype(np.float32))
    assert np.isnan(want[5]).all() and not np.isnan(want[7]).any() and _same(got, want)


def test_norm_kernel_reads_a_gemm_kernels_bf16_result(interpreted):
    """The residual variant for a BF16 X (a GEMM kernel's rounded result) computes what the F32 one
    computes on the same BF16 values."""
    x, w = _norm_case(1536)
    x = x.astype(ml_dtypes.bfloat16).astype(np.float32)  # BF16 values: NaN, infinities and 3e38 included
    res = np.random.default_rng(2).standard_normal(x.shape).astype(np.float32)
    got = interpreted[1](x, w, 1e-6, True, clip=10.0, res=res, weight=0.5, x_bf16=True)
    with np.errstate(over="ignore", invalid="ignore"):
        norm = rms_norm(MLX_CUDA_V1, np.clip(x, -10.0, 10.0), w, 1e-6)
    want = rnd(MLX_CUDA_V1, (res + (norm * np.float32(0.5)).astype(np.float32)).astype(np.float32))
    assert np.isnan(want[5]).all() and _same(got, want)


@pytest.mark.parametrize("contract", [MLX_CUDA_V1, F32_REFERENCE], ids=lambda c: c.name)
@pytest.mark.parametrize("width", [2048, 256, 2560, 24, 300])  # the decoders' hidden and head widths, odd ones
def test_mlx_norm_kernel_is_the_decoders_two_rounding_norm_bit_for_bit(interpreted, contract, width):
    """The text decoder's norm (MLX's `fast.rms_norm`, rounded before and after the weight) against the
    decoder's emulation, which the llvm-cpu program matches bit for bit; the data tells the two roundings from
    the audio norm's one (checked)."""
    x, w = _norm_case(width)
    cfg = builtin_decoder_config("e4b")
    got = interpreted[1](x, w, cfg.rms_norm_eps, contract.rounds_at(None), mlx=True)
    with np.errstate(over="ignore", invalid="ignore"):
        want = decoder_rms_norm(contract, cfg, x, w)
        one_rounding = rms_norm(contract, x, w, cfg.rms_norm_eps)
    assert np.isnan(want[5]).all() and _same(got, want)
    assert contract.rounds_at(None) != _same(one_rounding, want)  # the variants differ only where rounding


@pytest.mark.parametrize(
    "contract,width,splits",
    [
        (MLX_CUDA_V1, 2048, 16),  # E4B's output and down-projections
        (F32_REFERENCE, 2048, 16),
        (MLX_CUDA_V1, 256, 16),  # queries and keys per head
        (F32_REFERENCE, 256, 2),
        (MLX_CUDA_V1, 2048, 2),  # the per-layer projection
        (MLX_CUDA_V1, 256, 1),
        (MLX_CUDA_V1, 320, 3),  # widths that pad the last schedule thread
        (F32_REFERENCE, 48, 5),
    ],
    ids=lambda v: getattr(v, "name", str(v)),
)
def test_partials_norm_kernel_is_the_linears_sum_rounding_and_the_decoders_norm(interpreted, contract, width, splits):
    """A decode linear's partial sums, added from +0 in split order, the linear's rounding point, then the
    decoder's two-rounding norm: bit for bit the emulation of that order. The partials span binades, so
    another order of the sum gives other bits (checked)."""
    x, w = _norm_case(width)
    rng = np.random.default_rng(width + splits)
    p = x[None] * rng.uniform(0.0, 2.0, (splits, 1, 1)) * np.exp2(rng.integers(-20, 20, (splits, *x.shape)))
    p = p.astype(np.float32)
    cfg = builtin_decoder_config("e4b")
    got = interpreted[2](p, w, cfg.rms_norm_eps, contract.rounds_at(None))
    with np.errstate(over="ignore", invalid="ignore"):
        in_order = np.zeros(x.shape, np.float32)
        for part in p:
            in_order = (in_order + part).astype(np.float32)
        want = decoder_rms_norm(contract, cfg, rnd(contract, in_order), w)
        backwards = np.zeros(x.shape, np.float32)
        for part in p[::-1]:
            backwards = (backwards + part).astype(np.float32)
    assert np.isnan(want[5]).all() and _same(got, want)
    if splits > 2:
        assert not np.array_equal(in_order.view(np.uint32), backwards.view(np.uint32))


@pytest.mark.parametrize("contract", [MLX_CUDA_V1, F32_REFERENCE], ids=lambda c: c.name)
@pytest.mark.parametrize("residual", ["attention", "mlp", "laurel"])
def test_partials_norm_residual_is_the_norm_then_the_templates_residual(interpreted, residual, contract):
    """The partials-norm kernel's residual variants: the same sum, rounding and norm as `rms_norm_partials`, then
    the attention residual round(round(round(a + norm) + laurel) * 2^-0.5), the MLP's round(h + norm) or LAuReL's
    round(xn + norm) (xn read as BF16), each rounding at the contract's point, bit for bit."""
    x, w = _norm_case(2048)
    rng = np.random.default_rng(3)
    p = (x[None] * rng.uniform(0.0, 2.0, (16, 1, 1)) * np.exp2(rng.integers(-8, 8, (16, *x.shape)))).astype(np.float32)
    res = (rng.standard_normal(x.shape) * 4).astype(np.float32)
    if residual == "laurel":  # the input norm's BF16 result
        res = res.astype(ml_dtypes.bfloat16).astype(np.float32)
    add = (rng.standard_normal(x.shape) * 2).astype(np.float32)
    point = {"attention": "residual.attention", "mlp": "residual.mlp", "laurel": "laurel.residual"}[residual]
    points = {
        "round_bf16": contract.rounds_at(None),
        "round_residual": contract.rounds_at(point),
        "round_add": residual == "attention" and contract.rounds_at("residual.laurel"),
        "round_scale": residual == "attention" and contract.rounds_at("residual.scale"),
    }
    got = interpreted[3](residual, p, w, res, add, points)
    cfg = builtin_decoder_config("e4b")
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.zeros(x.shape, np.float32)
        for part in p:
            total = (total + part).astype(np.float32)
        normed = decoder_rms_norm(contract, cfg, rnd(contract, total), w)
        want = rnd(contract, (res + normed).astype(np.float32))
        if residual == "attention":
            want = rnd(contract, (want + add).astype(np.float32))
            want = rnd(contract, (want * np.float32(2.0**-0.5)).astype(np.float32))
    assert _same(got, want)


@pytest.mark.parametrize("contract", [MLX_CUDA_V1, F32_REFERENCE], ids=lambda c: c.name)
def test_partials_norm_streams_adds_the_norm_to_the_streams_after_the_first(interpreted, contract):
    """The per-layer input's injection: the partials' sum, its rounding and the decoder's norm as
    `rms_norm_partials`, then stream 0 unchanged (bit for bit, NaN and -0 included) and round(S_i + norm) for the
    others, bit for bit."""
    x, w = _norm_case(2048)
    rng = np.random.default_rng(5)
    p = (x[None] * rng.uniform(0.0, 2.0, (2, 1, 1))).astype(np.float32)
    streams = (rng.standard_normal((4, *x.shape)) * 3).astype(np.float32)
    streams[0, 0, :3] = [np.nan, -0.0, np.inf]
    rounds = {"round_bf16": contract.rounds_at(None), "round_residual": contract.rounds_at("ple_gate.residual")}
    got = interpreted[4](p, w, streams, rounds)
    cfg = builtin_decoder_config("e4b")
    with np.errstate(over="ignore", invalid="ignore"):
        normed = decoder_rms_norm(contract, cfg, rnd(contract, (p[0] + p[1]).astype(np.float32)), w)
        want = np.concatenate([streams[:1], rnd(contract, (streams[1:] + normed).astype(np.float32))])
    assert _same(got, want)


@pytest.mark.parametrize("rope", [True, False], ids=["keys", "values"])
def test_partials_norm_kv_is_the_cache_rows_of_a_decode_step(interpreted, rope):
    """A decode step's keys (the partials' sum and rounding, k_norm, RoPE at each token's position) or values
    (v_norm, a weight of ones), as the BF16 the cache stores: bit for bit `decoder_ops.project_keys_values`'s
    arithmetic after the linear (E4B: 2 KV heads of 256, 3 tokens at different positions)."""
    tokens, heads, hd = 3, 2, 256
    cfg = builtin_decoder_config("e4b")
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((tokens * heads, hd)) * np.exp2(rng.integers(-6, 6, (tokens * heads, 1)))).astype(
        np.float32
    )
    p = (x[None] * rng.uniform(0.0, 2.0, (4, 1, 1))).astype(np.float32)
    w = (1 + 0.1 * rng.standard_normal(hd)).astype(ml_dtypes.bfloat16).astype(np.float32)
    if not rope:
        w = np.ones(hd, np.float32)
    c = MLX_CUDA_V1
    cos, sin = D.rope_tables(c, cfg.rope_theta_full, hd, np.array([0, 37, 4000]))
    rounds = {
        "round_bf16": c.rounds_at(None),
        "round_x_cos": c.rounds_at("rope.x_cos"),
        "round_rot_sin": c.rounds_at("rope.rot_sin"),
        "round_sum": c.rounds_at("rope.sum"),
    }
    got = interpreted[5](p, w, cos, sin, heads, rope, rounds)
    total = np.zeros(x.shape, np.float32)
    for part in p:
        total = (total + part).astype(np.float32)
    want = decoder_rms_norm(c, cfg, rnd(c, total), w).reshape(tokens, heads, hd)
    if rope:
        want = D.apply_rope(c, want, cos, sin)
    want = want.reshape(tokens * heads, hd).astype(ml_dtypes.bfloat16).astype(np.float32)
    assert _same(got, want)


def test_norm_kernel_hands_a_matmul_its_bf16_valued_operand_as_bf16(interpreted):
    x, w = _norm_case(1536)
    got = interpreted[1](x, w, 1e-6, True, clip=10.0, out_bf16=True)
    want = rms_norm(MLX_CUDA_V1, np.clip(x, -10.0, 10.0), w, 1e-6)
    assert _same(got, want)


# Parameters: the bindings' pointers, then the push constants (lane sum: X, S; rows, width, reads,
# square. Norm: X, W[, RES], Y; rows, width, eps, clip[, residual weight], rounding).
@pytest.mark.parametrize(
    "kind,variant,params",
    [
        ("lane_xor_sum", None, [".u64"] * 2 + [".u32"] * 4),
        ("rms_norm", "f32", [".u64"] * 3 + [".u32"] * 5),
        ("rms_norm", "bf16", [".u64"] * 3 + [".u32"] * 5),
        ("rms_norm_residual", "residual", [".u64"] * 4 + [".u32"] * 6),
        ("rms_norm_residual", "residual_bf16", [".u64"] * 4 + [".u32"] * 6),
        ("rms_norm", "silu_bf16", [".u64"] * 3 + [".u32"] * 5),
        ("rms_norm", "mlx", [".u64"] * 3 + [".u32"] * 5),
        ("rms_norm_partials", "partials", [".u64"] * 3 + [".u32"] * 5),
        ("rms_norm_partials_residual", "attention", [".u64"] * 5 + [".u32"] * 9),
        ("rms_norm_partials_residual", "mlp", [".u64"] * 5 + [".u32"] * 9),
        ("rms_norm_partials_residual", "laurel", [".u64"] * 5 + [".u32"] * 9),
        ("rms_norm_partials_streams", "streams", [".u64"] * 4 + [".u32"] * 6),
        ("rms_norm_partials_kv", "keys", [".u64"] * 5 + [".u32"] * 9),
        ("rms_norm_partials_kv", "values", [".u64"] * 5 + [".u32"] * 9),
    ],
)
@pytest.mark.parametrize("threads", sorted(LANE_SUMS_SM90))
def test_rebuilding_gives_the_committed_bytes_and_the_dispatch_abi(tmp_path, kind, variant, params, threads):
    if variant is None:
        kernel = LANE_SUMS_SM90[threads]
    else:
        kernel = PARTIAL_NORMS_SM90[threads] if variant == "partials" else RMS_NORMS_SM90.get((variant, threads))
        if variant == "streams":
            kernel = PARTIAL_NORM_STREAMS_SM90[threads]
        if variant in ("keys", "values"):
            kernel = PARTIAL_NORM_KV_SM90[variant == "keys", threads]
        kernel = kernel or PARTIAL_NORM_RESIDUALS_SM90[variant, threads]
    ptx = rebuilt_ptx(kernel.file, tmp_path)
    assert entry_parameters(ptx, kind) == params
    if variant == "silu_bf16":  # IREE's exp in the SiLU: its fused multiply-adds and floor, nothing else
        ops = re.findall(r"\b((?:mul|add|sub|fma)\.[a-z.]*f32)\b", ptx)
        assert set(ops) == {"mul.rn.f32", "add.rn.f32", "fma.rn.f32"}
        assert re.findall(r"\.ftz\.[a-z0-9.]*", ptx) == [".ftz.f32.f32"] * len(re.findall(r"cvt\.rmi", ptx))
    else:
        assert "fma" not in ptx and ".ftz" not in ptx  # every product and add rounds on its own, subnormals kept
    assert ".approx" not in ptx  # IEEE divisions and square roots only


def _constants(text: str, call: re.Match) -> list[str]:
    return [re.search(rf"{v} = arith.constant (-?\d+) : i32", text).group(1) for v in call.groups()]


def test_a_lane_sum_is_one_kernel_dispatch():
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    text = probe_module(MLX_CUDA_V1, lambda e: e.lane_xor_sum(767488, 128, reads=4), kernels=linked)
    call = re.search(
        r'hal.dispatch.extern "lane_xor_sum"\(%\w+, (%\w+), (%\w+), (%\w+), (%\w+)\) : '
        r"\(tensor<767488x128xf32>, i32, i32, i32, i32\) -> tensor<767488xf32>",
        text,
    )
    assert text.count("hal.dispatch.extern") == 1 and call is not None and "stablehlo.add" not in text
    assert _constants(text, call) == ["767488", "128", "4", "0"]  # rows, width, reads, square
    assert "arith.constant 11992 : index" in text  # 64 rows per workgroup for 32-thread schedules
    assert str(LANE_SUMS_SM90[32].file.ptx_path()) in text


@pytest.mark.parametrize(
    "contract,rounds,out", [(MLX_CUDA_V1, "1", "bf16"), (F32_REFERENCE, "0", "f32")], ids=["bf16", "f32"]
)
def test_an_rms_norm_is_one_kernel_dispatch(contract, rounds, out):
    linked = select_kernels("auto", SM90, contract)
    text = probe_module(
        contract, lambda e: e.rms_norm([8, 750], 1536, 1e-6, clip=1e10, feeds_matmul=True), kernels=linked
    )
    call = re.search(
        r'hal.dispatch.extern "rms_norm"\(%\w+, %\w+, (%\w+), (%\w+), (%\w+), (%\w+), (%\w+)\) : '
        rf"\(tensor<6000x1536xf32>, tensor<1536xbf16>, i32, i32, i32, i32, i32\) -> tensor<6000x1536x{out}>",
        text,
    )
    assert text.count("hal.dispatch.extern") == 1 and call is not None and "stablehlo.multiply" not in text
    bits = lambda v: str(int(np.float32(v).view(np.int32)))  # noqa: E731
    assert _constants(text, call) == [
        "6000",
        "1536",
        bits(1e-6),
        bits(1e10),
        rounds,
    ]  # rows, width, eps, clip, rounding
    assert "arith.constant 1500 : index" in text  # 4 rows per workgroup for 256-thread schedules
    assert str(RMS_NORMS_SM90[out, 256].file.ptx_path()) in text
    # The unscaled norm (the embedder's) keeps the template's arithmetic around the lane-sum kernel.
    unscaled = probe_module(contract, lambda e: e.rms_norm([8, 188], 2048, 1e-6, scaled=False), kernels=linked)
    assert '"lane_xor_sum"' in unscaled and '"rms_norm"' not in unscaled


def test_a_decoder_norm_is_one_kernel_dispatch_of_the_mlx_variant():
    """The text decoder's norm (q_norm at a decode step of 8 sequences x 8 heads) is one dispatch of the MLX
    variant where the kernels are linked, and the lane sum plus IREE's normalization where they are not."""
    cfg = builtin_decoder_config("e4b")
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    text = decoder_probe_module(MLX_CUDA_V1, cfg, lambda e: e.norm(64, 256), kernels=linked)
    assert text.count("hal.dispatch.extern") == 1 and "stablehlo.multiply" not in text
    assert re.search(
        r'hal.dispatch.extern "rms_norm"\(%\w+, %\w+(, %\w+){5}\) : '
        r"\(tensor<64x256xf32>, tensor<256xbf16>, i32, i32, i32, i32, i32\) -> tensor<64x256xf32>",
        text,
    )
    assert str(RMS_NORMS_SM90["mlx", 32].file.ptx_path()) in text
    unlinked = decoder_probe_module(MLX_CUDA_V1, cfg, lambda e: e.norm(64, 256))
    assert "hal.dispatch.extern" not in unlinked and "stablehlo.multiply" in unlinked


def test_a_modules_last_gemm_hands_its_residual_norm_bf16():
    """The feed-forward's and attention's output projections keep the GEMM kernel's BF16 result, and
    the residual norm reads it: no F32 conversion pass between them."""
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    for build in (
        lambda e: e.feed_forward(8, 750, 1536, 1e-6, 1e10, 0.5),
        lambda e: e.attention(8, 750, 1536, 8, 12, 12, 50.0, 1e-6, 1e10),
    ):
        text = probe_module(MLX_CUDA_V1, build, kernels=linked)
        assert re.search(
            r'extern "rms_norm_residual"\([^)]*\) : \(tensor<6000x1536xbf16>, tensor<1536xbf16>, '
            r"tensor<6000x1536xf32>",
            text,
        )
        assert "(tensor<6000x1536xbf16>) -> tensor<6000x1536xf32>" not in text
        assert str(RMS_NORMS_SM90["residual_bf16", 256].file.ptx_path()) in text


def test_a_conformer_tail_is_one_kernel_dispatch():
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    text = probe_module(MLX_CUDA_V1, lambda e: e.residual_rms_norm([8, 750], 1536, 1e-6, 1e10, 0.5), kernels=linked)
    assert text.count("hal.dispatch.extern") == 1 and "stablehlo.add" not in text
    assert re.search(
        r'hal.dispatch.extern "rms_norm_residual"\(%\w+, %\w+, %\w+(, %\w+){6}\) : \(tensor<6000x1536xf32>, '
        r"tensor<1536xbf16>, tensor<6000x1536xf32>, i32, i32, i32, i32, i32, i32\) -> tensor<6000x1536xf32>",
        text,
    )
    assert f"arith.constant {int(np.float32(0.5).view(np.int32))} : i32" in text


def test_a_norm_hands_its_matmul_the_bf16_operand_without_a_conversion():
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    ffw = lambda e: e.feed_forward(8, 750, 1536, 1e-6, 1e10, 0.5)  # noqa: E731
    text, plain = probe_module(MLX_CUDA_V1, ffw, kernels=linked), probe_module(MLX_CUDA_V1, ffw)
    to_operand = "(tensor<6000x1536xf32>) -> tensor<6000x1536xbf16>"
    assert to_operand in plain and to_operand not in text
    assert re.search(r'extern "rms_norm"\(.*\) -> tensor<6000x1536xbf16>', text)


def _scalar_parameters(source: str, kernel: str) -> list[str]:
    """A kernel's push constants as its Triton source declares them: the parameters after the
    pointers (`*_ptr`), before the compile-time ones (`tl.constexpr`) — the PTX parameter order."""
    tree = ast.parse((KERNEL_DIR / source).read_text())
    func = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == kernel)
    return [a.arg for a in func.args.args if not a.arg.endswith("_ptr") and a.annotation is None]


_BITS = lambda v: str(int(np.float32(v).view(np.int32)))  # noqa: E731


# For each kernel: a call the emitter makes, and the value each named parameter must receive.
@pytest.mark.parametrize(
    "source,kernel,build,values",
    [
        (
            "reductions_triton.py",
            "lane_xor_sum",
            lambda e: e.lane_xor_sum(767488, 128, reads=4),
            {"rows": "767488", "width": "128", "reads": "4", "square": "0"},
        ),
        (
            "reductions_triton.py",
            "rms_norm",
            lambda e: e.rms_norm([8, 750], 1536, 1e-6, clip=1e10, feeds_matmul=True),
            {"rows": "6000", "width": "1536", "eps_bits": _BITS(1e-6), "clip_bits": _BITS(1e10), "round_bf16": "1"},
        ),
        (
            "reductions_triton.py",
            "rms_norm_residual",
            lambda e: e.residual_rms_norm([8, 750], 1536, 1e-6, 1e10, 0.5),
            {
                "rows": "6000",
                "width": "1536",
                "eps_bits": _BITS(1e-6),
                "clip_bits": _BITS(1e10),
                "weight_bits": _BITS(0.5),
                "round_bf16": "1",
            },
        ),
        (
            "attention_triton.py",
            "attention_core",
            lambda e: e.attention(8, 750, 1536, 8, 12, 12, 50.0, 1e-6, 1e10),
            {
                "frames": "750",
                "blocks": "63",
                "heads": "8",
                "head_dim": "192",
                "chunk": "12",
                "past": "12",
                "cap_bits": _BITS(50.0),
                "mask_bits": _BITS(BF16_MIN),
            },
        ),
        (
            "gemm_sm90_triton.py",
            "gemm_bf16_nt",
            lambda e: e.linear([2, 750], 1536, 6144),
            {"M": "1500", "N": "6144", "K": "1536"},
        ),
        (
            "conv_triton.py",
            "glu_depthwise",
            lambda e: e.light_conv(8, 750, 1536, 5, 1e-6, 1e10, "d1k"),
            {"frames": "750", "channels": "1536", "taps": "5"},
        ),
        (
            "activation_triton.py",
            "silu_bf16",
            lambda e: e.feed_forward(8, 750, 1536, 1e-6, 1e10, 0.5),
            {"count": "36864000"},
        ),
    ],
)
def test_push_constants_follow_the_kernel_signature(source, kernel, build, values):
    text = probe_module(MLX_CUDA_V1, build, kernels=select_kernels("auto", SM90, MLX_CUDA_V1))
    call = re.search(rf'hal.dispatch.extern "{kernel}"\(([^)]*)\)', text)
    operands = [v.strip() for v in call.group(1).split(",")]
    constants = [
        re.search(rf"{v} = arith.constant (-?\d+) : i32", text).group(1)
        for v in operands
        if re.search(rf"{v} = arith.constant (-?\d+) : i32", text)
    ]
    assert constants == [values[name] for name in _scalar_parameters(source, kernel)]
