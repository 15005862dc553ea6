"""transformers reference for the text decoder: `Gemma3nForCausalLM` with deterministic random weights.

Written against transformers 5.24.0 and torch 2.13.0 (CPU), test-only.  The model follows a `DecoderConfig`
(`text_config` of its `config.json`), `attn_implementation="eager"` (spec §4.3: the rounding points of
§6.4 are eager's; sdpa moves bf16 logits).  Every parameter is randomised (spec §11.1: transformers
initialises `correct_output_scale` to 0, which would switch the whole per-layer-input path off, and norm
weights to 1): norms and `correct_output_scale` 1 + 0.3 N(0, 1), AltUp coefficients 0.3 N, embeddings
0.05 N, linears N / sqrt(fan_in); then rounded to BF16 so a BF16 checkpoint holds them exactly.

* `fp32` is that model; `bf16` is what `from_pretrained(dir, dtype=torch.bfloat16)` gives users (the buffers
  `embed_scale` & co. become bf16, the RoPE `inv_freq` stays fp32), through a real save / load;
* `checkpoint_tensors` names the weights as a Gemma 3n checkpoint does (`model.language_model.`), and
  `write_checkpoint` saves them as one (BF16 safetensors + the nested `config.json`), for the
  project's side;
* `run_cached` is spec §11.2's manual loop (prefill from `inputs_embeds` + `per_layer_inputs`, then one id
  per step through the `DynamicCache`), with the logits and the cache's K/V after every call;
* `generate_tokens` is `generate(do_sample=False)` from input ids, `greedy_from_embeds` the manual loop's;
* `load_f64` + `float64_islands_patched` give transformers in float64 without its fp32 islands (spec §11.3);
* `model_from_tensors` / `to_bf16_as_loaded` build the fp32 / bf16 models straight from checkpoint tensors
  (the real-shape script: no 14 GB save and load), the same bits as the paths above (tested).
"""

from __future__ import annotations

import contextlib
import inspect
import math
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch
from transformers import DynamicCache
from transformers.models.gemma3n import modeling_gemma3n as modeling
from transformers.models.gemma3n.configuration_gemma3n import Gemma3nTextConfig
from transformers.models.gemma3n.modeling_gemma3n import Gemma3nForCausalLM
from transformers.utils import logging as hf_logging

TRANSFORMERS_VERSION = "5.24.0"
CHECKPOINT_PREFIX = "model.language_model."


def hf_text_config(cfg: Any) -> Gemma3nTextConfig:
    """transformers' config of a gemma3n_iree `DecoderConfig` (through its own config.json text_config)."""
    text = {k: v for k, v in cfg.to_config_json()["text_config"].items() if k != "model_type"}
    config = Gemma3nTextConfig(**text)
    config._attn_implementation = "eager"
    return config


def random_value(name: str, r: torch.Tensor) -> torch.Tensor:
    """Parameter `name`'s value from a standard-normal draw `r` of its shape (rules in the module docstring)."""
    if name.endswith("correct_output_scale") or r.ndim == 1:
        return 1.0 + 0.3 * r
    if "coefs" in name:
        return 0.3 * r
    if "embed_tokens" in name:
        return 0.05 * r
    return r / math.sqrt(r.shape[1])


@torch.no_grad()
def make_model(cfg: Any, seed: int) -> Gemma3nForCausalLM:
    """Float32, eval mode, every parameter random (BF16 values), eager attention."""
    model = Gemma3nForCausalLM(hf_text_config(cfg)).float().eval()
    gen = torch.Generator().manual_seed(seed)
    for name, p in sorted(model.named_parameters()):
        r = torch.randn(p.shape, generator=gen, dtype=torch.float64)
        p.copy_(random_value(name, r).to(torch.bfloat16).to(torch.float32))
    return model


@torch.no_grad()
def model_from_tensors(cfg: Any, tensors: Any, device: str = "cpu") -> Gemma3nForCausalLM:
    """A float32 eval-mode model on `device` holding checkpoint tensors (`model.language_model.*` names; BF16
    memory maps welcome), copied in row chunks (the real tables are gigabytes)."""
    with torch.device(device):
        model = Gemma3nForCausalLM(hf_text_config(cfg)).float().eval()
    for name, p in model.named_parameters():
        if not name.startswith("model."):
            continue  # lm_head: tied to embed_tokens
        source = tensors[CHECKPOINT_PREFIX + name[len("model.") :]]
        for start in range(0, p.shape[0], 8192):
            rows = np.ascontiguousarray(source[start : start + 8192])
            if rows.dtype != np.float32:
                rows = rows.astype(np.float32)
            p[start : start + 8192].copy_(torch.from_numpy(rows))
    return model


