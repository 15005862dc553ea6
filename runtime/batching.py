"""How clips waiting for the device are packed into calls: pure functions shared by the encode
pipeline (`runtime/pipeline.py`), the serial `encode_clips` plan and the server's scheduler.

A clip's rows never depend on the other clips of its call or on the call's width (the artifact's
contract, `runtime/encode.py`), so these functions decide speed only, never results.
"""

from __future__ import annotations

from collections.abc import Sequence

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


def may_run(queued: int, widest: int, *, settled: bool, waited_s: float, max_wait_s: float,
            device_idle: bool = True) -> bool:
    """Whether a bucket with `queued` clips may run now: when they fill its widest call; when no more
    clips can arrive (`settled`); or when the device has nothing to do and the oldest clip has waited
    `max_wait_s` (a partial call then beats an idle device).  While a call is running, a partial one
    waits: the clips arriving during the call fill it."""
    if queued <= 0:
        return False
    return queued >= widest or settled or (device_idle and waited_s >= max_wait_s)
