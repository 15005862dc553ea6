"""The one decode path (`runtime/audio/decode.py`): nothing lost silently, in every container libsndfile writes.

* Every container and encoding this libsndfile writes and reads back: the bytes decode exactly like
  the file, and the file cut at 60 % is an error naming the input, the container and how much is
  missing -- except the containers that record no length at all (IRCAM, PVF, PAF, and XI as
  libsndfile writes it), which decode what is there and say ``length_checked=False``.
* Streaming writers' unknown sizes (0xFFFFFFFF in RIFF and AU) decode fully.
* MPEG: variable-bitrate audio without its Xing header decodes to the end of the stream whichever way
  libsndfile's estimate errs (loud start: too short; silent start: too long), a cut stream is
  truncated with or without the header, and a stream longer than its header is refused.
* Sample rates below 8 kHz are refused by name; `npz_stream` writes archives `np.load` and `zipfile`
  accept; the upload admission policy is a pure function.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from gemma3n_iree.runtime.audio import mpeg
from gemma3n_iree.runtime.audio.containers import CONTAINERS, sniff
from gemma3n_iree.runtime.audio.decode import MIN_SAMPLE_RATE, AudioError, decode_audio, probe_audio
from gemma3n_iree.runtime.encoder.npz_stream import npy_pieces, npz_pieces
from gemma3n_iree.serve.admission import MIB, Limits, upload_refusal

RATE = 16_000
SPEECH = Path(__file__).resolve().parent / "data" / "speech_16k.wav"
# containers whose headers carry no length: a cut on a frame boundary cannot be told from a short file
NOT_RECORDED = {"IRCAM", "PVF", "PAF", "XI"}
# encodings libsndfile writes but cannot read back here (a libsndfile limitation, not ours)
UNREADABLE = {
    ("AIFF", "DWVW_12"),
    ("AIFF", "DWVW_16"),
    ("AIFF", "DWVW_24"),
    ("MP3", "MPEG_LAYER_I"),
    ("MP3", "MPEG_LAYER_II"),
    ("WAV", "MPEG_LAYER_III"),
}


def signal(seconds: float = 3.0) -> np.ndarray:
    x = np.arange(int(seconds * RATE))
    return (0.3 * np.sin(x * 0.05) + 0.1 * np.sin(x * 0.31)).astype(np.float32)


def written_formats() -> list[tuple[str, str]]:
    return [
        (fmt, sub)
        for fmt in sf.available_formats()
        if fmt not in ("RAW", "SD2")
        for sub in sf.available_subtypes(fmt)
        if (fmt, sub) not in UNREADABLE
    ]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[tuple[str, str], Path]:
    """One file per (container, encoding), written by libsndfile itself (to a path: some encoders
    need to seek back)."""
    directory = tmp_path_factory.mktemp("containers")
    out = {}
    for fmt, sub in written_formats():
        path = directory / f"{fmt}_{sub}.{fmt.lower()}"
        sf.write(str(path), signal(), RATE, format=fmt, subtype=sub)
        out[fmt, sub] = path
    return out


@pytest.mark.parametrize("fmt, sub", written_formats())
def test_every_container_whole_and_cut_at_60_percent(files, fmt, sub):
    path = files[fmt, sub]
    data = path.read_bytes()
    whole = decode_audio(path)
    from_bytes = decode_audio(data, "upload.bin")
    np.testing.assert_array_equal(from_bytes.samples, whole.samples)
    assert whole.info == from_bytes.info and whole.samples.size > 0
    cut = data[: int(len(data) * 0.6)]
    cut_path = path.with_name("cut_" + path.name)
    cut_path.write_bytes(cut)
    if fmt in NOT_RECORDED:
        assert not whole.info.length_checked
        partial = decode_audio(cut, "cut.bin")  # everything present, and said to be unverifiable
        assert not partial.info.length_checked and partial.samples.size < whole.samples.size
        return
    assert whole.info.length_checked, whole.info
    with pytest.raises(AudioError) as by_path:
        decode_audio(cut_path)
    with pytest.raises(AudioError) as by_bytes:
        decode_audio(cut, "cut.bin")
    message = str(by_path.value)
    assert message.startswith(f"{cut_path}: ") and "truncated" in message, message
    assert str(by_bytes.value) == "cut.bin: " + message.removeprefix(f"{cut_path}: ")  # the same answer
    container = sniff(data)
    assert container is not None and container.name in message
    if "declares" in message:  # declared vs present, and what is missing
        assert "but only" in message and "missing" in message


def test_the_container_table_is_the_one_sniffer():
    names = [c.name for c in CONTAINERS]
    assert len(names) == len(set(names))
    for magic, name in (
        (b"\x00\x00\x00\x20ftypM4A ", "MP4/M4A (AAC or ALAC)"),
        (b"OggS\x00\x02", "Ogg"),
        (b"fLaC\x00\x00\x00\x22", "FLAC"),
        (b"RIFF\x00\x00\x00\x00WAVE", "RIFF/WAVE"),
    ):
        found = sniff(magic + b"\x00" * 64)
        assert found is not None and found.name == name
    with pytest.raises(AudioError, match="upload: unsupported audio format MP4/M4A"):
        decode_audio(b"\x00\x00\x00\x20ftypM4A " + b"\x00" * 200)


def test_trailing_metadata_cut_loses_nothing_and_a_cut_header_is_named(tmp_path):
    buf = io.BytesIO()
    sf.write(buf, signal(1.0), RATE, format="WAV", subtype="PCM_16")
    wav = buf.getvalue()
    listed = bytearray(wav + b"LIST" + (100).to_bytes(4, "little") + b"INFO" + b"x" * 96)
    listed[4:8] = (len(listed) - 8).to_bytes(4, "little")
    cut_in_metadata = bytes(listed[:-50])  # the samples are all there
    np.testing.assert_array_equal(decode_audio(cut_in_metadata).samples, decode_audio(wav).samples)
    with pytest.raises(AudioError, match="truncated RIFF/WAVE file: the file ends inside its chunk headers"):
        decode_audio(wav[:30], "head.wav")


@pytest.mark.parametrize("fmt", ["WAV", "AU"])  # (libsndfile 1.2 refuses a CAF data chunk of unknown size)
def test_unknown_sizes_of_streaming_writers_decode_fully(fmt):
    buf = io.BytesIO()
    sf.write(buf, signal(2.0), RATE, format=fmt, subtype="PCM_16")
    data = bytearray(buf.getvalue())
    if fmt == "WAV":
        data[4:8] = b"\xff" * 4
        pos = data.find(b"data")
        data[pos + 4 : pos + 8] = b"\xff" * 4
    else:
        data[8:12] = b"\xff" * 4
    decoded = decode_audio(bytes(data), f"stream.{fmt.lower()}")
    assert not decoded.info.length_checked
    np.testing.assert_array_equal(decoded.samples, decode_audio(buf.getvalue()).samples)


# ---------------------------------------------------------------------------------------------- MPEG


def speech(seconds: float) -> np.ndarray:
    x, rate = sf.read(str(SPEECH), dtype="float32")
    assert rate == RATE
    return np.tile(x, -(-int(seconds * RATE) // len(x)))[: int(seconds * RATE)]


def vbr_mp3(tmp_path: Path, samples: np.ndarray, name: str) -> tuple[bytes, bytes]:
    """(the file libsndfile/LAME writes, the same stream without its Xing/LAME frame)."""
    path = tmp_path / name
    sf.write(
        str(path), samples, RATE, format="MP3", subtype="MPEG_LAYER_III", bitrate_mode="VARIABLE", compression_level=0.5
    )
    data = path.read_bytes()
    found = mpeg.scan(data)
    assert found.has_info and found.declared == found.frames  # LAME writes the frame count
    return data, data[: found.audio_start] + data[found.frames_start :]


@pytest.fixture(scope="module")
def mp3s(tmp_path_factory):
    if "MP3" not in sf.available_formats():
        pytest.skip("this libsndfile has no MP3 support")
    directory = tmp_path_factory.mktemp("mp3")
    rng = np.random.default_rng(0)
    loud_first = speech(24.0)
    loud_first[:RATE] = rng.uniform(-0.9, 0.9, RATE).astype(np.float32)  # a high-bitrate first frame
    loud_first[12 * RATE :] = 0.0
    silent_first = speech(24.0)
    silent_first[: 8 * RATE] = 0.0  # a low-bitrate first frame
    return {
        "loud-first": vbr_mp3(directory, loud_first, "loud.mp3"),
        "silent-first": vbr_mp3(directory, silent_first, "silent.mp3"),
    }


@pytest.mark.parametrize("case", ["loud-first", "silent-first"])
def test_vbr_mp3_without_its_header_decodes_to_the_end(mp3s, case):
    with_header, bare = mp3s[case]
    frames = mpeg.scan(bare).frames
    with sf.SoundFile(io.BytesIO(bare)) as fh:
        estimate = fh.frames  # libsndfile's guess from the first frame's bitrate
    assert abs(estimate - frames * 576) > RATE, "the fixture must fool libsndfile's estimate"
    decoded = decode_audio(bare, case)
    # every frame, less the decoder's own 529-sample delay (trimmed as for any Xing stream without LAME tag)
    assert decoded.info.frames == decoded.samples.size == frames * 576 - 529
    assert not decoded.info.length_checked  # a bare stream does not record its length
    assert abs(decoded.samples.size - decode_audio(with_header).samples.size) < 1152  # the same 24 s
    assert decoded.info.seconds == pytest.approx(24.0, abs=0.1)


def test_cut_and_concatenated_mp3(mp3s):
    with_header, bare = mp3s["silent-first"]
    for data, label in ((with_header, "header"), (bare, "bare")):
        with pytest.raises(AudioError, match=f"{label}.mp3: truncated MPEG audio \\(MP3\\) file") as err:
            decode_audio(data[: int(len(data) * 0.6)], f"{label}.mp3")
        assert "missing" in str(err.value) or "cut off" in str(err.value)
    with pytest.raises(
        AudioError,
        match=r"twice.mp3: MPEG audio \(MP3\) file contradicts its own header: .* declares only \d+ \(concatenated",
    ):
        decode_audio(with_header + bare, "twice.mp3")


def test_implausible_sample_rates_are_refused(tmp_path):
    path = tmp_path / "one_hz.wav"
    sf.write(str(path), np.zeros(599, np.float32), 1, subtype="PCM_16")  # 599 frames = 599 s at 1 Hz
    with pytest.raises(
        AudioError, match=f"{path}: sample rate 1 Hz is below the lowest this accepts, {MIN_SAMPLE_RATE} Hz"
    ):
        decode_audio(path)
    with pytest.raises(AudioError, match="sample rate 1 Hz"):
        probe_audio(path.read_bytes())
    sf.write(str(path), signal(1.0)[:8000], 8000, subtype="PCM_16")
    assert decode_audio(path).info.rate == 8000


# ---------------------------------------------------------------------------------------------- results and policy


def test_npz_pieces_are_an_npz_without_a_copy():
    import ml_dtypes

    arrays = {
        "audio_features": np.random.default_rng(1).standard_normal((2, 188, 48), np.float32),
        "valid_tokens": np.array([188, 40], np.int32),
        "empty": np.zeros((0, 3), np.float32),
        "strided": np.arange(20, dtype=np.float32)[::2],
        "bf16": np.ones(4, ml_dtypes.bfloat16),
    }
    pieces = npz_pieces(arrays)
    raw = pieces.join()
    assert pieces.size == len(raw) == sum(len(c) for c in pieces.chunks(1000))
    assert zipfile.ZipFile(io.BytesIO(raw)).testzip() is None  # every CRC checks
    with np.load(io.BytesIO(raw)) as z:
        assert z.files == list(arrays)
        for name, value in arrays.items():
            if name != "bf16":
                np.testing.assert_array_equal(z[name], value)
                assert z[name].dtype == value.dtype
    features = arrays["audio_features"]
    assert any(np.shares_memory(np.frombuffer(p, np.uint8), features) for p in pieces.parts if p.nbytes)
    np.testing.assert_array_equal(np.load(io.BytesIO(npy_pieces(features).join())), features)


def test_upload_refusal_policy():
    limits = Limits(
        max_memory_bytes=1000 * MIB,
        max_upload_bytes=100 * MIB,
        max_concurrent_uploads=2,
        max_client_held_bytes=50 * MIB,
    )
    assert upload_refusal(limits, reserved=0, uploads=0, client_held=0) is None
    assert upload_refusal(limits, reserved=0, uploads=2, client_held=0).code == "uploads_full"
    refusal = upload_refusal(limits, reserved=0, uploads=0, client_held=50 * MIB)
    assert refusal.code == "results_unfetched" and refusal.status == 429 and refusal.retry_after
    full = upload_refusal(limits, reserved=1000 * MIB - limits.max_body_bytes + 1, uploads=0, client_held=0)
    assert full.code == "memory_full" and full.status == 503
    assert upload_refusal(limits, reserved=1000 * MIB - limits.max_body_bytes, uploads=1, client_held=0) is None
    assert Limits(max_memory_bytes=400 * MIB).client_held_bytes == 100 * MIB  # a quarter by default
