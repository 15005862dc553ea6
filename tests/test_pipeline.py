"""The parallel host pipeline (`runtime/encoder/pipeline.py`) and its batching policy (`runtime/encoder/batching.py`),
without a compiled artifact: the policy as properties, the BLAS pinning, and the conductor driven by a
fake device whose calls take time -- calls overlap (the next staged while one runs), results keep input
order, a failed input fails alone, decoding stays a bounded window ahead.  The same pipeline on real
artifacts is tests/test_encode.py (host mel) and tests/test_device_mel_cli.py (device mel).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf
from conftest import assert_bits_equal
from hypothesis import given
from hypothesis import strategies as st
from threadpoolctl import threadpool_info

from gemma3n_iree.model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP
from gemma3n_iree.runtime.audio import frontend
from gemma3n_iree.runtime.encoder.batching import call_width, may_run, power_of_two_widths
from gemma3n_iree.runtime.encoder.clips import EncodeFailed
from gemma3n_iree.runtime.encoder.encode import AudioEncoder
from gemma3n_iree.runtime.encoder.pipeline import FrontEndPool, default_workers, single_threaded_blas

SPEECH = Path(__file__).resolve().parent / "data" / "speech_16k.wav"
RATE = 16_000

# ---------------------------------------------------------------------------------------------- policy

widths_sets = st.lists(st.integers(1, 64), min_size=1, max_size=6, unique=True).map(tuple)


@given(widths_sets, st.integers(0, 300))
def test_call_width_is_the_widest_the_queue_fills(widths, queued):
    width = call_width(queued, widths)
    assert width in widths
    if queued >= min(widths):
        assert width <= queued and not any(width < w <= queued for w in widths)
    else:
        assert width == min(widths)  # fewer clips than the narrowest call: one padded call


@given(st.integers(1, 256))
def test_power_of_two_widths(widest):
    widths = power_of_two_widths(widest)
    assert widths[0] == 1 and widths[-1] == widest and list(widths) == sorted(set(widths))
    assert all(w & (w - 1) == 0 for w in widths[:-1])
    # any number of clips up to the widest is at most bit_length full calls
    for queued in range(1, widest + 1):
        calls, left = 0, queued
        while left:
            left -= call_width(left, widths)
            calls += 1
        assert calls <= queued.bit_length()


@given(st.integers(0, 100), st.integers(1, 64), st.booleans(), st.floats(0, 1), st.booleans())
def test_may_run(queued, widest, settled, waited, idle):
    runs = may_run(queued, widest, settled=settled, waited_s=waited, max_wait_s=0.005, device_idle=idle)
    if queued == 0:
        assert not runs
    elif queued >= widest or settled:
        assert runs
    else:  # a partial call only runs on an idle device, after the wait
        assert runs == (idle and waited >= 0.005)


def test_power_of_two_widths_refuses_zero():
    with pytest.raises(ValueError, match="at least one clip"):
        power_of_two_widths(0)


# ---------------------------------------------------------------------------------------------- BLAS


def blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_blas_is_pinned_while_any_pool_is_open_and_restored_after():
    before = blas_threads()
    assert before, "NumPy's BLAS should be visible to threadpoolctl"
    first = FrontEndPool(2)
    assert blas_threads() == [1] * len(before)
    with single_threaded_blas():  # a second holder (the server and an encode in one process)
        first.shutdown()
        assert blas_threads() == [1] * len(before)  # still held by the second
    assert blas_threads() == before
    with pytest.raises(ValueError, match="at least 1"):
        FrontEndPool(0)
    assert blas_threads() == before
    assert FrontEndPool().workers == default_workers() >= 1


def test_host_mel_has_the_same_bits_with_blas_pinned():
    """OpenBLAS splits a GEMM's rows and columns between threads, never the sum: pinning it changes no bit
    (a 30 s clip: a matmul large enough to be threaded when it is not pinned)."""
    speech, _ = sf.read(SPEECH, dtype="float32")
    clip = np.tile(speech, 10)[: frontend.MAX_CLIP_SAMPLES]
    free, _ = frontend.log_mel(clip)
    with single_threaded_blas():
        pinned, _ = frontend.log_mel(clip)
    assert_bits_equal(pinned, free, "log-mel with BLAS pinned to one thread")


# ---------------------------------------------------------------------------------------------- the conductor


class FakeSession:
    """A device-mel session whose calls take `seconds` each on one thread, like the program thread; each
    slot's output rows hold the sum of its samples (so a misplaced clip shows), the valid count its samples."""

    def __init__(self, seconds: float, fail_on_call: int | None = None) -> None:
        self.mel = SimpleNamespace(on_device=True, name="device-matmul")
        self.seconds, self.fail_on_call = seconds, fail_on_call
        self.lock = threading.Lock()
        self.queued = 0
        self.most_in_flight = 0
        self.calls: list[int] = []
        self._thread = __import__("concurrent.futures").futures.ThreadPoolExecutor(1)

    def input_shape(self, frames: int) -> tuple[int, ...]:
        return (frames * 160,)

    def run_async(self, inputs: np.ndarray, counts: np.ndarray) -> Future:
        with self.lock:
            self.queued += 1
            self.most_in_flight = max(self.most_in_flight, self.queued)
        return self._thread.submit(self._run, inputs.copy(), counts.copy())

    def _run(self, inputs: np.ndarray, counts: np.ndarray) -> dict[str, np.ndarray]:
        time.sleep(self.seconds)
        with self.lock:
            self.queued -= 1
            self.calls.append(len(counts))
            if self.fail_on_call is not None and len(self.calls) == self.fail_on_call:
                raise RuntimeError("the device failed")
        total = inputs.astype(np.float64).sum(axis=1).astype(np.float32)
        return {
            "audio_features": np.broadcast_to(
                total[:, None, None], (len(counts), AUDIO_SOFT_TOKENS_PER_CLIP, 2)
            ).copy(),
            "encoder_hidden": np.broadcast_to(
                -total[:, None, None], (len(counts), AUDIO_SOFT_TOKENS_PER_CLIP, 3)
            ).copy(),
            "valid_tokens": counts.copy(),
        }


