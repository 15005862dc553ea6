"""The committed decode-linear kernel (kernels/gemv.py, gemv_triton.py) and where the emitters link it.

No GPU is needed: the PTX is pinned (rebuild byte for byte, the parameter list IREE's custom dispatch passes,
Hopper MMA with F32 accumulation), the Triton source runs in Triton's CPU interpreter against a float64 product
on data whose sums are exact in F32 (so any accumulation order gives the same bits and the test checks the
tiling, the K ranges, the masks and the partial layout), the split policy is a pure function checked for every
shape it can see, and the emitted module calls the kernel for exactly the decode step's linears.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_files import assert_only_irees_exp_is_fused, entry_parameters, rebuilt_ptx
from triton_interpreter import interpreted_kernels

from gemma3n_iree.contracts import decoder_ops as D
from gemma3n_iree.contracts.emulation import contract_scalar
from gemma3n_iree.contracts.policy import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.emitters.kernels import select_kernels
from gemma3n_iree.emitters.probe import decoder_probe_module, probe_module
from gemma3n_iree.kernels import (
    GELU_PRODUCT_POINTS,
    GEMV_GELU_PRODUCT_SM90,
    GEMV_GROUPS_SM90,
    GEMV_SCALED_SM90,
    GEMV_SM90,
    GEMV_SUMMED_SM90,
    gelu_product_call,
    gemv_call,
    gemv_group_call,
    scaled_gemv_call,
    summed_gemv_call,
)
from gemma3n_iree.kernels.gemv import (
    GEMV_K64_SM90,
    GEMV_NARROW_SM90,
    GEMV_ROWS16_SM90,
    GEMV_ROWS64_SM90,
    MAX_SPLITS,
    UNSPLIT_TILES,
)
from gemma3n_iree.model.decoder_config import builtin_decoder_config

SM90 = parse_target("cuda", "sm_90")


@pytest.mark.parametrize("kernel", GEMV_SM90, ids=lambda k: k.file.stem)
def test_committed_ptx_rebuilds_and_takes_the_bindings_then_the_push_constants(kernel, tmp_path):
    ptx = rebuilt_ptx(kernel.file, tmp_path)
    assert entry_parameters(ptx, kernel.file.entry) == [".u64"] * 3 + [".u32"] * 4  # A, B, P; M, N, K, S
    assert f".reqntid {kernel.file.threads}" in ptx and ".target sm_90a" in ptx
    # BF16 products accumulated in F32 on the tensor cores (wgmma for 64-row tiles), F32 partials stored
    mma = "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16" if kernel.bm == 64 else "mma.sync.aligned.m16n8k16"
    assert mma in ptx
    assert "cvt.rn.bf16" not in ptx  # no rounding in the kernel: the template rounds once, after the partials


def _exact_operands(rng: np.random.Generator, rows: int, n: int, k: int):
    """BF16-exact small integers: every partial and total sum is an integer below 2**24, exact in F32."""
    import torch

    a = torch.from_numpy(rng.integers(-4, 5, (rows, k)).astype(np.float32)).to(torch.bfloat16)
    b = torch.from_numpy(rng.integers(-4, 5, (n, k)).astype(np.float32)).to(torch.bfloat16)
    return a, b


def _assert_exact_partials(call, rows: int, n: int, k: int, seed: int) -> None:
    """The interpreted kernel's [S, rows, n] partials for exact operands: every element written (the buffer starts
    as NaN), every K range's product exact."""
    import torch

    s = call.constant("S")
    a, b = _exact_operands(np.random.default_rng(seed), rows, n, k)
    partials = torch.full((s, rows, n), float("nan"))
    launch = interpreted_kernels("gemv_triton.py")
    launch(call.file.entry, call.workgroups, a, b, partials, *call.constants, **dict(call.file.constexprs))
    expected = np.stack(
        [a.double().numpy()[:, r] @ b.double().numpy()[:, r].T for r in np.split(np.arange(k), s)]
    ).astype(np.float32)
    np.testing.assert_array_equal(partials.numpy(), expected)


