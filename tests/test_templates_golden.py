"""Golden snapshots of every op-family template, plus the renderer's error and constant behaviour.

Each `OpEmitter` method is rendered for a small specialisation (the tiny configuration: D=64, 2 heads,
chunk 12, max past 12, SSCP channels 8/4) under mlx-cuda-v1, and the fragment text exactly as the
template produced it (`ModuleBuilder.fragments[symbol].text`) is compared with
`tests/golden/<symbol>.mlir`; with the Hopper kernels linked (the `*.kernel.mlir.j2` variants), with
`tests/golden/sm90/<symbol>.mlir` (PTX paths written `<ptx>/<file>`, as they depend on where the package
is installed).  A difference fails with a unified diff.  To accept a deliberate template change,
rewrite the snapshots and review the diff in git:

    python -m pytest tests/test_templates_golden.py --update-golden
    (or GEMMA3N_UPDATE_GOLDEN=1 python -m pytest tests/test_templates_golden.py)
"""

from __future__ import annotations

import difflib
import inspect
import re
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from gemma3n_iree.contracts.emulation import BF16_MIN
from gemma3n_iree.contracts.mel import MelFrontEnd
from gemma3n_iree.contracts.policy import MLX_CUDA_V1
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.emitters.decoder import DecoderModuleSpec, _ProgramEmitter
from gemma3n_iree.emitters.decoder_ops import DecoderOpEmitter
from gemma3n_iree.emitters.kernels import IREE_CODEGEN, LinkedKernels, select_kernels
from gemma3n_iree.emitters.lowering import DEFAULT_LOWERING, IM2COL, Lowering
from gemma3n_iree.emitters.mel import MelEmitter
from gemma3n_iree.emitters.ops import OpEmitter
from gemma3n_iree.emitters.probe import probe_module
from gemma3n_iree.emitters.render import (
    TEMPLATE_DIR,
    FragmentParseError,
    Func,
    ModuleBuilder,
    TemplateRenderError,
    f32_hex,
    parse_fragment,
    render,
)
from gemma3n_iree.kernels.spec import PTX_DIR
from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.model.audio_weights import HF_LAYOUT
from gemma3n_iree.model.decoder_config import DecoderConfig, builtin_decoder_config

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
TINY = builtin_config("tiny")
B, T, D, EPS, CLIP = 1, 25, TINY.hidden_size, TINY.rms_norm_eps, TINY.gradient_clipping
TINY_DECODER = builtin_decoder_config("tiny")


def _sscp_block(o: OpEmitter) -> Func:
    conv = o.sscp_conv(B, 100, 128, 1, 8, (3, 3), (2, 2), "oihw")
    norm = o.cumulative_group_norm(B, 50, 64, 8, 1e-3)
    mask = o.mask_frames([B, 50, 64, 8])
    return o.sscp_block(conv, norm, mask, B, 100, 128, 1, 50, 64, 8)


def _lowered(lowering: Lowering) -> Callable[[Callable[[OpEmitter], Func]], Callable[[OpEmitter], Func]]:
    """Marks a case rendered in llvm-cpu's forms (emitters/lowering.py)."""

    def mark(build: Callable[[OpEmitter], Func]) -> Callable[[OpEmitter], Func]:
        build.lowering = lowering  # type: ignore[attr-defined]
        return build

    return mark


_im2col = _lowered(Lowering(conv=IM2COL))
#: a CPU without a BF16 dot: the contractions read their BF16 operands as F32
_widened = _lowered(Lowering(conv=IM2COL, widen_bf16=True))


