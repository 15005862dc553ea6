"""The parallel host pipeline: audio files in, the encoder's calls kept busy (`AudioEncoder.encode_files`,
the CLI's `encode`; the server's front end uses the same pool, `serve/scheduler.py`).

    decode + resample (pool) ─▶ host log-mel per clip (pool) ─▶ bucket queues ─▶ calls (device thread)
        files ahead of the                                  (input order)      one running, the next
        admission point                                                          one staged behind it

* **Workers** are threads of a :class:`FrontEndPool`, one per core this process may run on
  (`os.sched_getaffinity`).  Threads, not processes: decoding (libsndfile through cffi), resampling
  (libsoxr) and the log-mel's FFT and matmul release the GIL, which the front end holds for 3-5 % of
  a 30 s clip's work (py-spy, BENCHMARKS.md) -- and threads share the decoded samples and features
  with the device calls without a copy.
* **BLAS pinned to one thread while a pool is open.**  The host log-mel's float64 mel matmul runs on
  NumPy's OpenBLAS, whose own pool has one busy-waiting thread per core: under every front-end thread
  (16 x 16 threads on the 16-core GPU host) it spends a core's worth of spinning per worker, and
  concurrent callers contend for the one pool -- the server's 16 front-end threads used all 16 cores
  for 47 audio-s per core-second where one thread alone does about 1,000 (BENCHMARKS.md, "The front
  end's thread fight").  `threadpoolctl` -- the library made for this -- sets the BLAS pools to one
  thread while any pool is open and restores them after; the workers supply the parallelism.  OpenBLAS splits a GEMM's rows and columns between its threads, never the
  sum, so the features are the same bits either way (tests/test_pipeline.py checks it).
* **Order and bounded memory.**  Files are admitted to the bucket queues strictly in input order, so
  the clips get their indices in input order and the result is the serial path's, bit for bit (a
  clip's rows never depend on its call).  Admission waits while the queues hold two widest calls'
  worth of clips, and files are decoded at most `lookahead` ahead of admission: however many inputs
  are given, only a window of them is in memory before its rows come back.  A file that fails
  (decode error, over `max_seconds`, a clip no bucket holds) fails alone, before any of its clips is
  queued.
* **Overlap.**  Calls are queued on the session's program thread (`AudioSession.run_async`): while
  one runs, the next one's inputs are built and staged, and the workers keep decoding.  A partial
  call runs only when nothing else can (the policy is `runtime/encoder/batching.py`).
"""

from __future__ import annotations

import collections
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP
from ..audio import frontend
from ..audio.decode import AudioError
from .batching import BucketQueue, Wait, next_encode_call
from .clips import Clip, EncodeError, EncodeFailed, EncodeResult, InputFailure, choose_bucket

if TYPE_CHECKING:
    from .encode import AudioEncoder

#: How long a partial call waits for more clips while the device is idle and more may come.
MAX_WAIT_S = 0.005
#: Calls queued on the device at once: the one running and the one staged behind it.
CALLS_IN_FLIGHT = 2


