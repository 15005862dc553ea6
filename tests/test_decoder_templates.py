"""The decoder's op-family templates, one op at a time, against `contracts/decoder_ops.py` on llvm-cpu.

Each family is compiled behind a one-op probe entry (`emitters.probe.decoder_probe_module`, the tiny decoder
configuration) and fed the same inputs as its emulation (`IREE_MATH`: IREE's own exp and tanh):

* families without a contraction (the block sum and row mean, the AltUp magnitude and rescale, RoPE, the GELU
  chain, Gaussian top-k) equal the emulation bit for bit under both contracts; the block sum over shapes
  drawn by hypothesis, including rows longer than one block (several passes);
* families with contractions equal it bit for bit under mlx-cuda-v1 on these fixed inputs (every
  contraction result is rounded to BF16; an accumulation-order flip would show as a deterministic failure
  to be judged with the envelope), and within 1e-6 relative under f32-reference, where the F32 results of
  the contractions differ from the exact sums in their last bits (the attention cores: both phases, full
  and sliding layers);
* structure: the rounding points each family emits under mlx-cuda-v1 (`reduce_precision e8m7`), none under
  f32-reference, and the F32 islands' products kept apart from their adds (optimization barriers: no
  fused multiply-add) under both.
"""

from __future__ import annotations

import re
from functools import cache

import ml_dtypes
import numpy as np
import pytest
from conftest import assert_bits_equal, compile_cpu, run_vmfb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.contracts import decoder as DEC
from gemma3n_iree.contracts import decoder_ops as D
from gemma3n_iree.contracts.emulation import round_bf16
from gemma3n_iree.contracts.metrics import relative_l2
from gemma3n_iree.contracts.policy import NumericContract
from gemma3n_iree.emitters.decoder_ops import DecoderOpEmitter
from gemma3n_iree.emitters.probe import decoder_probe_module
from gemma3n_iree.emitters.render import ModuleBuilder
from gemma3n_iree.model.decoder_config import builtin_decoder_config

CFG = builtin_decoder_config("tiny")
F32 = np.float32
CONTRACTS = [MLX_CUDA_V1, F32_REFERENCE]
T, DIM = 5, CFG.hidden_size
FN = D.IREE_MATH


#: This machine's CPU, and one without a BF16 dot instruction that it also runs (emitters/lowering.py widens the
#: contractions' BF16 operands to F32 there).
CPUS = ("host", "x86-64-v3")


def probe(c: NumericContract, build, cpu: str = "host"):
    from gemma3n_iree.emitters.compile import parse_target
    from gemma3n_iree.emitters.lowering import lowering_for

    lowering = lowering_for(parse_target(f"llvm-cpu:{cpu}"), c)
    vmfb = compile_cpu(decoder_probe_module(c, CFG, build, lowering=lowering), cpu)
    return lambda *args: run_vmfb(vmfb, *args)


def bf16(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, F32).astype(ml_dtypes.bfloat16)


def values(shape, seed: int, scale: float = 1.0) -> np.ndarray:
    """BF16-valued F32 data (every activation the templates see under a rounding contract is one)."""
    return round_bf16(scale * np.random.default_rng(seed).standard_normal(shape).astype(F32))


@pytest.fixture(scope="module")
def w() -> dict[str, np.ndarray]:
    """Random BF16 weights of the tiny decoder's shapes (as the checkpoint writer draws them)."""
    from gemma3n_iree.model.decoder_weights import decoder_weight_specs

    rng = np.random.default_rng(11)
    out = {}
    for logical, spec in decoder_weight_specs(CFG).items():
        scale = (
            0.05
            if logical.startswith("embed")
            else 0.3
            if "coefs" in logical
            else (1.0 / np.sqrt(spec.shape[1]) if len(spec.shape) == 2 else 0.1)
        )
        base = 1.0 if len(spec.shape) == 1 else 0.0
        out[logical] = round_bf16(base + scale * rng.standard_normal(spec.shape).astype(F32))
    return out


