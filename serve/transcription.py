"""The server's decoder owner: one decode thread, one `GenerationEngine`, every transcription's windows.

    service = TranscriptionService(decoder, prefill, model="gemma-3n-E4B-it", max_new_tokens=256)
    service.start()
    handle = service.submit("talk.wav", features, duration_s, prompt_ids, on_token=..., on_done=...)
    service.cancel(handle)                     # the client went away: its windows leave at once

A request arrives here with its audio already encoded (the scheduler's encode path: upload limits, decoding,
30 s clips, batched encoder calls) and its prompt tokenized.  Each of its 30 s windows is one sequence
(`runtime/text/transcribe.py`'s strategy): the decode thread runs the prefill stage (the prompt with its one clip;
under the scheduler's prefill lock, the stage being shared with /v1/prefill) for as many waiting windows as
there are free decoder slots, up to the decoder's widest prefill entry, in one call (`AudioPrefill.run_many`,
always the same entry), submits them to the engine, and steps the engine: every device call is a prefill of
one or several windows (batched prefill entries) or one decode call over whatever sequences are running, from
any request (continuous batching; a finished or cancelled sequence's slot goes to the next window at once).  Windows wait in arrival order, so requests are served
first come, first served; at most `slots` windows' prefill outputs are held at once.

A chat completion (`submit_chat`, /v1/chat/completions) is one more kind of waiting item in the same queue: one
prompt -- a conversation whose audio files are each their consecutive 30 s clips, adjacent where the file
stands (`runtime/text/tokens.py`'s `render_chat` and `expand_text`) -- and one sequence with its own length limit,
log probabilities and sampling.  Its turn comes in arrival order like a window's; its prefill-stage call is its
own (`AudioPrefill.run` of the entry that holds its length and clips, compiled on the request's thread by
`prepare_chat`), and its sequence then shares the engine's prefill and decode calls with every window.

Everything that touches the engine happens on the decode thread: `submit`, `submit_chat` and `cancel` only
queue work and wake it.  Callbacks (`on_token(window_index, event)`, `on_done(FileTranscript | None, error |
None)`; a chat's `on_token(event)`, `on_done(Generation | None, error | None)`) run on the decode thread and must
only hand the data over (e.g. `loop.call_soon_threadsafe`).
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..contracts.sampling import SamplingParams
from ..runtime.text.generate import (
    CANCELLED,
    ERROR,
    DecoderBackend,
    Generation,
    GenerationEngine,
    GenerationError,
    GenerationRequest,
    TokenEvent,
)
from ..runtime.text.transcribe import (
    FileTranscript,
    WindowTranscript,
    run_stage,
    stage_entries,
    stage_pack,
    windows_of,
)
from .metrics import latency_summary

log = logging.getLogger("gemma3n_iree.server")

STATS = (
    "requests",
    "chat_requests",
    "windows",
    "completed",
    "cancelled",
    "failed",
    "tokens",
    "calls",
    "decode_calls",
    "decode_rows",
    "device_s",
    "prefill_stage_s",
    "prefill_stage_calls",
    "prefill_calls",
    "prefill_rows",
)
#: Requests' times to first token kept for /metrics (the latest ones).
TTFT_SAMPLES = 1000
OnToken = Callable[[int, TokenEvent], None]
OnDone = Callable[["FileTranscript | None", "Exception | None"], None]
OnChatToken = Callable[[TokenEvent], None]
OnChatDone = Callable[["Generation | None", "Exception | None"], None]


@dataclass(eq=False)
class TranscriptionHandle:
    """One request's windows in the service."""

    id: int
    transcript: FileTranscript
    prompt_ids: np.ndarray
    features: np.ndarray  # [windows, 188, hidden]: the encoder's output, one row per window
    logprobs: bool
    on_token: OnToken | None
    on_done: OnDone | None
    submitted: float = field(default_factory=time.perf_counter)  # when the request arrived (perf_counter)
    first_token_s: float | None = None  # seconds from `submitted` to its first token (any window)
    seqs: dict[int, int] = field(default_factory=dict)  # engine sequence -> window index
    finished: int = 0
    done: bool = False


