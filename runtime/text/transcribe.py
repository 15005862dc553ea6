"""Speech in, text out: audio -> 30 s windows -> encoder -> prefill -> greedy decoding, per window.

    transcriber = Transcriber("~/models/gemma-3n-E4B-it", decoder, target="cuda")
    [result] = transcriber.transcribe_files(["talk.flac"])       # FileTranscript
    print(result.text, [(w.start_s, w.end_s) for w in result.windows])

**Long audio: one window per 30 s clip, transcribed on its own, texts joined in order.**  Each input is cut
into the encoder's consecutive 30 s clips (never truncated: a 10 min file is 20 windows); each window gets
the same prompt with its one clip, runs through prefill and greedy decoding as its own sequence, and the
file's text is the windows' texts in order (each stripped, joined by one space); every window's start and
end, tokens, raw text and stop reason are kept.  Why this and not all clips in one prompt:

* Gemma 3n's audio is trained and documented on clips of at most 30 s (188 soft tokens, the feature
  extractor's own cap); one prompt holding many clips is not what it was trained on;
* a window's prompt (188 audio tokens + the chat text) plus its output fits any context, so audio of any
  length works, where one prompt would hit the context (32768 tokens: 174 clips, 87 min) and a single
  `max_new_tokens` would cut a long transcript;
* windows are independent sequences, so they decode together in the decoder's batched calls (continuous
  batching): a long file is transcribed at batch throughput, and each step attends over one window's
  ~200 + n positions, not the whole recording's;
* what is lost: context across a boundary (a word cut at 30 s may be garbled or split); the windows are
  reported so a caller sees where.

Windows are prefilled as decoder slots free up (at most `slots` prompts' inputs are held at once), as many
per prefill-stage call as the decoder's widest prefill entry takes (`stage_pack`), so windows of all inputs
share the decoder's prefill and decode calls; the audio of all inputs is encoded first, in the encoder's
batched calls. A group of fewer windows runs the stage's smallest entry at hand that holds it (`stage_entry`:
one window alone does not pay for eight); the stage's entries for a full group and for one window are one
program (`stage_entries`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...contracts.policy import DEFAULT_CONTRACT
from ...model.checkpoint_config import CheckpointConfig
from .generate import DecoderBackend, GenerationEngine, GenerationError, GenerationRequest, TokenEvent, stop_token_ids

log = logging.getLogger("gemma3n_iree.transcribe")


def stage_pack(decoder: DecoderBackend, prefill: Any) -> tuple[int, int] | None:
    """(windows, capacity) of one prefill-stage call for a group of windows: as many windows as the decoder's
    widest prefill entry takes, in the stage's entry holding that many of the longest prompt the decoder takes
    (every group runs that one entry: one resident session). None: one window per call (the decoder prefills
    one prompt per call, or a prebuilt prefill artifact has no such entry: logged)."""
    windows = max(decoder.prefill_widths, default=1)
    if windows < 2:
        return None
    try:
        return windows, prefill.capacity_for(windows * decoder.max_prompt_tokens, windows)
    except ValueError as exc:  # ContextCapacityError
        log.warning("the prefill stage runs one window per call: %s", exc)
        return None


def pack_entry(pack: tuple[int, int]) -> tuple[int, int]:
    """The prefill stage's (capacity, clips) entry of a `stage_pack` (windows, capacity)."""
    windows, capacity = pack
    return capacity, windows


