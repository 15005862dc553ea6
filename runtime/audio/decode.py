"""Decode audio -- a file or an upload's bytes, one path for both -- to 16 kHz mono float32.

    decoded = decode_audio("talk.flac")                  # or decode_audio(upload_bytes, "talk.flac")
    decoded.samples, decoded.info.rate, decoded.info.length_checked

The CLI (`encode`, `prefill`, via :func:`load_audio`) and the server (`serve/scheduler.py`) both call
:func:`decode_audio`, so the same bytes give the same samples -- or the same error -- either way.
Steps, each with an :class:`AudioError` that names the input and says what is wrong:

1. the container is recognised from its leading bytes (`runtime/audio/containers.py`); formats libsndfile
   cannot decode at all (MP4/AAC, WebM, AMR, WMA) are refused by name;
2. the container's declared length is read from its header and compared with the bytes present: a
   **truncated** input is an error saying how much is missing (declared vs present, and about how
   many seconds), never a shorter recording; containers that record no length (IRCAM, PVF, PAF,
   streamed WAV/AU/CAF/FLAC) decode fully and say so in ``info.length_checked``;
3. libsndfile decodes it (paths are opened by libsndfile itself; bytes and MPEG streams through a
   zero-copy reader over the buffer, so an upload is never copied).  MPEG audio without a Xing/VBRI
   header gets one built from a walk of its frames (`runtime/audio/mpeg.py`): libsndfile would otherwise stop
   at an estimate of the length, dropping the end of variable-bitrate audio;
4. the decode must deliver every frame the decoder itself announced (and, for FLAC, the STREAMINFO
   total), the sample rate must be at least :data:`MIN_SAMPLE_RATE` (a 1 Hz header would make a few
   hundred bytes into minutes of work), and every sample must be finite;
5. channels are averaged in float64 and other rates are resampled with soxr VHQ, then float32.

Decoding happens in float64 so 32-bit integer PCM keeps its precision until the final rounding;
the result is not clipped (resampling can overshoot +-1 slightly).
"""

from __future__ import annotations

import bisect
import io
import mmap
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import numpy as np

from . import mpeg
from .containers import MPEG, Buffer, Container, Extent, Inconsistent, Truncated, sniff

__all__ = [
    "AudioError",
    "AudioInfo",
    "DecodedAudio",
    "MIN_SAMPLE_RATE",
    "SAMPLE_RATE",
    "Source",
    "decode_audio",
    "load_audio",
    "probe_audio",
    "resample",
    "to_mono_16k",
]

SAMPLE_RATE = 16_000  # Hz: what the feature extractor consumes
# The lowest rate accepted: telephone audio.  Below it a header can turn a few bytes into hours of
# resampled audio (a 1 Hz WAV of 600 frames is 600 s), and nothing useful for speech survives anyway.
MIN_SAMPLE_RATE = 8_000

Source = Union[str, "os.PathLike[str]", bytes, bytearray]


class AudioError(ValueError):
    """Audio that cannot be used: missing/unreadable/corrupt/truncated input, unsupported format, no
    samples, non-finite samples, an implausible sample rate, or an array of the wrong shape or dtype.
    The message names the file (or upload)."""


@dataclass(frozen=True)
class AudioInfo:
    """What an input holds, from its headers (before decoding): for admission and reports."""

    rate: int
    channels: int
    frames: int  # the decoder's frame count (exact: MPEG lengths come from a frame walk)
    format: str  # libsndfile's format and subtype, e.g. "WAV PCM_16"
    container: str | None  # the container recognised from the leading bytes (None: only libsndfile knew it)
    length_checked: bool  # the container declares its length and all of it is present

    @property
    def seconds(self) -> float:
        return self.frames / self.rate


@dataclass(frozen=True)
class DecodedAudio:
    samples: np.ndarray  # float32 [N] at SAMPLE_RATE, mono
    info: AudioInfo


# ---------------------------------------------------------------------------------------------- the input


