"""Deterministic random checkpoints of the real layout (real weights cannot be downloaded here).

The weights are drawn at scales that keep activations in the range a trained model has (matrices
~ N(0, 1/fan_in), norm weights around 1, per-dimension scales around 0) so that every op does real
work; they are written as BF16 safetensors with the checkpoint's own tensor names, plus a
`config.json` in the Hugging Face Gemma 3n format.
"""

from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np

from ..model.audio_config import AudioConfig
from ..model.audio_weights import HF_LAYOUT, WeightLayout, WeightSpec, audio_weight_specs


def random_weight(spec: WeightSpec, rng: np.random.Generator) -> np.ndarray:
    """One tensor: norms near 1, per-dim scales near 0, matrices and convolutions ~ N(0, 1/fan_in)."""
    name = spec.logical
    if name.endswith("per_dim_scale"):
        values = 0.5 * rng.standard_normal(spec.shape, dtype=np.float32)
    elif len(spec.shape) == 1:
        values = 1.0 + 0.1 * rng.standard_normal(spec.shape, dtype=np.float32)
    elif name == "embed.embedding":
        values = rng.standard_normal(spec.shape, dtype=np.float32)
    else:
        fan_in = int(np.prod(spec.shape[1:]))
        values = rng.standard_normal(spec.shape, dtype=np.float32) * np.float32(fan_in**-0.5)
    return values.astype(ml_dtypes.bfloat16)


def random_weights(cfg: AudioConfig, seed: int, layout: WeightLayout = HF_LAYOUT) -> dict[str, np.ndarray]:
    """All audio weights by checkpoint tensor name (BF16 numpy arrays), deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    return {spec.key: random_weight(spec, rng) for spec in audio_weight_specs(cfg, layout)}


def hf_config_json(cfg: AudioConfig) -> dict:
    audio = {k: v for k, v in cfg.__dict__.items() if k != "text_hidden_size"}
    audio["model_type"] = "gemma3n_audio"
    return {
        "model_type": "gemma3n",
        "architectures": ["Gemma3nForConditionalGeneration"],
        "audio_config": audio,
        "text_config": {"model_type": "gemma3n_text", "hidden_size": cfg.text_hidden_size},
        "audio_soft_tokens_per_image": 188,
        "audio_token_id": 262273,
        "boa_token_id": 256000,
        "eoa_token_id": 262272,
    }


def write_random_checkpoint(directory: str | Path, cfg: AudioConfig, seed: int = 0) -> Path:
    """Write `config.json` + `model.safetensors` (HF names and layout) into `directory`."""
    from safetensors.numpy import save_file

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(hf_config_json(cfg), indent=2) + "\n")
    save_file(random_weights(cfg, seed), str(directory / "model.safetensors"))
    return directory
