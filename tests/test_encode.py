"""The Python encode API (`AudioEncoder`) end to end on the tiny configuration, llvm-cpu.

One production artifact (frame buckets 320 and 2997, 1 or 2 clips per call) is compiled through the
artifact cache once for the module; a diagnostics build of the same graph (every stage tensor
returned) is compiled once more for the comparison with the contract's emulation.

* Long audio: 45 s becomes a 30 s clip and a 15 s clip (sources and start times recorded), nothing
  truncated; `max_seconds` refuses it with an `EncodeError` naming the file.
* Mixed batches: several files of different lengths in one call, clips sharing calls across files
  and buckets, give exactly (bit for bit) the rows of each file encoded alone.
* Against the emulation of mlx-cuda-v1 (`contracts.encoder.encode`) on the same log-mel.  Measured on
  llvm-cpu with real speech: NOT bit-exact over whole 3-30 s clips; the first difference is always a
  stage with an F32 contraction (an SSCP convolution, the input projection or a conformer sub-block
  containing linears), after which it propagates.  So every stage is also checked locally: fed the
  artifact's own input for that stage, the emulation reproduces every schedule-pinned stage bit for
  bit, every bare contraction within the rigorous F32 summation bound, and every conformer sub-block
  (whose linears are not exposed) up to isolated BF16 rounding flips.
* Padding rows, very short / empty / non-audio / missing inputs, stereo and 44.1 kHz inputs,
  checkpoint schema and non-finite errors, and affine-quantized (4 and 8 bit) mlx checkpoints, which
  encode bit for bit like the BF16 checkpoint holding their dequantized values.
"""

from __future__ import annotations

import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import soundfile as sf
from conftest import assert_bits_equal
from test_checkpoint import mlx_quantized, quantize, write_dir

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.contracts import emulation as E
from gemma3n_iree.contracts import encoder as emulated
from gemma3n_iree.contracts.emulation import affine_dequantize
from gemma3n_iree.contracts.metrics import bf16_ulp, f32_accumulation_bound
from gemma3n_iree.emitters.audio import AudioModuleSpec
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP, builtin_config
from gemma3n_iree.model.audio_weights import HF_LAYOUT, MLX_LAYOUT, audio_weight_specs
from gemma3n_iree.runtime.audio.frontend import SAMPLE_SPEECH, AudioError, resample
from gemma3n_iree.runtime.checkpoint import CheckpointNonFiniteError, CheckpointSchemaError
from gemma3n_iree.runtime.encoder.audio_session import AudioSession
from gemma3n_iree.runtime.encoder.clips import EncodeError, EncodeFailed
from gemma3n_iree.runtime.encoder.encode import AudioEncoder, plan_calls
from gemma3n_iree.runtime.programs.artifacts import ArtifactCache
from gemma3n_iree.runtime.programs.session import SessionError
from gemma3n_iree.runtime.synthetic import random_weights, write_random_checkpoint

CFG = builtin_config("tiny")
SEED = 5
BUCKETS = (320, 2997)
CLIPS_PER_CALL = (1, 2)
SPEECH = Path(__file__).resolve().parent / "data" / "speech_16k.wav"  # 3.20 s, 318 mel frames
RATE = 16_000


def tokens(frames: int) -> int:
    """Audio tokens of a clip: two stride-2 convolutions, then reduction by 4 (ceil at each step)."""
    return math.ceil(frames / 16)


# ---------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("encode")


@pytest.fixture(scope="module")
def cache(workdir: Path) -> ArtifactCache:
    return ArtifactCache(workdir / "artifacts")


@pytest.fixture(scope="module")
def checkpoint(workdir: Path) -> Path:
    return write_random_checkpoint(workdir / "checkpoint", CFG, seed=SEED)


@pytest.fixture(scope="module")
def logical() -> dict[str, np.ndarray]:
    weights = random_weights(CFG, SEED)
    return {s.logical: weights[s.key].astype(np.float32) for s in audio_weight_specs(CFG)}


@pytest.fixture(scope="module")
def encoder(checkpoint: Path, cache: ArtifactCache) -> AudioEncoder:
    return AudioEncoder(checkpoint, frame_buckets=BUCKETS, clips_per_call=CLIPS_PER_CALL, cache=cache)


