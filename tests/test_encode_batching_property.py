"""The encoder-call policy (`runtime/encoder/batching.next_encode_call`), shared by the encode pipeline and the
server's scheduler, property-tested.

* One decision: the call runs a bucket that may run (`may_run`), on the widest width its clips fill
  (`call_width`), taking min(width, queued) clips; among the buckets that may run, the one whose oldest
  clip has waited longest; a wait only when no bucket may run, as long as the oldest partial call has
  left on an idle device.
* A simulation (clips arriving into random buckets at random times, calls taking random time, the device
  idle between calls as the pipeline's and the scheduler's loops leave it): every clip is served exactly
  once, in its bucket's arrival order (none lost or duplicated), and none starves: a clip is served no
  later than once every clip that became ready before it is served and `max_wait_s` has passed.
* The prefill-merge order (`next_prefill_merge`): one decision, and a simulation in which none starves.
"""

from __future__ import annotations

import collections
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from gemma3n_iree.runtime.encoder.batching import (
    PREFILL_PATIENCE_S,
    BucketQueue,
    EncodeCall,
    Wait,
    WaitingMerge,
    call_width,
    may_run,
    next_encode_call,
    next_prefill_merge,
    power_of_two_widths,
)

MAX_WAIT_S = 0.005
BUCKETS = (256, 1024, 2997)

widths_st = st.integers(1, 32).map(power_of_two_widths) | st.lists(
    st.integers(1, 16), min_size=1, max_size=4, unique=True
).map(lambda w: tuple(sorted(w)))
queue_st = st.builds(
    lambda bucket, queued, oldest, widths: BucketQueue(bucket, queued, oldest, widths),
    st.sampled_from(BUCKETS),
    st.integers(0, 70),
    st.floats(0.0, 0.02),
    widths_st,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(queue_st, max_size=3, unique_by=lambda q: q.bucket), st.floats(0.0, 0.03), st.booleans(), st.booleans())
def test_one_decision(queues, now, settled, device_idle):
    now = max([now] + [q.oldest_s for q in queues])  # clips became ready in the past
    decision = next_encode_call(queues, now, settled=settled, device_idle=device_idle, max_wait_s=MAX_WAIT_S)

    def runnable(q: BucketQueue) -> bool:
        return q.queued > 0 and may_run(
            q.queued,
            max(q.widths),
            settled=settled,
            waited_s=now - q.oldest_s,
            max_wait_s=MAX_WAIT_S,
            device_idle=device_idle,
        )

    eligible = [q for q in queues if runnable(q)]
    if isinstance(decision, EncodeCall):
        [chosen] = [q for q in queues if q.bucket == decision.bucket]
        assert runnable(chosen)
        assert decision.width in chosen.widths and decision.width == call_width(chosen.queued, chosen.widths)
        assert decision.take == min(decision.width, chosen.queued) and decision.take >= 1
        assert (chosen.oldest_s, chosen.bucket) == min((q.oldest_s, q.bucket) for q in eligible)
    else:
        assert isinstance(decision, Wait) and not eligible
        waiting = [q.oldest_s for q in queues if q.queued > 0]
        if waiting and device_idle:
            assert decision.seconds == max(0.0, min(waiting) + MAX_WAIT_S - now)
        else:
            assert decision.seconds is None


