"""transformers reference for speech in, tokens out: the whole Gemma 3n model with audio (no vision tower).

`NoVisionGemma3nForConditionalGeneration` is transformers 5.24's `Gemma3nForConditionalGeneration` with the
vision tower left out (`timm` is not installed and no image is used; `tests/oracles/hf_prefill.py`'s
`NoVisionGemma3nModel` inside): its `forward` and `generate` are transformers' own, so a prompt with audio
runs exactly as spec gemma3n-text §7.2 describes (prefill: merge the audio tower's rows into the placeholders;
decode steps: one id each, the audio inputs dropped).

* `make_model(audio, decoder_cfg, seed)`: the tiny audio tower (`tests/oracles/configs.py`) and the tiny
  decoder (`builtin_decoder_config("tiny")`), every parameter random as spec gemma3n-text §11.1 says (text
  side by `hf_decoder.random_value`, audio side by `hf_oracle.random_value`; transformers' own init would
  zero `correct_output_scale` and switch the per-layer inputs off), rounded to BF16; `embed_tokens` rows from
  the vision vocabulary on copy row 0, as in the released checkpoints (spec §7.4: their logits then tie with
  logit 0 and greedy never picks them, so a decode step never needs the multimodal embedders' hard rows);
* `write_checkpoint(model, directory)`: ONE checkpoint in Hugging Face layout written by transformers'
  own `save_pretrained` (BF16 safetensors, `config.json`, `generation_config.json`) plus the project's test
  `tokenizer.json`: the encoder, prefill and decoder stages all load it;
* `features(samples)`: transformers' `Gemma3nAudioFeatureExtractor` on 16 kHz samples of one clip;
* `generate_ids(model, input_ids, clip_samples, n)`: `generate(do_sample=False)` with the audio, exactly `n`
  new tokens (stop ids off); `load_bf16` is what `from_pretrained(dtype=torch.bfloat16)` gives users;
* `step_logits(model, input_ids, clip_samples, tokens)`: the logits of every step along given tokens
  (transformers' forward, one cached call per token), for the near-tie study.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from transformers import DynamicCache, Gemma3nAudioFeatureExtractor
from transformers.models.gemma3n.configuration_gemma3n import Gemma3nAudioConfig, Gemma3nConfig, Gemma3nVisionConfig
from transformers.models.gemma3n.modeling_gemma3n import Gemma3nForConditionalGeneration, Gemma3nPreTrainedModel

from . import hf_decoder as H
from .hf_oracle import random_value as audio_random_value
from .hf_prefill import NoVisionGemma3nModel

TRANSFORMERS_VERSION = "5.24.0"
TEXT_PREFIX = "model.language_model."


class NoVisionGemma3nForConditionalGeneration(Gemma3nForConditionalGeneration):
    """`Gemma3nForConditionalGeneration` without its (timm) vision tower; everything else transformers' own."""

    def __init__(self, config: Gemma3nConfig) -> None:
        Gemma3nPreTrainedModel.__init__(self, config)
        self.model = NoVisionGemma3nModel(config)
        self.lm_head = nn.Linear(config.text_config.hidden_size, config.text_config.vocab_size, bias=False)
        self.post_init()


def hf_config(audio: dict[str, Any], cfg: Any) -> Gemma3nConfig:
    """transformers' `Gemma3nConfig` of a tests/oracles/configs.py audio dict and a gemma3n_iree `DecoderConfig`."""
    text = H.hf_text_config(cfg)
    acfg = Gemma3nAudioConfig(**{k: v for k, v in audio.items() if k != "text_hidden_size"})
    vcfg = Gemma3nVisionConfig(
        hidden_size=cfg.hidden_size, vocab_offset=cfg.vision_vocab_offset, vocab_size=cfg.vision_vocab_size
    )
    config = Gemma3nConfig(
        text_config=text.to_dict(),
        vision_config=vcfg.to_dict(),
        audio_config=acfg.to_dict(),
        audio_token_id=cfg.audio_token_id,
        boa_token_id=cfg.boa_token_id,
        eoa_token_id=cfg.eoa_token_id,
        eos_token_id=list(cfg.eos_token_ids),
    )
    config._attn_implementation = "eager"
    config.text_config._attn_implementation = "eager"
    return config


@torch.no_grad()
def make_model(audio: dict[str, Any], cfg: Any, seed: int) -> NoVisionGemma3nForConditionalGeneration:
    """Float32, eval mode, eager attention, every parameter random (BF16 values; rules in the module docstring)."""
    model = NoVisionGemma3nForConditionalGeneration(hf_config(audio, cfg)).float().eval()
    gen = torch.Generator().manual_seed(seed)
    for name, p in sorted(model.named_parameters()):
        r = torch.randn(p.shape, generator=gen, dtype=torch.float64)
        value = H.random_value(name, r) if name.startswith(TEXT_PREFIX) else audio_random_value(name, r)
        p.copy_(value.to(torch.bfloat16).to(torch.float32))
    table = model.model.language_model.embed_tokens.weight
    table[cfg.vision_vocab_offset :] = table[0]
    return model


