"""Benchmark the encode entry points: median wall time of a synchronous call, warm-up excluded.

Two times per entry:

* `median_ms`, end to end: `session.run(inputs, counts)`, the upload of the mel (or, for an artifact
  that computes the mel, of the samples), every dispatch of the front end, encoder and embedder and the
  download of the outputs (audio_features and encoder_hidden, a few MB per clip): what a user of the
  Python API waits for once the features (or samples) are in memory;
* `execute_ms`, device side: the same synchronous call with the mel already on the device and the
  results left there, which is what the PyTorch reference times (CUDA events around the model, its
  inputs and outputs on the GPU); the runtime's own overhead is included.

Prints one JSON line per (frames, clips) entry, the same shape of record as the PyTorch reference
script, so ratios can be taken in one run.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterator

import numpy as np

from ..runtime.encoder.audio_session import AudioSession

FRAME_SECONDS = 0.01  # 10 ms hop: 3000 frames = 30 s


def speechlike_mel(clips: int, frames: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(frames)[None, :, None]
    return (rng.normal(-4.0, 2.0, (clips, frames, 128)) + 3.0 * np.sin(t / 7.0)).astype(np.float32)


def speechlike_samples(clips: int, samples: int, seed: int = 0) -> np.ndarray:
    """[clips, samples] 16 kHz noise under a syllable-rate envelope (what a device-mel entry reads)."""
    rng = np.random.default_rng(seed)
    t = np.arange(samples)[None, :] / 16000.0
    envelope = 0.1 * (1.2 + np.sin(2 * np.pi * 4.0 * t))
    return (rng.normal(0.0, 1.0, (clips, samples)) * envelope).astype(np.float32)


def bench_inputs(session: AudioSession, frames: int, clips: int) -> tuple[np.ndarray, np.ndarray]:
    """Full-length inputs of the (frames, clips) entry: features and frame counts, or samples and their counts."""
    shape = session.input_shape(frames)
    if session.mel.on_device:
        return speechlike_samples(clips, shape[0]), np.full(clips, shape[0], np.int32)
    return speechlike_mel(clips, frames), np.full(clips, frames, np.int32)


def bench_entries(
    session: AudioSession, warmup: int = 3, repeats: int = 20, entries: list[tuple[int, int]] | None = None
) -> Iterator[dict]:
    """One record per entry: median/min ms per call and audio-seconds per second."""
    for frames, clips in entries or session.buckets:
        inputs, counts = bench_inputs(session, frames, clips)
        for _ in range(warmup):
            session.run(inputs, counts)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            session.run(inputs, counts)
            times.append((time.perf_counter() - start) * 1e3)
        median = statistics.median(times)
        execute = (
            statistics.median(
                session.time_execution(
                    session.entries[(frames, clips)].name, (inputs, counts), warmup=1, repeats=repeats
                )
            )
            * 1e3
        )
        audio_s = clips * frames * FRAME_SECONDS
        yield {
            "impl": "gemma3n-iree",
            "mel": session.mel.name,
            "frames": frames,
            "batch": clips,
            "median_ms": round(median, 3),
            "min_ms": round(min(times), 3),
            "execute_ms": round(execute, 3),
            "repeats": repeats,
            "audio_s_per_s": round(audio_s / (median / 1e3), 1),
        }


def print_records(records: Iterator[dict]) -> list[dict]:
    out = []
    for record in records:
        print(json.dumps(record), flush=True)
        out.append(record)
    return out
