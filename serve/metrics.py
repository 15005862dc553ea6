"""The summaries `GET /metrics` shows, as pure functions of the scheduler's counters and samples.

The scheduler keeps raw values under its lock (latencies in seconds, the calls, clips and slots of its
encoder calls); these turn them into the JSON the endpoint answers (and `serve/server.py` flattens for
Prometheus), so what a field means is said once and tested without a server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def latency_summary(seconds: Sequence[float]) -> dict[str, float | int]:
    """Count, mean, p50 / p90 / p99 and max of durations given in seconds, in milliseconds (3 decimals);
    only the count when there are none."""
    if not seconds:
        return {"count": 0}
    a = np.asarray(seconds, np.float64) * 1000.0
    p50, p90, p99 = np.percentile(a, [50, 90, 99])
    return {
        "count": int(a.size),
        "mean_ms": round(float(a.mean()), 3),
        "p50_ms": round(float(p50), 3),
        "p90_ms": round(float(p90), 3),
        "p99_ms": round(float(p99), 3),
        "max_ms": round(float(a.max()), 3),
    }


def batch_summary(
    calls: int, clips: int, slots: int, max_width: int, calls_by_entry: Mapping[str, int]
) -> dict[str, object]:
    """How full the encoder calls were: `occupancy` is the share of slots holding a real clip (the rest
    were padding), `width_utilization` the clips per call over the widest call allowed (None before the
    first call); `calls_by_entry` counts calls per "<frames>x<width>" entry."""
    return {
        "calls": calls,
        "clips": clips,
        "slots": slots,
        "occupancy": round(clips / slots, 4) if slots else None,
        "mean_clips_per_call": round(clips / calls, 3) if calls else None,
        "width_utilization": round(clips / (calls * max_width), 4) if calls else None,
        "max_width": max_width,
        "calls_by_entry": dict(sorted(calls_by_entry.items())),
    }