def write_checkpoint(model: NoVisionGemma3nForConditionalGeneration, directory: str | Path) -> Path:
    """The model as users get a checkpoint: `save_pretrained` of its BF16 copy, plus the test tokenizer."""
    from synthetic_text import write_test_tokenizer
    from transformers.utils import logging as hf_logging

    directory = Path(directory)
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        copy.deepcopy(model).to(torch.bfloat16).save_pretrained(directory)
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    config = json.loads((directory / "config.json").read_text())  # save_pretrained names the subclass
    config["architectures"] = ["Gemma3nForConditionalGeneration"]
    (directory / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    write_test_tokenizer(directory)
    return directory


def load_bf16(model: NoVisionGemma3nForConditionalGeneration) -> NoVisionGemma3nForConditionalGeneration:
    """What `from_pretrained(dir, dtype=torch.bfloat16, attn_implementation="eager")` gives (through a real
    save and load, so transformers keeps its float32 buffers where it does for users)."""
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            model.save_pretrained(tmp)
            loaded = NoVisionGemma3nForConditionalGeneration.from_pretrained(
                tmp, dtype=torch.bfloat16, attn_implementation="eager"
            )
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    return loaded.eval()


def features(samples: np.ndarray) -> dict[str, torch.Tensor]:
    """transformers' feature extractor on one clip's 16 kHz samples (at most 30 s: it would truncate more)."""
    if len(samples) > 480_000:
        raise ValueError(f"{len(samples)} samples: the feature extractor truncates clips past 30 s")
    out = Gemma3nAudioFeatureExtractor()(np.asarray(samples, np.float32), sampling_rate=16000, return_tensors="pt")
    return {"input_features": out["input_features"], "input_features_mask": out["input_features_mask"]}


def _audio_inputs(model: Any, clip_samples: np.ndarray | Sequence[np.ndarray]) -> dict[str, torch.Tensor]:
    """One clip's features, or several clips' (a list, each at most 30 s) padded to the longest with its mask:
    the prompt's audio blocks take their rows in order."""
    if isinstance(clip_samples, np.ndarray):
        inputs = features(clip_samples)
    else:
        if any(len(c) > 480_000 for c in clip_samples):
            raise ValueError("the feature extractor truncates clips past 30 s")
        clips = [np.asarray(c, np.float32) for c in clip_samples]
        inputs = Gemma3nAudioFeatureExtractor()(clips, sampling_rate=16000, return_tensors="pt", padding="longest")
    dtype = next(model.parameters()).dtype
    return {"input_features": inputs["input_features"].to(dtype), "input_features_mask": inputs["input_features_mask"]}


@torch.no_grad()
def generate_ids(
    model: Any, input_ids: Sequence[int], clip_samples: np.ndarray | Sequence[np.ndarray], max_new_tokens: int
) -> list[int]:
    """`generate(do_sample=False)` on a prompt with one audio clip (or a list of clips, in the prompt's order):
    exactly `max_new_tokens` new ids (stop ids switched off in the generation config, so a random model's EOS
    does not end the comparison early)."""
    config = model.generation_config
    saved = config.eos_token_id
    config.eos_token_id = None
    try:
        out = model.generate(
            input_ids=torch.tensor([list(map(int, input_ids))]),
            **_audio_inputs(model, clip_samples),
            do_sample=False,
            max_new_tokens=max_new_tokens,
            min_new_tokens=0,
            pad_token_id=0,
        )
    finally:
        config.eos_token_id = saved
    return [int(t) for t in out[0, len(input_ids) :]]


@torch.no_grad()
def step_logits(model: Any, input_ids: Sequence[int], clip_samples: np.ndarray, tokens: Sequence[int]) -> np.ndarray:
    """float32 [len(tokens), V]: the logits that picked `tokens[k]` after the prompt and `tokens[:k]` (the prefill
    with the audio, then one cached call per token: what `generate` computes along those tokens)."""
    cache = DynamicCache(config=model.config.text_config)
    out = model(
        input_ids=torch.tensor([list(map(int, input_ids))]),
        **_audio_inputs(model, clip_samples),
        use_cache=True,
        logits_to_keep=1,
        **H._with_cache(model, cache),
    )
    logits = [out.logits[0, -1].float().numpy().copy()]
    for token in tokens[:-1]:
        out = model(input_ids=torch.tensor([[int(token)]]), use_cache=True, **H._with_cache(model, cache))
        logits.append(out.logits[0, -1].float().numpy().copy())
    return np.stack(logits)
