"""Inputs of the device log-mel measurements, shared by tests/test_device_mel*.py and
scripts/device_mel_gpu.py (so CPU and GPU figures are taken on the same samples): tiny cases that
stress the front end, the two bundled speech files, and the batch layout a device-mel entry reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gemma3n_iree.contracts.mel import samples_for_frames
from gemma3n_iree.runtime.audio import frontend as fe

ROOT = Path(__file__).resolve().parents[2]
SPEECH = {"speech_16k": ROOT / "tests" / "data" / "speech_16k.wav", "sample_speech": fe.SAMPLE_SPEECH}
TINY_FRAMES = 9


def tiny_clips(frames: int = TINY_FRAMES) -> list[np.ndarray]:
    """Noise over the whole bucket, a chirp, silence, one sample, one 513-sample window, an empty slot."""
    rng = np.random.default_rng(0)
    n = samples_for_frames(frames)
    t = np.arange(n) / fe.SAMPLE_RATE
    return [
        rng.normal(0, 0.3, n).astype(np.float32),
        (0.5 * np.sin(2 * np.pi * (200 + 3000 * t) * t)).astype(np.float32)[: n - 300],
        np.zeros(700, np.float32),
        np.array([0.25], np.float32),
        rng.uniform(-1, 1, 513).astype(np.float32),
        np.zeros(0, np.float32),
    ]


def chirp(seconds: float = 3.0) -> np.ndarray:
    """A 0.5-amplitude linear chirp from 200 Hz: the hardest input for an F32 DFT (bins 100 dB down)."""
    t = np.arange(int(seconds * fe.SAMPLE_RATE)) / fe.SAMPLE_RATE
    return (0.5 * np.sin(2 * np.pi * (200 + 3000 * t) * t)).astype(np.float32)


def speech(name: str) -> np.ndarray:
    return fe.load_audio(SPEECH[name])[0]


def case(name: str) -> tuple[list[np.ndarray], int]:
    """(clips, frame bucket) of a named measurement: "tiny" or one of SPEECH."""
    if name == "tiny":
        return tiny_clips(), TINY_FRAMES
    clip = speech(name)
    return [clip], fe.num_frames(len(clip))[0]


def padded_batch(clips: list[np.ndarray], frames: int, garbage_seed: int | None = 5) -> tuple[np.ndarray, np.ndarray]:
    """[len(clips), samples_for_frames(frames)] samples (random garbage past each clip: the front end must
    ignore it; zeros with `garbage_seed` None) and the counts."""
    width = samples_for_frames(frames)
    rng = np.random.default_rng(garbage_seed)
    batch = (
        rng.normal(0, 1, (len(clips), width)) if garbage_seed is not None else np.zeros((len(clips), width))
    ).astype(np.float32)
    for i, clip in enumerate(clips):
        batch[i, : len(clip)] = clip
    return batch, np.array([len(c) for c in clips], np.int32)


def distances(got: np.ndarray, want: np.ndarray) -> dict[str, float]:
    """Device-vs-host distances of log-mel values: max |diff| (= the largest relative error of a mel
    power), max F32 ULP distance, and how many BF16-rounded values differ."""
    ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    import ml_dtypes

    differ = int((got.astype(ml_dtypes.bfloat16) != want.astype(ml_dtypes.bfloat16)).sum())
    return {
        "max_abs": float(np.abs(got - want).max()),
        "max_ulp": int(ulps.max()),
        "bf16_differ": differ,
        "values": int(got.size),
    }
