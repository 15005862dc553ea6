"""Continuous batching of greedy decode steps: pure policy over the decoder's slots and decode entries.

A decoder program has `slots` KV-cache slots, prefill entries taking 1 (and, where compiled, several) prompts
of a prompt bucket's length, and decode entries of fixed batch widths (e.g. 1, 8, 32).  A sequence (one prompt
being generated) takes a slot for its whole life: it is admitted, prefilled into its slot, then advanced one
token per decode call until it finishes or is cancelled, and its slot goes to the next waiting sequence at once
(a reused slot's stale rows are never visible, `contracts/kv_cache.py`).

The policy, as functions of plain values (the engine in `runtime/text/generate.py` applies it):

* `assign_slots`: waiting sequences take free slots in arrival order, lowest slot first;
* `entry_width`: a call of n sequences runs on the narrowest entry that holds n (padded rows are wasted
  work, and a decode step reads all weights once whatever its width, so one padded call beats several);
* `plan_decode`: the next decode call takes the sequences that have waited longest since their last step
  (then arrival order), as many as the widest entry holds: with n running sequences and widest entry W,
  every sequence advances at least once in every ceil(n / W) consecutive decode calls;
* `plan_prefill`: the next prefill call takes the earliest admitted sequence and, in arrival order, the others
  whose prompts share its prompt bucket (`prefill_bucket`: a longer prompt would make every row of the call
  longer; a shorter one would be padded to it), as many as the widest prefill entry holds, on the narrowest
  entry that holds them: 64 arriving windows cost a few calls, and the earliest is in the very next one;
* `next_call`: prefills and decode calls alternate while both have work (a new request's first token is
  never stuck behind a long decode phase, and running sequences never stall behind more than one prefill
  call); otherwise whichever has work runs.
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
    """A sequence holding a slot, not yet prefilled; its prompt has `tokens` positions."""

    seq: int
    slot: int
    arrival: int
    tokens: int = 1


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
    """One prefill call: `members`' prompts (arrival order) into their slots on the entry of `width` prompts."""

    width: int
    members: tuple[Admitted, ...]

    @property
    def seqs(self) -> tuple[int, ...]:
        return tuple(m.seq for m in self.members)


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


def entry_width(n: int, widths: Iterable[int], what: str = "decode") -> int:
    """The narrowest entry that holds n sequences."""
    ordered = _widths(widths)
    if not 1 <= n <= ordered[-1]:
        raise BatchingError(f"a {what} call of {n} sequence(s) fits no entry (batch widths {ordered})")
    return next(w for w in ordered if w >= n)


def prefill_bucket(tokens: int, buckets: Iterable[int]) -> int:
    """The prefill entry length a prompt of `tokens` positions runs at: the smallest bucket that holds it (a
    backend without buckets, e.g. the emulation, runs any length: every prompt shares bucket 0)."""
    ordered = sorted(set(buckets))
    if not ordered:
        return 0
    fitting = [b for b in ordered if b >= tokens]
    if not fitting:
        raise BatchingError(f"a prompt of {tokens} positions fits no prefill entry (prompt buckets {ordered})")
    return fitting[0]


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


def plan_prefill(
    admitted: Sequence[Admitted], prefill_widths: Iterable[int] = (1,), buckets: Iterable[int] = ()
) -> PrefillCall:
    """The next prefill call: the earliest admitted sequence, then those of its prompt bucket in arrival order, up
    to the widest prefill entry (module docstring)."""
    if not admitted:
        raise BatchingError("no admitted sequence to prefill")
    widest = _widths(prefill_widths)[-1]
    queue = sorted(admitted, key=lambda a: (a.arrival, a.seq))
    bucket = prefill_bucket(queue[0].tokens, buckets)
    members = tuple(a for a in queue if prefill_bucket(a.tokens, buckets) == bucket)[:widest]
    return PrefillCall(entry_width(len(members), prefill_widths, "prefill"), members)


def next_call(
    admitted: Sequence[Admitted],
    running: Sequence[Running],
    widths: Iterable[int],
    last_was_prefill: bool,
    prefill_widths: Iterable[int] = (1,),
    buckets: Iterable[int] = (),
) -> PrefillCall | DecodeCall | None:
    """The engine's next device call (None: nothing to do).  Prefills go in arrival order."""
    if admitted and (not running or not last_was_prefill):
        return plan_prefill(admitted, prefill_widths, buckets)
    if running:
        return plan_decode(running, widths)
    return None