#: (golden case name, OpEmitter method, builder).  The case's golden file is named by the symbol.
CASES: list[tuple[str, str, Callable[[OpEmitter], Func]]] = [
    ("lane_xor_sum", "lane_xor_sum", lambda o: o.lane_xor_sum(4, 128, 4)),
    ("lane_xor_sum_two_stage_sq", "lane_xor_sum", lambda o: o.lane_xor_sum(2, 1536, 8, square=True)),
    ("prefix_scan", "prefix_scan", lambda o: o.prefix_scan(2, 130)),
    ("affine_dequant", "affine_dequant", lambda o: o.affine_dequant(4, 128, 4, 64)),
    ("valid_mask", "valid_mask", lambda o: o.valid_mask(B, 50, 2)),
    ("mask_frames", "mask_frames", lambda o: o.mask_frames([B, T, D])),
    ("mel_boundary", "mel_boundary", lambda o: o.mel_boundary(B, 100, 128)),
    ("sscp_conv", "sscp_conv", lambda o: o.sscp_conv(B, 100, 128, 1, 8, (3, 3), (2, 2), "oihw")),
    ("sscp_conv_im2col", "sscp_conv", _im2col(lambda o: o.sscp_conv(B, 100, 128, 1, 8, (3, 3), (2, 2), "oihw"))),
    ("sscp_conv_im2col_ohwi", "sscp_conv", _im2col(lambda o: o.sscp_conv(B, 50, 64, 8, 4, (3, 3), (2, 2), "ohwi"))),
    ("sscp_conv_widened", "sscp_conv", _widened(lambda o: o.sscp_conv(B, 100, 128, 1, 8, (3, 3), (2, 2), "oihw"))),
    ("cumulative_group_norm", "cumulative_group_norm", lambda o: o.cumulative_group_norm(B, 50, 64, 8, 1e-3)),
    ("linear", "linear", lambda o: o.linear([B, T], D, 4 * D)),
    ("linear_widened", "linear", _widened(lambda o: o.linear([B, T], D, 4 * D))),
    ("rms_norm_scaled", "rms_norm", lambda o: o.rms_norm([B, T], D, EPS, scaled=True)),
    ("rms_norm_noscale", "rms_norm", lambda o: o.rms_norm([B, 7], 48, EPS, scaled=False)),
    ("residual_rms_norm", "residual_rms_norm", lambda o: o.residual_rms_norm([B, T], D, EPS, CLIP, 0.5)),
    ("feed_forward", "feed_forward", lambda o: o.feed_forward(B, T, D, EPS, CLIP, 0.5)),
    ("light_conv", "light_conv", lambda o: o.light_conv(B, T, D, 5, EPS, CLIP, "d1k")),
    ("attention", "attention", lambda o: o.attention(B, T, D, 2, 12, 12, 50.0, EPS, CLIP)),
    ("attention_widened", "attention", _widened(lambda o: o.attention(B, T, D, 2, 12, 12, 50.0, EPS, CLIP))),
    ("sscp_block", "sscp_block", _sscp_block),
    ("conformer_block", "conformer_block", lambda o: o.conformer_block(TINY, B, T, HF_LAYOUT)),
    ("reduction", "reduction", lambda o: o.reduction(B, T, D, 4)),
    ("embedder", "embedder", lambda o: o.embedder([B, 7], D, 48, EPS)),
    ("audio_output", "audio_output", lambda o: o.audio_output(B, 7, D, 48, 128, 188)),
    ("mlx_rms_norm", "mlx_rms_norm", lambda o: o.mlx_rms_norm(6, 256, EPS)),
    ("token_merge", "token_merge", lambda o: o.token_merge(8, 48, 128, 262272, 188)),
    ("dense_ple", "dense_ple", lambda o: o.dense_ple(8, 48, 2, 256, EPS)),
    # the device log-mel front end (emitters/mel.py): 2 clips of a 4-frame bucket (1152 samples)
    ("mel_frame_counts", "MelEmitter.frame_counts", lambda o: MelEmitter(o).frame_counts(2)),
    ("mel_framing", "MelEmitter.framing", lambda o: MelEmitter(o).framing(2, 4)),
    ("mel_dft_matmul", "MelEmitter.dft", lambda o: MelEmitter(o).dft(2, 4, "matmul")),
    ("mel_dft_rfft", "MelEmitter.dft", lambda o: MelEmitter(o).dft(2, 4, "rfft")),
    ("mel_magnitude", "MelEmitter.magnitude", lambda o: MelEmitter(o).magnitude(2, 4)),
    ("mel_log", "MelEmitter.log_mel", lambda o: MelEmitter(o).log_mel(2, 4)),
    ("mel_front", "MelEmitter.front", lambda o: MelEmitter(o).front(2, 4, MelFrontEnd("matmul"))),
]


