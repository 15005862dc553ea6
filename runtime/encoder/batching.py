"""How clips waiting for the device are packed into calls: pure functions shared by the encode
pipeline (`runtime/encoder/pipeline.py`), the serial `encode_clips` plan and the server's scheduler
(`serve/scheduler.py`), which both ask `next_encode_call` for their next call; and which prefill merge the
server runs next (`next_prefill_merge`).

A clip's rows never depend on the other clips of its call or on the call's width (the artifact's
contract, `runtime/encoder/encode.py`), so these functions decide speed only, never results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: The server's widest call per target when --max-batch-clips is not given.  On the H200 a call of 32
#: 30 s clips runs at 6,555 audio-s/s, 8 clips at 6,180 and 1 clip at 3,100 (BENCHMARKS.md, k12): a
#: GPU is only filled by wide calls.  On the CPU a call's time grows linearly with its clips, so width
#: buys nothing there but compile time.
DEFAULT_MAX_BATCH_CLIPS: dict[str, int] = {"llvm-cpu": 4, "cuda": 32}


def power_of_two_widths(widest: int) -> tuple[int, ...]:
    """Call widths 1, 2, 4 ... up to `widest` (itself included): any number of waiting clips is then
    a few full calls (its binary digits) rather than many narrow ones or one mostly padded one."""
    if widest < 1:
        raise ValueError(f"the widest call must hold at least one clip, got {widest}")
    return tuple(sorted({min(1 << i, widest) for i in range(widest.bit_length() + 1)}))


def call_width(queued: int, widths: Sequence[int]) -> int:
    """The width of the next call for `queued` waiting clips: the widest that they fill, or the
    narrowest (padded with empty slots) when there are fewer clips than that."""
    ordered = sorted(widths, reverse=True)
    return next((w for w in ordered if w <= queued), ordered[-1])


def may_run(
    queued: int, widest: int, *, settled: bool, waited_s: float, max_wait_s: float, device_idle: bool = True
) -> bool:
    """Whether a bucket with `queued` clips may run now: when they fill its widest call; when no more
    clips can arrive (`settled`); or when the device has nothing to do and the oldest clip has waited
    `max_wait_s` (a partial call then beats an idle device).  While a call is running, a partial one
    waits: the clips arriving during the call fill it."""
    if queued <= 0:
        return False
    return queued >= widest or settled or (device_idle and waited_s >= max_wait_s)


@dataclass(frozen=True)
class BucketQueue:
    """What the policy sees of one frame bucket's waiting clips."""

    bucket: int
    queued: int  # clips waiting, oldest first
    oldest_s: float  # when the oldest became ready (a monotonic clock)
    widths: tuple[int, ...]  # the call widths this bucket's entries take


@dataclass(frozen=True)
class EncodeCall:
    """Run `bucket`'s entry of `width` clips on its `take` oldest clips (the other slots are padding)."""

    bucket: int
    width: int
    take: int


@dataclass(frozen=True)
class Wait:
    """Nothing may run now; look again after `seconds` (None: when something changes)."""

    seconds: float | None


def next_encode_call(
    queues: Sequence[BucketQueue], now: float, *, settled: bool, device_idle: bool, max_wait_s: float
) -> EncodeCall | Wait:
    """The next encoder call, shared by the encode pipeline and the server's scheduler: among the buckets
    that `may_run`, the one whose oldest clip has waited longest (ties: the smaller bucket), so no
    bucket starves; it runs the widest call its clips fill (`call_width`).  Otherwise how long until a
    partial call on an idle device has waited `max_wait_s`."""
    heads = sorted((q.oldest_s, q.bucket, q) for q in queues if q.queued > 0)
    for oldest, _, q in heads:
        if may_run(
            q.queued,
            max(q.widths),
            settled=settled,
            waited_s=now - oldest,
            max_wait_s=max_wait_s,
            device_idle=device_idle,
        ):
            width = call_width(q.queued, q.widths)
            return EncodeCall(q.bucket, width, min(width, q.queued))
    if heads and device_idle:
        return Wait(max(0.0, heads[0][0] + max_wait_s - now))
    return Wait(None)


#: How long a prefill merge may be passed over for merges of the loaded entry (serve/scheduler.py).
PREFILL_PATIENCE_S = 1.0


@dataclass(frozen=True)
class WaitingMerge:
    """What the policy sees of a prefill request whose clips are all encoded."""

    entry: tuple[int, int]  # the (capacity, clips) prefill entry it runs on
    encoded_s: float  # when its last clip was encoded (a monotonic clock)


def next_prefill_merge(
    waiting: Sequence[WaitingMerge], loaded: tuple[int, int] | None, now: float, patience_s: float = PREFILL_PATIENCE_S
) -> int:
    """The index (in `waiting`, oldest first) of the merge to run next. `AudioPrefill` keeps one entry
    loaded, so the oldest merge of the `loaded` entry goes first, unless the oldest of all has waited
    `patience_s` (then it goes, so none starves) or none is of the loaded entry."""
    if not waiting:
        raise ValueError("no prefill merge is waiting")
    oldest = waiting[0]
    if now - oldest.encoded_s >= patience_s or oldest.entry == loaded:
        return 0
    return next((i for i, w in enumerate(waiting) if w.entry == loaded), 0)
