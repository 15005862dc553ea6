"""A loaded program: one IREE context, one resident copy of the weights, its entries called on its device thread.

The weights are IREE parameters: the context binds them by checkpoint tensor name straight from
the checkpoint's safetensors shards (memory-mapped), so nothing is converted or copied on disk.
Entries and their output names come from the artifact's own reflection metadata (`gemma3n.stage`,
`gemma3n.frames`, `gemma3n.clips`, `gemma3n.outputs`: emitters/entries.py), so a session never has to
guess what an entry is or returns.

Inputs and results cross to and from the device through page-locked host buffers that a program
allocates once per entry and reuses (`_Staging`): a call copies its inputs into them, the device
DMAs them in, and the results it names are DMAed back the same way. Only those: IREE's runtime hands
an entry's results back as device arrays (`iree.runtime.DeviceArray`, a buffer view on the device's
buffer, copied to the host only when read), so a result a call does not name never crosses to the
host, and `invoke_chained` passes one entry's result to another entry while it is still on the device. Uploading a fresh NumPy array, or
registering one for the download, costs more than the transfer itself (on the H200 at 32 clips:
36 ms to upload the mel and 45 ms to download the results that way, against 9 and 35 ms staged).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from ...emitters.entries import EntryPoint, EntryReflectionError

T = TypeVar("T")
E = TypeVar("E", bound=EntryPoint)
DEVICE_FOR_TARGET = {"llvm-cpu": "local-task", "cuda": "cuda"}


class SessionError(RuntimeError):
    """The artifact, its parameters or a call's inputs do not fit together."""


@dataclass
class _Slot:
    """One staged argument or result: a page-locked host buffer mapped for the call's whole life, and
    for an argument the device buffer it is DMAed into."""

    shape: tuple[int, ...]
    dtype: np.dtype
    host: object
    mapping: object
    view: np.ndarray
    device: object | None


class _Staging:
    """The reusable host (and device) buffers of one program's calls, keyed by entry and position."""

    def __init__(self, rt: object, device: object) -> None:
        self._rt, self._device, self._slots = rt, device, {}

    def _slot(self, key: tuple, shape: tuple[int, ...], dtype: np.dtype, upload: bool) -> _Slot:
        slot = self._slots.get(key)
        if slot is not None and slot.shape == shape and slot.dtype == dtype:
            return slot
        rt = self._rt
        size = max(1, int(np.prod(shape)) * dtype.itemsize)
        usage = (
            int(rt.BufferUsage.TRANSFER_SOURCE if upload else rt.BufferUsage.TRANSFER_TARGET)
            | int(rt.BufferUsage.MAPPING_SCOPED)
            | int(rt.BufferUsage.MAPPING_PERSISTENT)
        )
        # Results are read by the CPU: cached memory (write-combined memory reads back very slowly).
        memory = (
            int(rt.MemoryType.HOST_LOCAL)
            | int(rt.MemoryType.DEVICE_VISIBLE)
            | (0 if upload else int(rt.MemoryType.HOST_CACHED))
        )
        host = self._device.allocator.allocate_buffer(memory_type=memory, allowed_usage=usage, allocation_size=size)
        mapping = host.map()
        device = (
            self._device.allocator.allocate_buffer(
                memory_type=int(rt.MemoryType.DEVICE_LOCAL),
                allowed_usage=int(rt.BufferUsage.DEFAULT),
                allocation_size=size,
            )
            if upload
            else None
        )
        slot = _Slot(shape, dtype, host, mapping, mapping.asarray(shape, dtype), device)
        self._slots[key] = slot
        return slot

    def _copy(self, pairs: Sequence[tuple[object, object]]) -> None:
        """Copy every (source, target) pair in one submission and wait for it.

        One command buffer, not one queued copy per pair chained on the one before: each queued copy was a
        submission of its own, so a decode step's eight inputs and four results were twelve, and a step ran as
        thirteen submissions where it is now three (`scripts/decoder_profile.py`'s device timeline; the E4B
        step on an H100 went from 10.5 to 9.9 ms at batch 1, BENCHMARKS.md)."""
        rt = self._rt
        commands = rt.HalCommandBuffer(self._device, 0, begin=True)
        for source, target in pairs:
            commands.copy(source, target)
        commands.end()
        semaphore = self._device.create_semaphore(0)
        done = rt.HalFence.create_at(semaphore, 1)
        self._device.queue_execute(
            commands, wait_semaphores=rt.HalFence.create_at(semaphore, 0), signal_semaphores=done
        )
        done.wait()

    def upload(self, name: str, args: Sequence[np.ndarray]) -> list[object]:
        """The arguments as device arrays, copied through the entry's staging buffers."""
        rt = self._rt
        slots = [self._slot((name, "arg", i), a.shape, a.dtype, upload=True) for i, a in enumerate(args)]
        for slot, array in zip(slots, args):
            np.copyto(slot.view, array)
        self._copy([(slot.host, slot.device) for slot in slots])
        element = rt.array_interop.map_dtype_to_element_type
        return [
            rt.DeviceArray(self._device, rt.HalBufferView(slot.device, slot.shape, element(slot.dtype)))
            for slot in slots
        ]

    def download(self, name: str, results: Sequence[object], indices: Sequence[int]) -> list[np.ndarray]:
        """Fresh host copies of the device results `indices` of an entry's results (DeviceArray's buffer view is
        the only handle on its buffer that the runtime's Python API gives); the others are not copied."""
        views = [results[i]._buffer_view for i in indices]  # noqa: SLF001
        rt = self._rt
        slots = [
            self._slot(
                (name, "result", i),
                tuple(v.shape),
                np.dtype(rt.HalElementType.map_to_dtype(v.element_type)),
                upload=False,
            )
            for i, v in zip(indices, views)
        ]
        self._copy([(v.get_buffer(), slot.host) for v, slot in zip(views, slots)])
        return [np.array(slot.view, copy=True) for slot in slots]