# ---------------------------------------------------------------------------------------------- pinned families
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.integers(1, 3), width=st.one_of(st.integers(1, 300), st.integers(4097, 9000)), reads=st.sampled_from([4, 8])
)
def test_block_sum_is_the_schedule(rows, width, reads):
    """One block or several passes (a row longer than 1024 threads x reads); no rounding, one template."""
    x = np.random.default_rng(width).standard_normal((rows, width)).astype(F32)
    got = probe(MLX_CUDA_V1, lambda o: o.block_sum(rows, width, reads))(x)[0]
    assert_bits_equal(got, D.block_sum(x, reads), f"block sum {rows}x{width}, {reads} reads")


@pytest.mark.parametrize("c", CONTRACTS, ids=lambda c: c.name)
def test_pinned_families_are_bit_exact(c):
    x = values((T, DIM), 1)
    target = D.rms_magnitude(c, values((T, DIM), 2))[:, 0]
    wide = values((3, 16384 + 96), 3)  # an E4B-wide row: the mean's block sum in two passes
    assert_bits_equal(probe(c, lambda o: o.row_mean(3, wide.shape[1]))(wide)[0], D.mean(c, wide)[:, 0], "mean")
    for floor in (False, True):
        want = D.rms_magnitude(c, x, D.E.contract_scalar(c, 1e-5) if floor else None)[:, 0]
        assert_bits_equal(probe(c, lambda o: o.rms_magnitude(T, DIM, floor))(x)[0], want, f"magnitude {floor}")
    zero_rows = np.concatenate([x[:2], np.zeros((1, DIM), F32)])  # the floor keeps an all-zero row finite
    assert_bits_equal(
        probe(c, lambda o: o.altup_rescale(3, DIM))(zero_rows, target[:3])[0],
        D.rescale(c, zero_rows, target[:3, None]),
        "rescale",
    )
    heads = values((T, 4, CFG.head_dim), 4)
    cos, sin = D.rope_tables(c, CFG.rope_theta_full, CFG.head_dim, np.array([0, 1, 7, 300, 255]))
    assert_bits_equal(probe(c, lambda o: o.rope(T, 4))(heads, cos, sin)[0], D.apply_rope(c, heads, cos, sin), "rope")
    g = values((T, 96), 5)
    assert_bits_equal(probe(c, lambda o: o.gaussian_topk(T, 96, 0.95))(g)[0], D.gaussian_topk(c, g, 0.95), "top-k")


@pytest.mark.parametrize("c", CONTRACTS, ids=lambda c: c.name)
def test_gelu_chain_on_every_bf16_value(c):
    """Every finite BF16 with 2^-120 <= |x| < 1e4, and 0: IREE's generated code flushes subnormal F32 results
    to zero (FTZ), which the emulation does not model, and gelu(x) ~ x / 2 is subnormal below 2^-125."""
    every = (np.arange(1 << 16, dtype=np.uint32) << 16).view(F32)
    normal = (every == 0) | (np.abs(every) >= F32(2.0**-120))
    x = every[np.isfinite(every) & (np.abs(every) < 1e4) & normal]
    x = np.concatenate([x, np.zeros((-len(x)) % 256, F32)]).reshape(-1, 256)
    got = probe(c, lambda o: o.gelu_tanh(list(x.shape)))(x)[0]
    assert_bits_equal(got, D.gelu_tanh(c, x, FN), "gelu")


# ---------------------------------------------------------------------------------------------- with contractions
def judge(c: NumericContract, got: np.ndarray, want: np.ndarray, what: str) -> None:
    if c.round_bf16:
        assert_bits_equal(got, want, what)
    else:
        assert relative_l2(got, want) <= 1e-6, (what, relative_l2(got, want))


