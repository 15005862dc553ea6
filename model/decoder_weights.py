"""The text decoder's weights: logical names, checkpoint tensor names and shapes (spec gemma3n-text §8.1).

A logical name is the tensor's name inside the language model without the layout prefix and without the
trailing `.weight` (`layers.3.self_attn.q_proj`, `layers.3.altup.correct_output_scale`, `embed_tokens`), so
the checkpoint key is `<prefix><logical>.weight` (`correct_output_scale` is a bare parameter) with the
prefix of the layout (`model.language_model.` for transformers, `language_model.model.` for mlx-vlm).
Shared-KV layers (from `first_kv_shared_layer` on) have no `k_proj`, `v_proj` or `k_norm` here: the decoder
never reads them (released checkpoints may still carry them; a loader ignores them, as transformers does).
`v_norm` has no weight.  The LM head is `embed_tokens` (tied).
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np

from ..emitters.prefill import TEXT_PREFIX
from .audio_weights import HF_LAYOUT, WeightLayout, WeightSpec
from .decoder_config import DecoderConfig

#: Read on the host only (one row per token is gathered; the table never reaches the device).
HOST_TABLES = frozenset({"embed_tokens_per_layer"})
#: Parameters stored without a `.weight` suffix.
BARE_PARAMETERS = ("altup.correct_output_scale",)


def _spec(prefix: str, logical: str, shape: tuple[int, ...]) -> WeightSpec:
    suffix = "" if logical.endswith(BARE_PARAMETERS) else ".weight"
    return WeightSpec(logical, prefix + logical + suffix, shape)


def layer_weight_names(cfg: DecoderConfig, layer: int) -> list[str]:
    """The logical names of one decoder layer's weights, in checkpoint order."""
    at = f"layers.{layer}."
    attention = ["self_attn.q_proj", "self_attn.q_norm"]
    if cfg.owns_kv(layer):
        attention += ["self_attn.k_proj", "self_attn.v_proj", "self_attn.k_norm"]
    names = attention + [
        "self_attn.o_proj",
        "mlp.gate_proj",
        "mlp.up_proj",
        "mlp.down_proj",
        "input_layernorm",
        "post_attention_layernorm",
        "pre_feedforward_layernorm",
        "post_feedforward_layernorm",
        "altup.correct_output_scale",
        "altup.correction_coefs",
        "altup.prediction_coefs",
        "altup.modality_router",
        "altup.router_norm",
        "laurel.linear_left",
        "laurel.linear_right",
        "laurel.post_laurel_norm",
        "per_layer_input_gate",
        "per_layer_projection",
        "post_per_layer_input_norm",
    ]
    return [at + n for n in names]


def _layer_shape(cfg: DecoderConfig, layer: int, name: str) -> tuple[int, ...]:
    d, n, p = cfg.hidden_size, cfg.altup_num_inputs, cfg.hidden_size_per_layer_input
    f = cfg.intermediate_sizes[layer]
    return {
        "self_attn.q_proj": (cfg.q_width, d),
        "self_attn.k_proj": (cfg.kv_width, d),
        "self_attn.v_proj": (cfg.kv_width, d),
        "self_attn.o_proj": (d, cfg.q_width),
        "self_attn.q_norm": (cfg.head_dim,),
        "self_attn.k_norm": (cfg.head_dim,),
        "mlp.gate_proj": (f, d),
        "mlp.up_proj": (f, d),
        "mlp.down_proj": (d, f),
        "altup.correction_coefs": (n, n),
        "altup.prediction_coefs": (n * n, n),
        "altup.modality_router": (n, d),
        "laurel.linear_left": (cfg.laurel_rank, d),
        "laurel.linear_right": (d, cfg.laurel_rank),
        "per_layer_input_gate": (p, d),
        "per_layer_projection": (d, p),
    }.get(name, (d,))


def decoder_weight_specs(cfg: DecoderConfig, layout: WeightLayout = HF_LAYOUT) -> dict[str, WeightSpec]:
    """Every tensor the decoder reads, by logical name, in checkpoint order (globals, then layer by layer)."""
    prefix = TEXT_PREFIX[layout.name]
    d = cfg.hidden_size
    specs = [
        _spec(prefix, "embed_tokens", (cfg.vocab_size, d)),
        _spec(prefix, "embed_tokens_per_layer", (cfg.vocab_size_per_layer_input, cfg.ple_width)),
        _spec(prefix, "per_layer_model_projection", (cfg.ple_width, d)),
        _spec(prefix, "per_layer_projection_norm", (cfg.hidden_size_per_layer_input,)),
    ]
    specs += [_spec(prefix, f"altup_projections.{i}", (d, d)) for i in range(cfg.altup_num_inputs - 1)]
    specs += [_spec(prefix, f"altup_unembed_projections.{i}", (d, d)) for i in range(cfg.altup_num_inputs - 1)]
    specs.append(_spec(prefix, "norm", (d,)))
    for layer in range(cfg.num_hidden_layers):
        for logical in layer_weight_names(cfg, layer):
            specs.append(_spec(prefix, logical, _layer_shape(cfg, layer, logical.split(".", 2)[2])))
    return {s.logical: s for s in specs}


def read_decoder_weights(
    directory: str | Path, cfg: DecoderConfig, layout: WeightLayout = HF_LAYOUT
) -> dict[str, np.ndarray]:
    """Every decoder tensor of a checkpoint (BF16, transformers or mlx-vlm names), memory-mapped, by logical
    name.  Every missing tensor, wrong dtype or wrong shape is listed in one `CheckpointSchemaError`; other
    tensors (the audio tower, shared layers' unused k/v projections) are left alone."""
    from ..runtime.checkpoint import CheckpointSchemaError
    from ..runtime.safetensors_files import find_safetensors_files, read_safetensors_header

    files, _, _ = find_safetensors_files(directory)
    tensors = {name: info for path in files for name, info in read_safetensors_header(path).items()}
    missing, mismatched, out = [], [], {}
    for logical, spec in decoder_weight_specs(cfg, layout).items():
        info = tensors.get(spec.key)
        if info is None:
            missing.append(spec.key)
        elif info.dtype != "BF16" or tuple(info.shape) != spec.shape:
            mismatched.append(f"{spec.key}: {info.dtype} {list(info.shape)}, expected BF16 {list(spec.shape)}")
        else:
            out[logical] = np.memmap(
                info.file, dtype=ml_dtypes.bfloat16, mode="r", offset=info.offsets[0], shape=info.shape
            )
    if missing or mismatched:
        lines = [f"missing: {name}" for name in missing[:20]] + mismatched[:20]
        more = len(missing) + len(mismatched) - len(lines)
        raise CheckpointSchemaError(
            f"{directory}: the decoder's tensors do not match the configuration "
            f"({len(missing)} missing, {len(mismatched)} mismatched):\n  "
            + "\n  ".join(lines)
            + (f"\n  ... and {more} more" if more > 0 else ""),
            missing=missing,
            mismatched=mismatched,
        )
    return out
