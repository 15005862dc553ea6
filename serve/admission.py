"""Admission: what a request may hold of the server's memory and when it is refused, as pure functions.

The scheduler (`serve/scheduler.py`) keeps one counter, the bytes *reserved* in `Limits.max_memory_bytes`,
and three kinds of holders add to it:

* a body being received holds its declared length (`Content-Length`), or the largest body the server
  accepts (`Limits.max_body_bytes`) when it declares none (`upload_reservation`), from before its first
  byte is read, so bodies in flight are bounded in number and in bytes before any is read
  (`upload_refusal`: no free upload slot, the client's own uploads at `Limits.client_uploads` -- so clients
  that stall mid-body cannot keep the others out --, a client already holding `Limits.client_held_bytes` of
  results it has not fetched, or no room for this body);
* an admitted, unfinished request holds `request_memory_bound` of its header probe -- upload, decode
  buffers, samples, features and outputs, an upper bound of what it holds at once -- which replaces its
  upload's reservation (`memory_refusal`: "retry later" while the budget is in use, "too large" when the
  bound exceeds the whole budget, since retrying cannot help);
* a finished request holds its result arrays or its error message (`held_bytes`) until it is fetched,
  cancelled or expired.

Besides memory, a request is refused for what it is (`request_refusal`: unknown kind, missing or too long
prompt, too large upload; `duration_refusal`: too long audio, checked on the header and again on the
decoded samples) and for the queue (`queue_refusal`: shutting down, or `Limits.max_queue` unfinished
requests).  Each check takes the limits and the scheduler's counters and returns the error to raise, or
None: the scheduler reads its counters under its lock and raises what these return, so the policy is
tested without threads (`tests/test_admission_property.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP, MAX_CLIP_FRAMES
from ..runtime.audio.decode import AudioInfo
from ..runtime.audio.frontend import MAX_CLIP_SAMPLES, SAMPLE_RATE
from ..runtime.encoder.pipeline import default_workers
from .errors import BadInput, Rejected, ServeError
from .jobs import KINDS, PREFILL

MIB = 1 << 20


@dataclass
class Limits:
    max_queue: int = 256  # unfinished (admitted, not yet done/failed) requests
    max_memory_bytes: int = 4096 * MIB  # upload slots + reservations of unfinished requests + held results
    max_upload_bytes: int = 100 * MIB  # one request's audio; the whole body may add `form_overhead_bytes`
    max_concurrent_uploads: int | None = None  # bodies received at once (None: `concurrent_uploads`)
    max_client_uploads: int | None = None  # bodies one client sends at once (None: `client_uploads`)
    upload_idle_s: float = 30.0  # longest pause between two pieces of a body
    upload_total_s: float = 300.0  # longest time to receive one body
    max_client_held_bytes: int | None = None  # finished, unfetched results per client (None: a quarter of memory)
    max_seconds: float = 600.0  # one request's audio
    max_batch_clips: int | None = None  # widest call used (default: the artifact's widest entry)
    max_wait_s: float = 0.005  # how long a partial call may wait for more clips
    result_ttl_s: float = 600.0  # results and errors not fetched are freed after this
    frontend_workers: int = field(default_factory=default_workers)  # the front-end pool (runtime/encoder/pipeline.py)
    retry_after_s: float = 1.0
    max_prompt_chars: int = 100_000

    @property
    def form_overhead_bytes(self) -> int:
        """What a multipart body may carry beside the audio: part headers, the prompt and chat fields."""
        return (64 << 10) + 4 * self.max_prompt_chars

    @property
    def max_body_bytes(self) -> int:
        return self.max_upload_bytes + self.form_overhead_bytes

    @property
    def concurrent_uploads(self) -> int:
        """Bodies received at once: as given, else the queue's length -- every body becomes a queued request,
        so no more could be admitted, and the memory budget bounds their bytes (each reserves its size)."""
        return self.max_concurrent_uploads if self.max_concurrent_uploads is not None else self.max_queue

    @property
    def client_uploads(self) -> int:
        """Bodies one client (connection address) sends at once: as given, else half of `concurrent_uploads`
        (at least one), so clients that stall mid-body cannot take every slot while a load generator or a
        gateway behind one address still fills half of them."""
        if self.max_client_uploads is not None:
            return self.max_client_uploads
        return max(1, self.concurrent_uploads // 2)

    @property
    def client_held_bytes(self) -> int:
        return self.max_client_held_bytes if self.max_client_held_bytes is not None else self.max_memory_bytes // 4


def queue_refusal(limits: Limits, *, accepting: bool, active: int) -> Rejected | None:
    """Why no request can be taken now (None: it can): the scheduler is not running (not started or
    stopping), or `active` unfinished requests fill the queue."""
    if not accepting:
        return Rejected("the server is shutting down", code="stopping", status=503, retry_after=limits.retry_after_s)
    if active >= limits.max_queue:
        return Rejected(
            f"the request queue is full ({active} of {limits.max_queue} requests in progress); retry later",
            code="queue_full",
            status=429,
            retry_after=limits.retry_after_s,
        )
    return None


def limits_contradiction(limits: Limits) -> str | None:
    """Why these limits cannot serve a request the server accepts (None: they can): checked at start-up, since
    a refusal that comes from the configuration would otherwise be a "retry later" that never succeeds."""
    if limits.max_body_bytes > limits.max_memory_bytes:
        return (
            f"the memory budget (--max-memory-mb, {limits.max_memory_bytes / MIB:g} MiB) is smaller than one "
            f"upload the server accepts (--max-upload-mb, {limits.max_upload_bytes / MIB:g} MiB, plus "
            f"{limits.form_overhead_bytes / MIB:.2f} MiB of form fields): raise --max-memory-mb or lower --max-upload-mb"
        )
    if limits.client_uploads > limits.concurrent_uploads:
        return (
            f"one client may send {limits.client_uploads} uploads at once (--max-client-uploads) but the server "
            f"receives only {limits.concurrent_uploads} (--max-concurrent-uploads)"
        )
    return None


def upload_reservation(limits: Limits, declared: int | None) -> int:
    """What a body reserves of the budget before it is read: its declared length (the server refuses one
    longer than `max_body_bytes` with 413 before this), else the largest body the server accepts."""
    return limits.max_body_bytes if declared is None else min(declared, limits.max_body_bytes)


def upload_refusal(
    limits: Limits,
    *,
    reserved: int,
    uploads: int,
    client_held: int,
    client_uploads: int = 0,
    body_bytes: int | None = None,
) -> ServeError | None:
    """Why a new upload of `body_bytes` (`upload_reservation`; None: the largest body) cannot start now (None:
    it can): the admission policy as a pure function of the scheduler's counters, checked before the body is
    read. `client_uploads`: the bodies this client is sending now."""
    retry = limits.retry_after_s
    if uploads >= limits.concurrent_uploads:
        return Rejected(
            f"{uploads} uploads are being received (the limit is {limits.concurrent_uploads}); retry later",
            code="uploads_full",
            status=503,
            retry_after=retry,
        )
    if client_uploads >= limits.client_uploads:
        return Rejected(
            f"this client is sending {client_uploads} uploads already (the limit is {limits.client_uploads} "
            f"per client); retry when one has arrived",
            code="client_uploads_full",
            status=429,
            retry_after=retry,
        )
    if client_held >= limits.client_held_bytes:
        return Rejected(
            f"this client holds {client_held // MIB} MiB of finished results it has not fetched (the "
            f"limit is {limits.client_held_bytes // MIB} MiB per client): fetch or DELETE them first",
            code="results_unfetched",
            status=429,
            retry_after=retry,
        )
    body = limits.max_body_bytes if body_bytes is None else body_bytes
    if body > limits.max_memory_bytes:  # no retry can help (`limits_contradiction` keeps servers from this)
        return BadInput(
            f"this upload may take {body // MIB} MiB, more than the server's whole memory budget "
            f"({limits.max_memory_bytes // MIB} MiB)",
            code="too_large",
            status=413,
        )
    if reserved + body > limits.max_memory_bytes:
        return Rejected(
            f"the server's memory budget is in use ({reserved // MIB} of {limits.max_memory_bytes // MIB} "
            f"MiB); retry later",
            code="memory_full",
            status=503,
            retry_after=retry,
        )
    return None


def request_refusal(limits: Limits, kind: str, *, name: str, upload_bytes: int, prompt: str | None) -> BadInput | None:
    """Why this request cannot be served whatever the load (None: it can), from what it is before its
    bytes are looked at: its kind, its prompt (a prefill needs one, of at most `max_prompt_chars`) and the
    size of its audio.  Whether the server has the kind's stage at all is the scheduler's to say."""
    if kind not in KINDS:
        return BadInput(f"unknown request kind {kind!r}; use one of {', '.join(KINDS)}", code="bad_kind")
    if kind == PREFILL:
        if prompt is None:
            return BadInput(
                "a prefill request needs a prompt (form field or query parameter 'prompt')", code="bad_prompt"
            )
        if len(prompt) > limits.max_prompt_chars:
            return BadInput(
                f"the prompt has {len(prompt)} characters, more than this server's limit of {limits.max_prompt_chars}",
                code="too_large",
                status=413,
            )
    if upload_bytes > limits.max_upload_bytes:
        return BadInput(
            f"{name}: {upload_bytes} bytes is more than this server's upload limit of {limits.max_upload_bytes} bytes",
            code="too_large",
            status=413,
        )
    return None


def duration_refusal(limits: Limits, *, name: str, seconds: float) -> BadInput | None:
    """Too long audio (None: it is not): checked on the header's duration at admission and on the decoded
    samples in the front end (a header may understate them)."""
    if seconds > limits.max_seconds:
        return BadInput(
            f"{name}: {seconds:.1f} s of audio is more than this server's limit of {limits.max_seconds:g} s",
            code="too_long",
            status=413,
        )
    return None


@dataclass(frozen=True)
class ModelSizes:
    """The model's sizes `request_memory_bound` multiplies: mel bins of a clip's features, bytes of one
    clip's encoder outputs, bytes of one prefill token's rows (None: this server has no prefill stage)."""

    mel_bins: int
    clip_output_bytes: int
    prefill_token_bytes: int | None = None

    @classmethod
    def of(cls, audio_config: Any, text_config: Any | None = None) -> ModelSizes:
        """From the encoder's config (`input_feat_size`, `text_hidden_size`, `hidden_size`) and, with a
        prefill stage, its text config (`hidden_size`, `ple_width`)."""
        clip = AUDIO_SOFT_TOKENS_PER_CLIP * (audio_config.text_hidden_size + audio_config.hidden_size) * 4 + 16
        token = None if text_config is None else (text_config.hidden_size + text_config.ple_width) * 4 + 8
        return cls(audio_config.input_feat_size, clip, token)


def request_memory_bound(probe: AudioInfo, upload_bytes: int, kind: str, prompt: str | None, sizes: ModelSizes) -> int:
    """An upper bound of what one request holds at once: upload, decode buffers, features, outputs."""
    seconds = probe.seconds
    samples16k = int(seconds * SAMPLE_RATE) + 1
    clips = max(1, -(-samples16k // MAX_CLIP_SAMPLES))
    total = upload_bytes
    total += probe.frames * probe.channels * 8 + probe.frames * 8  # float64 decode + mono mix
    total += samples16k * (8 + 4)  # resampled float64 + float32 samples
    total += clips * MAX_CLIP_FRAMES * sizes.mel_bins * 4  # log-mel features
    total += clips * sizes.clip_output_bytes  # encoder outputs
    if kind == PREFILL and sizes.prefill_token_bytes is not None:
        # a tokenizer with byte fallback turns a prompt into at most one token per UTF-8 byte
        tokens = clips * (AUDIO_SOFT_TOKENS_PER_CLIP + 8) + len((prompt or "").encode("utf-8")) + 32
        total += tokens * sizes.prefill_token_bytes
    return int(total)


def memory_refusal(limits: Limits, *, name: str, need: int, reserved: int, replacing: int) -> ServeError | None:
    """Why a request needing `need` bytes cannot be admitted now (None: it can).  `reserved` is the
    budget in use, `replacing` the part of it (its upload's reservation) the request's own replaces."""
    if reserved - replacing + need <= limits.max_memory_bytes:
        return None
    if need > limits.max_memory_bytes:
        return BadInput(
            f"{name}: this request needs about {need // MIB} MiB, more than the server's "
            f"whole memory budget ({limits.max_memory_bytes // MIB} MiB)",
            code="too_large",
            status=413,
        )
    return Rejected(
        f"the server's memory budget is in use ({reserved // MIB} of {limits.max_memory_bytes // MIB} MiB); "
        f"retry later",
        code="memory_full",
        status=503,
        retry_after=limits.retry_after_s,
    )


def held_bytes(result: Mapping[str, np.ndarray] | None = None, error: ServeError | None = None) -> int:
    """What a finished request holds of the budget until it is fetched or expired: its error's message
    (with room for the record around it), else its result's arrays."""
    if error is not None:
        return len(error.message) + 256
    assert result is not None
    return int(sum(v.nbytes for v in result.values()))