class _BufferReader(io.RawIOBase):
    """A seekable read-only file over consecutive ``(buffer, start, end)`` pieces, copying nothing but
    what is read (libsndfile's virtual IO: an upload or a memory-mapped file is never duplicated)."""

    def __init__(self, pieces: Sequence[tuple[Buffer, int, int]]) -> None:
        super().__init__()
        self._bases = [memoryview(buffer) for buffer, _, _ in pieces]
        self._views = [base[start:end] for base, (_, start, end) in zip(self._bases, pieces)]
        self._starts = [0]
        for view in self._views:
            self._starts.append(self._starts[-1] + len(view))
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._starts[-1]}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, out) -> int:  # type: ignore[override]
        target = memoryview(out).cast("B")
        done = 0
        while done < len(target) and self._pos < self._starts[-1]:
            index = bisect.bisect_right(self._starts, self._pos) - 1
            view, offset = self._views[index], self._pos - self._starts[index]
            n = min(len(target) - done, len(view) - offset)
            target[done : done + n] = view[offset : offset + n]
            done += n
            self._pos += n
        return done

    def close(self) -> None:
        for view in self._views + self._bases:  # release the exports, so a memory map can be closed
            view.release()
        self._views, self._bases = [], []
        super().close()


@dataclass
class _Input:
    name: str
    buffer: Buffer
    path: Path | None


@contextmanager
def _open_input(source: Source, name: str | None) -> Iterator[_Input]:
    """The input's bytes: the upload itself, or a read-only memory map of the file."""
    if isinstance(source, (bytes, bytearray)):
        label = name or "upload"
        if not source:
            raise AudioError(f"{label}: empty upload (0 bytes), not audio")
        yield _Input(label, source, None)
        return
    path = Path(source)
    label = name or str(path)
    if not path.exists():
        raise AudioError(f"{label}: audio file not found")
    if path.is_dir():
        raise AudioError(f"{label}: is a directory, not an audio file")
    try:
        handle = open(path, "rb")
    except OSError as exc:  # permission denied and the like
        raise AudioError(f"{label}: cannot open file: {exc.strerror or exc}") from None
    with handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            raise AudioError(f"{label}: empty file (0 bytes), not audio")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            yield _Input(label, mapped, path)


# ---------------------------------------------------------------------------------------------- checks


def _about(extent: Extent, frames: int, rate: int, samples_per_unit: int) -> str:
    """The missing part as seconds of audio, when that can be told."""
    if rate <= 0:
        return ""
    if extent.unit == "bytes":  # the present bytes decoded to `frames` frames: the same rate for the rest
        return f", about {extent.missing * frames / extent.present / rate:.2f} s" if extent.present and frames else ""
    return f", {extent.missing * samples_per_unit / rate:.2f} s"


def _truncated(
    name: str, container: Container, extent: Extent, frames: int = 0, rate: int = 0, samples_per_unit: int = 1
) -> AudioError:
    return AudioError(
        f"{name}: truncated {container.name} file: {extent.where} declares {extent.declared} "
        f"{extent.unit} but only {extent.present} are present ({extent.missing} {extent.unit} "
        f"missing{_about(extent, frames, rate, samples_per_unit)})"
    )


@dataclass(frozen=True)
class _Checked:
    """The container check's findings: what to open and what the decode must deliver."""

    container: Container | None
    extent: Extent | None
    scan: mpeg.Scan | None  # MPEG streams: the frame walk

    @property
    def length_checked(self) -> bool:
        return self.extent is not None and self.extent.declared is not None

    @property
    def needs_length_header(self) -> bool:
        """Layer III without a frame count: libsndfile would stop at an estimate of the length."""
        return (
            self.scan is not None
            and self.scan.first is not None
            and self.scan.first.layer == 3
            and self.scan.declared is None
        )


def _check_container(inp: _Input) -> _Checked:
    container = sniff(inp.buffer)
    if container is None:
        return _Checked(None, None, None)
    if container.extent is None:
        raise AudioError(
            f"{inp.name}: unsupported audio format {container.name}; libsndfile cannot decode it "
            f"(convert it to WAV, FLAC or OGG first)"
        )
    try:
        if container is MPEG:
            found = mpeg.scan(inp.buffer)
            return _Checked(container, mpeg.stream_extent(found), found)
        return _Checked(container, container.extent(inp.buffer), None)
    except Truncated as exc:
        raise AudioError(f"{inp.name}: truncated {container.name} file: {exc}") from None
    except Inconsistent as exc:
        raise AudioError(f"{inp.name}: {container.name} file contradicts its own header: {exc}") from None