@settings(max_examples=12, deadline=None)
@given(
    which=st.sampled_from(GEMV_SM90),
    rows=st.integers(1, 64),
    tiles_n=st.integers(1, 3),
    k_tiles=st.sampled_from([1, 2, 4]),
    seed=st.integers(0, 2**16),
)
def test_interpreted_kernel_computes_each_k_range_partial(which, rows, tiles_n, k_tiles, seed):

    if rows > which.max_rows:
        rows = which.max_rows
    n, k = tiles_n * which.bn, k_tiles * which.bk
    call = which.call(rows, n, k)
    assert call is not None
    _assert_exact_partials(call, rows, n, k, seed)


@settings(max_examples=10, deadline=None)
@given(rows=st.integers(1, 64), n=st.integers(1, 40), k_tiles=st.sampled_from([1, 2, 16]), seed=st.integers(0, 2**16))
def test_interpreted_narrow_kernel_computes_any_width_without_touching_past_it(rows, n, k_tiles, seed):
    """The narrow file (AltUp's 4-output router) for widths no 16-column tile divides: the weight is exactly
    [N, K] and the partials exactly [S, rows, N], so a read or store past N would fail or show."""

    which = GEMV_NARROW_SM90
    k = k_tiles * which.bk
    call = gemv_call(rows, n, k)
    assert call is not None and call.file is which.file
    _assert_exact_partials(call, rows, n, k, seed)


@pytest.mark.parametrize("group", GEMV_GROUPS_SM90, ids=lambda k: k.file.stem)
def test_committed_group_ptx_rebuilds_and_takes_each_members_weight_and_width(group, tmp_path):
    ptx = rebuilt_ptx(group.file, tmp_path)
    members = group.members
    # A, B0..B(G-1), P; M, N0..N(G-1), K, S
    assert entry_parameters(ptx, group.file.entry) == [".u64"] * (members + 2) + [".u32"] * (members + 3)
    assert {key: value for key, value in group.file.constexprs} == {
        key: value for key, value in group.single.file.constexprs if key != "NARROW"
    }
    assert (group.file.warps, group.file.stages) == (group.single.file.warps, group.single.file.stages)
    assert "cvt.rn.bf16" not in ptx


@settings(max_examples=8, deadline=None)
@given(
    members=st.sampled_from([2, 4]),
    rows=st.integers(1, 64),
    tiles=st.lists(st.integers(1, 3), min_size=4, max_size=4),
    k_tiles=st.sampled_from([1, 2, 4]),
    seed=st.integers(0, 2**16),
)
def test_interpreted_group_stores_each_members_single_launch_partials_one_after_another(
    members, rows, tiles, k_tiles, seed
):
    """Random BF16 operands: each member's slice of the group's P is bit for bit the single entry's partials
    of that member (same tiles, same K ranges), and every element of P is written (P starts as NaN)."""
    import torch

    outs = tuple(64 * t for t in tiles[:members])
    k = 128 * k_tiles
    call = gemv_group_call(rows, outs, k)  # members this narrow split K alike (the policy test covers the rest)
    singles = [gemv_call(rows, n, k) for n in outs]
    assert call.workgroups == sum(c.workgroups for c in singles)
    rng = np.random.default_rng(seed)
    a = torch.from_numpy(rng.standard_normal((rows, k), dtype=np.float32)).to(torch.bfloat16)
    weights = [torch.from_numpy(rng.standard_normal((n, k), dtype=np.float32)).to(torch.bfloat16) for n in outs]
    s = call.constant("S")
    launch = interpreted_kernels("gemv_triton.py")
    flat = torch.full((s * rows * sum(outs),), float("nan"))
    launch(call.file.entry, call.workgroups, a, *weights, flat, *call.constants, **dict(call.file.constexprs))
    at = 0
    for n, w, single in zip(outs, weights, singles, strict=True):
        alone = torch.full((s, rows, n), float("nan"))
        launch(single.file.entry, single.workgroups, a, w, alone, *single.constants, **dict(single.file.constexprs))
        member = flat[at : at + s * rows * n].reshape(s, rows, n)
        np.testing.assert_array_equal(member.numpy().view(np.uint32), alone.numpy().view(np.uint32))
        at += s * rows * n
    assert not torch.isnan(flat).any()


