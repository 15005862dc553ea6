"""The encoder's loaded program (`AudioSession`): a compiled audio artifact's bucketed encode entries, found by
their reflection and checked against the mel front end they take -- the audio stage on top of the generic
`LoadedProgram` (runtime/programs/session.py), which the prefill stage and the decoder share."""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...contracts.mel import MelChoiceError, MelFrontEnd, mel_from_reflection, samples_for_frames
from ...emitters.entries import EncodeEntry
from ..programs.session import LoadedProgram, SessionError

_FIRST_INPUT = re.compile(r"%input0: tensor<([\dx]+)xf32>")


@dataclass(frozen=True)
class EntryInfo:
    name: str
    frames: int
    clips: int
    outputs: tuple[str, ...]
    contract: str
    #: where the entry's log-mel is computed, and one clip's first input: (frames, mel bins) or (samples,)
    mel: MelFrontEnd
    input_shape: tuple[int, ...]


class AudioSession(LoadedProgram):
    """Runs the bucketed `encode_f{T}_c{B}` entries of one compiled audio artifact.

    An artifact's entries take either log-mel features (host mel) or 16 kHz samples (device mel), as
    each entry's reflection says (`gemma3n.mel`, contracts/mel.py); `mel` and `input_shape` tell callers
    which, and the declared input type is checked against it when the artifact is loaded."""

    def __init__(
        self,
        vmfb: bytes | str | Path,
        parameter_files: Sequence[str | Path],
        device: str = "local-task",
        scope: str = "model",
    ) -> None:
        super().__init__(vmfb, parameter_files, device, scope)
        self.entries: dict[tuple[int, int], EntryInfo] = {}
        for name, entry in self.entry_points(EncodeEntry).items():
            reflection = self.reflection(name)
            try:
                mel = mel_from_reflection(reflection)
            except MelChoiceError as exc:
                raise SessionError(f"entry {name}: {exc}") from None
            info = EntryInfo(
                name,
                entry.frames,
                entry.clips,
                self.output_names(name),
                reflection.get("gemma3n.contract", ""),
                mel,
                _input_shape(name, reflection, entry.frames, entry.clips, mel),
            )
            self.entries[(info.frames, info.clips)] = info
        kinds = {info.mel for info in self.entries.values()}
        if len(kinds) != 1:
            names = ", ".join(sorted(k.name for k in kinds))
            raise SessionError(f"the artifact's entries mix mel front ends ({names})")
        self.mel: MelFrontEnd = kinds.pop()

    @property
    def buckets(self) -> list[tuple[int, int]]:
        return sorted(self.entries)

    def input_shape(self, frames: int) -> tuple[int, ...]:
        """One clip's first input for the `frames` bucket: (frames, mel bins) features or (samples,)."""
        info = next((i for (f, _), i in sorted(self.entries.items()) if f == frames), None)
        if info is None:
            raise SessionError(
                f"no entry for {frames} frames; the artifact has {', '.join(f'{f}x{c}' for f, c in self.buckets)}"
            )
        return info.input_shape

    def run(self, inputs: np.ndarray, counts: np.ndarray) -> dict[str, np.ndarray]:
        """Run the entry whose input is `inputs`' shape: host mel, features [clips, frames, mel bins] and the
        valid frames per clip; device mel, 16 kHz samples [clips, samples] (zero past each clip) and the
        number of real samples per clip."""
        return self.run_async(inputs, counts).result()

    def run_async(self, inputs: np.ndarray, counts: np.ndarray) -> Future[dict[str, np.ndarray]]:
        """`run`, queued on the program's thread (see `invoke_async`); the inputs are checked now."""
        inputs = np.ascontiguousarray(inputs, dtype=np.float32)
        counts = np.ascontiguousarray(counts, dtype=np.int32)
        what = "samples must be [clips, samples]" if self.mel.on_device else "mel must be [clips, frames, mel bins]"
        if inputs.ndim != (2 if self.mel.on_device else 3):
            raise SessionError(f"{what}, got shape {inputs.shape}")
        clips = inputs.shape[0]
        info = next((i for i in self.entries.values() if i.clips == clips and i.input_shape == inputs.shape[1:]), None)
        if info is None:
            raise SessionError(
                f"no entry takes {self.mel.name} input {inputs.shape}; the artifact has "
                + ", ".join(f"{c}x{'x'.join(map(str, i.input_shape))}" for (_, c), i in sorted(self.entries.items()))
            )
        if counts.shape != (clips,):
            raise SessionError(f"counts must have one value per clip ({clips}), got shape {counts.shape}")
        if self.mel.on_device and (counts.min() < 0 or counts.max() > inputs.shape[1]):
            raise SessionError(f"sample counts must be within 0..{inputs.shape[1]}, got {counts.tolist()}")
        return self.invoke_async(info.name, info.outputs, inputs, counts)


def _input_shape(name: str, reflection: dict[str, str], frames: int, clips: int, mel: MelFrontEnd) -> tuple[int, ...]:
    """One clip's first input as the entry declares it, checked against what its mel front end takes."""
    match = _FIRST_INPUT.search(reflection.get("iree.abi.declaration", ""))
    if match is None:
        raise SessionError(f"entry {name}: no F32 first input in its declaration")
    dims = tuple(int(d) for d in match.group(1).split("x"))
    expected = (clips, samples_for_frames(frames)) if mel.on_device else (clips, frames)
    if dims[: len(expected)] != expected or len(dims) != (2 if mel.on_device else 3):
        raise SessionError(
            f"entry {name} ({mel.name} mel) declares its first input as {'x'.join(map(str, dims))}, "
            f"not {'x'.join(map(str, expected))}{'' if mel.on_device else 'x<mel bins>'}"
        )
    return dims[1:]
