"""A loaded audio artifact: one IREE context, one resident copy of the weights, every bucket entry.

The weights are IREE parameters: the context binds them by checkpoint tensor name straight from
the checkpoint's safetensors shards (memory-mapped), so nothing is converted or copied on disk.
Output names come from the artifact's own reflection metadata (`gemma3n.outputs`), so a session
never has to guess what an entry returns.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence, TypeVar

import numpy as np

T = TypeVar("T")
_ENTRY = re.compile(r"^encode_f(\d+)_c(\d+)$")
DEVICE_FOR_TARGET = {"llvm-cpu": "local-task", "cuda": "cuda"}


class SessionError(RuntimeError):
    """The artifact, its parameters or a call's inputs do not fit together."""


@dataclass(frozen=True)
class EntryInfo:
    name: str
    frames: int
    clips: int
    outputs: tuple[str, ...]
    contract: str


class LoadedProgram:
    """A compiled artifact loaded in one IREE context with its parameters (the resident weights).

    Every IREE call of a program (loading, invoking, reading results back) runs on the program's
    own thread: the CUDA driver binds its context to the thread that created it, so a context
    loaded on one thread and called from another (a server's device thread) fails with
    CUDA_ERROR_INVALID_CONTEXT.  Callers may use the program from any thread.
    """

    def __init__(self, vmfb: bytes | str | Path, parameter_files: Sequence[str | Path], device: str = "local-task",
                 scope: str = "model") -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="iree-program")
        self._invokers: dict[str, object] = {}
        self._on_thread(self._load, vmfb, parameter_files, device, scope)

    def _on_thread(self, fn: Callable[..., T], *args: object) -> T:
        return self._thread.submit(fn, *args).result()

    def _load(self, vmfb: bytes | str | Path, parameter_files: Sequence[str | Path], device: str, scope: str) -> None:
        import iree.runtime as rt

        self._rt = rt
        self.instance = rt.VmInstance()
        try:
            self.device = rt.get_device(device)
        except Exception as exc:  # the runtime raises plain ValueError/RuntimeError
            raise SessionError(f"cannot open IREE device {device!r}: {exc}") from None
        index = rt.ParameterIndex()
        for path in parameter_files:
            path = Path(path)
            if not path.is_file():
                raise SessionError(f"parameter file {path} does not exist")
            index.load(str(path))
        self._index = index  # the parameter provider reads from the index: keep it alive
        params = rt.create_io_parameters_module(self.instance, index.create_provider(scope=scope))
        if isinstance(vmfb, (str, Path)):
            self.module = rt.VmModule.mmap(self.instance, str(vmfb))
        else:
            self.module = rt.VmModule.copy_buffer(self.instance, vmfb)
        try:
            self.context = rt.VmContext(self.instance, modules=[rt.create_hal_module(self.instance, self.device),
                                                                params, self.module])
        except Exception as exc:
            raise SessionError(f"cannot load the artifact with its parameters (a weight missing from the "
                               f"checkpoint fails here): {exc}") from None

    def reflection(self, name: str) -> dict[str, str]:
        return dict(self.module.lookup_function(name).reflection)

    def output_names(self, name: str) -> tuple[str, ...]:
        """The entry's output names, recorded by the emitter in its reflection metadata."""
        return tuple(self.reflection(name).get("gemma3n.outputs", "").split(","))

    def invoke(self, name: str, outputs: Sequence[str], *args: np.ndarray) -> dict[str, np.ndarray]:
        return self._on_thread(self._invoke, name, outputs, args)

    def _invoke(self, name: str, outputs: Sequence[str], args: tuple[np.ndarray, ...]) -> dict[str, np.ndarray]:
        invoker = self._invokers.get(name)
        if invoker is None:
            invoker = self._rt.FunctionInvoker(self.context, self.device, self.module.lookup_function(name))
            self._invokers[name] = invoker
        results = invoker(*args)
        if not isinstance(results, (tuple, list)):
            results = (results,)
        # Copy, one result at a time: the host view of a device buffer may be reused by the next call, and
        # on CUDA each view is a page-locked registration of host memory that lives as long as its device
        # array. Dropping each array right after its copy keeps one registration alive at a time; holding
        # them all (91 outputs of a stage build) let two small views share a page, and registering that
        # page twice fails (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, seen on the H200).
        results = list(results)
        copied: dict[str, np.ndarray] = {}
        for index, out in enumerate(outputs[:len(results)]):
            copied[out] = np.array(results[index].to_host(), copy=True)
            results[index] = None  # releases the registration before the next copy
        return copied


class AudioSession(LoadedProgram):
    """Runs the bucketed `encode_f{T}_c{B}` entries of one compiled audio artifact."""

    def __init__(self, vmfb: bytes | str | Path, parameter_files: Sequence[str | Path], device: str = "local-task",
                 scope: str = "model") -> None:
        super().__init__(vmfb, parameter_files, device, scope)
        self.entries: dict[tuple[int, int], EntryInfo] = {}
        for name in self.module.function_names:
            match = _ENTRY.match(name)
            if match:
                info = EntryInfo(name, int(match.group(1)), int(match.group(2)), self.output_names(name),
                                 self.reflection(name).get("gemma3n.contract", ""))
                self.entries[(info.frames, info.clips)] = info
        if not self.entries:
            raise SessionError("the artifact has no encode_f<frames>_c<clips> entry points")

    @property
    def buckets(self) -> list[tuple[int, int]]:
        return sorted(self.entries)

    def run(self, mel: np.ndarray, frames: np.ndarray) -> dict[str, np.ndarray]:
        """Run the entry that matches `mel`'s [clips, frames, mel] shape exactly."""
        mel = np.ascontiguousarray(mel, dtype=np.float32)
        frames = np.ascontiguousarray(frames, dtype=np.int32)
        if mel.ndim != 3:
            raise SessionError(f"mel must be [clips, frames, mel bins], got shape {mel.shape}")
        key = (mel.shape[1], mel.shape[0])
        info = self.entries.get(key)
        if info is None:
            raise SessionError(f"no entry for {key[0]} frames x {key[1]} clips; the artifact has "
                               f"{', '.join(f'{f}x{c}' for f, c in self.buckets)}")
        if frames.shape != (mel.shape[0],):
            raise SessionError(f"frames must have one count per clip ({mel.shape[0]}), got shape {frames.shape}")
        return self.invoke(info.name, info.outputs, mel, frames)