@pytest.mark.parametrize("c", [MLX_CUDA_V1], ids=lambda c: c.name)
def test_composite_families(c, w):
    x = values((T, DIM), 6)
    at = "layers.0."
    streams = D.altup_init(c, CFG, w, x)
    judge(
        c,
        probe(c, lambda o: o.altup_init(T))(x, *[bf16(w[f"altup_projections.{i}"]) for i in range(3)])[0],
        streams,
        "altup init",
    )
    router = [bf16(w[at + "altup.router_norm"]), bf16(w[at + "altup.modality_router"])]
    predictions = D.altup_predict(c, CFG, w, 0, streams, FN)
    judge(
        c,
        probe(c, lambda o: o.altup_predict(T))(streams, *router, bf16(w[at + "altup.prediction_coefs"]))[0],
        predictions,
        "predict",
    )
    judge(
        c,
        probe(c, lambda o: o.altup_correct(T))(predictions, x, *router, bf16(w[at + "altup.correction_coefs"]))[0],
        D.altup_correct(c, CFG, w, 0, predictions, x, FN),
        "correct",
    )
    judge(
        c,
        probe(c, lambda o: o.laurel(T))(
            x, *[bf16(w[at + "laurel." + n]) for n in ("linear_left", "linear_right", "post_laurel_norm")]
        )[0],
        D.laurel(c, CFG, w, 0, x),
        "laurel",
    )
    cos, sin = D.rope_tables(c, CFG.rope_theta_sliding, CFG.head_dim, np.arange(T))
    attn = [bf16(w[at + "self_attn." + n]) for n in ("q_proj", "q_norm")]
    judge(
        c,
        probe(c, lambda o: o.query_projection(T))(x, *attn, cos, sin)[0],
        D.project_queries(c, CFG, w, 0, x, cos, sin),
        "queries",
    )
    kv = probe(c, lambda o: o.key_value_projection(T))(
        x, *[bf16(w[at + "self_attn." + n]) for n in ("k_proj", "v_proj", "k_norm")], cos, sin
    )
    k, v = D.project_keys_values(c, CFG, w, 0, x, cos, sin)
    judge(c, kv[0], k, "keys")
    judge(c, kv[1], v, "values")
    attended = values((T, CFG.num_attention_heads, CFG.head_dim), 7)
    judge(
        c,
        probe(c, lambda o: o.attention_residual(T))(
            x, attended, bf16(w[at + "self_attn.o_proj"]), bf16(w[at + "post_attention_layernorm"]), x
        )[0],
        D.attention_residual(c, CFG, w, 0, x, attended, x),
        "attention residual",
    )
    mlp = [
        bf16(w[at + n])
        for n in (
            "pre_feedforward_layernorm",
            "mlp.gate_proj",
            "mlp.up_proj",
            "mlp.down_proj",
            "post_feedforward_layernorm",
        )
    ]
    judge(c, probe(c, lambda o: o.mlp(T, 96, 0.95))(x, *mlp)[0], D.mlp(c, CFG, w, 0, x, FN), "sparse mlp")
    ple = values((T, CFG.hidden_size_per_layer_input), 8)
    gate = [
        bf16(w[at + n])
        for n in (
            "altup.correct_output_scale",
            "per_layer_input_gate",
            "per_layer_projection",
            "post_per_layer_input_norm",
        )
    ]
    judge(
        c,
        probe(c, lambda o: o.ple_gate(T))(predictions, ple, *gate)[0],
        D.ple_gate(c, CFG, w, 0, predictions, ple, FN),
        "per-layer input gate",
    )
    text, rows = values((T, DIM), 9, 0.05), values((T, CFG.ple_width), 10, 0.05)
    got = probe(c, lambda o: o.decoder_embedding(T))(
        bf16(text), bf16(rows), bf16(w["per_layer_model_projection"]), bf16(w["per_layer_projection_norm"])
    )
    embeds, pli = DEC.embed_rows(c, CFG, w, text, rows)
    judge(c, got[0], embeds, "decode embedding")
    judge(c, got[1], pli, "decode per-layer inputs")


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("c", CONTRACTS, ids=lambda c: c.name)
@pytest.mark.parametrize("sliding", [False, True], ids=["full", "sliding"])
def test_attention_cores(c, sliding, cpu):
    """prefill: 9 queries over a 12-position prompt padded to 12 columns (positions 0..8 in use; a sliding
    layer's denominator in ring order); decode: 3 sequences at different positions over their own rows."""
    h, k, hd, window = CFG.num_attention_heads, CFG.num_key_value_heads, CFG.head_dim, CFG.sliding_window
    q = values((9, h, hd), 11)
    keys, vals = values((12, k, hd), 12), values((12, k, hd), 13)
    positions = np.arange(9)
    cols = np.stack(
        [
            np.where(p - np.mod(p - np.arange(window), window) >= 0, p - np.mod(p - np.arange(window), window), -1)
            if sliding
            else np.where(np.arange(12) <= p, np.arange(12), -1)
            for p in positions
        ]
    )
    got = probe(c, lambda o: o.attention_core("prefill", 9, 12, sliding, window), cpu)(
        q, keys, vals, positions.astype(np.int32)
    )[0]
    judge(c, got, D.attention_core(c, q, keys, vals, cols, FN), f"prefill core ({'sliding' if sliding else 'full'})")
    rows = window if sliding else 12
    qd = values((3, h, hd), 14)
    kd, vd = values((3, rows, k, hd), 15), values((3, rows, k, hd), 16)
    at = np.array([2, 7, 11 if not sliding else 40], np.int32)
    want = np.concatenate(
        [
            D.attention_core(
                c,
                qd[b : b + 1],
                kd[b],
                vd[b],
                np.where(_visible(sliding, int(p), rows, window), np.arange(rows), -1)[None],
                FN,
            )
            for b, p in enumerate(at)
        ]
    )
    got = probe(c, lambda o: o.attention_core("decode", 3, rows, sliding, window), cpu)(qd, kd, vd, at)[0]
    judge(c, got, want, f"decode core ({'sliding' if sliding else 'full'})")


