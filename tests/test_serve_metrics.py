"""The `/metrics` summaries (`serve/metrics.py`), property-tested: the latency percentiles are ordered and
within the samples' range, in milliseconds; the encoder calls' fill is a share of slots and of the widest
call, and undefined (None) before the first call."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gemma3n_iree.serve.metrics import batch_summary, latency_summary

EPS = 0.0011  # the summary rounds to 3 decimals of a millisecond


def test_latency_summary_of_nothing_and_of_known_samples():
    assert latency_summary([]) == {"count": 0}
    out = latency_summary([0.001 * i for i in range(1, 101)])  # 1 .. 100 ms
    assert out["count"] == 100 and out["max_ms"] == 100.0 and out["mean_ms"] == 50.5
    assert out["p50_ms"] == 50.5 and out["p99_ms"] == 99.01  # linear interpolation between ranks


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0.0, 600.0), min_size=1, max_size=200))
def test_latency_percentiles_are_ordered_and_within_the_samples(seconds):
    out = latency_summary(seconds)
    low, high = min(seconds) * 1000, max(seconds) * 1000
    assert out["count"] == len(seconds)
    assert abs(out["max_ms"] - high) <= EPS
    assert low - EPS <= out["p50_ms"] <= out["p90_ms"] <= out["p99_ms"] <= out["max_ms"] <= high + EPS
    assert low - EPS <= out["mean_ms"] <= high + EPS


def test_batch_summary_before_any_call():
    out = batch_summary(0, 0, 0, 8, {})
    assert out == {
        "calls": 0,
        "clips": 0,
        "slots": 0,
        "occupancy": None,
        "mean_clips_per_call": None,
        "width_utilization": None,
        "max_width": 8,
        "calls_by_entry": {},
    }


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([256, 1024, 2997]), st.sampled_from([1, 2, 4, 8]), st.integers(1, 8)),
        min_size=1,
        max_size=100,  # few enough calls that one padded slot still shows in the rounded occupancy
    )
)
def test_batch_fill_is_a_share_of_the_slots_and_of_the_widest_call(calls):
    """calls: (frame bucket, width, clips) of each call, clips capped at the width (the rest is padding)."""
    calls = [(bucket, width, min(clips, width)) for bucket, width, clips in calls]
    entries: dict[str, int] = {}
    for bucket, width, _ in calls:
        entries[f"{bucket}x{width}"] = entries.get(f"{bucket}x{width}", 0) + 1
    clips, slots = sum(c for _, _, c in calls), sum(w for _, w, _ in calls)
    out = batch_summary(len(calls), clips, slots, 8, entries)
    assert 0 < out["occupancy"] <= 1 and 0 < out["width_utilization"] <= 1
    assert out["width_utilization"] <= out["occupancy"] + 0.0001  # every call is at most the widest one
    assert 1 <= out["mean_clips_per_call"] <= 8
    assert (out["occupancy"] == 1) == all(c == w for _, w, c in calls)
    assert list(out["calls_by_entry"]) == sorted(entries) and sum(out["calls_by_entry"].values()) == len(calls)