def default_workers() -> int:
    """The cores this process may run on (its CPU affinity; cgroup quotas are not visible here)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# ---------------------------------------------------------------------------------------------- BLAS

_blas_lock = threading.Lock()
_blas_users = 0
_blas_limits: Any = None


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """BLAS pools (OpenBLAS, MKL, BLIS) limited to one thread for as long as any holder is inside:
    process-wide (the libraries have no per-thread setting), restored when the last one leaves."""
    global _blas_users, _blas_limits
    from threadpoolctl import threadpool_limits

    with _blas_lock:
        if _blas_users == 0:
            _blas_limits = threadpool_limits(limits=1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limits.restore_original_limits()
                _blas_limits = None


class FrontEndPool:
    """Worker threads for the host front end (decode, resample, host log-mel) with the BLAS pools
    pinned to one thread while it is open (see the module docstring)."""

    def __init__(self, workers: int | None = None, name: str = "gemma3n-frontend") -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"front-end workers must be at least 1, got {workers}")
        self.workers = workers or default_workers()
        self._blas = single_threaded_blas()
        self._blas.__enter__()
        self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix=name)
        self._closed = False

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        return self._executor.submit(fn, *args)

    def shutdown(self, cancel_futures: bool = False) -> None:
        """Wait for the running tasks (dropping the queued ones with `cancel_futures`) and unpin BLAS."""
        if self._closed:
            return
        self._closed = True
        try:
            self._executor.shutdown(wait=True, cancel_futures=cancel_futures)
        finally:
            self._blas.__exit__(None, None, None)

    def __enter__(self) -> FrontEndPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(cancel_futures=exc[0] is not None)


# ---------------------------------------------------------------------------------------------- progress


@dataclass(frozen=True)
class PipelineProgress:
    """Where an `encode_files` run stands (passed to its `on_progress` after each call and failure)."""

    files: int
    files_done: int  # encoded or failed
    failed: int
    clips_done: int
    audio_seconds_done: float
    elapsed_s: float

    @property
    def audio_s_per_s(self) -> float:
        return self.audio_seconds_done / self.elapsed_s if self.elapsed_s > 0 else 0.0


# ---------------------------------------------------------------------------------------------- one run


@dataclass
class _File:
    """One input on its way through the pipeline."""

    source: int
    path: str
    decoded: Future | None = None  # -> float32 samples
    clips: list[Future] | list[Clip] | None = None  # per piece: the host mel's futures, or the clips
    seconds: float = 0.0
    clips_left: int = 0  # clips not yet back from the device
    failure: InputFailure | None = None


@dataclass
class _Waiting:
    index: int  # the clip's index in the result
    clip: Clip
    since: float


class _Rows:
    """The result rows, written as calls complete: buffered (no copy) until the number of clips is
    known, then copied once into the final arrays."""

    def __init__(self, text_hidden: int, hidden: int) -> None:
        self._widths = (text_hidden, hidden)
        self._buffered: list[tuple[list[int], dict[str, np.ndarray]]] = []
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def allocate(self, n: int) -> None:
        rows = AUDIO_SOFT_TOKENS_PER_CLIP
        self._arrays = (
            np.zeros((n, rows, self._widths[0]), np.float32),
            np.zeros((n, rows, self._widths[1]), np.float32),
            np.zeros(n, np.int32),
        )
        for members, out in self._buffered:
            self._scatter(members, out)
        self._buffered = []

    def add(self, members: list[int], out: dict[str, np.ndarray]) -> None:
        if self._arrays is None:
            self._buffered.append((members, out))
        else:
            self._scatter(members, out)

    def _scatter(self, members: list[int], out: dict[str, np.ndarray]) -> None:
        assert self._arrays is not None
        features, hidden, valid = self._arrays
        n = len(members)
        first = members[0]
        if members == list(range(first, first + n)):  # consecutive clips: one block copy each
            features[first : first + n] = out["audio_features"][:n]
            hidden[first : first + n] = out["encoder_hidden"][:n]
            valid[first : first + n] = out["valid_tokens"][:n]
            return
        for slot, index in enumerate(members):
            features[index] = out["audio_features"][slot]
            hidden[index] = out["encoder_hidden"][slot]
            valid[index] = out["valid_tokens"][slot]

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        assert self._arrays is not None
        return self._arrays


class _Run:
    """One `encode_files` call: the conductor loop on the caller's thread."""

    def __init__(
        self,
        encoder: AudioEncoder,
        paths: Sequence[str | Path],
        max_seconds: float | None,
        pool: FrontEndPool,
        on_progress: Callable[[PipelineProgress], None] | None,
    ) -> None:
        self.encoder, self.session, self.pool = encoder, encoder.session, pool
        self.max_seconds, self.on_progress = max_seconds, on_progress
        self.files = [_File(i, str(p)) for i, p in enumerate(paths)]
        widest = max(encoder.clips_per_call)
        self.lookahead = max(2 * pool.workers, 2 * widest)  # decoded files held ahead of admission
        self.max_queued = 2 * widest  # clips waiting in the queues before more files are admitted
        self.next_decode = 0  # next file to hand to the pool
        self.next_admit = 0  # next file whose clips join the queues (input order)
        self.sources: list[int] = []  # per clip, in result order
        self.starts: list[float] = []
        self.queues: dict[int, collections.deque[_Waiting]] = {b: collections.deque() for b in encoder.frame_buckets}
        self.widths = {b: encoder.clips_per_call for b in encoder.frame_buckets}
        self.in_flight: collections.deque[tuple[Future, list[int]]] = collections.deque()
        self.rows = _Rows(encoder.config.text_hidden_size, encoder.config.hidden_size)
        self.clip_file: list[_File] = []
        self.started = time.perf_counter()
        self.done_files = 0
        self.done_clips = 0
        self.done_seconds = 0.0
        self.failed = 0

    # ------------------------------------------------------------------ front end
    def _decode(self, path: str) -> np.ndarray:
        return self.encoder.decode_file(path, self.max_seconds)

    def _submit_decodes(self) -> None:
        while self.next_decode < len(self.files) and self.next_decode < self.next_admit + self.lookahead:
            f = self.files[self.next_decode]
            f.decoded = self.pool.submit(self._decode, f.path)
            self.next_decode += 1

    def _fail(self, f: _File, exc: Exception) -> None:
        message = str(exc)
        if not message.startswith((f.path, str(Path(f.path)))):  # the decoder's messages name the input first
            message = f"{f.path}: {message}"
        f.failure = InputFailure(f.source, f.path, message)
        f.clips = None
        self.done_files += 1
        self.failed += 1
        self._report()

    def _split(self) -> None:
        """Decoded files (in the window) become clips: host-mel tasks on the pool, or device clips."""
        for f in self.files[self.next_admit : self.next_decode]:
            if f.clips is not None or f.failure is not None or f.decoded is None or not f.decoded.done():
                continue
            try:
                samples = f.decoded.result()
                f.seconds = len(samples) / frontend.SAMPLE_RATE
                if not self.session.mel.on_device:
                    samples = frontend.check_samples(samples, f.path)
                pieces = frontend.split_clips(samples)
            except (AudioError, EncodeError) as exc:
                self._fail(f, exc)
                continue
            f.decoded = None  # the pieces hold the samples now
            if self.session.mel.on_device:
                f.clips = [self.encoder.make_clip(piece, f.source) for piece in pieces]
            else:
                f.clips = [self.pool.submit(self.encoder.make_clip, piece, f.source) for piece in pieces]

    def _admit(self) -> None:
        """Queue the clips of the next files in input order, once each file is wholly ready and while the
        queues hold fewer than `max_queued` clips (so decoding cannot run ahead of the device unbounded)."""
        while self.next_admit < self.next_decode and sum(map(len, self.queues.values())) < self.max_queued:
            f = self.files[self.next_admit]
            if f.failure is None:
                if f.clips is None or any(isinstance(c, Future) and not c.done() for c in f.clips):
                    return
                try:
                    clips = [c.result() if isinstance(c, Future) else c for c in f.clips]
                    buckets = [choose_bucket(c.frames, self.encoder.frame_buckets) for c in clips]
                except (AudioError, EncodeError) as exc:
                    self._fail(f, exc)
                else:
                    now = time.monotonic()
                    f.clips, f.clips_left = None, len(clips)
                    for clip, bucket in zip(clips, buckets):
                        self.queues[bucket].append(_Waiting(len(self.sources), clip, now))
                        self.sources.append(clip.source)
                        self.starts.append(clip.start_s)
                        self.clip_file.append(f)
            self.next_admit += 1
            if self.settled:
                self.rows.allocate(len(self.sources))

    @property
    def settled(self) -> bool:
        """Every file is queued or failed: no more clips can arrive."""
        return self.next_admit == len(self.files)

    # ------------------------------------------------------------------ device
    def _launch(self) -> float | None:
        """Queue the calls the policy allows (at most CALLS_IN_FLIGHT); returns how long to wait for a
        partial call's clips, or None."""
        while len(self.in_flight) < CALLS_IN_FLIGHT:
            queues = [BucketQueue(b, len(q), q[0].since, self.widths[b]) for b, q in self.queues.items() if q]
            call = next_encode_call(
                queues, time.monotonic(), settled=self.settled, device_idle=not self.in_flight, max_wait_s=MAX_WAIT_S
            )
            if isinstance(call, Wait):
                return call.seconds
            queue = self.queues[call.bucket]
            taken = [queue.popleft() for _ in range(call.take)]
            inputs, counts = self.encoder.call_inputs(call.bucket, call.width, [w.clip for w in taken])
            self.in_flight.append((self.session.run_async(inputs, counts), [w.index for w in taken]))
        return None

    def _collect(self) -> None:
        while self.in_flight and self.in_flight[0][0].done():
            future, members = self.in_flight.popleft()
            self.rows.add(members, future.result())  # a device error raises here and ends the run
            self.done_clips += len(members)
            for index in members:
                f = self.clip_file[index]
                f.clips_left -= 1
                if f.clips_left == 0:
                    self.done_files += 1
                    self.done_seconds += f.seconds
            self._report()

    def _report(self) -> None:
        if self.on_progress is not None:
            self.on_progress(
                PipelineProgress(
                    len(self.files),
                    self.done_files,
                    self.failed,
                    self.done_clips,
                    self.done_seconds,
                    time.perf_counter() - self.started,
                )
            )

    def _pending(self) -> list[Future]:
        """What the loop may wait on: the oldest call, and the front-end work of the files in the window."""
        futures: list[Future] = [self.in_flight[0][0]] if self.in_flight else []
        for f in self.files[self.next_admit : self.next_decode]:
            if f.decoded is not None and not f.decoded.done():
                futures.append(f.decoded)
            elif f.clips:
                futures += [c for c in f.clips if isinstance(c, Future) and not c.done()]
        return futures

    # ------------------------------------------------------------------ loop
    def run(self) -> EncodeResult:
        while True:
            self._submit_decodes()
            self._split()
            self._admit()
            wait_s = self._launch()
            self._collect()
            if self.settled and not self.in_flight and not any(self.queues.values()):
                break
            pending = self._pending()
            if pending:
                wait(pending, timeout=wait_s, return_when=FIRST_COMPLETED)
            elif wait_s:
                time.sleep(wait_s)
        return self._result()

    def _result(self) -> EncodeResult:
        failures = tuple(f.failure for f in self.files if f.failure is not None)
        if not self.sources:
            raise EncodeFailed(failures, len(self.files), None)
        features, hidden, valid = self.rows.arrays()
        result = EncodeResult(
            features, hidden, valid, np.array(self.sources, np.int32), np.array(self.starts, np.float32), failures
        )
        if failures:
            raise EncodeFailed(failures, len(self.files), result)
        return result


def encode_files(
    encoder: AudioEncoder,
    paths: Sequence[str | Path],
    *,
    max_seconds: float | None = None,
    workers: int | None = None,
    on_progress: Callable[[PipelineProgress], None] | None = None,
) -> EncodeResult:
    """`AudioEncoder.encode_files` (see there): one run of the pipeline on a pool of its own."""
    if not paths:
        raise EncodeError("no audio inputs given")
    with FrontEndPool(workers) as pool:
        return _Run(encoder, paths, max_seconds, pool, on_progress).run()
