"""Audio front end (runtime/audio/frontend.py): decoding, resampling, log-mel features, long-audio clips.

The reference is transformers' Gemma3nAudioFeatureExtractor (spec gemma3n-audio.md §2). Every
derived audio file (other rates, channel counts, sample formats, containers) is written at test time
from the espeak-ng fixture tests/data/speech_16k.wav (see tests/data/README.md).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from gemma3n_iree.runtime.audio import frontend
from gemma3n_iree.runtime.audio.frontend import (
    MAX_CLIP_SAMPLES,
    SAMPLE_RATE,
    AudioError,
    clip_features,
    load_audio,
    log_mel,
    mel_filterbank,
    num_frames,
    resample,
    split_clips,
)

sf = pytest.importorskip("soundfile", reason="soundfile (libsndfile) decodes the audio files")

DATA = Path(__file__).parent / "data"
SPEECH = DATA / "speech_16k.wav"
TOL = 1e-4  # required agreement with transformers, absolute, on log-mel values


@pytest.fixture(scope="module")
def extractor():
    pytest.importorskip("torch", reason="transformers' Gemma 3n feature extractor is imported with torch installed")
    transformers = pytest.importorskip("transformers", reason="transformers is the reference feature extractor")
    return transformers.Gemma3nAudioFeatureExtractor()


def hf(extractor, samples: np.ndarray, **kwargs) -> tuple[np.ndarray, int]:
    out = extractor(samples, return_tensors="np", **kwargs)
    return out["input_features"][0], int(out["input_features_mask"][0].sum())


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    x, rate = load_audio(SPEECH)
    assert rate == SAMPLE_RATE
    return x


@pytest.fixture(scope="module")
def speech_ref(speech, extractor):
    return hf(extractor, speech)


def mel_upper_edges() -> np.ndarray:
    """Upper edge (Hz) of each of the 128 triangular mel filters."""
    m = np.linspace(2595 * math.log10(1 + 125 / 700), 2595 * math.log10(1 + 7600 / 700), 130)
    return (700 * (10 ** (m / 2595) - 1))[2:]


# ---------------------------------------------------------------------------------------------- fixtures on disk


def test_fixture_and_bundled_sample_are_small_16k_mono_pcm16():
    info = sf.info(str(SPEECH))
    assert (info.samplerate, info.channels, info.subtype) == (16000, 1, "PCM_16")
    assert 2.0 <= info.duration <= 6.0 and SPEECH.stat().st_size <= 200_000
    sample = frontend.SAMPLE_SPEECH
    info = sf.info(str(sample))
    assert (info.samplerate, info.channels, info.subtype) == (16000, 1, "PCM_16")
    assert 5.0 <= info.duration <= 8.0 and sample.stat().st_size <= 300_000
    x, _ = load_audio(sample)
    assert np.abs(x).max() > 0.1  # really holds speech, not silence


# ---------------------------------------------------------------------------------------------- vs transformers


def test_constants_window_and_filterbank_match_transformers(extractor):
    assert (extractor.frame_length, extractor.hop_length, extractor.fft_length) == (
        frontend.FRAME_LENGTH,
        frontend.HOP_LENGTH,
        frontend.FFT_LENGTH,
    )
    assert float(extractor.mel_floor) == frontend.MEL_FLOOR
    assert extractor.preemphasis == frontend.PREEMPHASIS and extractor.preemphasis_htk_flavor
    assert extractor.per_bin_mean is None and extractor.per_bin_stddev is None
    np.testing.assert_array_equal(frontend._window(), extractor.window)
    fb = mel_filterbank()
    assert fb.dtype == np.float64 and fb.shape == (513, 128)
    np.testing.assert_array_equal(fb, extractor.mel_filters)
    rows = np.flatnonzero(fb.any(axis=1))
    assert (rows.min(), rows.max()) == (9, 486)  # spec §2.2


def test_speech_matches_transformers(speech, speech_ref):
    features, valid = log_mel(speech)
    ref, ref_valid = speech_ref
    assert features.dtype == np.float32 and features.shape == ref.shape == (318, 128)
    assert valid == ref_valid == 318
    diff = float(np.abs(features - ref).max())
    assert diff <= TOL, f"max abs difference vs transformers: {diff}"


@pytest.mark.parametrize("n", [513, 640, 1000, 16000, 16001, 80000, 112037, 160000, 479999, 480000])
def test_lengths_match_transformers(extractor, speech, n):
    # Speech, tiled to length, plus a little noise so no frame is digital silence.
    rng = np.random.default_rng(n)
    x = np.resize(speech, n) + 1e-3 * rng.standard_normal(n).astype(np.float32)
    features, valid = log_mel(x)
    ref, ref_valid = hf(extractor, x)
    assert features.shape == ref.shape and valid == ref_valid
    assert float(np.abs(features - ref).max()) <= TOL


def test_float64_input_is_rounded_to_float32_like_transformers(extractor, speech):
    x = speech.astype(np.float64) + 1e-9  # not representable in float32
    features, _ = log_mel(x)
    ref, _ = hf(extractor, x)
    assert float(np.abs(features - ref).max()) <= TOL


def test_silence_is_log_mel_floor():
    features, valid = log_mel(np.zeros(16000, np.float32))
    np.testing.assert_allclose(features, np.float32(math.log(1e-5)), rtol=0, atol=1e-6)
    assert valid == 97


# ---------------------------------------------------------------------------------------------- frame counts


@pytest.mark.parametrize(
    "n, frames, valid",
    [
        (480_000, 2997, 2997),  # 30 s
        (160_000, 997, 997),  # 10 s
        (80_000, 497, 497),  # 5 s alone (in the spec's batch with a longer clip it shows 500 valid)
        (112_037, 698, 698),  # 7 s + 37: padded to 112128
        (112_128, 698, 698),
        (16_000, 97, 97),  # 1 s
        (16_001, 98, 98),  # padded to 16128 -> one more frame
        (513, 1, 1),
        (512, 1, 1),  # shorter than one window: padded to 640 samples (transformers: 0 frames)
        (160, 1, 1),  # 0.01 s
        (1, 1, 1),
        (600_000, 3748, 3748),  # log_mel itself never truncates
    ],
)
def test_frame_count_table(n, frames, valid):
    assert num_frames(n) == (frames, valid)
    assert frames == (max(-(-n // 128) * 128, 640) - 513) // 160 + 1
    assert valid == min(-(-n // 160), frames)
    features, got_valid = log_mel(np.full(n, 0.01, np.float32))
    assert features.shape == (frames, 128) and got_valid == valid


def test_spec_frame_counts_match_transformers(extractor):
    for n, frames in [(480_000, 2997), (160_000, 997), (600_000, 2997)]:  # >30 s: transformers truncates
        ref, valid = hf(extractor, np.full(n, 0.01, np.float32))
        assert ref.shape[0] == valid == frames


@pytest.mark.parametrize("n", [1, 160, 384, 512])
def test_very_short_audio_gives_one_frame(extractor, speech, n):
    x = speech[8000 : 8000 + n]
    features, valid = log_mel(x)
    assert features.shape == (1, 128) and valid == 1
    # transformers gives no frame at all for < 513 samples ...
    assert extractor(x, return_tensors="np")["input_features"].shape[1] == 0
    # ... and ours equals what it computes for the same clip followed by silence up to one window.
    ref, ref_valid = hf(extractor, np.concatenate([x, np.zeros(513 - n, np.float32)]))
    assert ref.shape == (1, 128) and ref_valid == 1
    assert float(np.abs(features - ref).max()) <= TOL


def test_num_frames_rejects_empty():
    with pytest.raises(AudioError, match="no audio samples"):
        num_frames(0)


# ---------------------------------------------------------------------------------------------- long audio


def test_split_clips_never_loses_samples():
    n = 70 * SAMPLE_RATE + 123
    x = np.arange(n, dtype=np.float32)
    clips = split_clips(x)
    assert [c.samples.shape[0] for c in clips] == [480_000, 480_000, 160_123]
    assert [c.start_s for c in clips] == [0.0, 30.0, 60.0]
    assert [c.start_sample for c in clips] == [0, 480_000, 960_000]
    assert [c.index for c in clips] == [0, 1, 2]
    np.testing.assert_array_equal(np.concatenate([c.samples for c in clips]), x)


@pytest.mark.parametrize(
    "n, sizes", [(480_000, [480_000]), (960_000, [480_000, 480_000]), (480_001, [480_000, 1]), (5, [5])]
)
def test_split_clips_boundaries(n, sizes):
    clips = split_clips(np.zeros(n, np.float32))
    assert [c.samples.shape[0] for c in clips] == sizes
    assert [c.start_s for c in clips] == [30.0 * i for i in range(len(sizes))]


def test_split_clips_custom_size_and_errors():
    clips = split_clips(np.zeros(1000, np.float32), max_samples=300)
    assert [c.samples.shape[0] for c in clips] == [300, 300, 300, 100]
    assert [c.start_s for c in clips] == [0.0, 300 / 16000, 600 / 16000, 900 / 16000]
    with pytest.raises(AudioError, match="no audio samples"):
        split_clips(np.zeros(0, np.float32))
    with pytest.raises(AudioError, match="max_samples"):
        split_clips(np.zeros(10, np.float32), max_samples=0)
    with pytest.raises(AudioError, match="1-D"):
        split_clips(np.zeros((10, 2), np.float32))


def test_clip_features_are_independent_per_clip(extractor, speech):
    # 65 s of speech: clips of 30 s, 30 s, 5 s.
    rng = np.random.default_rng(0)
    x = np.resize(speech, 65 * SAMPLE_RATE) + 1e-3 * rng.standard_normal(65 * SAMPLE_RATE).astype(np.float32)
    clips = clip_features(x)
    assert [c.start_s for c in clips] == [0.0, 30.0, 60.0]
    assert [c.num_samples for c in clips] == [480_000, 480_000, 80_000]
    assert [c.frames for c in clips] == [2997, 2997, 497]
    assert [c.valid_frames for c in clips] == [2997, 2997, 497]
    assert sum(c.num_samples for c in clips) == x.shape[0]
    # Each clip equals transformers on that clip alone ...
    for c in clips:
        ref, ref_valid = hf(extractor, x[c.start_sample : c.start_sample + c.num_samples])
        assert c.features.shape == ref.shape and c.valid_frames == ref_valid
        assert float(np.abs(c.features - ref).max()) <= TOL
    # ... which for the first clip is also what transformers gives for the whole (truncated) audio ...
    ref, _ = hf(extractor, x)
    assert float(np.abs(clips[0].features - ref).max()) <= TOL
    # ... and changing one clip's audio changes no other clip's features.
    y = x.copy()
    y[480_000:960_000] = 0.0
    other = clip_features(y)
    np.testing.assert_array_equal(other[0].features, clips[0].features)
    np.testing.assert_array_equal(other[2].features, clips[2].features)
    assert not np.array_equal(other[1].features, clips[1].features)


def test_log_mel_does_not_truncate_long_audio(extractor, speech):
    x = np.resize(speech, 500_000)
    features, valid = log_mel(x)
    assert features.shape == (3123, 128) and valid == 3123
    ref, ref_valid = hf(extractor, x, truncation=False, max_length=None)
    assert ref.shape == features.shape and ref_valid == valid
    assert float(np.abs(features - ref).max()) <= TOL


def test_short_last_clip_gives_one_frame():
    clips = clip_features(np.full(480_010, 0.01, np.float32))
    assert [c.frames for c in clips] == [2997, 1] and [c.valid_frames for c in clips] == [2997, 1]


# ---------------------------------------------------------------------------------------------- decoding


def test_pcm16_fixture_decodes_to_int_over_32768(speech):
    raw, rate = sf.read(str(SPEECH), dtype="int16")
    assert rate == 16000
    np.testing.assert_array_equal(speech, raw.astype(np.float32) / 32768)


@pytest.mark.parametrize(
    "fmt, subtype, ext",
    [
        ("WAV", "PCM_16", "wav"),
        ("WAV", "PCM_24", "wav"),
        ("WAV", "PCM_32", "wav"),
        ("WAV", "FLOAT", "wav"),
        ("WAV", "DOUBLE", "wav"),
        ("FLAC", "PCM_16", "flac"),
        ("FLAC", "PCM_24", "flac"),
        ("AIFF", "PCM_16", "aiff"),
    ],
)
def test_lossless_round_trips_are_exact(tmp_path, speech, fmt, subtype, ext):
    path = tmp_path / f"speech.{ext}"
    sf.write(str(path), speech, 16000, format=fmt, subtype=subtype)
    x, rate = load_audio(path)
    assert rate == 16000 and x.dtype == np.float32 and x.ndim == 1
    np.testing.assert_array_equal(x, speech)  # 16-bit values are exact in every one of these formats


def _lossy_check(path: Path, speech: np.ndarray, rate: int) -> None:
    """A lossy file decodes to the same speech: same length, waveform correlation > 0.99, same frame
    counts, and on the cells that hold speech energy (log-mel > -6, ~84 % of the fixture) a median
    absolute log-mel difference <= 0.25 (measured 0.04 MP3, 0.09 Vorbis, 0.13 Opus). The codecs
    discard quiet bands, so a tight per-cell bound would test the codec, not the decoder."""
    x, got_rate = load_audio(path)
    assert got_rate == rate and x.dtype == np.float32
    assert x.shape == speech.shape  # libsndfile removes the codec's delay and padding
    assert np.corrcoef(x, speech)[0, 1] > 0.99
    features, valid = log_mel(x)
    ref, ref_valid = log_mel(speech)
    assert features.shape == ref.shape and valid == ref_valid
    loud = ref > -6.0
    assert loud.mean() > 0.5
    assert float(np.median(np.abs(features - ref)[loud])) <= 0.25


@pytest.mark.parametrize("subtype", ["VORBIS", "OPUS"])
def test_ogg(tmp_path, speech, subtype):
    if subtype not in sf.available_subtypes("OGG"):
        pytest.skip(f"this libsndfile has no OGG/{subtype} codec")
    path = tmp_path / "speech.ogg"
    sf.write(str(path), speech, 16000, format="OGG", subtype=subtype)
    _lossy_check(path, speech, 16000)


def test_mp3(tmp_path, speech):
    if "MP3" not in sf.available_formats():
        pytest.skip("this libsndfile build has no MP3 support (libsndfile >= 1.1 with mpg123/LAME needed)")
    path = tmp_path / "speech.mp3"
    try:
        sf.write(str(path), speech, 16000, format="MP3", subtype="MPEG_LAYER_III")
    except sf.LibsndfileError as exc:
        pytest.skip(f"this libsndfile decodes but cannot encode MP3: {exc}")
    _lossy_check(path, speech, 16000)


def test_stereo_and_multichannel_are_averaged(tmp_path, speech):
    left, right = speech, 0.5 * speech[::-1]
    path = tmp_path / "stereo.wav"
    sf.write(str(path), np.stack([left, right], axis=1), 16000, subtype="FLOAT")
    x, _ = load_audio(path)
    expected = ((left.astype(np.float64) + right.astype(np.float64)) / 2).astype(np.float32)
    np.testing.assert_array_equal(x, expected)

    chans = np.stack([speech, -speech, 0.25 * speech, np.zeros_like(speech)], axis=1)
    path = tmp_path / "quad.wav"
    sf.write(str(path), chans, 16000, subtype="FLOAT")
    x, _ = load_audio(path)
    np.testing.assert_allclose(x, 0.0625 * speech, rtol=0, atol=1e-7)


@pytest.mark.parametrize("subtype", ["FLOAT", "PCM_16"])
def test_44k1_stereo_is_resampled(tmp_path, speech, speech_ref, subtype):
    """44.1 kHz stereo made from the 16 kHz fixture, compared with transformers on the original.

    The round trip 16 k -> 44.1 k -> 16 k (soxr VHQ both ways) is not the identity: each pass rolls off
    the top of the band (-3 dB at 7.6 kHz, flat to 7.4 kHz). So the bound is per band: filters that
    end below 7 kHz (123 of 128) must agree within 0.02 in log-mel (2 % in amplitude; measured
    0.0035), and all 128 bins must correlate > 0.9999 (measured 0.999997); the top five filters,
    which straddle the roll-off, are only checked through that correlation.
    Written as PCM16, the 44.1 kHz file also carries new quantisation noise (~-100 dBFS) where the
    original is digital silence or nearly so, lifting the quietest cells from the -11.5 floor to about
    -8. For PCM16 the bounds therefore apply to cells with speech energy, in the same band:
    <= 0.1 on cells > -4 (measured 0.060) and <= 0.02 on cells > -2 (measured 0.0088).
    """
    up = resample(speech.astype(np.float64), 16000, 44100)
    path = tmp_path / "speech_44k1_stereo.wav"
    sf.write(str(path), np.stack([up, up], axis=1), 44100, subtype=subtype)
    x, rate = load_audio(path)
    assert rate == 44100 and x.shape == speech.shape  # soxr keeps round(N * out / in) samples
    features, valid = log_mel(x)
    ref, ref_valid = speech_ref
    assert features.shape == ref.shape and valid == ref_valid
    band = mel_upper_edges() <= 7000
    assert band.sum() == 123
    diff = np.abs(features - ref)
    if subtype == "FLOAT":
        assert float(diff[:, band].max()) <= 0.02
        assert np.corrcoef(features.ravel(), ref.ravel())[0, 1] > 0.9999
    else:
        assert float(diff[(ref > -4) & band].max()) <= 0.1
        assert float(diff[(ref > -2) & band].max()) <= 0.02


def test_8k_is_resampled(tmp_path, speech, speech_ref):
    """8 kHz mono made from the 16 kHz fixture, compared with transformers on the original.

    8 kHz audio holds nothing above 4 kHz, so mel filters above that are not comparable at all (they
    sit near the floor). Filters that end below 3.5 kHz (89 of 128, inside soxr's flat passband at
    8 kHz) must correlate > 0.999 with the original and agree within 0.1 wherever the original holds
    speech energy (> -8, i.e. within ~30 dB of the loudest cell; measured max 0.058); quieter cells
    differ more (measured up to 0.18) because the removed >4 kHz energy no longer leaks into them
    through the window's side lobes. Frame and valid-frame counts must be identical.
    """
    down = resample(speech.astype(np.float64), 16000, 8000)
    path = tmp_path / "speech_8k.wav"
    sf.write(str(path), down, 8000, subtype="FLOAT")
    x, rate = load_audio(path)
    assert rate == 8000 and x.shape == speech.shape
    features, valid = log_mel(x)
    ref, ref_valid = speech_ref
    assert features.shape == ref.shape and valid == ref_valid
    band = mel_upper_edges() <= 3500
    assert band.sum() == 89
    f, r = features[:, band], ref[:, band]
    assert np.corrcoef(f.ravel(), r.ravel())[0, 1] > 0.999
    assert float(np.abs(f - r)[r > -8].max()) <= 0.1
    assert features[:, mel_upper_edges() > 4500].mean() < -10.0  # nothing there


def test_resample_is_identity_at_16k(speech):
    assert resample(speech, 16000, 16000) is speech


# ---------------------------------------------------------------------------------------------- errors


def test_missing_file(tmp_path):
    path = tmp_path / "nope.wav"
    with pytest.raises(AudioError, match="not found") as err:
        load_audio(path)
    assert str(path) in str(err.value)


def test_directory(tmp_path):
    with pytest.raises(AudioError, match="directory") as err:
        load_audio(tmp_path)
    assert str(tmp_path) in str(err.value)


def test_empty_audio(tmp_path):
    path = tmp_path / "empty.wav"
    sf.write(str(path), np.zeros(0, np.float32), 16000)
    with pytest.raises(AudioError, match="no audio samples") as err:
        load_audio(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("zero_bytes.wav", b"", "empty file"),
        ("notes.wav", b"this is a text file, not audio\n" * 20, "not a readable audio file"),
        (
            "noise.flac",
            b"\x00" + bytes(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8)),
            "not a readable audio file",
        ),
        ("broken.wav", b"RIFF\x24\x00\x00\x00WAVEjunkjunkjunkjunk" + b"\x00" * 64, "RIFF/WAVE file is corrupt"),
        ("voice.m4a", b"\x00\x00\x00\x20ftypM4A \x00\x00\x02\x00" + b"\x00" * 200, "unsupported audio format MP4/M4A"),
    ],
)
def test_unreadable_files(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(AudioError, match=message) as err:
        load_audio(path)
    assert str(path) in str(err.value)


def test_truncated_flac_is_an_error_or_a_prefix(tmp_path, speech):
    path = tmp_path / "cut.flac"
    sf.write(str(path), speech, 16000, format="FLAC")
    data = path.read_bytes()
    path.write_bytes(data[:40])  # header only, cut inside the metadata
    with pytest.raises(AudioError) as err:
        load_audio(path)
    assert str(path) in str(err.value)


def test_non_finite_samples(tmp_path, speech):
    x = speech.copy()
    x[1234] = np.nan
    x[2000] = np.inf
    path = tmp_path / "nan.wav"
    sf.write(str(path), x, 16000, subtype="FLOAT")
    with pytest.raises(AudioError, match=r"2 non-finite .* sample 1234") as err:
        load_audio(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.zeros(0, np.float32), "no audio samples"),
        (np.zeros((100, 2), np.float32), "1-D"),
        (np.zeros(1000, np.int16), "dtype int16"),
        (np.array([0.0, np.nan] * 600, np.float32), "non-finite"),
    ],
)
def test_log_mel_rejects_bad_arrays(bad, message):
    with pytest.raises(AudioError, match=message):
        log_mel(bad)
    with pytest.raises(AudioError, match=message):
        clip_features(bad)


def test_audio_error_is_a_value_error():
    assert issubclass(AudioError, ValueError)
    assert MAX_CLIP_SAMPLES == 480_000