class FakeEncoder(AudioEncoder):
    """`AudioEncoder`'s pipeline methods (decode_file, make_clip, call_inputs, encode_files) on a fake session."""

    def __init__(self, session: FakeSession, widths: tuple[int, ...], buckets: tuple[int, ...] = (400,)) -> None:
        self.session = session
        self.config = SimpleNamespace(text_hidden_size=2, hidden_size=3)
        self.frame_buckets, self.clips_per_call = buckets, widths


def write_inputs(directory: Path, lengths: list[int]) -> list[Path]:
    rng = np.random.default_rng(0)
    paths = []
    for i, n in enumerate(lengths):
        path = directory / f"in{i}.wav"
        sf.write(path, rng.integers(-3000, 3000, n).astype(np.int16), RATE, subtype="PCM_16")
        paths.append(path)
    return paths


def expected_rows(paths: list[Path], frames: int) -> tuple[list[float], list[int], list[int]]:
    """Per clip: the sum of its samples (what the fake puts in its rows), its count, its source."""
    sums, counts, sources = [], [], []
    for source, path in enumerate(paths):
        samples = frontend.load_audio(path)[0]
        for start in range(0, len(samples), frame_samples := frames * 160):
            piece = samples[start : start + min(frame_samples, frontend.MAX_CLIP_SAMPLES)]
            sums.append(float(piece.astype(np.float64).sum().astype(np.float32)))
            counts.append(len(piece))
            sources.append(source)
    return sums, counts, sources


def test_calls_overlap_and_results_keep_input_order(tmp_path):
    """20 inputs on 4 workers, calls of up to 4 clips taking 20 ms: the next call is staged while one runs,
    every clip's rows land at its index in input order, progress ends at the totals."""
    paths = write_inputs(tmp_path, [1600 + 37 * i for i in range(20)])
    session = FakeSession(0.02)
    encoder = FakeEncoder(session, (1, 2, 4))
    seen = []
    result = encoder.encode_files(paths, workers=4, on_progress=seen.append)
    sums, counts, sources = expected_rows(paths, 400)
    np.testing.assert_array_equal(result.clip_source, sources)
    np.testing.assert_array_equal(result.audio_features[:, 0, 0], np.array(sums, np.float32))
    np.testing.assert_array_equal(result.encoder_hidden[:, -1, -1], -np.array(sums, np.float32))
    np.testing.assert_array_equal(result.valid_tokens, counts)
    assert session.most_in_flight == 2  # one running, the next staged behind it
    assert sum(session.calls) == 20 and max(session.calls) == 4
    assert (seen[-1].files_done, seen[-1].clips_done, seen[-1].failed) == (20, 20, 0)
    assert seen[-1].audio_seconds_done == pytest.approx(sum(counts) / RATE)


