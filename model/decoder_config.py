"""What the text decoder (Gemma 3n's language model) is specialised on: every field its graph depends on.

`DecoderConfig` extends the prefill stage's `TextConfig` (embedding widths, vocabularies, eps and the
multimodal token ids, one parse of the same `config.json`) with the decoder layers' fields
(spec gemma3n-text §1.1-1.3): widths and heads, per-layer MLP widths, layer types and sliding window,
RoPE thetas, AltUp, LAuReL, KV sharing, activation sparsity, the final soft-cap and the stop ids.

Parsing a checkpoint's `config.json` (`text_config` block) is strict:

* the fields that decide tensor shapes or which weights exist must be present and well typed
  (`REQUIRED_TEXT_FIELDS`); a missing or mistyped one is a one-line `ConfigError` naming it;
* the others take transformers' own `Gemma3nTextConfig` defaults when absent (`DEFAULTED_TEXT_FIELDS`
  lists each with its default): `rms_norm_eps` 1e-6, `layer_types` (full attention every 5th layer),
  `activation_sparsity_pattern` (0.95 for the first 10 layers of a model with more than 10), the RoPE
  thetas 1e4 (sliding) / 1e6 (full), `final_logit_softcapping` 30, `altup_active_idx` 0,
  `altup_coef_clip` 120, `altup_correct_scale` true, `max_position_embeddings` 32768, `bos_token_id` 2,
  `eos_token_id` 1 (the top-level `eos_token_id`, e.g. `[1, 106]` of the instruction-tuned models,
  takes precedence), `hidden_activation` gelu_pytorch_tanh and `attention_bias` false (the only values
  the decoder implements: anything else is refused, as is a RoPE type other than "default").
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .audio_config import ConfigError
from .text_config import TextConfig, multimodal_fields

SLIDING = "sliding_attention"
FULL = "full_attention"
LAYER_TYPES = (SLIDING, FULL)

#: text_config keys that decide tensor shapes or which weights exist: never defaulted.
REQUIRED_TEXT_FIELDS = (
    "hidden_size",
    "num_hidden_layers",
    "intermediate_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "vocab_size_per_layer_input",
    "hidden_size_per_layer_input",
    "num_kv_shared_layers",
    "laurel_rank",
    "altup_num_inputs",
    "sliding_window",
)
#: text_config keys with transformers' `Gemma3nTextConfig` default (value, or a rule of the layer count).
DEFAULTED_TEXT_FIELDS: dict[str, str] = {
    "rms_norm_eps": "1e-6",
    "layer_types": "full_attention for layers i with (i + 1) % 5 == 0, sliding_attention otherwise",
    "activation_sparsity_pattern": "0.95 for the first 10 layers when there are more than 10, else 0.0",
    "rope_parameters": "sliding_attention theta 10000, full_attention theta 1000000 (legacy keys "
    "rope_local_base_freq / rope_theta accepted)",
    "final_logit_softcapping": "30.0 (null: no soft-cap)",
    "altup_active_idx": "0",
    "altup_coef_clip": "120.0",
    "altup_correct_scale": "true",
    "max_position_embeddings": "32768",
    "pad_token_id": "0",
    "bos_token_id": "2",
    "eos_token_id": "1 (the top-level eos_token_id takes precedence)",
    "hidden_activation": "gelu_pytorch_tanh (the only one implemented)",
    "attention_bias": "false (the only one implemented)",
}


def default_layer_types(layers: int) -> tuple[str, ...]:
    """transformers' default: every fifth layer is a full-attention layer."""
    return tuple(FULL if (i + 1) % 5 == 0 else SLIDING for i in range(layers))


def default_sparsity(layers: int) -> tuple[float, ...]:
    """transformers' default: Gaussian top-k (0.95) in the first 10 layers of a model with more than 10."""
    sparse = 10 if layers > 10 else 0
    return (0.95,) * sparse + (0.0,) * (layers - sparse)


