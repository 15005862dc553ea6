"""The committed decode-attention contraction kernels (kernels/decode_attention.py, decode_attention_triton.py).

No GPU is needed: the PTX is pinned (rebuild byte for byte, the parameter list IREE's custom dispatch passes,
tensor-core products with F32 accumulation, no rounding inside), the Triton source runs in Triton's CPU
interpreter against float64 products on data whose sums are exact in F32 (any accumulation order gives the
same bits, so the test checks the tiling, the per-(sequence, KV head) addressing, the masks and the partial
layout), and the emitted decode core calls exactly the two kernels in place of its two dot products, with
everything between them (mask, max, exp, the pinned denominator, the division and its rounding) unchanged.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_files import entry_parameters, rebuilt_ptx
from triton_interpreter import interpreted_kernels

from gemma3n_iree.contracts.policy import MLX_CUDA_V1
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.emitters.kernels import select_kernels
from gemma3n_iree.emitters.probe import decoder_probe_module
from gemma3n_iree.kernels import DECODE_ATTENTION_SM90
from gemma3n_iree.kernels.decode_attention import VALUE_PROGRAMS
from gemma3n_iree.model.decoder_config import builtin_decoder_config

SM90 = parse_target("cuda", "sm_90")
KERNELS = DECODE_ATTENTION_SM90


@pytest.mark.parametrize("file", (KERNELS.scores, KERNELS.values), ids=lambda f: f.stem)
def test_committed_ptx_rebuilds_and_takes_the_bindings_then_the_push_constants(file, tmp_path):
    ptx = rebuilt_ptx(file, tmp_path)
    constants = len(file.signature.constants)
    assert entry_parameters(ptx, file.entry) == [".u64"] * 4 + [".u32"] * constants
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in ptx
    assert "cvt.rn.bf16" not in ptx  # F32 results: the template rounds where the contract does


@pytest.mark.parametrize("family", ("softmax", "prompt_softmax"))
@pytest.mark.parametrize("threads", (128, 1024))
def test_committed_softmax_ptx_rebuilds_and_takes_the_bindings_then_the_push_constants(family, threads, tmp_path):
    file = getattr(KERNELS, family)[threads]
    ptx = rebuilt_ptx(file, tmp_path)
    assert entry_parameters(ptx, file.entry) == [".u64"] * 3 + [".u32"] * len(file.signature.constants)
    assert "fma.rn.f32" in ptx and "div.rn.f32" in ptx  # IREE's exp, the IEEE quotient


@pytest.mark.parametrize("threads", sorted(KERNELS.prompt_softmax))
def test_committed_prompt_softmax_ptx_assembles_for_sm90a_within_a_blocks_registers(threads, tmp_path):
    """The prompt-softmax files through the ptxas Triton bundles (the step the driver takes when it loads them):
    they assemble for sm_90a, and a block of their threads fits the SM's 65,536 registers."""
    import subprocess
    from pathlib import Path

    import triton

    from gemma3n_iree.kernels.spec import PTX_DIR

    file = KERNELS.prompt_softmax[threads]
    ptxas = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    done = subprocess.run(
        [str(ptxas), "-arch=sm_90a", "-v", str(PTX_DIR / f"{file.stem}.ptx"), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    registers = int(re.search(r"Used (\d+) registers", done.stderr).group(1))
    assert registers * file.threads <= 65536, (registers, file.threads)


def _exact(rng: np.random.Generator, *shape: int):
    import torch

    return torch.from_numpy(rng.integers(-4, 5, shape).astype(np.float32)).to(torch.bfloat16)


@settings(max_examples=10, deadline=None)
@given(
    sequences=st.integers(1, 3),
    kv_heads=st.integers(1, 2),
    groups=st.integers(1, 4),
    tiles=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_interpreted_kernels_compute_each_sequences_scores_and_value_partials(sequences, kv_heads, groups, tiles, seed):
    """At the interpreter's own sizes (head width 32, tiles of 32 columns), both products exactly, each sequence
    reading its `columns` rows from its own first row of a larger buffer of rows (as a decode step reads the
    cache: any row, in any order of the sequences, past rows of other slots)."""
    import torch

    dims, tile = 32, 32
    columns = tiles * tile
    rng = np.random.default_rng(seed)
    buffer_rows = (sequences + 2) * columns
    at = rng.choice(buffer_rows - columns + 1, size=sequences, replace=False).astype(np.int32)
    q = _exact(rng, sequences, kv_heads * groups, dims)
    k, v = _exact(rng, buffer_rows, kv_heads, dims), _exact(rng, buffer_rows, kv_heads, dims)
    p = _exact(rng, sequences, kv_heads, groups, columns)
    launch = interpreted_kernels("decode_attention_triton.py")
    sizes = {"ROWS": 16, "BC": tile, "DIMS": dims}
    first = torch.from_numpy(at[:, None])  # [sequences, 1]: the entry's per-sequence rows
    own_k = np.stack([k.double().numpy()[a : a + columns] for a in at])
    own_v = np.stack([v.double().numpy()[a : a + columns] for a in at])

    scores = torch.full((sequences, kv_heads, groups, columns), float("nan"))
    launch("decode_scores", sequences * kv_heads * tiles, q, k, first, scores, kv_heads, groups, columns, **sizes)
    q64 = q.double().numpy().reshape(sequences, kv_heads, groups, dims)
    expected = np.einsum("bhgd,bchd->bhgc", q64, own_k).astype(np.float32)
    np.testing.assert_array_equal(scores.numpy(), expected)

    s = max(1, tiles)
    out = torch.full((s, sequences, kv_heads, groups, dims), float("nan"))
    launch("decode_values", sequences * kv_heads * s, p, v, first, out, kv_heads, groups, columns, s, **sizes)
    p64 = p.double().numpy()
    ranges = np.split(np.arange(columns), s)
    expected = np.stack([np.einsum("bhgc,bchd->bhgd", p64[..., r], own_v[:, r]) for r in ranges]).astype(np.float32)
    np.testing.assert_array_equal(out.numpy(), expected)


@settings(max_examples=12, deadline=None)
@given(
    sequences=st.integers(1, 3),
    heads=st.sampled_from([1, 3, 8]),
    columns=st.sampled_from([16, 64, 100, 512, 4160]),
    sliding=st.booleans(),
    ties=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_interpreted_softmax_is_the_contracts_bit_for_bit(sequences, heads, columns, sliding, ties, seed):
    """`decode_softmax` against the emulation's `attention_probs` under mlx-cuda-v1 with IREE's exp: every
    probability's bits, for full layers (columns past the position masked) and sliding rings (slots not yet
    written masked), rows wider than one block (4160 columns: two passes), scores with ties and large
    magnitudes (the max is exact, the exp's argument is not)."""
    import torch

    from gemma3n_iree.contracts import decoder_ops as D
    from gemma3n_iree.contracts.decoder_policy import DENOMINATOR_READS
    from gemma3n_iree.contracts.emulation import BF16_MIN
    from gemma3n_iree.contracts.kv_cache import visible_columns

    rng = np.random.default_rng(seed)
    scale = 1.0 if ties else 40.0
    scores = (
        rng.integers(-3, 4, (sequences, heads, columns)) if ties else rng.standard_normal((sequences, heads, columns))
    )
    scores = (scores * scale).astype(np.float32)
    window = columns if sliding else None
    positions = rng.integers(0, 3 * columns, sequences) if sliding else rng.integers(0, columns, sequences)
    seen = np.stack([visible_columns(sliding, int(p), columns, window or 0) for p in positions])
    expected = D.attention_probs(MLX_CUDA_V1, scores, seen[:, None, :], D.IREE_MATH)

    call = KERNELS.softmax_call(
        sequences, heads, columns, window, DENOMINATOR_READS, *D.block_schedule(columns, DENOMINATOR_READS), BF16_MIN
    )
    launch = interpreted_kernels("decode_attention_triton.py")
    probs = torch.zeros((sequences, heads, columns), dtype=torch.bfloat16)
    launch(
        "decode_softmax",
        call.workgroups,
        torch.from_numpy(scores),
        torch.from_numpy(positions.astype(np.int32)),
        probs,
        *call.constants,
        **dict(call.file.constexprs),
    )
    got = (probs.view(torch.int16).numpy().astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))


def test_the_softmax_denominator_is_summed_in_the_contracts_order():
    """Scores close to their maximum (e in (1/2, 1], a denominator near 3,000 whose F32 sum depends on the order
    of its adds): the kernel's probabilities equal the contract's block-sum order, and differ from the plain
    column-order sum on this input (so the check can tell the two apart)."""
    import torch

    from gemma3n_iree.contracts import decoder_ops as D
    from gemma3n_iree.contracts.decoder_policy import DENOMINATOR_READS
    from gemma3n_iree.contracts.emulation import BF16_MIN, round_bf16

    rng = np.random.default_rng(7)
    sequences, heads, columns = 3, 8, 4160
    scores = (-0.7 * rng.random((sequences, heads, columns))).astype(np.float32)
    positions = np.full(sequences, columns - 1)
    seen = np.ones((sequences, 1, columns), bool)
    expected = D.attention_probs(MLX_CUDA_V1, scores, seen, D.IREE_MATH)
    e = D.IREE_MATH.exp((scores - scores.max(-1, keepdims=True)).astype(np.float32))
    in_column_order = np.cumsum(e, axis=-1, dtype=np.float32)[..., -1:]
    assert (round_bf16((e / in_column_order).astype(np.float32)) != expected).any()

    call = KERNELS.softmax_call(
        sequences, heads, columns, None, DENOMINATOR_READS, *D.block_schedule(columns, DENOMINATOR_READS), BF16_MIN
    )
    probs = torch.zeros((sequences, heads, columns), dtype=torch.bfloat16)
    interpreted_kernels("decode_attention_triton.py")(
        "decode_softmax",
        call.workgroups,
        torch.from_numpy(scores),
        torch.from_numpy(positions.astype(np.int32)),
        probs,
        *call.constants,
        **dict(call.file.constexprs),
    )
    got = (probs.view(torch.int16).numpy().astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))


@settings(max_examples=8, deadline=None)
@given(
    kv_heads=st.integers(1, 2),
    groups=st.sampled_from([1, 4]),
    columns=st.sampled_from([8, 40, 72]),
    window=st.sampled_from([None, 16, 32]),
    ties=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_interpreted_prompt_softmax_is_the_contracts_bit_for_bit(kv_heads, groups, columns, window, ties, seed):
    """`prompt_softmax` on a prompt's scores [kv_heads, queries, groups, columns] (query q at position q) against
    the emulation's `attention_probs` on each query's own columns (`decoder._PromptAttention`'s view: a full
    layer's prompt positions, a sliding layer's ring of `window` slots in slot order), read back at the positions
    they hold: every probability's bits, the hidden columns' zeros included."""
    import torch

    from gemma3n_iree.contracts import decoder_ops as D
    from gemma3n_iree.contracts.decoder_policy import DENOMINATOR_READS
    from gemma3n_iree.contracts.emulation import BF16_MIN
    from gemma3n_iree.contracts.kv_cache import column_positions, visible_columns

    rng = np.random.default_rng(seed)
    queries, sliding = columns, window is not None
    shape = (kv_heads, queries, groups, columns)
    scores = (rng.integers(-3, 4, shape) if ties else 40.0 * rng.standard_normal(shape)).astype(np.float32)
    summed = window if sliding else columns
    expected = np.zeros(shape, np.float32)
    for q in range(queries):
        width = window if sliding else columns
        held = column_positions(sliding, q, width, window or 0)
        seen = visible_columns(sliding, q, width, window or 0)
        own = np.where(seen, scores[:, q][..., np.where(seen, held, 0)], 0.0).astype(np.float32)
        probs = D.attention_probs(MLX_CUDA_V1, own, seen, D.IREE_MATH)
        expected[:, q][..., held[seen]] = probs[..., seen]

    call = KERNELS.prompt_softmax_call(
        kv_heads, queries, groups, columns, window, summed, DENOMINATOR_READS,
        *D.block_schedule(summed, DENOMINATOR_READS), BF16_MIN,
    )  # fmt: skip
    probs = torch.zeros(shape, dtype=torch.bfloat16)
    interpreted_kernels("decode_attention_triton.py")(
        "prompt_softmax",
        call.workgroups,
        torch.from_numpy(scores),
        torch.from_numpy(np.arange(queries, dtype=np.int32)),
        probs,
        *call.constants,
        **dict(call.file.constexprs),
    )
    got = (probs.view(torch.int16).numpy().astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))


def test_the_softmax_files_read_the_contracts_values_a_thread_and_refuse_another_schedule():
    from gemma3n_iree.contracts.decoder_policy import DENOMINATOR_READS

    assert all(file.constexpr("READS") == DENOMINATOR_READS for file in KERNELS.softmax.values())
    with pytest.raises(ValueError, match="decode_softmax_t256_sm90 reads 4 values a thread, the schedule 2"):
        KERNELS.softmax_call(1, 8, 512, None, 2, 256, 1, -1.0)


def test_value_splits_are_whole_tiles_and_stop_once_there_are_enough_programs():
    for sequences in (1, 2, 8, 64):
        for columns in range(KERNELS.tile, 8192 + 1, KERNELS.tile):
            s = KERNELS.splits(sequences, 2, columns)
            assert s & (s - 1) == 0 and columns % (s * KERNELS.tile) == 0
            if s > 1:
                assert sequences * 2 * (s // 2) < VALUE_PROGRAMS
            if sequences * 2 * s < VALUE_PROGRAMS:
                assert columns % (2 * s * KERNELS.tile) != 0
    assert KERNELS.calls(1, 2, 4, 100, 256) is None  # columns not a whole number of tiles
    assert KERNELS.calls(1, 2, 4, 4096, 128) is None  # another head width
    assert KERNELS.calls(1, 2, 17, 4096, 256) is None  # more query heads per KV head than a tile's rows


@pytest.mark.parametrize("columns, window", [(4096, None), (512, 512)])
def test_the_decode_core_calls_the_kernels_in_place_of_its_products_and_softmax(columns, window):
    cfg = builtin_decoder_config("e4b")
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)

    rows = "tensor<65536x2x256xbf16>"  # a cache seen as one row per (slot, row): the kernels read it in place

    def core(e):
        return e.attention_core("decode", 1, columns, window is not None, columns, rows)

    text = decoder_probe_module(MLX_CUDA_V1, cfg, core, kernels=linked)
    plain = decoder_probe_module(MLX_CUDA_V1, cfg, core)
    assert "stablehlo.dot_general" not in text and plain.count("stablehlo.dot_general") == 2
    scores = re.search(
        r'hal.dispatch.extern "decode_scores"\((?:%\w+, ){5}%\w+\) : '
        rf"\(tensor<1x2x4x256xbf16>, {rows}, tensor<1x1xi32>, i32, i32, i32\) -> tensor<1x2x4x{columns}xf32>",
        text,
    )
    splits = KERNELS.splits(1, 2, columns)
    values = re.search(
        r'hal.dispatch.extern "decode_values"\((?:%\w+, ){6}%\w+\) : '
        rf"\(tensor<1x2x4x{columns}xbf16>, {rows}, tensor<1x1xi32>, i32, i32, i32, i32\) "
        rf"-> tensor<{splits}x1x2x4x256xf32>",
        text,
    )
    softmax = re.search(
        r'hal.dispatch.extern "decode_softmax"\((?:%[\w-]+, ){6}%[\w-]+\) : '
        rf"\(tensor<1x2x4x{columns}xf32>, tensor<1xi32>, i32, i32, i32, i32, i32\) -> tensor<1x2x4x{columns}xbf16>",
        text,
    )
    assert scores is not None and softmax is not None and values is not None, text
    assert scores.start() < softmax.start() < values.start()
    # the softmax between the products is the kernel's: no mask, max, exp or division left in the template,
    # only the output's rounding point
    for op in ("stablehlo.exponential", "stablehlo.maximum", "stablehlo.select", "f64"):
        assert op not in text and op in plain, op
    assert text.count("e8m7") == plain.count("e8m7") - 1  # the probabilities' rounding is the kernel's


@pytest.mark.parametrize("columns, sliding, ring", [(256, False, 256), (1024, True, 512)])
def test_a_prompt_core_calls_the_prompt_softmax_between_irees_products(columns, sliding, ring):
    """A prompt of several query rows keeps IREE's two products and hands the softmax between them to
    `prompt_softmax`, whose BF16 probabilities the values product reads as they are; the core of a single query row
    (a KV-shared layer's) keeps the decode kernels and IREE's softmax."""
    cfg = builtin_decoder_config("e4b")
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)

    def core(e, queries=columns):
        return e.attention_core("prefill", queries, columns, sliding, ring)

    text = decoder_probe_module(MLX_CUDA_V1, cfg, core, kernels=linked)
    plain = decoder_probe_module(MLX_CUDA_V1, cfg, core)
    scores = f"tensor<2x{columns}x4x{columns}xf32>"
    softmax = re.search(
        r'hal.dispatch.extern "prompt_softmax"\((?:%[\w-]+, ){8}%[\w-]+\) : '
        rf"\({scores}, tensor<{columns}xi32>, i32, i32, i32, i32, i32, i32, i32\) -> tensor<2x{columns}x4x{columns}xbf16>",
        text,
    )
    assert softmax is not None, text
    assert text.count("stablehlo.dot_general") == plain.count("stablehlo.dot_general") == 2
    for op in ("stablehlo.exponential", "stablehlo.maximum", "stablehlo.remainder"):
        assert op not in text, op
    assert "stablehlo.exponential" in plain and ("stablehlo.remainder" in plain) == sliding
    assert text.count("e8m7") == plain.count("e8m7") - 1  # the probabilities' rounding is the kernel's
    single = decoder_probe_module(MLX_CUDA_V1, cfg, lambda e: core(e, 1), kernels=linked)
    assert "prompt_softmax" not in single and '"decode_scores"' in single and "stablehlo.exponential" in single
