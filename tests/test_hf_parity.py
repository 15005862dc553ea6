"""Against Hugging Face transformers (torch CPU, test-only): a random-weight Gemma3nAudioEncoder +
audio Gemma3nMultimodalEmbedder with the same BF16 weights and mel input as our artifact.

* f32-reference within 1e-4 relative L2 of transformers in float32 (F32 rounding noise and the
  different attention formulation only).
* mlx-cuda-v1 (BF16 rounding after every op) no farther from transformers-fp32 than 1.5x the
  distance of transformers itself run in bf16: our rounding points cost no more than the
  framework's own bf16 mode.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="transformers parity needs torch (test-only dependency)")
pytest.importorskip("transformers", reason="transformers parity needs transformers (test-only dependency)")

from audio_artifacts import load_session  # noqa: E402
from oracles.configs import TINY  # noqa: E402
from oracles.hf_oracle import make_hf_modules, run_hf, state_dict_hf_names  # noqa: E402

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1  # noqa: E402
from gemma3n_iree.contracts.metrics import relative_l2  # noqa: E402
from gemma3n_iree.emitters.audio import AudioModuleSpec  # noqa: E402
from gemma3n_iree.model.audio_config import AudioConfig  # noqa: E402

FRAMES = (100, 203)
CFG = AudioConfig.from_mapping(TINY, source="tests/oracles/configs.py TINY")


@pytest.fixture(scope="module")
def hf_modules():
    """HF modules whose weights are rounded to BF16, and the same weights as a BF16 checkpoint."""
    encoder, embedder = make_hf_modules(TINY, seed=11)
    with torch.no_grad():
        for module in (encoder, embedder):
            for p in module.parameters():
                p.copy_(p.to(torch.bfloat16).to(torch.float32))
    weights = {k: v.astype(ml_dtypes.bfloat16) for k, v in state_dict_hf_names(encoder, embedder).items()}
    return encoder, embedder, weights


def speech_like(frames: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(frames)[:, None]
    return (rng.normal(-4.0, 2.0, (frames, 128)) + 3.0 * np.sin(t / 7.0)).astype(np.float32)


def run_ours(session, mel: np.ndarray) -> dict[str, np.ndarray]:
    bucket = max(FRAMES)
    padded = np.zeros((1, bucket, 128), np.float32)
    padded[0, : len(mel)] = mel
    out = session.run(padded, np.array([len(mel)], np.int32))
    tokens = int(out["valid_tokens"][0])
    return {"encoded": out["encoder_hidden"][0, :tokens], "soft_post_norm": out["audio_features"][0, :tokens]}


@pytest.mark.parametrize("frames", FRAMES)
def test_f32_reference_matches_transformers_fp32(hf_modules, frames):
    encoder, embedder, weights = hf_modules
    session = load_session(AudioModuleSpec(CFG, F32_REFERENCE, (max(FRAMES),), (1,)), weights)
    mel = speech_like(frames, frames)
    ref = run_hf(encoder, embedder, mel)
    ours = run_ours(session, mel)
    for name in ("encoded", "soft_post_norm"):
        assert ours[name].shape == ref[name].shape
        assert relative_l2(ours[name], ref[name]) <= 1e-4, name


@pytest.mark.parametrize("frames", FRAMES)
def test_mlx_cuda_v1_is_as_close_to_fp32_as_transformers_bf16(hf_modules, frames):
    encoder, embedder, weights = hf_modules
    session = load_session(AudioModuleSpec(CFG, MLX_CUDA_V1, (max(FRAMES),), (1,)), weights)
    mel = speech_like(frames, frames)
    fp32 = run_hf(encoder, embedder, mel)
    bf16 = run_hf(encoder, embedder, mel, dtype=torch.bfloat16)
    ours = run_ours(session, mel)
    for name in ("encoded", "soft_post_norm"):
        ours_err, hf_bf16_err = relative_l2(ours[name], fp32[name]), relative_l2(bf16[name], fp32[name])
        assert ours_err <= 1.5 * hf_bf16_err, f"{name}: ours {ours_err:.3e} vs transformers-bf16 {hf_bf16_err:.3e}"