def test_long_inputs_and_mixed_buckets(tmp_path):
    """An input longer than 30 s becomes consecutive clips, clips of two buckets interleave in the calls,
    and each still lands at its index."""
    lengths = [RATE * 31, 900, RATE * 2, 30, RATE * 61, 2000]
    paths = write_inputs(tmp_path, lengths)
    encoder = FakeEncoder(FakeSession(0.001), (1, 2), buckets=(20, 3000))
    result = encoder.encode_files(paths, workers=3)
    sources, sums = [], []
    for source, path in enumerate(paths):
        samples = frontend.load_audio(path)[0]
        for clip in frontend.split_clips(samples):
            sources.append(source)
            sums.append(np.float32(clip.samples.astype(np.float64).sum()))
    np.testing.assert_array_equal(result.clip_source, sources)
    np.testing.assert_array_equal(result.audio_features[:, 0, 0], sums)
    np.testing.assert_array_equal(result.clip_start_s, [0, 30, 0, 0, 0, 0, 30, 60, 0])


def test_a_failed_input_fails_alone_and_a_device_error_ends_the_run(tmp_path):
    paths = write_inputs(tmp_path, [1600, 1700, 1800, 1900])
    broken = tmp_path / "broken.wav"
    broken.write_bytes(paths[1].read_bytes()[:50])
    encoder = FakeEncoder(FakeSession(0.001), (1, 2))
    with pytest.raises(EncodeFailed) as info:
        encoder.encode_files([paths[0], broken, paths[2], tmp_path / "gone.wav", paths[3]], workers=2)
    failed = info.value
    assert [(f.source, f.path) for f in failed.failures] == [(1, str(broken)), (3, str(tmp_path / "gone.wav"))]
    assert "truncated" in failed.failures[0].message and "not found" in failed.failures[1].message
    np.testing.assert_array_equal(failed.result.clip_source, [0, 2, 4])
    sums, _, _ = expected_rows([paths[0], paths[2], paths[3]], 400)
    np.testing.assert_array_equal(failed.result.audio_features[:, 0, 0], np.array(sums, np.float32))
    # a device error is not an input's fault: it ends the run
    with pytest.raises(RuntimeError, match="the device failed"):
        FakeEncoder(FakeSession(0.001, fail_on_call=2), (1,)).encode_files(paths, workers=2)


def test_decoding_and_queues_stay_a_window_ahead(tmp_path, monkeypatch):
    """With a slow device, decoding runs at most a bounded number of files ahead of the ones finished:
    memory stays bounded however many inputs are given."""
    paths = write_inputs(tmp_path, [800] * 40)
    encoder = FakeEncoder(FakeSession(0.01), (1,))
    finished = [0]
    ahead: list[int] = []
    original = AudioEncoder.decode_file

    def counting(self, path, max_seconds=None):
        ahead.append(paths.index(Path(path)) - finished[0])
        return original(self, path, max_seconds)

    monkeypatch.setattr(FakeEncoder, "decode_file", counting)
    encoder.encode_files(paths, workers=2, on_progress=lambda p: finished.__setitem__(0, p.files_done))
    assert len(ahead) == 40
    # decoded ahead of admission: lookahead = max(2 workers, 2 x widest) = 4; admitted ahead of finished:
    # the queues (2 x widest, plus one file's clips) and the calls in flight (2 x widest)
    assert max(ahead) <= 4 + 2 + 1 + 2


def test_a_result_past_plain_zip_is_saved_as_zip64(tmp_path, monkeypatch):
    """`EncodeResult.save` streams a plain ZIP from the arrays; one that would pass 4 GiB goes to np.savez
    (ZIP64) instead of failing after the work is done (the limit lowered here to a few bytes)."""
    from gemma3n_iree.runtime.encoder import npz_stream
    from gemma3n_iree.runtime.encoder.clips import EncodeResult, InputFailure

    result = EncodeResult(
        np.ones((2, 3, 4), np.float32),
        np.zeros((2, 3, 5), np.float32),
        np.array([1, 2], np.int32),
        np.array([0, 2], np.int32),
        np.zeros(2, np.float32),
        (InputFailure(1, "b.wav", "b.wav: bad"),),
    )
    result.save(tmp_path / "plain.npz")
    monkeypatch.setattr(npz_stream, "_ZIP_LIMIT", 100)
    result.save(tmp_path / "zip64.npz")
    for name in ("plain.npz", "zip64.npz"):
        with np.load(tmp_path / name) as data:
            for key, value in result.arrays().items():
                np.testing.assert_array_equal(data[key], value, err_msg=f"{name}: {key}")
            assert data["failed_error"].tolist() == ["b.wav: bad"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.npz", "zip64.npz"]  # no temporary left
