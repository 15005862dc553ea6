"""Continuous batching of audio requests onto one resident copy of the weights (the core of `serve`).

The HTTP layer (`serve/server.py`) only parses uploads and talks to a :class:`Scheduler`; admission,
batching, cancellation and result lifetime happen here, thread-based, so it is usable (and tested)
without a network.  This module keeps the threads, the lock and the queues, and leaves the data and
the decisions to pure pieces: what a request is and the work items passed between the threads
(`serve/jobs.py`), when a request is refused and how much of the memory budget it holds
(`serve/admission.py`), which encoder call and which prefill merge run next (`runtime/encoder/batching.py`), and
what `/metrics` shows of its counters (`serve/metrics.py`).

Pipeline of one request (a :class:`Job`, its states `jobs.State`)::

    submit ─▶ QUEUED ─▶ FRONTEND ─▶ ENCODING ─▶ [PREFILL] ─▶ DONE ─▶ fetched / expired (freed)
     (probe,   (front-end   (decode, resample,   (clips wait in    (prefill kind only:
      admit)    pool queue)   log-mel, prompt)     per-bucket queues) the merge on the device)

* **Upload** (`open_upload`, before the HTTP layer reads a body): an :class:`UploadSlot` reserves the
  body's declared length (the largest body the server accepts when it declares none) in the memory budget
  and one of `Limits.concurrent_uploads` slots, so bodies being received are bounded in number and in bytes
  before a byte of them is read; when the queue, the slots, the client's own uploads, the budget or the
  client's unfetched results say no (`admission.queue_refusal`, `admission.upload_refusal`), it is a
  `Rejected` "retry later" with a Retry-After hint.
* **Admission** (`submit`, on the caller's thread): the request is checked for what it is
  (`admission.request_refusal`), then the upload is probed with `decode.probe_audio` -- the one decode
  path the CLI uses too, which refuses a truncated file in every container, never shortening it
  silently; its duration bounds the memory it can take (`admission.request_memory_bound`), which
  replaces the slot's reservation when the budget has room (`admission.memory_refusal`).  Nothing is
  queued when it is refused.
* **Front end** (a thread pool, never the device thread): decode the bytes with `decode.decode_audio`
  exactly as the CLI decodes the same bytes from a file (too long audio is refused again on the decoded
  samples, `admission.duration_refusal`), cut 30 s clips and compute each clip's
  log-mel on its own, or keep its samples for an artifact that computes the mel
  (`AudioEncoder.clips_from_samples`, what `AudioEncoder.clips_from_files` does), and for prefill
  expand and tokenize the prompt (`AudioPrefill.expand`) and compile the prefill entry it needs if it
  is not built yet (so a first-time entry never stalls the device thread).  Each clip then waits in
  the queue of its frame bucket.
* **Device** (one thread owns the `AudioSession` and queues its calls on the session's own thread,
  `AudioSession.run_async`): as soon as work is ready it packs clips into the best (bucket, clips)
  entry -- greedy (`runtime/encoder/batching.py`): a bucket may run once it fills a call of the widest allowed
  width, once its oldest clip has waited `max_wait_s` on an idle device, or at once when no front-end
  work that could add clips is pending; of those, the bucket whose oldest clip has waited longest runs
  (so none starves), with the widest width its queued clips fill.  While a call runs, the next one is
  packed, built and queued behind it, then the first one's rows are handed out, so the device never
  waits for the host.  Padding slots (only when fewer clips than the narrowest entry are left) get
  zero frames (`AudioEncoder.call_inputs`, what the encode path uses).  Each call is
  packed anew from whatever is queued, so a slot freed by a finished request is reused by the next
  call.  Prefill requests whose clips are all encoded run their merge (`AudioPrefill.run`) on the
  same thread; they go before encoder calls since they complete requests and free memory.
* **Results** are host arrays kept until the owner fetches them (then freed) or `result_ttl_s` after
  completion (then expired and freed by a reaper thread); meanwhile they hold their own size of the
  budget (`admission.held_bytes`).  Failed requests keep their error message the same way.  A fetch
  claims the result first: one fetch at a time streams it (a concurrent one is told so), and it is
  freed exactly once, when the stream completes (a broken download leaves it for a retry).

A clip's rows never depend on the other clips of its call or on the bucket it landed in (the artifact's
contract; see `runtime/encoder/encode.py`), so a request's result equals the same audio encoded alone -- the
server test checks this bit for bit under load.

Ownership: every job has an unguessable id (`secrets.token_urlsafe(16)`) and an owner token
(`token_urlsafe(32)`); only its SHA-256 is stored and compared in constant time (`hmac.compare_digest`).
An unknown id and a wrong token are the same :class:`NotFound`, so nothing tells whether an id exists.

Cancellation is honoured at every stage boundary: a queued job never reaches the front end; a job in
the front end is dropped when its worker finishes (its clips are never queued); its queued clips are
removed from the bucket queues at once; a call already on the device completes but its rows are
discarded; a prefill merge not yet started is skipped; a finished result is freed.  In every case the
job leaves the registry and its queue slot and memory reservation are released immediately.
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import logging
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..runtime.audio.decode import AudioError, probe_audio
from ..runtime.encoder.pipeline import FrontEndPool
from .admission import (
    Limits,
    ModelSizes,
    duration_refusal,
    held_bytes,
    limits_contradiction,
    memory_refusal,
    queue_refusal,
    request_memory_bound,
    request_refusal,
    upload_refusal,
    upload_reservation,
)
from .device_work import DeviceWork
from .errors import BadInput, NotFound, ServeError, Unavailable
from .frontend_work import FrontEndWork
from .jobs import KINDS, PREFILL, Job, ReadyClip, State
from .metrics import batch_summary, latency_summary

log = logging.getLogger("gemma3n_iree.server")


class UploadSlot:
    """One body being received: its reservation (its declared length, else the largest body) in the budget,
    released once."""

    def __init__(self, scheduler: Scheduler, client: str, reserved: int) -> None:
        self.scheduler, self.client, self.reserved = scheduler, client, reserved
        self.open = True

    def release(self) -> None:
        self.scheduler._close_upload(self)


# ---------------------------------------------------------------------------------------------- scheduler

StageHook = Callable[[str, str], None]


class Scheduler(FrontEndWork, DeviceWork):
    """Admission, continuous batching and result lifetime for one `AudioEncoder` (+ optional prefill).

    `encoder`: an `AudioEncoder` (its `session` is used only by this scheduler's device thread from
    `start()` on).  `prefill`: an `AudioPrefill` built on the same encoder, or None with
    `prefill_unavailable` saying why; `prefill_from_artifact`: it was given a prefill `.vmfb` (all its
    entries in one loaded session) rather than compiling one entry per (capacity, clips).
    `stage_hook(stage, job_id)` is called at the stage boundaries ("frontend" before decoding, "device"
    before a call holding the job's clip, "prefill" before the merge) from the worker threads -- for
    tests and tracing; it must not call back into the scheduler.
    """

    def __init__(
        self,
        encoder: Any,
        prefill: Any | None = None,
        limits: Limits | None = None,
        prefill_unavailable: str | None = None,
        stage_hook: StageHook | None = None,
        prefill_from_artifact: bool = False,
    ) -> None:
        self.encoder = encoder
        self.session = encoder.session
        self.prefill = prefill
        self.prefill_unavailable = prefill_unavailable or ("prefill was not configured" if prefill is None else None)
        self.limits = limits or Limits()
        contradiction = limits_contradiction(self.limits)
        if contradiction is not None:
            raise ValueError(contradiction)
        self.stage_hook = stage_hook
        self.frame_buckets: tuple[int, ...] = tuple(sorted({f for f, _ in self.session.buckets}))
        cap = self.limits.max_batch_clips
        self.widths: dict[int, tuple[int, ...]] = {}
        for bucket in self.frame_buckets:
            widths = sorted({c for f, c in self.session.buckets if f == bucket}, reverse=True)
            allowed = [w for w in widths if cap is None or w <= cap] or [widths[-1]]
            self.widths[bucket] = tuple(allowed)
        self.max_width = max(w[0] for w in self.widths.values())
        self.sizes = ModelSizes.of(encoder.config, prefill.text if prefill is not None else None)
        if prefill is not None:
            prefill.tokenizer  # noqa: B018 - load it now: the lazy property is not thread-safe

        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._jobs: dict[str, Job] = {}
        self._ready: dict[int, collections.deque[ReadyClip]] = {b: collections.deque() for b in self.frame_buckets}
        self._post: collections.deque[Job] = collections.deque()
        self._pending_frontend = 0  # jobs queued for or in the front end: clips may still arrive
        self._last_prefill_key: tuple[int, int] | None = None
        # without a prefill artifact, AudioPrefill compiles and loads one entry per (capacity, clips) on
        # first use and keeps the last one loaded
        self._prefill_compiles_per_entry = prefill is not None and not prefill_from_artifact
        self._reserved = 0
        self._uploads: set[UploadSlot] = set()
        self._prefill_building: dict[tuple[int, int], threading.Lock] = collections.defaultdict(threading.Lock)
        #: held around every run of the prefill stage (it keeps one entry loaded): other owners of the stage
        #: (the transcription service's decode thread) take it too
        self.prefill_lock = threading.Lock()
        self._paused = False
        self._stopping = False
        self._device_busy = False
        self._device_thread: threading.Thread | None = None
        self._reaper_thread: threading.Thread | None = None
        self._pool: FrontEndPool | None = None
        self.device_error: str | None = None
        self._started = time.monotonic()
        # metrics
        self._counts = collections.Counter()
        self._rejections = collections.Counter()
        self._latency: dict[str, collections.deque[float]] = {k: collections.deque(maxlen=8192) for k in KINDS}
        self._to_device: collections.deque[float] = collections.deque(maxlen=8192)
        self._batches = 0
        self._batch_clips = 0
        self._batch_slots = 0
        self._width_hist: collections.Counter = collections.Counter()
        self._device_seconds = 0.0
        self._last_device_end = 0.0
        self._audio_seconds_done = 0.0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Scheduler:
        with self._lock:
            if self._device_thread is not None:
                return self
            self._stopping = False
            self._pool = FrontEndPool(self.limits.frontend_workers)
            self._device_thread = threading.Thread(target=self._device_loop, name="gemma3n-device", daemon=True)
            self._reaper_thread = threading.Thread(target=self._reaper_loop, name="gemma3n-reaper", daemon=True)
        self._device_thread.start()
        self._reaper_thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting, finish the call in flight, drop everything else and join the threads."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        for thread in (self._device_thread, self._reaper_thread):
            if thread is not None:
                thread.join(timeout=60)
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
        with self._lock:
            for job in list(self._jobs.values()):
                self._drop(job)
            self._device_thread = self._reaper_thread = self._pool = None

    def close(self) -> None:
        """`stop`, then release the encoder's and the prefill stage's programs on the device: the end of a server,
        after which this scheduler cannot start again."""
        self.stop()
        if self.prefill is not None:
            self.prefill.close()
        self.encoder.close()

    def __enter__(self) -> Scheduler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def pause_device(self) -> None:
        """Hold the device thread after its current call (work keeps queueing): drain / maintenance."""
        with self._cond:
            self._paused = True

    def resume_device(self) -> None:
        with self._cond:
            self._paused = False
            self._cond.notify_all()

    @property
    def healthy(self) -> bool:
        return (
            self._device_thread is not None
            and self._device_thread.is_alive()
            and not self._stopping
            and self.device_error is None
        )

    # ------------------------------------------------------------------ admission
    def open_upload(self, kind: str, client: str = "", declared: int | None = None) -> UploadSlot:
        """Reserve room for one body before it is read: its declared length (`Content-Length`; the largest
        body when it declares none) in the memory budget and one upload slot (see `admission.upload_refusal`).
        Release the slot (`UploadSlot.release`) when the body is refused, or hand it to `submit`, which turns
        it into the request's own reservation."""
        try:
            self._check_available(kind)
            with self._lock:
                self._check_queue()
                body = upload_reservation(self.limits, declared)
                refusal = upload_refusal(
                    self.limits,
                    reserved=self._reserved,
                    uploads=len(self._uploads),
                    client_held=self._client_held(client),
                    client_uploads=sum(1 for u in self._uploads if u.client == client),
                    body_bytes=body,
                )
                if refusal is not None:
                    raise refusal
                slot = UploadSlot(self, client, body)
                self._uploads.add(slot)
                self._reserved += slot.reserved
                return slot
        except ServeError as exc:
            self.count_rejection(exc.code)
            raise

    def _close_upload(self, slot: UploadSlot) -> None:
        with self._lock:
            if slot.open:
                slot.open = False
                self._uploads.discard(slot)
                self._reserved -= slot.reserved

    def _client_held(self, client: str) -> int:
        """Bytes of finished results and errors `client` has not fetched (lock held)."""
        return sum(j.reserved for j in self._jobs.values() if j.client == client and not j.state.active)

    def submit(
        self,
        kind: str,
        data: bytes | bytearray,
        *,
        name: str = "upload",
        prompt: str | None = None,
        chat: bool = True,
        client: str = "",
        slot: UploadSlot | None = None,
    ) -> tuple[Job, str]:
        """Admit one request; returns (job, owner token).  Call from any thread but the event loop
        (the header probe is libsndfile work).  `data` is kept as given (never copied); `slot`, the
        upload's reservation, is released here whatever happens.  Raises BadInput, Rejected, Unavailable."""
        try:
            self._check_available(kind)
            refusal = request_refusal(self.limits, kind, name=name, upload_bytes=len(data), prompt=prompt)
            if refusal is not None:
                raise refusal
            with self._lock:  # cheap early refusal before touching the bytes
                self._check_queue()
            try:
                probe = probe_audio(data, name)
            except AudioError as exc:
                raise BadInput(str(exc), code="bad_audio") from None
            refusal = duration_refusal(self.limits, name=name, seconds=probe.seconds)
            if refusal is not None:
                raise refusal
            need = request_memory_bound(probe, len(data), kind, prompt, self.sizes)
            token = secrets.token_urlsafe(32)
            with self._cond:
                self._check_queue()
                replacing = slot.reserved if slot is not None and slot.open else 0
                refusal = memory_refusal(
                    self.limits, name=name, need=need, reserved=self._reserved, replacing=replacing
                )
                if refusal is not None:
                    raise refusal
                if slot is not None:
                    self._close_upload(slot)  # its reservation becomes the job's, under the same lock
                job_id = secrets.token_urlsafe(16)
                while job_id in self._jobs:  # pragma: no cover - 128 random bits
                    job_id = secrets.token_urlsafe(16)
                job = Job(
                    job_id,
                    kind,
                    hashlib.sha256(token.encode()).digest(),
                    name,
                    len(data),
                    probe,
                    prompt,
                    chat,
                    need,
                    client=client,
                    data=data,
                )
                self._jobs[job_id] = job
                self._reserved += need
                self._pending_frontend += 1
                self._counts["submitted"] += 1
                assert self._pool is not None, "the scheduler is not started"
                self._pool.submit(self._frontend, job)
            return job, token
        except ServeError as exc:
            with self._lock:
                self._rejections[exc.code] += 1
            raise
        finally:
            if slot is not None:
                slot.release()

    def count_rejection(self, code: str) -> None:
        with self._lock:
            self._rejections[code] += 1

    def _check_available(self, kind: str) -> None:
        if kind == PREFILL and self.prefill is None:
            raise Unavailable(f"prefill is not available on this server: {self.prefill_unavailable}")

    def _check_queue(self) -> None:
        """Refuse a request the queue cannot take now (lock held)."""
        accepting = not self._stopping and self._device_thread is not None
        refusal = queue_refusal(self.limits, accepting=accepting, active=self._active_count())
        if refusal is not None:
            raise refusal

    def _active_count(self) -> int:
        return sum(1 for j in self._jobs.values() if j.state.active)

    # ------------------------------------------------------------------ ownership
    def get(self, job_id: str, token: str | None) -> Job:
        """The job if `token` owns it; NotFound otherwise (same answer for unknown ids and wrong tokens)."""
        given = hashlib.sha256((token or "").encode()).digest()
        with self._lock:
            job = self._jobs.get(job_id)
        # compare even when the id is unknown, so the timing does not tell either
        owner = job.owner if job is not None else b"\0" * 32
        if not hmac.compare_digest(given, owner) or job is None or token is None:
            raise NotFound("no such request for this token")
        return job

    def cancel(self, job_id: str, token: str | None) -> str:
        """Cancel (or discard the result of) a request; returns the state it was in."""
        job = self.get(job_id, token)
        with self._cond:
            if job.gone:
                raise NotFound("no such request for this token")
            before = job.state.value
            if job.state.active:
                self._counts["cancelled"] += 1
                self._counts[f"cancelled_{before}"] += 1
            else:
                self._counts["discarded"] += 1
            self._drop(job)
            self._cond.notify_all()
        return before

    def claim(self, job: Job) -> bool:
        """Start delivering a finished result: True for exactly one caller at a time (the others are
        told it is being fetched); end with `release` (delivered: freed) or `unclaim` (the download
        broke: kept for a retry)."""
        with self._lock:
            if job.gone or job.state.active or job.delivering:
                return False
            job.delivering = True
            return True

    def unclaim(self, job: Job) -> None:
        with self._lock:
            job.delivering = False

    def release(self, job: Job) -> None:
        """The owner has received the result or error: free it (once)."""
        with self._lock:
            if not job.gone and not job.state.active:
                self._counts["delivered"] += 1
                self._drop(job)

    def add_listener(self, job: Job, callback: Callable[[], None]) -> bool:
        """Call `callback()` (from a worker thread, must not block) when the job finishes or goes away.
        Returns False (and registers nothing) when that already happened."""
        with self._lock:
            if job.gone or not job.state.active:
                return False
            job.listeners.append(callback)
            return True

    def describe(self, job: Job) -> dict[str, Any]:
        """`job.describe()` under the lock (the worker threads update the job)."""
        with self._lock:
            return job.describe()

    def wait(self, job: Job, timeout: float | None = None) -> bool:
        """Block until the job is finished or gone (for callers without an event loop); False on timeout."""
        done = threading.Event()
        if not self.add_listener(job, done.set):
            return True
        try:
            return done.wait(timeout)
        finally:
            self.remove_listener(job, done.set)

    def remove_listener(self, job: Job, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in job.listeners:
                job.listeners.remove(callback)

    # ------------------------------------------------------------------ state changes (lock held)
    def _notify(self, job: Job) -> None:
        listeners, job.listeners = job.listeners, []
        for callback in listeners:
            try:
                callback()
            except Exception:  # pragma: no cover - a listener's loop may be closed
                log.debug("listener of %s failed", job.id, exc_info=True)

    def _leave_queues(self, job: Job) -> None:
        """Take a job out of the front-end count and the ready buckets (where its state puts it)."""
        if job.state in (State.QUEUED, State.FRONTEND):
            self._pending_frontend -= 1
        if job.state is State.ENCODING:
            for bucket, queue in self._ready.items():
                if any(w.job is job for w in queue):
                    self._ready[bucket] = collections.deque(w for w in queue if w.job is not job)

    def _drop(self, job: Job) -> None:
        """Remove a job everywhere and free what it holds (any state)."""
        if job.gone:
            return
        job.gone = True
        self._leave_queues(job)
        if job.state is State.PREFILL and job in self._post:
            self._post.remove(job)
        self._jobs.pop(job.id, None)
        self._reserved -= job.reserved
        job.reserved = 0
        job.data = job.features = job.hidden = job.valid = job.ids = None
        job.result = None
        self._notify(job)

    def _finish(self, job: Job, result: dict[str, np.ndarray] | None = None, error: ServeError | None = None) -> None:
        """DONE with `result` or FAILED with `error`; the reservation becomes what is held now."""
        if job.gone or not job.state.active:
            return
        self._leave_queues(job)
        now = time.monotonic()
        job.times["finished"] = now
        job.data = job.features = job.hidden = job.valid = None
        if error is not None:
            job.state, job.error, job.result = State.FAILED, error, None
            self._counts["failed"] += 1
        else:
            assert result is not None
            job.state, job.result = State.DONE, result
            self._counts["completed"] += 1
            self._latency[job.kind].append(now - job.submitted)
            self._audio_seconds_done += job.audio_seconds
        held = held_bytes(result, error)
        self._reserved += held - job.reserved
        job.reserved = held
        self._notify(job)
        self._cond.notify_all()

    def _hook(self, stage: str, job: Job) -> None:
        if self.stage_hook is not None:
            self.stage_hook(stage, job.id)

    # ------------------------------------------------------------------ expiry
    def _reaper_loop(self) -> None:
        period = min(1.0, max(0.05, self.limits.result_ttl_s / 4))
        with self._cond:
            while not self._stopping:
                self._cond.wait(timeout=period)
                self.expire()

    def expire(self, now: float | None = None) -> int:
        """Free finished results and errors older than the TTL; returns how many."""
        now = time.monotonic() if now is None else now
        expired = 0
        with self._lock:
            for job in list(self._jobs.values()):
                finished = job.times.get("finished")
                if not job.state.active and finished is not None and now - finished >= self.limits.result_ttl_s:
                    self._drop(job)
                    expired += 1
            self._counts["expired"] += expired
        return expired

    # ------------------------------------------------------------------ metrics
    def metrics(self) -> dict[str, Any]:
        with self._lock:
            states = collections.Counter(j.state.value for j in self._jobs.values())
            active = sum(n for s, n in states.items() if State(s).active)
            ready = {str(b): len(q) for b, q in self._ready.items()}
            uptime = time.monotonic() - self._started
            return {
                "uptime_s": round(uptime, 3),
                "healthy": self.healthy,
                "queue_depth": active,
                "max_queue": self.limits.max_queue,
                "requests_by_state": {s.value: states.get(s.value, 0) for s in State},
                "ready_clips": sum(ready.values()),
                "ready_clips_by_bucket": ready,
                "pending_prefill": len(self._post),
                "device_busy": self._device_busy,
                "device_paused": self._paused,
                "memory_bytes": self._reserved,
                "max_memory_bytes": self.limits.max_memory_bytes,
                "uploads_in_progress": len(self._uploads),
                "max_concurrent_uploads": self.limits.concurrent_uploads,
                "max_client_uploads": self.limits.client_uploads,
                "results_held": sum(1 for j in self._jobs.values() if not j.state.active),
                "batches": batch_summary(
                    self._batches, self._batch_clips, self._batch_slots, self.max_width, self._width_hist
                ),
                "device_seconds": round(self._device_seconds, 4),
                "device_utilization": round(self._device_seconds / uptime, 4) if uptime > 0 else None,
                "audio_seconds_completed": round(self._audio_seconds_done, 3),
                "latency": {k: latency_summary(list(v)) for k, v in self._latency.items()},
                "time_to_device": latency_summary(list(self._to_device)),
                "counts": dict(sorted(self._counts.items())),
                "rejections": dict(sorted(self._rejections.items())),
                "prefill_available": self.prefill is not None,
            }