def _decode_failure(inp: _Input, checked: _Checked, exc: Exception) -> AudioError:
    message = getattr(exc, "error_string", None) or str(exc)
    container, extent = checked.container, checked.extent
    if container is None:
        return AudioError(f"{inp.name}: not a readable audio file (libsndfile: {message})")
    if extent is not None and extent.missing:
        return _truncated(inp.name, container, extent)
    if container is MPEG and "MP3" not in _soundfile().available_formats():
        return AudioError(
            f"{inp.name}: unsupported audio format MP3: this libsndfile build has no MP3 decoder "
            f"(convert it to WAV or FLAC, or install a soundfile wheel with MP3 support)"
        )
    return AudioError(
        f"{inp.name}: {container.name} file is corrupt or truncated, or uses an unsupported "
        f"encoding (libsndfile: {message})"
    )


# ---------------------------------------------------------------------------------------------- decoding


def _soundfile():
    try:
        import soundfile
    except (ImportError, OSError) as exc:  # pragma: no cover - soundfile is a dependency
        raise AudioError(f"cannot decode audio: the 'soundfile' package is not installed ({exc})") from None
    return soundfile


@contextmanager
def _opened(inp: _Input, checked: _Checked):
    """libsndfile on the input: the path itself, or a zero-copy reader over the bytes (with a Xing
    frame in front of an MPEG stream that has none)."""
    sf = _soundfile()
    reader = None
    try:
        if checked.needs_length_header:
            assert checked.scan is not None
            found, size = checked.scan, len(inp.buffer)
            header = mpeg.length_header(found)
            reader = _BufferReader(
                [(inp.buffer, 0, found.audio_start), (header, 0, len(header)), (inp.buffer, found.frames_start, size)]
            )
            handle = sf.SoundFile(reader)
        elif inp.path is not None:
            handle = sf.SoundFile(str(inp.path))
        else:
            reader = _BufferReader([(inp.buffer, 0, len(inp.buffer))])
            handle = sf.SoundFile(reader)
    except (sf.SoundFileError, RuntimeError, TypeError, ValueError) as exc:
        if reader is not None:
            reader.close()
        raise _decode_failure(inp, checked, exc) from None
    except OSError as exc:
        raise AudioError(f"{inp.name}: cannot read file: {exc.strerror or exc}") from None
    try:
        with handle:
            yield handle
    finally:
        if reader is not None:
            reader.close()


def _info(inp: _Input, checked: _Checked, handle) -> AudioInfo:
    rate, frames = int(handle.samplerate), int(handle.frames)
    container, extent = checked.container, checked.extent
    if rate < MIN_SAMPLE_RATE:
        raise AudioError(
            f"{inp.name}: sample rate {rate} Hz is below the lowest this accepts, {MIN_SAMPLE_RATE} Hz "
            f"(a header error, or audio with nothing left of speech)"
        )
    if container is not None and extent is not None and extent.missing:
        per_frame = checked.scan.samples_per_frame if checked.scan is not None else 1
        raise _truncated(inp.name, container, extent, frames, rate, per_frame)
    return AudioInfo(
        rate,
        int(handle.channels),
        frames,
        f"{handle.format} {handle.subtype}",
        container.name if container is not None else None,
        checked.length_checked,
    )


_BLOCK_FRAMES = 1 << 16


def _read_all(handle) -> np.ndarray:
    """Every frame as float64 [frames, channels]: one read, or block by block for the codecs that
    libsndfile cannot seek in (GSM 6.10, G.72x, NMS ADPCM, XI DPCM), where soundfile needs a count."""
    if handle.seekable():
        return handle.read(dtype="float64", always_2d=True)
    blocks = []
    while True:
        block = handle.read(_BLOCK_FRAMES, dtype="float64", always_2d=True)
        blocks.append(block)
        if len(block) < _BLOCK_FRAMES:
            return np.concatenate(blocks)


def probe_audio(source: Source, name: str | None = None) -> AudioInfo:
    """What `decode_audio` would decode, from the headers only (and the container's length check)."""
    with _open_input(source, name) as inp:
        checked = _check_container(inp)
        with _opened(inp, checked) as handle:
            info = _info(inp, checked, handle)
    if info.frames <= 0:
        raise AudioError(f"{inp.name}: contains no audio samples (0 frames)")
    return info