def _layer(
    phase: str,
    layer: int,
    tokens: int = 8,
    cfg: DecoderConfig = TINY_DECODER,
    capacity: int = 16,
    prompts: int = 1,
) -> Callable[[OpEmitter], Func]:
    """A decoder layer function (the program emitter's, rendering into the case's module); `prompts`: a prefill
    of that many prompts at once."""

    def build(o: OpEmitter) -> Func:
        program = _ProgramEmitter(DecoderModuleSpec(cfg, MLX_CUDA_V1, 2, capacity, (8,), (2,)))
        program.module, program.ops = o.module, o  # type: ignore[assignment]
        return program.layer(phase, tokens, layer, 8 if capacity == 16 else capacity, prompts)

    return build


def _decoder(build: Callable[[OpEmitter], Func], cfg: DecoderConfig = TINY_DECODER) -> Callable[[OpEmitter], Func]:
    """Marks a case rendered by a `DecoderOpEmitter` (of the tiny decoder configuration unless `cfg`)."""
    build.decoder = cfg  # type: ignore[attr-defined]
    return build


#: The decoder's op families (tiny decoder configuration) and its layer variants (sliding own, full own,
#: shared; prefill and decode).
DECODER_CASES: list[tuple[str, str, Callable[[OpEmitter], Func]]] = [
    ("block_sum", "block_sum", _decoder(lambda o: o.block_sum(2, 9000, 8))),
    ("row_mean", "row_mean", _decoder(lambda o: o.row_mean(3, 48))),
    ("norm", "norm", _decoder(lambda o: o.norm(3, 48))),
    ("rms_magnitude", "rms_magnitude", _decoder(lambda o: o.rms_magnitude(3, 48, True))),
    ("altup_rescale", "altup_rescale", _decoder(lambda o: o.altup_rescale(3, 48))),
    ("altup_init", "altup_init", _decoder(lambda o: o.altup_init(3))),
    ("altup_collapse", "altup_collapse", _decoder(lambda o: o.altup_collapse(3))),
    ("altup_router", "altup_router", _decoder(lambda o: o.altup_router(3))),
    ("altup_predict", "altup_predict", _decoder(lambda o: o.altup_predict(3))),
    ("altup_correct", "altup_correct", _decoder(lambda o: o.altup_correct(3))),
    ("laurel", "laurel", _decoder(lambda o: o.laurel(3))),
    ("rope", "rope", _decoder(lambda o: o.rope(3, 4))),
    ("projected_norm", "projected_norm", _decoder(lambda o: o.projected_norm(3, 48, 64, 4))),
    ("query_projection", "query_projection", _decoder(lambda o: o.query_projection(3))),
    ("key_value_projection", "key_value_projection", _decoder(lambda o: o.key_value_projection(3))),
    ("attention_prefill_full", "attention_core", _decoder(lambda o: o.attention_core("prefill", 4, 8, False, 6))),
    ("attention_prefill_sliding", "attention_core", _decoder(lambda o: o.attention_core("prefill", 4, 8, True, 6))),
    ("attention_decode_sliding", "attention_core", _decoder(lambda o: o.attention_core("decode", 2, 6, True, 6))),
    (
        "attention_prefill_full_widened",
        "attention_core",
        _widened(_decoder(lambda o: o.attention_core("prefill", 4, 8, False, 6))),
    ),
    (
        "attention_decode_sliding_widened",
        "attention_core",
        _widened(_decoder(lambda o: o.attention_core("decode", 2, 6, True, 6))),
    ),
    ("attention_residual", "attention_residual", _decoder(lambda o: o.attention_residual(3))),
    ("gelu_tanh", "gelu_tanh", _decoder(lambda o: o.gelu_tanh([3, 96]))),
    ("gaussian_topk", "gaussian_topk", _decoder(lambda o: o.gaussian_topk(3, 96, 0.95))),
    ("mlp_sparse", "mlp", _decoder(lambda o: o.mlp(3, 96, 0.95))),
    ("ple_gate", "ple_gate", _decoder(lambda o: o.ple_gate(3))),
    ("decoder_head", "decoder_head", _decoder(lambda o: o.decoder_head(1))),
    ("decoder_embedding", "decoder_embedding", _decoder(lambda o: o.decoder_embedding(2))),
    ("token_select", "token_select", _decoder(lambda o: o.token_select(2, vocab=300))),
    ("token_select_top_k", "token_select", _decoder(lambda o: o.token_select(2, 3, 300))),
    ("token_sample", "token_sample", _decoder(lambda o: o.token_sample(2, vocab=300))),
    ("layer_prefill_sliding_own", "layer", _decoder(_layer("prefill", 0))),
    ("layer_prefill_full_own", "layer", _decoder(_layer("prefill", 4))),
    ("layer_prefill_shared", "layer", _decoder(_layer("prefill", 5))),
    ("layer_prefill_sliding_own_batch", "layer", _decoder(_layer("prefill", 0, prompts=2))),
    ("layer_prefill_shared_batch", "layer", _decoder(_layer("prefill", 5, prompts=2))),
    ("layer_decode_sliding_own", "layer", _decoder(_layer("decode", 0, 2))),
    ("layer_decode_shared", "layer", _decoder(_layer("decode", 9, 2))),
]


