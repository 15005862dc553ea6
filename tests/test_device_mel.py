"""The device log-mel front end (contracts/mel.py, emitters/mel.py, templates mel_*.mlir.j2), on llvm-cpu.

* Shapes and counts: the frame count template equals the host's count for every clip length up to
  30 s, and a bucket's sample width is exactly the longest clip that bucket takes.
* The emulation's time-domain steps are the host's (transformers') frames bit for bit, and the compiled
  front end equals the emulation with IREE's llvm-cpu arithmetic (serial F32 sums in fused multiply-
  adds, fused butterflies) bit for bit, for both DFTs, on tiny cases and on real speech; a clip's rows
  depend neither on its slot, its call's other clips, nor its bucket.
* Against the float64 evaluation of the same frames, every device log-mel value is within the rigorous
  error bound of its F32 operations (`contracts.mel.error_bound` derives it), and against the host
  (bit-identical to transformers) the measured distances are asserted: `HOST_BOUNDS`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from gemma3n_iree.contracts import mel as M
from gemma3n_iree.contracts.policy import MLX_CUDA_V1
from gemma3n_iree.emitters.mel import MelEmitter, mel_tables
from gemma3n_iree.runtime.audio import frontend as fe

sys.path.insert(0, str(Path(__file__).parent))
from conftest import probe  # noqa: E402
from oracles.mel_cases import TINY_FRAMES, case, distances, padded_batch, speech, tiny_clips  # noqa: E402
from oracles.reference_f64 import mel_filterbank_f64  # noqa: E402


def test_the_filterbank_is_the_spec_filterbank():
    np.testing.assert_array_equal(fe.mel_filterbank(), mel_filterbank_f64())


# ---------------------------------------------------------------------------------------------- counts and widths
def test_frame_counts_equal_the_host_count_for_every_clip_length():
    lengths = np.arange(fe.MAX_CLIP_SAMPLES + 1, dtype=np.int32)
    want = np.array([0] + [fe.num_frames(int(n))[1] for n in lengths[1:]], np.int32)
    np.testing.assert_array_equal(M.frame_counts(lengths), want)
    _, run = probe(MLX_CUDA_V1, lambda o: MelEmitter(o).frame_counts(len(lengths)))
    np.testing.assert_array_equal(run(lengths)[0], want)


def test_a_buckets_sample_width_is_the_longest_clip_it_takes():
    valid = M.frame_counts(np.arange(fe.MAX_CLIP_SAMPLES + 200))  # nondecreasing in the length
    assert np.all(np.diff(valid) >= 0)
    for frames in range(1, fe.num_frames(fe.MAX_CLIP_SAMPLES)[0] + 1):
        longest = int(np.searchsorted(valid, frames, side="right")) - 1
        assert M.samples_for_frames(frames) == longest, frames
    assert M.samples_for_frames(2997) == fe.MAX_CLIP_SAMPLES
    assert M.samples_for_frames(1) == fe.MIN_SAMPLES


# ---------------------------------------------------------------------------------------------- inputs
def host_frames(samples: np.ndarray) -> np.ndarray:
    """transformers' steps up to the window, written out as the extractor does them (spec section 2.4)."""
    n = len(samples)
    frames, _ = fe.num_frames(n)
    waveform = np.zeros(max(-(-n // 128) * 128, fe.MIN_SAMPLES), np.float32)
    waveform[:n] = samples
    windows = np.lib.stride_tricks.sliding_window_view(waveform, 513)[::160][:frames]
    first = windows[:, :1] * (1.0 - 0.97)
    rest = windows[:, 1:-1] - 0.97 * windows[:, :-2]
    periodic_hann = (0.5 * (1 - np.cos(2 * np.pi * np.arange(512, dtype=np.float32) / 512))).astype(np.float32)
    return np.concatenate([first, rest], axis=-1) * periodic_hann


@pytest.mark.parametrize("which", ["tiny", "speech_16k"])
def test_emulated_frames_are_the_host_frames_bit_for_bit(which):
    for clip in [c for c in case(which)[0] if len(c)]:
        frames = fe.num_frames(len(clip))[0]
        batch, counts = padded_batch([clip], frames)
        np.testing.assert_array_equal(
            M.windowed_frames(batch, counts, frames)[0].view(np.uint32),
            host_frames(clip).astype(np.float32).view(np.uint32),
        )


# ---------------------------------------------------------------------------------------------- compiled == emulation
def compiled_front(dft: str, clips: int, frames: int):
    """The front end alone behind a probe entry (compiled once per shape), tables passed as arguments."""
    _, run = probe(MLX_CUDA_V1, lambda o: MelEmitter(o).front(clips, frames, M.MelFrontEnd(dft)))
    tables = [t.values for t in mel_tables(M.MelFrontEnd(dft))]
    return lambda samples, counts: run(samples, counts, *tables)


@pytest.mark.parametrize("dft", M.DFT_METHODS)
def test_front_pieces_equal_the_emulation_bit_for_bit(dft):
    rng = np.random.default_rng(1)
    b, t = 2, TINY_FRAMES
    batch, counts = padded_batch(tiny_clips(t)[:2], t)
    _, framing = probe(MLX_CUDA_V1, lambda o: MelEmitter(o).framing(b, t))
    y = framing(batch, counts, M.hann_window())[0]
    np.testing.assert_array_equal(y.view(np.uint32), M.windowed_frames(batch, counts, t).view(np.uint32))
    _, spectrum = probe(MLX_CUDA_V1, lambda o: MelEmitter(o).dft(b, t, dft))
    re, im = spectrum(y, *[tb.values for tb in mel_tables(M.MelFrontEnd(dft))[1:-1]])
    want_re, want_im = M.DFTS[dft](y, M.TARGET_ARITHMETIC["llvm-cpu"])
    np.testing.assert_array_equal(re.view(np.uint32), want_re.view(np.uint32))
    np.testing.assert_array_equal(im.view(np.uint32), want_im.view(np.uint32))
    _, magnitude = probe(MLX_CUDA_V1, lambda o: MelEmitter(o).magnitude(b, t))
    scale = np.float32(2.0) ** rng.integers(-60, 60, re.shape).astype(np.float32)  # far apart exponents
    re_wide, im_wide = (re * scale).astype(np.float32), (im / scale).astype(np.float32)
    np.testing.assert_array_equal(
        magnitude(re_wide, im_wide)[0].view(np.uint32), M.magnitude(re_wide, im_wide).view(np.uint32)
    )
    mag = M.magnitude(re, im)
    _, log = probe(MLX_CUDA_V1, lambda o: MelEmitter(o).log_mel(b, t))
    np.testing.assert_array_equal(
        log(mag, M.filterbank_f32())[0].view(np.uint32), M.log_floor(M.mel_power(mag, "serial-fma")).view(np.uint32)
    )


@pytest.mark.parametrize("dft", M.DFT_METHODS)
@pytest.mark.parametrize("which", ["tiny", "speech_16k", "sample_speech"])
def test_front_equals_the_emulation_bit_for_bit(dft, which):
    clips, frames = case(which)
    batch, counts = padded_batch(clips, frames)
    got, got_frames = compiled_front(dft, len(clips), frames)(batch, counts)
    want, want_frames = M.device_log_mel(batch, counts, frames, dft, M.TARGET_ARITHMETIC["llvm-cpu"])
    np.testing.assert_array_equal(got_frames, want_frames)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_a_clips_rows_depend_on_neither_its_call_nor_its_bucket():
    clip = speech("speech_16k")[:8000]  # 0.5 s: 50 valid frames
    valid = fe.num_frames(len(clip))[1]
    alone, _ = compiled_front("matmul", 1, 52)(*padded_batch([clip], 52, garbage_seed=None))
    others = [np.full(3000, 0.5, np.float32), clip, speech("speech_16k")[8000:20000]]
    batch, counts = padded_batch(others, 80, garbage_seed=9)
    among, _ = compiled_front("matmul", 3, 80)(batch, counts)
    np.testing.assert_array_equal(among[1, :valid].view(np.uint32), alone[0, :valid].view(np.uint32))


# ---------------------------------------------------------------------------------------------- bounds
#: Measured device-vs-host distances over the valid frames, asserted with ~1.5x headroom (the rigorous
#: bound is what every value must meet; these guard against regressions): (max |diff| of log-mel,
#: i.e. the largest relative error of a mel power; max F32 ULP distance; BF16-rounded values that differ;
#: values compared). Why they are this size: the device DFT errs by about u * sum|y| in every bin whatever
#: the bin's own energy, so its relative error grows in bins far below a frame's loudest (the tiny cases'
#: chirp: bins 100 dB under the tone), while the host's FFT (pocketfft, F32 with accurate twiddles) stays
#: within 1e-6 of the float64 value. The ULP distances peak at log-mel values near 0 (mel power near 1),
#: where F32 spacing is finest. After the BF16 mel boundary at most 0.3 % (tiny) and 0.02 % (speech) of the
#: features move, each by one BF16 step.
HOST_BOUNDS = {
    ("matmul", "tiny"): (7.5e-3, 8_500, 11, 2_688),
    ("matmul", "speech_16k"): (8.5e-5, 425_000, 11, 40_704),
    ("matmul", "sample_speech"): (4.5e-4, 23_000, 11, 98_560),
    ("rfft", "tiny"): (2.8e-2, 29_000, 14, 2_688),
    ("rfft", "speech_16k"): (1.4e-4, 226_000, 8, 40_704),
    ("rfft", "sample_speech"): (7.5e-4, 33_000, 8, 98_560),
}


@pytest.mark.parametrize("dft", M.DFT_METHODS)
@pytest.mark.parametrize("which", ["tiny", "speech_16k", "sample_speech"])
def test_device_mel_within_its_bound_and_close_to_the_host(dft, which):
    clips, frames = case(which)
    clips = [c for c in clips if len(c)]  # the empty slot has no host features
    batch, counts = padded_batch(clips, frames)
    got, valid = compiled_front(dft, len(clips), frames)(batch, counts)
    y = M.windowed_frames(batch, counts, frames)
    exact = M.float64_log_mel(y)
    bound = M.error_bound(y, dft)
    device, host = [], []
    for i, clip in enumerate(clips):
        rows = slice(0, int(valid[i]))
        excess = np.abs(got[i, rows] - exact[i, rows]) - bound[i, rows]
        assert excess.max() <= 0, f"clip {i}: {int((excess > 0).sum())} values outside the rigorous bound"
        device.append(got[i, rows])
        host.append(fe.log_mel(clip)[0][rows])
    device_all, host_all = np.concatenate(device), np.concatenate(host)
    measured = distances(device_all, host_all)
    max_abs, max_ulp, differ = measured["max_abs"], measured["max_ulp"], measured["bf16_differ"]
    limit_abs, limit_ulp, limit_differ, size = HOST_BOUNDS[(dft, which)]
    print(
        f"\n{dft} {which}: device vs host max abs {max_abs:.3g}, max ulp {max_ulp}, "
        f"BF16 differing {differ} of {device_all.size}"
    )
    assert device_all.size == size
    assert max_abs <= limit_abs and max_ulp <= limit_ulp and differ <= limit_differ
