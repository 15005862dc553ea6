"""Hugging Face reference for the Gemma 3n audio encoder + audio embedder, with random weights.

Written against transformers 5.24.0 (``transformers.models.gemma3n``) and torch 2.13.0 (CPU build).
Test-only dependencies; install with::

    pip install torch==2.13.0 transformers==5.24.0

The modules are exactly what ``Gemma3nModel`` holds as ``model.audio_tower`` and
``model.embed_audio``: ``Gemma3nAudioEncoder(Gemma3nAudioConfig(...))`` and
``Gemma3nMultimodalEmbedder(audio_config, text_config)``. Weights are random but deterministic and
deliberately non-trivial: every norm weight and ``per_dim_scale`` is perturbed away from its
identity value so that a missing or misapplied scale (w vs 1 + w, a forgotten softplus) shows up
as a large error instead of hiding behind ones and zeros.
"""

from __future__ import annotations

import copy
import math
import tempfile
from typing import Any

import numpy as np
import torch
from transformers.models.gemma3n.configuration_gemma3n import Gemma3nAudioConfig, Gemma3nTextConfig
from transformers.models.gemma3n.modeling_gemma3n import Gemma3nAudioEncoder, Gemma3nMultimodalEmbedder
from transformers.utils import logging as hf_logging

from gemma3n_iree.diagnostics.transformers_reference import stage_hooks

TRANSFORMERS_VERSION = "5.24.0"
TOWER = "model.audio_tower."
EMBED = "model.embed_audio."


def audio_config(cfg: dict[str, Any]) -> Gemma3nAudioConfig:
    """The HF audio config from one of our config dicts (``text_hidden_size`` is not an audio field)."""
    return Gemma3nAudioConfig(**{k: v for k, v in cfg.items() if k != "text_hidden_size"})


def build_hf_modules(cfg: dict[str, Any]) -> tuple[Gemma3nAudioEncoder, Gemma3nMultimodalEmbedder]:
    """Construct the two modules with HF's default init (usable under ``torch.device("meta")``)."""
    acfg = audio_config(cfg)
    encoder = Gemma3nAudioEncoder(acfg)
    embedder = Gemma3nMultimodalEmbedder(acfg, Gemma3nTextConfig(hidden_size=cfg["text_hidden_size"]))
    return encoder, embedder


@torch.no_grad()
def _randomize(module: torch.nn.Module, gen: torch.Generator) -> None:
    """Deterministic non-trivial init, parameter by parameter in name order.

    * ``per_dim_scale`` [head_dim]: N(0, 0.5^2) (HF inits zeros, i.e. softplus(0) for every dim);
    * other 1-D weights (RMSNorm and cumulative-group-norm scales): 1 + 0.1 N(0, 1);
    * ``embedding.weight``: N(0, 1) (rows are RMS-normalised before use);
    * matrices and conv kernels: N(0, 1 / fan_in), fan_in = prod(shape[1:]), so every projection
      keeps unit-scale activations through the stack.
    """
    for name, p in sorted(module.named_parameters()):
        p.copy_(random_value(name, torch.randn(p.shape, generator=gen, dtype=torch.float64)).to(p.dtype))


def random_value(name: str, r: torch.Tensor) -> torch.Tensor:
    """The value of parameter `name` from a standard-normal draw `r` of its shape (rules above)."""
    if name.endswith("per_dim_scale"):
        return 0.5 * r
    if r.ndim == 1:
        return 1.0 + 0.1 * r
    if name.endswith("embedding.weight"):
        return r
    return r / math.sqrt(math.prod(r.shape[1:]))


def make_hf_modules(cfg: dict[str, Any], seed: int) -> tuple[Gemma3nAudioEncoder, Gemma3nMultimodalEmbedder]:
    """Float32 encoder and audio embedder in eval mode with deterministic random weights."""
    encoder, embedder = build_hf_modules(cfg)
    gen = torch.Generator().manual_seed(seed)
    _randomize(encoder, gen)
    _randomize(embedder, gen)
    return encoder.float().eval(), embedder.float().eval()


