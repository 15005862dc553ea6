"""The continuous-batching policy (`serve/batching.py`), property-tested over random workloads.

A simulation drives the pure functions as the engine does (sequences arrive at random calls, finish after a
random number of tokens or are cancelled, slots are freed and reused) and checks after every call:

* no slot is held by two sequences, and a call's members have distinct slots;
* every decode call runs on an entry of the given widths, holding at most its width, on the narrowest
  entry that holds them;
* no starvation: a running sequence advances at least once in every ceil(n / widest) consecutive decode calls
  (n: the running sequences), and prefills and decode calls alternate while both have work;
* a prefill call holds the earliest admitted sequence and, in arrival order, the others of its prompt bucket
  (none left out while the widest prefill entry has room), on the narrowest prefill entry that holds them;
* slots go to waiting sequences in arrival order, lowest slot first; every sequence finishes.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemma3n_iree.serve.batching import (
    Admitted,
    BatchingError,
    DecodeCall,
    PrefillCall,
    Running,
    Waiting,
    assign_slots,
    entry_width,
    next_call,
    plan_decode,
    plan_prefill,
    prefill_bucket,
)


def test_entry_width_is_the_narrowest_that_holds():
    assert [entry_width(n, (1, 8, 32)) for n in (1, 2, 8, 9, 32)] == [1, 8, 8, 32, 32]
    with pytest.raises(BatchingError, match="fits no entry"):
        entry_width(33, (1, 8, 32))
    with pytest.raises(BatchingError, match="positive batch widths"):
        entry_width(1, ())


def test_slots_go_in_arrival_order_lowest_first():
    waiting = [Waiting(seq=7, arrival=3), Waiting(seq=2, arrival=1), Waiting(seq=9, arrival=2)]
    assert assign_slots(waiting, {5, 0}) == ((waiting[1], 0), (waiting[2], 5))
    assert assign_slots(waiting, ()) == ()


def test_decode_takes_the_longest_waiting_first():
    running = [Running(seq=i, slot=10 - i, position=5, arrival=i, last_step=s) for i, s in enumerate([4, 1, 1, 3])]
    call = plan_decode(running, (1, 2))
    assert {m.seq for m in call.members} == {1, 2} and call.width == 2
    assert call.slots == (8, 9)  # members in slot order
    with pytest.raises(BatchingError, match="share a slot"):
        plan_decode(running + [Running(seq=9, slot=10, position=1, arrival=9, last_step=0)], (4,))


def test_prefill_and_decode_alternate():
    admitted = [Admitted(seq=3, slot=1, arrival=5), Admitted(seq=4, slot=2, arrival=4)]
    running = [Running(seq=1, slot=0, position=9, arrival=0, last_step=0)]
    assert next_call(admitted, running, (1,), last_was_prefill=False) == PrefillCall(1, (admitted[1],))
    assert isinstance(next_call(admitted, running, (1,), last_was_prefill=True), DecodeCall)
    assert next_call(admitted, [], (1,), last_was_prefill=True) == PrefillCall(1, (admitted[1],))
    assert next_call(admitted, [], (1,), True, prefill_widths=(1, 4)) == PrefillCall(4, (admitted[1], admitted[0]))
    assert next_call([], [], (1,), last_was_prefill=False) is None


def test_a_prefill_call_takes_the_earliest_prompt_bucket():
    """Buckets 64 and 256: the earliest prompt (100 positions, bucket 256) goes with the later 200-position one,
    not with the 10-position ones; widths 1, 2, 4 put the two on the 2-prompt entry."""
    admitted = [
        Admitted(seq=1, slot=0, arrival=4, tokens=10),
        Admitted(seq=2, slot=1, arrival=0, tokens=100),
        Admitted(seq=3, slot=2, arrival=2, tokens=200),
        Admitted(seq=4, slot=3, arrival=1, tokens=30),
    ]
    call = plan_prefill(admitted, (1, 2, 4), (64, 256))
    assert call == PrefillCall(2, (admitted[1], admitted[2]))
    assert plan_prefill(admitted, (1,), (64, 256)).seqs == (2,)
    assert plan_prefill(admitted, (1, 4), ()).seqs == (2, 4, 3, 1)  # no buckets (the emulation): one group
    assert [prefill_bucket(n, (64, 256)) for n in (1, 64, 65, 256)] == [64, 64, 256, 256]
    with pytest.raises(BatchingError, match="fits no prefill entry"):
        prefill_bucket(257, (64, 256))
    with pytest.raises(BatchingError, match="no admitted"):
        plan_prefill([], (1,))


_workload = st.lists(
    st.tuples(st.integers(0, 40), st.integers(1, 12), st.booleans(), st.integers(1, 40)), min_size=1, max_size=40
)
_widths = st.sets(st.integers(1, 6), min_size=1, max_size=3)


@settings(max_examples=300, deadline=None)
@given(
    workload=_workload,
    slots=st.integers(1, 6),
    widths=_widths,
    prefill_widths=_widths.map(lambda w: w | {1}),
    buckets=st.sampled_from([(), (40,), (8, 40), (4, 16, 40)]),
)
def test_simulated_workloads_keep_every_invariant(workload, slots, widths, prefill_widths, buckets):
    """workload: (arrival call, tokens to generate, cancelled halfway, prompt length) per sequence."""
    waiting, admitted, running, done = [], [], [], set()
    remaining = {i: n for i, (_, n, _, _) in enumerate(workload)}
    cancel_at = {i: max(1, n // 2) for i, (_, n, cancelled, _) in enumerate(workload) if cancelled}
    produced = {i: 0 for i in remaining}
    free = set(range(slots))
    waits: dict[int, int] = {}  # decode calls since a running sequence last advanced
    most: dict[int, int] = {}  # the most sequences running at once since it last advanced
    last_was_prefill, calls, arrivals, arrival_order = False, 0, 0, []
    while len(done) < len(workload):
        assert calls < 10_000, "the workload never finishes"
        for i, (at, _, _, _) in enumerate(workload):
            if at == calls:
                waiting.append(Waiting(i, arrivals))
                arrivals += 1
        for w, slot in assign_slots(waiting, free):
            assert slot == min(free), "the lowest free slot goes first"
            assert all(w.arrival <= o.arrival for o in waiting), "slots go in arrival order"
            waiting.remove(w)
            free.discard(slot)
            admitted.append(Admitted(w.seq, slot, w.arrival, workload[w.seq][3]))
            arrival_order.append(w.seq)
        held = [a.slot for a in admitted] + [r.slot for r in running]
        assert len(held) == len(set(held)) and not set(held) & free and len(held) + len(free) == slots
        call = next_call(admitted, running, widths, last_was_prefill, prefill_widths, buckets)
        calls += 1
        if call is None:
            assert not admitted and not running
            continue
        if isinstance(call, PrefillCall):
            assert not last_was_prefill or not running, "a prefill waits for a decode call when both have work"
            first = min(admitted, key=lambda x: x.arrival)
            assert call.members[0] == first, "the earliest admitted sequence is in the next prefill call"
            bucket = prefill_bucket(first.tokens, buckets)
            same = sorted((a for a in admitted if prefill_bucket(a.tokens, buckets) == bucket), key=lambda a: a.arrival)
            assert list(call.members) == same[: max(prefill_widths)], "its bucket's prompts, in arrival order"
            assert call.width == entry_width(len(call.members), prefill_widths)
            for a in call.members:
                admitted.remove(a)
                running.append(Running(a.seq, a.slot, 10, a.arrival, calls))
                waits[a.seq], most[a.seq] = 0, len(running)
                produced[a.seq] += 1
            last_was_prefill = True
        else:
            assert call.width in widths and len(call.members) <= call.width
            assert call.width == entry_width(len(call.members), widths)
            assert len(set(call.slots)) == len(call.members)
            stepped = {m.seq for m in call.members}
            for r in running:
                most[r.seq] = max(most[r.seq], len(running))
                assert waits[r.seq] < math.ceil(most[r.seq] / max(widths)), "a running sequence starved"
                waits[r.seq], most[r.seq] = (0, len(running)) if r.seq in stepped else (waits[r.seq] + 1, most[r.seq])
            running = [
                Running(r.seq, r.slot, r.position + 1, r.arrival, calls) if r.seq in stepped else r for r in running
            ]
            for seq in stepped:
                produced[seq] += 1
            last_was_prefill = False
        for r in list(running):  # finished (stop id or max tokens) or cancelled: the slot is free at once
            if produced[r.seq] >= remaining[r.seq] or produced[r.seq] >= cancel_at.get(r.seq, 1 << 30):
                running.remove(r)
                free.add(r.slot)
                done.add(r.seq)
    assert arrival_order == sorted(arrival_order, key=lambda s: (workload[s][0], s))
