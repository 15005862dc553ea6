"""Compose the prefill stage: merge audio into the language model's inputs, with the dense per-layer inputs.

One module, one public entry `prefill_c{capacity}_a{clips}` (emitters/entries.py) per (context capacity, clips), independent of
the audio length (the encoder stage always delivers 188 rows per clip).  Entry inputs (spec
numeric-contracts §1.2 "audio_merge_ple", §3(g) "Merge"):

* `input_ids` i32 [C]: the expanded prompt, padded with the pad id 0 past the real length;
* `text_rows` bf16 [C, hidden]: `embed_tokens[id]` for every row, gathered on the host from the
  memory-mapped checkpoint (the 262400-row table never reaches the device);
* `ple_rows` bf16 [C, layers*256]: `embed_tokens_per_layer[id']`, id' = id if 0 <= id < the per-layer
  vocabulary else 0, gathered on the host likewise (4-4.7 GB in BF16, never uploaded);
* `audio_rows` f32 [clips*188, hidden]: the encoder stage's `audio_features`, clip after clip;
* `row_map` i32 [C]: for each placeholder row the index of its audio row, -1 elsewhere (host-built,
  validated, prompt order);
* `length` i32 []: the real prompt length (rows at or past it come out zero).

Outputs: `inputs_embeds` f32 [C, hidden] and `per_layer_inputs` f32 [C, layers, 256] (the dense PLE
each decoder layer slices; transformers' `project_per_layer_inputs` result), plus `hard_table` and
`ple_projection_linear` in a diagnostics build.  Resident weights are IREE parameters bound by
checkpoint tensor name: the audio embedder's hard path (`embed_audio.embedding`, `hard_embedding_norm`,
`embedding_projection`, so the hard audio rows are computed exactly as the encoder computes its
padding row) and `per_layer_model_projection` + `per_layer_projection_norm`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ..contracts.policy import NumericContract
from ..model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP, AudioConfig
from ..model.audio_weights import HF_LAYOUT, MLX_LAYOUT, WeightLayout, WeightSpec, audio_weight_specs
from ..model.checkpoint_config import CheckpointConfig
from ..model.text_config import TextConfig
from .entries import PrefillEntry
from .lowering import DEFAULT_LOWERING, Lowering
from .ops import OpEmitter
from .render import Func, ModuleBuilder, tensor_type

PARAMETER_SCOPE = "model"
#: The fewest prompt rows one clip takes: `<start_of_audio>` + 188 placeholders + `<end_of_audio>`.
ROWS_PER_CLIP = AUDIO_SOFT_TOKENS_PER_CLIP + 2
#: Context capacities compiled on demand (the smallest that holds the prompt is used).
DEFAULT_CAPACITIES: tuple[int, ...] = (256, 512, 1024, 2048, 4096, 8192)
#: Prefix of the language-model tensors in each checkpoint layout.
TEXT_PREFIX = {HF_LAYOUT.name: "model.language_model.", MLX_LAYOUT.name: "language_model.model."}
#: The audio embedder weights the hard path reads (logical names of `model.audio_weights`).
HARD_PATH = ("embed.embedding", "embed.hard_norm", "embed.projection")


class PrefillBucketError(ValueError):
    """A requested (context capacity, clips) entry cannot be compiled."""


def text_weight_specs(text: TextConfig, layout: WeightLayout = HF_LAYOUT) -> dict[str, WeightSpec]:
    """The four language-model tensors by logical name (the first two are gathered on the host)."""
    prefix = TEXT_PREFIX[layout.name]
    p = text.ple_width
    return {
        "text.embed_tokens": WeightSpec(
            "text.embed_tokens", prefix + "embed_tokens.weight", (text.vocab_size, text.hidden_size)
        ),
        "text.embed_tokens_per_layer": WeightSpec(
            "text.embed_tokens_per_layer",
            prefix + "embed_tokens_per_layer.weight",
            (text.vocab_size_per_layer_input, p),
        ),
        "text.per_layer_model_projection": WeightSpec(
            "text.per_layer_model_projection", prefix + "per_layer_model_projection.weight", (p, text.hidden_size)
        ),
        "text.per_layer_projection_norm": WeightSpec(
            "text.per_layer_projection_norm",
            prefix + "per_layer_projection_norm.weight",
            (text.hidden_size_per_layer_input,),
        ),
    }


def resident_weight_specs(audio: AudioConfig, text: TextConfig, layout: WeightLayout = HF_LAYOUT) -> list[WeightSpec]:
    """The weights the prefill module binds as parameters (resident on the device), in module order."""
    embed = {s.logical: s for s in audio_weight_specs(audio, layout) if s.logical in HARD_PATH}
    texts = text_weight_specs(text, layout)
    return [embed[n] for n in HARD_PATH] + [
        texts["text.per_layer_model_projection"],
        texts["text.per_layer_projection_norm"],
    ]


@dataclass(frozen=True)
class PrefillModuleSpec:
    """Everything an emitted prefill module depends on (and hence its identity)."""

    audio: AudioConfig
    text: TextConfig
    contract: NumericContract
    capacities: tuple[int, ...]
    clips: tuple[int, ...] = (1,)
    layout: WeightLayout = HF_LAYOUT
    stages: bool = False
    #: the forms the target's code generation wants (emitters/lowering.py lowering_for)
    lowering: Lowering = DEFAULT_LOWERING

    def __post_init__(self) -> None:
        if not self.capacities or not self.clips:
            raise PrefillBucketError("at least one context capacity and one clip count are needed")
        if self.audio.text_hidden_size != self.text.hidden_size:
            raise PrefillBucketError(
                f"the audio embedder projects to {self.audio.text_hidden_size} but the text "
                f"model is {self.text.hidden_size} wide"
            )
        if (
            self.audio.vocab_size != self.text.audio_vocab_size
            or self.audio.vocab_offset != self.text.audio_vocab_offset
        ):
            raise PrefillBucketError("the audio and text configurations disagree about the audio vocabulary")
        for cap, clips in self.requested:
            if cap < 1 or clips < 0:
                raise PrefillBucketError(f"capacity {cap} / clips {clips}: capacity must be >= 1 and clips >= 0")
        if not self.entries:
            cap, clips = max(self.capacities), min(self.clips)
            raise PrefillBucketError(
                f"{clips} clip(s) need at least {clips * ROWS_PER_CLIP} prompt rows "
                f"(<start_of_audio> + {AUDIO_SOFT_TOKENS_PER_CLIP} placeholders + "
                f"<end_of_audio> each), more than the largest context capacity {cap}"
            )

    @property
    def requested(self) -> list[tuple[int, int]]:
        return [(cap, n) for cap in sorted(set(self.capacities)) for n in sorted(set(self.clips))]

    @property
    def entries(self) -> list[tuple[int, int]]:
        """Every requested (capacity, clips) pair that can hold its clips (the others are skipped)."""
        return [(cap, n) for cap, n in self.requested if n * ROWS_PER_CLIP <= cap]

    @property
    def entry_points(self) -> list[PrefillEntry]:
        return [PrefillEntry(cap, n) for cap, n in self.entries]

    def identity(self) -> str:
        return "|".join(
            [
                "gemma3n-prefill-module-v1",
                self.audio.identity(),
                self.text.identity(),
                self.contract.identity(),
                self.layout.name,
                "capacities=" + ",".join(map(str, sorted(set(self.capacities)))),
                "clips=" + ",".join(map(str, sorted(set(self.clips)))),
                f"stages={int(self.stages)}",
                "lowering=" + self.lowering.identity,
            ]
        )

    def digest(self) -> str:
        return hashlib.sha256(self.identity().encode()).hexdigest()


@dataclass
class _Entry:
    entry: PrefillEntry
    cap: int
    clips: int
    audio_rows: int
    hard: Func | None = None
    merge: Func | None = None
    ple: Func | None = None
    outputs: list[tuple[str, str, str]] = field(default_factory=list)  # (name, value, type)

    @property
    def name(self) -> str:
        return self.entry.symbol


def emit_prefill_module(spec: PrefillModuleSpec) -> str:
    """Render and verify the prefill module; returns MLIR text ready for `iree-compile`."""
    audio, text, contract = spec.audio, spec.text, spec.contract
    module = ModuleBuilder("gemma3n_prefill")
    ops = OpEmitter(module, contract, lowering=spec.lowering)
    weights = resident_weight_specs(audio, text, spec.layout)
    entries = []
    for cap, clips in spec.entries:
        e = _Entry(PrefillEntry(cap, clips), cap, clips, clips * AUDIO_SOFT_TOKENS_PER_CLIP)
        e.hard = ops.embedder([audio.vocab_size], audio.hidden_size, text.hidden_size, audio.rms_norm_eps)
        e.merge = ops.token_merge(cap, text.hidden_size, text.audio_vocab_size, text.audio_vocab_offset, e.audio_rows)
        e.ple = ops.dense_ple(
            cap, text.hidden_size, text.num_hidden_layers, text.hidden_size_per_layer_input, text.rms_norm_eps
        )
        e.outputs = [
            ("inputs_embeds", "%embeds", e.merge.result_types[0]),
            ("per_layer_inputs", "%ple#0", e.ple.result_types[0]),
        ]
        if spec.stages:
            e.outputs += [
                ("hard_table", "%hard#2", e.hard.result_types[2]),
                ("ple_projection_linear", "%ple#1", e.ple.result_types[1]),
            ]
        entries.append(e)
    calls = [f for e in entries for f in (e.hard, e.merge, e.ple) if f is not None]
    module.add_raw(
        "entry",
        "prefill_entry.mlir.j2",
        calls=calls,
        c=contract,
        weights=weights,
        scope=PARAMETER_SCOPE,
        entries=entries,
        h=text.hidden_size,
        p=text.ple_width,
        table_type=tensor_type([audio.vocab_size, audio.hidden_size], "bf16"),
        table_f32=tensor_type([audio.vocab_size, audio.hidden_size], "f32"),
    )
    return module.build()


def resolve_text_config(checkpoint: Path | None, config_file: Path | None, builtin: str | None) -> TextConfig:
    """The text configuration from the same single source `emitters.cli.resolve_config` reads."""
    from ..model.audio_config import ConfigError, read_json_object
    from ..model.text_config import builtin_text_config

    if checkpoint is not None:
        return CheckpointConfig.read(checkpoint).text
    if config_file is not None:
        data = read_json_object(config_file)
        if "text_config" not in data:
            raise ConfigError(f"{config_file}: the prefill stage needs a checkpoint-style config.json with text_config")
        return TextConfig.from_config_json(data, source=str(config_file))
    return builtin_text_config(builtin or "e4b")