def to_bf16_as_loaded(model: Gemma3nForCausalLM) -> Gemma3nForCausalLM:
    """`model` cast in place to what `from_pretrained(dtype=torch.bfloat16)` gives: parameters and scalar
    buffers bf16, the RoPE inverse frequencies float32 (spec §6.3)."""
    model.to(torch.bfloat16)
    rotary = model.model.rotary_emb
    for kind in rotary.layer_types:
        inv, _ = rotary.compute_default_rope_parameters(model.config, model.device, layer_type=kind)
        setattr(rotary, f"{kind}_inv_freq", inv.float())
        setattr(rotary, f"{kind}_original_inv_freq", inv.float().clone())
    return model


def write_checkpoint(model: Gemma3nForCausalLM, cfg: Any, directory: Any) -> None:
    """The model's weights as a BF16 Gemma 3n checkpoint (`model.language_model.*`, sharded + indexed) with the
    configuration's nested `config.json`: what the project reads."""
    import ml_dtypes
    from synthetic_text import write_decoder_checkpoint

    tensors = {k: v.astype(ml_dtypes.bfloat16) for k, v in checkpoint_tensors(model).items()}
    write_decoder_checkpoint(directory, cfg, tensors)


def checkpoint_tensors(model: Gemma3nForCausalLM) -> dict[str, np.ndarray]:
    """float32 copies of every weight, named as in a Gemma 3n checkpoint (`model.language_model.*`)."""
    return {
        CHECKPOINT_PREFIX + name[len("model.") :]: p.detach().float().numpy().copy()
        for name, p in model.named_parameters()
        if name.startswith("model.")
    }


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def load_bf16(model: Gemma3nForCausalLM) -> Gemma3nForCausalLM:
    """The model as `from_pretrained(dir, dtype=torch.bfloat16, attn_implementation="eager")` gives it."""
    with _quiet(), tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        return Gemma3nForCausalLM.from_pretrained(tmp, dtype=torch.bfloat16, attn_implementation="eager").eval()


def load_f64(model: Gemma3nForCausalLM) -> Gemma3nForCausalLM:
    """A float64 copy whose scalar buffers hold their exact float64 values (`.double()` would widen their
    float32 roundings: sqrt(2048), 2048^-0.5, rsqrt(2))."""
    with _quiet(), tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        m = Gemma3nForCausalLM.from_pretrained(tmp, dtype=torch.float64, attn_implementation="eager").eval()
    cfg = m.config
    inner = m.model
    with torch.no_grad():
        inner.embed_tokens.embed_scale.copy_(torch.tensor(math.sqrt(cfg.hidden_size), dtype=torch.float64))
        inner.embed_tokens_per_layer.embed_scale.copy_(
            torch.tensor(math.sqrt(cfg.hidden_size_per_layer_input), dtype=torch.float64)
        )
        inner.per_layer_projection_scale.copy_(torch.tensor(cfg.hidden_size**-0.5, dtype=torch.float64))
        inner.per_layer_input_scale.copy_(torch.tensor(2.0**-0.5, dtype=torch.float64))
        for layer in inner.layers:
            layer.altup.router_input_scale.copy_(torch.tensor(1.0 / cfg.hidden_size, dtype=torch.float64))
    return m


@contextlib.contextmanager
def float64_islands_patched(freqs: dict[str, np.ndarray]) -> Iterator[None]:
    """transformers with its float32 islands replaced by float64 (spec §11.3): RMSNorm, the router's tanh, the
    attention softmax and RoPE's cos/sin (the angles stay fp32 from the inverse frequencies `freqs`, which
    are the spec's fp32 buffer; transformers' CPU `pow` differs from a correctly rounded one in the last bit
    for some frequencies).  Only for a float64 model."""
    saved = (
        modeling.Gemma3nRMSNorm.forward,
        modeling.Gemma3nTextAltUp.compute_router_modalities,
        modeling.eager_attention_forward,
        modeling.Gemma3nRotaryEmbedding.forward,
    )

    def rms_forward(self, x):
        y = x * torch.pow(torch.mean(x * x, dim=-1, keepdim=True) + self.eps, -0.5)
        return y * self.weight if self.with_scale else y

    def router(self, x):
        return torch.tanh(self.modality_router(self.router_norm(x) * self.router_input_scale))

    def attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, softcap=None, **kwargs):
        k = modeling.repeat_kv(key, module.num_key_value_groups)
        v = modeling.repeat_kv(value, module.num_key_value_groups)
        scores = torch.matmul(query, k.transpose(2, 3)) * scaling
        if attention_mask is not None:
            scores = scores + attention_mask
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, v).transpose(1, 2).contiguous(), probs

    def rotary(self, x, position_ids, layer_type):
        inv = torch.from_numpy(np.asarray(freqs[layer_type], np.float32))
        angle = (position_ids[..., None].float() * inv).double()
        angle = torch.cat((angle, angle), dim=-1)
        return angle.cos().to(x.dtype), angle.sin().to(x.dtype)

    modeling.Gemma3nRMSNorm.forward = rms_forward
    modeling.Gemma3nTextAltUp.compute_router_modalities = router
    modeling.eager_attention_forward = attention
    modeling.Gemma3nRotaryEmbedding.forward = rotary
    try:
        yield
    finally:
        (
            modeling.Gemma3nRMSNorm.forward,
            modeling.Gemma3nTextAltUp.compute_router_modalities,
            modeling.eager_attention_forward,
            modeling.Gemma3nRotaryEmbedding.forward,
        ) = saved


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.float64 if t.dtype == torch.float64 else torch.float32).cpu().numpy().copy()


