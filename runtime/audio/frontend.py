"""Audio front end: decode a file, make it 16 kHz mono float32, and compute Gemma 3n log-mel features.

The log-mel computation reproduces transformers' ``Gemma3nAudioFeatureExtractor`` for one clip
(spec ``gemma3n-audio.md`` §2) operation by operation and dtype by dtype, so the features agree with it
to float32 rounding (the tests measure a max abs difference of 0 on real speech):

* the clip is zero-padded on the right to a multiple of 128 samples (``pad_to_multiple_of=128``);
* 513-sample windows every 160 samples, no centering: ``T = (N_pad - 513) // 160 + 1``;
* HTK pre-emphasis 0.97 on samples 0..511 of each window (sample 512 is unused), periodic Hann 512
  (float32), ``numpy.fft.rfft(n=1024)`` of the float32 frames (complex64 with NumPy >= 2, complex128
  with NumPy 1.x -- the same call transformers makes, so both follow NumPy's precision), magnitude,
  float64 HTK mel filterbank 125-7600 Hz (128 bins, no Slaney norm), ``log(max(mel, 1e-5))``, float32;
* valid frames = ``min(ceil(N / 160), T)`` where ``N`` is the number of real samples.

Where this module deliberately differs from calling the extractor on one clip:

* **No truncation.** The extractor cuts audio at 30 s (480000 samples). Here :func:`log_mel` never
  drops samples; long audio is cut into consecutive <= 30 s clips by :func:`split_clips` and each
  clip's features are computed by :func:`clip_features` exactly as if the clip were its own file, so
  a clip's features never depend on its neighbours (nor on the other clips of a batch).
* **Very short clips.** The extractor returns 0 frames for clips shorter than 513 samples (about
  32 ms), which the encoder cannot consume. Here such a clip (1..512 samples) is zero-padded to 640
  samples, the smallest multiple of 128 that holds one 513-sample window, and gives exactly one frame,
  which is valid. That frame equals what the extractor computes for the same clip followed by
  silence. Empty audio (0 samples) raises :class:`AudioError`.

Decoding (files and uploads alike) lives in `runtime/audio/decode.py`: libsndfile through ``soundfile``,
every container's declared length checked (a truncated file is an error, never a shorter recording),
channels averaged, other rates resampled to 16 kHz with ``soxr``.  :func:`load_audio`,
:func:`resample` and :class:`AudioError` are re-exported here for the callers of the front end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .decode import SAMPLE_RATE, AudioError, load_audio, resample

__all__ = [
    "AudioError",
    "SAMPLE_RATE",
    "FRAME_LENGTH",
    "HOP_LENGTH",
    "FFT_LENGTH",
    "N_MELS",
    "MAX_CLIP_SAMPLES",
    "MIN_SAMPLES",
    "SAMPLE_SPEECH",
    "Clip",
    "ClipFeatures",
    "load_audio",
    "resample",
    "mel_filterbank",
    "num_frames",
    "log_mel",
    "split_clips",
    "clip_features",
    "check_samples",
]

# ---------------------------------------------------------------------------------------------- constants
FRAME_LENGTH = 512  # round(16000 * 32 ms)
HOP_LENGTH = 160  # round(16000 * 10 ms)
FFT_LENGTH = 1024  # 2**ceil(log2(512)) * 2 (fft_overdrive)
N_MELS = 128
MEL_FMIN = 125.0
MEL_FMAX = 7600.0
PREEMPHASIS = 0.97  # HTK flavour
MEL_FLOOR = 1e-5
PAD_MULTIPLE = 128  # pad_to_multiple_of
MAX_CLIP_SAMPLES = 480_000  # 30 s: the extractor's max_length and the model's largest clip
WINDOW_SIZE = FRAME_LENGTH + 1  # 513: the unfold size (one extra sample for pre-emphasis)
# The shortest padded length that yields one frame: ceil(513 / 128) * 128 = 640 samples.
MIN_SAMPLES = -(-WINDOW_SIZE // PAD_MULTIPLE) * PAD_MULTIPLE
# ~7.7 s of synthetic English speech (espeak-ng), 16 kHz mono PCM16, for demos; see tests/data/README.md.
SAMPLE_SPEECH = Path(__file__).resolve().parents[1] / "data" / "sample_speech.wav"


# ---------------------------------------------------------------------------------------------- features


@lru_cache(maxsize=1)
def _window() -> np.ndarray:
    n = np.arange(FRAME_LENGTH, dtype=np.float32)
    window = 0.5 * (1 - np.cos(2 * np.pi * n / FRAME_LENGTH))
    window = window.astype(np.float32)
    window.flags.writeable = False
    return window


@lru_cache(maxsize=1)
def mel_filterbank() -> np.ndarray:
    """The float64 [513, 128] HTK mel filterbank (125-7600 Hz, no norm), as transformers builds it."""
    n_freqs = FFT_LENGTH // 2 + 1
    all_freqs = np.arange(n_freqs, dtype=np.float32) * (SAMPLE_RATE / FFT_LENGTH)
    m_min = 2595.0 * math.log10(1.0 + (MEL_FMIN / 700.0))
    m_max = 2595.0 * math.log10(1.0 + (MEL_FMAX / 700.0))
    m_pts = np.linspace(m_min, m_max, N_MELS + 2)
    f_pts = 700.0 * (10 ** (m_pts / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = np.expand_dims(f_pts, 0) - np.expand_dims(all_freqs, 1)
    zero = np.zeros(1, dtype=np.float32)
    down_slopes = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up_slopes = slopes[:, 2:] / f_diff[1:]
    fb = np.maximum(zero, np.minimum(down_slopes, up_slopes))
    fb.flags.writeable = False
    return fb


def _padded_length(n: int) -> int:
    return max(-(-n // PAD_MULTIPLE) * PAD_MULTIPLE, MIN_SAMPLES)


def num_frames(n_samples: int) -> tuple[int, int]:
    """``(frames, valid_frames)`` that :func:`log_mel` returns for ``n_samples`` real samples (>= 1)."""
    if n_samples < 1:
        raise AudioError(f"no audio samples (got {n_samples})")
    frames = (_padded_length(n_samples) - WINDOW_SIZE) // HOP_LENGTH + 1
    return frames, min(-(-n_samples // HOP_LENGTH), frames)


def check_samples(samples: np.ndarray, what: str) -> np.ndarray:
    x = np.asarray(samples)
    if x.ndim != 1:
        raise AudioError(f"{what}: expected a 1-D mono sample array, got shape {x.shape}")
    if not np.issubdtype(x.dtype, np.floating):
        raise AudioError(f"{what}: expected float samples in [-1, 1], got dtype {x.dtype}")
    if x.size == 0:
        raise AudioError(f"{what}: no audio samples (0 samples)")
    if not np.isfinite(x).all():
        raise AudioError(f"{what}: contains non-finite (NaN/Inf) samples")
    return x.astype(np.float32, copy=False)


def log_mel(samples: np.ndarray) -> tuple[np.ndarray, int]:
    """Gemma 3n log-mel features of one 16 kHz mono clip: ``(features float32 [T, 128], valid_frames)``.

    Identical to ``Gemma3nAudioFeatureExtractor()(samples)`` (``input_features[0]`` and
    ``input_features_mask[0].sum()``) for clips of 513..480000 samples, see the module docstring.
    Longer input is not truncated (equal to the extractor with ``truncation=False``); use
    :func:`clip_features` to get <= 30 s clips for the model. Clips of 1..512 samples are padded to one
    frame. The samples are converted to float32 first, as the extractor does.

    Frames past ``valid_frames`` (at most 3 of them, covering only the zero padding) are still
    computed; the encoder masks them.
    """
    x = check_samples(samples, "log_mel")
    n = x.shape[0]
    frames, valid = num_frames(n)
    waveform = np.zeros((1, _padded_length(n)), dtype=np.float32)
    waveform[0, :n] = x

    # The same operations, in the same dtypes and shapes, as Gemma3nAudioFeatureExtractor._extract_spectrogram.
    windows = np.lib.stride_tricks.as_strided(
        waveform,
        shape=(1, frames, WINDOW_SIZE),
        strides=(waveform.strides[0], waveform.strides[1] * HOP_LENGTH, waveform.strides[1]),
        writeable=False,
    )
    first_in_frame = windows[..., :1] * (1.0 - PREEMPHASIS)
    rest_in_frame = windows[..., 1:-1] - PREEMPHASIS * windows[..., :-2]
    y = np.concatenate([first_in_frame, rest_in_frame], axis=-1)
    y = y * _window()
    spectrum = np.abs(np.fft.rfft(y, n=FFT_LENGTH, axis=-1))
    mel = np.matmul(spectrum, mel_filterbank())
    logmel = np.log(np.maximum(mel, np.array(MEL_FLOOR, dtype=np.float64)))
    return logmel[0].astype(np.float32), valid


# ---------------------------------------------------------------------------------------------- long audio


@dataclass(frozen=True)
class Clip:
    """A consecutive piece of a longer signal: ``samples`` starts ``start_s`` seconds in."""

    index: int
    start_sample: int
    samples: np.ndarray

    @property
    def start_s(self) -> float:
        return self.start_sample / SAMPLE_RATE


@dataclass(frozen=True)
class ClipFeatures:
    """Features of one clip: ``features`` float32 [T, 128], the first ``valid_frames`` are real audio."""

    index: int
    start_sample: int
    num_samples: int
    features: np.ndarray
    valid_frames: int

    @property
    def start_s(self) -> float:
        return self.start_sample / SAMPLE_RATE

    @property
    def frames(self) -> int:
        return self.features.shape[0]


def split_clips(samples: np.ndarray, max_samples: int = MAX_CLIP_SAMPLES) -> list[Clip]:
    """Cut 16 kHz audio into consecutive clips of ``max_samples`` (30 s); the last one is shorter.

    Nothing is dropped or overlapped: the clips concatenated give ``samples`` back exactly, and clip
    ``i`` starts at ``i * max_samples / 16000`` seconds. Clips are views of ``samples``. A final clip
    shorter than 513 samples (e.g. 30.01 s of audio) still gives one frame, see :func:`log_mel`.
    """
    x = np.asarray(samples)
    if x.ndim != 1:
        raise AudioError(f"split_clips: expected a 1-D mono sample array, got shape {x.shape}")
    if x.size == 0:
        raise AudioError("split_clips: no audio samples (0 samples)")
    if int(max_samples) != max_samples or max_samples < 1:
        raise AudioError(f"split_clips: max_samples must be a positive integer, got {max_samples!r}")
    max_samples = int(max_samples)
    return [
        Clip(index=i, start_sample=start, samples=x[start : start + max_samples])
        for i, start in enumerate(range(0, x.shape[0], max_samples))
    ]


def clip_features(samples: np.ndarray, max_samples: int = MAX_CLIP_SAMPLES) -> list[ClipFeatures]:
    """Split 16 kHz audio with :func:`split_clips` and compute :func:`log_mel` of each clip on its own.

    Each clip is treated exactly as if it were its own file, so its features depend only on its own
    samples. With the default ``max_samples`` every clip has at most 2997 frames.
    """
    x = check_samples(samples, "clip_features")
    out = []
    for clip in split_clips(x, max_samples):
        features, valid = log_mel(clip.samples)
        out.append(
            ClipFeatures(
                index=clip.index,
                start_sample=clip.start_sample,
                num_samples=int(clip.samples.shape[0]),
                features=features,
                valid_frames=valid,
            )
        )
    return out
