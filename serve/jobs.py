"""One request's record and the work items the scheduler's threads hand each other: plain data, no locks.

A :class:`Job` is one admitted request (its kind, `ENCODE` or `PREFILL`, says which outputs its result
holds: `ENCODE_OUTPUTS` or `PREFILL_OUTPUTS`).  Its :class:`State` follows the scheduler's pipeline::

    QUEUED ─▶ FRONTEND ─▶ ENCODING ─▶ [PREFILL] ─▶ DONE or FAILED ─▶ fetched / expired / cancelled (gone)

The fields are written only by `serve/scheduler.py`, under its lock; they are kept here, apart from the
threads, so that what a request is (and what `describe` shows of it) reads in one place.  The work items
are what the device thread moves: a :class:`ReadyClip` waits in its frame bucket's queue, an
:class:`EncodeWork` or :class:`PrefillWork` is what the scheduler picked to run next, and a
:class:`RunningCall` is an encoder call queued on the session's thread, its rows not handed out yet.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

from ..runtime.audio.decode import AudioInfo
from ..runtime.encoder.batching import EncodeCall
from ..runtime.encoder.clips import Clip
from .errors import ServeError

ENCODE, PREFILL = "encode", "prefill"
KINDS = (ENCODE, PREFILL)
#: the arrays of a finished request's result, in the order the `.npz` holds them
ENCODE_OUTPUTS = ("audio_features", "encoder_hidden", "valid_tokens", "clip_source", "clip_start_s")
PREFILL_OUTPUTS = ("input_ids", "inputs_embeds", "per_layer_inputs", "audio_rows")


class State(str, Enum):
    QUEUED = "queued"  # admitted, waiting for a front-end worker
    FRONTEND = "frontend"  # being decoded / featurized / tokenized
    ENCODING = "encoding"  # clips in the bucket queues or on the device
    PREFILL = "prefill"  # clips encoded, waiting for (or in) the prefill merge
    DONE = "done"  # result held until fetched or expired
    FAILED = "failed"  # error held until fetched or expired

    @property
    def active(self) -> bool:
        """Unfinished: it counts against the queue bound and may still change."""
        return self in (State.QUEUED, State.FRONTEND, State.ENCODING, State.PREFILL)


@dataclass(eq=False)  # identity: jobs are looked up in deques and compared by `is`
class Job:
    id: str
    kind: str
    owner: bytes  # sha256 of the owner token
    name: str
    upload_bytes: int
    probe: AudioInfo
    prompt: str | None
    chat: bool
    reserved: int  # bytes of the memory budget this job holds now
    client: str = ""  # who submitted it (the connection's address): the per-client bound on held results
    submitted: float = field(default_factory=time.monotonic)
    submitted_wall: float = field(default_factory=time.time)
    state: State = State.QUEUED
    data: bytes | bytearray | None = None
    # filled by the front end
    audio_seconds: float = 0.0
    starts: list[float] = field(default_factory=list)
    frames: list[int] = field(default_factory=list)
    buckets: list[int] = field(default_factory=list)
    ids: np.ndarray | None = None
    prefill_key: tuple[int, int] | None = None  # (context capacity, clips) when known: the prefill entry
    # filled by the device thread
    features: np.ndarray | None = None
    hidden: np.ndarray | None = None
    valid: np.ndarray | None = None
    clips_left: int = 0
    result: dict[str, np.ndarray] | None = None
    error: ServeError | None = None
    times: dict[str, float] = field(default_factory=dict)
    listeners: list[Callable[[], None]] = field(default_factory=list)
    gone: bool = False  # cancelled, released or expired: every stage drops it
    delivering: bool = False  # a fetch is streaming the result now (see Scheduler.claim)

    @property
    def clips(self) -> int:
        return len(self.frames)

    def describe(self) -> dict[str, Any]:
        """JSON-able metadata (never the arrays themselves)."""
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "status": self.state.value,
            "filename": self.name,
            "upload_bytes": self.upload_bytes,
            "sample_rate": self.probe.rate,
            "channels": self.probe.channels,
            "container": self.probe.container,
            "length_checked": self.probe.length_checked,
            "audio_seconds": round(self.audio_seconds or self.probe.seconds, 6),
            "clips": self.clips or None,
            "submitted": self.submitted_wall,
            "timings_s": {k: round(v - self.submitted, 6) for k, v in self.times.items()},
        }
        if self.clips:
            out["clip_frames"] = list(self.frames)
            out["clip_start_s"] = list(self.starts)
            out["frame_buckets"] = list(self.buckets)
        if self.kind == PREFILL:
            out["prompt_chars"] = len(self.prompt or "")
            if self.ids is not None:
                out["prompt_tokens"] = int(len(self.ids))
        if self.state is State.ENCODING:
            out["clips_encoded"] = self.clips - self.clips_left
        if self.error is not None:
            out["error"] = {"code": self.error.code, "message": self.error.message}
        if self.result is not None:
            out["result"] = {k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in self.result.items()}
            out["result_bytes"] = int(sum(v.nbytes for v in self.result.values()))
        return out


@dataclass
class ReadyClip:
    """One clip of a job, waiting in its frame bucket's queue (then a row of an encoder call)."""

    job: Job
    index: int
    clip: Clip | None  # its features or samples (encode.Clip); None once copied into a call
    frames: int
    ready: float  # when it was queued: the batching policy's waiting time


@dataclass(frozen=True)
class EncodeWork:
    """An encoder call the policy picked, with the clips taken from its bucket's queue."""

    call: EncodeCall
    items: list[ReadyClip]


@dataclass(frozen=True)
class PrefillWork:
    """A prefill merge whose clips are all encoded."""

    job: Job


@dataclass
class RunningCall:
    """An encoder call queued on the session's thread: its clips and the future of its outputs."""

    bucket: int
    width: int
    items: list[ReadyClip]
    future: Future
    started: float
