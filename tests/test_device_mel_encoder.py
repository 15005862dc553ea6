"""Encoders whose artifact computes the log-mel (`AudioModuleSpec(mel=device-...)`), tiny configuration,
llvm-cpu, against the host-mel artifact, transformers and a float64 evaluation of the spec.

* The device-mel artifact equals the host-mel artifact fed the emulated device log-mel, every output
  bit for bit: the front end is the only difference, and it is emulated exactly (tests/test_device_mel.py).
* Speech (tests/data/speech_16k.wav): mlx-cuda-v1 with the device mel is no farther from transformers
  fp32 than 1.5x transformers-bf16; f32-reference with the device mel is within 1e-5 relative L2 of a
  float64 evaluation (float64 feature extractor + tests/oracles/reference_f64.py).
* A pure chirp, the hardest case for an F32 DFT (bins 100 dB below the tone): no F32 front end is within
  1e-5 there (transformers' own fp32 pipeline is 3.5e-4 from float64: its F32 pre-emphasis), and
  f32-reference with the device mel stays within 1.5x transformers-fp32's own distance.
* The same speech criteria at the real E4B shapes: tests/test_real_speech_parity.py (with the other real-size
  audio test, sharing its E4B weights and transformers' outputs).
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
from oracles.mel_cases import chirp, speech  # noqa: E402
from oracles.reference_f64 import forward_f64, log_mel_f64  # noqa: E402

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1  # noqa: E402
from gemma3n_iree.contracts import mel as M  # noqa: E402
from gemma3n_iree.contracts.metrics import relative_l2  # noqa: E402
from gemma3n_iree.emitters.audio import AudioModuleSpec  # noqa: E402
from gemma3n_iree.model.audio_config import AudioConfig  # noqa: E402
from gemma3n_iree.runtime.audio import frontend as fe  # noqa: E402

CFG = AudioConfig.from_mapping(TINY, source="tests/oracles/configs.py TINY")
DEVICE = M.MelFrontEnd("matmul")


CLIPS = {"speech": speech("speech_16k"), "chirp": chirp()}
BUCKET = max(fe.num_frames(len(c))[0] for c in CLIPS.values())  # one bucket for every case


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


@pytest.fixture(scope="module")
def session(hf_modules):
    """session(contract, mel, clips): the BUCKET artifact with the module's weights, loaded once."""
    *_, weights = hf_modules
    loaded = {}

    def get(contract, mel: M.MelFrontEnd, clips: int = 1):
        key = (contract.name, mel, clips)
        if key not in loaded:
            loaded[key] = load_session(AudioModuleSpec(CFG, contract, (BUCKET,), (clips,), mel=mel), weights)
        return loaded[key]

    return get


def samples_batch(clips: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    batch = np.zeros((len(clips), M.samples_for_frames(BUCKET)), np.float32)
    for i, clip in enumerate(clips):
        batch[i, : len(clip)] = clip
    return batch, np.array([len(c) for c in clips], np.int32)


def valid_rows(out: dict[str, np.ndarray], slot: int = 0) -> dict[str, np.ndarray]:
    tokens = int(out["valid_tokens"][slot])
    return {"encoded": out["encoder_hidden"][slot, :tokens], "soft_post_norm": out["audio_features"][slot, :tokens]}


def test_device_artifact_equals_host_artifact_fed_the_emulated_mel(session):
    clips = [CLIPS["speech"], CLIPS["chirp"][:20000]]
    samples, counts = samples_batch(clips)
    device = session(MLX_CUDA_V1, DEVICE, clips=2).run(samples, counts)
    mel, frames = M.device_log_mel(samples, counts, BUCKET, DEVICE.dft, M.TARGET_ARITHMETIC["llvm-cpu"])
    host = session(MLX_CUDA_V1, M.HOST_MEL, clips=2).run(mel, frames)
    assert set(device) == set(host)
    for name in device:
        np.testing.assert_array_equal(
            np.asarray(device[name]).view(np.uint32), np.asarray(host[name]).view(np.uint32), err_msg=name
        )


def test_speech_mlx_cuda_v1_is_as_close_to_fp32_as_transformers_bf16(hf_modules, session):
    encoder, embedder, _ = hf_modules
    clip = CLIPS["speech"]
    features, valid = fe.log_mel(clip)
    fp32 = run_hf(encoder, embedder, features[:valid])
    bf16 = run_hf(encoder, embedder, features[:valid], dtype=torch.bfloat16)
    # the two-clip artifact of test_device_artifact_equals_host_artifact_fed_the_emulated_mel (one compile fewer),
    # the speech in both rows, the first read: a clip's rows depend on neither its call nor what it is batched
    # with (tests/test_end_to_end.py, tests/test_device_mel.py), so this is the speech's one-clip result
    ours = valid_rows(session(MLX_CUDA_V1, DEVICE, clips=2).run(*samples_batch([clip, clip])))
    for name in ("encoded", "soft_post_norm"):
        ours_err, hf_bf16_err = relative_l2(ours[name], fp32[name]), relative_l2(bf16[name], fp32[name])
        assert ours_err <= 1.5 * hf_bf16_err, f"{name}: ours {ours_err:.3e} vs transformers-bf16 {hf_bf16_err:.3e}"


@pytest.mark.parametrize("case", ["speech", "chirp"])
def test_f32_reference_against_float64(hf_modules, session, case):
    encoder, embedder, weights = hf_modules
    clip = CLIPS[case]
    exact_mel, valid = log_mel_f64(clip)
    exact = forward_f64({k: np.asarray(v, np.float32) for k, v in weights.items()}, exact_mel[:valid], TINY)
    features, _ = fe.log_mel(clip)
    fp32 = run_hf(encoder, embedder, features[:valid])
    ours = valid_rows(session(F32_REFERENCE, DEVICE).run(*samples_batch([clip])))
    for name, key in (("encoded", "encoded_reduced"), ("soft_post_norm", "soft_post_norm")):
        ours_err, hf_err = relative_l2(ours[name], exact[key]), relative_l2(fp32[name], exact[key])
        print(
            f"\n{case} {name}: f32-reference with the device mel {ours_err:.2e} from float64, "
            f"transformers fp32 {hf_err:.2e}"
        )
        if case == "speech":
            assert ours_err <= 1e-5, name
        else:
            assert ours_err <= 1.5 * hf_err, name