def test_group_policy_groups_only_linears_their_single_launches_would_split_alike():
    # E4B's decode step: LAuReL's left linear, q, k, v (16 K ranges each); the MLP's gate and up (unsplit)
    quad = gemv_group_call(1, (64, 2048, 512, 512), 2048)
    assert quad.file.stem == "gemv_bf16_nt_quad_m16_sm90" and quad.constant("S") == 16
    assert quad.workgroups == (1 + 32 + 8 + 8) * 16
    pair = gemv_group_call(8, (16384, 16384), 2048)
    assert pair.file.stem == "gemv_bf16_nt_pair_m16_sm90" and pair.constant("S") == 1 and pair.workgroups == 512
    assert gemv_group_call(64, (16384, 16384), 2048).file.stem == "gemv_bf16_nt_pair_m64_sm90"
    # one member unsplit, the other split: one launch each (their bits would differ in a group)
    assert gemv_call(1, 16384, 2048).constant("S") != gemv_call(1, 2048, 2048).constant("S")
    assert gemv_group_call(1, (16384, 2048), 2048) is None
    # a member no whole-tile file covers (AltUp's 4 outputs), a member count with no entry, 65 rows
    assert gemv_group_call(1, (4, 2048), 2048) is None
    assert gemv_group_call(1, (2048, 2048, 2048), 2048) is None
    assert gemv_group_call(65, (2048, 2048), 2048) is None


@pytest.mark.parametrize("kernel", GEMV_GELU_PRODUCT_SM90, ids=lambda k: k.file.stem)
def test_committed_gelu_product_ptx_rebuilds_with_irees_tanh_as_its_only_fused_arithmetic(kernel, tmp_path):
    ptx = rebuilt_ptx(kernel.file, tmp_path)
    # A, G, U, Y; M, N, K, the two F32 constants, the ten rounding points
    assert entry_parameters(ptx, kernel.file.entry) == [".u64"] * 4 + [".u32"] * (5 + len(GELU_PRODUCT_POINTS))
    mma = "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16" if kernel.bm == 64 else "mma.sync.aligned.m16n8k16"
    assert mma in ptx
    assert_only_irees_exp_is_fused(ptx)  # tanh's nine fused multiply-adds per IEEE division, as exp's


def _gelu_product_rounds(contract) -> dict[str, bool]:
    return {name: contract.rounds_at(point) for name, point in GELU_PRODUCT_POINTS}


@settings(max_examples=6, deadline=None)
@given(rows=st.integers(1, 64), tiles_n=st.integers(1, 2), k_tiles=st.sampled_from([1, 2]), seed=st.integers(0, 2**16))
def test_interpreted_gelu_product_is_the_contracts_mlp_product_bit_for_bit(rows, tiles_n, k_tiles, seed):
    """Operands whose products and sums are exact (small integers, the weights scaled by 2^-6), spreading the gate
    over GELU's curve: the kernel's BF16 output is the emulation's round(gelu_tanh(round(gate)) * round(up)) with
    IREE's tanh, every rounding point the contract's, bit for bit."""
    import torch

    n, k = 64 * tiles_n, 128 * k_tiles
    kernel = GEMV_GELU_PRODUCT_SM90[0] if rows <= 16 else GEMV_GELU_PRODUCT_SM90[1]
    c = MLX_CUDA_V1
    k_cubic, k_sqrt = (float(contract_scalar(c, v)) for v in (D.GELU_CUBIC, D.GELU_SQRT))
    # a launch of these few columns directly (the policy gives the entry only outputs too wide to split)
    call = kernel.file.call(
        -(-rows // kernel.bm) * (n // 64), M=rows, N=n, K=k, k_cubic_bits=k_cubic, k_sqrt_bits=k_sqrt,
        **_gelu_product_rounds(c),
    )  # fmt: skip
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, (rows, k)).astype(np.float32)
    g, u = (rng.integers(-6, 7, (n, k)).astype(np.float32) * np.float32(2.0**-6) for _ in range(2))
    as_bf16 = lambda x: torch.from_numpy(x).to(torch.bfloat16)  # noqa: E731 (exact: small integers)
    y = torch.zeros((rows, n), dtype=torch.bfloat16)
    launch = interpreted_kernels("gemv_triton.py")
    launch(call.file.entry, call.workgroups, as_bf16(a), as_bf16(g), as_bf16(u), y, *call.constants,
           **dict(call.file.constexprs))  # fmt: skip
    gate, up = ((a.astype(np.float64) @ w.T.astype(np.float64)).astype(np.float32) for w in (g, u))
    with np.errstate(over="ignore"):
        act = D.gelu_tanh(c, D.rnd(c, gate, "mlp.gate"), D.IREE_MATH)
        want = D.rnd(c, (act * D.rnd(c, up, "mlp.up")).astype(np.float32), "mlp.product")
    assert np.abs(gate).max() > 2.0  # the test reaches GELU's curve, not only its linear part
    np.testing.assert_array_equal(y.view(torch.int16).numpy(), (want.view(np.uint32) >> 16).astype(np.int16))