def _visible(sliding: bool, p: int, rows: int, window: int) -> np.ndarray:
    from gemma3n_iree.contracts.kv_cache import visible_columns

    return visible_columns(sliding, p, rows, window)


# ---------------------------------------------------------------------------------------------- structure
def fragment(c: NumericContract, build) -> str:
    builder = ModuleBuilder("structure")
    func = build(DecoderOpEmitter(builder, c, cfg=CFG))
    return builder.fragments[func.symbol].text


@pytest.mark.parametrize(
    "family,build,rounded",
    [
        ("gelu", lambda o: o.gelu_tanh([T, DIM]), 8),
        ("gaussian_topk", lambda o: o.gaussian_topk(T, 96, 0.95), 6),
        ("rope", lambda o: o.rope(T, 4), 3),
        ("row_mean", lambda o: o.row_mean(T, DIM), 2),
        ("rms_magnitude", lambda o: o.rms_magnitude(T, DIM, True), 2),
        ("altup_rescale", lambda o: o.altup_rescale(T, DIM), 2),
        ("altup_collapse", lambda o: o.altup_collapse(T), 2),
        ("altup_router", lambda o: o.altup_router(T), 1),  # router.scale; the linear rounds inside; tanh stays F32
        ("altup_predict", lambda o: o.altup_predict(T), 1),  # predict.out only: coefficients and mix are F32 islands
        ("altup_correct", lambda o: o.altup_correct(T), 2),  # innovation and out; coefficients and product islands
        ("attention_residual", lambda o: o.attention_residual(T), 3),
        ("decoder_mlp", lambda o: o.mlp(T, 96, 0.95), 2),
        ("ple_gate", lambda o: o.ple_gate(T), 3),
        ("decoder_head", lambda o: o.decoder_head(1), 3),
        ("decoder_attention", lambda o: o.attention_core("decode", 2, 8, False, 6), 2),
    ],
)
def test_rounding_points_per_family(family, build, rounded):
    """Each family's own rounding points under mlx-cuda-v1 (calls excluded), and none under f32-reference."""
    assert fragment(MLX_CUDA_V1, build).count("format = e8m7") == rounded
    assert "e8m7" not in fragment(F32_REFERENCE, build)