@dataclass(eq=False)
class ChatHandle:
    """One chat completion in the service: one prompt, one sequence (module docstring)."""

    id: int
    prompt_ids: np.ndarray
    features: np.ndarray | None  # [clips, 188, hidden]: every audio file's clips in prompt order (None: no audio)
    max_new_tokens: int
    logprobs: bool
    top_logprobs: int
    sampling: SamplingParams | None
    on_token: OnChatToken | None
    on_done: OnChatDone | None
    submitted: float = field(default_factory=time.perf_counter)
    first_token_s: float | None = None
    seqs: dict[int, int] = field(default_factory=dict)  # engine sequence -> 0 (the one sequence)
    done: bool = False


@dataclass
class _Window:
    handle: TranscriptionHandle
    index: int


def _owner(item: _Window | ChatHandle) -> TranscriptionHandle | ChatHandle:
    """The request a waiting item belongs to."""
    return item.handle if isinstance(item, _Window) else item


class TranscriptionService:
    """A decoder backend served to many requests at once (module docstring)."""

    def __init__(
        self,
        decoder: DecoderBackend,
        prefill: Any,
        *,
        model: str,
        max_new_tokens: int,
        stop_ids: frozenset[int],
        prefill_lock: AbstractContextManager | None = None,
        max_waiting_windows: int | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        """`prefill`: the `AudioPrefill` (tokenizer, `expand`, `run`); `prefill_lock`: held around its `run`
        (the scheduler's device thread runs the same stage for /v1/prefill); `max_waiting_windows`: windows
        queued for a slot beyond which new requests are refused (`busy`; default 16 per slot)."""
        self.decoder, self.prefill, self.model = decoder, prefill, model
        self.max_waiting_windows = max_waiting_windows if max_waiting_windows is not None else 16 * decoder.slots
        self.max_new_tokens, self.stop_ids = max_new_tokens, frozenset(stop_ids)
        self.tokenizer = prefill.tokenizer
        #: strings a client's prompt may not contain: they would rewrite the chat turn
        self.special_tokens = tuple(
            sorted(t.content for t in self.tokenizer.get_added_tokens_decoder().values() if t.special)
        )
        self._prepare_lock = threading.Lock()
        self._prefill_lock = prefill_lock or nullcontext()
        self._engine = GenerationEngine(decoder, self.tokenizer, clock=clock)
        self._cond = threading.Condition()
        self._waiting: collections.deque[_Window | ChatHandle] = collections.deque()
        self._cancels: list[tuple[TranscriptionHandle | ChatHandle, bool]] = []  # (request, it has its answer)
        self._seq_owner: dict[int, TranscriptionHandle | ChatHandle] = {}
        self._next_id = 0
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.error: str | None = None  # the decode thread's last unexpected failure
        self._stats: dict[str, float] = dict.fromkeys(STATS, 0)  # every key exists: read while written
        self._ttft: collections.deque[float] = collections.deque(maxlen=TTFT_SAMPLES)
        self._started = time.monotonic()
        #: (windows, capacity) of a prefill-stage call (None: one window per call; /metrics says which)
        self.stage_pack = stage_pack(decoder, prefill)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> TranscriptionService:
        if self._thread is None:
            self._stopping = False
            self._thread = threading.Thread(target=self._loop, name="gemma3n-decode", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def close(self) -> None:
        """`stop`, then release the decoder program (its KV cache and weights) on the device."""
        self.stop()
        self.decoder.close()

    @property
    def healthy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------------ requests (any thread)
    def busy(self) -> str | None:
        """Why a new request should be told to retry later (None: it may come): the windows waiting for a
        decoder slot have reached `max_waiting_windows`."""
        with self._cond:
            waiting = len(self._waiting)
        if waiting >= self.max_waiting_windows:
            return (
                f"{waiting} windows are waiting for the decoder (the limit is {self.max_waiting_windows}); retry later"
            )
        return None

    def prompt_ids(self, prompt: str) -> np.ndarray:
        """A window's expanded prompt ids (the instruction with one clip), refused when the decoder cannot take
        it: `GenerationError` / the tokenizer's `PromptError` (both ValueError)."""
        ids = self.prefill.expand(prompt, [1])
        with self._prepare_lock:  # compile the prefill stage's entry now (once), not on the decode thread
            if self.stage_pack is None:
                self.prefill.prepare((self.prefill.capacity_for(len(ids), 1), 1))
            else:
                self.prefill.prepare(*stage_entries(self.decoder, self.prefill, self.stage_pack))
        if len(ids) > self.decoder.max_prompt_tokens:
            raise GenerationError(
                f"the prompt makes a window of {len(ids)} tokens (188 of them audio), more than "
                f"this server's decoder takes ({self.decoder.max_prompt_tokens} tokens)"
            )
        if len(ids) + self.max_new_tokens - 1 > self.decoder.capacity:
            raise GenerationError(
                f"the prompt makes a window of {len(ids)} tokens; with up to {self.max_new_tokens} "
                f"new tokens it needs {len(ids) + self.max_new_tokens - 1} positions, more than "
                f"this server's decoder capacity of {self.decoder.capacity}"
            )
        return ids

    def submit(
        self,
        name: str,
        features: np.ndarray,
        duration_s: float,
        prompt_ids: np.ndarray,
        *,
        received: float | None = None,
        logprobs: bool = False,
        on_token: OnToken | None = None,
        on_done: OnDone | None = None,
    ) -> TranscriptionHandle:
        """Queue a request's windows (one per row of `features`, the encoder's 30 s clips in order). `received`:
        when the request arrived (`time.perf_counter()`; default now), what its time to first token counts
        from."""
        windows = windows_of(duration_s, 0)
        if len(windows) != len(features):
            raise ValueError(f"{name}: {len(features)} encoded clips for {len(windows)} windows of {duration_s:.2f} s")
        transcript = FileTranscript(name, duration_s, [WindowTranscript(w, len(prompt_ids)) for w in windows])
        with self._cond:
            if self._stopping:
                raise RuntimeError("the transcription service is stopping")
            handle = TranscriptionHandle(
                self._next_id, transcript, np.asarray(prompt_ids), np.asarray(features), logprobs, on_token, on_done
            )
            if received is not None:
                handle.submitted = received
            self._next_id += 1
            self._waiting.extend(_Window(handle, k) for k in range(len(windows)))
            self._stats["requests"] += 1
            self._stats["windows"] += len(windows)
            self._cond.notify_all()
        return handle

    def chat_ids(self, text: str, clips_per_audio: list[int]) -> np.ndarray:
        """A conversation's expanded prompt ids (`text`: `render_chat`'s, one marker per audio file; each file's
        clip count), refused when the prefill stage cannot take it (`ContextCapacityError`, naming its length and
        the limit; `PromptError`).  Whether the decoder takes it is `chat_room`'s; `prepare_chat` then compiles
        its stage entry."""
        ids = self.prefill.expand_text(text, clips_per_audio)
        self.prefill.capacity_for(len(ids), sum(clips_per_audio))
        return ids

    def prepare_chat(self, prompt_ids: np.ndarray, clips: int) -> None:
        """Compile (or find) the prefill-stage entry a chat prompt runs in, here on the caller's thread: the decode
        thread only loads it."""
        with self._prepare_lock:
            self.prefill.prepare((self.prefill.capacity_for(len(prompt_ids), clips), clips))

    def chat_room(self, prompt_tokens: int) -> int:
        """How many new tokens a prompt of `prompt_tokens` tokens may generate in this decoder: its positions
        after the prompt, +1 (the last token is never fed back); 0 when the decoder cannot take the prompt."""
        if prompt_tokens > self.decoder.max_prompt_tokens:
            return 0
        return max(0, self.decoder.capacity + 1 - prompt_tokens)

    def submit_chat(
        self,
        prompt_ids: np.ndarray,
        features: np.ndarray | None,
        max_new_tokens: int,
        *,
        logprobs: bool = False,
        top_logprobs: int = 0,
        sampling: SamplingParams | None = None,
        received: float | None = None,
        on_token: OnChatToken | None = None,
        on_done: OnChatDone | None = None,
    ) -> ChatHandle:
        """Queue one chat prompt (`chat_ids`' ids; `features`: the encoder's clips of its audio files, in prompt
        order) as one sequence of at most `max_new_tokens` tokens. Raises GenerationError when the decoder cannot
        hold it (`chat_room`) or asks top log probabilities beyond the program's."""
        length = len(prompt_ids)
        if max_new_tokens < 1 or max_new_tokens > self.chat_room(length):
            raise GenerationError(
                f"a prompt of {length} tokens with {max_new_tokens} new tokens does not fit this server's decoder "
                f"(prompts of up to {self.decoder.max_prompt_tokens} tokens, {self.decoder.capacity} positions)"
            )
        if not 0 <= top_logprobs <= self.decoder.top_k:
            raise GenerationError(f"top_logprobs must be in [0, {self.decoder.top_k}] here, got {top_logprobs}")
        with self._cond:
            if self._stopping:
                raise RuntimeError("the transcription service is stopping")
            handle = ChatHandle(
                self._next_id,
                np.asarray(prompt_ids),
                None if features is None else np.asarray(features),
                max_new_tokens,
                logprobs,
                top_logprobs,
                sampling,
                on_token,
                on_done,
            )
            if received is not None:
                handle.submitted = received
            self._next_id += 1
            self._waiting.append(handle)
            self._stats["requests"] += 1
            self._stats["chat_requests"] += 1
            self._cond.notify_all()
        return handle

    def cancel(self, handle: TranscriptionHandle | ChatHandle, *, answered: bool = False) -> None:
        """Stop a request now: its waiting windows are dropped and its running sequences cancelled (their
        slots freed) on the decode thread's next turn.  Finished requests are left alone.  `answered`: the
        request has its answer already (a chat's stop string): it counts as completed, not cancelled."""
        with self._cond:
            if not handle.done:
                self._cancels.append((handle, answered))
                self._cond.notify_all()

    # ------------------------------------------------------------------ decode thread
    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._stopping and not self._cancels and not self._waiting and self._engine.idle:
                    self._cond.wait()
                if self._stopping:
                    break
                cancels, self._cancels = self._cancels, []
            try:  # one failing request must not end the thread every other request waits on
                for handle, answered in cancels:
                    self._cancel_now(handle, answered)
                self._admit()
                self._step()
            except Exception as exc:  # pragma: no cover - a bug: fail what is running, keep serving
                log.exception("decode thread failure")
                self.error = f"{type(exc).__name__}: {exc}"
                for handle in {h for h in self._seq_owner.values()}:
                    self._fail(handle, exc)
        for handle in {h for h in self._seq_owner.values()} | {_owner(w) for w in self._waiting}:
            self._fail(handle, RuntimeError("the server is shutting down"))

    def _admit(self) -> None:
        """Prefill waiting windows (the prefill stage) into free decoder slots, in arrival order, a group of up
        to `stage_pack` windows per stage call."""
        group = self.stage_pack[0] if self.stage_pack else 1
        while True:
            windows: list[_Window] = []
            chat: ChatHandle | None = None
            with self._cond:
                free = self.decoder.slots - len(self._seq_owner)
                while self._waiting and len(windows) < min(free, group):
                    item = self._waiting[0]
                    if isinstance(item, ChatHandle):  # a chat's stage call is its own: the group ends before it
                        if not windows:
                            chat = self._waiting.popleft()
                        break
                    self._waiting.popleft()
                    if not item.handle.done:
                        windows.append(item)
            if chat is not None:
                if not chat.done:
                    self._admit_chat(chat)
                continue
            if not windows:
                return
            started = time.perf_counter()
            prompts = [(w.handle.prompt_ids, w.handle.features[w.index : w.index + 1]) for w in windows]
            try:
                with self._prefill_lock:
                    results = run_stage(self.prefill, self.stage_pack, prompts)
            except Exception as exc:
                for handle in dict.fromkeys(w.handle for w in windows):
                    self._fail(handle, exc)
                continue
            self._stats["prefill_stage_s"] += time.perf_counter() - started
            self._stats["prefill_stage_calls"] += 1
            for window, inputs in zip(windows, results):
                handle = window.handle
                if handle.done:  # failed with an earlier window of this group
                    continue
                request = GenerationRequest(
                    inputs.inputs_embeds, inputs.per_layer_inputs, self.max_new_tokens, self.stop_ids, handle.logprobs
                )
                try:
                    seq = self._engine.submit(request, lambda event, h=handle: self._on_event(h, event))
                except Exception as exc:
                    self._fail(handle, exc)
                    continue
                handle.seqs[seq] = window.index
                self._seq_owner[seq] = handle

    def _admit_chat(self, handle: ChatHandle) -> None:
        """Run a chat prompt's prefill-stage call and submit its sequence to the engine."""
        started = time.perf_counter()
        try:
            with self._prefill_lock:
                inputs = self.prefill.run(handle.prompt_ids, handle.features)
        except Exception as exc:
            self._fail(handle, exc)
            return
        self._stats["prefill_stage_s"] += time.perf_counter() - started
        self._stats["prefill_stage_calls"] += 1
        request = GenerationRequest(
            inputs.inputs_embeds,
            inputs.per_layer_inputs,
            handle.max_new_tokens,
            self.stop_ids,
            handle.logprobs,
            handle.top_logprobs,
            handle.sampling,
        )
        try:
            seq = self._engine.submit(request, lambda event, h=handle: self._on_chat_event(h, event))
        except Exception as exc:
            self._fail(handle, exc)
            return
        handle.seqs[seq] = 0
        self._seq_owner[seq] = handle

    def _on_chat_event(self, handle: ChatHandle, event: TokenEvent) -> None:
        if handle.first_token_s is None:
            handle.first_token_s = time.perf_counter() - handle.submitted
            with self._cond:
                self._ttft.append(handle.first_token_s)
        if handle.on_token is not None and not handle.done:
            handle.on_token(event)
        if event.finish_reason is not None:
            result = self._engine.release(event.seq)
            self._seq_owner.pop(event.seq, None)
            if not handle.done:
                handle.done = True
                self._stats["completed"] += 1
                if handle.on_done is not None:
                    handle.on_done(result, None)

    def _step(self) -> None:
        if self._engine.idle:
            return
        started = time.perf_counter()
        try:
            events = self._engine.step()
        except Exception as exc:
            # the engine ended the call's sequences with ERROR: fail their requests
            failed = {h for seq, h in self._seq_owner.items() if self._engine.result(seq).finish_reason == ERROR}
            for handle in failed:
                self._fail(handle, exc)
            return
        self._stats["device_s"] += time.perf_counter() - started
        if not events:
            return
        self._stats["calls"] += 1
        self._stats["tokens"] += len(events)
        if events[0].index > 0:  # a decode call (a prefill call emits its sequences' first tokens)
            self._stats["decode_calls"] += 1
            self._stats["decode_rows"] += len(events)
        else:
            self._stats["prefill_calls"] += 1
            self._stats["prefill_rows"] += len(events)

    def _on_event(self, handle: TranscriptionHandle, event: TokenEvent) -> None:
        index = handle.seqs[event.seq]
        if handle.first_token_s is None:
            handle.first_token_s = time.perf_counter() - handle.submitted
            with self._cond:
                self._ttft.append(handle.first_token_s)
        if handle.on_token is not None and not handle.done:
            handle.on_token(index, event)
        if event.finish_reason is not None:
            self._window_finished(handle, event.seq)

    def _window_finished(self, handle: TranscriptionHandle, seq: int) -> None:
        result = self._engine.release(seq)
        self._seq_owner.pop(seq, None)
        item = handle.transcript.windows[handle.seqs[seq]]
        item.tokens, item.text, item.finish_reason = result.tokens, result.text, result.finish_reason
        item.logprobs, item.first_stop_probability = result.logprobs, result.first_stop_probability
        item.first_token_s = (result.first_token_at or 0.0) - result.submitted_at
        item.decode_s = (result.finished_at or 0.0) - result.submitted_at
        handle.finished += 1
        if handle.finished == len(handle.transcript.windows) and not handle.done:
            handle.done = True
            self._stats["completed"] += 1
            if handle.on_done is not None:
                handle.on_done(handle.transcript, None)

    def _release_all(self, handle: TranscriptionHandle | ChatHandle) -> None:
        for seq in list(handle.seqs):
            if self._seq_owner.get(seq) is handle:
                self._engine.cancel(seq)
                self._engine.release(seq)
                del self._seq_owner[seq]
        with self._cond:
            self._waiting = collections.deque(w for w in self._waiting if _owner(w) is not handle)

    def _cancel_now(self, handle: TranscriptionHandle | ChatHandle, answered: bool = False) -> None:
        if handle.done:
            return
        handle.done = True
        self._release_all(handle)
        self._stats["completed" if answered else "cancelled"] += 1
        if isinstance(handle, TranscriptionHandle):
            for item in handle.transcript.windows:
                item.finish_reason = item.finish_reason or CANCELLED

    def _fail(self, handle: TranscriptionHandle | ChatHandle, exc: Exception) -> None:
        if handle.done:
            return
        handle.done = True
        self._release_all(handle)
        self._stats["failed"] += 1
        if handle.on_done is not None:
            handle.on_done(None, exc)

    # ------------------------------------------------------------------ metrics
    def metrics(self) -> dict[str, Any]:
        with self._cond:
            s = dict(self._stats)
            running = len(self._seq_owner)
            waiting = len(self._waiting)
            ttft = list(self._ttft)
        rows, calls = s["decode_rows"], s["decode_calls"]
        prefill_rows, prefill_calls, stage_calls = s["prefill_rows"], s["prefill_calls"], s["prefill_stage_calls"]
        return {
            "healthy": self.healthy,
            "error": self.error,
            "model": self.model,
            "slots": self.decoder.slots,
            "slots_in_use": running,
            "windows_waiting": waiting,
            "max_waiting_windows": self.max_waiting_windows,
            "capacity": self.decoder.capacity,
            "decode_widths": list(self.decoder.decode_widths),
            "max_new_tokens": self.max_new_tokens,
            "requests": s["requests"],
            "chat_requests": s["chat_requests"],
            "completed": s["completed"],
            "cancelled": s["cancelled"],
            "failed": s["failed"],
            "windows": s["windows"],
            "tokens_generated": s["tokens"],
            "steps": s["calls"],
            "decode_steps": calls,
            "decode_rows": rows,
            "mean_batch_width": round(rows / calls, 3) if calls else None,
            "prefill_steps": prefill_calls,
            "prefill_rows": prefill_rows,
            "mean_prefill_width": round(prefill_rows / prefill_calls, 3) if prefill_calls else None,
            "prefill_widths": list(self.decoder.prefill_widths),
            "prefill_stage_calls": stage_calls,
            "prefill_stage_windows_per_call": self.stage_pack[0] if self.stage_pack else 1,
            "time_to_first_token": latency_summary(ttft),
            "device_s": round(s["device_s"], 4),
            "prefill_stage_s": round(s["prefill_stage_s"], 4),
        }