def test_gelu_product_serves_only_unsplit_gate_and_up():
    rounds = _gelu_product_rounds(MLX_CUDA_V1)
    e4b = gelu_product_call(1, 16384, 2048, 0.04, 0.8, rounds)  # E4B: 256 column tiles, unsplit
    assert e4b.file is GEMV_GELU_PRODUCT_SM90[0].file and e4b.workgroups == 256
    assert gelu_product_call(64, 16384, 2048, 0.04, 0.8, rounds).file is GEMV_GELU_PRODUCT_SM90[1].file
    assert gelu_product_call(1, 8192, 2048, 0.04, 0.8, rounds) is None  # E2B's 8,192: split 16 ways alone
    assert gelu_product_call(65, 16384, 2048, 0.04, 0.8, rounds) is None


@pytest.mark.parametrize("kernel", GEMV_SCALED_SM90, ids=lambda k: k.file.stem)
def test_committed_scaled_ptx_rebuilds_and_takes_the_scale_after_the_input(kernel, tmp_path):
    ptx = rebuilt_ptx(kernel.file, tmp_path)
    assert entry_parameters(ptx, kernel.file.entry) == [".u64"] * 4 + [".u32"] * 5  # A, s, B, P; M, N, K, S, round
    assert "fma" not in ptx  # the scaling's product rounds on its own


@settings(max_examples=8, deadline=None)
@given(
    rows=st.integers(1, 64), tiles_n=st.integers(1, 3), k_tiles=st.sampled_from([1, 2, 4]), seed=st.integers(0, 2**16)
)
def test_interpreted_scaled_kernel_is_the_single_launch_on_the_rounded_scaled_input(rows, tiles_n, k_tiles, seed):
    """Random F32 input and BF16 scale: the scaled entry's partials are bit for bit the single entry's partials of
    round_bf16(x * s) (the product in F32, the contract's rounding), every element written."""
    import torch

    from gemma3n_iree.contracts.emulation import round_bf16

    n, k = 64 * tiles_n, 128 * k_tiles
    call, single = scaled_gemv_call(rows, n, k, True), gemv_call(rows, n, k)
    assert call.workgroups == single.workgroups and call.constant("S") == single.constant("S")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, k), dtype=np.float32)
    scale = round_bf16(rng.standard_normal(k, dtype=np.float32))
    w = torch.from_numpy(rng.standard_normal((n, k), dtype=np.float32)).to(torch.bfloat16)
    s = call.constant("S")
    launch = interpreted_kernels("gemv_triton.py")
    got, want = (torch.full((s, rows, n), float("nan")) for _ in range(2))
    launch(call.file.entry, call.workgroups, torch.from_numpy(x), torch.from_numpy(scale).to(torch.bfloat16), w, got,
           *call.constants, **dict(call.file.constexprs))  # fmt: skip
    scaled = torch.from_numpy(round_bf16((x * scale).astype(np.float32))).to(torch.bfloat16)  # exact conversion
    launch(single.file.entry, single.workgroups, scaled, w, want, *single.constants, **dict(single.file.constexprs))
    np.testing.assert_array_equal(got.numpy().view(np.uint32), want.numpy().view(np.uint32))


