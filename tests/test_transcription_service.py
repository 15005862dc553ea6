"""serve/transcription.py's decode thread on a scripted decoder and prefill stage (no compiled program): windows of
many requests share decode calls, windows waiting together share prefill-stage and decoder prefill calls, each
request gets exactly what it gets alone, cancellation frees slots at once, a failing call fails only its
requests, the backlog bound, and /metrics' widths and times to first token; and the choice of the prefill stage's
entry for a group of windows (`stage_entry`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from synthetic_text import build_test_tokenizer

from gemma3n_iree.runtime.text.generate import SelectsOnHost
from gemma3n_iree.runtime.text.transcribe import stage_entries, stage_entry
from gemma3n_iree.serve.transcription import TranscriptionService

WORDS = [300, 301, 302, 303, 304, 305, 306]  # ids the test tokenizer knows
HIDDEN = 4


@dataclass
class Inputs:
    inputs_embeds: np.ndarray
    per_layer_inputs: np.ndarray


class FakePrefill:
    """The prefill stage's interface: a window's rows carry its clip's first feature, so a window's tokens
    depend on its audio."""

    def __init__(self, at_hand: tuple[tuple[int, int], ...] = ()) -> None:
        self.tokenizer = build_test_tokenizer()
        self.runs = 0
        self.groups: list[tuple[int, int, int | None]] = []  # run_many's (prompts, pad_to, capacity)
        self.at_hand = at_hand  # the (capacity, clips) entries a call can use as they are
        self.prepared: list[tuple[tuple[int, int], ...]] = []  # prepare's entries, call by call

    def entries_at_hand(self) -> tuple[tuple[int, int], ...]:
        return self.at_hand

    def expand(self, prompt: str, clips: list[int]) -> np.ndarray:
        return np.arange(5 + len(prompt) % 3)

    def capacity_for(self, length: int, clips: int) -> int:
        return 256

    def prepare(self, *entries: tuple[int, int]) -> None:
        self.prepared.append(entries)

    def run(self, ids: np.ndarray, features: np.ndarray, capacity: int | None = None) -> Inputs:
        self.runs += 1
        embeds = np.full((len(ids), HIDDEN), features[0, 0, 0], np.float32)
        return Inputs(embeds, np.zeros((len(ids), 1, 1), np.float32))

    def run_many(self, prompts, pad_to=None, capacity=None) -> list[Inputs]:
        self.groups.append((len(prompts), pad_to, capacity))
        return [self.run(ids, f) for ids, f in prompts]


class FakeDecoder(SelectsOnHost):
    """Tokens WORDS[(audio + position) % 7]; `gate` (when set) blocks each decode call until released."""

    def __init__(
        self, slots: int = 2, widths: tuple[int, ...] = (1, 2), prefill_widths: tuple[int, ...] = (1,)
    ) -> None:
        self.slots, self.capacity, self.decode_widths, self.max_prompt_tokens = slots, 64, widths, 32
        self.prefill_widths = prefill_widths
        self.prefills: list[tuple[int, ...]] = []  # the slots of each prefill call
        self.audio: dict[int, int] = {}
        self.widths_used: list[int] = []
        self.gate: threading.Semaphore | None = None
        self.fail_on: int | None = None  # an audio value whose decode raises

    def _row(self, audio: int, position: int) -> np.ndarray:
        row = np.zeros(400, np.float32)
        row[WORDS[(audio + position) % len(WORDS)]] = 1.0
        return row

    def prefill(self, slot, inputs_embeds, per_layer_inputs):
        self.audio[slot] = int(inputs_embeds[0, 0])
        return self._row(self.audio[slot], len(inputs_embeds))

    def prefill_greedy(self, slot, *args, **kwargs):
        self.prefills.append((slot,))
        return super().prefill_greedy(slot, *args, **kwargs)

    def prefill_batch_greedy(self, slots, *args, **kwargs):
        self.prefills.append(tuple(slots))
        return super().prefill_batch_greedy(slots, *args, **kwargs)

    def decode(self, slots, positions, token_ids):
        if self.gate is not None:
            self.gate.acquire()
        if self.fail_on is not None and any(self.audio[s] == self.fail_on for s in slots):
            raise RuntimeError("device lost")
        self.widths_used.append(len(slots))
        return np.stack([self._row(self.audio[s], p + 1) for s, p in zip(slots, positions)])


def features(*audio: int) -> np.ndarray:
    out = np.zeros((len(audio), 188, HIDDEN), np.float32)
    out[:, 0, 0] = audio
    return out


def run(service: TranscriptionService, name: str, audio: tuple[int, ...]):
    """Submit one request; returns (handle, event set when it is answered, result holder)."""
    done, result = threading.Event(), {}

    def on_done(transcript, error):
        result.update(transcript=transcript, error=error)
        done.set()

    duration = 30.0 * (len(audio) - 1) + 12.0
    handle = service.submit(name, features(*audio), duration, service.prompt_ids("x"), on_done=on_done)
    return handle, done, result


def wait_for(condition, what: str, seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def service():
    s = TranscriptionService(
        FakeDecoder(), FakePrefill(), model="m", max_new_tokens=6, stop_ids=frozenset(), max_waiting_windows=6
    )
    s.start()
    yield s
    s.stop()


def test_concurrent_requests_share_calls_and_equal_their_results_alone(service):
    alone = {}
    for audio in [(1,), (2, 3), (4,)]:
        _, done, result = run(service, "a", audio)
        assert done.wait(10) and result["error"] is None
        alone[audio] = [w.tokens for w in result["transcript"].windows]
    service.decoder.widths_used.clear()
    pending = [(audio, *run(service, "b", audio)[1:]) for audio in [(1,), (2, 3), (4,)] * 2]
    for audio, done, result in pending:
        assert done.wait(10) and result["error"] is None
        windows = result["transcript"].windows
        assert [w.tokens for w in windows] == alone[audio] and all(len(w.tokens) == 6 for w in windows)
        assert windows[-1].window.end_s == 30.0 * (len(audio) - 1) + 12.0
    assert service.decoder.widths_used.count(2) >= 5  # windows of different requests step together
    m = service.metrics()
    assert m["completed"] == 9 and m["slots_in_use"] == 0 and m["windows"] == 12 and m["tokens_generated"] == 72
    assert m["mean_batch_width"] > 1


def test_cancel_frees_the_slots_and_a_failing_call_fails_only_its_requests(service):
    decoder = service.decoder
    gate = decoder.gate = threading.Semaphore(0)
    handle, done, _ = run(service, "long", (1, 2, 3, 4))
    wait_for(lambda: service.metrics()["slots_in_use"] == 2, "two windows in the slots")
    service.cancel(handle)
    gate.release(1000)  # the decode call in flight completes; then the cancellation is applied
    wait_for(lambda: service.metrics()["cancelled"] == 1, "the cancellation")
    m = service.metrics()
    assert (m["completed"], m["slots_in_use"], m["windows_waiting"]) == (0, 0, 0)
    assert not done.is_set()  # a cancelled request is not answered: its client has gone
    decoder.gate, decoder.fail_on = None, 5
    _, bad_done, bad = run(service, "bad", (5,))
    _, good_done, good = run(service, "good", (6,))
    assert bad_done.wait(10) and isinstance(bad["error"], RuntimeError)
    assert good_done.wait(10) and good["error"] is None and len(good["transcript"].windows[0].tokens) == 6
    assert service.metrics()["failed"] == 1 and service.healthy


def test_a_full_backlog_is_refused_before_the_upload(service):
    decoder = service.decoder
    gate = decoder.gate = threading.Semaphore(0)
    assert service.busy() is None
    _, done, _ = run(service, "a", (1, 2, 3, 4, 5, 6, 7, 8))  # 2 windows in the slots, 6 waiting
    wait_for(lambda: service.metrics()["slots_in_use"] == 2, "two windows in the slots")
    assert "6 windows are waiting for the decoder (the limit is 6); retry later" == service.busy()
    gate.release(1000)
    assert done.wait(10) and service.busy() is None


def test_windows_waiting_together_share_prefill_calls():
    """A decoder with a 4-prompt prefill entry: a request of five windows over four slots has its first four
    windows through one prefill-stage call (padded to the decoder's widest prefill entry, in the stage's entry
    for four of the longest prompts) and one decoder prefill call, the fifth alone when a slot frees; every window
    gets the tokens it gets alone (one prompt per call), and /metrics says so. With the stage's one-window entry
    at hand as well (a prebuilt prefill artifact), the fifth window runs it rather than four windows' entry."""
    audio = (1, 2, 3, 4, 5)
    answers = {}
    for prefill_widths, at_hand in (((1,), ()), ((1, 4), ()), ((1, 4), ((256, 1), (256, 4), (512, 4)))):
        decoder = FakeDecoder(slots=4, widths=(1, 4), prefill_widths=prefill_widths)
        prefill = FakePrefill(at_hand)
        s = TranscriptionService(decoder, prefill, model="m", max_new_tokens=6, stop_ids=frozenset())
        s.start()
        try:
            _, done, result = run(s, "five", audio)
            assert done.wait(10) and result["error"] is None
        finally:
            s.stop()
        answers[prefill_widths, at_hand] = [w.tokens for w in result["transcript"].windows]
        m = s.metrics()
        assert m["time_to_first_token"]["count"] == 1 and m["prefill_widths"] == list(prefill_widths)
        # the stage's entries compiled before the decode thread needs them: one window's, and with a pack the
        # pack's and one window's as one program
        assert prefill.prepared == [((256, 4), (256, 1))] if s.stage_pack else [((256, 1),)]
        if prefill_widths == (1,):
            assert s.stage_pack is None and not s.prefill.groups and m["prefill_stage_calls"] == 5
            assert decoder.prefills == [(0,), (1,), (2,), (3,), (0,)] and m["mean_prefill_width"] == 1
        elif at_hand:
            assert s.stage_pack == (4, 256) and prefill.groups == [(4, 4, 256)] and prefill.runs == 5
            assert decoder.prefills == [(0, 1, 2, 3), (0,)] and m["prefill_stage_calls"] == 2
        else:
            assert s.stage_pack == (4, 256) and s.prefill.groups == [(4, 4, 256), (1, 4, 256)]
            assert decoder.prefills == [(0, 1, 2, 3), (0,)] and m["mean_prefill_width"] == 2.5
            assert (m["prefill_stage_calls"], m["prefill_stage_windows_per_call"]) == (2, 4)
    first, *others = answers.values()
    assert all(a == first for a in others) and all(len(t) == 6 for t in first)