def stage_entries(decoder: DecoderBackend, prefill: Any, pack: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    """The prefill-stage entries a transcription's groups of windows run, to be built as one program
    (`AudioPrefill.prepare`): the `stage_pack` entry and one window's (of the decoder's longest prompt), so a lone
    window runs its own entry without loading another program; the pack's alone where no one-window entry holds
    that prompt (a prebuilt artifact without one)."""
    try:
        one = (prefill.capacity_for(decoder.max_prompt_tokens, 1), 1)
    except ValueError:  # ContextCapacityError
        return (pack_entry(pack),)
    return pack_entry(pack), one


def stage_entry(lengths: Sequence[int], entries: Iterable[tuple[int, int]]) -> tuple[int, int] | None:
    """(capacity, clips) of the cheapest of `entries` for one prefill-stage call of windows whose prompts have
    these lengths (one clip each): of the entries that hold them (at least their clips, and a capacity for their
    tokens with the call's padding copies of the last window), the smallest capacity (a call's cost follows its
    rows), then the fewest clips; None when none holds them."""

    def holds(capacity: int, clips: int) -> bool:
        return clips >= len(lengths) and capacity >= sum(lengths) + (clips - len(lengths)) * lengths[-1]

    return min((e for e in entries if holds(*e)), default=None)


def run_stage(prefill: Any, pack: tuple[int, int] | None, prompts: Sequence[tuple[np.ndarray, np.ndarray]]) -> list:
    """The prefill stage's results for (ids, one clip's features) windows: one call of the smallest entry at hand
    that holds them (`stage_entry` over `prefill.entries_at_hand()`), else of the `stage_pack` entry (at most its
    windows), or `run` of a single window."""
    if pack is None:
        if len(prompts) != 1:
            raise ValueError(f"the prefill stage runs one window per call here, got {len(prompts)}")
        return [prefill.run(*prompts[0])]
    capacity, clips = stage_entry([len(ids) for ids, _ in prompts], prefill.entries_at_hand()) or pack_entry(pack)
    if clips == 1:
        return [prefill.run(*prompts[0], capacity=capacity)]
    return prefill.run_many(prompts, clips, capacity)


Progress = Callable[[str], None]
SAMPLE_RATE = 16000
WINDOW_SECONDS = 30.0
TRANSCRIBE, TRANSLATE = "transcribe", "translate"
DEFAULT_MAX_NEW_TOKENS = 256


def instruction(task: str, language: str | None = None) -> str:
    """The model's instruction for a task: Gemma 3n's documented speech prompts ("Transcribe the following
    speech segment in English:"); without a language none is assumed.  Translation is always into English."""
    if task == TRANSCRIBE:
        return (
            f"Transcribe the following speech segment in {language}:"
            if language
            else "Transcribe the following speech segment:"
        )
    if task == TRANSLATE:
        return "Translate the following speech segment into English:"
    raise ValueError(f"unknown task {task!r}: {TRANSCRIBE!r} or {TRANSLATE!r}")


DEFAULT_PROMPT = instruction(TRANSCRIBE)


@dataclass(frozen=True)
class Window:
    """One 30 s window of an input: transcribed on its own."""

    source: int  # index of the input
    index: int  # window number within the input
    start_s: float
    end_s: float


@dataclass
class WindowTranscript:
    window: Window
    prompt_tokens: int
    tokens: list[int] = field(default_factory=list)
    text: str = ""
    finish_reason: str | None = None  # "stop" (a stop id, kept in tokens), "length" (max_new_tokens)
    logprobs: list[float] | None = None
    first_stop_probability: float | None = None  # with logprobs: P(the first token is a stop id)
    first_token_s: float | None = None  # seconds from the start of decoding to its first token
    decode_s: float | None = None  # seconds from its prefill to its last token


@dataclass(frozen=True)
class TranscribeProgress:
    """Where a transcription run stands, after each finished window (a terminal's progress line)."""

    windows_done: int
    windows: int
    files_done: int
    files: int
    tokens: int
    audio_s_done: float  # seconds of audio in the finished windows
    elapsed_s: float  # since the run started (encoding included)

    @property
    def audio_s_per_s(self) -> float:
        return self.audio_s_done / self.elapsed_s if self.elapsed_s > 0 else 0.0


def transcribe_progress_line(p: TranscribeProgress) -> str:
    """One line of `transcribe`'s terminal progress."""
    return (
        f"transcribing: {p.files_done}/{p.files} files, {p.windows_done}/{p.windows} windows, {p.tokens} tokens, "
        f"{p.audio_s_done:,.1f} audio-s, {p.audio_s_per_s:,.1f} audio-s/s"
    )


@dataclass
class FileTranscript:
    name: str
    duration_s: float
    windows: list[WindowTranscript]

    @property
    def text(self) -> str:
        return join_windows([w.text for w in self.windows])

    @property
    def tokens(self) -> int:
        return sum(len(w.tokens) for w in self.windows)


@dataclass
class TranscriptionRun:
    files: list[FileTranscript]
    #: seconds: load, encode, prefill (the prefill stage's calls), generate, total, and first_token (from the
    #: call's start to the first token of any window: the time to first token a caller sees)
    timings: dict[str, float]


def join_windows(texts: Sequence[str]) -> str:
    """A file's text from its windows' texts, in order: each stripped, the non-empty ones joined by one space."""
    return " ".join(t.strip() for t in texts if t.strip())


class WindowJoiner:
    """A file's text streamed while its windows decode concurrently: window k's pieces come out once windows
    0..k-1 have finished, so that everything emitted concatenates to `join_windows` of the windows' texts."""

    def __init__(self, windows: int) -> None:
        self._pieces: list[list[str]] = [[] for _ in range(windows)]
        self._finished = [False] * windows
        self._current = 0
        self._started = False  # the current window has emitted non-space text
        self._held = ""  # the current window's trailing whitespace (dropped if the window ends)
        self._any = False  # some window has emitted text (the next one is preceded by a space)

    def add(self, index: int, piece: str) -> str:
        """A window's next piece of text; returns what can be emitted now."""
        if self._finished[index]:
            raise ValueError(f"window {index} has already finished")
        if index != self._current:
            self._pieces[index].append(piece)
            return ""
        return self._emit(piece)

    def finish(self, index: int) -> str:
        """The window has ended; returns what can be emitted now (later windows that were waiting on it)."""
        self._finished[index] = True
        out = []
        while self._current < len(self._finished) and self._finished[self._current]:
            self._current += 1
            self._started, self._held = False, ""
            if self._current < len(self._pieces):
                out += [self._emit(p) for p in self._pieces[self._current]]
                self._pieces[self._current] = []
        return "".join(out)

    def _emit(self, piece: str) -> str:
        prefix = ""
        if not self._started:
            piece = piece.lstrip()
            if not piece:
                return ""
            self._started = True
            prefix = " " if self._any else ""
            self._any = True
        text = self._held + piece
        core = text.rstrip()
        self._held = text[len(core) :]
        return prefix + core


def windows_of(duration_s: float, source: int) -> list[Window]:
    """The consecutive 30 s windows of an input (the encoder's clips: `frontend.split_clips`)."""
    count = max(1, int(np.ceil(duration_s / WINDOW_SECONDS - 1e-9)))
    return [Window(source, k, k * WINDOW_SECONDS, min((k + 1) * WINDOW_SECONDS, duration_s)) for k in range(count)]


def read_samples(path: str | Path, max_seconds: float | None = None) -> np.ndarray:
    """A file's 16 kHz mono samples, refused (naming the file) when longer than `max_seconds`."""
    from ..audio.frontend import load_audio

    samples = load_audio(path)[0]
    seconds = len(samples) / SAMPLE_RATE
    if max_seconds is not None and seconds > max_seconds:
        raise ValueError(f"{path}: {seconds:.1f} s of audio exceeds --max-seconds {max_seconds:g}")
    return samples


class Transcriber:
    """A checkpoint's encoder and prefill stages (compiled for a target) in front of a decoder backend."""

    def __init__(
        self,
        checkpoint: str | Path,
        decoder: DecoderBackend,
        *,
        target: str = "llvm-cpu",
        contract: str = DEFAULT_CONTRACT,
        prefill: Any | None = None,
        progress: Progress | None = None,
        **prefill_options: Any,
    ) -> None:
        """`prefill`: an `AudioPrefill` to reuse; otherwise one is built with `prefill_options` (keyword
        arguments of `AudioPrefill`: capacities, cache, cuda_arch, artifact, encoder_options)."""
        from .prefill import AudioPrefill

        self.checkpoint = Path(checkpoint)
        self.progress = progress or (lambda _msg: None)
        self.prefill = prefill or AudioPrefill(
            checkpoint, target=target, contract=contract, progress=self.progress, **prefill_options
        )
        self.decoder = decoder
        self.config = CheckpointConfig.read(checkpoint).decoder
        self.tokenizer = self.prefill.tokenizer
        self.stop_ids = stop_token_ids(checkpoint, self.config.eos_token_ids, self.tokenizer)

    def transcribe_files(
        self,
        paths: Sequence[str | Path],
        prompt: str = DEFAULT_PROMPT,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        *,
        max_seconds: float | None = None,
        logprobs: bool = False,
        on_token: Callable[[Window, TokenEvent], None] | None = None,
        on_progress: Callable[[TranscribeProgress], None] | None = None,
    ) -> TranscriptionRun:
        """Decode and transcribe audio files (every container `runtime/audio/decode.py` reads)."""
        started = time.perf_counter()
        items = [(str(path), read_samples(path, max_seconds)) for path in paths]
        run = self.transcribe_audio(
            items, prompt, max_new_tokens, logprobs=logprobs, on_token=on_token, on_progress=on_progress
        )
        run.timings["total"] = time.perf_counter() - started
        run.timings["load"] = run.timings["total"] - sum(run.timings[k] for k in ("encode", "prefill", "generate"))
        if "first_token" in run.timings:  # from this call's start: the files' reading comes first
            run.timings["first_token"] += run.timings["load"]
        return run

    def transcribe_audio(
        self,
        items: Sequence[tuple[str, np.ndarray]],
        prompt: str = DEFAULT_PROMPT,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        *,
        logprobs: bool = False,
        on_token: Callable[[Window, TokenEvent], None] | None = None,
        on_progress: Callable[[TranscribeProgress], None] | None = None,
    ) -> TranscriptionRun:
        """Transcribe (name, 16 kHz mono float32 samples) items; `on_token(window, event)` streams tokens;
        `on_progress` is told where the run stands after each finished window (instead of a progress message
        per window)."""
        started = time.perf_counter()
        ids = self.prefill.expand(prompt, [1])  # every window: the prompt with its one clip
        if len(ids) > self.decoder.max_prompt_tokens:
            raise GenerationError(
                f"a window's prompt of {len(ids)} tokens (188 of them audio) is longer than the "
                f"decoder's longest prompt entry ({self.decoder.max_prompt_tokens} tokens)"
            )
        if len(ids) + max_new_tokens - 1 > self.decoder.capacity:
            raise GenerationError(
                f"a window's prompt of {len(ids)} tokens (188 of them audio) and {max_new_tokens} new "
                f"tokens need {len(ids) + max_new_tokens - 1} positions, more than the decoder's "
                f"context capacity of {self.decoder.capacity}"
            )
        encoder = self.prefill.encoder
        clips, files = [], []
        for source, (name, samples) in enumerate(items):
            item_clips = encoder.clips_from_samples(np.asarray(samples, np.float32), source)
            duration = len(samples) / SAMPLE_RATE
            windows = windows_of(duration, source)
            if len(windows) != len(item_clips):
                raise AssertionError(f"{name}: {len(item_clips)} encoder clips for {len(windows)} windows")
            clips += item_clips
            files.append(FileTranscript(name, duration, [WindowTranscript(w, len(ids)) for w in windows]))
        order = [w for f in files for w in f.windows]
        self.progress(
            f"{len(items)} input(s), {sum(f.duration_s for f in files):.1f} s of audio -> {len(order)} "
            f"window(s) of at most 30 s"
        )
        features = encoder.encode_clips(clips).audio_features
        encoded = time.perf_counter()
        timings = {"encode": encoded - started, "prefill": 0.0}
        engine = GenerationEngine(self.decoder, self.tokenizer)
        pack = stage_pack(self.decoder, self.prefill)
        if pack is not None:
            self.prefill.prepare(*stage_entries(self.decoder, self.prefill, pack))
        left = [len(f.windows) for f in files]  # windows not finished, per input
        files_done, tokens, audio_done = 0, 0, 0.0
        by_seq: dict[int, WindowTranscript] = {}
        next_window, finished = 0, 0
        first_token_at = float("inf")  # on the engine's clock, time.perf_counter as `started`

        def stream(event: TokenEvent) -> None:
            item = by_seq[event.seq]
            if on_token is not None:
                on_token(item.window, event)

        while finished < len(order):
            while next_window < len(order) and len(by_seq) - finished < self.decoder.slots:
                count = min(
                    pack[0] if pack else 1, len(order) - next_window, self.decoder.slots - len(by_seq) + finished
                )
                t = time.perf_counter()
                group = [(ids, features[k : k + 1]) for k in range(next_window, next_window + count)]
                for inputs in run_stage(self.prefill, pack, group):
                    request = GenerationRequest(
                        inputs.inputs_embeds, inputs.per_layer_inputs, max_new_tokens, self.stop_ids, logprobs
                    )
                    by_seq[engine.submit(request, stream)] = order[next_window]
                    next_window += 1
                timings["prefill"] += time.perf_counter() - t
            for event in engine.step():
                if event.finish_reason is None:
                    continue
                finished += 1
                item, result = by_seq[event.seq], engine.release(event.seq)
                item.tokens, item.text, item.finish_reason = result.tokens, result.text, result.finish_reason
                item.logprobs, item.first_stop_probability = result.logprobs, result.first_stop_probability
                item.first_token_s = (result.first_token_at or 0.0) - result.submitted_at
                first_token_at = min(first_token_at, result.first_token_at or float("inf"))
                item.decode_s = (result.finished_at or 0.0) - result.submitted_at
                w = item.window
                left[w.source] -= 1
                files_done += left[w.source] == 0
                tokens += len(item.tokens)
                audio_done += w.end_s - w.start_s
                if on_progress is not None:
                    on_progress(
                        TranscribeProgress(
                            finished,
                            len(order),
                            files_done,
                            len(files),
                            tokens,
                            audio_done,
                            time.perf_counter() - started,
                        )
                    )
                    continue
                self.progress(
                    f"{files[w.source].name}: window {w.index + 1}/{len(files[w.source].windows)} "
                    f"({w.start_s:.0f}-{w.end_s:.1f} s) done, {len(item.tokens)} token(s), "
                    f"{finished}/{len(order)} windows"
                )
        total = time.perf_counter() - started
        timings.update(generate=total - timings["encode"] - timings["prefill"], total=total)
        if first_token_at < float("inf"):
            timings["first_token"] = first_token_at - started
        return TranscriptionRun(files, timings)