arrival_st = st.tuples(st.sampled_from(BUCKETS), st.floats(0.0, 0.05))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(arrival_st, min_size=1, max_size=120),
    st.sampled_from([1, 4, 8, 32]),
    st.lists(st.floats(0.0005, 0.01), min_size=1, max_size=8),
)
def test_every_clip_is_served_once_in_order_and_none_starves(arrivals, widest, durations):
    widths = {b: power_of_two_widths(widest) for b in BUCKETS}
    arrivals = sorted((t, i, b) for i, (b, t) in enumerate(arrivals))  # clip i becomes ready at t in bucket b
    queues: dict[int, collections.deque[tuple[float, int]]] = {b: collections.deque() for b in BUCKETS}
    served: list[int] = []
    now, next_arrival, calls = 0.0, 0, 0
    while len(served) < len(arrivals):
        while next_arrival < len(arrivals) and arrivals[next_arrival][0] <= now:
            t, i, b = arrivals[next_arrival]
            queues[b].append((t, i))
            next_arrival += 1
        settled = next_arrival == len(arrivals)
        state = [BucketQueue(b, len(q), q[0][0], widths[b]) for b, q in queues.items() if q]
        decision = next_encode_call(state, now, settled=settled, device_idle=True, max_wait_s=MAX_WAIT_S)
        if isinstance(decision, Wait):
            upcoming = arrivals[next_arrival][0] if next_arrival < len(arrivals) else None
            times = [
                s for s in (None if decision.seconds is None else now + decision.seconds, upcoming) if s is not None
            ]
            assert times, "nothing may run, nothing will arrive, and clips are left"
            now = max(min(times), math.nextafter(now, math.inf))  # the clock moves on while the loop waits
            continue
        taken = [queues[decision.bucket].popleft() for _ in range(decision.take)]
        assert decision.take <= decision.width <= widest
        # no starvation: no clip that became ready before these (in any bucket) has waited max_wait_s unserved
        # while the device served younger ones
        oldest_taken = taken[0][0]
        for b, q in queues.items():
            if q and q[0][0] < oldest_taken:
                assert now - q[0][0] < MAX_WAIT_S and len(q) < max(widths[b]) and not settled, (b, q[0], taken[0])
        served += [i for _, i in taken]
        now += durations[calls % len(durations)]
        calls += 1
    assert sorted(served) == list(range(len(arrivals)))  # every clip once: none lost, none duplicated
    for b in BUCKETS:  # each bucket is served in arrival order
        order = [i for t, i, bb in arrivals if bb == b]
        assert [i for i in served if i in set(order)] == order


# ---------------------------------------------------------------------------------------------- prefill merges

ENTRIES = [(256, 1), (512, 1), (512, 2)]


@settings(max_examples=300, deadline=None)
@given(
    waits=st.lists(st.tuples(st.sampled_from(ENTRIES), st.floats(0.0, 3.0)), min_size=1, max_size=8),
    loaded=st.sampled_from([None, *ENTRIES]),
)
def test_the_next_prefill_merge(waits, loaded):
    """The oldest merge runs when it has waited the patience or is of the loaded entry; otherwise the oldest of
    the loaded entry, if any; otherwise the oldest."""
    now = 10.0
    waited = sorted(waits, key=lambda w: -w[1])  # oldest first: longest wait first
    waiting = [WaitingMerge(entry, now - seconds) for entry, seconds in waited]
    chosen = next_prefill_merge(waiting, loaded, now)
    same = [i for i, (entry, _) in enumerate(waited) if entry == loaded]
    if waited[0][1] >= PREFILL_PATIENCE_S or not same:
        assert chosen == 0
    else:
        assert chosen == same[0]


@settings(max_examples=100, deadline=None)
@given(
    arrivals=st.lists(st.tuples(st.sampled_from(ENTRIES), st.floats(0.0, 2.0)), min_size=1, max_size=30),
    duration=st.floats(0.01, 0.3),
)
def test_no_prefill_merge_starves(arrivals, duration):
    """Merges arriving at random times, each taking `duration`: every one runs once, and none waits longer
    than the patience plus the merges already waiting when it arrived (each may be run before it once)."""
    pending = sorted(((t, i, e) for i, (e, t) in enumerate(arrivals)), key=lambda a: a[:2])
    now, loaded, waiting, ran = 0.0, None, [], {}
    while pending or waiting:
        while pending and pending[0][0] <= now:
            t, i, e = pending.pop(0)
            waiting.append((t, i, e, len(waiting)))
        if not waiting:
            now = pending[0][0]
            continue
        pick = next_prefill_merge([WaitingMerge(e, t) for t, _, e, _ in waiting], loaded, now)
        t, i, loaded, ahead = waiting.pop(pick)
        assert i not in ran
        ran[i] = now
        assert now - t <= PREFILL_PATIENCE_S + (ahead + 1) * duration + 1e-9
        now += duration
    assert sorted(ran) == list(range(len(arrivals)))