#: The same with the Hopper kernels linked: every `*.kernel.mlir.j2` template, and the op families
#: whose parts they are.
KERNEL_CASES: list[tuple[str, str, Callable[[OpEmitter], Func]]] = [
    ("lane_xor_sum", "lane_xor_sum", lambda o: o.lane_xor_sum(4, 128, 4)),
    ("linear", "linear", lambda o: o.linear([B, T], D, 4 * D)),
    ("linear_bf16_result", "linear", lambda o: o.linear([B, T], D, 4 * D, kernel_bf16=True)),
    ("rms_norm", "rms_norm", lambda o: o.rms_norm([B, T], D, EPS, clip=CLIP)),
    ("rms_norm_feeding_a_matmul", "rms_norm", lambda o: o.rms_norm([B, T], D, EPS, clip=CLIP, feeds_matmul=True)),
    ("rms_norm_silu", "rms_norm_silu", lambda o: o.rms_norm_silu([B, T], D, EPS, CLIP)),
    ("residual_rms_norm", "residual_rms_norm", lambda o: o.residual_rms_norm([B, T], D, EPS, CLIP, 0.5)),
    (
        "residual_rms_norm_bf16_x",
        "residual_rms_norm",
        lambda o: o.residual_rms_norm([B, T], D, EPS, CLIP, 0.5, x_dtype="bf16"),
    ),
    ("feed_forward", "feed_forward", lambda o: o.feed_forward(B, T, D, EPS, CLIP, 0.5)),
    ("light_conv", "light_conv", lambda o: o.light_conv(B, T, D, 5, EPS, CLIP, "d1k")),
    ("attention", "attention", lambda o: o.attention(B, T, D, 2, 12, 12, 50.0, EPS, CLIP)),
    ("linear_decode", "linear", _decoder(lambda o: o.linear([1], 256, 128))),
    ("linear_decode_narrow", "linear", _decoder(lambda o: o.linear([1], 256, 4))),  # AltUp's router
    ("norm_decode", "norm", _decoder(lambda o: o.norm(8, 256), builtin_decoder_config("e4b"))),
    (  # E4B's queries at a decode step: 8 heads of 256 normalized from the linear's 16 partials
        "projected_norm_decode",
        "projected_norm",
        _decoder(lambda o: o.projected_norm(1, 2048, 2048, 8), builtin_decoder_config("e4b")),
    ),
    (
        "attention_prefill_row",  # a KV-shared layer's prefill: its prompt's last row, in the decode kernels
        "attention_core",
        _decoder(lambda o: o.attention_core("prefill", 1, 256, True, 512), builtin_decoder_config("e4b")),
    ),
    (
        "attention_prefill_prompt_softmax",  # a prompt's rows: IREE's products, the softmax in the prompt kernel
        "attention_core",
        _decoder(lambda o: o.attention_core("prefill", 8, 8, True, 8), builtin_decoder_config("e4b")),
    ),
    (
        "attention_decode_full",  # E4B's heads: the shapes the decode-attention kernels serve
        "attention_core",
        _decoder(
            lambda o: o.attention_core("decode", 1, 128, False, 128, "tensor<2048x2x256xbf16>"),
            builtin_decoder_config("e4b"),
        ),
    ),
    (  # E4B's AltUp steps, router included, in one dispatch each of the AltUp kernels
        "altup_predict_kernel",
        "altup_predict",
        _decoder(lambda o: o.altup_predict(2), builtin_decoder_config("e4b")),
    ),
    ("altup_correct_kernel", "altup_correct", _decoder(lambda o: o.altup_correct(2), builtin_decoder_config("e4b"))),
    (  # E4B's attention residual and MLP at a decode step: each projection's kernel, then the residual's
        "attention_residual_kernel",
        "attention_residual",
        _decoder(lambda o: o.attention_residual(2), builtin_decoder_config("e4b")),
    ),
    ("mlp_kernel", "mlp", _decoder(lambda o: o.mlp(2, 16384, 0.95), builtin_decoder_config("e4b"))),
    (  # a dense MLP: the gate, up and GELU product in one kernel
        "mlp_gelu_product_kernel",
        "mlp",
        _decoder(lambda o: o.mlp(2, 16384, 0.0), builtin_decoder_config("e4b")),
    ),
    ("ple_gate_kernel", "ple_gate", _decoder(lambda o: o.ple_gate(2), builtin_decoder_config("e4b"))),
    (  # E4B's keys and values at a decode step, as the BF16 cache stores them
        "key_value_projection_kernel",
        "key_value_projection",
        _decoder(lambda o: o.key_value_projection(2, "bf16", "bf16"), builtin_decoder_config("e4b")),
    ),
    (  # the decode attention handing its value products' partial sums to the output projection unsummed
        "attention_core_decode_value_partials",
        "attention_core",
        _decoder(
            lambda o: o.attention_core("decode", 1, 512, True, 512, "tensor<2048x2x256xbf16>", "bf16", True),
            builtin_decoder_config("e4b"),
        ),
    ),
    (  # the output projection reading them (the decode-linear kernel's summed entry), then the residual's kernel
        "attention_residual_value_partials",
        "attention_residual",
        _decoder(lambda o: o.attention_residual(1, 8), builtin_decoder_config("e4b")),
    ),
    (  # the decode-attention kernels reading the queries as the query projection's head-row kernel hands them
        "attention_core_decode_bf16_queries",
        "attention_core",
        _decoder(
            lambda o: o.attention_core("decode", 1, 128, False, 128, "tensor<2048x2x256xbf16>", "bf16"),
            builtin_decoder_config("e4b"),
        ),
    ),
    (  # E4B's decode-step linears of the normalized input in one launch: LAuReL's left, q, k, v
        "attention_inputs_kernel",
        "attention_inputs",
        _decoder(lambda o: o.attention_inputs(2, "bf16", "bf16"), builtin_decoder_config("e4b")),
    ),
    (  # the MLP's gate and up of a decode step in one launch
        "decode_linears_kernel",
        "decode_linears",
        _decoder(lambda o: o.decode_linears(2, 2048, (16384, 16384), "bf16"), builtin_decoder_config("e4b")),
    ),
    (  # the per-layer input gate's scaled linear of a decode step in one launch
        "scaled_linear_kernel",
        "scaled_linear",
        _decoder(lambda o: o.scaled_linear(2, 2048, 256, "ple_gate.scale"), builtin_decoder_config("e4b")),
    ),
    ("partials_sum", "partials_sum", _decoder(lambda o: o.partials_sum(16, 2, 64), builtin_decoder_config("e4b"))),
    (  # LAuReL at a decode step: the right linear's kernel, then the LAuReL residual's
        "laurel_kernel",
        "laurel",
        _decoder(lambda o: o.laurel(2, "bf16"), builtin_decoder_config("e4b")),
    ),
    (  # the readers of those partial sums: LAuReL's right linear reading the left one's
        "laurel_partials",
        "laurel",
        _decoder(lambda o: o.laurel(2, "bf16", 16), builtin_decoder_config("e4b")),
    ),
    (
        "query_projection_partials_kernel",
        "query_projection",
        _decoder(lambda o: o.query_projection(2, "bf16", 16), builtin_decoder_config("e4b")),
    ),
    (
        "key_value_projection_partials_kernel",
        "key_value_projection",
        _decoder(lambda o: o.key_value_projection(2, "bf16", "bf16", 16), builtin_decoder_config("e4b")),
    ),
    (  # E4B's KV-shared sliding layer at a decode step: its attention reads the cache rows in place
        "layer_decode_shared_reading_the_cache",
        "layer",
        _decoder(_layer("decode", 30, 1, builtin_decoder_config("e4b"), 512), builtin_decoder_config("e4b")),
    ),
]
SM90_KERNELS = select_kernels("auto", parse_target("cuda", "sm_90"), MLX_CUDA_V1)
ALL_CASES = [(GOLDEN_DIR, IREE_CODEGEN, *case) for case in CASES + DECODER_CASES] + [
    (GOLDEN_DIR / "sm90", SM90_KERNELS, *case) for case in KERNEL_CASES
]
CASE_IDS = [f"{folder.name}/{case}" for folder, _, case, _, _ in ALL_CASES]