def _multiplies_used_only_by_barriers(text: str) -> bool:
    """Every `stablehlo.multiply` result of a fragment is read by an optimization barrier and nothing else."""
    products = re.findall(r"(%[\w.]+) = stablehlo\.multiply ", text)
    ops = {p: re.findall(rf"= \"?(stablehlo\.[\w.]+)\"?[^\n]*{re.escape(p)}\b", text) for p in products}
    return all(o and set(o) == {"stablehlo.optimization_barrier"} for o in ops.values())


@pytest.mark.parametrize("c", CONTRACTS, ids=lambda c: c.name)
def test_islands_keep_products_apart_from_adds(c):
    """Every product of AltUp's islands reaches its add through a barrier (no fused multiply-add), and the
    products of one sequential matmul or mix share one barrier: predict keeps the coefficients' matmul and
    the mix (two), correct its matmul and the product (two); under f32-reference every product that feeds
    an add is kept too (RoPE: two)."""
    barrier = "stablehlo.optimization_barrier"
    for build in (lambda o: o.altup_predict(T), lambda o: o.altup_correct(T)):
        text = fragment(c, build)
        assert text.count(barrier) == 2
        assert _multiplies_used_only_by_barriers(text), text
    assert fragment(c, lambda o: o.rope(T, 4)).count(barrier) == (0 if c.round_bf16 else 2)
    router = fragment(c, lambda o: o.altup_router(T))
    assert re.search(r"%modalities = stablehlo\.tanh %routed", router) and "return %modalities" in router


def test_gemm_kernel_serves_prompt_sized_linears_only():
    """With the Hopper kernels linked, a decode step's linear (few rows) calls the decode-linear kernel where it
    covers the shape and keeps IREE's code elsewhere, and a prompt's calls the wgmma GEMM; which one is a function
    of the shape, as the symbol says. The row sums call their kernel."""
    from gemma3n_iree.emitters.compile import parse_target
    from gemma3n_iree.emitters.decoder_norms import GEMM_MIN_ROWS
    from gemma3n_iree.emitters.kernels import select_kernels
    from gemma3n_iree.emitters.specialisations import Linear
    from gemma3n_iree.kernels import GEMV_SM90

    kernels = select_kernels("auto", parse_target("cuda", "sm_90"), MLX_CUDA_V1)
    builder = ModuleBuilder("kernels")
    o = DecoderOpEmitter(builder, MLX_CUDA_V1, kernels, cfg=CFG)
    decode, uncovered = o.linear([GEMM_MIN_ROWS - 1], 128, 64), o.linear([GEMM_MIN_ROWS - 1], 64, 48)
    large = o.linear([GEMV_SM90[-1].max_rows + 1], 128, 64)
    assert Linear.from_symbol(decode.symbol).splits and "gemv_bf16" in builder.fragments[decode.symbol].text
    assert (
        not Linear.from_symbol(uncovered.symbol).kernel
        and "hal.dispatch.extern" not in builder.fragments[uncovered.symbol].text
    )
    assert Linear.from_symbol(large.symbol).kernel and "gemm_bf16" in builder.fragments[large.symbol].text
    mean = o.row_mean(4, 48)
    assert any(
        "hal.dispatch.extern" in f.text for key, f in builder.fragments.items() if key.startswith("lane_xor_sum")
    )
    assert mean.symbol in builder.fragments


