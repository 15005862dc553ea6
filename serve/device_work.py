"""The scheduler's device thread: the next encoder call or prefill merge picked from what is ready, run on the
encoder's session (the next call staged while one runs), and its rows handed to their jobs.

Why a module of its own: it is the one thread that touches the device, and its packing loop is the part of
`serve/scheduler.py` that runs the policy of `runtime/encoder/batching.py`; admission, ownership and result
lifetime stay in the scheduler.  `DeviceWork` is a mixin of `Scheduler`: it works on the scheduler's lock,
queues and counters, declared in `Scheduler.__init__`.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from ..runtime.encoder.batching import BucketQueue, Wait, WaitingMerge, next_encode_call, next_prefill_merge
from .errors import BadInput, ServeError
from .jobs import ENCODE, EncodeWork, Job, PrefillWork, ReadyClip, RunningCall, State

log = logging.getLogger("gemma3n_iree.server")


class DeviceWork:
    """The device thread's side of `Scheduler` (`_device_loop`, started by `Scheduler.start`)."""

    def _pick(self, now: float, device_idle: bool = True) -> PrefillWork | EncodeWork | Wait:
        """The next device work under the lock, or how long to wait for it: a prefill merge first (it
        completes a request and frees memory), else the encoder call `batching.next_encode_call` picks
        (while a call runs, partial calls wait for it)."""
        if self._post:
            waiting = [WaitingMerge(j.prefill_key, j.times.get("encoded", now)) for j in self._post]
            job = self._post[next_prefill_merge(waiting, self._last_prefill_key, now)]
            self._post.remove(job)
            self._last_prefill_key = job.prefill_key
            return PrefillWork(job)
        queues = [BucketQueue(b, len(q), q[0].ready, self.widths[b]) for b, q in self._ready.items() if q]
        call = next_encode_call(
            queues, now, settled=self._pending_frontend == 0, device_idle=device_idle, max_wait_s=self.limits.max_wait_s
        )
        if isinstance(call, Wait):
            return call
        queue = self._ready[call.bucket]
        return EncodeWork(call, [queue.popleft() for _ in range(call.take)])

    def _device_loop(self) -> None:
        """Pick work and run it.  An encoder call is queued on the session's device thread and, while it
        runs, the next call is picked and staged behind it, then the first one's rows are handed out:
        the device never waits for this thread to build inputs or copy results."""
        running: RunningCall | None = None
        while True:
            with self._cond:
                while True:
                    work: PrefillWork | EncodeWork | None = None
                    wait: float | None = None
                    if not self._paused and not self._stopping:
                        picked = self._pick(time.monotonic(), device_idle=running is None)
                        if isinstance(picked, Wait):
                            wait = picked.seconds
                        else:
                            work = picked
                    if work is not None or running is not None:
                        break
                    if self._stopping:
                        return
                    self._cond.wait(timeout=wait)
                self._device_busy = True
            try:
                if isinstance(work, EncodeWork):
                    staged = self._start_encode(work.call.bucket, work.call.width, work.items)
                    if running is not None:
                        self._complete_encode(running)
                    running = staged
                else:
                    if running is not None:
                        self._complete_encode(running)
                        running = None
                    if work is not None:
                        self._run_prefill(work.job)
            except Exception as exc:  # pragma: no cover - defensive: keep the device thread alive
                log.exception("device work failed")
                self.device_error = f"{type(exc).__name__}: {exc}"
            finally:
                with self._cond:
                    self._device_busy = running is not None
                    self._cond.notify_all()

    def _start_encode(self, bucket: int, width: int, items: list[ReadyClip]) -> RunningCall | None:
        """Build one call's inputs and queue it on the session's thread (None: it failed at once)."""
        started = time.monotonic()
        with self._lock:
            for item in items:
                if "device" not in item.job.times:
                    item.job.times["device"] = started
                    self._to_device.append(started - item.job.submitted)
        clips = []
        for item in items:
            assert item.clip is not None
            clips.append(item.clip)
            item.clip = None  # the call holds its own copy
        for item in items:
            self._hook("device", item.job)
        try:
            future = self.session.run_async(*self.encoder.call_inputs(bucket, width, clips))
        except Exception as exc:
            self._fail_call(bucket, width, items, exc)
            return None
        return RunningCall(bucket, width, items, future, started)

    def _fail_call(self, bucket: int, width: int, items: list[ReadyClip], exc: Exception) -> None:
        log.error("encoder call %dx%d failed: %s: %s", bucket, width, type(exc).__name__, exc)
        error = ServeError(f"the encoder call failed: {type(exc).__name__}: {exc}", code="device_error")
        with self._cond:
            for item in items:
                self._finish(item.job, error=error)

    def _complete_encode(self, call: RunningCall | None) -> None:
        """Wait for a queued call and hand its rows to their jobs (cancelled jobs' rows are discarded)."""
        if call is None:
            return
        try:
            out = call.future.result()
        except Exception as exc:
            self._fail_call(call.bucket, call.width, call.items, exc)
            return
        ended = time.monotonic()
        with self._cond:
            self._batches += 1
            self._batch_clips += len(call.items)
            self._batch_slots += call.width
            self._width_hist[f"{call.bucket}x{call.width}"] += 1
            # the device's own time: from the call's start or the previous call's end, whichever is later
            self._device_seconds += ended - max(call.started, self._last_device_end)
            self._last_device_end = ended
            for slot, item in enumerate(call.items):
                job = item.job
                if job.gone or job.state is not State.ENCODING:
                    continue  # cancelled (or failed) while on the device: its rows are discarded
                job.features[item.index] = out["audio_features"][slot]
                job.hidden[item.index] = out["encoder_hidden"][slot]
                job.valid[item.index] = out["valid_tokens"][slot]
                job.clips_left -= 1
                if job.clips_left == 0:
                    job.times["encoded"] = time.monotonic()
                    if job.kind == ENCODE:
                        self._finish(
                            job,
                            {
                                "audio_features": job.features,
                                "encoder_hidden": job.hidden,
                                "valid_tokens": job.valid,
                                "clip_source": np.zeros(job.clips, np.int32),
                                "clip_start_s": np.array(job.starts, np.float32),
                            },
                        )
                    else:
                        job.state = State.PREFILL
                        self._post.append(job)

    def _run_prefill(self, job: Job) -> None:
        from ..runtime.text.tokens import PromptError

        self._hook("prefill", job)
        with self._lock:
            if job.gone or job.state is not State.PREFILL:
                return
            ids, features = job.ids, job.features
        started = time.monotonic()
        try:
            with self.prefill_lock:
                result = self.prefill.run(ids, features)
        except PromptError as exc:
            with self._cond:
                self._finish(job, error=BadInput(f"prompt: {exc}", code="bad_prompt"))
            return
        except Exception as exc:
            log.exception("prefill failed for %s", job.id)
            with self._cond:
                self._finish(
                    job, error=ServeError(f"the prefill call failed: {type(exc).__name__}: {exc}", code="device_error")
                )
            return
        with self._cond:
            self._device_seconds += time.monotonic() - started
            self._counts["prefill_calls"] += 1
            if job.gone:
                return  # cancelled during the merge: nothing is kept
            self._finish(
                job,
                {
                    "input_ids": np.asarray(result.input_ids, np.int32),
                    "inputs_embeds": result.inputs_embeds,
                    "per_layer_inputs": result.per_layer_inputs,
                    "audio_rows": np.asarray(result.audio_rows, np.int32),
                },
            )