@dataclass(frozen=True)
class DecoderConfig(TextConfig):
    """The whole text model: the prefill stage's `TextConfig` plus the decoder layers (E4B defaults)."""

    intermediate_sizes: tuple[int, ...] = (16384,) * 35
    num_attention_heads: int = 8
    num_key_value_heads: int = 2
    head_dim: int = 256
    layer_types: tuple[str, ...] = default_layer_types(35)
    sliding_window: int = 512
    rope_theta_sliding: float = 10000.0
    rope_theta_full: float = 1000000.0
    max_position_embeddings: int = 32768
    altup_num_inputs: int = 4
    altup_active_idx: int = 0
    #: clip of the AltUp coefficient weights; MLX applies it at inference, transformers only in training
    altup_coef_clip: float | None = 120.0
    altup_correct_scale: bool = True
    laurel_rank: int = 64
    num_kv_shared_layers: int = 15
    activation_sparsity: tuple[float, ...] = default_sparsity(35)
    final_logit_softcapping: float | None = 30.0
    bos_token_id: int = 2
    eos_token_ids: tuple[int, ...] = (1,)

    def __post_init__(self) -> None:
        super().__post_init__()
        layers = self.num_hidden_layers
        problems: list[str] = []
        for name in (
            "num_attention_heads",
            "num_key_value_heads",
            "head_dim",
            "sliding_window",
            "max_position_embeddings",
            "altup_num_inputs",
            "laurel_rank",
        ):
            if int(getattr(self, name)) < 1:
                problems.append(f"{name} must be positive, got {getattr(self, name)}")
        if self.num_key_value_heads >= 1 and self.num_attention_heads % self.num_key_value_heads:
            problems.append(
                f"num_attention_heads ({self.num_attention_heads}) must be a multiple of "
                f"num_key_value_heads ({self.num_key_value_heads})"
            )
        for name in ("intermediate_sizes", "layer_types", "activation_sparsity"):
            if len(getattr(self, name)) != layers:
                problems.append(f"{name} needs one value per layer ({layers}), got {len(getattr(self, name))}")
        if any(int(w) < 1 for w in self.intermediate_sizes):
            problems.append(f"intermediate_sizes must be positive, got {list(self.intermediate_sizes)}")
        if any(t not in LAYER_TYPES for t in self.layer_types):
            problems.append(f"layer_types must be {SLIDING!r} or {FULL!r}, got {sorted(set(self.layer_types))}")
        if any(not 0.0 <= s < 1.0 for s in self.activation_sparsity):
            problems.append(f"activation_sparsity values must be in [0, 1), got {list(self.activation_sparsity)}")
        if not 0 <= self.num_kv_shared_layers < layers:
            problems.append(f"num_kv_shared_layers must be in [0, {layers}), got {self.num_kv_shared_layers}")
        elif self.num_kv_shared_layers:
            owning = set(self.layer_types[: self.first_kv_shared_layer])
            orphans = sorted(set(self.layer_types) - owning)
            if orphans:
                problems.append(
                    f"layers of type {orphans} share K/V but no layer of that type below "
                    f"layer {self.first_kv_shared_layer} produces it"
                )
        if not 0 <= self.altup_active_idx < self.altup_num_inputs:
            problems.append(f"altup_active_idx must be in [0, {self.altup_num_inputs}), got {self.altup_active_idx}")
        for name in ("rope_theta_sliding", "rope_theta_full"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) > 1.0):
                problems.append(f"{name} must be a finite number above 1, got {getattr(self, name)}")
        for name in ("altup_coef_clip", "final_logit_softcapping"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                problems.append(f"{name} must be a positive finite number or null, got {value}")
        if not self.eos_token_ids:
            problems.append("eos_token_ids must name at least one stop token")
        for name, ids in (("bos_token_id", (self.bos_token_id,)), ("eos_token_ids", self.eos_token_ids)):
            if any(not 0 <= i < self.vocab_size for i in ids):
                problems.append(f"{name} {list(ids)} outside the vocabulary [0, {self.vocab_size})")
        if problems:
            raise ConfigError("invalid decoder configuration:\n  - " + "\n  - ".join(problems))

    # ------------------------------------------------------------------ derived
    @property
    def first_kv_shared_layer(self) -> int:
        """Layers from here on reuse another layer's K/V (no k/v projections, no cache of their own)."""
        return self.num_hidden_layers - self.num_kv_shared_layers

    @property
    def kv_groups(self) -> int:
        """Query heads per K/V head (query head h reads K/V head h // kv_groups)."""
        return self.num_attention_heads // self.num_key_value_heads

    @property
    def q_width(self) -> int:
        return self.num_attention_heads * self.head_dim

    @property
    def kv_width(self) -> int:
        return self.num_key_value_heads * self.head_dim

    def is_sliding(self, layer: int) -> bool:
        return self.layer_types[layer] == SLIDING

    def owns_kv(self, layer: int) -> bool:
        return layer < self.first_kv_shared_layer

    @property
    def kv_store_layers(self) -> dict[str, int]:
        """Layer type -> the layer whose K/V the shared layers of that type reuse: the last layer of that type
        below `first_kv_shared_layer` (transformers' "store" layers; spec §1.2).  Empty without sharing."""
        if not self.num_kv_shared_layers:
            return {}
        owning = self.layer_types[: self.first_kv_shared_layer]
        return {t: max(i for i, u in enumerate(owning) if u == t) for t in sorted(set(self.layer_types))}

    @property
    def kv_producers(self) -> tuple[int, ...]:
        """For every layer, the layer whose K/V it attends over (itself when it owns them)."""
        stores = self.kv_store_layers
        return tuple(
            layer if self.owns_kv(layer) else stores[self.layer_types[layer]] for layer in range(self.num_hidden_layers)
        )

    def identity(self) -> str:
        return "gemma3n-text-decoder-v1:" + json.dumps(dataclasses.asdict(self), sort_keys=True, separators=(",", ":"))

    # ------------------------------------------------------------------ config.json
    def to_config_json(self) -> dict[str, Any]:
        """The nested transformers `config.json` (Gemma3nConfig layout) this configuration parses from."""
        text = {
            "model_type": "gemma3n_text",
            "hidden_size": self.hidden_size,
            "num_hidden_layers": self.num_hidden_layers,
            "intermediate_size": list(self.intermediate_sizes),
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "head_dim": self.head_dim,
            "vocab_size": self.vocab_size,
            "vocab_size_per_layer_input": self.vocab_size_per_layer_input,
            "hidden_size_per_layer_input": self.hidden_size_per_layer_input,
            "num_kv_shared_layers": self.num_kv_shared_layers,
            "laurel_rank": self.laurel_rank,
            "altup_num_inputs": self.altup_num_inputs,
            "altup_active_idx": self.altup_active_idx,
            "altup_coef_clip": self.altup_coef_clip,
            "altup_correct_scale": self.altup_correct_scale,
            "sliding_window": self.sliding_window,
            "layer_types": list(self.layer_types),
            "activation_sparsity_pattern": list(self.activation_sparsity),
            "rope_parameters": {
                SLIDING: {"rope_type": "default", "rope_theta": self.rope_theta_sliding},
                FULL: {"rope_type": "default", "rope_theta": self.rope_theta_full},
            },
            "max_position_embeddings": self.max_position_embeddings,
            "rms_norm_eps": self.rms_norm_eps,
            "final_logit_softcapping": self.final_logit_softcapping,
            "hidden_activation": "gelu_pytorch_tanh",
            "attention_bias": False,
            "pad_token_id": self.pad_token_id,
            "bos_token_id": self.bos_token_id,
            "eos_token_id": list(self.eos_token_ids),
        }
        return {
            "model_type": "gemma3n",
            "architectures": ["Gemma3nForConditionalGeneration"],
            "text_config": text,
            "audio_token_id": self.audio_token_id,
            "boa_token_id": self.boa_token_id,
            "eoa_token_id": self.eoa_token_id,
            "audio_soft_tokens_per_image": self.audio_soft_tokens_per_image,
            "eos_token_id": list(self.eos_token_ids),
            "vision_config": {
                "model_type": "gemma3n_vision",
                "vocab_offset": self.vision_vocab_offset,
                "vocab_size": self.vision_vocab_size,
            },
            "audio_config": {
                "model_type": "gemma3n_audio",
                "vocab_offset": self.audio_vocab_offset,
                "vocab_size": self.audio_vocab_size,
            },
        }

    @classmethod
    def from_config_json(cls, data: Mapping[str, Any], *, source: str) -> DecoderConfig:
        """From a parsed checkpoint `config.json` (nested transformers layout), strictly (module docstring)."""
        text = data.get("text_config")
        if not isinstance(text, Mapping):
            raise ConfigError(
                f"{source}: text_config is missing (the decoder needs the language model's configuration)"
            )
        f = _Fields(text, f"{source}: text_config")
        layers = f.integer("num_hidden_layers")
        widths = f.integer_or_list("intermediate_size", layers)
        layer_types = f.string_list("layer_types", layers, default=default_layer_types(layers), allowed=LAYER_TYPES)
        sparsity = f.number_list("activation_sparsity_pattern", layers, default=default_sparsity(layers))
        sliding_theta, full_theta = f.rope_thetas()
        f.only_value("hidden_activation", "gelu_pytorch_tanh")
        f.only_value("attention_bias", False)
        eos = data.get("eos_token_id") if data.get("eos_token_id") is not None else text.get("eos_token_id", 1)
        eos_ids = _Fields({"eos_token_id": eos}, source).integer_or_list("eos_token_id", None)
        kwargs: dict[str, Any] = dict(
            hidden_size=f.integer("hidden_size"),
            num_hidden_layers=layers,
            hidden_size_per_layer_input=f.integer("hidden_size_per_layer_input"),
            vocab_size=f.integer("vocab_size"),
            vocab_size_per_layer_input=f.integer("vocab_size_per_layer_input"),
            rms_norm_eps=f.number("rms_norm_eps", default=1e-6),
            pad_token_id=f.integer("pad_token_id", default=0),
            intermediate_sizes=tuple(widths),
            num_attention_heads=f.integer("num_attention_heads"),
            num_key_value_heads=f.integer("num_key_value_heads"),
            head_dim=f.integer("head_dim"),
            layer_types=tuple(layer_types),
            sliding_window=f.integer("sliding_window"),
            rope_theta_sliding=sliding_theta,
            rope_theta_full=full_theta,
            max_position_embeddings=f.integer("max_position_embeddings", default=32768),
            altup_num_inputs=f.integer("altup_num_inputs"),
            altup_active_idx=f.integer("altup_active_idx", default=0),
            altup_coef_clip=f.number("altup_coef_clip", default=120.0, nullable=True),
            altup_correct_scale=f.boolean("altup_correct_scale", default=True),
            laurel_rank=f.integer("laurel_rank"),
            num_kv_shared_layers=f.integer("num_kv_shared_layers"),
            activation_sparsity=tuple(sparsity),
            final_logit_softcapping=f.number("final_logit_softcapping", default=30.0, nullable=True),
            bos_token_id=f.integer("bos_token_id", default=2),
            eos_token_ids=tuple(eos_ids),
        )
        multimodal = multimodal_fields(data, source)
        try:
            return cls(**kwargs, **multimodal)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None


_MISSING = object()


class _Fields:
    """Typed, named reads of one config block: every error is one line naming `where.key`."""

    def __init__(self, block: Mapping[str, Any], where: str) -> None:
        self.block, self.where = block, where

    def _get(self, key: str, default: Any) -> Any:
        """The raw value, or `default` when the key is absent (a missing required key is an error; an explicit
        null is left to the typed reader, which refuses it unless the field is nullable)."""
        if key not in self.block:
            if default is _MISSING:
                raise ConfigError(f"{self.where}.{key} is missing (the decoder's shapes depend on it)")
            return default
        return self.block[key]

    def _fail(self, key: str, expected: str, value: Any) -> ConfigError:
        return ConfigError(f"{self.where}.{key} must be {expected}, got {value!r}")

    def integer(self, key: str, default: Any = _MISSING) -> int:
        value = self._get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._fail(key, "an integer", value)
        return value

    def number(self, key: str, default: Any = _MISSING, nullable: bool = False) -> float | None:
        value = self._get(key, default)
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self._fail(key, "a finite number" + (" or null" if nullable else ""), value)
        return float(value)

    def boolean(self, key: str, default: Any = _MISSING) -> bool:
        value = self._get(key, default)
        if not isinstance(value, bool):
            raise self._fail(key, "true or false", value)
        return value

    def integer_or_list(self, key: str, length: int | None) -> list[int]:
        """An integer (the same for every layer) or a list of integers (one per layer when `length` is given)."""
        value = self._get(key, _MISSING)
        if isinstance(value, int) and not isinstance(value, bool):
            return [value] * (length if length is not None else 1)
        if (
            not isinstance(value, list)
            or not value
            or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
        ):
            raise self._fail(key, "an integer or a list of integers", value)
        if length is not None and len(value) != length:
            raise self._fail(key, f"one value per layer ({length})", value)
        return list(value)

    def _list(self, key: str, length: int, default: tuple, ok: Callable[[Any], bool], expected: str) -> list:
        value = self._get(key, default)
        if isinstance(value, tuple):
            return list(value)
        if not isinstance(value, list) or any(not ok(v) for v in value):
            raise self._fail(key, expected, value)
        if len(value) != length:
            raise self._fail(key, f"a list with one value per layer ({length})", value)
        return value

    def string_list(self, key: str, length: int, default: tuple, allowed: tuple[str, ...]) -> list[str]:
        return self._list(key, length, default, lambda v: v in allowed, f"a list of {list(allowed)}")

    def number_list(self, key: str, length: int, default: tuple) -> list[float]:
        values = self._list(
            key,
            length,
            default,
            lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
            "a list of numbers",
        )
        return [float(v) for v in values]

    def only_value(self, key: str, supported: Any) -> None:
        value = self.block.get(key, supported)
        if value != supported or type(value) is not type(supported):
            raise self._fail(key, f"{supported!r} (the only value the decoder implements)", value)

    def rope_thetas(self) -> tuple[float, float]:
        """(sliding, full) RoPE theta from `rope_parameters` or the legacy `rope_local_base_freq` /
        `rope_theta` / `rope_scaling` keys; only the unscaled ("default") RoPE is implemented."""
        params = self.block.get("rope_parameters")
        scaling = self.block.get("rope_scaling")
        if scaling is not None:
            raise self._fail("rope_scaling", "null (RoPE scaling is not implemented)", scaling)
        legacy = {SLIDING: self.block.get("rope_local_base_freq", 10000.0), FULL: self.block.get("rope_theta", 1e6)}
        thetas = []
        for kind in (SLIDING, FULL):
            theta: Any = legacy[kind]
            where = "rope_local_base_freq" if kind == SLIDING else "rope_theta"
            if params is not None:
                if not isinstance(params, Mapping):
                    raise self._fail("rope_parameters", "an object keyed by layer type", params)
                entry = params.get(kind, {})
                if not isinstance(entry, Mapping):
                    raise self._fail(f"rope_parameters.{kind}", "an object", entry)
                if entry.get("rope_type", "default") != "default":
                    raise self._fail(
                        f"rope_parameters.{kind}.rope_type",
                        "'default' (RoPE scaling is not implemented)",
                        entry.get("rope_type"),
                    )
                theta = entry.get("rope_theta", theta)
                where = f"rope_parameters.{kind}.rope_theta"
            if isinstance(theta, bool) or not isinstance(theta, (int, float)):
                raise self._fail(where, "a number", theta)
            thetas.append(float(theta))
        return thetas[0], thetas[1]


def _e2b_e4b(layers: int, width: int, shared: int) -> DecoderConfig:
    return DecoderConfig(
        num_hidden_layers=layers,
        intermediate_sizes=(width,) * layers,
        layer_types=default_layer_types(layers),
        activation_sparsity=default_sparsity(layers),
        num_kv_shared_layers=shared,
        eos_token_ids=(1, 106),
    )


#: The tests' tiny decoder (spec gemma3n-text §11.1, with the prefill stage's tiny text side): both layer
#: types (s s s s F twice), KV sharing (layers 5-9 reuse layer 3's / layer 4's K/V), sparse (0-2) and
#: dense layers, per-layer MLP widths 96 / 128, 4 AltUp streams, a window of 6 positions, grouped K/V heads
#: (4 query heads on 2), hidden 48 as the tiny audio tower's `text_hidden_size`, and the real vocabulary
#: and token ids (so prompts from the test tokenizer and audio placeholders fit) with a per-layer table of
#: 512 rows (ids from 512 on read its row 0).
TINY_DECODER = DecoderConfig(
    hidden_size=48,
    num_hidden_layers=10,
    hidden_size_per_layer_input=16,
    vocab_size_per_layer_input=512,
    intermediate_sizes=(96, 128) * 5,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    layer_types=default_layer_types(10),
    sliding_window=6,
    max_position_embeddings=256,
    laurel_rank=4,
    num_kv_shared_layers=5,
    activation_sparsity=(0.95,) * 3 + (0.0,) * 7,
    eos_token_ids=(1, 106),
)

BUILTIN_DECODER_CONFIGS: dict[str, DecoderConfig] = {
    "e2b": _e2b_e4b(30, 8192, 10),
    "e4b": _e2b_e4b(35, 16384, 15),
    "tiny": TINY_DECODER,
}


def builtin_decoder_config(name: str) -> DecoderConfig:
    try:
        return BUILTIN_DECODER_CONFIGS[name]
    except KeyError:
        raise ConfigError(
            f"unknown built-in decoder configuration {name!r}; choose one of {sorted(BUILTIN_DECODER_CONFIGS)}"
        ) from None