@pytest.fixture(scope="module")
def stage_session(encoder: AudioEncoder, cache: ArtifactCache) -> AudioSession:
    """The same graph built for diagnostics (every stage tensor returned), one clip per call."""
    spec = AudioModuleSpec(CFG, MLX_CUDA_V1, BUCKETS, (1,), stages=True)
    built = cache.get_or_build(spec, parse_target("llvm-cpu"), encoder.checkpoint.schema_digest())
    return AudioSession(built.path, encoder.checkpoint.files)


@pytest.fixture(scope="module")
def audio(workdir: Path) -> dict[str, Path]:
    """Test inputs, all derived from the bundled 16 kHz PCM16 speech (so PCM16 slices stay exact)."""
    directory = workdir / "audio"
    directory.mkdir()
    speech, rate = sf.read(SPEECH, dtype="int16")
    assert rate == RATE and speech.ndim == 1
    files: dict[str, Path] = {"speech": SPEECH, "sample": SAMPLE_SPEECH}

    def pcm16(name: str, samples: np.ndarray, rate: int = RATE) -> None:
        files[name] = directory / f"{name}.wav"
        sf.write(files[name], samples, rate, subtype="PCM_16")

    def f32(name: str, samples: np.ndarray, rate: int = RATE) -> None:
        files[name] = directory / f"{name}.wav"
        sf.write(files[name], np.asarray(samples, np.float32), rate, subtype="FLOAT")

    long = np.tile(speech, -(-45 * RATE // len(speech)))[: 45 * RATE]  # exactly 45 s
    pcm16("long45", long)
    pcm16("head30", long[: 30 * RATE])
    pcm16("tail15", long[30 * RATE :])
    pcm16("short", speech[:160])  # 0.01 s: shorter than one 513-sample window
    pcm16("empty", speech[:0])  # a valid WAV header with 0 frames
    files["zero_bytes"] = directory / "zero_bytes.wav"
    files["zero_bytes"].write_bytes(b"")
    files["not_audio"] = directory / "notes.wav"
    files["not_audio"].write_text("this is a text file, not audio\n" * 20)
    files["missing"] = directory / "missing.wav"

    # stereo: identical channels (the downmix is exactly the mono signal) and different channels
    pcm16("stereo_same", np.stack([speech, speech], axis=1))
    right = (np.roll(speech, 800) // 2).astype(np.int16)
    pcm16("stereo", np.stack([speech, right], axis=1))
    both = sf.read(files["stereo"], dtype="float64")[0]
    f32("stereo_prepared", both.mean(axis=1))  # the documented downmix: average of the channels

    # 44.1 kHz: the speech resampled up; "prepared" is the same resampling to 16 kHz done here
    up = resample(sf.read(SPEECH, dtype="float64")[0], RATE, 44_100).astype(np.float32)
    f32("rate44k", up, 44_100)
    f32("rate44k_prepared", resample(sf.read(files["rate44k"], dtype="float64")[0], 44_100, RATE))
    return files


@pytest.fixture(scope="module")
def mixed(encoder: AudioEncoder, audio: dict[str, Path]):
    """One encode call over files of different lengths: (paths, clips, result)."""
    paths = [audio["long45"], audio["speech"], audio["sample"], audio["short"]]
    clips = encoder.clips_from_files(paths)
    return paths, clips, encoder.encode_clips(clips)


def assert_result_equal(got, want, what: str) -> None:
    for name in ("audio_features", "encoder_hidden"):
        assert_bits_equal(getattr(got, name), getattr(want, name), f"{what}: {name}")
    for name in ("valid_tokens", "clip_source", "clip_start_s"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=f"{what}: {name}")


def check_shapes(result, n: int) -> None:
    assert result.audio_features.shape == (n, AUDIO_SOFT_TOKENS_PER_CLIP, CFG.text_hidden_size)
    assert result.encoder_hidden.shape == (n, AUDIO_SOFT_TOKENS_PER_CLIP, CFG.hidden_size)
    assert result.audio_features.dtype == result.encoder_hidden.dtype == np.float32
    assert result.valid_tokens.shape == result.clip_source.shape == result.clip_start_s.shape == (n,)
    assert result.valid_tokens.dtype == result.clip_source.dtype == np.int32
    assert result.clip_start_s.dtype == np.float32


# ---------------------------------------------------------------------------------------------- long audio


def test_long_audio_becomes_consecutive_30s_clips(encoder, audio):
    clips = encoder.clips_from_files([audio["long45"]])
    assert [(c.source, c.start_s, c.frames) for c in clips] == [(0, 0.0, 2997), (0, 30.0, 1497)]
    result = encoder.encode_clips(clips)
    check_shapes(result, 2)
    np.testing.assert_array_equal(result.clip_source, [0, 0])
    np.testing.assert_array_equal(result.clip_start_s, [0.0, 30.0])
    np.testing.assert_array_equal(result.valid_tokens, [tokens(2997), tokens(1497)])
    assert result.valid_tokens[0] == AUDIO_SOFT_TOKENS_PER_CLIP  # a full 30 s clip fills every row
    # never truncated: the two clips are exactly the first 30 s and the remaining 15 s, each encoded
    # as if it were its own file
    head, tail = encoder.encode_files([audio["head30"]]), encoder.encode_files([audio["tail15"]])
    for i, alone in enumerate((head, tail)):
        assert_bits_equal(result.audio_features[i], alone.audio_features[0], f"clip {i} audio_features")
        assert_bits_equal(result.encoder_hidden[i], alone.encoder_hidden[0], f"clip {i} encoder_hidden")
        assert result.valid_tokens[i] == alone.valid_tokens[0]


def test_max_seconds_refuses_long_input_naming_the_file(encoder, audio):
    with pytest.raises(EncodeError) as info:
        encoder.encode_files([audio["speech"], audio["long45"]], max_seconds=30)
    message = str(info.value)
    assert str(audio["long45"]) in message and "45.0 s" in message and "30" in message
    assert len(encoder.clips_from_files([audio["long45"]], max_seconds=45)) == 2  # the limit is inclusive


# ---------------------------------------------------------------------------------------------- mixed batches


def test_mixed_batch_equals_each_file_alone(encoder, mixed):
    paths, clips, result = mixed
    frames = [c.frames for c in clips]
    assert frames == [2997, 1497, 318, 770, 1]
    calls = plan_calls(clips, encoder.frame_buckets, encoder.clips_per_call)
    # clips of different files share calls, in both buckets
    assert any(width == 2 and len({clips[i].source for i in members}) == 2 for _, width, members in calls)
    assert {bucket for bucket, _, _ in calls} == set(BUCKETS)
    check_shapes(result, len(clips))
    np.testing.assert_array_equal(result.clip_source, [0, 0, 1, 2, 3])
    np.testing.assert_array_equal(result.clip_start_s, [0.0, 30.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(result.valid_tokens, [tokens(f) for f in frames])
    start = 0
    for path in paths:
        alone = encoder.encode_files([path])
        n = len(alone.valid_tokens)
        for name in ("audio_features", "encoder_hidden"):
            assert_bits_equal(getattr(result, name)[start : start + n], getattr(alone, name), f"{path.name}: {name}")
        np.testing.assert_array_equal(result.valid_tokens[start : start + n], alone.valid_tokens)
        np.testing.assert_array_equal(result.clip_start_s[start : start + n], alone.clip_start_s)
        np.testing.assert_array_equal(alone.clip_source, 0)
        start += n
    assert start == len(clips)


def test_padding_rows(mixed, stage_session, logical):
    """Past valid_tokens: audio_features is the hard embedding of audio row 127, encoder_hidden zero."""
    _, clips, result = mixed
    hard = emulated.encode(MLX_CUDA_V1, CFG, logical, np.zeros((1, 1, 128), np.float32), np.array([1], np.int32))
    want_row = hard["hard_post_norm"][-1]
    probe = stage_session.run(np.zeros((1, BUCKETS[0], 128), np.float32), np.array([1], np.int32))
    if not np.array_equal(probe["hard_linear"], hard["hard_linear"]):
        # the embedding's projection landed on another legitimate F32 accumulation outcome: the row
        # is then the backend's own (checked against the emulation in test_rows_match_the_contract_emulation)
        want_row = probe["hard_post_norm"][-1]
    for i, clip in enumerate(clips):
        valid = int(result.valid_tokens[i])
        assert valid == tokens(clip.frames)
        pad = result.audio_features[i, valid:]
        assert pad.shape[0] == AUDIO_SOFT_TOKENS_PER_CLIP - valid
        assert_bits_equal(pad, np.broadcast_to(want_row, pad.shape), f"clip {i} padding rows")
        assert not np.any(result.encoder_hidden[i, valid:]), f"clip {i}: encoder_hidden not zero past valid"
        assert np.all(np.any(result.encoder_hidden[i, :valid] != 0, axis=-1)), f"clip {i}: a zero valid row"
        assert np.all(np.isfinite(result.audio_features[i]))


# ---------------------------------------------------------------------------------------------- emulation

# Stages that are a single F32 contraction, with (input stage, weight) -- a convolution or a linear.
BARE_CONTRACTIONS = {
    "sscp_conv_0_convolution": ("mel", "sscp.conv_0.weight"),
    "sscp_conv_1_convolution": ("sscp_conv_0", "sscp.conv_1.weight"),
    "input_projection": ("sscp_conv_1", "sscp.input_proj"),
    "soft_linear": ("soft_norm", "embed.projection"),
    "hard_linear": ("hard_norm", "embed.projection"),
}
# Conformer sub-blocks: each holds 2-7 contractions whose results are not stage outputs.
SUB_BLOCKS = tuple(
    f"conformer.{layer}.{name}"
    for layer in range(CFG.conf_num_hidden_layers)
    for name in ("feed_forward_start", "attention", "light_conv", "feed_forward_end")
)
OUTPUTS = ("audio_features", "encoder_hidden", "valid_tokens")


def contraction_envelope(name: str, got: dict[str, np.ndarray], logical: dict[str, np.ndarray]):
    """(the emulation's exact-sum result, the largest legitimate distance from it) for the artifact's input."""
    source, weight = BARE_CONTRACTIONS[name]
    x, w = got[source], logical[weight]
    if name.startswith("sscp_conv"):
        i = int(name[len("sscp_conv_")])
        x = x[..., None] if i == 0 else x
        stride = tuple(CFG.sscp_conv_stride_size[i])
        exact = E.sscp_conv(MLX_CUDA_V1, x, w, stride)
        # gamma_K * sum |x w| over each output's receptive field (operands are BF16 values: exact)
        k = int(np.prod(w.shape[1:]))
        gamma = k * 2.0**-24 / (1 - k * 2.0**-24)
        magnitude = E.sscp_conv(F32_REFERENCE, np.abs(x), np.abs(w), stride).astype(np.float64)
        return exact, gamma * magnitude * (1 + 2.0**-20) + bf16_ulp(exact)
    if name == "input_projection":
        x = x.reshape(*x.shape[:2], -1)
    exact = E.linear(MLX_CUDA_V1, x, w)
    return exact, f32_accumulation_bound(x, w) + bf16_ulp(exact)


def test_rows_match_the_contract_emulation(mixed, stage_session, logical):
    _, clips, result = mixed
    report = []
    for i, clip in enumerate(clips):
        bucket = next(b for b in BUCKETS if b >= clip.frames)
        mel = np.zeros((1, bucket, 128), np.float32)
        mel[0, : clip.frames] = clip.features[: clip.frames]
        frames = np.array([clip.frames], np.int32)
        got = stage_session.run(mel, frames)
        # the diagnostics build computes exactly the production rows
        assert_bits_equal(got["audio_features"][0], result.audio_features[i], f"clip {i}: diagnostics build")
        assert_bits_equal(got["encoder_hidden"][0], result.encoder_hidden[i], f"clip {i}: diagnostics build")

        # 1. free run: equal up to the first contraction whose accumulation order flips a rounding
        want = emulated.encode(MLX_CUDA_V1, CFG, logical, mel, frames)
        np.testing.assert_array_equal(got["valid_tokens"], want["valid_tokens"])
        assert int(want["valid_tokens"][0]) == tokens(clip.frames)
        order = [n for n in got if n not in OUTPUTS]
        assert set(order) <= set(want)
        first = next((n for n in order if not np.array_equal(got[n], want[n])), None)
        assert first is None or first in BARE_CONTRACTIONS or first in SUB_BLOCKS, (
            f"clip {i}: first divergence at {first}, a stage without contractions"
        )
        if first is None:
            for name in ("audio_features", "encoder_hidden"):
                assert_bits_equal(got[name], want[name], f"clip {i}: {name}")

        # 2. every stage on the artifact's own inputs
        local = emulated.encode(MLX_CUDA_V1, CFG, logical, mel, frames, forced=got)
        for name in got:
            if np.array_equal(got[name], local[name]):
                continue
            where = f"clip {i} ({clip.frames} frames): {name}"
            if name in BARE_CONTRACTIONS:
                exact, bound = contraction_envelope(name, got, logical)
                np.testing.assert_array_equal(exact, local[name])
                excess = np.abs(got[name].astype(np.float64) - exact) - bound
                assert excess.max() <= 0, f"{where}: beyond the F32 accumulation bound by {excess.max():.3g}"
            elif name in SUB_BLOCKS:
                g, w = got[name].astype(np.float64), local[name].astype(np.float64)
                row_ulp = bf16_ulp(np.abs(w).max(axis=-1, keepdims=True))
                rows = np.unique(np.argwhere(g != w)[:, 1])
                assert np.max(np.abs(g - w) / row_ulp) <= 2, f"{where}: more than 2 BF16 ULPs of its row's scale"
                assert rows.size <= max(2, 0.02 * g.shape[1]), f"{where}: {rows.size} of {g.shape[1]} rows differ"
            else:
                assert_bits_equal(got[name], local[name], f"{where} (schedule-pinned)")
        report.append(f"clip {i}: {'bit-exact' if first is None else 'first difference at ' + first}")
    print("\n".join(report))


# ---------------------------------------------------------------------------------------------- inputs


def test_stereo_input_is_the_average_of_its_channels(encoder, audio):
    same, mono = encoder.encode_files([audio["stereo_same"]]), encoder.encode_files([audio["speech"]])
    check_shapes(same, 1)
    assert_result_equal(same, mono, "stereo with identical channels vs the mono file")
    stereo, prepared = encoder.encode_files([audio["stereo"]]), encoder.encode_files([audio["stereo_prepared"]])
    check_shapes(stereo, 1)
    assert_result_equal(stereo, prepared, "stereo vs its channel average written as 16 kHz mono")
    assert not np.array_equal(stereo.audio_features, mono.audio_features)


def test_44k_input_is_resampled_to_16k(encoder, audio):
    got = encoder.encode_files([audio["rate44k"]])
    check_shapes(got, 1)
    # the same samples as the soxr resampling done by hand: the same rows, bit for bit
    assert_result_equal(got, encoder.encode_files([audio["rate44k_prepared"]]), "44.1 kHz vs prepared 16 kHz")
    original = encoder.encode_files([audio["speech"]])
    np.testing.assert_array_equal(got.valid_tokens, original.valid_tokens)  # 51278 samples again


def test_very_short_audio_gives_one_frame(encoder, audio):
    clips = encoder.clips_from_files([audio["short"]])
    assert [(c.frames, c.start_s) for c in clips] == [(1, 0.0)]
    result = encoder.encode_clips(clips)
    check_shapes(result, 1)
    np.testing.assert_array_equal(result.valid_tokens, [1])
    assert np.any(result.encoder_hidden[0, 0] != 0) and not np.any(result.encoder_hidden[0, 1:])
    assert np.all(np.isfinite(result.audio_features))


@pytest.mark.parametrize(
    "name,words",
    [
        ("empty", "no audio samples"),
        ("zero_bytes", "empty file"),
        ("not_audio", "not a readable audio file"),
        ("missing", "not found"),
    ],
)
def test_unusable_audio_is_refused_naming_the_file(encoder, audio, name, words):
    """The file fails alone: it is named, and the good one is still encoded (the error carries it)."""
    with pytest.raises(EncodeFailed) as info:
        encoder.encode_files([audio["speech"], audio[name]])
    assert str(audio[name]) in str(info.value) and words in str(info.value)
    (failure,) = info.value.failures
    assert failure.source == 1 and failure.path == str(audio[name]) and words in failure.message
    assert_result_equal(info.value.result, encoder.encode_files([audio["speech"]]), "the good file")
    with pytest.raises(AudioError, match=words):  # the serial path stops at the first unusable input
        encoder.clips_from_files([audio["speech"], audio[name]])


def test_the_pipeline_writes_the_serial_npz_bit_for_bit(encoder, audio, workdir):
    """decode + host mel on 1 or 3 workers, calls overlapped: the same .npz bytes as the serial path,
    clips in input order (long audio, a one-frame clip, 44.1 kHz, stereo, several buckets and widths)."""
    paths = [
        audio["long45"],
        audio["speech"],
        audio["rate44k"],
        audio["short"],
        audio["stereo"],
        audio["sample"],
        audio["tail15"],
    ]
    serial = encoder.encode_clips(encoder.clips_from_files(paths))
    serial.save(workdir / "serial.npz")
    np.testing.assert_array_equal(serial.clip_source, [0, 0, 1, 2, 3, 4, 5, 6])
    for workers in (1, 3):
        seen = []
        got = encoder.encode_files(paths, workers=workers, on_progress=seen.append)
        got.save(workdir / f"parallel{workers}.npz")
        assert (workdir / f"parallel{workers}.npz").read_bytes() == (workdir / "serial.npz").read_bytes()
        assert [p.clips_done for p in seen] == sorted(p.clips_done for p in seen)
        last = seen[-1]
        assert (last.files, last.files_done, last.failed, last.clips_done) == (7, 7, 0, 8)
        assert last.audio_seconds_done == pytest.approx(sum(len(encoder.decode_file(p)) for p in paths) / RATE)


def test_inputs_that_fail_fail_alone_in_the_pipeline(encoder, audio):
    """Unreadable, missing, over max_seconds: each named once; the others encoded as if alone."""
    paths = [audio["not_audio"], audio["speech"], audio["missing"], audio["long45"], audio["short"]]
    with pytest.raises(EncodeFailed) as info:
        encoder.encode_files(paths, max_seconds=40, workers=2)
    failed = info.value
    assert [f.source for f in failed.failures] == [0, 2, 3] and failed.total == 5
    assert str(failed).startswith("3 of 5 input(s) could not be encoded:")
    for failure, words in zip(failed.failures, ("not a readable audio file", "not found", "45.0 s")):
        assert failure.message.startswith(str(paths[failure.source])) and words in failure.message
    want = encoder.encode_files([audio["speech"], audio["short"]])
    np.testing.assert_array_equal(failed.result.clip_source, [1, 4])
    for name in ("audio_features", "encoder_hidden", "valid_tokens", "clip_start_s"):
        assert_bits_equal(getattr(failed.result, name), getattr(want, name), name)
    assert failed.result.failures == failed.failures
    with pytest.raises(EncodeFailed) as none:
        encoder.encode_files([audio["missing"], audio["zero_bytes"]])
    assert none.value.result is None and len(none.value.failures) == 2


def test_clip_longer_than_every_bucket(audio, quantized_encoders):
    """An artifact whose buckets cannot hold a clip (the 320-frame-only quantized build) says so."""
    small = quantized_encoders[4]
    assert small.frame_buckets == (320,)
    with pytest.raises(EncodeError, match=r"770 mel frames fits no frame bucket \(320\)"):
        small.encode_files([audio["sample"]])


# ---------------------------------------------------------------------------------------------- checkpoints


def test_checkpoint_schema_error_before_compiling(tmp_path):
    weights = random_weights(CFG, SEED)
    gone = "model.audio_tower.conformer.1.attention.attn.k_proj.weight"
    del weights[gone]
    cache = ArtifactCache(tmp_path / "artifacts")
    with pytest.raises(CheckpointSchemaError) as info:
        AudioEncoder(write_dir(tmp_path / "ck", weights), frame_buckets=(320,), cache=cache)
    assert gone in str(info.value) and "missing" in str(info.value)
    assert not cache.root.exists() or not list(cache.root.glob("*.vmfb"))  # refused before compiling


@pytest.mark.parametrize("value,word", [(np.nan, "NaN"), (np.inf, "+Inf")])
def test_non_finite_checkpoint_is_refused_naming_the_tensor(tmp_path, value, word):
    weights = random_weights(CFG, SEED)
    bad = "model.audio_tower.conformer.0.ffw_layer_start.ffw_layer_1.weight"
    w = weights[bad].copy()
    w[3, 4] = value
    weights[bad] = w
    directory = write_dir(tmp_path / "ck", weights)
    cache = ArtifactCache(tmp_path / "artifacts")
    with pytest.raises(CheckpointNonFiniteError) as info:
        AudioEncoder(directory, frame_buckets=(320,), cache=cache)
    text = str(info.value)
    assert bad in text and word in text and str(directory / "model.safetensors") in text and "(3, 4)" in text
    assert not cache.root.exists() or not list(cache.root.glob("*.vmfb"))  # refused before compiling


def test_quantization_scale_that_overflows_is_refused(tmp_path):
    tensors, _ = mlx_quantized(8, 32, seed=SEED)
    name = "audio_tower.conformer.0.lconv1d.linear_end.scales"
    s = tensors[name].copy()
    s[2, 1] = 3e36  # finite, but 255 * 3e36 is beyond BF16's ~3.39e38
    tensors[name] = s
    directory = write_dir(tmp_path / "q", tensors, quantization={"group_size": 32, "bits": 8})
    with pytest.raises(CheckpointNonFiniteError, match=r"linear_end.weight: group \(2, 1\)"):
        AudioEncoder(directory, frame_buckets=(320,), cache=ArtifactCache(tmp_path / "artifacts"))


# ---------------------------------------------------------------------------------------------- quantized

QUANT = {4: 32, 8: 64}  # bits -> group size


def dequantized_hf(tensors: dict[str, np.ndarray], bits: int, group: int) -> dict[str, np.ndarray]:
    """The BF16 transformers-layout checkpoint whose weights are the packed weights' dequantized values."""
    mlx = {s.logical: s for s in audio_weight_specs(CFG, MLX_LAYOUT)}
    out = {}
    for spec in audio_weight_specs(CFG, HF_LAYOUT):
        key = mlx[spec.logical].key
        if len(spec.shape) == 2:
            base = key.removesuffix(".weight")
            value = affine_dequantize(tensors[key], tensors[base + ".scales"], tensors[base + ".biases"], bits, group)
        else:
            value = tensors[key].astype(np.float32)
            if value.ndim == 4:  # mlx conv [O, kt, kf, I] -> OIHW
                value = value.transpose(0, 3, 1, 2)
            elif value.ndim == 3:  # mlx depthwise [D, K, 1] -> [D, 1, K]
                value = value.transpose(0, 2, 1)
        assert value.shape == spec.shape, spec.key
        out[spec.key] = np.ascontiguousarray(value).astype(ml_dtypes.bfloat16)
    return out


@pytest.fixture(scope="module")
def quantized_encoders(workdir, cache) -> dict[int, AudioEncoder]:
    """An mlx-layout checkpoint per bit width, every Linear/Embedding weight packed; one 320-frame bucket."""
    encoders = {}
    for bits, group in QUANT.items():
        tensors, _ = mlx_quantized(bits, group, seed=SEED)
        directory = write_dir(workdir / f"mlx-q{bits}", tensors, quantization={"group_size": group, "bits": bits})
        encoders[bits] = AudioEncoder(directory, frame_buckets=(320,), cache=cache)
    return encoders


@pytest.mark.parametrize("bits", sorted(QUANT))
def test_quantized_checkpoint_equals_its_dequantized_bf16_checkpoint(
    bits, workdir, cache, encoder, audio, quantized_encoders
):
    group = QUANT[bits]
    quantized = quantized_encoders[bits]
    assert quantized.checkpoint.quantization == (bits, group)
    assert len(quantized.checkpoint.quantized_names()) == sum(len(s.shape) == 2 for s in audio_weight_specs(CFG))
    tensors, _ = mlx_quantized(bits, group, seed=SEED)
    directory = write_dir(workdir / f"hf-dequantized-q{bits}", dequantized_hf(tensors, bits, group))
    before = sorted(cache.root.glob("*.vmfb"))
    reference = AudioEncoder(directory, frame_buckets=BUCKETS, clips_per_call=CLIPS_PER_CALL, cache=cache)
    assert reference.artifact == encoder.artifact and sorted(cache.root.glob("*.vmfb")) == before  # reused
    inputs = [audio["speech"], audio["short"]]
    got, want = quantized.encode_files(inputs), reference.encode_files(inputs)
    assert_result_equal(got, want, f"{bits}-bit mlx checkpoint vs its dequantized BF16 HF checkpoint")
    # not vacuous: quantization changed the weights, and so the rows
    unquantized = encoder.encode_files(inputs)
    assert not np.array_equal(got.audio_features, unquantized.audio_features)


@pytest.mark.parametrize("bits,group", [(4, 32), (4, 64), (8, 32), (8, 64)])
def test_mlx_dequantize_equals_the_emulation(bits, group):
    """`mx.dequantize` (mlx on CPU, test-only) gives exactly `affine_dequantize`'s values."""
    mx = pytest.importorskip("mlx.core", reason="mlx is not installed (pip install mlx; test-only reference)")
    rng = np.random.default_rng(bits * 1000 + group)
    w = (rng.standard_normal((64, 256)) * rng.uniform(0.01, 2.0, (64, 1))).astype(ml_dtypes.bfloat16)
    mx_packed, mx_scales, mx_biases = mx.quantize(
        mx.array(w.astype(np.float32)).astype(mx.bfloat16), group_size=group, bits=bits
    )
    cases = {
        "tests' quantize": quantize(w, bits, group),
        "mx.quantize": (
            np.array(mx_packed),
            np.array(mx_scales.astype(mx.float32)).astype(ml_dtypes.bfloat16),
            np.array(mx_biases.astype(mx.float32)).astype(ml_dtypes.bfloat16),
        ),
    }
    for what, (packed, scales, biases) in cases.items():
        got = mx.dequantize(
            mx.array(packed),
            mx.array(scales.astype(np.float32)).astype(mx.bfloat16),
            mx.array(biases.astype(np.float32)).astype(mx.bfloat16),
            group_size=group,
            bits=bits,
        )
        assert got.dtype == mx.bfloat16
        want = affine_dequantize(packed, scales, biases, bits, group)
        assert_bits_equal(np.array(got.astype(mx.float32)), want, f"{what}, {bits} bits, group {group}")


# ---------------------------------------------------------------------------------------------- staging


def test_reused_staging_buffers_never_leak_one_call_into_the_next(encoder: AudioEncoder):
    """Inputs and results pass through host buffers a session keeps per entry: a call with other
    inputs in between must not change a call's results, and results handed out stay the caller's."""
    session = encoder.session
    rng = np.random.default_rng(0)
    mel_a, mel_b = (rng.normal(-4.0, 2.0, (2, 320, 128)).astype(np.float32) for _ in range(2))
    frames = np.array([320, 200], np.int32)
    first = session.run(mel_a, frames)
    other = session.run(mel_b, frames)
    again = session.run(mel_a, frames)
    for name in first:
        assert_bits_equal(again[name], first[name], name)
    assert not np.array_equal(other["audio_features"], first["audio_features"])
    kept = first["audio_features"].copy()
    session.run(mel_b, frames)
    assert_bits_equal(first["audio_features"], kept, "a result after the next call")


def test_a_closed_program_refuses_calls_by_name(encoder: AudioEncoder):
    """`close` releases a program's device objects at once (a server's shutdown): a second copy loaded from the same
    artifact runs, is closed (twice: idempotent), and every later call is a SessionError naming the program."""
    other = AudioEncoder(encoder.checkpoint.directory, artifact=encoder.artifact)
    mel = np.zeros((2, 320, 128), np.float32)
    frames = np.array([320, 200], np.int32)
    assert_bits_equal(
        other.session.run(mel, frames)["audio_features"], encoder.session.run(mel, frames)["audio_features"]
    )
    name = other.session.module.function_names[0]
    other.close()
    other.close()
    for call in (lambda: other.session.run(mel, frames), lambda: other.session.reflection(name)):
        with pytest.raises(SessionError, match="AudioSession was closed"):
            call()
    assert "context" not in vars(other.session) and "device" not in vars(other.session)


def test_bench_reports_end_to_end_and_device_side_time(encoder: AudioEncoder):
    from gemma3n_iree.diagnostics.bench import bench_entries

    records = list(bench_entries(encoder.session, warmup=1, repeats=2, entries=[(320, 2)]))
    assert len(records) == 1 and records[0]["batch"] == 2 and records[0]["frames"] == 320
    assert records[0]["median_ms"] > 0 and records[0]["execute_ms"] > 0