def _with_cache(model: Gemma3nForCausalLM, cache: DynamicCache) -> dict[str, DynamicCache]:
    """The cache keyword of this transformers version (`cache` from 5.2x, `past_key_values` before)."""
    return {"cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values": cache}


@torch.no_grad()
def full_logits(model: Gemma3nForCausalLM, ids: Sequence[int]) -> np.ndarray:
    """Logits [S, V] of a prompt in one cache-free forward."""
    out = model(input_ids=torch.tensor([list(ids)], device=model.device), use_cache=False)
    return _numpy(out.logits[0])


def cache_contents(cache: DynamicCache) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Layer -> (keys, values) [seq, kv_heads, head_dim] of every layer that holds a cache."""
    out = {}
    for i, layer in enumerate(cache.layers):
        keys = getattr(layer, "keys", None)
        if keys is not None and keys.numel():
            out[i] = (_numpy(keys[0].transpose(0, 1)), _numpy(layer.values[0].transpose(0, 1)))
    return out


def per_layer_token_part(model: Gemma3nForCausalLM, ids: torch.Tensor) -> torch.Tensor:
    """The per-layer table rows of `ids`, an id past the table taking row 0 as the model's forward does it
    (transformers before 5.2x masked in `forward`, not in `get_per_layer_inputs`: there an id past the table is
    an out-of-bounds gather, a device-side fault on CUDA)."""
    in_table = (ids >= 0) & (ids < model.config.vocab_size_per_layer_input)
    return model.model.get_per_layer_inputs(torch.where(in_table, ids, 0))


@torch.no_grad()
def run_cached(model: Gemma3nForCausalLM, prompt: Sequence[int], continuation: Sequence[int]) -> dict[str, Any]:
    """Spec §11.2's manual loop: prefill the prompt from `inputs_embeds` + `per_layer_inputs` (the token part,
    as the multimodal model passes them), then feed `continuation` one id per call.  Returns the last row's
    logits of every call (`logits` [1 + len(continuation), V]) and the cache's contents after every call
    (`caches`)."""
    device = model.device
    ids = torch.tensor([list(prompt)], device=device)
    embeds = model.model.embed_tokens(ids)
    token_part = per_layer_token_part(model, ids)
    cache = DynamicCache(config=model.config)
    out = model(
        inputs_embeds=embeds, per_layer_inputs=token_part, use_cache=True, logits_to_keep=1, **_with_cache(model, cache)
    )
    logits, caches = [_numpy(out.logits[0, -1])], [cache_contents(cache)]
    for token in continuation:
        out = model(input_ids=torch.tensor([[int(token)]], device=device), use_cache=True, **_with_cache(model, cache))
        logits.append(_numpy(out.logits[0, -1]))
        caches.append(cache_contents(cache))
    return {"logits": np.stack(logits), "caches": caches}


@torch.no_grad()
def greedy_from_embeds(model: Gemma3nForCausalLM, prompt: Sequence[int], max_new_tokens: int) -> list[int]:
    """Greedy tokens through the manual loop (first index of the largest fp32 logit, no stop ids)."""
    device = model.device
    ids = torch.tensor([list(prompt)], device=device)
    cache = DynamicCache(config=model.config)
    out = model(
        inputs_embeds=model.model.embed_tokens(ids),
        per_layer_inputs=per_layer_token_part(model, ids),
        use_cache=True,
        logits_to_keep=1,
        **_with_cache(model, cache),
    )
    tokens: list[int] = []
    while True:
        token = int(torch.argmax(out.logits[0, -1].float()))
        tokens.append(token)
        if len(tokens) == max_new_tokens:
            return tokens
        out = model(input_ids=torch.tensor([[token]], device=device), use_cache=True, **_with_cache(model, cache))


@torch.no_grad()
def generate_tokens(model: Gemma3nForCausalLM, prompt: Sequence[int], max_new_tokens: int) -> list[int]:
    """`generate(do_sample=False)`, exactly `max_new_tokens` new tokens: stop ids are switched off (eos_token_id
    None in the generation config), so a random model's EOS does not end the comparison early."""
    config = model.generation_config
    saved = config.eos_token_id
    config.eos_token_id = None
    try:
        out = model.generate(
            torch.tensor([list(prompt)], device=model.device),
            do_sample=False,
            max_new_tokens=max_new_tokens,
            min_new_tokens=0,
            pad_token_id=0,
        )
    finally:
        config.eos_token_id = saved
    return [int(t) for t in out[0, len(prompt) :]]