@pytest.mark.parametrize("kernel", GEMV_SUMMED_SM90, ids=lambda k: k.file.stem)
def test_committed_summed_ptx_rebuilds_and_takes_the_partials_count_and_rounding(kernel, tmp_path):
    ptx = rebuilt_ptx(kernel.file, tmp_path)
    # A's partials, B, P; M, N, K, S, a_splits, round_a
    assert entry_parameters(ptx, kernel.file.entry) == [".u64"] * 3 + [".u32"] * 6
    assert "fma" not in ptx  # the partials' adds round on their own


@settings(max_examples=8, deadline=None)
@given(
    which=st.sampled_from(GEMV_SUMMED_SM90),
    rows=st.integers(1, 64),
    tiles_n=st.integers(1, 3),
    k_tiles=st.sampled_from([1, 2]),
    a_splits=st.integers(1, 16),
    seed=st.integers(0, 2**16),
)
def test_interpreted_summed_kernel_is_the_single_launch_on_the_rounded_sum_of_the_partials(
    which, rows, tiles_n, k_tiles, a_splits, seed
):
    """Random F32 partials of A: the summed entry's partials are bit for bit the single entry's partials of
    round_bf16 of their sum added in order from zero (`partials_sum.mlir.j2`'s), every element written."""
    import torch

    from gemma3n_iree.contracts.emulation import round_bf16

    # shapes this file's single entry serves: its rows (17 up for the 64-row tiles), 64 inputs for the K64 tiles
    low = 17 if which.single.bm == 64 else 1
    rows = low + rows % (which.single.max_rows - low + 1)
    n, k = which.bn * tiles_n, which.bk * (1 if which.single.bk == 64 else k_tiles)
    call, single = summed_gemv_call(rows, n, k, a_splits, True), gemv_call(rows, n, k)
    assert single.file is which.single.file and call.file is which.file and call.workgroups == single.workgroups
    rng = np.random.default_rng(seed)
    parts = rng.standard_normal((a_splits, rows, k), dtype=np.float32) * np.exp2(rng.integers(-6, 6, (a_splits, 1, 1)))
    parts = parts.astype(np.float32)
    w = torch.from_numpy(rng.standard_normal((n, k), dtype=np.float32)).to(torch.bfloat16)
    s = call.constant("S")
    launch = interpreted_kernels("gemv_triton.py")
    got, want = (torch.full((s, rows, n), float("nan")) for _ in range(2))
    launch(call.file.entry, call.workgroups, torch.from_numpy(parts), w, got, *call.constants,
           **dict(call.file.constexprs))  # fmt: skip
    total = np.zeros((rows, k), np.float32)
    for part in parts:
        total = (total + part).astype(np.float32)
    a = torch.from_numpy(round_bf16(total)).to(torch.bfloat16)  # exact conversion of BF16 values
    launch(single.file.entry, single.workgroups, a, w, want, *single.constants, **dict(single.file.constexprs))
    np.testing.assert_array_equal(got.numpy().view(np.uint32), want.numpy().view(np.uint32))


def test_split_policy_over_every_shape_it_serves():
    """S is a power of two up to MAX_SPLITS whose K ranges are whole K tiles; an output of at least
    UNSPLIT_TILES tiles is never split, a narrower one takes the most ranges allowed."""
    for kernel in GEMV_SM90:
        for n in range(kernel.bn, 64 * kernel.bn * 4, kernel.bn):
            for k in range(kernel.bk, 40 * kernel.bk, kernel.bk):
                s = kernel.splits(n, k)
                assert s & (s - 1) == 0 and 1 <= s <= MAX_SPLITS and k % (s * kernel.bk) == 0
                if n // kernel.bn >= UNSPLIT_TILES:
                    assert s == 1
                elif s < MAX_SPLITS:
                    assert k % (2 * s * kernel.bk) != 0


