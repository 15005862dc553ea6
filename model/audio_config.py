"""Gemma 3n audio configuration: what shapes and constants the emitted graph is specialised on.

The emitter needs no weights, only this configuration.  It comes from a checkpoint's `config.json`
(the `audio_config` block plus the text hidden size), from a flat JSON file with the same field names,
or from the built-in E2B/E4B values (the released models use `Gemma3nAudioConfig()` defaults).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Frame buckets (mel frames) an artifact is specialised on.  2997 frames = 30 s, the longest clip the
# feature extractor produces; smaller buckets make short clips cheap.
DEFAULT_FRAME_BUCKETS: tuple[int, ...] = (256, 1024, 2997)
MAX_CLIP_FRAMES = 2997
AUDIO_SOFT_TOKENS_PER_CLIP = 188


class ConfigError(ValueError):
    """A configuration value is missing, malformed or outside what the templates support."""


def read_json_object(path: str | Path) -> dict[str, Any]:
    """A JSON file holding one object; every failure is one `ConfigError` naming the file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_json_object(raw, path)


def parse_json_object(raw: bytes, path: str | Path) -> dict[str, Any]:
    """The JSON object in `raw` (the bytes of `path`, which errors name)."""
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return data


@dataclass(frozen=True)
class AudioConfig:
    """The audio tower + audio embedder configuration (HF `Gemma3nAudioConfig` field names)."""

    hidden_size: int = 1536
    input_feat_size: int = 128
    conf_num_attention_heads: int = 8
    conf_num_hidden_layers: int = 12
    conf_attention_chunk_size: int = 12
    conf_attention_context_left: int = 13
    conf_attention_context_right: int = 0
    conf_attention_logit_cap: float = 50.0
    conf_conv_kernel_size: int = 5
    conf_reduction_factor: int = 4
    conf_residual_weight: float = 0.5
    sscp_conv_channel_size: tuple[int, int] = (128, 32)
    sscp_conv_group_norm_eps: float = 1e-3
    sscp_conv_kernel_size: tuple[tuple[int, int], tuple[int, int]] = ((3, 3), (3, 3))
    sscp_conv_stride_size: tuple[tuple[int, int], tuple[int, int]] = ((2, 2), (2, 2))
    rms_norm_eps: float = 1e-6
    gradient_clipping: float = 1e10
    vocab_size: int = 128
    vocab_offset: int = 262272
    text_hidden_size: int = 2048

    def __post_init__(self) -> None:
        self.validate()

    # ------------------------------------------------------------------ derived shapes
    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.conf_num_attention_heads

    @property
    def ffw_hidden(self) -> int:
        return 4 * self.hidden_size

    @property
    def max_past(self) -> int:
        return self.conf_attention_context_left - 1

    @property
    def context_size(self) -> int:
        return self.conf_attention_chunk_size + self.max_past + self.conf_attention_context_right

    def sscp_freq(self, stage: int) -> int:
        """Frequency width after SSCP conv `stage` (pad 1/1, kernel kf, stride sf)."""
        f = self.input_feat_size
        for i in range(stage + 1):
            kf, sf = self.sscp_conv_kernel_size[i][1], self.sscp_conv_stride_size[i][1]
            f = (f + 2 - kf) // sf + 1
        return f

    def sscp_frames(self, frames: int, stage: int) -> int:
        """Time length after SSCP conv `stage`: end padding kt-1 keeps ceil(T / stride)."""
        t = frames
        for i in range(stage + 1):
            kt, st = self.sscp_conv_kernel_size[i][0], self.sscp_conv_stride_size[i][0]
            t = (t + kt - 1 - kt) // st + 1
        return t

    def encoder_frames(self, frames: int) -> int:
        return self.sscp_frames(frames, 1)

    def output_tokens(self, frames: int) -> int:
        return math.ceil(self.encoder_frames(frames) / self.conf_reduction_factor)

    @property
    def time_stride(self) -> int:
        return self.sscp_conv_stride_size[0][0] * self.sscp_conv_stride_size[1][0]

    @property
    def flat_sscp_width(self) -> int:
        return self.sscp_freq(1) * self.sscp_conv_channel_size[1]

    # ------------------------------------------------------------------ validation / identity
    def validate(self) -> None:
        problems: list[str] = []
        if self.hidden_size % self.conf_num_attention_heads:
            problems.append(
                f"hidden_size {self.hidden_size} is not divisible by conf_num_attention_heads "
                f"{self.conf_num_attention_heads}"
            )
        if self.conf_attention_context_right != 0:
            problems.append(
                "conf_attention_context_right must be 0 (the released models' causal attention); "
                f"got {self.conf_attention_context_right}"
            )
        if self.conf_attention_context_left < 1:
            problems.append(f"conf_attention_context_left must be >= 1, got {self.conf_attention_context_left}")
        if (
            len(self.sscp_conv_channel_size) != 2
            or len(self.sscp_conv_kernel_size) != 2
            or len(self.sscp_conv_stride_size) != 2
        ):
            problems.append("the subsampling front end has exactly 2 convolution stages")
        for name in (
            "hidden_size",
            "input_feat_size",
            "conf_num_hidden_layers",
            "conf_attention_chunk_size",
            "conf_conv_kernel_size",
            "conf_reduction_factor",
            "vocab_size",
            "text_hidden_size",
        ):
            if int(getattr(self, name)) < 1:
                problems.append(f"{name} must be positive, got {getattr(self, name)}")
        for name in (
            "conf_attention_logit_cap",
            "sscp_conv_group_norm_eps",
            "rms_norm_eps",
            "gradient_clipping",
            "conf_residual_weight",
        ):
            v = float(getattr(self, name))
            if not math.isfinite(v) or v <= 0:
                problems.append(f"{name} must be a positive finite number, got {v}")
        if problems:
            raise ConfigError("invalid audio configuration:\n  - " + "\n  - ".join(problems))

    def identity(self) -> str:
        """A canonical string of every value the graph depends on (part of every artifact's identity)."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True, separators=(",", ":"))

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_mapping(
        cls, values: Mapping[str, Any], *, source: str, where: str = "", overrides: bool = False
    ) -> AudioConfig:
        """From config values by field name, each type-checked; keys that are not fields (``model_type``,
        ``torch_dtype`` ...) are ignored.  A field the graph's shapes depend on must be present (see
        :data:`AUDIO_DEFAULTABLE`) unless `overrides` (a flat file of changes to the built-in E4B values).
        `where` prefixes field names in messages (``audio_config.``)."""
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name in values:
                kwargs[f.name] = config_value(values[f.name], str(f.type), f"{source}: {where}{f.name}")
            elif f.name not in AUDIO_DEFAULTABLE and not overrides:
                raise ConfigError(
                    f"{source}: {where}{f.name} is missing (expected {_EXPECTED[str(f.type)]}; the "
                    f"graph's shapes depend on it, so there is no default)"
                )
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{source}: {exc}") from exc

    @classmethod
    def from_json_file(cls, path: str | Path) -> AudioConfig:
        """Read a checkpoint `config.json` (nested `audio_config`/`text_config`: every shape present) or a
        flat JSON file of fields (``text_hidden_size`` included) that change the built-in E4B values."""
        data = read_json_object(path)
        if "audio_config" not in data and "text_config" not in data and "model_type" not in data:
            return cls.from_mapping(data, source=str(path), overrides=True)
        return cls.from_config_json(data, source=str(path))

    @classmethod
    def from_config_json(cls, data: Mapping[str, Any], *, source: str) -> AudioConfig:
        """From a parsed checkpoint `config.json` (nested `audio_config` + `text_config.hidden_size`)."""
        if "audio_config" not in data:
            raise ConfigError(
                f"{source}: audio_config is missing (expected the audio tower's configuration object, "
                f"as in every Gemma 3n checkpoint's config.json)"
            )
        audio = data["audio_config"]
        if not isinstance(audio, dict):
            raise ConfigError(f"{source}: audio_config must be an object, got {_describe(audio)}")
        model_type = audio.get("model_type", "gemma3n_audio")
        if model_type != "gemma3n_audio":
            raise ConfigError(f"{source}: audio_config.model_type is {model_type!r}, expected 'gemma3n_audio'")
        text = data.get("text_config")
        if not isinstance(text, dict) or "hidden_size" not in text:
            raise ConfigError(
                f"{source}: text_config.hidden_size is missing (expected a positive integer: the width "
                f"the audio embedder projects to)"
            )
        values = {k: v for k, v in audio.items() if k != "text_hidden_size"}
        values["text_hidden_size"] = config_value(text["hidden_size"], "int", f"{source}: text_config.hidden_size")
        return cls.from_mapping(values, source=source, where="audio_config.")


# What transformers' Gemma3nAudioConfig defaults when a checkpoint's config.json omits it, and this
# loader defaults the same way: numeric constants of the graph, none of them a shape (every released
# config.json lists them anyway).  Everything else -- widths, depths, kernel and stride sizes, the
# chunking, the vocabulary block, the text width -- must be present: a checkpoint's shapes are never
# guessed from the built-in E4B values.
AUDIO_DEFAULTABLE = frozenset(
    {
        "conf_attention_logit_cap",
        "conf_residual_weight",
        "sscp_conv_group_norm_eps",
        "rms_norm_eps",
        "gradient_clipping",
    }
)

_EXPECTED = {
    "int": "an integer",
    "float": "a number",
    "tuple[int, int]": "a list of 2 integers",
    "tuple[tuple[int, int], tuple[int, int]]": "a list of 2 lists of 2 integers",
}


def _describe(value: Any) -> str:
    return (
        f"{type(value).__name__} {json.dumps(value)}"
        if not isinstance(value, (dict, list))
        else f"{'an object' if isinstance(value, dict) else 'a list'} {json.dumps(value)[:60]}"
    )


def config_value(value: Any, kind: str, what: str) -> Any:
    """`value` as `kind` ("int", "float", or the tuple types of AudioConfig), or a one-line ConfigError
    naming `what` (strings, booleans and fractional numbers are never converted)."""

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    if kind == "int" and is_int(value):
        return value
    if kind == "float" and (is_int(value) or isinstance(value, float)):
        return float(value)
    pair = (list, tuple)
    if kind == "tuple[int, int]" and isinstance(value, pair) and len(value) == 2 and all(map(is_int, value)):
        return tuple(value)
    if (
        kind == "tuple[tuple[int, int], tuple[int, int]]"
        and isinstance(value, pair)
        and len(value) == 2
        and all(isinstance(p, pair) and len(p) == 2 and all(map(is_int, p)) for p in value)
    ):
        return tuple(tuple(p) for p in value)
    raise ConfigError(f"{what} must be {_EXPECTED[kind]}, got {_describe(value)}")


BUILTIN_CONFIGS: dict[str, AudioConfig] = {
    # E2B and E4B share the audio tower and the 2048-wide text hidden size (spec §1.1-1.2).
    "e2b": AudioConfig(),
    "e4b": AudioConfig(),
    # A tiny configuration with the real structure, for tests and quick checks.
    "tiny": AudioConfig(
        hidden_size=64,
        conf_num_attention_heads=2,
        conf_num_hidden_layers=2,
        sscp_conv_channel_size=(8, 4),
        text_hidden_size=48,
    ),
}


def builtin_config(name: str) -> AudioConfig:
    try:
        return BUILTIN_CONFIGS[name]
    except KeyError:
        raise ConfigError(f"unknown built-in configuration {name!r}; choose one of {sorted(BUILTIN_CONFIGS)}") from None
