"""Real speech through our front end, the tiny and the real configuration, against transformers.

The speech fixture (espeak-ng, 3.2 s, tests/data/README.md) goes through `runtime.audio.frontend.log_mel`
(bit-identical to transformers' feature extractor, tests/test_frontend.py) and then through our
artifact and through transformers' Gemma3nAudioEncoder + audio embedder with the same BF16 weights:
f32-reference within 1e-4 relative L2 of transformers-fp32, and mlx-cuda-v1 no farther from
transformers-fp32 than 1.5x transformers-bf16.  The real configuration is one of CI's few
real-size tests (about a minute); the other real-size audio test, the same criteria with the device mel
(tests/test_device_mel_encoder.py's configuration), is here too, so that the two share one worker's E4B weights
and transformers' outputs on the speech (`references`) instead of building them once each.
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


@pytest.fixture(scope="module")
def references(speech_mel):
    """references(name) -> (random weights of the configuration, seed 3; transformers' fp32 outputs on the speech;
    transformers-bf16's), computed once for the module: both real-size tests use the E4B ones.  The modules
    themselves are not kept (only their outputs), so nothing real-size stays alive between the tests but the
    weights."""
    done: dict[str, tuple] = {}

    def get(name: str) -> tuple[dict, dict[str, np.ndarray], dict[str, np.ndarray]]:
        if name not in done:
            weights = random_weights(builtin_config(name), seed=3)
            encoder, embedder = hf_modules(builtin_config(name), weights)
            fp32 = hf_outputs(encoder, embedder, speech_mel, torch.float32)
            bf16 = hf_outputs(
                as_bf16_like_from_pretrained(encoder),
                copy.deepcopy(embedder).to(torch.bfloat16),
                speech_mel,
                torch.bfloat16,
            )
            done[name] = weights, fp32, bf16
        return done[name]

    return get


@pytest.mark.parametrize("name", ["tiny", pytest.param("e4b", marks=pytest.mark.real_size)])
def test_real_speech_matches_transformers(name, speech_mel, references):
    cfg = builtin_config(name)
    weights, fp32, bf16 = references(name)
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
    for key in ("encoded", "soft_post_norm"):
        assert ours["f32-reference"][key].shape == fp32[key].shape
        assert relative_l2(ours["f32-reference"][key], fp32[key]) <= 1e-4, key
        ours_err, hf_err = relative_l2(ours["mlx-cuda-v1"][key], fp32[key]), relative_l2(bf16[key], fp32[key])
        assert ours_err <= 1.5 * hf_err, f"{name} {key}: ours {ours_err:.3e} vs transformers-bf16 {hf_err:.3e}"


@pytest.mark.real_size
def test_real_size_speech_with_the_device_mel(speech_mel, references):
    """The E4B shapes (random weights, seed 3, as above) on speech_16k.wav: tests/test_device_mel_encoder.py's
    two speech criteria with the device mel (one of CI's few real-size tests, about a minute and a half)."""
    from oracles.configs import REAL
    from oracles.reference_f64 import forward_f64, log_mel_f64
    from test_device_mel_encoder import CLIPS, DEVICE, valid_rows

    from gemma3n_iree.contracts import mel as M
    from gemma3n_iree.runtime.audio import frontend as fe

    cfg = builtin_config("e4b")
    weights, fp32, bf16 = references("e4b")  # transformers' outputs on the same log-mel as this clip's:
    clip = CLIPS["speech"]
    features, valid = fe.log_mel(clip)
    np.testing.assert_array_equal(features[:valid], speech_mel)
    frames = fe.num_frames(len(clip))[0]
    samples = np.zeros((1, M.samples_for_frames(frames)), np.float32)
    samples[0, : len(clip)] = clip
    ours = {}
    for contract in (MLX_CUDA_V1, F32_REFERENCE):
        out = load_session(AudioModuleSpec(cfg, contract, (frames,), (1,), mel=DEVICE), weights).run(
            samples, np.array([len(clip)], np.int32)
        )
        ours[contract.name] = valid_rows(out)
    exact_mel, _ = log_mel_f64(clip)
    exact = forward_f64({k: np.asarray(v, np.float32) for k, v in weights.items()}, exact_mel[:valid], REAL)
    for name, key in (("encoded", "encoded_reduced"), ("soft_post_norm", "soft_post_norm")):
        ours_err, hf_err = relative_l2(ours["mlx-cuda-v1"][name], fp32[name]), relative_l2(bf16[name], fp32[name])
        exact_err = relative_l2(ours["f32-reference"][name], exact[key])
        print(
            f"\ne4b {name}: mlx-cuda-v1 {ours_err:.3e} (transformers bf16 {hf_err:.3e}); f32-reference "
            f"{exact_err:.2e} from float64"
        )
        assert ours_err <= 1.5 * hf_err, name
        assert exact_err <= 1e-5, name
