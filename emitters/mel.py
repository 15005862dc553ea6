"""The device log-mel front end: one builder per op family (frame counts, framing, DFT, magnitude,
filterbank + log) and their composition, the first stage of an artifact that computes its own features.

The numeric steps and their emulation are in `contracts/mel.py`; the extractor's constants come from
`runtime/audio/frontend.py`, the one place that defines them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..contracts.mel import BINS, DFT_METHODS, MelFrontEnd, dft_table, filterbank_f32, hann_window, samples_for_frames
from ..runtime.audio.frontend import (
    FFT_LENGTH,
    FRAME_LENGTH,
    HOP_LENGTH,
    MEL_FLOOR,
    MIN_SAMPLES,
    N_MELS,
    PAD_MULTIPLE,
    PREEMPHASIS,
    WINDOW_SIZE,
)
from .ops import OpEmitter
from .render import Func
from .render import tensor_type as tensor
from .shared_ops import f32, hex_blob
from .symbols import Choice, Int, Specialisation, token


# ---------------------------------------------------------------------------------------------- specialisations
@dataclass(frozen=True)
class MelFrameCounts(Specialisation):
    family: ClassVar[str] = "mel_frame_counts"
    clips: int = token(Int("B"))


@dataclass(frozen=True)
class MelFraming(Specialisation):
    family: ClassVar[str] = "mel_framing"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    samples: int = token(Int("S"))


@dataclass(frozen=True)
class MelDft(Specialisation):
    family: ClassVar[str] = "mel_dft"
    method: str = token(Choice("", DFT_METHODS))
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))


@dataclass(frozen=True)
class MelMagnitude(Specialisation):
    family: ClassVar[str] = "mel_magnitude"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))


@dataclass(frozen=True)
class MelLog(Specialisation):
    family: ClassVar[str] = "mel_log"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    mel: int = token(Int("M"))


@dataclass(frozen=True)
class MelFront(Specialisation):
    family: ClassVar[str] = "mel_front"
    clips: int = token(Int("B"))
    frames: int = token(Int("T"))
    dft: str = token(Choice("", DFT_METHODS))


# ---------------------------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class ConstantTable:
    """An F32 table the front end reads, held as an immutable module global named `symbol`."""

    symbol: str
    values: np.ndarray

    @property
    def type(self) -> str:
        return f32(self.values.shape)

    @property
    def blob(self) -> str:
        return hex_blob(self.values)


#: The tables each DFT method reads besides the frames (in argument order).
_DFT_TABLES = {"matmul": (("mel_dft", dft_table),), "rfft": ()}


def dft_tables(method: str) -> list[ConstantTable]:
    return [ConstantTable(symbol, make()) for symbol, make in _DFT_TABLES[method]]


def mel_tables(front: MelFrontEnd) -> list[ConstantTable]:
    """Every table of a device front end, in the order its function takes them."""
    assert front.dft is not None, "the host front end has no tables in the module"
    return [
        ConstantTable("mel_window", hann_window()),
        *dft_tables(front.dft),
        ConstantTable("mel_filterbank", filterbank_f32()),
    ]


def _f64_hex(value: float) -> str:
    """Bit-exact MLIR spelling of an f64 constant."""
    return f"0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016X}"


@dataclass
class MelEmitter:
    """Renders the front end's templates into the module of `ops` (under its contract)."""

    ops: OpEmitter

    def _add(self, template: str, func: Func, calls: tuple[Func, ...] = (), **params: object) -> Func:
        return self.ops.module.add(template, func, calls, c=self.ops.contract, **params)

    def frame_counts(self, clips: int) -> Func:
        n = tensor([clips], "i32")
        return self._add(
            "mel_frame_counts.mlir.j2",
            Func(MelFrameCounts(clips).symbol, (n,), (n,)),
            b=clips,
            hop=HOP_LENGTH,
            pad=PAD_MULTIPLE,
            shortest=MIN_SAMPLES,
            window=WINDOW_SIZE,
        )

    def framing(self, clips: int, frames: int) -> Func:
        samples = samples_for_frames(frames)
        full = FRAME_LENGTH // HOP_LENGTH
        func = Func(
            MelFraming(clips, frames, samples).symbol,
            (f32([clips, samples]), tensor([clips], "i32"), f32([FRAME_LENGTH])),
            (f32([clips, frames, FRAME_LENGTH]),),
        )
        return self._add(
            "mel_framing.mlir.j2",
            func,
            b=clips,
            t=frames,
            s=samples,
            hop=HOP_LENGTH,
            length=FRAME_LENGTH,
            used=HOP_LENGTH * (frames - 1) + FRAME_LENGTH,
            full=full,
            blocks=frames + full,
            coefficient=PREEMPHASIS,
            first_coefficient=1.0 - PREEMPHASIS,
        )

    def dft(self, clips: int, frames: int, method: str) -> Func:
        spectrum = f32([clips, frames, BINS])
        tables = tuple(table.type for table in dft_tables(method))
        func = Func(
            MelDft(method, clips, frames).symbol, (f32([clips, frames, FRAME_LENGTH]), *tables), (spectrum, spectrum)
        )
        return self._add(
            f"mel_dft_{method}.mlir.j2", func, b=clips, t=frames, length=FRAME_LENGTH, bins=BINS, fft=FFT_LENGTH
        )

    def magnitude(self, clips: int, frames: int) -> Func:
        spectrum = f32([clips, frames, BINS])
        func = Func(MelMagnitude(clips, frames).symbol, (spectrum, spectrum), (spectrum,))
        return self._add("mel_magnitude.mlir.j2", func, b=clips, t=frames, bins=BINS)

    def log_mel(self, clips: int, frames: int) -> Func:
        func = Func(
            MelLog(clips, frames, N_MELS).symbol,
            (f32([clips, frames, BINS]), f32([BINS, N_MELS])),
            (f32([clips, frames, N_MELS]),),
        )
        return self._add(
            "mel_log.mlir.j2",
            func,
            b=clips,
            t=frames,
            bins=BINS,
            mel=N_MELS,
            floor=_f64_hex(MEL_FLOOR),
            floor_text=f"{MEL_FLOOR:g}",
        )

    def front(self, clips: int, frames: int, front: MelFrontEnd) -> Func:
        """Samples [B, S] + counts [B] (+ the tables) -> (log-mel [B, T, 128] F32, valid frames [B] i32)."""
        assert front.dft is not None, "the host front end is not part of the module"
        tables = mel_tables(front)
        parts = dict(
            counts=self.frame_counts(clips),
            framing=self.framing(clips, frames),
            dft=self.dft(clips, frames, front.dft),
            magnitude=self.magnitude(clips, frames),
            log=self.log_mel(clips, frames),
        )
        func = Func(
            MelFront(clips, frames, front.dft).symbol,
            (f32([clips, samples_for_frames(frames)]), tensor([clips], "i32"), *(t.type for t in tables)),
            (f32([clips, frames, N_MELS]), tensor([clips], "i32")),
        )
        return self._add(
            "mel_front.mlir.j2",
            func,
            tuple(parts.values()),
            b=clips,
            t=frames,
            s=samples_for_frames(frames),
            mel=N_MELS,
            tables=tables,
            dft_tables=dft_tables(front.dft),
            **parts,
        )