def hf_param_shapes(encoder: torch.nn.Module, embedder: torch.nn.Module) -> dict[str, tuple[int, ...]]:
    """Checkpoint name -> shape for every parameter (buffers are not in a checkpoint)."""
    shapes = {TOWER + n: tuple(p.shape) for n, p in encoder.named_parameters()}
    shapes.update({EMBED + n: tuple(p.shape) for n, p in embedder.named_parameters()})
    return shapes


def state_dict_hf_names(encoder: torch.nn.Module, embedder: torch.nn.Module) -> dict[str, np.ndarray]:
    """Float32 numpy copies of all parameters, named as in a HF Gemma 3n checkpoint."""
    out = {TOWER + n: p.detach().float().cpu().numpy().copy() for n, p in encoder.named_parameters()}
    out.update({EMBED + n: p.detach().float().cpu().numpy().copy() for n, p in embedder.named_parameters()})
    return out


def _bf16_like_from_pretrained(encoder: Gemma3nAudioEncoder) -> Gemma3nAudioEncoder:
    """The encoder as ``from_pretrained(..., dtype=torch.bfloat16)`` gives it to users.

    That is not the same as ``encoder.to(torch.bfloat16)``: loading keeps the float32 buffers
    ``inv_timescales`` and ``softcap`` in float32 while ``q_scale`` and ``gradient_clipping`` become
    bf16 (spec section 3.6), so the model goes through a real save / load round trip. Cached on the
    float32 module (``_bf16_copy``) because the round trip costs seconds at full size; the cache is
    not refreshed if the float32 weights are changed afterwards (build new modules instead).
    """
    cached = getattr(encoder, "_bf16_copy", None)
    if cached is not None:
        return cached
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            encoder.save_pretrained(tmp)
            loaded = Gemma3nAudioEncoder.from_pretrained(tmp, dtype=torch.bfloat16).eval()
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    object.__setattr__(encoder, "_bf16_copy", loaded)  # not registered as a submodule
    return loaded


@torch.no_grad()
def run_hf(
    encoder: Gemma3nAudioEncoder,
    embedder: Gemma3nMultimodalEmbedder,
    mel: np.ndarray,
    dtype: torch.dtype = torch.float32,
    stages: bool = False,
) -> dict[str, np.ndarray]:
    """Run one clip (all frames valid) through the HF modules; returns float32 numpy arrays.

    ``encoded`` [Tout, hidden] is the encoder's ``last_hidden_state``; ``soft_post_norm``
    [Tout, text_hidden] is the embedder's soft path on it; ``hard_post_norm`` [vocab, text_hidden]
    is the hard path for token ids vocab_offset .. vocab_offset + vocab_size - 1.
    With ``dtype=torch.bfloat16`` the encoder is loaded as ``from_pretrained(dtype=bf16)`` would,
    the embedder is cast with ``.to(bf16)`` and the mel is rounded to bf16 (``inputs.to(dtype)``).
    With ``stages=True`` the intermediate tensors that ``reference_f64.forward_f64`` also returns
    (SSCP conv / norm / ReLU outputs, ``input_projection``, every conformer sub-module) are added.
    """
    if dtype == torch.float32:
        enc, emb = encoder.float(), embedder.float()
    elif dtype == torch.bfloat16:
        enc = _bf16_like_from_pretrained(encoder)
        emb = copy.deepcopy(embedder).to(torch.bfloat16).eval()
    else:
        raise ValueError(f"unsupported dtype {dtype}")
    recorded: dict[str, torch.Tensor] = {}
    hooks = stage_hooks(enc, recorded) if stages else []
    try:
        x = torch.from_numpy(np.asarray(mel, dtype=np.float32))[None].to(dtype)
        mask = torch.zeros(x.shape[:2], dtype=torch.bool)  # True = padded; nothing is
        encoded = enc(x, mask).last_hidden_state
    finally:
        for h in hooks:
            h.remove()
    soft = emb(inputs_embeds=encoded)
    ids = torch.arange(emb.vocab_offset, emb.vocab_offset + emb.vocab_size)[None]
    hard = emb(input_ids=ids)
    out = {"encoded": encoded[0], "soft_post_norm": soft[0], "hard_post_norm": hard[0], **recorded}
    return {k: v.float().numpy().copy() for k, v in out.items()}