def decode_audio(source: Source, name: str | None = None) -> DecodedAudio:
    """Decode a file (path) or an upload (bytes; `name` names it in messages) to 16 kHz mono float32.

    Raises :class:`AudioError`, naming the input, when it is missing, a directory, empty, not audio,
    in a container libsndfile cannot decode, truncated, corrupt, below :data:`MIN_SAMPLE_RATE`, has
    no samples or holds NaN/Inf.  See the module docstring for every step.
    """
    with _open_input(source, name) as inp:
        checked = _check_container(inp)
        with _opened(inp, checked) as handle:
            info = _info(inp, checked, handle)
            try:
                data = _read_all(handle)
            except (RuntimeError, ValueError) as exc:  # a codec error in the middle of the stream
                raise _decode_failure(inp, checked, exc) from None
    decoded = data.shape[0]
    if 0 < decoded < info.frames:
        raise AudioError(
            f"{inp.name}: truncated or corrupt {info.container or info.format} data: the decoder "
            f"announced {info.frames} frames but only {decoded} could be decoded "
            f"({(info.frames - decoded) / info.rate:.2f} s missing)"
        )
    extent = checked.extent
    if extent is not None and extent.present is None and extent.declared is not None and decoded < extent.declared:
        assert checked.container is not None
        decoded_extent = Extent(extent.unit, extent.declared, decoded, extent.where)
        raise _truncated(inp.name, checked.container, decoded_extent, decoded, info.rate)
    samples, _ = to_mono_16k(data, info.rate, inp.name)
    return DecodedAudio(samples, info)


def load_audio(path: Source, name: str | None = None) -> tuple[np.ndarray, int]:
    """``(samples, original_rate)`` of :func:`decode_audio`: 16 kHz mono float32 and the file's own rate."""
    decoded = decode_audio(path, name)
    return decoded.samples, decoded.info.rate


def to_mono_16k(data: np.ndarray, rate: int, name: str) -> tuple[np.ndarray, int]:
    """Decoded [frames, channels] samples -> checked float32 mono at 16 kHz (channels averaged)."""
    if data.shape[0] == 0:
        raise AudioError(f"{name}: contains no audio samples (0 frames)")
    if rate <= 0:
        raise AudioError(f"{name}: invalid sample rate {rate}")
    bad = ~np.isfinite(data)
    if bad.any():
        first = int(np.argwhere(bad)[0, 0])
        raise AudioError(
            f"{name}: {int(bad.sum())} non-finite (NaN/Inf) sample value(s), "
            f"the first at sample {first} ({first / rate:.3f} s)"
        )
    mono = data.mean(axis=1) if data.shape[1] > 1 else data[:, 0]
    if rate != SAMPLE_RATE:
        mono = resample(mono, rate, SAMPLE_RATE)
    return np.ascontiguousarray(mono, dtype=np.float32), rate


def resample(samples: np.ndarray, orig_rate: int, target_rate: int = SAMPLE_RATE) -> np.ndarray:
    """Resample a 1-D signal with soxr at ``quality="VHQ"``; returns float64 (or the input if equal).

    Why soxr (python-soxr, the SoX resampler library): it is the reference-quality, actively
    maintained resampler (librosa's default since 0.10), handles any rational or irrational ratio
    (44.1 kHz -> 16 kHz is 160/441) without building a huge polyphase filter, and VHQ is its
    highest-precision preset. Measured for 44.1 kHz -> 16 kHz: flat within 0.02 dB up to 7.4 kHz,
    -3 dB at 7.6 kHz (the top edge of the mel filterbank), and input above 8 kHz, which would alias,
    is suppressed by more than 180 dB. ``scipy.signal.resample_poly`` (Kaiser beta=5 window by
    default: roughly -50 to -60 dB stopband and a wider transition band) was the fallback in the
    plan, but soxr is a small wheel needing only NumPy and was available, so it is required rather
    than carrying two code paths whose outputs differ.
    """
    if orig_rate == target_rate:
        return samples
    try:
        import soxr
    except ImportError as exc:  # pragma: no cover - soxr is a dependency
        raise AudioError(
            f"audio at {orig_rate} Hz needs resampling to {target_rate} Hz, but the 'soxr' "
            f"package is not installed ({exc})"
        ) from None
    x = np.ascontiguousarray(samples, dtype=np.float64)
    return soxr.resample(x, orig_rate, target_rate, quality="VHQ")