@cache
def _e4b_decode_spec():
    """E4B's decode step (1 slot of 64 positions, batch 1) with the Hopper kernels linked, for cuda."""
    from gemma3n_iree.emitters.compile import parse_target
    from gemma3n_iree.emitters.decoder import DecoderModuleSpec
    from gemma3n_iree.emitters.kernels import select_kernels
    from gemma3n_iree.emitters.lowering import lowering_for
    from gemma3n_iree.model.decoder_config import builtin_decoder_config

    sm90 = parse_target("cuda", "sm_90")
    kernels = select_kernels("auto", sm90, MLX_CUDA_V1)
    e4b = builtin_decoder_config("e4b")
    return DecoderModuleSpec(
        e4b, MLX_CUDA_V1, 1, 64, (), (1,), kernels=kernels, lowering=lowering_for(sm90, MLX_CUDA_V1)
    )


@cache
def _e4b_decode_program() -> str:
    from gemma3n_iree.emitters.decoder import emit_decoder_module

    return emit_decoder_module(_e4b_decode_spec())


def test_a_decode_steps_attention_is_three_kernels_reading_the_cache_in_place():
    """At E4B's shapes with the Hopper kernels linked, every layer's decode attention is the scores, softmax and
    values kernels in that order, the products reading each sequence's K/V rows from the cache global itself
    (the cache seen as one row per (slot, row)): nothing of the cache is gathered, and no mask, max or exp of the
    softmax is left to IREE."""
    spec, text = _e4b_decode_spec(), _e4b_decode_program()
    layers = spec.cfg.num_hidden_layers
    (entry,) = re.findall(r"func\.func @decoder_decode_\w+\(.*?\n}\n", text, re.S)
    cache_rows = f"tensor<{(spec.slots + 1) * spec.slot_rows}x2x256xbf16>"  # the cache global, one row per (slot, row)
    kernels = re.findall(r'hal\.dispatch\.extern "(decode_\w+)"\(([^)]*)\) : \(([^)]*)\)', text)
    assert [name for name, _, _ in kernels] == ["decode_scores", "decode_softmax", "decode_values"] * layers
    for name, _, types in kernels:
        if name != "decode_softmax":
            assert types.split(", ")[1] == cache_rows, (name, types)  # the cache's rows, not a copy
    assert not re.search(rf'"stablehlo\.gather"\([^)]*\) [^\n]*: \({cache_rows},', text)  # no copy of cache rows
    assert not re.search(r"stablehlo\.exponential %\S+ : tensor<1x2x4x\d+xf32>", entry)  # no softmax of scores


