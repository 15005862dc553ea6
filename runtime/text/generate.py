"""Generation over a decoder program: prompt rows in, tokens and text out, many sequences at once.

The decoder is anything with the `DecoderBackend` interface: the compiled decoder program's session, or
`runtime.text.emulated_decoder.EmulatedDecoder` (the numeric contract's emulation).  A backend owns a KV cache of
`slots` sequences of `capacity` positions and decode entries of batch widths `decode_widths`:

* `prefill(slot, inputs_embeds [S, D], per_layer_inputs [S, L, P]) -> logits [V]` runs a prompt (the prefill
  stage's outputs, positions 0..S-1) into a slot and returns its last position's logits;
* `decode(slots, positions, token_ids) -> logits [B, V]` feeds one token to each of B sequences, sequence b at
  `positions[b]` of `slots[b]` (the host gathers the tokens' table rows);
* `prefill_batch_greedy(slots, inputs_embeds [...], per_layer_inputs [...])` prefills several prompts, each
  into its own slot, in one call (up to the widest of `prefill_widths`; prompts of one of `prompt_buckets`):
  each prompt's selection is the one it gets alone;
* `prefill_greedy(...)` / `decode_greedy(...)` are the same calls returning the token selection instead
  (`decoder_ops.TokenSelection`: each row's greedy token, its log-probability and non-finite count, the top
  `top_k <= backend.top_k` tokens, when asked the logits, and with `sample=SampleRows(...)` each sampling row's
  drawn token, `contracts/sampling.py`): a compiled program computes it on the device, so only that crosses to
  the host. `SelectsOnHost` gives them to a backend that computes logits only.

`GenerationEngine` runs sequences (greedy, or sampled where a request has `sampling`) over one backend with
continuous batching (`serve/batching.py`): sequences are submitted at any time, take a free slot, are prefilled
(several at once where the backend has batched prefill entries), then advance one token per decode call
together with whatever else is running, and free their slot when they end.  A greedy token is the first index
of the largest logit (transformers' greedy); a sampled one is drawn with the request's parameters and counter =
the token's index, so it depends on the seed and the sequence only, never on the call's other rows.  A sequence
ends after emitting a stop id (the token is kept, as `generate` keeps it) or `max_new_tokens` tokens.  The
engine reads selections, never logits, but for the first step's logits of a request with log probabilities (its
stop probability): tokens, log probabilities and top log probabilities are the backend's.  Each token's newly
final text comes with it (`runtime.text.detokenize.TextStream`), so callers stream text as it is generated.
`generate` is the one-sequence
form.  Nothing here depends on how the backend computes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ...contracts.decoder_ops import TokenSelection
from ...contracts.sampling import SampleRows, SamplingParams
from ...serve.batching import Admitted, DecodeCall, Running, Waiting, assign_slots, next_call
from .detokenize import TextStream

#: Why a sequence ended: a stop id was emitted / `max_new_tokens` were emitted / the caller cancelled / the
#: backend raised during its call (the exception propagates to the caller of `step`).
STOP, LENGTH, CANCELLED, ERROR = "stop", "length", "cancelled", "error"
END_OF_TURN = "<end_of_turn>"
GENERATION_CONFIG = "generation_config.json"


class DecoderBackend(Protocol):
    """A decoder program with a resident KV cache (module docstring)."""

    slots: int
    capacity: int
    decode_widths: tuple[int, ...]
    max_prompt_tokens: int  # the longest prompt `prefill` takes
    top_k: int  # the most top tokens a selection returns
    prefill_widths: tuple[int, ...]  # how many prompts one prefill call takes (1 and the batched entries')
    prompt_buckets: tuple[int, ...]  # the prefill entries' lengths (empty: any length)
    samples: bool  # whether its selections draw sampled tokens (`sample=`)

    def prefill(self, slot: int, inputs_embeds: np.ndarray, per_layer_inputs: np.ndarray) -> np.ndarray: ...

    def decode(self, slots: Sequence[int], positions: Sequence[int], token_ids: Sequence[int]) -> np.ndarray: ...

    def prefill_greedy(
        self,
        slot: int,
        inputs_embeds: np.ndarray,
        per_layer_inputs: np.ndarray,
        top_k: int = 0,
        logits: bool = False,
        sample: SampleRows | None = None,
    ) -> TokenSelection: ...

    def decode_greedy(
        self,
        slots: Sequence[int],
        positions: Sequence[int],
        token_ids: Sequence[int],
        top_k: int = 0,
        logits: bool = False,
        sample: SampleRows | None = None,
    ) -> TokenSelection: ...

    def prefill_batch_greedy(
        self,
        slots: Sequence[int],
        inputs_embeds: Sequence[np.ndarray],
        per_layer_inputs: Sequence[np.ndarray],
        top_k: int = 0,
        logits: bool = False,
        sample: SampleRows | None = None,
    ) -> TokenSelection: ...

    def close(self) -> None: ...  # release what it holds on a device


class GenerationError(ValueError):
    """A request the decoder cannot serve as given, or logits it cannot pick a token from."""


# ---------------------------------------------------------------------------------------------- pure pieces
def greedy_token(logits: np.ndarray) -> int:
    """The first index of the largest logit; non-finite logits are an error, not a token."""
    logits = np.asarray(logits)
    if not np.isfinite(logits).all():
        bad = np.flatnonzero(~np.isfinite(logits))
        raise GenerationError(f"the decoder returned {bad.size} non-finite logit(s) (first at token {int(bad[0])})")
    return int(np.argmax(logits))


def selected_token(selection: TokenSelection, row: int, sampled: bool = False) -> int:
    """Row `row`'s greedy token (its drawn one with `sampled`); a row with non-finite logits is an error (the
    same one `greedy_token` raises), and so is a negative id (a device selection gone wrong must not reach the
    tokenizer or a sequence's ids)."""
    bad = int(selection.nonfinite[row])
    if bad:
        raise GenerationError(
            f"the decoder returned {bad} non-finite logit(s) (first at token {int(selection.first_nonfinite[row])})"
        )
    if sampled and selection.sampled is None:
        raise GenerationError(f"row {row} samples but the decoder's selection has no sampled tokens")
    token = int((selection.sampled if sampled else selection.token)[row])  # type: ignore[index]
    if token < 0:
        raise GenerationError(f"the decoder's token selection returned id {token} for row {row}: not a token id")
    return token


def host_selection(
    logits: np.ndarray, top_k: int = 0, keep_logits: bool = False, sample: SampleRows | None = None
) -> TokenSelection:
    """The token selection of logits [R, V] on the host: `greedy_token`'s token (the first index of the largest
    logit), `token_logprob`'s float64 log-softmax, the top k by logit descending and index ascending, and with
    `sample` the contract's draws (`contracts/sampling.py`) and their log-softmax."""
    x = np.asarray(logits)
    finite = np.isfinite(x)
    vocab = x.shape[-1]
    first_bad = np.where(finite, vocab, np.arange(vocab)).min(axis=-1)
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        top = x64.max(axis=-1, keepdims=True)
        log_softmax = x64 - top - np.log(np.exp(x64 - top).sum(axis=-1, keepdims=True))
    token = np.argmax(x, axis=-1).astype(np.int32)
    top_tokens = top_logprobs = None
    if top_k:
        top_tokens = np.stack([np.lexsort((np.arange(vocab), -row))[:top_k] for row in x64]).astype(np.int32)
        top_logprobs = np.take_along_axis(log_softmax, top_tokens, axis=-1)
    sampled = sampled_logprob = None
    if sample is not None:
        sampled = sample.draw(x).token
        sampled_logprob = np.take_along_axis(log_softmax, sampled[:, None], axis=-1)[:, 0]
    return TokenSelection(
        token,
        np.take_along_axis(log_softmax, token[:, None], axis=-1)[:, 0],
        (~finite).sum(axis=-1).astype(np.int32),
        first_bad.astype(np.int32),
        top_tokens,
        top_logprobs,
        x if keep_logits else None,
        sampled,
        sampled_logprob,
    )


class SelectsOnHost:
    """`prefill_greedy` and `decode_greedy` for a backend whose calls return logits: `host_selection` of them
    (float64 log probabilities, as `token_logprob`; the contract's sampler). The logits have crossed to the host
    already. One prompt per prefill call, of any length."""

    top_k: int = 20
    prefill_widths: tuple[int, ...] = (1,)
    prompt_buckets: tuple[int, ...] = ()
    samples: bool = True

    def prefill_batch_greedy(
        self,
        slots: Sequence[int],
        inputs_embeds: Sequence[np.ndarray],
        per_layer_inputs: Sequence[np.ndarray],
        top_k: int = 0,
        logits: bool = False,
        sample: SampleRows | None = None,
    ) -> TokenSelection:
        rows = [self.prefill(*args) for args in zip(slots, inputs_embeds, per_layer_inputs)]  # type: ignore[attr-defined]
        return host_selection(np.stack(rows), top_k, logits, sample)

    def prefill_greedy(
        self,
        slot: int,
        inputs_embeds: np.ndarray,
        per_layer_inputs: np.ndarray,
        top_k: int = 0,
        logits: bool = False,
        sample: SampleRows | None = None,
    ) -> TokenSelection:
        row = np.asarray(self.prefill(slot, inputs_embeds, per_layer_inputs))  # type: ignore[attr-defined]
        return host_selection(row[None], top_k, logits, sample)

    def decode_greedy(
        self,
        slots: Sequence[int],
        positions: Sequence[int],
        token_ids: Sequence[int],
        top_k: int = 0,
        logits: bool = False,
        sample: SampleRows | None = None,
    ) -> TokenSelection:
        rows = np.asarray(self.decode(slots, positions, token_ids))  # type: ignore[attr-defined]
        return host_selection(rows, top_k, logits, sample)


def token_logprob(logits: np.ndarray, token: int) -> float:
    """log softmax(logits)[token], in float64."""
    x = np.asarray(logits, np.float64)
    top = x.max()
    return float(x[token] - top - np.log(np.exp(x - top).sum()))


def probability_of(logits: np.ndarray, tokens: Sequence[int]) -> float:
    """softmax(logits) summed over `tokens`, in float64."""
    x = np.asarray(logits, np.float64)
    weights = np.exp(x - x.max())
    return float(weights[list(tokens)].sum() / weights.sum()) if len(tokens) else 0.0


def stop_token_ids(
    checkpoint: str | Path, eos_token_ids: Sequence[int], tokenizer: Any | None = None
) -> frozenset[int]:
    """The ids that end a sequence: `config.json`'s `eos_token_id` (`eos_token_ids`, parsed by DecoderConfig),
    `generation_config.json`'s when the checkpoint has one, and the tokenizer's `<end_of_turn>` (the chat format
    ends the model's turn with it; the instruction-tuned checkpoints list it, 106, among their eos ids)."""
    ids = {int(i) for i in eos_token_ids}
    path = Path(checkpoint) / GENERATION_CONFIG
    if path.is_file():
        try:
            value = json.loads(path.read_text()).get("eos_token_id")
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise GenerationError(f"{path}: cannot read: {exc}") from None
        values = value if isinstance(value, list) else [] if value is None else [value]
        if any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise GenerationError(f"{path}: eos_token_id must be an integer or a list of integers, got {value!r}")
        ids.update(values)
    if tokenizer is not None and tokenizer.token_to_id(END_OF_TURN) is not None:
        ids.add(int(tokenizer.token_to_id(END_OF_TURN)))
    return frozenset(ids)


# ---------------------------------------------------------------------------------------------- requests, events
@dataclass(frozen=True)
class GenerationRequest:
    """One prompt to continue (greedily unless `sampling`): the prefill stage's two outputs for it, and when to
    stop."""

    inputs_embeds: np.ndarray  # float32 [S, hidden]
    per_layer_inputs: np.ndarray  # float32 [S, layers, hidden_per_layer]
    max_new_tokens: int
    stop_ids: frozenset[int]
    logprobs: bool = False  # also report each token's log probability (a log-softmax over the vocabulary)
    #                         and the first step's probability of stopping
    top_logprobs: int = 0  # also report each step's most likely tokens and their log probabilities
    #: draw each token with these (contracts/sampling.py, on the device; token i with counter i); None: greedy
    sampling: SamplingParams | None = None

    @property
    def prompt_tokens(self) -> int:
        return len(self.inputs_embeds)


@dataclass(frozen=True)
class TokenEvent:
    """One generated token of sequence `seq` (the `index`-th), the text it made final, and why the sequence
    ended when this is its last token."""

    seq: int
    index: int
    token: int
    text: str
    logprob: float | None = None
    finish_reason: str | None = None
    #: with top_logprobs: the step's most likely (token, log probability), most likely first
    top_logprobs: tuple[tuple[int, float], ...] | None = None


@dataclass
class Generation:
    """What a sequence produced.  Times are seconds on the engine's clock."""

    tokens: list[int]
    text: str
    finish_reason: str | None  # None while running
    prompt_tokens: int
    logprobs: list[float] | None = None
    #: with logprobs: the probability that the first token is a stop id (the model ends its turn at once)
    first_stop_probability: float | None = None
    #: with top_logprobs: each step's most likely (token, log probability)
    top_logprobs: list[tuple[tuple[int, float], ...]] | None = None
    submitted_at: float = 0.0
    first_token_at: float | None = None
    finished_at: float | None = None


@dataclass
class _Sequence:
    seq: int
    request: GenerationRequest
    stream: TextStream
    arrival: int
    on_event: Callable[[TokenEvent], None] | None
    result: Generation
    slot: int | None = None
    position: int = 0
    last_step: int = 0
    prefilled: bool = False
    pieces: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------- the engine
class GenerationEngine:
    """Sequences over one decoder backend, continuously batched (module docstring).  Not thread-safe: one
    thread submits, steps and cancels (a server's device thread)."""

    def __init__(
        self, backend: DecoderBackend, tokenizer: Any, *, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.backend, self.tokenizer, self.clock = backend, tokenizer, clock
        self._sequences: dict[int, _Sequence] = {}
        self._waiting: list[int] = []
        self._next_seq = 0
        self._calls = 0
        self._last_was_prefill = False
        self._free = set(range(backend.slots))

    # ------------------------------------------------------------------ requests
    def submit(self, request: GenerationRequest, on_event: Callable[[TokenEvent], None] | None = None) -> int:
        """Queue a prompt; returns its sequence id.  Requests that cannot fit the decoder are refused here."""
        embeds, pli = np.asarray(request.inputs_embeds), np.asarray(request.per_layer_inputs)
        length = len(embeds)
        if embeds.ndim != 2 or pli.ndim != 3 or len(pli) != length:
            raise GenerationError(
                f"inputs_embeds [S, hidden] and per_layer_inputs [S, layers, width] must describe the "
                f"same prompt, got shapes {embeds.shape} and {pli.shape}"
            )
        if length < 1:
            raise GenerationError("the prompt has no tokens")
        if request.max_new_tokens < 1:
            raise GenerationError(f"max_new_tokens must be at least 1, got {request.max_new_tokens}")
        if not 0 <= request.top_logprobs <= self.backend.top_k:
            raise GenerationError(
                f"top_logprobs must be in [0, {self.backend.top_k}] for this decoder, got {request.top_logprobs}"
            )
        if request.sampling is not None and not self.backend.samples:
            raise GenerationError(
                "this decoder program decodes greedily only (built without sampling entries); ask for greedy "
                "decoding or use a program built with sampling"
            )
        if length > self.backend.max_prompt_tokens:
            raise GenerationError(
                f"a prompt of {length} tokens is longer than the decoder's longest prompt entry "
                f"({self.backend.max_prompt_tokens} tokens)"
            )
        needed = length + request.max_new_tokens - 1
        if needed > self.backend.capacity:
            raise GenerationError(
                f"a prompt of {length} tokens and {request.max_new_tokens} new tokens needs {needed} "
                f"positions, more than the decoder's context capacity of {self.backend.capacity}"
            )
        seq = self._next_seq
        self._next_seq += 1
        result = Generation(
            [],
            "",
            None,
            length,
            [] if request.logprobs else None,
            top_logprobs=[] if request.top_logprobs else None,
            submitted_at=self.clock(),
        )
        self._sequences[seq] = _Sequence(seq, request, TextStream(self.tokenizer), seq, on_event, result)
        self._waiting.append(seq)
        return seq

    def cancel(self, seq: int) -> None:
        """Stop a sequence now (a client went away): its slot is free for the next call.  Unknown or finished
        sequences are ignored."""
        s = self._sequences.get(seq)
        if s is None or s.result.finish_reason is not None:
            return
        self._finish(s, CANCELLED)

    def result(self, seq: int) -> Generation:
        return self._sequences[seq].result

    def release(self, seq: int) -> Generation:
        """The finished sequence's result, forgotten by the engine."""
        s = self._sequences[seq]
        if s.result.finish_reason is None:
            raise GenerationError(f"sequence {seq} is still running")
        del self._sequences[seq]
        return s.result

    @property
    def idle(self) -> bool:
        return not any(s.result.finish_reason is None for s in self._sequences.values())

    # ------------------------------------------------------------------ running
    def run(self) -> Iterator[TokenEvent]:
        """Step until every submitted sequence has ended, yielding each token's event as it comes."""
        while not self.idle:
            yield from self.step()

    def step(self) -> list[TokenEvent]:
        """One device call (a prefill or a decode call, as the batching policy says); its tokens' events."""
        self._admit()
        live = [s for s in self._sequences.values() if s.slot is not None and s.result.finish_reason is None]
        admitted = [Admitted(s.seq, s.slot, s.arrival, s.request.prompt_tokens) for s in live if not s.prefilled]
        running = [Running(s.seq, s.slot, s.position, s.arrival, s.last_step) for s in live if s.prefilled]
        backend = self.backend
        call = next_call(
            admitted,
            running,
            backend.decode_widths,
            self._last_was_prefill,
            backend.prefill_widths,
            backend.prompt_buckets,
        )
        if call is None:
            return []
        self._calls += 1
        if isinstance(call, DecodeCall):
            self._last_was_prefill = False
            return self._decode(call)
        self._last_was_prefill = True
        return self._prefill([self._sequences[seq] for seq in call.seqs])

    def _admit(self) -> None:
        waiting = [
            Waiting(seq, self._sequences[seq].arrival)
            for seq in self._waiting
            if self._sequences[seq].result.finish_reason is None
        ]
        self._waiting = [w.seq for w in waiting]
        for w, slot in assign_slots(waiting, self._free):
            self._sequences[w.seq].slot = slot
            self._free.discard(slot)
            self._waiting.remove(w.seq)

    def _prefill(self, members: list[_Sequence]) -> list[TokenEvent]:
        requests = [s.request for s in members]
        top_k = max(r.top_logprobs for r in requests)
        logits = any(r.logprobs for r in requests)  # the first step's logits only for its stop probability
        sample = _sample_rows(members)
        try:
            if len(members) == 1:
                selection = self.backend.prefill_greedy(
                    members[0].slot, requests[0].inputs_embeds, requests[0].per_layer_inputs, top_k, logits, sample
                )
            else:
                selection = self.backend.prefill_batch_greedy(
                    [s.slot for s in members],
                    [r.inputs_embeds for r in requests],
                    [r.per_layer_inputs for r in requests],
                    top_k,
                    logits,
                    sample,
                )
        except BaseException:
            for s in members:
                self._finish(s, ERROR)
            raise
        if len(selection) != len(members):
            raise GenerationError(
                f"the decoder returned tokens for {len(selection)} prompt(s), asked for {len(members)}"
            )
        events = []
        for row, s in enumerate(members):
            s.prefilled, s.position, s.last_step = True, s.request.prompt_tokens, self._calls
            events.append(self._emit(s, selection, row))
        return events

    def _decode(self, call: DecodeCall) -> list[TokenEvent]:
        members = [self._sequences[m.seq] for m in call.members]
        top_k = max(s.request.top_logprobs for s in members)
        try:
            selection = self.backend.decode_greedy(
                call.slots, call.positions, [s.result.tokens[-1] for s in members], top_k, sample=_sample_rows(members)
            )
        except BaseException:
            for s in members:
                self._finish(s, ERROR)
            raise
        if len(selection) != len(members):
            raise GenerationError(
                f"the decoder returned tokens for {len(selection)} sequence(s), asked for {len(members)}"
            )
        events = []
        for row, s in enumerate(members):
            s.position += 1
            s.last_step = self._calls
            events.append(self._emit(s, selection, row))
        return events

    def _emit(self, s: _Sequence, selection: TokenSelection, row: int) -> TokenEvent:
        sampled = s.request.sampling is not None
        token = selected_token(selection, row, sampled)
        result = s.result
        result.tokens.append(token)
        logprob = None
        if s.request.logprobs:
            logprob = float((selection.sampled_logprob if sampled else selection.logprob)[row])  # type: ignore[index]
        if result.logprobs is not None:
            result.logprobs.append(logprob)  # type: ignore[arg-type]
            if len(result.tokens) == 1:
                assert selection.logits is not None, "the first step's selection comes with its logits"
                result.first_stop_probability = probability_of(selection.logits[row], sorted(s.request.stop_ids))
        top = None
        if s.request.top_logprobs:
            assert selection.top_tokens is not None and selection.top_logprobs is not None
            k = s.request.top_logprobs
            top = tuple(
                (int(t), float(lp)) for t, lp in zip(selection.top_tokens[row, :k], selection.top_logprobs[row, :k])
            )
            result.top_logprobs.append(top)  # type: ignore[union-attr]
        if result.first_token_at is None:
            result.first_token_at = self.clock()
        text = s.stream.push(token)
        reason = (
            STOP if token in s.request.stop_ids else LENGTH if len(result.tokens) == s.request.max_new_tokens else None
        )
        if reason is not None:
            text += s.stream.finish()
        s.pieces.append(text)
        event = TokenEvent(s.seq, len(result.tokens) - 1, token, text, logprob, reason, top)
        if reason is not None:
            self._finish(s, reason)
        if s.on_event is not None:
            s.on_event(event)
        return event

    def _finish(self, s: _Sequence, reason: str) -> None:
        if reason in (CANCELLED, ERROR):
            s.pieces.append(s.stream.finish())
        s.result.text = "".join(s.pieces)
        s.result.finish_reason = reason
        s.result.finished_at = self.clock()
        if s.slot is not None:
            self._free.add(s.slot)
        if s.seq in self._waiting:
            self._waiting.remove(s.seq)


def _sample_rows(members: Sequence[_Sequence]) -> SampleRows | None:
    """The `sample=` argument of a call over `members` (None when every one is greedy: no sampler runs): each
    sampling sequence draws its next token with counter = that token's index."""
    if all(s.request.sampling is None for s in members):
        return None
    return SampleRows(tuple(s.request.sampling for s in members), tuple(len(s.result.tokens) for s in members))


def generate(backend: DecoderBackend, tokenizer: Any, request: GenerationRequest) -> Iterator[TokenEvent]:
    """The tokens of one prompt (greedy unless it samples), each with its newly final text, as they are generated."""
    engine = GenerationEngine(backend, tokenizer)
    engine.submit(request)
    yield from engine.run()