def rendered(build: Callable[[OpEmitter], Func], kernels: LinkedKernels = IREE_CODEGEN) -> tuple[Func, ModuleBuilder]:
    builder = ModuleBuilder("golden")
    lowering = getattr(build, "lowering", DEFAULT_LOWERING)
    cfg = getattr(build, "decoder", None)
    if cfg is not None:
        return build(DecoderOpEmitter(builder, MLX_CUDA_V1, kernels, lowering, cfg=cfg)), builder
    return build(OpEmitter(builder, MLX_CUDA_V1, kernels, lowering)), builder


def test_every_op_family_has_a_golden_case():
    methods = {
        prefix + name
        for cls, prefix in ((DecoderOpEmitter, ""), (MelEmitter, "MelEmitter."))
        for name, _ in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }
    assert methods | {"layer"} == {method for _, method, _ in CASES + KERNEL_CASES + DECODER_CASES}


def test_every_template_is_rendered_by_a_golden_case():
    """Each template file (a whole op's, or a variant of a part of one) is used by some golden case."""
    used: set[str] = set()
    original = ModuleBuilder.add

    def add(self: ModuleBuilder, template: str, func: Func, calls=(), **params) -> Func:
        used.add(template)
        used.update(v for v in params.values() if isinstance(v, str) and v.endswith(".mlir.j2"))
        return original(self, template, func, calls, **params)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ModuleBuilder, "add", add)
        for _, kernels, _, _, build in ALL_CASES:
            rendered(build, kernels)
    templates = {p.name for p in TEMPLATE_DIR.glob("*.mlir.j2")}
    entries = {
        "audio_encoder.mlir.j2",
        "audio_encoder_device_mel.mlir.j2",
        "prefill_entry.mlir.j2",
        "probe_entry.mlir.j2",
        "decoder_entry.mlir.j2",
    }  # module fragments
    partials = {
        "_macros.mlir.j2",
        "rms_norm.normalize.mlir.j2",  # imported or included by every variant
        "decoder_layer.write_prefill.at.mlir.j2",  # included by both prefill writes (rows, ring)
        "decoder_layer.write_prefill.scatter.mlir.j2",
    }
    assert templates - entries - partials == used