def test_a_decode_layers_norms_take_and_hand_over_kernel_results():
    """At E4B's shapes with the Hopper kernels linked: the norm before the attention projections and LAuReL (and
    the one before the MLP) hands its linears BF16, no F32 pass between; the projections whose only reader is a
    norm hand it the decode-linear kernel's partials: the queries' and LAuReL's right linear's to the partials-norm
    kernel, the output and
    down-projections' to its residual variant (the norm and the residual after it in one dispatch), the per-layer
    projection's to its streams variant, the keys' and values' to its cache variant (norm, RoPE, BF16 rows); the
    decode layer calls them so."""
    from gemma3n_iree.emitters.compile import parse_target
    from gemma3n_iree.emitters.decoder_norms import carrier
    from gemma3n_iree.emitters.kernels import select_kernels
    from gemma3n_iree.model.decoder_config import builtin_decoder_config

    e4b, sm90 = builtin_decoder_config("e4b"), parse_target("cuda", "sm_90")
    kernels = select_kernels("auto", sm90, MLX_CUDA_V1)
    builder = ModuleBuilder("kernels")
    o = DecoderOpEmitter(builder, MLX_CUDA_V1, kernels, cfg=e4b)
    norm = o.norm(1, 2048, feeds_linear=True)
    assert carrier(norm) == "bf16" and carrier(o.norm(1, 2048)) == "f32"
    readers = [o.laurel(1, "bf16"), o.query_projection(1, "bf16"), o.key_value_projection(1, "bf16", "bf16")]
    residual, mlp, ple = o.attention_residual(1), o.mlp(1, 16384, 0.95), o.ple_gate(1)
    texts = {key: f.text for key, f in builder.fragments.items()}
    for reader in readers:
        assert reader.signature.startswith("(tensor<1x2048xbf16>"), reader.symbol
    assert readers[2].signature.endswith("-> (tensor<1x2x256xbf16>, tensor<1x2x256xbf16>)")  # the cache's rows
    # the queries (8 heads): the projection whose norm is the plain partials-norm kernel (where its partial sums
    # do not arrive from a group launch); LAuReL's right linear hands its partials to the LAuReL residual
    assert sorted(k for k in texts if k.startswith("projected_norm")) == [
        "projected_norm_T1_K2048_N2048_G8_Ksm90_Xbf16"
    ]
    key = "projected_norm_T1_K2048_N2048_G8_Ksm90_Xbf16"
    assert texts[key].count('"gemv_bf16_nt_splitk"') == texts[key].count('"rms_norm_partials"') == 1
    assert "stablehlo.convert %x" not in texts[key]
    laurel = texts[readers[0].symbol]
    assert laurel.count('"gemv_bf16_nt_splitk"') == laurel.count('"rms_norm_partials_residual"') == 1
    calls = " ".join(texts[f.symbol] for f in (residual, mlp, ple))
    # the MLP's gate and up in one launch of the decode-linear kernel's pair entry, each summed and rounded alone
    assert "@projected_norm_" not in calls and "@decode_linears_T1_K2048_N16384x16384_P1_Xbf16" in calls
    assert calls.count("@partials_sum_P1_T1_N16384") == 2
    assert calls.count('"gemv_bf16_nt_splitk"') == 3
    assert calls.count('"rms_norm_partials_residual"') == 2 and calls.count('"rms_norm_partials_streams"') == 1
    assert all(k.endswith(("_Ksm90", "_Ksm90_Ybf16")) for k in texts if k.startswith("mlx_rms_norm"))
    layer = _e4b_decode_program()
    own = sum(e4b.owns_kv(i) for i in range(e4b.num_hidden_layers))
    # per layer: the three residuals (LAuReL's, the attention's, the MLP's), the per-layer projection, and the head
    # rows of q (with RoPE, BF16 for the decode-attention kernels) and of k, v where the layer owns its K/V; two
    # BF16 norms
    assert 'hal.dispatch.extern "rms_norm_partials"' not in layer
    assert layer.count('hal.dispatch.extern "rms_norm_partials_residual"') == 3 * e4b.num_hidden_layers
    assert layer.count('hal.dispatch.extern "rms_norm_partials_streams"') == e4b.num_hidden_layers
    assert layer.count('hal.dispatch.extern "rms_norm_partials_kv"') == 2 * own + e4b.num_hidden_layers
    # the normalized input's linears in one launch: LAuReL's left, q, k, v (a quad) where the layer owns its K/V,
    # LAuReL's left and q (a pair) where it shares them; the MLP's gate and up: a pair before a sparse MLP's top-k,
    # else the GELU product (the product handed to the down-projection as BF16)
    sparse = sum(s > 0 for s in e4b.activation_sparsity)
    assert layer.count('hal.dispatch.extern "gemv_bf16_nt_splitk_quad"') == own
    assert layer.count('hal.dispatch.extern "gemv_bf16_nt_splitk_pair"') == e4b.num_hidden_layers - own + sparse
    assert layer.count('hal.dispatch.extern "gemv_bf16_nt_gelu_product"') == e4b.num_hidden_layers - sparse
    bf16_norms = re.findall(r'extern "rms_norm"\([^)]*\) : \([^)]*\) -> tensor<1x2048xbf16>', layer)
    assert len(bf16_norms) == 2 * e4b.num_hidden_layers
