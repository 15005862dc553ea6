"""transformers reference for the prefill stage: `Gemma3nModel.forward`'s own merge and per-layer inputs.

A tiny `Gemma3nModel` (audio tower + audio embedder + a 2-layer text model; transformers 5.24) with
deterministic random weights.  The vision tower is left out (`timm` is not installed and no image is
used): `NoVisionGemma3nModel.__init__` builds every other submodule exactly as `Gemma3nModel.__init__`
does, and `forward` is transformers' own, unchanged.  The two tensors the language model's layers
consume are captured where `Gemma3nTextModel.forward` computes them:
`project_per_layer_inputs(inputs_embeds, per_layer_inputs)` receives the merged `inputs_embeds` and
returns the dense per-layer inputs.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from transformers.models.gemma3n.configuration_gemma3n import (
    Gemma3nAudioConfig,
    Gemma3nConfig,
    Gemma3nTextConfig,
    Gemma3nVisionConfig,
)
from transformers.models.gemma3n.modeling_gemma3n import (
    Gemma3nAudioEncoder,
    Gemma3nModel,
    Gemma3nMultimodalEmbedder,
    Gemma3nPreTrainedModel,
    Gemma3nTextModel,
)

from .hf_oracle import random_value

TEXT_NAMES = (
    "embed_tokens.weight",
    "embed_tokens_per_layer.weight",
    "per_layer_model_projection.weight",
    "per_layer_projection_norm.weight",
)


class NoVisionGemma3nModel(Gemma3nModel):
    """`Gemma3nModel` without its (timm) vision tower; everything else as transformers builds it."""

    def __init__(self, config: Gemma3nConfig) -> None:
        Gemma3nPreTrainedModel.__init__(self, config)
        self.vision_tower = None
        self.vocab_size = config.text_config.vocab_size
        self.language_model = Gemma3nTextModel(config.text_config)
        self.vocab_size_per_layer_input = config.text_config.vocab_size_per_layer_input
        self.audio_tower = Gemma3nAudioEncoder(config.audio_config)
        self.embed_vision = Gemma3nMultimodalEmbedder(config.vision_config, config.text_config)
        self.embed_audio = Gemma3nMultimodalEmbedder(config.audio_config, config.text_config)
        self.post_init()


def hf_config(audio: dict[str, Any], text: Any) -> Gemma3nConfig:
    """`audio`: a tests/oracles/configs.py dict; `text`: a gemma3n_iree TextConfig (tiny)."""
    acfg = Gemma3nAudioConfig(**{k: v for k, v in audio.items() if k != "text_hidden_size"})
    layers = text.num_hidden_layers
    tcfg = Gemma3nTextConfig(
        hidden_size=text.hidden_size,
        num_hidden_layers=layers,
        intermediate_size=2 * text.hidden_size,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=text.hidden_size // 2,
        hidden_size_per_layer_input=text.hidden_size_per_layer_input,
        vocab_size=text.vocab_size,
        vocab_size_per_layer_input=text.vocab_size_per_layer_input,
        rms_norm_eps=text.rms_norm_eps,
        num_kv_shared_layers=0,
        laurel_rank=8,
        layer_types=["sliding_attention"] * (layers - 1) + ["full_attention"],
        activation_sparsity_pattern=[0.0] * layers,
    )
    vcfg = Gemma3nVisionConfig(hidden_size=text.hidden_size)
    return Gemma3nConfig(text_config=tcfg, vision_config=vcfg, audio_config=acfg)


@torch.no_grad()
def make_model(audio: dict[str, Any], text: Any, seed: int) -> NoVisionGemma3nModel:
    """Float32, eval mode, deterministic random weights rounded to BF16 (so a BF16 checkpoint holds them).

    Text tables ~ N(0, 0.03^2) (row 0 too: the per-layer table's row 0 is what out-of-vocabulary ids
    read, so it must not be zero here), `per_layer_model_projection` ~ N(0, 1/hidden), norm weights
    1 + 0.1 N(0, 1), audio weights as tests/oracles/hf_oracle.py draws them.
    """
    model = NoVisionGemma3nModel(hf_config(audio, text)).float().eval()
    gen = torch.Generator().manual_seed(seed)
    for name, p in sorted(model.named_parameters()):
        r = torch.randn(p.shape, generator=gen, dtype=torch.float64)
        v = 0.03 * r if name.startswith("language_model.embed_tokens") and r.ndim > 1 else random_value(name, r)
        p.copy_(v.to(torch.bfloat16).to(torch.float32))
    return model


def checkpoint_tensors(model: NoVisionGemma3nModel) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(audio tensors, the four text tensors) as float32 numpy arrays named as in a HF checkpoint."""
    audio = {f"model.audio_tower.{n}": p.detach().numpy().copy() for n, p in model.audio_tower.named_parameters()}
    audio.update({f"model.embed_audio.{n}": p.detach().numpy().copy() for n, p in model.embed_audio.named_parameters()})
    params = dict(model.language_model.named_parameters())
    text = {f"model.language_model.{n}": params[n].detach().numpy().copy() for n in TEXT_NAMES}
    return audio, text


@torch.no_grad()
def run_forward(
    model: NoVisionGemma3nModel, input_ids: np.ndarray, mel: np.ndarray, dtype: torch.dtype = torch.float32
) -> dict[str, np.ndarray]:
    """transformers' forward on one prompt and a batch of equal-length clips `mel` [clips, T, 128].

    Returns `inputs_embeds` [L, hidden] and `per_layer_inputs` [L, layers, 256] (float32), as the
    language model receives them.  With bf16 the model is cast with `.to(torch.bfloat16)` and the mel is
    rounded to bf16 (`inputs.to(dtype)`, as transformers' docs do).
    """
    m = model if dtype == torch.float32 else copy.deepcopy(model).to(dtype)
    captured: dict[str, torch.Tensor] = {}
    original = m.language_model.project_per_layer_inputs

    def capture(inputs_embeds: torch.Tensor, per_layer_inputs: torch.Tensor | None = None) -> torch.Tensor:
        out = original(inputs_embeds, per_layer_inputs)
        captured["inputs_embeds"], captured["per_layer_inputs"] = inputs_embeds, out
        return out

    m.language_model.project_per_layer_inputs = capture
    try:
        ids = torch.from_numpy(np.asarray(input_ids, np.int64))[None]
        features = torch.from_numpy(np.asarray(mel, np.float32)).to(dtype)
        mask = torch.ones(features.shape[:2], dtype=torch.bool)  # True = valid (input_features_mask)
        m(input_ids=ids, input_features=features, input_features_mask=mask)
    finally:
        del m.language_model.project_per_layer_inputs
    return {k: v[0].float().numpy().copy() for k, v in captured.items()}
