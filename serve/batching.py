"""Continuous batching of greedy decode steps: pure policy over the decoder's slots and decode entries.

A decoder program has `slots` KV-cache slots and decode entries of fixed batch widths (e.g. 1, 8, 32).  A
sequence (one prompt being generated) takes a slot for its whole life: it is admitted, prefilled into its
slot, then advanced one token per decode call until it finishes or is cancelled, and its slot goes to the
next waiting sequence at once (a reused slot's stale rows are never visible, `contracts/kv_cache.py`).

The policy, as functions of plain values (the engine in `runtime/generate.py` applies it):

* `assign_slots`: waiting sequences take free slots in arrival order, lowest slot first;
* `entry_width`: a call of n sequences runs on the narrowest entry that holds n (padded rows are wasted
  work, and a decode step reads all weights once whatever its width, so one padded call beats several);
* `plan_decode`: the next decode call takes the sequences that have waited longest since their last step
  (then arrival order), as many as the widest entry holds: with n running sequences and widest entry W,
  every sequence advances at least once in every ceil(n / W) consecutive decode calls;
* `next_call`: prefills and decode calls alternate while both have work (a new request's first token is
  never stuck behind a long decode phase, and running sequences never stall behind a burst of arrivals);
  otherwise whichever has work runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class BatchingError(ValueError):
    """Inputs the policy cannot serve (no decode entry, a batch wider than every entry)."""


@dataclass(frozen=True)
class Waiting:
    """A sequence waiting for a slot."""

    seq: int
    arrival: int  # admission order: smaller arrived earlier


@dataclass(frozen=True)
class Admitted:
    """A sequence holding a slot, not yet prefilled."""

    seq: int
    slot: int
    arrival: int


@dataclass(frozen=True)
class Running:
    """A prefilled sequence: its next token goes to `position` of `slot`."""

    seq: int
    slot: int
    position: int
    arrival: int
    last_step: int  # the engine's call counter when it last advanced (its prefill or a decode call)


@dataclass(frozen=True)
class PrefillCall:
    seq: int
    slot: int


@dataclass(frozen=True)
class DecodeCall:
    """One decode call: `members` step together on the entry of batch width `width` (>= len(members))."""

    width: int
    members: tuple[Running, ...]

    @property
    def slots(self) -> tuple[int, ...]:
        return tuple(m.slot for m in self.members)

    @property
    def positions(self) -> tuple[int, ...]:
        return tuple(m.position for m in self.members)


def _widths(widths: Iterable[int]) -> list[int]:
    out = sorted(set(int(w) for w in widths))
    if not out or out[0] < 1:
        raise BatchingError(f"decode entries need positive batch widths, got {sorted(set(widths))}")
    return out


def entry_width(n: int, widths: Iterable[int]) -> int:
    """The narrowest decode entry that holds n sequences."""
    ordered = _widths(widths)
    if not 1 <= n <= ordered[-1]:
        raise BatchingError(f"a decode call of {n} sequence(s) fits no entry (batch widths {ordered})")
    return next(w for w in ordered if w >= n)


def assign_slots(waiting: Sequence[Waiting], free_slots: Iterable[int]) -> tuple[tuple[Waiting, int], ...]:
    """(sequence, slot) for as many waiting sequences as there are free slots: arrival order, lowest slot first."""
    slots = sorted(set(free_slots))
    queue = sorted(waiting, key=lambda w: (w.arrival, w.seq))
    return tuple(zip(queue, slots))


def plan_decode(running: Sequence[Running], widths: Iterable[int]) -> DecodeCall:
    """The next decode call: the longest-waiting sequences (last step, then arrival), up to the widest entry."""
    if not running:
        raise BatchingError("no running sequence to decode")
    if len({r.slot for r in running}) != len(running):
        raise BatchingError(f"two running sequences share a slot: {sorted(r.slot for r in running)}")
    widest = _widths(widths)[-1]
    chosen = sorted(running, key=lambda r: (r.last_step, r.arrival, r.seq))[:widest]
    members = tuple(sorted(chosen, key=lambda r: r.slot))
    return DecodeCall(entry_width(len(members), widths), members)


def next_call(
    admitted: Sequence[Admitted], running: Sequence[Running], widths: Iterable[int], last_was_prefill: bool
) -> PrefillCall | DecodeCall | None:
    """The engine's next device call (None: nothing to do).  Prefills go in arrival order."""
    if admitted and (not running or not last_was_prefill):
        first = min(admitted, key=lambda a: (a.arrival, a.seq))
        return PrefillCall(first.seq, first.slot)
    if running:
        return plan_decode(running, widths)
    return None
