"""What the prefill (merge + dense per-layer embeddings) stage is specialised on: the text side of Gemma 3n.

The values come from a checkpoint's `config.json` (`text_config`, the top-level token ids and the
vision/audio vocabulary blocks; transformers' `Gemma3nTextConfig` / `Gemma3nConfig` defaults for
absent keys, spec gemma3n-audio §1.2-1.3) or from the built-in E2B/E4B values.  The vocabulary layout
is fixed by the released models: text ids [0, 262144), vision ids [262144, 262272) (`embed_vision`),
audio ids [262272, 262400) (`embed_audio`); `embed_tokens` has `vocab_size` = 262400 rows and the
per-layer table `embed_tokens_per_layer` has `vocab_size_per_layer_input` = 262144 (an id outside
[0, vocab_size_per_layer_input) reads row 0, as transformers maps it).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .audio_config import AUDIO_SOFT_TOKENS_PER_CLIP, ConfigError, config_value

# What the prefill stage's shapes depend on: never defaulted for a checkpoint.
TEXT_SHAPE_FIELDS = (
    "hidden_size",
    "num_hidden_layers",
    "hidden_size_per_layer_input",
    "vocab_size",
    "vocab_size_per_layer_input",
)


@dataclass(frozen=True)
class TextConfig:
    """Text-model shapes and the multimodal token ids the prefill stage needs."""

    hidden_size: int = 2048
    num_hidden_layers: int = 35
    hidden_size_per_layer_input: int = 256
    vocab_size: int = 262400
    vocab_size_per_layer_input: int = 262144
    rms_norm_eps: float = 1e-6
    pad_token_id: int = 0
    # top-level Gemma3nConfig ids
    audio_token_id: int = 262273  # <audio_soft_token>
    boa_token_id: int = 256000  # <start_of_audio>
    eoa_token_id: int = 262272  # <end_of_audio>
    audio_soft_tokens_per_image: int = AUDIO_SOFT_TOKENS_PER_CLIP
    # vocabulary blocks of the multimodal embedders
    vision_vocab_offset: int = 262144
    vision_vocab_size: int = 128
    audio_vocab_offset: int = 262272
    audio_vocab_size: int = 128

    def __post_init__(self) -> None:
        problems: list[str] = []
        for name in (
            "hidden_size",
            "num_hidden_layers",
            "hidden_size_per_layer_input",
            "vocab_size",
            "vocab_size_per_layer_input",
            "audio_vocab_size",
        ):
            if int(getattr(self, name)) < 1:
                problems.append(f"{name} must be positive, got {getattr(self, name)}")
        if not (math.isfinite(self.rms_norm_eps) and self.rms_norm_eps > 0):
            problems.append(f"rms_norm_eps must be a positive finite number, got {self.rms_norm_eps}")
        if self.audio_soft_tokens_per_image != AUDIO_SOFT_TOKENS_PER_CLIP:
            problems.append(
                f"audio_soft_tokens_per_image must be {AUDIO_SOFT_TOKENS_PER_CLIP} (the encoder emits "
                f"{AUDIO_SOFT_TOKENS_PER_CLIP} rows per clip), got {self.audio_soft_tokens_per_image}"
            )
        if self.audio_vocab_offset + self.audio_vocab_size != self.vocab_size:
            problems.append(
                f"the audio vocabulary [{self.audio_vocab_offset}, "
                f"{self.audio_vocab_offset + self.audio_vocab_size}) must end the text vocabulary "
                f"({self.vocab_size} ids)"
            )
        if not self.audio_vocab_offset <= self.eoa_token_id < self.vocab_size:
            problems.append(f"eoa_token_id {self.eoa_token_id} is not an audio-vocabulary id")
        if not self.audio_vocab_offset <= self.audio_token_id < self.vocab_size:
            problems.append(f"audio_token_id {self.audio_token_id} is not an audio-vocabulary id")
        if not 0 <= self.boa_token_id < self.vision_vocab_offset:
            problems.append(f"boa_token_id {self.boa_token_id} is not a text id")
        if self.vision_vocab_offset + self.vision_vocab_size > self.audio_vocab_offset:
            problems.append("the vision vocabulary overlaps the audio vocabulary")
        if problems:
            raise ConfigError("invalid text configuration:\n  - " + "\n  - ".join(problems))

    @property
    def ple_width(self) -> int:
        """Columns of `embed_tokens_per_layer` / rows of `per_layer_model_projection`: layers x 256."""
        return self.num_hidden_layers * self.hidden_size_per_layer_input

    def identity(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True, separators=(",", ":"))

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_config_json(cls, data: Mapping[str, Any], *, source: str) -> TextConfig:
        """From a parsed checkpoint `config.json` (nested transformers layout).

        The shapes (``text_config``'s widths, depth and both vocabulary sizes) must be present; what
        transformers' `Gemma3nTextConfig` / `Gemma3nConfig` default when absent (``rms_norm_eps``,
        ``pad_token_id``, the special token ids, the vision vocabulary block) is defaulted the same
        way.  A missing or mistyped value is a one-line :class:`ConfigError` naming it."""
        text = data.get("text_config")
        if not isinstance(text, Mapping):
            raise ConfigError(f"{source}: text_config is missing (expected the language model's configuration object)")
        kwargs: dict[str, Any] = {}
        for key in TEXT_SHAPE_FIELDS:
            if text.get(key) is None:
                raise ConfigError(
                    f"{source}: text_config.{key} is missing (expected an integer; the prefill "
                    f"stage's shapes depend on it, so there is no default)"
                )
            kwargs[key] = config_value(text[key], "int", f"{source}: text_config.{key}")
        for key, kind in (("rms_norm_eps", "float"), ("pad_token_id", "int")):
            if text.get(key) is not None:
                kwargs[key] = config_value(text[key], kind, f"{source}: text_config.{key}")
        kwargs.update(multimodal_fields(data, source))
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{source}: {exc}") from None


def multimodal_fields(data: Mapping[str, Any], source: str) -> dict[str, int]:
    """The multimodal token ids and vocabulary blocks present in a checkpoint's top-level `config.json`
    (`TextConfig` field name -> value; absent keys are left out, so transformers' defaults -- the class
    defaults -- apply).  A mistyped value is a one-line :class:`ConfigError` naming it."""
    out: dict[str, int] = {}
    for key in ("audio_token_id", "boa_token_id", "eoa_token_id", "audio_soft_tokens_per_image"):
        if data.get(key) is not None:
            out[key] = config_value(data[key], "int", f"{source}: {key}")
    for block, prefix in (("vision_config", "vision_vocab_"), ("audio_config", "audio_vocab_")):
        sub = data.get(block)
        if isinstance(sub, Mapping):
            for key in ("offset", "size"):
                value = sub.get("vocab_" + key)
                if value is not None:
                    out[prefix + key] = config_value(value, "int", f"{source}: {block}.vocab_{key}")
    return out


BUILTIN_TEXT_CONFIGS: dict[str, TextConfig] = {
    "e2b": TextConfig(num_hidden_layers=30),
    "e4b": TextConfig(num_hidden_layers=35),
    # the tests' tiny text model: real token ids and vocabulary, tiny width, 2 layers, a small per-layer table
    "tiny": TextConfig(hidden_size=48, num_hidden_layers=2, vocab_size_per_layer_input=512),
}


def builtin_text_config(name: str) -> TextConfig:
    try:
        return BUILTIN_TEXT_CONFIGS[name]
    except KeyError:
        raise ConfigError(
            f"unknown built-in text configuration {name!r}; choose one of {sorted(BUILTIN_TEXT_CONFIGS)}"
        ) from None