@pytest.mark.parametrize("folder,kernels,case,method,build", ALL_CASES, ids=CASE_IDS)
def test_template_golden(folder, kernels, case, method, build, update_golden):
    func, builder = rendered(build, kernels)
    text = builder.fragments[func.symbol].text.replace(str(PTX_DIR), "<ptx>")
    path = folder / f"{func.symbol}.mlir"
    if update_golden:
        folder.mkdir(exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        return
    if not path.exists():
        pytest.fail(
            f"no golden snapshot {path.relative_to(GOLDEN_DIR.parent.parent)}; "
            "run pytest with --update-golden to create it"
        )
    want = path.read_text()
    if text != want:
        diff = "".join(
            difflib.unified_diff(
                want.splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"golden/{path.name}",
                tofile=f"rendered {func.symbol}",
            )
        )
        pytest.fail(
            f"{case}: the template output differs from its golden snapshot (--update-golden accepts it):\n{diff}",
            pytrace=False,
        )


@pytest.mark.parametrize("folder,kernels,case,method,build", ALL_CASES, ids=CASE_IDS)
def test_golden_case_verifies(folder, kernels, case, method, build):
    """The snapshotted fragments (and what they call) parse and verify as one module."""
    _func, builder = rendered(build, kernels)
    text = builder.build(inline=False)
    assert "func.func private @" in text


def test_golden_directory_has_no_stale_snapshots():
    want = {folder / f"{rendered(build, kernels)[0].symbol}.mlir" for folder, kernels, _, _, build in ALL_CASES}
    on_disk = set(GOLDEN_DIR.glob("*.mlir")) | set((GOLDEN_DIR / "sm90").glob("*.mlir"))
    assert on_disk == want, f"stale: {sorted(on_disk - want)}, missing: {sorted(want - on_disk)}"


# ---------------------------------------------------------------------------------------------- render errors
def test_undefined_template_variable_is_an_error():
    with pytest.raises(TemplateRenderError) as info:
        render("mel_boundary.mlir.j2", symbol="mel_boundary_x", c=MLX_CUDA_V1, b=1, t=4)  # no `mel`
    message = str(info.value)
    assert "mel_boundary.mlir.j2" in message
    assert "'mel' is undefined" in message
    assert re.search(r"mel_boundary\.mlir\.j2:\d+:", message), message


def test_undefined_attribute_in_macro_is_an_error():
    """StrictUndefined also covers the contract object the macros read (`c.round_format`)."""
    with pytest.raises(TemplateRenderError) as info:
        render("mel_boundary.mlir.j2", symbol="m", c=object(), b=1, t=4, mel=8)
    assert "mel_boundary.mlir.j2" in str(info.value) or "_macros.mlir.j2" in str(info.value)


def test_unknown_template_is_an_error():
    with pytest.raises(Exception) as info:
        render("no_such_template.mlir.j2", symbol="x")
    assert "no_such_template.mlir.j2" in str(info.value)


# ---------------------------------------------------------------------------------------------- constants
@pytest.mark.parametrize(
    "value,spelling",
    [
        (1e-6, "0x358637BD"),
        (1.0, "0x3F800000"),
        (-0.0, "0x80000000"),
        (0.1, "0x3DCCCCCD"),
        (float("inf"), "0x7F800000"),
        (1e10, "0x501502F9"),
        (BF16_MIN, "0xFF7F0000"),
        (1e-3, "0x3A83126F"),
    ],
)
def test_f32_hex_is_bit_exact(value, spelling):
    assert f32_hex(value) == spelling
    back = struct.unpack("<f", struct.pack("<I", int(spelling, 16)))[0]
    assert np.float32(back).view(np.uint32) == np.float32(value).view(np.uint32)


def test_rendered_constant_parses_back_bit_exactly():
    func, builder = rendered(lambda o: o.rms_norm([2], 8, 1e-6, scaled=False))
    frag = builder.fragments[func.symbol].text
    assert "dense<0x358637BD> : tensor<f32>" in frag  # eps, written as its exact bits
    # the MLIR parser reads the same float: the verified module prints it back in decimal
    text = probe_module(MLX_CUDA_V1, lambda o: o.rms_norm([2], 8, 1e-6, scaled=False))
    printed = re.findall(r"dense<([-+.\dEe]+)> : tensor<f32>", text)
    eps = [np.float32(v) for v in printed if np.float32(v) == np.float32(1e-6)]
    assert eps, printed
    assert np.float32(eps[0]).view(np.uint32) == np.uint32(0x358637BD)


# ---------------------------------------------------------------------------------------------- parse errors
BROKEN = """\
!x = tensor<4xf32>
func.func private @broken(%x: !x) -> !x {
  %y = stablehlo.add %x, %x : !x
  %z = stablehlo.multiply %y, %undefined_value : !x
  return %z : !x
}
"""


def test_invalid_fragment_raises_with_numbered_lines_and_marker():
    from iree.compiler.api import Session

    session = Session()
    try:
        with pytest.raises(FragmentParseError) as info:
            parse_fragment(BROKEN, "broken.mlir.j2", session.context)
    finally:
        del session
    message = str(info.value)
    assert message.startswith("broken.mlir.j2: rendered MLIR does not parse/verify (line 4)"), message
    assert "undefined_value" in message
    marked = [l for l in message.splitlines() if l.startswith(">>")]
    assert len(marked) == 1 and marked[0].startswith(">>4 | ") and "%undefined_value" in marked[0]
    # neighbouring lines are shown numbered (without the marker)
    assert re.search(r"^  3 \| +%y = stablehlo\.add", message, re.M)
    assert re.search(r"^  5 \| +return %z", message, re.M)


def test_fragment_type_error_is_reported_at_its_line():
    from iree.compiler.api import Session

    bad = BROKEN.replace("%undefined_value", "%x").replace(
        "%y = stablehlo.add %x, %x : !x", "%y = stablehlo.add %x, %x : tensor<5xf32>"
    )
    session = Session()
    try:
        with pytest.raises(FragmentParseError) as info:
            parse_fragment(bad, "typed.mlir.j2", session.context)
    finally:
        del session
    assert "typed.mlir.j2" in str(info.value)
    assert any(l.startswith(">>") for l in str(info.value).splitlines())
