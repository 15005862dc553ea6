"""What the encoder takes and gives, without the encoder: a clip (`Clip`), a run's rows (`EncodeResult`, written
as `.npz`), an input that failed (`InputFailure`, `EncodeFailed`) and the frame bucket a clip runs in -- shared by
the serial path (`runtime/encoder/encode.py`) and the parallel pipeline (`runtime/encoder/pipeline.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...files import atomic_writer
from .npz_stream import npz_pieces


class EncodeError(ValueError):
    """The request cannot be encoded as given (too long, empty, no bucket fits)."""


@dataclass(frozen=True)
class Clip:
    """One clip of at most 30 s: what its call reads and where it came from."""

    source: int
    start_s: float
    features: np.ndarray | None  # [frames, 128] float32 log-mel; None where the artifact computes it
    frames: int  # valid mel frames: the smallest bucket that holds them runs the clip
    samples: np.ndarray | None = None  # [n] float32 16 kHz samples, for an artifact that computes the mel

    def call_input(self) -> tuple[np.ndarray, int]:
        """What the clip puts in its call slot: its samples and their number (device mel), or its
        valid log-mel frames and their number."""
        if self.samples is not None:
            return self.samples, int(self.samples.shape[0])
        assert self.features is not None, "a clip carries features or samples"
        return self.features[: self.frames], self.frames


@dataclass(frozen=True)
class InputFailure:
    """An input that could not be encoded: its index in the given list, its path and why."""

    source: int
    path: str
    message: str  # names the input (the decoder's messages start with it)


@dataclass
class EncodeResult:
    audio_features: np.ndarray  # [N, 188, text_hidden] float32: what the language model receives
    encoder_hidden: np.ndarray  # [N, 188, hidden] float32, zero past the valid length
    valid_tokens: np.ndarray  # [N] int32
    clip_source: np.ndarray  # [N] int32: index of the input each clip came from
    clip_start_s: np.ndarray  # [N] float32: start of the clip within its input
    failures: tuple[InputFailure, ...] = ()  # inputs that have no clips here (see EncodeFailed)

    def arrays(self) -> dict[str, np.ndarray]:
        """What `save` writes: the five clip arrays, and `failed_source` int32 [F] / `failed_error`
        str [F], the index in the given list and the message of each input that failed (empty when
        none did)."""
        return {
            "audio_features": self.audio_features,
            "encoder_hidden": self.encoder_hidden,
            "valid_tokens": self.valid_tokens,
            "clip_source": self.clip_source,
            "clip_start_s": self.clip_start_s,
            "failed_source": np.array([f.source for f in self.failures], np.int32),
            "failed_error": np.array([f.message for f in self.failures], dtype=np.str_),
        }

    def save(self, path: str | Path) -> None:
        """Write `arrays()` as an uncompressed .npz, atomically (a temporary sibling renamed into
        place: an interrupted write never leaves a partial file under `path`).  Laid out straight from
        the arrays (`npz_stream`: no second copy, half of `np.savez`'s time); a result past plain
        ZIP's 4 GiB (about 1,500 clips) is written by `np.savez`, which writes ZIP64."""
        arrays = self.arrays()
        try:
            pieces = npz_pieces(arrays)
        except ValueError:  # more than plain ZIP holds
            pieces = None
        with atomic_writer(path) as handle:
            if pieces is None:
                np.savez(handle, **arrays)
            else:
                for piece in pieces.chunks(8 << 20):
                    handle.write(piece)


class EncodeFailed(EncodeError):
    """Some inputs could not be encoded.  Each failed alone: `result` holds every other input's clips
    (`clip_source` indexes the given list; None when no input succeeded) and `failures` says which
    failed and why."""

    def __init__(self, failures: Sequence[InputFailure], total: int, result: EncodeResult | None) -> None:
        self.failures, self.total, self.result = tuple(failures), total, result
        if total == 1:  # one input: its own message, as the serial path raises it
            super().__init__(self.failures[0].message)
            return
        lines = "\n".join(f"  {f.message}" for f in self.failures)
        super().__init__(f"{len(self.failures)} of {total} input(s) could not be encoded:\n{lines}")


def choose_bucket(frames: int, buckets: Sequence[int]) -> int:
    fitting = [b for b in sorted(buckets) if b >= frames]
    if not fitting:
        raise EncodeError(
            f"a clip of {frames} mel frames fits no frame bucket ({', '.join(map(str, buckets))}); "
            "clips are at most 30 s (2997 frames)"
        )
    return fitting[0]
