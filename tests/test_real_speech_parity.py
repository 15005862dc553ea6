"""Real speech through our front end, the tiny and the real configuration, against transformers.

The speech fixture (espeak-ng, 3.2 s, tests/data/README.md) goes through `runtime.audio.frontend.log_mel`
(bit-identical to transformers' feature extractor, tests/test_frontend.py) and then through our
artifact and through transformers' Gemma3nAudioEncoder + audio embedder with the same BF16 weights:
f32-reference within 1e-4 relative L2 of transformers-fp32, and mlx-cuda-v1 no farther from
transformers-fp32 than 1.5x transformers-bf16.  The real configuration is one of CI's few
real-size tests (about a minute).
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="transformers parity needs torch (test-only dependency)")
pytest.importorskip("transformers", reason="transformers parity needs transformers (test-only dependency)")

from audio_artifacts import load_session  # noqa: E402

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1  # noqa: E402
from gemma3n_iree.contracts.metrics import relative_l2  # noqa: E402
from gemma3n_iree.diagnostics.transformers_reference import build_modules, load_weights  # noqa: E402
from gemma3n_iree.emitters.audio import AudioModuleSpec  # noqa: E402
from gemma3n_iree.model.audio_config import builtin_config  # noqa: E402
from gemma3n_iree.runtime.audio.frontend import load_audio, log_mel  # noqa: E402
from gemma3n_iree.runtime.synthetic import random_weights  # noqa: E402

SPEECH = Path(__file__).parent / "data" / "speech_16k.wav"


@pytest.fixture(scope="module")
def speech_mel() -> np.ndarray:
    features, frames = log_mel(load_audio(SPEECH)[0])
    return features[:frames]


def hf_modules(cfg, weights: dict):
    encoder, embedder = build_modules(cfg)
    load_weights(encoder, embedder, {k: v.astype(np.float32) for k, v in weights.items()})
    return encoder, embedder


def as_bf16_like_from_pretrained(module):
    """`.to(bfloat16)` but keep the float32 buffers `from_pretrained(dtype=bf16)` keeps (spec section 3.6)."""
    converted = copy.deepcopy(module).to(torch.bfloat16)
    for (name, original), (_, buffer) in zip(module.named_buffers(), converted.named_buffers()):
        if name.endswith(("inv_timescales", "softcap")):
            buffer.data = original.data.clone()
    return converted.eval()


def hf_outputs(encoder, embedder, mel: np.ndarray, dtype) -> dict[str, np.ndarray]:
    with torch.no_grad():
        x = torch.from_numpy(mel)[None].to(dtype)
        encoded = encoder(x, torch.zeros(x.shape[:2], dtype=torch.bool)).last_hidden_state
        soft = embedder(inputs_embeds=encoded)
    return {"encoded": encoded[0].float().numpy(), "soft_post_norm": soft[0].float().numpy()}


@pytest.mark.parametrize("name", ["tiny", pytest.param("e4b", marks=pytest.mark.real_size)])
def test_real_speech_matches_transformers(name, speech_mel):
    cfg = builtin_config(name)
    weights = random_weights(cfg, seed=3)
    frames = len(speech_mel)
    ours = {}
    for contract in (F32_REFERENCE, MLX_CUDA_V1):
        session = load_session(AudioModuleSpec(cfg, contract, (frames,), (1,)), weights)
        out = session.run(speech_mel[None], np.array([frames], np.int32))
        tokens = int(out["valid_tokens"][0])
        ours[contract.name] = {
            "encoded": out["encoder_hidden"][0, :tokens],
            "soft_post_norm": out["audio_features"][0, :tokens],
        }
    encoder, embedder = hf_modules(cfg, weights)
    fp32 = hf_outputs(encoder, embedder, speech_mel, torch.float32)
    bf16 = hf_outputs(
        as_bf16_like_from_pretrained(encoder), copy.deepcopy(embedder).to(torch.bfloat16), speech_mel, torch.bfloat16
    )
    for key in ("encoded", "soft_post_norm"):
        assert ours["f32-reference"][key].shape == fp32[key].shape
        assert relative_l2(ours["f32-reference"][key], fp32[key]) <= 1e-4, key
        ours_err, hf_err = relative_l2(ours["mlx-cuda-v1"][key], fp32[key]), relative_l2(bf16[key], fp32[key])
        assert ours_err <= 1.5 * hf_err, f"{name} {key}: ours {ours_err:.3e} vs transformers-bf16 {hf_err:.3e}"
