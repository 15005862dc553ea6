"""The scheduler's front-end work, on the pool threads (never the device thread): an admitted request's bytes
decoded exactly as the CLI decodes a file, cut into clips with their features (or samples), the prompt of a
prefill request expanded (and its prefill entry compiled here, so a first-time entry never stalls the device),
then each clip queued for its frame bucket.

Why a module of its own: it is the host-side stage between admission and the device, with its own failures (bad
audio, a prompt too long) that end one request only.  `FrontEndWork` is a mixin of `Scheduler`: it works on the
scheduler's lock, queues and counters, declared in `Scheduler.__init__`.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from ..model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP
from ..runtime.audio.decode import AudioError, decode_audio
from ..runtime.audio.frontend import SAMPLE_RATE
from ..runtime.encoder.clips import EncodeError, choose_bucket
from .admission import duration_refusal
from .errors import BadInput, ServeError
from .jobs import PREFILL, Job, ReadyClip, State

log = logging.getLogger("gemma3n_iree.server")


class FrontEndWork:
    """The front-end pool's side of `Scheduler` (`_frontend`, submitted for each admitted request)."""

    def _frontend(self, job: Job) -> None:
        with self._lock:
            if job.gone:
                return
            job.state = State.FRONTEND
            job.times["frontend"] = time.monotonic()
            data = job.data
        try:
            self._hook("frontend", job)
            with self._lock:
                if job.gone:
                    return
            assert data is not None
            clips, samples = self._features(job, data)
            ids = self._expand(job, len(clips)) if job.kind == PREFILL else None
        except ServeError as exc:
            with self._cond:
                self._finish(job, error=exc)
            return
        except (AudioError, EncodeError, ValueError) as exc:
            with self._cond:
                self._finish(job, error=BadInput(str(exc), code="bad_audio"))
            return
        except Exception as exc:  # pragma: no cover - a bug, but it must fail this request only
            log.exception("front end failed for %s", job.id)
            with self._cond:
                self._finish(job, error=ServeError(f"front end failed: {type(exc).__name__}: {exc}"))
            return
        with self._cond:
            if job.gone:
                return
            job.data = None
            job.audio_seconds = samples / SAMPLE_RATE
            job.ids = ids
            job.starts = [float(np.float32(c.start_s)) for c in clips]
            job.frames = [c.frames for c in clips]
            job.buckets = [choose_bucket(f, self.frame_buckets) for f in job.frames]
            cfg = self.encoder.config
            n = len(clips)
            job.features = np.zeros((n, AUDIO_SOFT_TOKENS_PER_CLIP, cfg.text_hidden_size), np.float32)
            job.hidden = np.zeros((n, AUDIO_SOFT_TOKENS_PER_CLIP, cfg.hidden_size), np.float32)
            job.valid = np.zeros(n, np.int32)
            job.clips_left = n
            job.state = State.ENCODING
            self._pending_frontend -= 1
            now = time.monotonic()
            job.times["queued_clips"] = now
            for i, clip in enumerate(clips):
                self._ready[job.buckets[i]].append(ReadyClip(job, i, clip, job.frames[i], now))
            self._cond.notify_all()

    def _features(self, job: Job, data: bytes | bytearray):
        samples = decode_audio(data, job.name).samples
        refusal = duration_refusal(self.limits, name=job.name, seconds=samples.shape[0] / SAMPLE_RATE)
        if refusal is not None:
            raise refusal
        clips = self.encoder.clips_from_samples(samples)
        for clip in clips:  # a clip longer than every bucket (an artifact without a 30 s bucket)
            choose_bucket(clip.frames, self.frame_buckets)
        return clips, samples.shape[0]

    def _expand(self, job: Job, clips: int) -> np.ndarray:
        from ..runtime.text.tokens import PromptError

        try:
            ids = self.prefill.expand(job.prompt or "", [clips], job.chat)
        except PromptError as exc:
            raise BadInput(f"prompt: {exc}", code="bad_prompt") from None
        capacities = sorted(getattr(self.prefill, "capacities", None) or ())
        if self._prefill_compiles_per_entry and capacities:
            fitting = [c for c in capacities if c >= len(ids)]
            if not fitting:
                raise BadInput(
                    f"prompt: the expanded prompt has {len(ids)} tokens ({clips} clip(s) of audio), more "
                    f"than this server's largest context capacity {capacities[-1]}",
                    code="bad_prompt",
                    status=413,
                )
            job.prefill_key = (fitting[0], clips)
            with self._prefill_building[job.prefill_key]:  # one compile per entry, here and not on the device
                self.prefill.prepare(job.prefill_key)
        return ids
