"""Hugging Face transformers as a semantic reference for the audio stage (optional dependency).

Builds `Gemma3nAudioEncoder` + the audio `Gemma3nMultimodalEmbedder` from a configuration, loads
weights by checkpoint name, and records the stage tensors the diagnostics compare, named and laid
out as this project's stages ([T, F, C] for the SSCP tensors, one clip, no batch axis).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..model.audio_config import AudioConfig

TOWER = "model.audio_tower."
EMBED = "model.embed_audio."


def _require() -> Any:
    try:
        import torch
        from transformers.models.gemma3n import modeling_gemma3n
    except ImportError:
        raise RuntimeError(
            "the transformers reference needs torch and transformers (pip install torch transformers)"
        ) from None
    return torch, modeling_gemma3n


def build_modules(cfg: AudioConfig) -> tuple[Any, Any]:
    """The two modules with transformers' default initialisation, float32, eval mode."""
    _torch, modeling = _require()
    from transformers.models.gemma3n.configuration_gemma3n import Gemma3nAudioConfig, Gemma3nTextConfig

    fields = {k: v for k, v in cfg.__dict__.items() if k != "text_hidden_size"}
    audio = Gemma3nAudioConfig(**fields)
    encoder = modeling.Gemma3nAudioEncoder(audio)
    embedder = modeling.Gemma3nMultimodalEmbedder(audio, Gemma3nTextConfig(hidden_size=cfg.text_hidden_size))
    return encoder.float().eval(), embedder.float().eval()


def load_weights(encoder: Any, embedder: Any, weights: Mapping[str, np.ndarray]) -> None:
    """Copy weights given by HF checkpoint name (`model.audio_tower.*`, `model.embed_audio.*`)."""
    torch, _ = _require()
    with torch.no_grad():
        for prefix, module in ((TOWER, encoder), (EMBED, embedder)):
            for name, param in module.named_parameters():
                value = np.asarray(weights[prefix + name], np.float32)
                param.copy_(torch.from_numpy(value.reshape(param.shape)))


def stage_hooks(encoder: Any, stages: dict[str, Any]) -> list[Any]:
    """Forward hooks recording stage tensors under this project's stage names (first clip)."""

    def keep(name: str, nchw: bool = False) -> Any:
        def hook(_module: Any, _inputs: Any, output: Any) -> None:
            t = output[0]
            stages[name] = t.permute(1, 2, 0) if nchw else t

        return hook

    sscp = encoder.subsample_conv_projection
    hooks = []
    for i, block in enumerate((sscp.conv_0, sscp.conv_1)):
        hooks.append(block.conv.register_forward_hook(keep(f"sscp_conv_{i}_convolution", nchw=True)))
        hooks.append(block.norm.register_forward_hook(keep(f"sscp_conv_{i}_norm")))
        hooks.append(block.register_forward_hook(keep(f"sscp_conv_{i}", nchw=True)))
    hooks.append(sscp.input_proj_linear.register_forward_hook(keep("input_projection")))
    for layer, block in enumerate(encoder.conformer):
        for sub, name in (
            (block.ffw_layer_start, "feed_forward_start"),
            (block.attention, "attention"),
            (block.lconv1d, "light_conv"),
            (block.ffw_layer_end, "feed_forward_end"),
            (block, "final_norm"),
        ):
            hooks.append(sub.register_forward_hook(keep(f"conformer.{layer}.{name}")))
    return hooks


def run_stages(encoder: Any, embedder: Any, mel: np.ndarray) -> dict[str, np.ndarray]:
    """One clip `mel` [T, mel] (all frames valid) -> stage tensors as float32 numpy arrays."""
    torch, _ = _require()
    recorded: dict[str, Any] = {}
    hooks = stage_hooks(encoder, recorded)
    try:
        with torch.no_grad():
            x = torch.from_numpy(np.asarray(mel, np.float32))[None]
            encoded = encoder(x, torch.zeros(x.shape[:2], dtype=torch.bool)).last_hidden_state
            soft = embedder(inputs_embeds=encoded)
            ids = torch.arange(embedder.vocab_offset, embedder.vocab_offset + embedder.vocab_size)[None]
            hard = embedder(input_ids=ids)
    finally:
        for h in hooks:
            h.remove()
    recorded.update(encoded_reduced=encoded[0], soft_post_norm=soft[0], hard_post_norm=hard[0])
    return {k: v.detach().float().numpy().copy() for k, v in recorded.items()}