@given(
    lengths=st.lists(st.integers(1, 300), min_size=1, max_size=8),
    entries=st.sets(st.tuples(st.sampled_from([64, 256, 512, 1024, 2048]), st.integers(1, 8)), max_size=8),
)
def test_a_group_runs_the_cheapest_entry_that_holds_it(lengths, entries):
    """`stage_entry`: the chosen entry holds the group (at least its windows; its capacity at least their tokens
    with the padding copies of the last window); no entry of a smaller capacity holds it, nor one of the same
    capacity and fewer clips; None only when no entry holds it."""

    def holds(entry: tuple[int, int]) -> bool:
        capacity, clips = entry
        return clips >= len(lengths) and capacity >= sum(lengths) + (clips - len(lengths)) * lengths[-1]

    chosen = stage_entry(lengths, entries)
    holding = [e for e in entries if holds(e)]
    if chosen is None:
        assert not holding
        return
    assert chosen in entries and holds(chosen)
    assert all(e[0] >= chosen[0] for e in holding)
    assert all(e[1] >= chosen[1] for e in holding if e[0] == chosen[0])


def test_the_stage_entries_of_a_group_and_of_one_window():
    """`stage_entries`: the pack's entry and one window's (of the decoder's longest prompt), built as one program;
    the pack's alone where no one-window entry holds that prompt (a prebuilt artifact without one)."""
    from gemma3n_iree.runtime.text.tokens import ContextCapacityError

    class Stage(FakePrefill):
        def __init__(self, one_window: bool) -> None:
            super().__init__()
            self.one_window = one_window

        def capacity_for(self, length: int, clips: int) -> int:
            if clips == 1 and not self.one_window:
                raise ContextCapacityError(f"no entry for {clips} clip(s)")
            return 64 if length <= 64 else 512

    decoder = FakeDecoder(slots=4, prefill_widths=(1, 4))  # max_prompt_tokens 32
    assert stage_entries(decoder, Stage(True), (4, 512)) == ((512, 4), (64, 1))
    assert stage_entries(decoder, Stage(False), (4, 512)) == ((512, 4),)
