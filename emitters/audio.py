"""Compose the audio stage (encoder + audio embedder) into one module of bucketed entry points."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..contracts.mel import HOST_MEL, MelFrontEnd
from ..contracts.policy import NumericContract
from ..model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP, MAX_CLIP_FRAMES, AudioConfig
from ..model.audio_weights import BLOCK_WEIGHTS, HF_LAYOUT, WeightLayout, WeightSpec, audio_weight_specs
from .entries import EncodeEntry
from .kernels import IREE_CODEGEN, LinkedKernels
from .lowering import DEFAULT_LOWERING, Lowering
from .mel import MelEmitter, mel_tables
from .ops import OpEmitter
from .render import Func, ModuleBuilder, tensor_type

PARAMETER_SCOPE = "model"


class BucketError(ValueError):
    """A requested frame bucket or clip count cannot be compiled."""


@dataclass(frozen=True)
class AudioModuleSpec:
    """Everything an emitted audio module depends on (and hence its identity)."""

    config: AudioConfig
    contract: NumericContract
    frame_buckets: tuple[int, ...]
    clips: tuple[int, ...] = (1,)
    layout: WeightLayout = HF_LAYOUT
    stages: bool = False
    #: (bits, group size) of affine-quantized weights, and the logical names of those weights
    #: (Linear/Embedding weights stored packed; dequantized inside the module).
    quantization: tuple[int, int] | None = None
    quantized: frozenset[str] = frozenset()
    #: the committed Hopper kernels the module links (emitters/kernels.py select_kernels; none: IREE's own)
    kernels: LinkedKernels = IREE_CODEGEN
    #: where the log-mel is computed: on the host (entries take features) or as the module's first stage
    #: (entries take 16 kHz samples; contracts/mel.py)
    mel: MelFrontEnd = HOST_MEL
    #: the forms the target's code generation wants (emitters/lowering.py lowering_for)
    lowering: Lowering = DEFAULT_LOWERING

    def __post_init__(self) -> None:
        if not self.frame_buckets:
            raise BucketError("at least one frame bucket is needed")
        for frames in self.frame_buckets:
            if not 1 <= frames <= MAX_CLIP_FRAMES:
                raise BucketError(
                    f"frame bucket {frames} is outside 1..{MAX_CLIP_FRAMES} "
                    f"(a 30 s clip has {MAX_CLIP_FRAMES} mel frames)"
                )
        for clips in self.clips:
            if clips < 1:
                raise BucketError(f"clips per call must be >= 1, got {clips}")
        if self.quantized and self.quantization is None:
            raise ValueError("quantized weights need the quantization (bits, group size)")

    @property
    def entries(self) -> list[tuple[int, int]]:
        return [(f, c) for f in sorted(set(self.frame_buckets)) for c in sorted(set(self.clips))]

    @property
    def entry_points(self) -> list[EncodeEntry]:
        return [EncodeEntry(f, c) for f, c in self.entries]

    def identity(self) -> str:
        return "|".join(
            [
                "gemma3n-audio-module-v1",
                self.config.identity(),
                self.contract.identity(),
                self.layout.name,
                "buckets=" + ",".join(map(str, sorted(set(self.frame_buckets)))),
                "clips=" + ",".join(map(str, sorted(set(self.clips)))),
                f"stages={int(self.stages)}",
                f"quantization={self.quantization}",
                "quantized=" + ",".join(sorted(self.quantized)),
                "kernels=" + self.kernels.identity,
                "mel=" + self.mel.name,
                "lowering=" + self.lowering.identity,
            ]
        )

    def digest(self) -> str:
        return hashlib.sha256(self.identity().encode()).hexdigest()


@dataclass
class _Entry:
    entry: EncodeEntry
    b: int
    t: int
    valid: list[Func] = field(default_factory=list)
    mel_front: Func | None = None
    mask_mel: Func | None = None
    mel_boundary: Func | None = None
    sscp: list[Func] = field(default_factory=list)
    input_proj: Func | None = None
    block: Func | None = None
    reduction: Func | None = None
    embed_soft: Func | None = None
    embed_hard: Func | None = None
    output: Func | None = None
    outputs: list[tuple[str, str, str]] = field(default_factory=list)  # (name, value, type), as the prefill's

    @property
    def name(self) -> str:
        return self.entry.symbol


def emit_audio_module(spec: AudioModuleSpec) -> str:
    """Render and verify the whole module; returns MLIR text ready for `iree-compile`."""
    cfg, contract = spec.config, spec.contract
    module = ModuleBuilder("gemma3n_audio")
    ops = OpEmitter(module, contract, spec.kernels, spec.lowering)
    weights = audio_weight_specs(cfg, spec.layout)
    stored, dequantized = _stored_weights(ops, spec, weights)
    entries = [_build_entry(ops, cfg, spec.layout, frames, clips, spec.mel) for frames, clips in spec.entries]
    for e in entries:
        e.outputs = _outputs(e, cfg, spec.stages)
    block_weights = [
        [f"%{_symbol(f'conformer.{layer}.{name}')}" for name in BLOCK_WEIGHTS]
        for layer in range(cfg.conf_num_hidden_layers)
    ]
    calls = [f for e in entries for f in _entry_funcs(e)] + [d.func for d in dequantized]
    tables = mel_tables(spec.mel) if spec.mel.on_device else []
    template = "audio_encoder_device_mel.mlir.j2" if spec.mel.on_device else "audio_encoder.mlir.j2"
    module.add_raw(
        "entry",
        template,
        calls=calls,
        c=contract,
        weights=stored,
        mel_tables=tables,
        mel_front_end=spec.mel.name,
        dequantized=dequantized,
        scope=PARAMETER_SCOPE,
        entries=entries,
        mel=cfg.input_feat_size,
        layers=cfg.conf_num_hidden_layers,
        block_weights=block_weights,
        table_type=tensor_type([cfg.vocab_size, cfg.hidden_size], "bf16"),
        kernels_name=spec.kernels.identity,
    )
    return module.build()


@dataclass(frozen=True)
class _Dequantized:
    """A weight stored packed: the globals holding it and the function that unpacks it."""

    symbol: str
    func: Func
    sources: tuple[str, str, str]


def _stored_weights(
    ops: OpEmitter, spec: AudioModuleSpec, weights: list[WeightSpec]
) -> tuple[list[WeightSpec], list[_Dequantized]]:
    """The tensors the checkpoint stores (packed ones as weight/scales/biases) and their unpacking."""
    unknown = spec.quantized - {w.logical for w in weights}
    if unknown:
        raise ValueError(f"quantized weights not in the audio schema: {', '.join(sorted(unknown))}")
    stored: list[WeightSpec] = []
    dequantized: list[_Dequantized] = []
    for w in weights:
        if w.logical not in spec.quantized:
            stored.append(w)
            continue
        assert spec.quantization is not None
        bits, group = spec.quantization
        rows, cols = w.shape
        base = w.key[: -len(".weight")] if w.key.endswith(".weight") else w.key
        packed = WeightSpec(w.logical + ".q", base + ".weight", (rows, cols * bits // 32), "ui32")
        scales = WeightSpec(w.logical + ".scales", base + ".scales", (rows, cols // group))
        biases = WeightSpec(w.logical + ".biases", base + ".biases", (rows, cols // group))
        stored += [packed, scales, biases]
        func = ops.affine_dequant(rows, cols, bits, group)
        dequantized.append(_Dequantized(w.symbol, func, (packed.symbol, scales.symbol, biases.symbol)))
    return stored, dequantized


def _symbol(logical: str) -> str:
    return WeightSpec(logical, "", ()).symbol


#: The running statistics of the sub-sample convolutions' cumulative group norm, in result order (from #3).
_NORM_STATISTICS = (
    "sum_at_time",
    "cumulative_sum",
    "mean",
    "squared_at_time",
    "cumulative_squared",
    "variance",
    "stabilized_variance",
    "inverse_stddev",
)
#: The conformer block's stage outputs after its final one (#0): name, result number.
_BLOCK_STAGES = (
    ("feed_forward_start", 1),
    ("attention", 2),
    ("light_conv", 3),
    ("feed_forward_end", 4),
    ("final_norm", 0),
)


def _outputs(e: _Entry, cfg: AudioConfig, stages: bool) -> list[tuple[str, str, str]]:
    """The entry's results as (name, SSA value, type): the three products, then (stage builds) every named
    stage tensor the diagnostics compare, in the order `gemma3n.outputs` records them."""
    rows = AUDIO_SOFT_TOKENS_PER_CLIP
    outputs = [
        ("audio_features", "%result#0", tensor_type([e.b, rows, cfg.text_hidden_size], "f32")),
        ("encoder_hidden", "%result#1", tensor_type([e.b, rows, cfg.hidden_size], "f32")),
        ("valid_tokens", "%reduced#2", tensor_type([e.b], "i32")),
    ]
    if not stages:
        return outputs
    outputs.append(("mel", "%mel_valid", tensor_type([e.b, e.t, cfg.input_feat_size], "f32")))
    for i, s in enumerate(e.sscp):
        outputs.append((f"sscp_conv_{i}_convolution", f"%sscp{i}#1", s.result_types[1]))
        outputs += [
            (f"sscp_conv_{i}_norm_{stat}", f"%sscp{i}#{k + 3}", s.result_types[3])
            for k, stat in enumerate(_NORM_STATISTICS)
        ]
        outputs += [
            (f"sscp_conv_{i}_norm", f"%sscp{i}#2", s.result_types[2]),
            (f"sscp_conv_{i}", f"%sscp{i}#0", s.result_types[0]),
        ]
    outputs.append(("input_projection", "%input_projection", e.block.arg_types[0]))
    outputs += [
        (f"conformer.{layer}.{name}", f"%layer{layer}#{k}", e.block.arg_types[0])
        for layer in range(cfg.conf_num_hidden_layers)
        for name, k in _BLOCK_STAGES
    ]
    outputs.append(("encoded_reduced", "%reduced#0", e.reduction.result_types[0]))
    for path, f in (("soft", e.embed_soft), ("hard", e.embed_hard)):
        outputs += [
            (f"{path}_norm", f"%{path}#0", f.result_types[0]),
            (f"{path}_linear", f"%{path}#1", f.result_types[1]),
            (f"{path}_post_norm", f"%{path}#2", f.result_types[2]),
        ]
    return outputs


def _entry_funcs(e: _Entry) -> Sequence[Func]:
    singles = [
        e.mel_front,
        e.mask_mel,
        e.mel_boundary,
        e.input_proj,
        e.block,
        e.reduction,
        e.embed_soft,
        e.embed_hard,
        e.output,
    ]
    return [*e.valid, *e.sscp, *(f for f in singles if f is not None)]


def _build_entry(
    ops: OpEmitter, cfg: AudioConfig, layout: WeightLayout, frames: int, clips: int, mel: MelFrontEnd = HOST_MEL
) -> _Entry:
    b, t = clips, frames
    e = _Entry(EncodeEntry(frames, clips), b, t)
    if mel.on_device:
        e.mel_front = MelEmitter(ops).front(b, t, mel)
    t0, t1 = cfg.sscp_frames(t, 0), cfg.sscp_frames(t, 1)
    s0 = cfg.sscp_conv_stride_size[0][0]
    e.valid = [ops.valid_mask(b, t, 1), ops.valid_mask(b, t0, s0), ops.valid_mask(b, t1, cfg.time_stride)]
    e.mask_mel = ops.mask_frames([b, t, cfg.input_feat_size])
    e.mel_boundary = ops.mel_boundary(b, t, cfg.input_feat_size)
    freq, cin, tt = cfg.input_feat_size, 1, t
    for i, cout in enumerate(cfg.sscp_conv_channel_size):
        conv = ops.sscp_conv(
            b,
            tt,
            freq,
            cin,
            cout,
            tuple(cfg.sscp_conv_kernel_size[i]),
            tuple(cfg.sscp_conv_stride_size[i]),
            layout.conv_layout,
        )
        to, fo = cfg.sscp_frames(t, i), cfg.sscp_freq(i)
        norm = ops.cumulative_group_norm(b, to, fo, cout, cfg.sscp_conv_group_norm_eps)
        mask = ops.mask_frames([b, to, fo, cout])
        e.sscp.append(ops.sscp_block(conv, norm, mask, b, tt, freq, cin, to, fo, cout))
        freq, cin, tt = fo, cout, to
    d = cfg.hidden_size
    e.input_proj = ops.linear([b, t1], cfg.flat_sscp_width, d)
    e.block = ops.conformer_block(cfg, b, t1, layout)
    tout = -(-t1 // cfg.conf_reduction_factor)
    if tout > AUDIO_SOFT_TOKENS_PER_CLIP:
        raise BucketError(
            f"frame bucket {frames} gives {tout} audio tokens, more than the "
            f"{AUDIO_SOFT_TOKENS_PER_CLIP} a clip may have"
        )
    e.reduction = ops.reduction(b, t1, d, cfg.conf_reduction_factor)
    e.embed_soft = ops.embedder([b, tout], d, cfg.text_hidden_size, cfg.rms_norm_eps)
    e.embed_hard = ops.embedder([cfg.vocab_size], d, cfg.text_hidden_size, cfg.rms_norm_eps)
    e.output = ops.audio_output(b, tout, d, cfg.text_hidden_size, cfg.vocab_size, AUDIO_SOFT_TOKENS_PER_CLIP)
    return e
