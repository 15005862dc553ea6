"""Greedy generation (`runtime/text/generate.py`) over the decoder interface, and its emulation backend.

* The engine's mechanics on a scripted backend (cheap): stop ids end a sequence with the stop token kept,
  `max_new_tokens` ends it, streamed text equals the decoded tokens, slots are reused, calls respect the
  decode widths, cancellation frees the slot at once, and bad requests and bad logits are refused with a
  message naming what is wrong.
* On the contract's emulation (`runtime/text/emulated_decoder.py`, the tiny decoder, mlx-cuda-v1): the engine's
  tokens equal the contract's own greedy loop (`contracts/decoder.greedy`), and sequences submitted at
  different times into fewer slots than sequences, batched as they arrive and finish, give exactly the
  tokens and logits each gives alone.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from synthetic_text import add_random_decoder_tensors, build_test_tokenizer, write_test_tokenizer

from gemma3n_iree.contracts import MLX_CUDA_V1
from gemma3n_iree.contracts import decoder as DEC
from gemma3n_iree.contracts.kv_cache import KVCache, KVCacheLayout
from gemma3n_iree.model.decoder_config import builtin_decoder_config
from gemma3n_iree.runtime.text.emulated_decoder import EmulatedDecoder
from gemma3n_iree.runtime.text.generate import (
    CANCELLED,
    ERROR,
    LENGTH,
    STOP,
    GenerationEngine,
    GenerationError,
    GenerationRequest,
    SelectsOnHost,
    generate,
    greedy_token,
    host_selection,
    stop_token_ids,
    token_logprob,
)

CFG = builtin_decoder_config("tiny")
TOKENIZER = build_test_tokenizer()
WORDS = [300, 301, 302, 303, 304, 305, 306]  # ids the test tokenizer knows


class ScriptedBackend(SelectsOnHost):
    """Logits that pick WORDS[(slot + position) % 7]; records every call (its selections are the host's)."""

    def __init__(
        self,
        slots: int = 2,
        capacity: int = 64,
        widths: tuple[int, ...] = (1, 2),
        vocab: int = 400,
        max_prompt_tokens: int = 32,
    ) -> None:
        self.slots, self.capacity, self.decode_widths, self.vocab = slots, capacity, widths, vocab
        self.max_prompt_tokens = max_prompt_tokens
        self.calls: list[tuple] = []

    def _row(self, slot: int, position: int) -> np.ndarray:
        row = np.zeros(self.vocab, np.float32)
        row[WORDS[(slot + position) % len(WORDS)]] = 1.0
        return row

    def prefill(self, slot, inputs_embeds, per_layer_inputs):
        self.calls.append(("prefill", slot, len(inputs_embeds)))
        return self._row(slot, len(inputs_embeds))

    def decode(self, slots, positions, token_ids):
        assert len(slots) <= max(self.decode_widths)
        self.calls.append(("decode", tuple(slots), tuple(positions), tuple(token_ids)))
        return np.stack([self._row(s, p + 1) for s, p in zip(slots, positions)])


def request(length: int = 5, new: int = 4, stop=frozenset(), logprobs: bool = False, top: int = 0) -> GenerationRequest:
    return GenerationRequest(
        np.zeros((length, 8), np.float32), np.zeros((length, 2, 4), np.float32), new, frozenset(stop), logprobs, top
    )


# ---------------------------------------------------------------------------------------------- mechanics
def test_tokens_text_and_length_stop():
    backend = ScriptedBackend()
    events = list(generate(backend, TOKENIZER, request(length=5, new=4)))
    tokens = [e.token for e in events]
    assert tokens == [WORDS[(0 + p) % 7] for p in range(5, 9)]
    assert [e.finish_reason for e in events] == [None, None, None, LENGTH]
    assert "".join(e.text for e in events) == TOKENIZER.decode(tokens)
    # positions fed: the prompt's length on, each token at the position after the previous one
    assert backend.calls[1:] == [("decode", (0,), (5 + i,), (tokens[i],)) for i in range(3)]


def test_a_stop_id_ends_the_sequence_and_is_kept():
    events = list(generate(ScriptedBackend(), TOKENIZER, request(new=10, stop={WORDS[(5 + 2) % 7]})))
    assert [e.token for e in events][-1] == WORDS[0] and events[-1].finish_reason == STOP and len(events) == 3


def test_slots_are_reused_and_calls_respect_the_widths():
    backend = ScriptedBackend(slots=2, widths=(1, 2))
    engine = GenerationEngine(backend, TOKENIZER)
    seqs = [engine.submit(request(length=3 + i, new=2 + i)) for i in range(5)]
    events = list(engine.run())
    assert all(engine.result(s).finish_reason == LENGTH for s in seqs)
    assert [len(engine.result(s).tokens) for s in seqs] == [2, 3, 4, 5, 6]
    assert len(events) == 2 + 3 + 4 + 5 + 6
    decodes = [c for c in backend.calls if c[0] == "decode"]
    assert all(len(c[1]) <= 2 and len(set(c[1])) == len(c[1]) for c in decodes)
    assert {c[1] for c in backend.calls if c[0] == "prefill"} == {0, 1}  # five sequences through two slots
    for s in seqs:  # each sequence's tokens follow its own slot and positions, whatever else ran with it
        r = engine.release(s)
        assert r.first_token_at is not None and r.finished_at >= r.first_token_at >= r.submitted_at


def test_cancel_frees_the_slot_for_the_next_sequence():
    backend = ScriptedBackend(slots=1, widths=(1,))
    engine = GenerationEngine(backend, TOKENIZER)
    first, second = engine.submit(request(new=50)), engine.submit(request(new=2))
    engine.step()  # first's prefill
    engine.step()  # a decode call of first; second is waiting for the slot
    engine.cancel(first)
    assert engine.result(first).finish_reason == CANCELLED and len(engine.result(first).tokens) == 2
    list(engine.run())
    assert engine.result(second).finish_reason == LENGTH
    assert [c[1] for c in backend.calls if c[0] == "prefill"] == [0, 0]
    engine.cancel(second)  # finished: nothing happens
    assert engine.result(second).finish_reason == LENGTH


def test_a_failing_call_ends_its_sequences_and_frees_their_slots():
    class Failing(ScriptedBackend):
        fail = True

        def decode(self, slots, positions, token_ids):
            if self.fail:
                self.fail = False
                raise RuntimeError("device lost")
            return super().decode(slots, positions, token_ids)

    backend = Failing(slots=1, widths=(1,))
    engine = GenerationEngine(backend, TOKENIZER)
    first, second = engine.submit(request(new=3)), engine.submit(request(new=2))
    engine.step()
    with pytest.raises(RuntimeError, match="device lost"):
        engine.step()
    assert engine.result(first).finish_reason == ERROR and len(engine.result(first).tokens) == 1
    list(engine.run())  # the slot went to the next sequence
    assert engine.result(second).finish_reason == LENGTH


def test_logprobs_are_a_log_softmax():
    events = list(generate(ScriptedBackend(vocab=400), TOKENIZER, request(new=2, logprobs=True)))
    want = 1.0 - np.log(np.e + 399.0)
    assert all(abs(e.logprob - want) < 1e-12 for e in events)
    engine = GenerationEngine(ScriptedBackend(vocab=400), TOKENIZER)
    seq = engine.submit(request(new=2, stop={WORDS[5], 0}, logprobs=True))  # the first token is WORDS[5]
    list(engine.run())
    assert abs(engine.result(seq).first_stop_probability - (np.e + 1.0) / (np.e + 399.0)) < 1e-12
    assert abs(token_logprob(np.array([0.0, np.log(3.0)]), 1) - np.log(0.75)) < 1e-15


class SelectingBackend(ScriptedBackend):
    """A backend whose logits calls fail: the engine must go through the selection calls (recorded)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.selections: list[tuple[str, int, bool]] = []

    def prefill(self, slot, inputs_embeds, per_layer_inputs):
        raise AssertionError("the engine read a prefill's logits")

    def decode(self, slots, positions, token_ids):
        raise AssertionError("the engine read a decode call's logits")

    def prefill_greedy(self, slot, inputs_embeds, per_layer_inputs, top_k=0, logits=False, sample=None):
        self.selections.append(("prefill", top_k, logits))
        return host_selection(self._row(slot, len(inputs_embeds))[None], top_k, logits, sample)

    def decode_greedy(self, slots, positions, token_ids, top_k=0, logits=False, sample=None):
        self.selections.append(("decode", top_k, logits))
        rows = np.stack([self._row(s, p + 1) for s, p in zip(slots, positions)])
        return host_selection(rows, top_k, logits, sample)


def test_the_engine_reads_selections_not_logits():
    """Without log probabilities no call returns logits; with them only the first step's (its stop
    probability); top log probabilities come with the events (a decode call asks for the most any of its
    sequences wants)."""
    backend = SelectingBackend(slots=2, widths=(1, 2))
    engine = GenerationEngine(backend, TOKENIZER)
    plain = engine.submit(request(new=3))
    ranked = engine.submit(request(length=6, new=3, logprobs=True, top=3))
    events = list(engine.run())
    assert ("prefill", 0, False) in backend.selections and ("prefill", 3, True) in backend.selections
    decodes = {c for c in backend.selections if c[0] == "decode"}
    assert ("decode", 3, False) in decodes and decodes <= {("decode", 3, False), ("decode", 0, False)}
    assert engine.result(plain).top_logprobs is None and engine.result(ranked).first_stop_probability == 0.0
    for e in events:
        if e.seq == ranked:
            assert e.top_logprobs[0] == (e.token, e.logprob) and len(e.top_logprobs) == 3
            assert [t for t, _ in e.top_logprobs[1:]] == [0, 1]  # the tied zeros, lowest index first
        else:
            assert e.top_logprobs is None and e.logprob is None
    assert engine.result(ranked).top_logprobs == [e.top_logprobs for e in events if e.seq == ranked]
    with pytest.raises(GenerationError, match=r"top_logprobs must be in \[0, 20\] for this decoder, got 21"):
        engine.submit(request(top=21))


def test_non_finite_logits_are_an_error_through_the_selection():
    class Broken(ScriptedBackend):
        def _row(self, slot, position):
            row = super()._row(slot, position)
            row[[7, 3]] = np.nan
            return row

    with pytest.raises(GenerationError, match=r"returned 2 non-finite logit\(s\) \(first at token 3\)"):
        list(generate(Broken(), TOKENIZER, request()))


def test_a_negative_token_id_is_an_error_and_never_reaches_the_tokenizer():
    """What a broken device selection looked like on the GPU (every id -1): an error naming the id, and the
    sequence can still be cancelled (its detokenizer never saw the id)."""
    import dataclasses

    class Broken(ScriptedBackend):
        def prefill_batch_greedy(self, *args, **kwargs):
            return self._broken(super().prefill_batch_greedy(*args, **kwargs))

        def prefill_greedy(self, *args, **kwargs):
            return self._broken(super().prefill_greedy(*args, **kwargs))

        def _broken(self, selection):
            return dataclasses.replace(selection, token=np.full_like(selection.token, -1))

    engine = GenerationEngine(Broken(), TOKENIZER)
    seq = engine.submit(request())
    with pytest.raises(GenerationError, match="token selection returned id -1 for row 0: not a token id"):
        engine.step()
    engine.cancel(seq)
    assert engine.result(seq).tokens == [] and engine.result(seq).finish_reason == "cancelled"


def test_refusals_name_the_problem():
    engine = GenerationEngine(ScriptedBackend(capacity=16, max_prompt_tokens=12), TOKENIZER)
    with pytest.raises(
        GenerationError,
        match="a prompt of 13 tokens is longer than the decoder's longest prompt "
        r"entry \(12 tokens\)",
    ):
        engine.submit(request(13, 1))
    with pytest.raises(GenerationError, match="needs 17 positions, more than the decoder's context capacity of 16"):
        engine.submit(request(length=10, new=8))
    engine.submit(request(length=10, new=7))
    with pytest.raises(GenerationError, match="max_new_tokens must be at least 1"):
        engine.submit(request(new=0))
    with pytest.raises(GenerationError, match="same prompt"):
        engine.submit(GenerationRequest(np.zeros((3, 8)), np.zeros((2, 2, 4)), 1, frozenset()))
    with pytest.raises(GenerationError, match="non-finite logit"):
        greedy_token(np.array([0.0, np.nan, 1.0]))
    assert greedy_token(np.array([1.0, 3.0, 3.0])) == 1  # first index on ties


def test_stop_ids_come_from_the_checkpoint(tmp_path):
    write_test_tokenizer(tmp_path)
    assert stop_token_ids(tmp_path, (1,), None) == {1}
    assert stop_token_ids(tmp_path, (1,), TOKENIZER) == {1, 106}  # <end_of_turn>
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": [1, 106, 7]}))
    assert stop_token_ids(tmp_path, (1,), None) == {1, 7, 106}
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": "x"}))
    with pytest.raises(GenerationError, match="generation_config.json: eos_token_id must be"):
        stop_token_ids(tmp_path, (1,), None)


# ---------------------------------------------------------------------------------------------- on the emulation
@pytest.fixture(scope="module")
def emulated(tmp_path_factory):
    directory = add_random_decoder_tensors(tmp_path_factory.mktemp("decoder"), CFG, seed=3)
    return EmulatedDecoder(directory, MLX_CUDA_V1.name, slots=3, capacity=64, decode_widths=(1, 2))


def prompt_inputs(backend: EmulatedDecoder, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    return DEC.text_inputs(backend.contract, backend.cfg, backend.weights, ids)


PROMPTS = [[2, 105, 2364, 107, 300 + i, 301, 302 + i, 106, 107, 105, 4368, 107][: 8 + i % 4] for i in range(6)]


def test_engine_equals_the_contracts_greedy_loop(emulated):
    embeds, pli = prompt_inputs(emulated, PROMPTS[0])
    cache = KVCache(KVCacheLayout.for_config(emulated.cfg, emulated.contract, slots=1, capacity=64))
    want, _ = DEC.greedy(emulated.contract, emulated.cfg, emulated.weights, cache, 0, embeds, pli, 12, stop_ids=())
    got = [e.token for e in generate(emulated, TOKENIZER, GenerationRequest(embeds, pli, 12, frozenset()))]
    assert got == want


@pytest.mark.parametrize("prefill_widths", [(1,), (1, 3)])
def test_continuous_batching_equals_each_sequence_alone(emulated, prefill_widths, monkeypatch):
    """Six sequences, three slots, decode widths 1 and 2; two arrive while others run. With a 3-prompt prefill
    entry the first three prompts are prefilled in one call."""
    monkeypatch.setattr(emulated, "prefill_widths", prefill_widths)
    batched: list[tuple[int, ...]] = []
    prefill_batch = emulated.prefill_batch_greedy
    monkeypatch.setattr(
        emulated,
        "prefill_batch_greedy",
        lambda slots, *a, **k: batched.append(tuple(slots)) or prefill_batch(slots, *a, **k),
    )
    requests = [
        GenerationRequest(*prompt_inputs(emulated, p), 3 + i % 3, frozenset(), logprobs=True)
        for i, p in enumerate(PROMPTS)
    ]
    alone = []
    for r in requests:
        events = list(generate(emulated, TOKENIZER, r))
        alone.append(([e.token for e in events], [e.logprob for e in events]))
    engine = GenerationEngine(emulated, TOKENIZER)
    seqs = [engine.submit(r) for r in requests[:4]]
    for _ in range(4):
        engine.step()
    seqs += [engine.submit(r) for r in requests[4:]]
    list(engine.run())
    for seq, (tokens, logprobs) in zip(seqs, alone):
        result = engine.result(seq)
        assert result.tokens == tokens and result.logprobs == logprobs
    assert batched[:1] == ([(0, 1, 2)] if len(prefill_widths) > 1 else [])
