"""`gemma3n-iree transcribe`: speech files in, their text out.

The command is built around a decoder factory (`make_transcribe_command(factory)`): runtime/commands/cli.py registers
it with `compiled_decoder` (the compiled decoder program, `runtime/text/transcribe_decoder.py`); tests may build it
with the contract's emulation (`runtime.text.emulated_decoder.EmulatedDecoder`).  There is deliberately no
user-facing switch to the emulation.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click

from ..programs.artifacts import ArtifactCache
from ..text.generate import DecoderBackend
from ..text.transcribe import DEFAULT_MAX_NEW_TOKENS, DEFAULT_PROMPT, TranscriptionRun, transcribe_progress_line
from .cli_options import (
    EXISTING_FILE,
    checkpoint_option,
    decoder_stage_options,
    errors_as_messages,
    max_new_tokens_option,
    prefill_stage,
    say,
)
from .terminal import ProgressLine


@dataclass(frozen=True)
class DecoderNeeds:
    """What the decoder of a transcription must hold: `slots` windows at once, each a prompt of
    `prompt_tokens` tokens and up to `max_new_tokens` new ones; where and how it runs; whether it draws
    sampled tokens (`sampling`) besides greedy ones."""

    checkpoint: Path
    target: str
    contract: str
    slots: int
    prompt_tokens: int
    max_new_tokens: int
    cache: ArtifactCache
    cuda_arch: str | None = None
    kernels: str = "auto"
    artifact: Path | None = None  # a prebuilt decoder program
    progress: Callable[[str], None] | None = None
    sampling: bool = False


#: The decoder the transcriber runs, for these needs.
DecoderFactory = Callable[[DecoderNeeds], DecoderBackend]


def compiled_decoder(needs: DecoderNeeds) -> DecoderBackend:
    """The compiled decoder program for the needs (built through the artifact cache, or `needs.artifact`)."""
    from ..text.transcribe_decoder import load_transcription_decoder

    return load_transcription_decoder(
        needs.checkpoint,
        needs.target,
        needs.contract,
        prompt_tokens=needs.prompt_tokens,
        max_new_tokens=needs.max_new_tokens,
        slots=needs.slots,
        cache=needs.cache,
        cuda_arch=needs.cuda_arch,
        kernels=needs.kernels,
        artifact=needs.artifact,
        progress=needs.progress,
        sampling=needs.sampling,
    )


def run_json(run: TranscriptionRun) -> dict:
    """The `--json` document: per file its text, windows (boundaries, tokens, stop reason), and timings."""
    audio_s = sum(f.duration_s for f in run.files)
    tokens = sum(f.tokens for f in run.files)
    total = run.timings["total"]
    return {
        "files": [
            {
                "file": f.name,
                "duration_s": f.duration_s,
                "text": f.text,
                "tokens": f.tokens,
                "windows": [
                    {
                        "start_s": w.window.start_s,
                        "end_s": w.window.end_s,
                        "text": w.text,
                        "tokens": w.tokens,
                        "finish_reason": w.finish_reason,
                        "prompt_tokens": w.prompt_tokens,
                        "first_token_s": w.first_token_s,
                        "decode_s": w.decode_s,
                    }
                    for w in f.windows
                ],
            }
            for f in run.files
        ],
        "timings_s": run.timings,
        "audio_s": audio_s,
        "real_time_factor": total / audio_s if audio_s else None,
        "tokens_per_s": tokens / run.timings["generate"] if run.timings["generate"] > 0 else None,
    }


def make_transcribe_command(decoder_factory: DecoderFactory) -> click.Command:
    """The `transcribe` command running its decoder from `decoder_factory`."""

    @click.command("transcribe")
    @checkpoint_option("Checkpoint directory (config.json, safetensors, tokenizer.json).")
    @click.option(
        "--prompt",
        default=DEFAULT_PROMPT,
        show_default=True,
        help="The instruction given with each 30 s window of audio (Gemma 3n's chat format; a "
        "<audio_soft_token> marker places the audio, otherwise it comes first).",
    )
    @max_new_tokens_option(DEFAULT_MAX_NEW_TOKENS, " per 30 s window")
    @click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print one JSON document: per file its text, each window's start and end, token ids, text "
        "and stop reason, and the timings.",
    )
    @click.option(
        "--slots",
        type=click.IntRange(1, 256),
        default=8,
        show_default=True,
        help="Windows decoded at once (the decoder's KV-cache slots).",
    )
    @decoder_stage_options("the windows")
    @click.argument("files", nargs=-1, required=True, type=EXISTING_FILE)
    def transcribe(
        checkpoint: Path,
        prompt: str,
        max_new_tokens: int,
        as_json: bool,
        slots: int,
        capacities: tuple[int, ...],
        prefill_artifact: Path | None,
        decoder_artifact: Path | None,
        kernels: str,
        files: tuple[Path, ...],
        **options,
    ) -> None:
        """Transcribe speech FILES: print each file's text (greedy decoding).

        Audio longer than 30 s is never truncated: each 30 s window is transcribed on its own with the
        prompt and the windows' texts are joined in order (--json reports each window's boundaries and
        tokens).  The encoder, prefill and decoder programs are compiled for --target on first use and
        cached (or given with --artifact, --prefill-artifact, --decoder-artifact).  Progress goes to stderr.
        """
        from ..text.transcribe import Transcriber

        started = time.perf_counter()
        with errors_as_messages():
            cache = ArtifactCache(options.get("cache_dir"))
            prefill = prefill_stage(checkpoint, options, capacities, prefill_artifact, cache)
            needs = DecoderNeeds(
                checkpoint,
                options["target"],
                options["contract"],
                slots,
                len(prefill.expand(prompt, [1])),
                max_new_tokens,
                cache,
                options.get("cuda_arch"),
                kernels,
                decoder_artifact,
                say,
            )
            decoder = decoder_factory(needs)
            transcriber = Transcriber(checkpoint, decoder, prefill=prefill, progress=say)
            say(f"stages ready in {time.perf_counter() - started:.1f} s")
            # on a terminal, one line redrawn as windows finish; elsewhere a message per window
            line = ProgressLine(sys.stderr, True, transcribe_progress_line) if sys.stderr.isatty() else None
            try:
                run = transcriber.transcribe_files(
                    files, prompt, max_new_tokens, max_seconds=options.get("max_seconds"), on_progress=line
                )
            finally:
                if line is not None:
                    line.close()
        doc = run_json(run)
        if as_json:
            click.echo(json.dumps(doc, indent=1))
        else:
            for f in run.files:
                if len(run.files) > 1:
                    click.echo(f"# {f.name}")
                click.echo(f.text)
        say(
            f"{len(files)} file(s), {doc['audio_s']:.1f} s of audio, {sum(f.tokens for f in run.files)} token(s) in "
            f"{run.timings['total']:.1f} s (real-time factor {doc['real_time_factor']:.3g})"
        )
        sys.stderr.flush()

    return transcribe