def test_calls_pick_the_narrowest_file_and_refuse_shapes_they_do_not_cover():
    assert gemv_call(1, 2048, 16384).file is GEMV_ROWS16_SM90.file
    assert gemv_call(16, 2048, 2048).file is GEMV_ROWS16_SM90.file
    assert gemv_call(17, 2048, 2048).file is GEMV_ROWS64_SM90.file
    assert gemv_call(64, 262400, 2048).file is GEMV_ROWS64_SM90.file
    for rows, n, k in [(65, 2048, 2048), (1, 48, 64), (1, 4, 2000), (65, 4, 2048), (1, 2048, 96)]:
        assert gemv_call(rows, n, k) is None
    # 64 inputs (LAuReL's right linear) take the file of 64-column K tiles, unsplit
    for rows in (1, 8, 64):
        right = gemv_call(rows, 2048, 64)
        assert right.file is GEMV_K64_SM90.file and right.constant("S") == 1
        assert right.workgroups == -(-rows // 16) * (2048 // 64)
    # widths no whole 64-column tile covers take the narrow file (AltUp's router: 4 outputs), split as the others
    for rows, n, k, s in [(1, 4, 2048, 16), (64, 4, 2048, 16), (1, 48, 128, 1), (8, 100, 256, 2)]:
        narrow = gemv_call(rows, n, k)
        assert narrow.file is GEMV_NARROW_SM90.file and narrow.constant("S") == s
        assert narrow.workgroups == -(-rows // 16) * -(-n // 16) * s
    down = gemv_call(8, 2048, 16384)
    assert down.constant("S") == 16 and down.workgroups == (2048 // 64) * 16
    head = gemv_call(1, 262400, 2048)
    assert head.constant("S") == 1 and head.workgroups == 262400 // 64


def test_auto_links_it_on_hopper_under_a_bf16_contract_only():
    for contract, linked in ((MLX_CUDA_V1, True), (F32_REFERENCE, False)):
        kernels = select_kernels("auto", SM90, contract)
        assert all(kernels.links(k.file) is linked for k in GEMV_SM90)
    assert not select_kernels("auto", parse_target("llvm-cpu"), MLX_CUDA_V1).files


def _decoder_linear(rows: int, k: int, out: int) -> str:
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    cfg = builtin_decoder_config("e4b")
    return decoder_probe_module(MLX_CUDA_V1, cfg, lambda e: e.linear([rows], k, out), kernels=linked)


def test_a_decode_linear_becomes_the_kernel_then_the_sum_of_its_partials_and_one_rounding():
    text = _decoder_linear(1, 16384, 2048)
    m = re.search(
        r'hal.dispatch.extern "gemv_bf16_nt_splitk"\(%\w+, %\w+(?:, %\w+){4}\) : '
        r"\(tensor<1x16384xbf16>, tensor<2048x16384xbf16>, i32, i32, i32, i32\) -> tensor<16x1x2048xf32>",
        text,
    )
    assert m is not None, text
    assert "arith.constant 512 : index" in text  # 2048 / 64 column tiles x 16 K ranges
    assert "stablehlo.dot_general" not in text
    assert text.count("stablehlo.reduce(") == 1 and "across dimensions = [0]" in text
    assert text.count("e8m7") == 1  # the contract's one rounding point, after the partials are added
    unsplit = _decoder_linear(1, 2048, 16384)
    assert "tensor<1x1x16384xf32>" in unsplit and "stablehlo.reduce(" not in unsplit
    # 65 rows (a prompt) take the GEMM; a shape the kernel does not cover keeps IREE's dot
    assert '"gemm_bf16_nt"' in _decoder_linear(65, 2048, 2048)
    router = _decoder_linear(1, 2048, 4)
    assert "tensor<16x1x4xf32>" in router and "stablehlo.reduce(" in router and "dot_general" not in router
    assert str(GEMV_NARROW_SM90.file.ptx_path()) in router
    uncovered = _decoder_linear(1, 2000, 4)
    assert "hal.dispatch.extern" not in uncovered and "stablehlo.dot_general" in uncovered


def test_the_audio_stages_keep_the_gemm_for_their_few_row_linears():
    """The encoder's relative-position projection (13 rows) hands the attention kernel the GEMM's BF16 result;
    the audio modules are unchanged by the decode-linear kernel."""
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    text = probe_module(MLX_CUDA_V1, lambda e: e.linear([13], 1536, 1536), kernels=linked)
    assert '"gemm_bf16_nt"' in text and "gemv" not in text