_DEVICE_THREADS: dict[str, ThreadPoolExecutor] = {}
_DEVICE_THREADS_LOCK = threading.Lock()


def device_thread(device: str) -> ThreadPoolExecutor:
    """The one thread that makes every IREE call on `device` in this process.  IREE's runtime hands out one
    device per URI, and its CUDA driver binds that device's context to the thread that first used it: a
    second program loaded or called from another thread (the prefill stage's encoder beside the encoder,
    the decoder beside both) fails with CUDA_ERROR_INVALID_CONTEXT."""
    with _DEVICE_THREADS_LOCK:
        if device not in _DEVICE_THREADS:
            _DEVICE_THREADS[device] = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"iree-{device}")
        return _DEVICE_THREADS[device]


@dataclass(frozen=True)
class Followup:
    """An entry `invoke_chained` runs after another on that one's result, followed by host arguments `args`;
    the results `outputs` names are copied back."""

    entry: str
    outputs: tuple[str, ...]
    args: tuple[np.ndarray, ...] = ()


class LoadedProgram:
    """A compiled artifact loaded in one IREE context with its parameters (the resident weights).

    Every IREE call of a program (loading, invoking, reading results back) runs on its device's one
    thread (`device_thread`), shared by every program on that device: calls of all of them run one at a
    time in the order queued.  Callers may use a program from any thread, but never from inside a call
    of another program on the same device (that call would wait for itself).
    """

    def __init__(
        self,
        vmfb: bytes | str | Path,
        parameter_files: Sequence[str | Path],
        device: str = "local-task",
        scope: str = "model",
    ) -> None:
        self._thread = device_thread(device)
        self._invokers: dict[str, object] = {}
        self._output_names: dict[str, tuple[str, ...]] = {}
        self._closed = False
        self._on_thread(self._load, vmfb, parameter_files, device, scope)

    def _check_open(self) -> None:
        if self._closed:
            raise SessionError(f"{type(self).__name__} was closed: its device objects are released")

    def _submit(self, fn: Callable[..., T], *args: object) -> Future[T]:
        self._check_open()
        return self._thread.submit(fn, *args)

    def _on_thread(self, fn: Callable[..., T], *args: object) -> T:
        return self._submit(fn, *args).result()

    def close(self) -> None:
        """Release the program's device objects (context, module, resident weights, staging buffers) now, on its
        device thread, rather than whenever the last reference goes: a server that stops hands the device back
        and nothing of IREE outlives the interpreter.  Idempotent; any call afterwards raises SessionError."""
        if not self._closed:
            self._on_thread(self._release)

    def _release(self) -> None:
        self._invokers.clear()
        for name in ("_staging", "context", "module", "_index", "device", "instance"):
            self.__dict__.pop(name, None)
        self._closed = True

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
        self._staging = _Staging(rt, self.device)
        params = rt.create_io_parameters_module(self.instance, index.create_provider(scope=scope))
        if isinstance(vmfb, (str, Path)):
            self.module = rt.VmModule.mmap(self.instance, str(vmfb))
        else:
            self.module = rt.VmModule.copy_buffer(self.instance, vmfb)
        try:
            self.context = rt.VmContext(
                self.instance, modules=[rt.create_hal_module(self.instance, self.device), params, self.module]
            )
        except Exception as exc:
            raise SessionError(
                f"cannot load the artifact with its parameters (a weight missing from the checkpoint fails here): {exc}"
            ) from None

    def reflection(self, name: str) -> dict[str, str]:
        self._check_open()
        return dict(self.module.lookup_function(name).reflection)

    def entry_points(self, kind: type[E], required: bool = True) -> dict[str, E]:
        """The module's entries of `kind`, by function name, as their reflection records them (none is an
        error when `required`)."""
        found = {}
        for name in self.module.function_names:
            try:
                entry = kind.from_reflection(self.reflection(name))
            except EntryReflectionError as exc:
                raise SessionError(f"entry {name}: {exc}") from None
            if entry is not None:
                found[name] = entry
        if not found and required:
            raise SessionError(
                f"the artifact has no {kind.family} entry points (functions whose reflection records "
                f'gemma3n.stage = "{kind.family}"; an artifact built before entries recorded their '
                "stage must be rebuilt)"
            )
        return found

    def output_names(self, name: str) -> tuple[str, ...]:
        """The entry's output names, recorded by the emitter in its reflection metadata."""
        names = self._output_names.get(name)
        if names is None:
            names = self._output_names[name] = tuple(self.reflection(name).get("gemma3n.outputs", "").split(","))
        return names

    def invoke(self, name: str, outputs: Sequence[str], *args: np.ndarray) -> dict[str, np.ndarray]:
        return self.invoke_async(name, outputs, *args).result()

    def invoke_async(self, name: str, outputs: Sequence[str], *args: np.ndarray) -> Future[dict[str, np.ndarray]]:
        """Queue a call on the program's thread and return at once: the caller prepares the next call
        while this one runs.  Calls run one at a time in the order queued; `args` are copied into the
        staging buffers when the call starts, so they must not change until its future is done."""
        return self._submit(self._invoke, name, outputs, args)

    def _invoker(self, name: str) -> object:
        invoker = self._invokers.get(name)
        if invoker is None:
            invoker = self._rt.FunctionInvoker(self.context, self.device, self.module.lookup_function(name))
            self._invokers[name] = invoker
        return invoker

    def invoke_chained(
        self,
        name: str,
        outputs: Sequence[str],
        args: Sequence[np.ndarray],
        passed: str,
        followups: Sequence[Followup],
        shape: Sequence[int] | None = None,
    ) -> dict[str, np.ndarray]:
        """Run entry `name` on `args`, then each followup's entry on its result `passed` as that lies on the device
        (viewed as `shape` when given: the same buffer) and the followup's own host arguments; the named results of
        all, copied to the host. One job on the program's thread: `passed` is copied to the host only when
        `outputs` names it too."""

        def run() -> dict[str, np.ndarray]:
            results = self._results(name, tuple(args))
            host = self._host(name, results, outputs)
            fed = results[self._output_index(name, passed)]
            if shape is not None:
                view = fed._buffer_view  # noqa: SLF001
                fed = self._rt.DeviceArray(
                    self.device, self._rt.HalBufferView(view.get_buffer(), tuple(shape), view.element_type)
                )
            for then in followups:
                extra = self._staging.upload(then.entry, then.args) if then.args else []
                host.update(
                    self._host(then.entry, self._results(then.entry, (fed, *extra), upload=False), then.outputs)
                )
            return host

        return self._on_thread(run)

    def _output_index(self, name: str, output: str) -> int:
        names = self.output_names(name)
        if output not in names:
            raise SessionError(
                f"entry {name} has no result {output!r} (its results: {', '.join(names)}); an artifact built "
                "before it had one must be rebuilt"
            )
        return names.index(output)

    def _results(self, name: str, args: tuple, upload: bool = True) -> list[object]:
        """The entry's results as device arrays (nothing copied to the host)."""
        results = self._invoker(name)(*(self._staging.upload(name, args) if upload else args))
        return list(results) if isinstance(results, (tuple, list)) else [results]

    def _host(self, name: str, results: Sequence[object], outputs: Sequence[str]) -> dict[str, np.ndarray]:
        """The results `outputs` names, copied to the host: by name where the entry's reflection names its results,
        else the first len(outputs) (a function without that reflection: probes, diagnostics)."""
        if self.output_names(name) == ("",):
            indices = list(range(len(outputs)))
        else:
            indices = [self._output_index(name, output) for output in outputs]
        return dict(zip(outputs, self._staging.download(name, results, indices)))

    def _invoke(self, name: str, outputs: Sequence[str], args: tuple[np.ndarray, ...]) -> dict[str, np.ndarray]:
        return self._host(name, self._results(name, args), outputs)

    def time_execution(self, name: str, args: Sequence[np.ndarray], warmup: int, repeats: int) -> list[float]:
        """Seconds per synchronous call with the inputs already on the device and the results left
        there: the device-side time of an entry (what a CUDA-event timing of a model measures),
        runtime overhead included."""

        def run() -> list[float]:
            invoker = self._invoker(name)
            device_args = self._staging.upload(name, args)
            times = []
            for step in range(warmup + repeats):
                start = time.perf_counter()
                invoker(*device_args)
                if step >= warmup:
                    times.append(time.perf_counter() - start)
            return times

        return self._on_thread(run)
